//! The manifest of Redis 7.0's multi-part append-only file: which files
//! make up the log, in which order, and which are history.
//!
//! ```text
//!   file appendonly.aof.3.base.rdb seq 3 type b     the base (RDB or AOF)
//!   file appendonly.aof.2.incr.aof seq 2 type h     history: to delete
//!   file appendonly.aof.2.base.rdb seq 2 type h
//!   file appendonly.aof.3.incr.aof seq 3 type i     incr files, oldest first
//! ```
//!
//! One line per file, `key value` pairs (any order, any case, a name in
//! double quotes when it needs them, as Redis's `sdssplitargs` reads and
//! `sdscatrepr` writes), the base first, then history, then the incr files
//! in the order they are replayed. Base and incr files count their own
//! sequence numbers; incr numbers must rise. A manifest is hostile input
//! like any file: [`Manifest::parse`] refuses what Redis refuses, with its
//! texts, and accepts only bare file names (no path can lead out of the
//! directory).

/// What a file of the manifest is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Base,
    Incr,
    History,
}

impl Kind {
    fn letter(self) -> char {
        match self {
            Kind::Base => 'b',
            Kind::Incr => 'i',
            Kind::History => 'h',
        }
    }
}

/// One file of the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub seq: u64,
    pub kind: Kind,
}

/// The files of one append-only log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<Entry>,
    /// Files a rewrite replaced, not yet deleted.
    pub history: Vec<Entry>,
    /// Replayed after the base, in this order; the last is appended to.
    pub incrs: Vec<Entry>,
    /// The newest base and incr sequence numbers given out.
    pub base_seq: u64,
    pub incr_seq: u64,
}

/// Why a manifest was refused: Redis's text and the line it was met at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub what: &'static str,
    /// The 1-based line number and its text, when a line was at fault.
    pub line: Option<(usize, String)>,
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.line {
            Some((n, text)) => write!(f, "{} (line {n}: '{text}')", self.what),
            None => f.write_str(self.what),
        }
    }
}

/// Redis's `MANIFEST_MAX_LINE`: longer lines are refused.
const MAX_LINE: usize = 1024;

impl Manifest {
    /// Reads a manifest as Redis 7.0 does.
    pub fn parse(text: &[u8]) -> Result<Manifest, ManifestError> {
        let mut m = Manifest::default();
        if text.is_empty() {
            return Err(ManifestError {
                what: "Found an empty AOF manifest",
                line: None,
            });
        }
        let mut rest = text;
        let mut number = 0;
        while !rest.is_empty() {
            number += 1;
            let (raw, after, complete) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..i], &rest[i + 1..], true),
                None => (rest, &rest[rest.len()..], false),
            };
            rest = after;
            if raw.first() == Some(&b'#') {
                continue;
            }
            let shown = String::from_utf8_lossy(raw).trim().to_string();
            let fail = |what| ManifestError {
                what,
                line: Some((number, shown.clone())),
            };
            if !complete || raw.len() + 1 > MAX_LINE {
                return Err(fail("The AOF manifest file contains too long line"));
            }
            let entry = parse_line(raw).map_err(fail)?;
            match entry.kind {
                Kind::Base => {
                    if m.base.is_some() {
                        return Err(fail("Found duplicate base file information"));
                    }
                    m.base_seq = entry.seq;
                    m.base = Some(entry);
                }
                Kind::History => m.history.push(entry),
                Kind::Incr => {
                    if entry.seq <= m.incr_seq {
                        return Err(fail("Found a non-monotonic sequence number"));
                    }
                    m.incr_seq = entry.seq;
                    m.incrs.push(entry);
                }
            }
        }
        Ok(m)
    }

    /// The manifest as Redis writes it: base, history, incr files.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        let all = self.base.iter().chain(&self.history).chain(&self.incrs);
        for e in all {
            out.push_str(&format!(
                "file {} seq {} type {}\n",
                repr(&e.name),
                e.seq,
                e.kind.letter()
            ));
        }
        out
    }

    /// The files to replay, in order: the base, then the incr files.
    pub fn to_load(&self) -> impl Iterator<Item = &Entry> {
        self.base.iter().chain(&self.incrs)
    }

    /// Whether the manifest names no file to load.
    pub fn is_empty(&self) -> bool {
        self.base.is_none() && self.incrs.is_empty()
    }

    /// A new base named after `prefix` (`appendfilename`); the old one
    /// becomes history. `rdb`: the base is an RDB file (`.rdb`), else
    /// commands (`.aof`).
    pub fn new_base(&mut self, prefix: &str, rdb: bool) -> String {
        if let Some(mut old) = self.base.take() {
            old.kind = Kind::History;
            self.history.insert(0, old);
        }
        self.base_seq += 1;
        let suffix = if rdb { "rdb" } else { "aof" };
        let name = format!("{prefix}.{}.base.{suffix}", self.base_seq);
        self.base = Some(Entry {
            name: name.clone(),
            seq: self.base_seq,
            kind: Kind::Base,
        });
        name
    }

    /// A new incr file, appended to from now on.
    pub fn new_incr(&mut self, prefix: &str) -> String {
        self.incr_seq += 1;
        let name = format!("{prefix}.{}.incr.aof", self.incr_seq);
        self.incrs.push(Entry {
            name: name.clone(),
            seq: self.incr_seq,
            kind: Kind::Incr,
        });
        name
    }

    /// The incr file appended to: the last one, made if there is none.
    pub fn last_incr(&mut self, prefix: &str) -> String {
        match self.incrs.last() {
            Some(e) => e.name.clone(),
            None => self.new_incr(prefix),
        }
    }

    /// A rewrite finished: every incr file before `first_kept` (the one
    /// opened at the rewrite's instant) is history now.
    pub fn retire_incrs_before(&mut self, first_kept: &str) {
        let Some(at) = self.incrs.iter().position(|e| e.name == first_kept) else {
            return;
        };
        for mut old in self.incrs.drain(..at) {
            old.kind = Kind::History;
            self.history.insert(0, old);
        }
    }

    /// Forgets the history files (once deleted).
    pub fn take_history(&mut self) -> Vec<Entry> {
        std::mem::take(&mut self.history)
    }
}

/// One line's `file`, `seq` and `type`.
fn parse_line(raw: &[u8]) -> Result<Entry, &'static str> {
    const INVALID: &str = "Invalid AOF manifest file format";
    let line = trim(raw);
    if line.is_empty() {
        return Err(INVALID);
    }
    let args = split_args(line).ok_or(INVALID)?;
    if args.len() < 6 || !args.len().is_multiple_of(2) {
        return Err(INVALID);
    }
    let (mut name, mut seq, mut kind) = (None, 0u64, None);
    for pair in args.chunks_exact(2) {
        let value = &pair[1];
        if pair[0].eq_ignore_ascii_case(b"file") {
            if value.contains(&b'/') || value.contains(&b'\\') {
                return Err("File can't be a path, just a filename");
            }
            name = Some(String::from_utf8_lossy(value).into_owned());
        } else if pair[0].eq_ignore_ascii_case(b"seq") {
            seq = leading_number(value);
        } else if pair[0].eq_ignore_ascii_case(b"type") {
            kind = value.first().copied();
        }
    }
    let (Some(name), Some(kind)) = (name, kind) else {
        return Err(INVALID);
    };
    if seq == 0 || name.is_empty() {
        return Err(INVALID);
    }
    let kind = match kind {
        b'b' => Kind::Base,
        b'i' => Kind::Incr,
        b'h' => Kind::History,
        _ => return Err("Unknown AOF file type"),
    };
    Ok(Entry { name, seq, kind })
}

fn trim(raw: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n');
    let start = raw.iter().position(|b| !ws(b)).unwrap_or(raw.len());
    let end = raw.iter().rposition(|b| !ws(b)).map_or(start, |e| e + 1);
    &raw[start..end]
}

/// `atoll`'s reading: the digits at the start (0 when none), saturating.
fn leading_number(text: &[u8]) -> u64 {
    text.iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0u64, |n, &d| {
            n.saturating_mul(10).saturating_add(u64::from(d - b'0'))
        })
}

/// Words separated by spaces; a word may be in double quotes (with `\n`,
/// `\t`, `\\`, `\"` and `\xHH` escapes) or single quotes (`\'` only), as
/// Redis's `sdssplitargs`. None for an unbalanced quote, or a closing quote
/// not followed by a space.
fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= line.len() {
            break;
        }
        let mut word = Vec::new();
        match line[i] {
            b'"' => {
                i += 1;
                loop {
                    let b = *line.get(i)?;
                    i += 1;
                    match b {
                        b'"' => break,
                        b'\\' => {
                            let e = *line.get(i)?;
                            i += 1;
                            word.push(match e {
                                b'n' => b'\n',
                                b'r' => b'\r',
                                b't' => b'\t',
                                b'b' => 8,
                                b'a' => 7,
                                b'x' => {
                                    let hex = line.get(i..i + 2)?;
                                    let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16)
                                        .ok()?;
                                    i += 2;
                                    v
                                }
                                other => other,
                            });
                        }
                        other => word.push(other),
                    }
                }
                if line.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                    return None;
                }
            }
            b'\'' => {
                i += 1;
                loop {
                    let b = *line.get(i)?;
                    i += 1;
                    match b {
                        b'\'' => break,
                        b'\\' if line.get(i) == Some(&b'\'') => {
                            word.push(b'\'');
                            i += 1;
                        }
                        other => word.push(other),
                    }
                }
                if line.get(i).is_some_and(|b| !b.is_ascii_whitespace()) {
                    return None;
                }
            }
            _ => {
                while i < line.len() && !line[i].is_ascii_whitespace() {
                    word.push(line[i]);
                    i += 1;
                }
            }
        }
        out.push(word);
    }
    Some(out)
}

/// A name as Redis writes it in a manifest: bare, or quoted with escapes
/// when it holds spaces, quotes or unprintable bytes.
fn repr(name: &str) -> String {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\');
    if plain {
        return name.to_string();
    }
    let mut out = String::from("\"");
    for b in name.bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            b if b.is_ascii_graphic() || b == b' ' => out.push(b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What redis-server 7.0.15 wrote after two rewrites with
    /// `aof-disable-auto-gc yes`.
    const REDIS: &str = "file appendonly.aof.3.base.rdb seq 3 type b\n\
                         file appendonly.aof.2.incr.aof seq 2 type h\n\
                         file appendonly.aof.2.base.rdb seq 2 type h\n\
                         file appendonly.aof.3.incr.aof seq 3 type i\n";

    #[test]
    fn redis_servers_manifest_reads_and_writes_back_the_same() {
        let m = Manifest::parse(REDIS.as_bytes()).unwrap();
        assert_eq!(m.base.as_ref().unwrap().name, "appendonly.aof.3.base.rdb");
        assert_eq!(m.history.len(), 2);
        assert_eq!(m.incrs.len(), 1);
        assert_eq!((m.base_seq, m.incr_seq), (3, 3));
        assert_eq!(m.to_text(), REDIS);
        let names: Vec<&str> = m.to_load().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["appendonly.aof.3.base.rdb", "appendonly.aof.3.incr.aof"]
        );
    }

    #[test]
    fn a_rewrite_makes_the_history_redis_makes() {
        let mut m = Manifest::parse(
            b"file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n",
        )
        .unwrap();
        let incr = m.new_incr("appendonly.aof");
        assert_eq!(incr, "appendonly.aof.3.incr.aof");
        let base = m.new_base("appendonly.aof", true);
        assert_eq!(base, "appendonly.aof.3.base.rdb");
        m.retire_incrs_before(&incr);
        assert_eq!(m.to_text(), REDIS);
        let gone: Vec<String> = m.take_history().into_iter().map(|e| e.name).collect();
        assert_eq!(
            gone,
            ["appendonly.aof.2.incr.aof", "appendonly.aof.2.base.rdb"]
        );
        let mut fresh = Manifest::default();
        assert_eq!(fresh.last_incr("x"), "x.1.incr.aof");
        assert_eq!(fresh.last_incr("x"), "x.1.incr.aof");
    }

    #[test]
    fn bad_manifests_are_refused_with_redis_texts() {
        let what = |text: &[u8]| Manifest::parse(text).unwrap_err().what;
        assert_eq!(what(b""), "Found an empty AOF manifest");
        assert_eq!(what(b"\n"), "Invalid AOF manifest file format");
        assert_eq!(what(b"file a seq 1\n"), "Invalid AOF manifest file format");
        assert_eq!(
            what(b"file a seq x type b\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(what(b"file a seq 1 type z\n"), "Unknown AOF file type");
        assert_eq!(
            what(b"file ../x seq 1 type b\n"),
            "File can't be a path, just a filename"
        );
        assert_eq!(
            what(b"file a seq 1 type b\nfile b seq 2 type b\n"),
            "Found duplicate base file information"
        );
        assert_eq!(
            what(b"file a seq 2 type i\nfile b seq 2 type i\n"),
            "Found a non-monotonic sequence number"
        );
        assert_eq!(
            what(b"file a seq 1 type b"),
            "The AOF manifest file contains too long line"
        );
        let long = format!("file {} seq 1 type b\n", "a".repeat(1100));
        assert_eq!(
            what(long.as_bytes()),
            "The AOF manifest file contains too long line"
        );
        assert_eq!(
            what(b"file \"a seq 1 type b\n"),
            "Invalid AOF manifest file format"
        );
        assert_eq!(
            what(&[0xff, 0xfe, b'\n']),
            "Invalid AOF manifest file format"
        );
        let err = Manifest::parse(b"# comment\nfile a seq 1 type q\n").unwrap_err();
        assert_eq!(err.line, Some((2, "file a seq 1 type q".into())));
    }

    #[test]
    fn names_that_need_quotes_are_quoted_both_ways() {
        let mut m = Manifest::default();
        m.new_base("my file\"x", false);
        let text = m.to_text();
        assert_eq!(text, "file \"my file\\\"x.1.base.aof\" seq 1 type b\n");
        assert_eq!(Manifest::parse(text.as_bytes()).unwrap(), m);
        let m = Manifest::parse(b"SEQ 4 TYPE i FILE 'x y'\n").unwrap();
        assert_eq!(m.incrs[0].name, "x y");
        assert_eq!(m.incrs[0].seq, 4);
    }
}
