//! Lists are `VecDeque`s of elements (`Value::List`); what the store names
//! about them beyond that.

/// One end of a list.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum End {
    Head,
    Tail,
}
