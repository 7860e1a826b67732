//! Reply encoder for RESP2 and RESP3.
//!
//! RESP3-only frame kinds degrade in RESP2 exactly as Redis 7 sends them, so
//! one command implementation serves both protocols. Integers and lengths
//! are written with [`format_i64`] (no allocation), since every reply passes
//! through here.

use super::{Frame, Protocol};
use crate::util::num::{format_i64, format_u64, write_double};

/// Appends the wire form of `frame` in protocol `proto` to `out`.
pub fn encode(frame: &Frame, proto: Protocol, out: &mut Vec<u8>) {
    let resp3 = proto == Protocol::Resp3;
    match frame {
        Frame::Simple(s) => line(b'+', s.as_bytes(), out),
        Frame::SimpleOwned(s) => line(b'+', s.as_bytes(), out),
        Frame::Error(s) => line(b'-', s.as_bytes(), out),
        Frame::ErrorBytes(s) => line(b'-', s, out),
        Frame::Integer(n) => {
            out.push(b':');
            format_i64(*n, out);
            out.extend_from_slice(b"\r\n");
        }
        Frame::Bulk(data) => bulk(data, out),
        Frame::Null => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"$-1\r\n" }),
        Frame::NullArray => out.extend_from_slice(if resp3 { b"_\r\n" } else { b"*-1\r\n" }),
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
            if resp3 {
                out.push(b',');
                write_double(*v, out);
                out.extend_from_slice(b"\r\n");
            } else {
                // The bulk length prefix must precede the text, so format
                // it aside first (doubles are rare on the hot path).
                let mut text = Vec::with_capacity(32);
                write_double(*v, &mut text);
                bulk(&text, out);
            }
        }
        Frame::Boolean(b) => out.extend_from_slice(match (resp3, b) {
            (true, true) => b"#t\r\n",
            (true, false) => b"#f\r\n",
            (false, true) => b":1\r\n",
            (false, false) => b":0\r\n",
        }),
        Frame::Verbatim(text) => {
            if resp3 {
                header(b'=', text.len() + 4, out);
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            } else {
                bulk(text, out);
            }
        }
    }
}

/// `<prefix><text>\r\n` for simple strings and errors. CR and LF in the
/// text would break framing, so they become spaces (as Redis's
/// `addReplyErrorFormat` does).
fn line(prefix: u8, text: &[u8], out: &mut Vec<u8>) {
    out.push(prefix);
    if text.iter().any(|&c| c == b'\r' || c == b'\n') {
        out.extend(
            text.iter()
                .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
    } else {
        out.extend_from_slice(text);
    }
    out.extend_from_slice(b"\r\n");
}

/// `<prefix><len>\r\n`.
#[inline]
fn header(prefix: u8, len: usize, out: &mut Vec<u8>) {
    out.push(prefix);
    format_u64(len as u64, out);
    out.extend_from_slice(b"\r\n");
}

#[inline]
fn bulk(data: &[u8], out: &mut Vec<u8>) {
    out.reserve(data.len() + 16);
    header(b'$', data.len(), out);
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

fn aggregate(prefix: u8, items: &[Frame], proto: Protocol, out: &mut Vec<u8>) {
    header(prefix, items.len(), out);
    for item in items {
        encode(item, proto, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

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
