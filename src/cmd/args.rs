//! One argument cursor for every command, so parsing and its error replies are
//! the same everywhere.

use bytes::Bytes;

use crate::resp::Frame;
use crate::util::num::parse_i64;

/// What a command answers: a reply, or an error reply (also a frame).
pub type Reply = Result<Frame, Frame>;

pub mod err {
    use crate::resp::Frame;

    pub const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
    pub const NOT_INTEGER: &str = "ERR value is not an integer or out of range";
    pub const NOT_FLOAT: &str = "ERR value is not a valid float";
    pub const SYNTAX: &str = "ERR syntax error";
    pub const NO_SUCH_KEY: &str = "ERR no such key";
    pub const OVERFLOW: &str = "ERR increment or decrement would overflow";
    pub const DB_RANGE: &str = "ERR DB index is out of range";
    pub const TOO_BIG: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
    /// INCRBYFLOAT's and HINCRBYFLOAT's error for a sum that is not a number.
    pub const NAN_OR_INFINITY: &str = "ERR increment would produce NaN or Infinity";

    pub fn frame(text: &str) -> Frame {
        Frame::Error(text.to_string())
    }

    pub fn wrongtype() -> Frame {
        frame(WRONGTYPE)
    }

    pub fn syntax() -> Frame {
        frame(SYNTAX)
    }

    pub fn not_integer() -> Frame {
        frame(NOT_INTEGER)
    }

    pub fn wrong_arity(name: &str) -> Frame {
        Frame::Error(format!(
            "ERR wrong number of arguments for '{}' command",
            name.to_ascii_lowercase()
        ))
    }

    pub fn unknown_subcommand(sub: &[u8], cmd: &str) -> Frame {
        Frame::Error(format!(
            "ERR unknown subcommand '{}'. Try {} HELP.",
            String::from_utf8_lossy(sub),
            cmd.to_ascii_uppercase()
        ))
    }
}

/// A cursor over a command's arguments (the name excluded).
pub struct Args<'a> {
    items: &'a [Bytes],
    pos: usize,
}

impl<'a> Args<'a> {
    /// Starts after the command name (`argv[0]`).
    pub fn new(argv: &'a [Bytes]) -> Args<'a> {
        Args {
            items: argv,
            pos: 1,
        }
    }

    pub fn remaining(&self) -> usize {
        self.items.len() - self.pos
    }

    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    pub fn next_bytes(&mut self) -> Result<&'a Bytes, Frame> {
        let item = self.items.get(self.pos).ok_or_else(err::syntax)?;
        self.pos += 1;
        Ok(item)
    }

    pub fn next_i64(&mut self) -> Result<i64, Frame> {
        parse_i64(self.next_bytes()?).ok_or_else(err::not_integer)
    }

    /// The next argument upper-cased, for matching options.
    pub fn next_keyword(&mut self) -> Result<Keyword<'a>, Frame> {
        Ok(Keyword::new(self.next_bytes()?))
    }
}

/// An option word compared case-insensitively without allocating.
pub struct Keyword<'a>(&'a [u8]);

impl<'a> Keyword<'a> {
    pub fn new(b: &'a [u8]) -> Keyword<'a> {
        Keyword(b)
    }

    pub fn is(&self, word: &str) -> bool {
        self.0.eq_ignore_ascii_case(word.as_bytes())
    }

    pub fn as_bytes(&self) -> &'a [u8] {
        self.0
    }
}

/// Parses an i64 argument or answers Redis's integer error.
pub fn int_arg(b: &[u8]) -> Result<i64, Frame> {
    parse_i64(b).ok_or_else(err::not_integer)
}

/// A count that must not be negative (LPOP, SPOP, ZPOPMIN and friends):
/// Redis gives one error for a negative number and for no number at all.
pub fn positive_count(arg: &[u8]) -> Result<usize, Frame> {
    parse_i64(arg)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err::frame("ERR value is out of range, must be positive"))
}

/// Parses an argument Redis reads as a C `int` (DB indexes): its errors for a
/// non-number and for a number outside the `int` range.
pub fn int32_arg(b: &[u8]) -> Result<i64, Frame> {
    let n = int_arg(b)?;
    if n < i32::MIN as i64 || n > i32::MAX as i64 {
        return Err(err::frame(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ));
    }
    Ok(n)
}
