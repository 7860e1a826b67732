//! Incremental request parser matching Redis 7's `processMultibulkBuffer`
//! and `processInlineBuffer`, including their lenient corners (a count line
//! ends at `\r` and the following byte is skipped unchecked; the two bytes
//! after a bulk payload are not checked either), because clients and test
//! suites observe those.
//!
//! Deliberate differences from Redis:
//! - Redis searches for line ends with `strchr`, so a NUL byte before the
//!   line end hides it and the request stalls; we search the real bytes.
//!   Inside an inline line a NUL still ends the arguments, as in Redis.
//! - `expected '$', got 'X'` carries X as a Latin-1 char in a `String`,
//!   where Redis sends the raw byte (identical for ASCII).

use bytes::{Buf, Bytes, BytesMut};

mod inline;
pub use inline::split_args;

/// Size limits enforced while parsing (Redis's `proto-max-bulk-len` etc.).
#[derive(Clone, Copy, Debug)]
pub struct ParseLimits {
    /// Largest bulk argument accepted (`proto-max-bulk-len`, default 512 MB).
    pub max_bulk_len: usize,
    /// Largest multibulk count accepted (Redis 7: `INT_MAX`). Room for the
    /// arguments grows as they arrive, so a large count reserves nothing.
    pub max_multibulk_len: usize,
    /// Largest inline command line (Redis: PROTO_INLINE_MAX_SIZE, 64 KB).
    pub max_inline_len: usize,
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_bulk_len: 512 * 1024 * 1024,
            max_multibulk_len: i32::MAX as usize,
            max_inline_len: 64 * 1024,
        }
    }
}

/// A malformed request. The text is Redis's, e.g. `Protocol error: invalid
/// multibulk length`; the server replies `-ERR <text>` and closes the connection.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);

impl ProtocolError {
    fn new(text: &str) -> ProtocolError {
        ProtocolError(format!("Protocol error: {text}"))
    }
}

/// Complete arguments of an unfinished multibulk are moved out of the read
/// buffer in parts of at least this many bytes (see `Parser::stashed`).
const STASH_MIN: usize = 1024 * 1024;

/// Most arguments of a multibulk from a client that must still log in.
const UNAUTH_MULTIBULK_MAX: i64 = 10;
/// Longest argument from a client that must still log in.
const UNAUTH_BULK_MAX: i64 = 16384;

/// Incremental request parser: keeps its place inside a partly received
/// multibulk so a large argument is not rescanned on every read.
#[derive(Debug, Default)]
pub struct Parser {
    limits: ParseLimits,
    /// The client has not logged in where a login is required: as Redis,
    /// its multibulks may have at most 10 arguments of at most 16 KiB.
    unauthenticated: bool,
    /// Arguments of the current multibulk not yet received; 0 between commands.
    remaining: usize,
    /// Arguments of the current multibulk.
    count: usize,
    /// Where the next argument of the current multibulk starts in the
    /// buffer: the arguments received so far stay there, in their wire
    /// form, until the last one is in; only then are they cut into
    /// `Bytes`. An unfinished multibulk of 5M empty arguments so costs its
    /// 30 MB of wire bytes, not 5M `Bytes` in a doubling vector (371 MB).
    pos: usize,
    /// Payload bytes of the arguments received so far (CLIENT LIST `argv-mem`).
    argv_len: usize,
    /// Complete arguments of the current multibulk moved out of the buffer
    /// once they passed [`STASH_MIN`] bytes, each part whole arguments in
    /// their wire form. Left in one buffer, they made it double as it grew
    /// and the copies it left behind stayed in RSS: 5M empty arguments (30
    /// MB sent) cost 60 MB. Moved out, they cost their bytes and the buffer
    /// stays small.
    stashed: Vec<Bytes>,
    /// Bytes in `stashed`.
    stashed_len: usize,
    /// Payload length of the bulk whose `$len` line was already consumed.
    bulk_len: Option<usize>,
    /// Bytes at the front of the buffer already searched for the current
    /// line terminator without finding it, so a slowly arriving line is not
    /// rescanned from the start on every read.
    scanned: usize,
    /// Where the arguments of a whole multibulk lie (`whole_multibulk`),
    /// kept to reuse its allocation.
    spans: Vec<(usize, usize)>,
    /// An emptied argument vector handed back by the caller (`recycle`),
    /// filled by the next whole multibulk instead of a new allocation.
    spare: Vec<Bytes>,
    /// Tests compare the fast path with the general one by turning it off.
    #[cfg(test)]
    general_only: bool,
}

/// What [`Parser::whole_multibulk`] found at the front of the buffer.
enum Whole {
    /// A complete multibulk of this many bytes; its arguments are in `spans`.
    Complete(usize),
    /// Anything else (incomplete, empty, malformed): the general path
    /// decides, with its errors and its incremental state.
    Other,
}

/// Outcome of looking for a line terminator.
enum Line {
    /// The line's content ends at this index; the terminator takes `len` bytes.
    Found {
        end: usize,
        consumed: usize,
    },
    NeedMore,
}

impl Parser {
    pub fn new(limits: ParseLimits) -> Parser {
        Parser {
            limits,
            ..Parser::default()
        }
    }

    /// Changes the largest bulk accepted from the next length line on
    /// (CONFIG SET proto-max-bulk-len applies to connected clients too).
    pub fn set_max_bulk_len(&mut self, len: usize) {
        self.limits.max_bulk_len = len;
    }

    /// Applies (or lifts) Redis's limits for a client that must still log
    /// in (`UNAUTH_MULTIBULK_MAX`, `UNAUTH_BULK_MAX`).
    pub fn set_unauthenticated(&mut self, unauthenticated: bool) {
        self.unauthenticated = unauthenticated;
    }

    /// Bytes still missing for the bulk argument being received (payload plus
    /// CRLF), given `buffered` bytes already in the buffer. Lets the
    /// connection reserve room for a large argument in one allocation.
    pub fn pending_bulk_bytes(&self, buffered: usize) -> Option<usize> {
        self.bulk_len
            .map(|len| (len + 2).saturating_sub(buffered.saturating_sub(self.pos)))
    }

    /// Bytes at the front of the buffer that hold the arguments received
    /// so far of an unfinished multibulk (Redis holds those in the
    /// client's argv, outside its query buffer).
    pub fn held(&self) -> usize {
        self.pos
    }

    /// Bytes of those arguments already moved out of the buffer (counted
    /// in the client's memory beside the buffer itself).
    pub fn stashed(&self) -> usize {
        self.stashed_len
    }

    /// Payload bytes of those arguments (Redis's `argv-mem`).
    pub fn argv_len(&self) -> usize {
        self.argv_len
    }

    /// True when the parser is between commands (no partial multibulk held).
    pub fn is_idle(&self) -> bool {
        self.remaining == 0
    }

    /// Takes one complete command off the front of `buf`.
    /// `Ok(None)`: more bytes needed. Empty inline lines are skipped.
    ///
    /// After an error the parser is reset; the connection is expected to
    /// reply and close, as Redis does.
    pub fn next_command(
        &mut self,
        buf: &mut BytesMut,
    ) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let result = self.parse(buf);
        if result.is_err() {
            self.reset();
        }
        result
    }

    /// Takes back a command's argument vector once it is done with, to hold
    /// the next command's arguments (one allocation fewer per command).
    /// Vectors of long commands are not kept.
    pub fn recycle(&mut self, mut argv: Vec<Bytes>) {
        const KEEP_ARGS: usize = 16;
        if argv.capacity() <= KEEP_ARGS && argv.capacity() > self.spare.capacity() {
            argv.clear();
            self.spare = argv;
        }
    }

    fn reset(&mut self) {
        self.remaining = 0;
        self.count = 0;
        self.pos = 0;
        self.argv_len = 0;
        self.stashed = Vec::new();
        self.stashed_len = 0;
        self.bulk_len = None;
        self.scanned = 0;
    }

    /// The fast path for the usual request: a whole multibulk already in
    /// the buffer. It only reads the buffer, recording where each argument
    /// lies, so a complete command costs one split of the buffer instead of
    /// a split and two advances per argument. It accepts exactly what the
    /// general path accepts (the same leniencies and limits); whatever it
    /// does not accept, that path parses.
    fn whole_multibulk(&mut self, buf: &[u8]) -> Whole {
        if self.unauthenticated {
            // The general path checks the lower limits.
            return Whole::Other;
        }
        let limits = self.limits;
        // A count line: `<first>digits\r` plus one unchecked byte.
        let line = |at: usize| -> Option<(i64, usize)> {
            if let Some(found) = plain_count_line(buf, at) {
                return Some(found);
            }
            let off = memchr::memchr(b'\r', buf.get(at + 1..)?)?;
            let end = at + 1 + off;
            if end + 2 > buf.len() {
                return None;
            }
            Some((crate::util::num::parse_i64(&buf[at + 1..end])?, end + 2))
        };
        let Some((count, mut at)) = line(0) else {
            return Whole::Other;
        };
        if count <= 0 || count as usize > limits.max_multibulk_len {
            return Whole::Other;
        }
        self.spans.clear();
        for _ in 0..count {
            if buf.get(at) != Some(&b'$') {
                return Whole::Other;
            }
            let Some((len, start)) = line(at) else {
                return Whole::Other;
            };
            if len < 0 || len as u64 > limits.max_bulk_len as u64 {
                return Whole::Other;
            }
            let len = len as usize;
            // The payload and the two bytes after it (not checked, as Redis).
            if buf.len() < start + len + 2 {
                return Whole::Other;
            }
            self.spans.push((start, len));
            at = start + len + 2;
        }
        Whole::Complete(at)
    }

    fn parse(&mut self, buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        loop {
            if self.remaining == 0 {
                let Some(&first) = buf.first() else {
                    return Ok(None);
                };
                #[cfg(test)]
                let fast = !self.general_only;
                #[cfg(not(test))]
                let fast = true;
                if fast && first == b'*' && self.scanned == 0 {
                    if let Whole::Complete(len) = self.whole_multibulk(buf) {
                        let request = buf.split_to(len).freeze();
                        let mut args = std::mem::take(&mut self.spare);
                        args.extend(
                            self.spans
                                .iter()
                                .map(|&(start, len)| request.slice(start..start + len)),
                        );
                        return Ok(Some(args));
                    }
                }
                if first != b'*' {
                    match self.parse_inline(buf)? {
                        None => return Ok(None),
                        Some(args) if args.is_empty() => continue,
                        Some(args) => return Ok(Some(args)),
                    }
                }
                let Some(count) = self.parse_multibulk_len(buf)? else {
                    return Ok(None);
                };
                if count <= 0 {
                    // `*0`, `*-1`: an empty command, silently skipped.
                    continue;
                }
                self.remaining = count as usize;
                self.count = self.remaining;
                self.pos = 0;
                self.argv_len = 0;
            }
            while self.remaining > 0 {
                let len = match self.bulk_len {
                    Some(len) => len,
                    None => match self.parse_bulk_len(buf)? {
                        Some(len) => len,
                        None => {
                            self.stash(buf);
                            return Ok(None);
                        }
                    },
                };
                if buf.len() - self.pos < len.saturating_add(2) {
                    return Ok(None);
                }
                // Redis skips the two bytes after the payload without checking them.
                self.pos += len + 2;
                self.argv_len += len;
                self.bulk_len = None;
                self.remaining -= 1;
            }
            let last = buf.split_to(self.pos).freeze();
            let args = self.cut_args(last);
            self.pos = 0;
            self.argv_len = 0;
            return Ok(Some(args));
        }
    }

    /// Moves the complete arguments at the front of `buf` to `stashed` once
    /// they are [`STASH_MIN`] bytes or more. Only between arguments, where
    /// `pos` is the boundary of the last complete one.
    fn stash(&mut self, buf: &mut BytesMut) {
        if self.pos < STASH_MIN || self.bulk_len.is_some() {
            return;
        }
        self.scanned = self.scanned.saturating_sub(self.pos);
        self.stashed_len += self.pos;
        // A copy of exactly its size: a part split off the buffer would
        // keep the buffer's whole allocation alive (up to twice its bytes),
        // and the buffer would move to a new one; copied out, the buffer
        // keeps its allocation and reuses it.
        self.stashed.push(Bytes::copy_from_slice(&buf[..self.pos]));
        buf.advance(self.pos);
        self.pos = 0;
    }

    /// The `count` arguments of a multibulk whose header is already off,
    /// read again from their parts (the stashed ones, then `last`) now that
    /// all are in: each `$<len>\r` line and its length were checked as they
    /// arrived, and each part holds whole arguments, so this only slices.
    fn cut_args(&mut self, last: Bytes) -> Vec<Bytes> {
        let mut args = std::mem::take(&mut self.spare);
        args.reserve_exact(self.count);
        let mut parts = std::mem::take(&mut self.stashed);
        self.stashed_len = 0;
        parts.push(last);
        for part in &parts {
            let mut at = 0;
            while at < part.len() {
                let end = at + 1 + memchr::memchr(b'\r', &part[at + 1..]).expect("a checked line");
                let len =
                    crate::util::num::parse_i64(&part[at + 1..end]).expect("a checked length");
                let start = end + 2;
                args.push(part.slice(start..start + len as usize));
                at = start + len as usize + 2;
            }
        }
        debug_assert_eq!(args.len(), self.count);
        args
    }

    /// Finds the `\r` ending a count line (Redis: `strchr(..., '\r')`), which
    /// must be followed by one more byte (assumed `\n`).
    /// The line starts at `from`.
    fn find_count_line(
        &mut self,
        buf: &BytesMut,
        from: usize,
        too_big: &str,
    ) -> Result<Line, ProtocolError> {
        let start = self.scanned.max(from);
        match memchr::memchr(b'\r', &buf[start..]) {
            None => {
                if buf.len() - from > self.limits.max_inline_len {
                    return Err(ProtocolError::new(too_big));
                }
                self.scanned = buf.len();
                Ok(Line::NeedMore)
            }
            Some(off) => {
                let end = start + off;
                if end + 2 > buf.len() {
                    self.scanned = end;
                    return Ok(Line::NeedMore);
                }
                self.scanned = 0;
                Ok(Line::Found {
                    end,
                    consumed: end + 2,
                })
            }
        }
    }

    /// Parses `*<count>\r\n`; `Some(count)` may be zero or negative.
    fn parse_multibulk_len(&mut self, buf: &mut BytesMut) -> Result<Option<i64>, ProtocolError> {
        let Line::Found { end, consumed } =
            self.find_count_line(buf, 0, "too big mbulk count string")?
        else {
            return Ok(None);
        };
        match crate::util::num::parse_i64(&buf[1..end]) {
            Some(n) if self.unauthenticated && n > UNAUTH_MULTIBULK_MAX => {
                Err(ProtocolError::new("unauthenticated multibulk length"))
            }
            Some(n) if n <= self.limits.max_multibulk_len as i64 => {
                buf.advance(consumed);
                Ok(Some(n))
            }
            _ => Err(ProtocolError::new("invalid multibulk length")),
        }
    }

    /// Parses `$<len>\r\n` and records the length as pending.
    fn parse_bulk_len(&mut self, buf: &mut BytesMut) -> Result<Option<usize>, ProtocolError> {
        let Line::Found { end, consumed } =
            self.find_count_line(buf, self.pos, "too big bulk count string")?
        else {
            return Ok(None);
        };
        let first = buf[self.pos];
        if first != b'$' {
            // Redis's addReplyErrorFormat turns CR/LF into spaces.
            let shown = if first == b'\r' || first == b'\n' {
                ' '
            } else {
                char::from(first)
            };
            return Err(ProtocolError(format!(
                "Protocol error: expected '$', got '{shown}'"
            )));
        }
        match crate::util::num::parse_i64(&buf[self.pos + 1..end]) {
            Some(n) if self.unauthenticated && n > UNAUTH_BULK_MAX => {
                Err(ProtocolError::new("unauthenticated bulk length"))
            }
            Some(n) if n >= 0 && n as u64 <= self.limits.max_bulk_len as u64 => {
                self.pos = consumed;
                let len = n as usize;
                self.bulk_len = Some(len);
                Ok(Some(len))
            }
            _ => Err(ProtocolError::new("invalid bulk length")),
        }
    }

    /// Parses one inline command line; `Some(vec![])` for a blank line.
    fn parse_inline(&mut self, buf: &mut BytesMut) -> Result<Option<Vec<Bytes>>, ProtocolError> {
        let Some(off) = memchr::memchr(b'\n', &buf[self.scanned..]) else {
            if buf.len() > self.limits.max_inline_len {
                return Err(ProtocolError::new("too big inline request"));
            }
            self.scanned = buf.len();
            return Ok(None);
        };
        let newline = self.scanned + off;
        self.scanned = 0;
        let end = if newline > 0 && buf[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        // Redis reads 16 KB at a time and refuses a line once 64 KB of it
        // came without a newline, so a longer line is refused however it
        // arrives (in one read here it would have been run).
        if end > self.limits.max_inline_len {
            return Err(ProtocolError::new("too big inline request"));
        }
        let args = inline::split_args(&buf[..end])
            .ok_or_else(|| ProtocolError::new("unbalanced quotes in request"))?;
        buf.advance(newline + 1);
        Ok(Some(args))
    }
}

/// The usual count line at `at` (`*3\r\n`, `$16\r\n`): a digit from 1 to 9,
/// at most 17 more digits and `\r` plus one byte, read in one pass. Returns
/// its value and where the next line starts; None for anything else (zero,
/// a sign, an incomplete line, a malformed one), which the caller reads the
/// general way. 18 digits cannot overflow an i64, so the value is the one
/// `parse_i64` gives for the same digits.
#[inline]
fn plain_count_line(buf: &[u8], at: usize) -> Option<(i64, usize)> {
    const MAX_DIGITS: usize = 18;
    let digits = buf.get(at + 1..)?;
    let first = *digits.first()?;
    if !(b'1'..=b'9').contains(&first) {
        return None;
    }
    let mut value = i64::from(first - b'0');
    for (i, &c) in digits.iter().enumerate().skip(1).take(MAX_DIGITS) {
        match c {
            b'0'..=b'9' if i < MAX_DIGITS => value = value * 10 + i64::from(c - b'0'),
            // The terminator and the unchecked byte after it.
            b'\r' if at + 1 + i + 2 <= buf.len() => return Some((value, at + 1 + i + 2)),
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(input: &[u8]) -> Result<Vec<Vec<Vec<u8>>>, ProtocolError> {
        let mut p = Parser::default();
        let mut buf = BytesMut::from(input);
        let mut out = Vec::new();
        while let Some(cmd) = p.next_command(&mut buf)? {
            out.push(cmd.iter().map(|a| a.to_vec()).collect());
        }
        Ok(out)
    }

    fn args(list: &[&str]) -> Vec<Vec<u8>> {
        list.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn err(input: &[u8]) -> String {
        parse_all(input).unwrap_err().0
    }

    fn encode_multibulk(cmd: &[Vec<u8>]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", cmd.len()).into_bytes();
        for a in cmd {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    /// Every command in `input` fed in pieces of `chunk` bytes, or the
    /// error that stopped the parse, with or without the fast path.
    fn parse_chunked(
        input: &[u8],
        chunk: usize,
        general_only: bool,
    ) -> (Vec<Vec<Vec<u8>>>, Option<String>) {
        let mut p = Parser {
            general_only,
            ..Parser::default()
        };
        let mut buf = BytesMut::new();
        let mut out = Vec::new();
        for piece in input.chunks(chunk.max(1)) {
            buf.extend_from_slice(piece);
            loop {
                match p.next_command(&mut buf) {
                    Ok(Some(cmd)) => out.push(cmd.iter().map(|a| a.to_vec()).collect()),
                    Ok(None) => break,
                    Err(e) => return (out, Some(e.0)),
                }
            }
        }
        (out, None)
    }

    #[test]
    fn the_fast_path_takes_whole_multibulks_only() {
        let mut p = Parser::default();
        let whole = b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*1\r\n";
        assert!(matches!(p.whole_multibulk(whole), Whole::Complete(20)));
        assert_eq!(p.spans, vec![(8, 3), (17, 1)]);
        for partial in [
            &b"*2\r\n$3\r\nGET\r\n$1\r\nk\r"[..],
            b"*2\r\n$3\r\nGE",
            b"*2\r",
            b"*",
        ] {
            assert!(matches!(p.whole_multibulk(partial), Whole::Other));
        }
        for odd in [
            &b"*0\r\n"[..],
            b"*-1\r\n",
            b"*1\r\n:3\r\n",
            b"*1\r\n$-1\r\n",
            b"*x\r\n",
        ] {
            assert!(matches!(p.whole_multibulk(odd), Whole::Other), "{odd:?}");
        }
    }

    #[test]
    fn plain_count_lines_are_read_in_one_pass() {
        assert_eq!(plain_count_line(b"*3\r\n", 0), Some((3, 4)));
        assert_eq!(plain_count_line(b"x$16\r\n", 1), Some((16, 6)));
        let longest = b"$999999999999999999\r\n";
        assert_eq!(
            plain_count_line(longest, 0),
            Some((999_999_999_999_999_999, 21))
        );
        // Left to the general path: zero, leading zeros, signs, more than
        // 18 digits, other bytes, a line not all there.
        for line in [
            &b"$0\r\n"[..],
            b"$01\r\n",
            b"$-1\r\n",
            b"$+1\r\n",
            b"$1000000000000000000\r\n",
            b"$1 \r\n",
            b"$12",
            b"$12\r",
        ] {
            assert_eq!(
                plain_count_line(line, 0),
                None,
                "{:?}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn a_recycled_vector_holds_the_next_command_alone() {
        let mut p = Parser::default();
        let mut buf =
            BytesMut::from(&b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*1\r\n$4\r\nPING\r\n"[..]);
        let first = p.next_command(&mut buf).unwrap().unwrap();
        let capacity = first.capacity();
        p.recycle(first);
        let second = p.next_command(&mut buf).unwrap().unwrap();
        assert_eq!(second, vec![Bytes::from_static(b"PING")]);
        assert_eq!(second.capacity(), capacity, "the vector was reused");
        // A long command's vector is not kept.
        p.recycle(Vec::with_capacity(1000));
        let mut buf = BytesMut::from(&b"*1\r\n$4\r\nPING\r\n"[..]);
        assert!(p.next_command(&mut buf).unwrap().unwrap().capacity() < 1000);
    }

    #[test]
    fn multibulk() {
        assert_eq!(
            parse_all(b"*1\r\n$4\r\nPING\r\n").unwrap(),
            vec![args(&["PING"])]
        );
        assert_eq!(
            parse_all(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n*1\r\n$4\r\nPING\r\n").unwrap(),
            vec![args(&["SET", "k", ""]), args(&["PING"])]
        );
        // Binary payloads, including CRLF inside.
        assert_eq!(
            parse_all(b"*1\r\n$4\r\n\r\n\0\xff\r\n").unwrap(),
            vec![vec![b"\r\n\0\xff".to_vec()]]
        );
    }

    #[test]
    fn empty_multibulks_are_skipped() {
        assert_eq!(
            parse_all(b"*0\r\n*-1\r\n*-5\r\n*1\r\n$4\r\nPING\r\n").unwrap(),
            vec![args(&["PING"])]
        );
        assert_eq!(parse_all(b"*0\r\n").unwrap(), Vec::<Vec<Vec<u8>>>::new());
    }

    #[test]
    fn redis_lenient_corners() {
        // A count line ends at '\r'; the next byte is skipped unchecked.
        assert_eq!(
            parse_all(b"*1\rx$4\r\nPING\r\n").unwrap(),
            vec![args(&["PING"])]
        );
        // The two bytes after a payload are not checked.
        assert_eq!(
            parse_all(b"*1\r\n$3\r\nPINGX").unwrap(),
            vec![args(&["PIN"])]
        );
    }

    #[test]
    fn errors_match_redis() {
        assert_eq!(err(b"*\r\n"), "Protocol error: invalid multibulk length");
        assert_eq!(err(b"*1x\r\n"), "Protocol error: invalid multibulk length");
        assert_eq!(err(b"*01\r\n"), "Protocol error: invalid multibulk length");
        assert_eq!(
            err(b"*2147483648\r\n"),
            "Protocol error: invalid multibulk length"
        );
        assert_eq!(
            err(b"*1\r\n:3\r\n"),
            "Protocol error: expected '$', got ':'"
        );
        assert_eq!(err(b"*1\r\n\r\n"), "Protocol error: expected '$', got ' '");
        assert_eq!(err(b"*1\r\n$-1\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(err(b"*1\r\n$\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(err(b"*1\r\n$x\r\n"), "Protocol error: invalid bulk length");
        assert_eq!(
            err(b"PING \"a\r\n"),
            "Protocol error: unbalanced quotes in request"
        );
        assert_eq!(
            err(b"ECHO \"a\"b\r\n"),
            "Protocol error: unbalanced quotes in request"
        );
    }

    #[test]
    fn bulk_limit() {
        let mut p = Parser::new(ParseLimits {
            max_bulk_len: 10,
            ..ParseLimits::default()
        });
        let mut buf = BytesMut::from(&b"*1\r\n$10\r\n0123456789\r\n*1\r\n$11\r\n"[..]);
        assert_eq!(
            p.next_command(&mut buf).unwrap().unwrap(),
            vec![Bytes::from_static(b"0123456789")]
        );
        assert_eq!(
            p.next_command(&mut buf).unwrap_err().0,
            "Protocol error: invalid bulk length"
        );
    }

    #[test]
    fn a_long_unfinished_multibulk_leaves_the_buffer_small() {
        const N: usize = 400_000;
        let mut wire = format!("*{N}\r\n").into_bytes();
        for i in 0..N {
            let arg = i.to_string();
            wire.extend_from_slice(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
        }
        let mut p = Parser::default();
        let mut buf = BytesMut::new();
        let mut largest = 0;
        let mut args = None;
        let (header, mut fed) = (format!("*{N}\r\n").len(), 0);
        for chunk in wire.chunks(64 * 1024 + 7) {
            assert!(args.is_none(), "one command");
            buf.extend_from_slice(chunk);
            fed += chunk.len();
            args = p.next_command(&mut buf).unwrap();
            largest = largest.max(buf.len());
            if args.is_none() {
                // Every byte but the header's is in the buffer or stashed.
                assert_eq!(p.stashed() + buf.len() + header, fed);
            }
        }
        let args = args.expect("the whole command");
        assert_eq!(args.len(), N);
        for (i, arg) in args.iter().enumerate() {
            assert_eq!(arg, i.to_string().as_bytes());
        }
        assert!(largest < 2 * STASH_MIN, "the buffer held {largest} bytes");
        assert_eq!(p.stashed(), 0);
        assert!(buf.is_empty());
    }

    #[test]
    fn too_big_count_lines() {
        let limit = ParseLimits::default().max_inline_len;
        let mut p = Parser::default();
        let mut buf = BytesMut::from(&b"*1"[..]);
        buf.extend_from_slice(&vec![b'1'; limit - 2]);
        assert_eq!(p.next_command(&mut buf), Ok(None));
        buf.extend_from_slice(b"11");
        assert_eq!(
            p.next_command(&mut buf).unwrap_err().0,
            "Protocol error: too big mbulk count string"
        );

        let mut p = Parser::default();
        let mut buf = BytesMut::from(&b"*1\r\n$"[..]);
        buf.extend_from_slice(&vec![b'1'; limit]);
        assert_eq!(
            p.next_command(&mut buf).unwrap_err().0,
            "Protocol error: too big bulk count string"
        );

        let mut p = Parser::default();
        let mut buf = BytesMut::from(&vec![b'a'; limit + 1][..]);
        assert_eq!(
            p.next_command(&mut buf).unwrap_err().0,
            "Protocol error: too big inline request"
        );

        // The whole line at once, newline included: refused all the same.
        let mut p = Parser::default();
        let mut buf = BytesMut::from(&vec![b'a'; limit + 1][..]);
        buf.extend_from_slice(b"\r\n");
        assert_eq!(
            p.next_command(&mut buf).unwrap_err().0,
            "Protocol error: too big inline request"
        );
        let mut buf = BytesMut::from(&vec![b'a'; limit][..]);
        buf.extend_from_slice(b"\r\n");
        assert!(Parser::default().next_command(&mut buf).unwrap().is_some());
    }

    #[test]
    fn inline() {
        assert_eq!(parse_all(b"PING\r\n").unwrap(), vec![args(&["PING"])]);
        assert_eq!(parse_all(b"PING\n").unwrap(), vec![args(&["PING"])]);
        assert_eq!(
            parse_all(b"\r\n\n  \r\nPING\r\n").unwrap(),
            vec![args(&["PING"])]
        );
        assert_eq!(
            parse_all(b"SET  k \t v\r\n").unwrap(),
            vec![args(&["SET", "k", "v"])]
        );
        assert_eq!(
            parse_all(b"ECHO \"a b\"\r\n").unwrap(),
            vec![args(&["ECHO", "a b"])]
        );
        assert_eq!(
            parse_all(b"ECHO a\"b c\"\r\n").unwrap(),
            vec![args(&["ECHO", "ab c"])]
        );
        assert_eq!(
            parse_all(b"ECHO \"\\x41\\x4g\"\r\n").unwrap(),
            vec![args(&["ECHO", "Ax4g"])]
        );
        assert_eq!(
            parse_all(b"ECHO 'it\\'s'\r\n").unwrap(),
            vec![args(&["ECHO", "it's"])]
        );
        assert_eq!(
            parse_all(b"ECHO 'a\\nb'\r\n").unwrap(),
            vec![args(&["ECHO", "a\\nb"])]
        );
        assert_eq!(
            parse_all(b"ECHO \"\\n\\r\\t\\b\\a\\\\\\\"\\q\"\r\n").unwrap(),
            vec![vec![b"ECHO".to_vec(), b"\n\r\t\x08\x07\\\"q".to_vec()]]
        );
        assert_eq!(
            parse_all(b"ECHO \"\"\r\n").unwrap(),
            vec![args(&["ECHO", ""])]
        );
        // \v separates leading blanks but does not end a token.
        assert_eq!(
            parse_all(b" \x0b ECHO a\x0bb\r\n").unwrap(),
            vec![args(&["ECHO", "a\x0bb"])]
        );
        // A NUL ends the argument list, as sdssplitargs sees a C string.
        assert_eq!(
            parse_all(b"ECHO a\0b c\r\nPING\r\n").unwrap(),
            vec![args(&["ECHO", "a"]), args(&["PING"])]
        );
        // Mixed inline and multibulk on one connection.
        assert_eq!(
            parse_all(b"PING\r\n*1\r\n$4\r\nPING\r\nPING\n").unwrap(),
            vec![args(&["PING"]); 3]
        );
    }

    #[test]
    fn incremental_keeps_state() {
        let mut p = Parser::default();
        let mut buf = BytesMut::new();
        let payload = vec![b'x'; 100_000];
        let cmd = encode_multibulk(&[b"SET".to_vec(), b"k".to_vec(), payload.clone()]);
        let mut got = None;
        for chunk in cmd.chunks(1000) {
            buf.extend_from_slice(chunk);
            if let Some(c) = p.next_command(&mut buf).unwrap() {
                got = Some(c);
            } else if buf.len() > 100 {
                // Headers were consumed; only the payload waits in the buffer.
                assert!(p.pending_bulk_bytes(buf.len()).is_some());
            }
        }
        let got = got.unwrap();
        assert_eq!(got[2].as_ref(), &payload[..]);
        assert!(buf.is_empty());
        assert!(p.is_idle());
    }

    proptest! {
        #[test]
        fn chunked_round_trip(
            cmds in proptest::collection::vec(
                proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 1..6), 1..5),
            chunk in 1usize..50,
        ) {
            let mut wire = Vec::new();
            for c in &cmds {
                wire.extend_from_slice(&encode_multibulk(c));
            }
            let mut p = Parser::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for piece in wire.chunks(chunk) {
                buf.extend_from_slice(piece);
                while let Some(c) = p.next_command(&mut buf).unwrap() {
                    got.push(c.iter().map(|a| a.to_vec()).collect::<Vec<_>>());
                }
            }
            prop_assert_eq!(got, cmds);
            prop_assert!(buf.is_empty());
        }

        /// Protocol-shaped input, well formed or not, parses the same with
        /// the fast path as without it, whole or in pieces.
        #[test]
        fn the_fast_path_changes_nothing(
            pieces in proptest::collection::vec(prop_oneof![
                proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..12), 1..4)
                    .prop_map(|c| encode_multibulk(&c)),
                proptest::collection::vec(any::<u8>(), 0..6),
                Just(b"*0\r\n".to_vec()),
                Just(b"*-1\r\n".to_vec()),
                Just(b"*2\r\n$-1\r\n".to_vec()),
                Just(b"*1\r\n$3\r\nab".to_vec()),
                Just(b"$4\r\nPING\r\n".to_vec()),
                Just(b"*1\rX$1\rYa\r\n".to_vec()),
                Just(b"PING\r\n".to_vec()),
                Just(b"*1\r\n$03\r\nabc\r\n".to_vec()),
                Just(b"*01\r\n$0\r\n\r\n".to_vec()),
                Just(b"*1\r\n$+3\r\nabc\r\n".to_vec()),
                Just(b"*1\r\n$999999999999999999\r\n".to_vec()),
                Just(b"*1\r\n$9999999999999999999\r\n".to_vec()),
                Just(b"*2\r\n$1 \r\na\r\n".to_vec()),
            ], 1..8),
            chunk in 1usize..64,
        ) {
            let wire = pieces.concat();
            for size in [wire.len(), chunk] {
                prop_assert_eq!(parse_chunked(&wire, size, false), parse_chunked(&wire, size, true));
            }
        }

        #[test]
        fn inline_chunked_round_trip(
            cmds in proptest::collection::vec(proptest::collection::vec("[a-zA-Z0-9:]{1,8}", 1..5), 1..5),
            chunk in 1usize..20,
        ) {
            let wire: String = cmds.iter().map(|c| c.join(" ") + "\r\n").collect();
            let mut p = Parser::default();
            let mut buf = BytesMut::new();
            let mut got = Vec::new();
            for piece in wire.as_bytes().chunks(chunk) {
                buf.extend_from_slice(piece);
                while let Some(c) = p.next_command(&mut buf).unwrap() {
                    got.push(c.iter().map(|a| String::from_utf8(a.to_vec()).unwrap()).collect::<Vec<_>>());
                }
            }
            prop_assert_eq!(got, cmds);
        }

        #[test]
        fn never_panics(data in proptest::collection::vec(any::<u8>(), 0..300), chunk in 1usize..64) {
            let mut p = Parser::new(ParseLimits { max_bulk_len: 100, max_multibulk_len: 100, max_inline_len: 128 });
            let mut buf = BytesMut::new();
            for piece in data.chunks(chunk) {
                buf.extend_from_slice(piece);
                loop {
                    match p.next_command(&mut buf) {
                        Ok(Some(_)) => continue,
                        Ok(None) => break,
                        Err(e) => {
                            prop_assert!(e.0.starts_with("Protocol error: "));
                            buf.clear();
                            break;
                        }
                    }
                }
            }
        }

        #[test]
        fn protocolish_bytes_never_panic(
            data in proptest::collection::vec(prop::sample::select(b"*$\r\n0123-9 \"'\\xa".to_vec()), 0..200),
        ) {
            let mut p = Parser::new(ParseLimits { max_bulk_len: 50, max_multibulk_len: 50, max_inline_len: 64 });
            let mut buf = BytesMut::from(&data[..]);
            while let Ok(Some(_)) = p.next_command(&mut buf) {}
        }
    }
}
