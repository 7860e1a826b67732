//! Reply encoder for RESP2 and RESP3.
//!
//! RESP3-only frame kinds degrade in RESP2 exactly as Redis 7 sends them, so
//! one command implementation serves both protocols. Integers and lengths
//! are formatted on the stack (no allocation), since every reply passes
//! through here.

use bytes::Bytes;

use super::{Frame, Protocol};
use crate::util::num::{decimal_digits, write_double};

/// Where encoded replies go: a plain `Vec<u8>`, or a connection's output
/// queue, which keeps large bulk payloads as the value's own `Bytes`
/// instead of copying them (`net::Output`).
pub trait Sink {
    /// Appends `bytes`.
    fn put(&mut self, bytes: &[u8]);
    /// Appends a bulk payload; a sink may hold `data` itself rather than a copy.
    fn payload(&mut self, data: &Bytes) {
        self.put(data);
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Appends the wire form of `frame` in protocol `proto` to `out`.
pub fn encode<S: Sink + ?Sized>(frame: &Frame, proto: Protocol, out: &mut S) {
    let resp3 = proto == Protocol::Resp3;
    match frame {
        Frame::Simple(s) => line(b'+', s.as_bytes(), out),
        Frame::SimpleOwned(s) => line(b'+', s.as_bytes(), out),
        Frame::Error(s) => line(b'-', s.as_bytes(), out),
        Frame::ErrorBytes(s) => line(b'-', s, out),
        Frame::Integer(n) => number_line(b':', *n < 0, n.unsigned_abs(), out),
        Frame::Bulk(data) => {
            header(b'$', data.len(), out);
            out.payload(data);
            out.put(b"\r\n");
        }
        Frame::Null => out.put(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
        Frame::NullArray => out.put(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
        Frame::Array(items) => aggregate(b'*', items, proto, out),
        Frame::Set(items) => aggregate(if resp3 { b'~' } else { b'*' }, items, proto, out),
        Frame::Push(items) => aggregate(if resp3 { b'>' } else { b'*' }, items, proto, out),
        Frame::Pairs(pairs) => {
            if resp3 {
                header(b'*', pairs.len(), out);
                for (a, b) in pairs {
                    header(b'*', 2, out);
                    encode(a, proto, out);
                    encode(b, proto, out);
                }
            } else {
                header(b'*', pairs.len() * 2, out);
                for (a, b) in pairs {
                    encode(a, proto, out);
                    encode(b, proto, out);
                }
            }
        }
        Frame::KeyedMap(pairs) => {
            header(if resp3 { b'%' } else { b'*' }, pairs.len(), out);
            for (k, v) in pairs {
                if !resp3 {
                    header(b'*', 2, out);
                }
                encode(k, proto, out);
                encode(v, proto, out);
            }
        }
        Frame::Sequence(frames) => {
            for f in frames {
                encode(f, proto, out);
            }
        }
        Frame::Map(pairs) => {
            if resp3 {
                header(b'%', pairs.len(), out);
            } else {
                header(b'*', pairs.len() * 2, out);
            }
            for (k, v) in pairs {
                encode(k, proto, out);
                encode(v, proto, out);
            }
        }
        Frame::Double(v) => {
            // Formatted aside first: the bulk length prefix must precede
            // the text (doubles are rare on the hot path).
            let mut text = Vec::with_capacity(32);
            write_double(*v, &mut text);
            if resp3 {
                out.put(b",");
                out.put(&text);
                out.put(b"\r\n");
            } else {
                header(b'$', text.len(), out);
                out.put(&text);
                out.put(b"\r\n");
            }
        }
        Frame::DoubleText(text) => {
            if resp3 {
                out.put(b",");
            } else {
                header(b'$', text.len(), out);
            }
            out.put(text);
            out.put(b"\r\n");
        }
        Frame::Boolean(b) => out.put(match (resp3, b) {
            (true, true) => b"#t\r\n",
            (true, false) => b"#f\r\n",
            (false, true) => b":1\r\n",
            (false, false) => b":0\r\n",
        }),
        Frame::Verbatim(text) => {
            if resp3 {
                header(b'=', text.len() + 4, out);
                out.put(b"txt:");
            } else {
                header(b'$', text.len(), out);
            }
            out.payload(text);
            out.put(b"\r\n");
        }
    }
}

/// `<prefix><text>\r\n` for simple strings and errors. CR and LF in the
/// text would break framing, so they become spaces (as Redis's
/// `addReplyErrorFormat` does).
fn line<S: Sink + ?Sized>(prefix: u8, text: &[u8], out: &mut S) {
    out.put(&[prefix]);
    if text.iter().any(|&c| c == b'\r' || c == b'\n') {
        let clean: Vec<u8> = text
            .iter()
            .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c })
            .collect();
        out.put(&clean);
    } else {
        out.put(text);
    }
    out.put(b"\r\n");
}

/// `<prefix><len>\r\n`, put as one piece.
#[inline]
fn header<S: Sink + ?Sized>(prefix: u8, len: usize, out: &mut S) {
    number_line(prefix, false, len as u64, out);
}

/// `<prefix>[-]<digits>\r\n` (lengths and integer replies), formatted on
/// the stack and put as one piece.
#[inline]
fn number_line<S: Sink + ?Sized>(prefix: u8, negative: bool, magnitude: u64, out: &mut S) {
    let mut line = [0u8; 24];
    line[0] = prefix;
    let mut at = 1;
    if negative {
        line[1] = b'-';
        at = 2;
    }
    let mut room = [0u8; 20];
    let digits = decimal_digits(magnitude, &mut room);
    line[at..at + digits.len()].copy_from_slice(digits);
    at += digits.len();
    line[at..at + 2].copy_from_slice(b"\r\n");
    out.put(&line[..at + 2]);
}

fn aggregate<S: Sink + ?Sized>(prefix: u8, items: &[Frame], proto: Protocol, out: &mut S) {
    header(prefix, items.len(), out);
    for item in items {
        encode(item, proto, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(frame: &Frame, proto: Protocol) -> String {
        let mut out = Vec::new();
        encode(frame, proto, &mut out);
        String::from_utf8(out).unwrap()
    }

    fn both(frame: Frame, resp2: &str, resp3: &str) {
        assert_eq!(enc(&frame, Protocol::Resp2), resp2, "RESP2 {frame:?}");
        assert_eq!(enc(&frame, Protocol::Resp3), resp3, "RESP3 {frame:?}");
    }

    #[test]
    fn scalars() {
        both(Frame::OK, "+OK\r\n", "+OK\r\n");
        both(
            Frame::SimpleOwned("string".into()),
            "+string\r\n",
            "+string\r\n",
        );
        both(Frame::error("ERR bad"), "-ERR bad\r\n", "-ERR bad\r\n");
        both(Frame::error("ERR a\r\nb"), "-ERR a  b\r\n", "-ERR a  b\r\n");
        both(Frame::Integer(0), ":0\r\n", ":0\r\n");
        both(Frame::Integer(-42), ":-42\r\n", ":-42\r\n");
        both(
            Frame::Integer(i64::MIN),
            ":-9223372036854775808\r\n",
            ":-9223372036854775808\r\n",
        );
        both(Frame::bulk("hello"), "$5\r\nhello\r\n", "$5\r\nhello\r\n");
        both(Frame::bulk(""), "$0\r\n\r\n", "$0\r\n\r\n");
        both(Frame::Null, "$-1\r\n", "_\r\n");
        both(Frame::NullArray, "*-1\r\n", "_\r\n");
        both(Frame::Boolean(true), ":1\r\n", "#t\r\n");
        both(Frame::Boolean(false), ":0\r\n", "#f\r\n");
    }

    #[test]
    fn doubles() {
        both(Frame::Double(1.5), "$3\r\n1.5\r\n", ",1.5\r\n");
        both(Frame::Double(3.0), "$1\r\n3\r\n", ",3\r\n");
        both(Frame::Double(f64::INFINITY), "$3\r\ninf\r\n", ",inf\r\n");
        both(
            Frame::Double(f64::NEG_INFINITY),
            "$4\r\n-inf\r\n",
            ",-inf\r\n",
        );
        both(Frame::Double(1e21), "$5\r\n1e+21\r\n", ",1e+21\r\n");
    }

    #[test]
    fn verbatim() {
        both(
            Frame::Verbatim(Bytes::from_static(b"Some string")),
            "$11\r\nSome string\r\n",
            "=15\r\ntxt:Some string\r\n",
        );
    }

    #[test]
    fn aggregates() {
        both(
            Frame::Array(vec![Frame::Integer(1), Frame::bulk("a"), Frame::Null]),
            "*3\r\n:1\r\n$1\r\na\r\n$-1\r\n",
            "*3\r\n:1\r\n$1\r\na\r\n_\r\n",
        );
        both(Frame::Array(vec![]), "*0\r\n", "*0\r\n");
        both(
            Frame::Map(vec![
                (Frame::bulk("k"), Frame::Integer(1)),
                (Frame::bulk("j"), Frame::Double(0.5)),
            ]),
            "*4\r\n$1\r\nk\r\n:1\r\n$1\r\nj\r\n$3\r\n0.5\r\n",
            "%2\r\n$1\r\nk\r\n:1\r\n$1\r\nj\r\n,0.5\r\n",
        );
        both(
            Frame::Set(vec![Frame::bulk("x")]),
            "*1\r\n$1\r\nx\r\n",
            "~1\r\n$1\r\nx\r\n",
        );
        both(
            Frame::Push(vec![
                Frame::bulk("message"),
                Frame::bulk("ch"),
                Frame::bulk("hi"),
            ]),
            "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
            ">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n",
        );
        both(
            Frame::Array(vec![
                Frame::Array(vec![Frame::Boolean(true)]),
                Frame::Set(vec![]),
            ]),
            "*2\r\n*1\r\n:1\r\n*0\r\n",
            "*2\r\n*1\r\n#t\r\n~0\r\n",
        );
    }

    #[test]
    fn encoded_commands_parse_back() {
        // An array of bulks is exactly a multibulk request.
        let frame = Frame::Array(vec![
            Frame::bulk("SET"),
            Frame::bulk("k"),
            Frame::bulk(b"\r\n\0"),
        ]);
        let mut out = Vec::new();
        encode(&frame, Protocol::Resp2, &mut out);
        let mut buf = bytes::BytesMut::from(&out[..]);
        let args = super::super::Parser::default()
            .next_command(&mut buf)
            .unwrap()
            .unwrap();
        assert_eq!(
            args,
            vec![
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"k"),
                Bytes::from_static(b"\r\n\0")
            ]
        );
    }
}
