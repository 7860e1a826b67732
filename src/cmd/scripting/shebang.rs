//! The `#!lua flags=...` first line of a script (Redis 7.0): the engine
//! must be `lua`, and the only option is `flags`, a comma list of
//! `no-writes`, `allow-oom`, `allow-stale`, `no-cluster`,
//! `allow-cross-slot-keys`.

/// What a script's shebang declares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// The script had a shebang line at all.
    pub shebang: bool,
    pub no_writes: bool,
    /// `allow-oom`: runs (and writes) over `maxmemory`.
    pub allow_oom: bool,
}

const KNOWN: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// The flags of `body` and the source Lua compiles: the shebang line is
/// left out but its line break kept, so line numbers stay the script's.
/// Err: Redis's error text.
pub fn parse(body: &[u8]) -> Result<(ScriptFlags, &[u8]), String> {
    if !body.starts_with(b"#!") {
        return Ok((ScriptFlags::default(), body));
    }
    let end = body.iter().position(|&b| b == b'\n').unwrap_or(body.len());
    let line = String::from_utf8_lossy(&body[..end]);
    let mut words = line.split(' ').filter(|w| !w.is_empty());
    let engine = words.next().unwrap_or("#!");
    if engine != "#!lua" {
        return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = ScriptFlags {
        shebang: true,
        ..Default::default()
    };
    for word in words {
        let Some(list) = word.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {word}"));
        };
        for flag in list.split(',').filter(|f| !f.is_empty()) {
            if !KNOWN.contains(&flag) {
                return Err(format!("ERR Unexpected flag in script shebang: {flag}"));
            }
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" => flags.allow_oom = true,
                _ => {}
            }
        }
    }
    Ok((flags, &body[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_body() {
        let (f, rest) = parse(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(f.shebang && f.no_writes && f.allow_oom);
        assert_eq!(rest, b"\nreturn 1");
        assert_eq!(parse(b"return 1").unwrap().1, b"return 1");
    }

    #[test]
    fn errors_are_redis_texts() {
        assert_eq!(
            parse(b"#!foo\n").unwrap_err(),
            "ERR Unexpected engine in script shebang: #!foo"
        );
        assert_eq!(
            parse(b"#!lua flags=bad\n").unwrap_err(),
            "ERR Unexpected flag in script shebang: bad"
        );
        assert_eq!(
            parse(b"#!lua name=x\n").unwrap_err(),
            "ERR Unknown lua shebang option: name=x"
        );
    }
}
