//! The commands part of an append-only file, read as Redis 7.0 reads it:
//! RESP arrays of bulk strings, `#` annotation lines (`#TS:<seconds>`)
//! between them skipped.
//!
//! [`scan`] walks a file's bytes once and says how far they hold whole
//! commands. It never panics and never trusts a count: an array or bulk
//! length is only believed as far as the bytes go, so a hostile length
//! is a truncated file, not an allocation. What it finds:
//! - [`End::Complete`]: every byte is a whole command;
//! - [`End::Truncated`]: the file stops inside a command (a crash while
//!   appending) or inside a `MULTI` never closed by its `EXEC`; the
//!   commands before `valid_up_to` are whole, and Redis truncates the file
//!   there under `aof-load-truncated yes`;
//! - [`End::BadFormat`]: bytes that are no command (a file that is not an
//!   AOF, or damage in the middle): refused whatever the setting;
//! - [`End::Unknown`]: a command this server does not have (Redis refuses
//!   to load it too).

/// How a scan ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Complete,
    /// `multi`: the cut is an unfinished transaction (Redis logs
    /// "Revert incomplete MULTI/EXEC transaction").
    Truncated {
        valid_up_to: usize,
        multi: bool,
    },
    BadFormat {
        at: usize,
    },
    Unknown {
        name: String,
    },
}

/// The commands of a file, re-encoded as clean RESP (annotations left
/// out), and how the file ended.
#[derive(Debug)]
pub struct Scanned {
    /// The whole commands, in order, as RESP arrays.
    pub resp: Vec<u8>,
    pub commands: u64,
    pub end: End,
}

/// Reads the commands of `file` from `start` (after an RDB preamble, or
/// 0). `known` says whether a command name exists.
pub fn scan(file: &[u8], start: usize, known: impl Fn(&[u8]) -> bool) -> Scanned {
    let mut out = Scanned {
        resp: Vec::new(),
        commands: 0,
        end: End::Complete,
    };
    let mut pos = start;
    // The clean output and the count up to the last whole command outside
    // a transaction, to cut back to when the file ends inside MULTI.
    let mut in_multi: Option<(usize, usize, u64)> = None;
    let mut argv: Vec<&[u8]> = Vec::new();
    loop {
        if pos >= file.len() {
            if let Some((file_at, resp_at, count)) = in_multi {
                out.resp.truncate(resp_at);
                out.commands = count;
                out.end = End::Truncated {
                    valid_up_to: file_at,
                    multi: true,
                };
            }
            return out;
        }
        let command_at = pos;
        match read_command(file, &mut pos, &mut argv) {
            Read::Command => {}
            Read::Annotation => continue,
            Read::Short => {
                let valid_up_to = in_multi.map_or(command_at, |(at, _, _)| at);
                if let Some((_, resp_at, count)) = in_multi {
                    out.resp.truncate(resp_at);
                    out.commands = count;
                }
                out.end = End::Truncated {
                    valid_up_to,
                    multi: false,
                };
                return out;
            }
            Read::Bad => {
                out.end = End::BadFormat { at: command_at };
                return out;
            }
        }
        let name = argv[0];
        if !known(name) {
            out.end = End::Unknown {
                name: String::from_utf8_lossy(name).into_owned(),
            };
            return out;
        }
        if name.eq_ignore_ascii_case(b"multi") {
            in_multi = Some((command_at, out.resp.len(), out.commands));
        } else if name.eq_ignore_ascii_case(b"exec") {
            in_multi = None;
        }
        put_command(&mut out.resp, &argv);
        out.commands += 1;
    }
}

/// The commands of clean RESP (what [`scan`] returns), each as its
/// arguments.
pub fn split(resp: &[u8]) -> Vec<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut pos = 0;
    let mut argv = Vec::new();
    while pos < resp.len() {
        match read_command(resp, &mut pos, &mut argv) {
            Read::Command => out.push(std::mem::take(&mut argv)),
            Read::Annotation => {}
            Read::Short | Read::Bad => break,
        }
    }
    out
}

enum Read {
    Command,
    Annotation,
    /// The bytes end inside the command.
    Short,
    Bad,
}

/// One line from `pos` without its `\r\n` or `\n`; None when no newline
/// ends it (the file stops inside the line).
fn line<'a>(file: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let rest = &file[*pos..];
    let end = rest.iter().position(|&b| b == b'\n')?;
    *pos += end + 1;
    let text = &rest[..end];
    Some(text.strip_suffix(b"\r").unwrap_or(text))
}

/// A decimal number as `atoi`/`strtol` take it: optional sign, digits,
/// anything after ignored; saturating.
fn number(text: &[u8]) -> i64 {
    let (neg, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let n = digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0i64, |n, &d| {
            n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
        });
    if neg {
        -n
    } else {
        n
    }
}

fn read_command<'a>(file: &'a [u8], pos: &mut usize, argv: &mut Vec<&'a [u8]>) -> Read {
    argv.clear();
    match file[*pos] {
        b'#' => {
            return match line(file, pos) {
                Some(_) => Read::Annotation,
                // An annotation cut short is the end of what was written.
                None => Read::Short,
            };
        }
        b'*' => {}
        _ => return Read::Bad,
    }
    let Some(head) = line(file, pos) else {
        return Read::Short;
    };
    let argc = number(&head[1..]);
    if argc < 1 {
        return Read::Bad;
    }
    for _ in 0..argc {
        if *pos >= file.len() {
            return Read::Short;
        }
        if file[*pos] != b'$' {
            return Read::Bad;
        }
        let Some(head) = line(file, pos) else {
            return Read::Short;
        };
        let len = number(&head[1..]);
        if len < 0 {
            return Read::Bad;
        }
        let len = len as usize;
        let Some(end) = pos.checked_add(len).filter(|&e| e <= file.len()) else {
            return Read::Short;
        };
        argv.push(&file[*pos..end]);
        // The two bytes after the string (Redis reads them unchecked).
        if end + 2 > file.len() {
            return Read::Short;
        }
        *pos = end + 2;
    }
    Read::Command
}

/// Appends `argv` as a RESP array of bulk strings.
fn put_command(out: &mut Vec<u8>, argv: &[&[u8]]) {
    out.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
    for arg in argv {
        out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(_: &[u8]) -> bool {
        true
    }

    /// An incr file redis-server 7.0.15 wrote with `aof-timestamp-enabled yes`.
    const REDIS: &[u8] = b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nset\r\n$1\r\nb\r\n$1\r\n2\r\n#TS:1796195679\r\n*3\r\n$3\r\nset\r\n$1\r\nc\r\n$1\r\n3\r\n";

    #[test]
    fn redis_servers_file_reads_whole_without_its_annotations() {
        let s = scan(REDIS, 0, any);
        assert_eq!(s.end, End::Complete);
        assert_eq!(s.commands, 3);
        let plain: Vec<u8> = String::from_utf8_lossy(REDIS)
            .replace("#TS:1796195679\r\n", "")
            .into_bytes();
        assert_eq!(s.resp, plain);
    }

    #[test]
    fn a_torn_last_command_is_cut_where_the_last_whole_one_ends() {
        let whole = REDIS.len();
        let last = whole - b"*3\r\n$3\r\nset\r\n$1\r\nc\r\n$1\r\n3\r\n".len();
        for cut in last + 1..whole {
            let s = scan(&REDIS[..cut], 0, any);
            assert_eq!(
                s.end,
                End::Truncated {
                    valid_up_to: last,
                    multi: false
                },
                "cut at {cut}"
            );
            assert_eq!(s.commands, 2);
        }
        let s = scan(b"*3\r\n$3\r\nset\r\n$999999999999\r\nab", 0, any);
        assert!(matches!(s.end, End::Truncated { valid_up_to: 0, .. }));
    }

    #[test]
    fn an_unfinished_transaction_is_cut_before_its_multi() {
        let file = b"*1\r\n$4\r\nPING\r\n*1\r\n$5\r\nMULTI\r\n*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n";
        let s = scan(file, 0, any);
        assert_eq!(
            s.end,
            End::Truncated {
                valid_up_to: 14,
                multi: true
            }
        );
        assert_eq!(s.commands, 1);
        assert_eq!(s.resp, b"*1\r\n$4\r\nPING\r\n");
        let closed = [&file[..], b"*1\r\n$4\r\nEXEC\r\n"].concat();
        assert_eq!(scan(&closed, 0, any).end, End::Complete);
        let torn = [&file[..], b"*1\r\n$4\r\nEX"].concat();
        assert!(matches!(
            scan(&torn, 0, any).end,
            End::Truncated {
                valid_up_to: 14,
                ..
            }
        ));
    }

    #[test]
    fn clean_resp_splits_into_commands() {
        let s = scan(REDIS, 0, any);
        let commands = split(&s.resp);
        assert_eq!(commands.len(), 3);
        assert_eq!(commands[1], [&b"set"[..], b"b", b"2"]);
    }

    #[test]
    fn garbage_and_unknown_commands_are_refused() {
        assert_eq!(scan(b"hello\r\n", 0, any).end, End::BadFormat { at: 0 });
        assert_eq!(scan(b"*0\r\n", 0, any).end, End::BadFormat { at: 0 });
        assert_eq!(scan(b"*1\r\n+x\r\n", 0, any).end, End::BadFormat { at: 0 });
        assert_eq!(
            scan(b"*1\r\n$4\r\nPING\r\nxx", 0, any).end,
            End::BadFormat { at: 14 }
        );
        let s = scan(b"*1\r\n$4\r\nNOPE\r\n", 0, |n| n != b"NOPE");
        assert_eq!(
            s.end,
            End::Unknown {
                name: "NOPE".into()
            }
        );
        assert_eq!(scan(b"xxxx*1\r\n$4\r\nPING\r\n", 4, any).commands, 1);
        // Every prefix of every byte string terminates without a panic.
        for n in 0..REDIS.len() {
            let mut bytes = REDIS.to_vec();
            bytes[n] ^= 0x5a;
            let _ = scan(&bytes, 0, any);
        }
    }
}
