//! Inline command splitting, a port of Redis's `sdssplitargs`.
//!
//! `sdssplitargs` works on a C string, so the line is cut at its first NUL
//! byte and every "look at the next byte" past the end sees 0; [`at`]
//! reproduces that so the quote rules (a closing quote must be followed by
//! a blank or the end) come out identical.

use bytes::Bytes;

#[inline]
fn at(line: &[u8], i: usize) -> u8 {
    line.get(i).copied().unwrap_or(0)
}

/// C `isspace` in the "C" locale: blanks skipped between arguments.
#[inline]
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

#[inline]
fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Splits an inline command line into arguments; `None` on unbalanced
/// quotes (or a closing quote followed by something other than a blank).
pub fn split_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let line = match line.iter().position(|&c| c == 0) {
        Some(nul) => &line[..nul],
        None => line,
    };
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Some(args);
        }
        let mut current = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            let c = at(line, p);
            if in_double {
                let hex = if c == b'\\' && at(line, p + 1) == b'x' {
                    hex_value(at(line, p + 2)).zip(hex_value(at(line, p + 3)))
                } else {
                    None
                };
                if let Some((hi, lo)) = hex {
                    current.push(hi * 16 + lo);
                    p += 3;
                } else if c == b'\\' && at(line, p + 1) != 0 {
                    p += 1;
                    current.push(match line[p] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 0x08,
                        b'a' => 0x07,
                        other => other,
                    });
                } else if c == b'"' {
                    let next = at(line, p + 1);
                    if next != 0 && !is_space(next) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else if in_single {
                if c == b'\\' && at(line, p + 1) == b'\'' {
                    p += 1;
                    current.push(b'\'');
                } else if c == b'\'' {
                    let next = at(line, p + 1);
                    if next != 0 && !is_space(next) {
                        return None;
                    }
                    p += 1;
                    break;
                } else if c == 0 {
                    return None;
                } else {
                    current.push(c);
                }
            } else {
                match c {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => {
                        if c != 0 {
                            p += 1;
                        }
                        break;
                    }
                    b'"' => in_double = true,
                    b'\'' => in_single = true,
                    _ => current.push(c),
                }
            }
            if c != 0 {
                p += 1;
            }
        }
        args.push(Bytes::from(current));
    }
}
