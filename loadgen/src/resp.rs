//! Minimal RESP (2 and 3) reply reader and request encoder.
//!
//! The reader is incremental: [`parse_reply`] looks at the front of a buffer
//! and either returns one complete reply (its kind, the span of its payload
//! and how many bytes it used) or `Ok(None)` when more bytes are needed. It
//! never allocates; nested aggregates are walked with a counter instead of
//! recursion.

/// What a top-level reply was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `+OK` and other simple strings (also RESP3 doubles, booleans, big numbers).
    Simple,
    /// `-ERR ...` or a RESP3 blob error.
    Error,
    /// `:123`
    Int,
    /// `$n` bulk string (or RESP3 verbatim string); the payload span is set.
    Bulk,
    /// `$-1`, `*-1` or RESP3 `_`.
    Nil,
    /// `*n`, `%n`, `~n`, `>n` aggregates (contents skipped).
    Array,
}

/// One parsed reply: its kind, the payload span (bulk data or error / simple
/// text) and the total length in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub len: usize,
    /// Error values nested inside an aggregate reply (EXEC's array holds one
    /// per queued command that failed).
    pub nested_errors: u32,
}

/// The server sent something that is not RESP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError(pub String);

impl std::fmt::Display for ProtoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "protocol error: {}", self.0)
    }
}

/// Finds the `\r\n` that ends the line starting at `from`; returns the index of `\r`.
#[inline]
fn find_crlf(buf: &[u8], from: usize) -> Option<usize> {
    let off = buf.get(from..)?.iter().position(|&b| b == b'\r')?;
    let cr = from + off;
    (cr + 1 < buf.len()).then_some(cr)
}

#[inline]
fn parse_int(line: &[u8]) -> Result<i64, ProtoError> {
    let (neg, digits) = match line.first() {
        Some(b'-') => (true, &line[1..]),
        Some(b'+') => (false, &line[1..]),
        _ => (false, line),
    };
    if digits.is_empty() || digits.len() > 19 {
        return Err(ProtoError(format!(
            "bad length {:?}",
            String::from_utf8_lossy(line)
        )));
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return Err(ProtoError(format!(
                "bad length {:?}",
                String::from_utf8_lossy(line)
            )));
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Ok(if neg { -v } else { v })
}

/// Parses one complete reply at the front of `buf`.
pub fn parse_reply(buf: &[u8]) -> Result<Option<Reply>, ProtoError> {
    parse_reply_with(buf, |_, _| {})
}

/// One reply's scalar values (see [`flatten_reply`]).
pub type Flat = Vec<(Kind, Vec<u8>)>;

/// The scalar values of one complete reply at the front of `buf`, in order,
/// with aggregates flattened (`LATENCY LATEST`'s arrays of four fields
/// become four values each), and the reply's length; None while incomplete.
pub fn flatten_reply(buf: &[u8]) -> Result<Option<(Flat, usize)>, ProtoError> {
    let mut values = Vec::new();
    let done = parse_reply_with(buf, |kind, payload| values.push((kind, payload.to_vec())))?;
    Ok(done.map(|r| (values, r.len)))
}

/// [`parse_reply`], calling `on_scalar` with each scalar value met (kind
/// and payload), nested ones too.
fn parse_reply_with(
    buf: &[u8],
    mut on_scalar: impl FnMut(Kind, &[u8]),
) -> Result<Option<Reply>, ProtoError> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut pos = 0usize;
    // Number of values still to read (the top one plus aggregate children).
    let mut remaining: u64 = 1;
    let mut top: Option<Reply> = None;
    let mut nested_errors = 0;
    while remaining > 0 {
        if pos >= buf.len() {
            return Ok(None);
        }
        let t = buf[pos];
        let Some(cr) = find_crlf(buf, pos + 1) else {
            return Ok(None);
        };
        let line_start = pos + 1;
        let line_end = cr;
        let next = cr + 2;
        remaining -= 1;
        let this = match t {
            b'+' | b',' | b'#' | b'(' => {
                pos = next;
                Reply {
                    kind: Kind::Simple,
                    start: line_start,
                    end: line_end,
                    len: 0,
                    nested_errors: 0,
                }
            }
            b'-' => {
                pos = next;
                Reply {
                    kind: Kind::Error,
                    start: line_start,
                    end: line_end,
                    len: 0,
                    nested_errors: 0,
                }
            }
            b':' => {
                pos = next;
                Reply {
                    kind: Kind::Int,
                    start: line_start,
                    end: line_end,
                    len: 0,
                    nested_errors: 0,
                }
            }
            b'_' => {
                pos = next;
                Reply {
                    kind: Kind::Nil,
                    start: line_start,
                    end: line_start,
                    len: 0,
                    nested_errors: 0,
                }
            }
            b'$' | b'=' | b'!' => {
                let n = parse_int(&buf[line_start..line_end])?;
                if n < 0 {
                    pos = next;
                    Reply {
                        kind: Kind::Nil,
                        start: next,
                        end: next,
                        len: 0,
                        nested_errors: 0,
                    }
                } else {
                    let n = n as usize;
                    let end = next + n;
                    if buf.len() < end + 2 {
                        return Ok(None);
                    }
                    if &buf[end..end + 2] != b"\r\n" {
                        return Err(ProtoError("bulk string not terminated by CRLF".into()));
                    }
                    pos = end + 2;
                    Reply {
                        kind: if t == b'!' { Kind::Error } else { Kind::Bulk },
                        start: next,
                        end,
                        len: 0,
                        nested_errors: 0,
                    }
                }
            }
            b'*' | b'~' | b'>' | b'%' => {
                let n = parse_int(&buf[line_start..line_end])?;
                pos = next;
                if n < 0 {
                    Reply {
                        kind: Kind::Nil,
                        start: next,
                        end: next,
                        len: 0,
                        nested_errors: 0,
                    }
                } else {
                    let mult = if t == b'%' { 2 } else { 1 };
                    remaining += n as u64 * mult;
                    Reply {
                        kind: Kind::Array,
                        start: next,
                        end: next,
                        len: 0,
                        nested_errors: 0,
                    }
                }
            }
            b'|' => {
                // RESP3 attribute: its map precedes the real reply.
                let n = parse_int(&buf[line_start..line_end])?;
                pos = next;
                remaining += n.max(0) as u64 * 2 + 1;
                continue;
            }
            other => {
                return Err(ProtoError(format!(
                    "unexpected type byte 0x{other:02x} ({:?})",
                    String::from_utf8_lossy(&buf[pos..buf.len().min(pos + 32)])
                )))
            }
        };
        if this.kind != Kind::Array {
            on_scalar(this.kind, &buf[this.start..this.end]);
        }
        if top.is_none() {
            top = Some(this);
        } else if this.kind == Kind::Error {
            nested_errors += 1;
        }
    }
    let mut r = top.expect("at least one value parsed");
    r.len = pos;
    r.nested_errors = nested_errors;
    Ok(Some(r))
}

/// Number of decimal digits of `n`.
#[inline]
pub fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// Appends `n` in decimal without allocating.
#[inline]
pub fn put_u64(buf: &mut Vec<u8>, n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let mut v = n;
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

/// Appends `*n\r\n`.
#[inline]
pub fn put_array_header(buf: &mut Vec<u8>, n: usize) {
    buf.push(b'*');
    put_u64(buf, n as u64);
    buf.extend_from_slice(b"\r\n");
}

/// Appends `$len\r\n` (the header of a bulk string of `len` bytes).
#[inline]
pub fn put_bulk_header(buf: &mut Vec<u8>, len: usize) {
    buf.push(b'$');
    put_u64(buf, len as u64);
    buf.extend_from_slice(b"\r\n");
}

/// Appends a whole bulk string.
#[inline]
pub fn put_bulk(buf: &mut Vec<u8>, data: &[u8]) {
    put_bulk_header(buf, data.len());
    buf.extend_from_slice(data);
    buf.extend_from_slice(b"\r\n");
}

/// Appends a bulk string holding `n` in decimal.
#[inline]
pub fn put_bulk_u64(buf: &mut Vec<u8>, n: u64) {
    put_bulk_header(buf, digits(n));
    put_u64(buf, n);
    buf.extend_from_slice(b"\r\n");
}

/// Appends the key `prefix` + `n` as a bulk string.
#[inline]
pub fn put_key(buf: &mut Vec<u8>, prefix: &[u8], n: u64) {
    put_bulk_header(buf, prefix.len() + digits(n));
    buf.extend_from_slice(prefix);
    put_u64(buf, n);
    buf.extend_from_slice(b"\r\n");
}

/// Encodes a whole command from its arguments (used off the hot path).
pub fn encode_command(args: &[&[u8]]) -> Vec<u8> {
    let mut buf = Vec::new();
    put_array_header(&mut buf, args.len());
    for a in args {
        put_bulk(&mut buf, a);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_values_flatten_in_order() {
        let raw = b"*2\r\n*4\r\n$7\r\ncommand\r\n:1700\r\n:20\r\n:50\r\n*4\r\n$7\r\noff-cpu\r\n:1701\r\n:3\r\n:9\r\n";
        let (values, len) = flatten_reply(raw).unwrap().unwrap();
        assert_eq!(len, raw.len());
        let texts: Vec<String> = values
            .iter()
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .collect();
        assert_eq!(
            texts,
            ["command", "1700", "20", "50", "off-cpu", "1701", "3", "9"]
        );
        assert_eq!(values[0].0, Kind::Bulk);
        assert_eq!(values[1].0, Kind::Int);
        assert_eq!(flatten_reply(&raw[..raw.len() - 3]).unwrap(), None);
        assert_eq!(flatten_reply(b"*0\r\n").unwrap(), Some((vec![], 4)));
    }

    fn one(s: &[u8]) -> Reply {
        parse_reply(s).unwrap().unwrap()
    }

    #[test]
    fn simple_types() {
        let r = one(b"+OK\r\n");
        assert_eq!((r.kind, r.len), (Kind::Simple, 5));
        let r = one(b"-ERR bad\r\nxx");
        assert_eq!(r.kind, Kind::Error);
        assert_eq!(&b"-ERR bad\r\nxx"[r.start..r.end], b"ERR bad");
        assert_eq!(r.len, 10);
        assert_eq!(one(b":42\r\n").kind, Kind::Int);
        assert_eq!(one(b"$-1\r\n").kind, Kind::Nil);
        assert_eq!(one(b"_\r\n").kind, Kind::Nil);
        assert_eq!(one(b"*-1\r\n").kind, Kind::Nil);
    }

    #[test]
    fn bulk_and_partial() {
        let full = b"$5\r\nhello\r\n";
        for cut in 0..full.len() {
            assert_eq!(parse_reply(&full[..cut]).unwrap(), None, "cut {cut}");
        }
        let r = one(full);
        assert_eq!(r.kind, Kind::Bulk);
        assert_eq!(&full[r.start..r.end], b"hello");
        assert_eq!(r.len, full.len());
        // Binary data with CRLF inside.
        let r = one(b"$4\r\na\r\nb\r\n");
        assert_eq!((r.start, r.end, r.len), (4, 8, 10));
    }

    #[test]
    fn nested_arrays() {
        let full = b"*3\r\n$1\r\na\r\n*2\r\n:1\r\n$-1\r\n%1\r\n+k\r\n+v\r\n+next\r\n";
        let r = one(full);
        assert_eq!(r.kind, Kind::Array);
        assert_eq!(r.len, full.len() - 7);
        for cut in 0..r.len {
            assert_eq!(parse_reply(&full[..cut]).unwrap(), None, "cut {cut}");
        }
        assert_eq!(one(b"*0\r\n").len, 4);
        assert_eq!(r.nested_errors, 0);
    }

    #[test]
    fn errors_nested_in_an_array_are_counted() {
        // EXEC where the 2nd and 3rd queued commands failed (one nested deeper).
        let r = one(b"*3\r\n:1\r\n-ERR not an integer\r\n*1\r\n-WRONGTYPE x\r\n");
        assert_eq!((r.kind, r.nested_errors), (Kind::Array, 2));
        assert_eq!(one(b"-ERR top\r\n").nested_errors, 0);
    }

    #[test]
    fn garbage_is_error() {
        assert!(parse_reply(b"hello\r\n").is_err());
        assert!(parse_reply(b"$x\r\n").is_err());
        assert!(parse_reply(b"$1\r\nab\r\n").is_err());
    }

    #[test]
    fn encoding() {
        let mut b = Vec::new();
        put_key(&mut b, b"k:", 1234);
        assert_eq!(b, b"$6\r\nk:1234\r\n");
        b.clear();
        put_bulk_u64(&mut b, 0);
        assert_eq!(b, b"$1\r\n0\r\n");
        assert_eq!(digits(9), 1);
        assert_eq!(digits(10), 2);
        assert_eq!(digits(u64::MAX), 20);
        assert_eq!(
            encode_command(&[b"GET", b"x"]),
            b"*2\r\n$3\r\nGET\r\n$1\r\nx\r\n"
        );
    }
}
