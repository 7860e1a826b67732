//! Finds a command's keys from its key specs, as COMMAND GETKEYS and
//! COMMAND GETKEYSANDFLAGS report them.
//!
//! Each key spec, in order, contributes keys:
//! 1. `begin_search` finds where they start: a fixed argument, or the
//!    argument after a keyword (searched forwards from `startfrom`, or
//!    backwards from the end when it is negative). A start past the
//!    arguments, or a keyword that is absent, contributes nothing.
//! 2. `find_keys` finds them from there: a range (to `lastkey`, every
//!    `keystep`), or a count argument followed by that many keys.
//! 3. A spec that does not fit the arguments (a range past the end, a count
//!    that is not a number of keys that are there) makes the whole
//!    extraction invalid.
//!
//! Redis reads a count strictly (as `string2ll`: no sign, spaces or leading
//! zeros). When that fails, it falls back to the command's own getkeys
//! function, which every `movablekeys` command has; those read the count
//! as C's `atoi` does (leading blanks, an optional sign, the digits up to
//! the first other byte, truncated to an `int`) and give the counted keys
//! first, then the destination, without flags. [`command_keys`] does the
//! same, so `COMMAND GETKEYS ZUNIONSTORE d 1a k` answers `k d` as Redis
//! does.
//!
//! A `variable_flags` spec's flags depend on the arguments; Redis's getkeys
//! function of the command says them (`variable_flags` below).
//!
//! Routing does not use this: each table row has its own key positions
//! (`CommandSpec::key_positions`), and a unit test holds the two to the
//! same keys.

use bytes::Bytes;

use super::{BeginSearch, CommandFlags, CommandMeta, FindKeys, KeySpecFlags};
use crate::util::num::parse_i64;

/// A key's position in the arguments and its spec's flags.
pub type FoundKey = (usize, KeySpecFlags);

/// The keys COMMAND GETKEYS reports for `argv` (name first; for a
/// subcommand, `meta` is the subcommand's). None when the arguments do not
/// fit the specs or name no key: Redis's "Invalid arguments specified for
/// command".
pub fn command_keys(meta: &CommandMeta, argv: &[Bytes]) -> Option<Vec<FoundKey>> {
    let mut keys = Vec::new();
    command_keys_into(meta, argv, &mut keys).then_some(keys)
}

/// [`command_keys`] into `keys` (emptied first), for the request path's
/// callers (the ACL check), which reuse one buffer rather than allocate a
/// list per command: false, `keys` empty, where `command_keys` is None.
pub fn command_keys_into(meta: &CommandMeta, argv: &[Bytes], keys: &mut Vec<FoundKey>) -> bool {
    keys.clear();
    // SORT's specs are incomplete (BY and GET name keys from the data), so
    // Redis asks its getkeys function: the source, and the last STORE's
    // destination (SORT_RO has none).
    if matches!(meta.name, "sort" | "sort_ro") {
        let found = match meta.name {
            "sort" => crate::cmd::sort::keys(argv),
            _ => crate::cmd::sort::ro_keys(argv),
        };
        let flags = [
            KeySpecFlags::RO | KeySpecFlags::ACCESS,
            KeySpecFlags::OW | KeySpecFlags::UPDATE,
        ];
        keys.extend(found.into_iter().zip(flags));
        return true;
    }
    // MIGRATE's specs are incomplete too (the key, or the KEYS option's
    // list): Redis asks its getkeys function, whose keys are all RW,
    // access and delete.
    if meta.name == "migrate" {
        let flags = KeySpecFlags::RW | KeySpecFlags::ACCESS | KeySpecFlags::DELETE;
        keys.extend(
            crate::cmd::migrate::keys(argv)
                .into_iter()
                .map(|k| (k, flags)),
        );
        return !keys.is_empty();
    }
    // Most commands (GET, SET, HSET, INCR, ...) have one spec: the key at
    // a fixed place. What the general path below would find, found
    // directly.
    if let [spec] = meta.key_specs {
        let single = matches!(
            spec.find,
            FindKeys::Range {
                lastkey: 0,
                keystep: 1,
                limit: 0
            }
        );
        if let (true, BeginSearch::Index(pos)) = (single, spec.begin) {
            let pos = usize::try_from(pos).unwrap_or(usize::MAX);
            let fixed = !spec.flags.contains(KeySpecFlags::NOT_KEY) && pos > 0;
            if fixed && pos < argv.len() {
                let flags = if spec.flags.contains(KeySpecFlags::VARIABLE_FLAGS) {
                    variable_flags(meta, argv, spec.flags)
                } else {
                    spec.flags
                };
                keys.push((pos, flags));
                return true;
            }
        }
    }
    if by_specs(meta, argv, strict_count, keys) && !keys.is_empty() {
        return true;
    }
    keys.clear();
    if meta.flags.contains(CommandFlags::MOVABLEKEYS) {
        if let Some(found) = legacy(meta, argv) {
            keys.extend(found);
            return true;
        }
    }
    false
}

/// The keys as the specs find them, each with its spec's flags, pushed on
/// `keys`; false when a spec does not fit the arguments.
fn by_specs(
    meta: &CommandMeta,
    argv: &[Bytes],
    count: fn(&[u8]) -> Option<i64>,
    keys: &mut Vec<FoundKey>,
) -> bool {
    for spec in meta.key_specs {
        if spec.flags.contains(KeySpecFlags::NOT_KEY) {
            continue;
        }
        let start = match begin(spec.begin, argv) {
            None => return false,
            Some(None) => continue,
            Some(Some(start)) => start,
        };
        let flags = if spec.flags.contains(KeySpecFlags::VARIABLE_FLAGS) {
            variable_flags(meta, argv, spec.flags)
        } else {
            spec.flags
        };
        let Some(positions) = find(spec.find, start, argv, count) else {
            return false;
        };
        keys.extend(positions.map(|position| (position, flags)));
    }
    true
}

/// The flags of the keys of a `variable_flags` spec, which Redis works out
/// from the arguments with the command's own getkeys function: SET's key
/// is read (RW access) only with GET, else overwritten; BITFIELD's is only
/// read while every operation is a GET (OVERFLOW aside), as Redis's
/// `bitfieldGetKeys` decides.
fn variable_flags(meta: &CommandMeta, argv: &[Bytes], declared: KeySpecFlags) -> KeySpecFlags {
    match meta.name {
        "bitfield" if bitfield_reads_only(argv) => KeySpecFlags::RO | KeySpecFlags::ACCESS,
        "bitfield" => KeySpecFlags::RW | KeySpecFlags::ACCESS | KeySpecFlags::UPDATE,
        "set" if argv.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get")) => {
            KeySpecFlags::RW | KeySpecFlags::ACCESS | KeySpecFlags::UPDATE
        }
        "set" => KeySpecFlags::OW | KeySpecFlags::UPDATE,
        _ => declared,
    }
}

/// Whether BITFIELD's operations only read: GETs and OVERFLOWs, each with
/// its arguments (anything else, a syntax error included, may write).
fn bitfield_reads_only(argv: &[Bytes]) -> bool {
    let mut i = 2;
    while i < argv.len() {
        let left = argv.len() - i - 1;
        let arg = &argv[i];
        if arg.eq_ignore_ascii_case(b"get") && left >= 2 {
            i += 3;
        } else if arg.eq_ignore_ascii_case(b"overflow") && left >= 1 {
            i += 2;
        } else {
            return false;
        }
    }
    true
}

/// The fallback of Redis's per-command getkeys functions: counts read as
/// `atoi` reads them, the counted keys first, no flags.
fn legacy(meta: &CommandMeta, argv: &[Bytes]) -> Option<Vec<FoundKey>> {
    let is_counted = |spec: &&super::KeySpec| matches!(spec.find, FindKeys::Keynum { .. });
    let (counted, fixed): (Vec<_>, Vec<_>) = meta.key_specs.iter().partition(is_counted);
    let mut keys = Vec::new();
    for spec in counted.into_iter().chain(fixed) {
        let Some(start) = begin(spec.begin, argv)? else {
            continue;
        };
        let found = find(spec.find, start, argv, |b| Some(atoi(b).into()))?;
        keys.extend(found.map(|p| (p, KeySpecFlags::NONE)));
    }
    (!keys.is_empty()).then_some(keys)
}

/// Where a spec's keys start: Some(None) when the spec contributes nothing
/// here, None when it cannot be read.
fn begin(begin: BeginSearch, argv: &[Bytes]) -> Option<Option<usize>> {
    let argc = argv.len();
    Some(match begin {
        BeginSearch::Index(pos) => usize::try_from(pos).ok().filter(|&p| p > 0 && p < argc),
        BeginSearch::Keyword { keyword, startfrom } => {
            let matches = |i: &usize| argv[*i].eq_ignore_ascii_case(keyword.as_bytes());
            let found = if startfrom >= 0 {
                (startfrom.max(1) as usize..argc).find(matches)
            } else {
                let from = argc as i64 + i64::from(startfrom);
                (1..=from.max(0) as usize)
                    .rev()
                    .filter(|&i| i < argc)
                    .find(matches)
            };
            found.map(|i| i + 1).filter(|&p| p < argc)
        }
        BeginSearch::Unknown => return None,
    })
}

/// The positions a spec's `find_keys` gives from `start`; None when they
/// do not fit the arguments.
fn find(
    find: FindKeys,
    start: usize,
    argv: &[Bytes],
    count: fn(&[u8]) -> Option<i64>,
) -> Option<std::iter::StepBy<std::ops::RangeInclusive<usize>>> {
    let (argc, start_i) = (argv.len() as i64, start as i64);
    let (first, last, step) = match find {
        FindKeys::Range {
            lastkey,
            keystep,
            limit,
        } => {
            let last = if lastkey >= 0 {
                start_i + i64::from(lastkey)
            } else if limit <= 1 {
                argc + i64::from(lastkey)
            } else {
                start_i + (argc - start_i) / i64::from(limit) + i64::from(lastkey)
            };
            (start_i, last, keystep)
        }
        FindKeys::Keynum {
            keynumidx,
            firstkey,
            keystep,
        } => {
            let at = usize::try_from(start_i + i64::from(keynumidx)).ok()?;
            let n = count(argv.get(at)?)?;
            if n < 1 {
                return None;
            }
            let first = start_i + i64::from(firstkey);
            let last = first.checked_add((n - 1).checked_mul(i64::from(keystep))?)?;
            (first, last, keystep)
        }
        FindKeys::Unknown => return None,
    };
    if last >= argc || last < first || first < 1 || step < 1 {
        return None;
    }
    Some((first as usize..=last as usize).step_by(step as usize))
}

fn strict_count(arg: &[u8]) -> Option<i64> {
    parse_i64(arg)
}

/// C's `atoi` as glibc has it: `strtol` (leading blanks, an optional sign,
/// digits up to the first other byte, clamped to the `long` range) cast to
/// `int`, which keeps the low 32 bits.
fn atoi(arg: &[u8]) -> i32 {
    let mut rest = arg;
    while let [b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r', tail @ ..] = rest {
        rest = tail;
    }
    let negative = rest.first() == Some(&b'-');
    if let [b'+' | b'-', tail @ ..] = rest {
        rest = tail;
    }
    let mut value: i64 = 0;
    for &b in rest.iter().take_while(|b| b.is_ascii_digit()) {
        let digit = i64::from(b - b'0');
        value = if negative {
            value.saturating_mul(10).saturating_sub(digit)
        } else {
            value.saturating_mul(10).saturating_add(digit)
        };
    }
    value as i32
}

#[cfg(test)]
mod tests {
    use super::super::build::{cmd, index, keynum, keyword, range, spec};
    use super::super::KeySpec;
    use super::*;

    fn argv(words: &[&'static str]) -> Vec<Bytes> {
        words
            .iter()
            .map(|w| Bytes::from_static(w.as_bytes()))
            .collect()
    }

    fn keys(meta: &CommandMeta, words: &[&'static str]) -> Option<Vec<usize>> {
        command_keys(meta, &argv(words)).map(|k| k.into_iter().map(|(p, _)| p).collect())
    }

    static STORE_SPECS: &[KeySpec] = &[
        spec("OW update", index(1), range(0, 1, 0)),
        spec("RO access", index(2), keynum(0, 1, 1)),
    ];

    #[test]
    fn ranges_and_counts() {
        const MSET: CommandMeta = cmd("mset", -3, "write denyoom", "write string slow", (1, -1, 2))
            .key_specs(&[spec("OW update", index(1), range(-1, 2, 0))]);
        let mset = MSET;
        assert_eq!(keys(&mset, &["mset", "a", "1", "b", "2"]), Some(vec![1, 3]));
        assert_eq!(keys(&mset, &["mset", "a", "1", "b"]), Some(vec![1, 3]));
        let store = cmd(
            "zunionstore",
            -4,
            "write denyoom movablekeys",
            "write sortedset slow",
            (1, 1, 1),
        )
        .key_specs(STORE_SPECS);
        let found = command_keys(
            &store,
            &argv(&["zunionstore", "d", "2", "a", "b", "weights"]),
        );
        assert_eq!(
            found,
            Some(vec![
                (1, KeySpecFlags::parse("OW update")),
                (3, KeySpecFlags::parse("RO access")),
                (4, KeySpecFlags::parse("RO access")),
            ])
        );
        // Counts that do not fit, strictly or as atoi reads them.
        for bad in ["0", "-1", "3", "x", "99999999999999999999"] {
            assert_eq!(
                keys(&store, &["zunionstore", "d", bad, "a", "b"]),
                None,
                "{bad}"
            );
        }
        // Not strict, but atoi reads 1: the legacy order and no flags.
        let found = command_keys(&store, &argv(&["zunionstore", "d", "1a", "a"]));
        assert_eq!(
            found,
            Some(vec![(3, KeySpecFlags::NONE), (1, KeySpecFlags::NONE)])
        );
        assert_eq!(
            keys(&store, &["zunionstore", "d", " +1", "a"]),
            Some(vec![3, 1])
        );
        // 2^32 + 1 truncates to 1, as the C cast does.
        assert_eq!(
            keys(&store, &["zunionstore", "d", "4294967297", "a"]),
            Some(vec![3, 1])
        );
    }

    #[test]
    fn keywords_are_searched_from_either_end() {
        const FORWARD: CommandMeta = cmd("x", -2, "readonly", "read", (0, 0, 0))
            .key_specs(&[spec("RO", keyword("STREAMS", 1), range(-1, 1, 2))]);
        let forward = FORWARD;
        assert_eq!(
            keys(&forward, &["x", "a", "streams", "k1", "k2", "1", "2"]),
            Some(vec![3, 4])
        );
        assert_eq!(
            keys(&forward, &["x", "a", "b"]),
            None,
            "no keyword: no keys"
        );
        const BACKWARD: CommandMeta = cmd("y", -2, "write", "write", (0, 0, 0)).key_specs(&[spec(
            "OW",
            keyword("STORE", -2),
            range(0, 1, 0),
        )]);
        let backward = BACKWARD;
        assert_eq!(
            keys(&backward, &["y", "store", "a", "STORE", "k"]),
            Some(vec![4])
        );
    }

    /// The single-key shortcut finds what the specs do, for every command
    /// of the table and argument counts around its arity (with GET among
    /// the arguments, for SET's variable flags).
    #[test]
    fn the_single_key_shortcut_agrees_with_the_specs() {
        let metas = crate::cmd::table::COMMANDS
            .iter()
            .flat_map(|c| std::iter::once(c.meta).chain(c.meta.subcommands.iter()));
        for meta in metas {
            for n in 1..6 {
                let mut words = vec![meta.name];
                words.extend(std::iter::repeat_n("get", n));
                let argv = argv(&words);
                let mut fast = Vec::new();
                let found = command_keys_into(meta, &argv, &mut fast);
                let mut general = Vec::new();
                let general =
                    if by_specs(meta, &argv, strict_count, &mut general) && !general.is_empty() {
                        Some(general)
                    } else if meta.flags.contains(CommandFlags::MOVABLEKEYS) {
                        legacy(meta, &argv)
                    } else {
                        None
                    };
                if !matches!(meta.name, "sort" | "sort_ro" | "migrate") {
                    assert_eq!(found.then_some(fast), general, "{} with {n}", meta.name);
                }
            }
        }
    }

    #[test]
    fn atoi_reads_like_c() {
        assert_eq!(atoi(b"12"), 12);
        assert_eq!(atoi(b"  -3x"), -3);
        assert_eq!(atoi(b"+7"), 7);
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b""), 0);
        assert_eq!(atoi(b"4294967297"), 1);
        assert_eq!(atoi(b"99999999999999999999"), i64::MAX as i32);
    }
}
