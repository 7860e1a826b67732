use bytes::{Bytes, BytesMut};

/// Size limits enforced while parsing (Redis's `proto-max-bulk-len` etc.).
#[derive(Clone, Copy, Debug)]
pub struct ParseLimits {
    /// Largest bulk argument accepted (`proto-max-bulk-len`, default 512 MB).
    pub max_bulk_len: usize,
    /// Largest multibulk count accepted (Redis: 1024*1024).
    pub max_multibulk_len: usize,
    /// Largest inline command line (Redis: PROTO_INLINE_MAX_SIZE, 64 KB).
    pub max_inline_len: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_bulk_len: 512 * 1024 * 1024,
            max_multibulk_len: 1024 * 1024,
            max_inline_len: 64 * 1024,
        }
    }
}

/// A malformed request. The text is Redis's, e.g. `Protocol error: invalid
/// multibulk length`; the server replies `-ERR <text>` and closes the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);

/// Incremental request parser: keeps its place inside a partly received
/// multibulk so a large argument is not rescanned on every read.
#[derive(Debug, Default)]
pub struct Parser {}

impl Parser {
    pub fn new(limits: ParseLimits) -> Parser {
        let _ = limits;
        todo!()
    }

    /// Takes one complete command off the front of `buf`.
    /// `Ok(None)`: more bytes needed. Empty inline lines are skipped.
    pub fn next_command(&mut self, buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let _ = buf;
        todo!()
    }
}
