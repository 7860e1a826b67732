use bytes::Bytes;

/// The protocol version a connection speaks (`HELLO 2` / `HELLO 3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protocol {
    #[default]
    Resp2,
    Resp3,
}

/// A reply, independent of the protocol version it will be written in.
///
/// Commands produce frames; the connection encodes them with its protocol.
/// RESP3-only kinds degrade in RESP2 as Redis 7 does (map -> flat array,
/// double -> bulk string, boolean -> integer, push -> array, null -> `$-1`).
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    /// `+OK`
    Simple(&'static str),
    /// `+...` with owned text (e.g. CLIENT INFO lines are bulk, but TYPE is simple).
    SimpleOwned(String),
    /// `-ERR ...`: the full text including the error code prefix.
    Error(String),
    /// An error whose text echoes a client's bytes as they came (an unknown
    /// command's name and arguments), which need not be UTF-8.
    ErrorBytes(Vec<u8>),
    Integer(i64),
    Bulk(Bytes),
    /// A missing value: `$-1` in RESP2, `_` in RESP3.
    Null,
    /// A missing array: `*-1` in RESP2, `_` in RESP3.
    NullArray,
    Array(Vec<Frame>),
    /// RESP3 map; a flat array of key, value, ... in RESP2.
    Map(Vec<(Frame, Frame)>),
    /// RESP3 set; an array in RESP2.
    Set(Vec<Frame>),
    /// RESP3 double; a bulk string in RESP2.
    Double(f64),
    /// RESP3 double whose text the command formatted itself (GEOPOS's
    /// coordinates, to 17 decimals as Redis prints them); a bulk string in
    /// RESP2.
    DoubleText(Bytes),
    /// RESP3 boolean; integer 1/0 in RESP2.
    Boolean(bool),
    /// RESP3 verbatim string (`=len\r\ntxt:...`); a bulk string in RESP2.
    Verbatim(Bytes),
    /// RESP3 out-of-band push; an array in RESP2.
    Push(Vec<Frame>),
    /// Several replies to one command, written back to back (SUBSCRIBE
    /// answers once per channel).
    Sequence(Vec<Frame>),
    /// Pairs such as (member, score): an array of 2-element arrays in RESP3,
    /// one flat array in RESP2 (ZRANGE ... WITHSCORES).
    Pairs(Vec<(Frame, Frame)>),
    /// A map whose RESP2 form is an array of 2-element [key, value]
    /// arrays (XREAD and XREADGROUP per stream), not one flat array.
    KeyedMap(Vec<(Frame, Frame)>),
}

impl Frame {
    pub const OK: Frame = Frame::Simple("OK");

    pub fn error(text: impl Into<String>) -> Frame {
        Frame::Error(text.into())
    }

    pub fn bulk(data: impl AsRef<[u8]>) -> Frame {
        Frame::Bulk(Bytes::copy_from_slice(data.as_ref()))
    }

    /// An out-of-band message (a push, or pushes written back to back):
    /// what a client whose replies are off (CLIENT REPLY) still receives.
    pub fn is_push(&self) -> bool {
        match self {
            Frame::Push(_) => true,
            Frame::Sequence(items) => !items.is_empty() && items.iter().all(Frame::is_push),
            _ => false,
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Frame::Error(_) | Frame::ErrorBytes(_))
    }

    /// An error reply's text (`ERR ...`, `WRONGTYPE ...`); None for others.
    pub fn error_code(&self) -> Option<&[u8]> {
        match self {
            Frame::Error(text) => Some(text.as_bytes()),
            Frame::ErrorBytes(text) => Some(text),
            _ => None,
        }
    }
}
