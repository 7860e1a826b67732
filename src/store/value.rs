//! Stored values. Strings today; the container types join this enum.

use bytes::Bytes;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(Bytes),
}

impl Value {
    /// The name TYPE answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
        }
    }

    /// The name OBJECT ENCODING answers, following Redis's rules for strings:
    /// an integer that fits in a long is `int`, up to 44 bytes `embstr`, else `raw`.
    pub fn encoding(&self) -> &'static str {
        match self {
            Value::Str(s) => {
                if s.len() <= 20 && crate::util::num::parse_i64(s).is_some() {
                    "int"
                } else if s.len() <= 44 {
                    "embstr"
                } else {
                    "raw"
                }
            }
        }
    }

    /// Rough heap footprint, used to decide whether freeing can move off the hot path.
    pub fn heap_size(&self) -> usize {
        match self {
            Value::Str(s) => s.len(),
        }
    }
}
