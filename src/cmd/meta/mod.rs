//! Command metadata as Redis declares it: for every command of ember's
//! table, its arity, flags, ACL categories, legacy key range, key specs,
//! tips and docs (summary, since, group, complexity, history, the argument
//! tree), and the subcommands ember implements of a container (CONFIG GET,
//! OBJECT ENCODING, ...). These are facts about Redis's interface, taken
//! from redis-server 7.0.15 itself (and, for the hash-field TTL commands
//! that 7.0 lacks, from Redis 7.4's declarations) by
//! `scripts/gen_command_meta.py`; COMMAND INFO and COMMAND DOCS answer from
//! them as redis-server 7.0.15 does, and `tests/command_meta.rs` compares
//! the two servers' replies for every command.
//!
//! The command table (`cmd::table`) joins its rows to this data by name at
//! compile time: a row without metadata, or whose declared subcommands
//! differ from the data's, does not build. Arity, flags and the key range
//! that dispatch reads are copied into the row then, so the request path
//! reads them from the row as before.
//!
//! # Layout
//! - `bits`: the named bitsets (command flags, ACL categories, key-spec,
//!   argument and doc flags), each declared once in Redis's print order.
//! - `build`: the `const` constructors the generated data is written with.
//! - `generated`: the data, one row per command (generated, not edited).
//! - `keys`: finds a command's keys from its key specs (COMMAND GETKEYS).
//! - `reply`: a command's COMMAND INFO and COMMAND DOCS entries.

mod bits;
mod build;
#[rustfmt::skip]
mod generated;
pub mod keys;
pub mod reply;

pub use bits::{AclCategories, ArgFlags, CommandFlags, DocFlags, KeySpecFlags};
pub use generated::META;

/// One command (or subcommand) as Redis declares it.
#[derive(Debug)]
pub struct CommandMeta {
    /// Redis's full name: `get`, or `config|get` for a subcommand.
    pub name: &'static str,
    /// N exact, -N at least N (the name counts).
    pub arity: i32,
    pub flags: CommandFlags,
    pub acl: AclCategories,
    /// The legacy key range COMMAND INFO shows: first key, last key
    /// (negative counts from the end), step; 0, 0, 0 when the key specs
    /// cannot be said as one range.
    pub first_key: i32,
    pub last_key: i32,
    pub step: i32,
    /// Hints for clients and proxies (`nondeterministic_output`,
    /// `request_policy:all_shards`, ...), in Redis's order.
    pub tips: &'static [&'static str],
    pub key_specs: &'static [KeySpec],
    pub docs: Docs,
    /// The subcommands ember implements, for a container; empty otherwise.
    pub subcommands: &'static [CommandMeta],
}

impl CommandMeta {
    /// The name after the container's (`get` of `config|get`).
    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('|').next().unwrap_or(self.name)
    }

    /// The subcommand named `name` (any case) of this container.
    pub fn subcommand(&'static self, name: &[u8]) -> Option<&'static CommandMeta> {
        self.subcommands
            .iter()
            .find(|sub| sub.short_name().as_bytes().eq_ignore_ascii_case(name))
    }

    /// Whether any key spec finds real keys (COMMAND GETKEYS refuses a
    /// command without).
    pub fn has_keys(&self) -> bool {
        self.key_specs
            .iter()
            .any(|spec| !spec.flags.contains(KeySpecFlags::NOT_KEY))
    }
}

/// COMMAND DOCS's fields of a command.
#[derive(Debug)]
pub struct Docs {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    pub complexity: &'static str,
    pub doc_flags: DocFlags,
    pub deprecated_since: Option<&'static str>,
    pub replaced_by: Option<&'static str>,
    /// (version, what changed), oldest first.
    pub history: &'static [(&'static str, &'static str)],
    pub args: &'static [Arg],
}

/// One argument of a command's syntax tree.
#[derive(Debug)]
pub struct Arg {
    pub name: &'static str,
    pub kind: ArgType,
    /// The key spec that finds this argument, for keys (and key patterns).
    pub key_spec_index: Option<u8>,
    /// The word that introduces the argument (`EX` of `EX seconds`).
    pub token: Option<&'static str>,
    pub since: Option<&'static str>,
    pub deprecated_since: Option<&'static str>,
    pub flags: ArgFlags,
    /// The alternatives of a `oneof`, the parts of a `block`.
    pub args: &'static [Arg],
}

/// An argument's type, as COMMAND DOCS names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgType {
    String,
    Integer,
    Double,
    Key,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

impl ArgType {
    pub fn name(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Double => "double",
            ArgType::Key => "key",
            ArgType::Pattern => "pattern",
            ArgType::UnixTime => "unix-time",
            ArgType::PureToken => "pure-token",
            ArgType::OneOf => "oneof",
            ArgType::Block => "block",
        }
    }

    /// Whether the argument is made of others (`arguments` in DOCS).
    pub fn has_children(self) -> bool {
        matches!(self, ArgType::OneOf | ArgType::Block)
    }
}

/// Where some of a command's keys are: a start found by `begin`, then the
/// keys from there found by `find` (Redis 7's key specs).
#[derive(Debug)]
pub struct KeySpec {
    /// Why the flags are what they are, where Redis says.
    pub notes: Option<&'static str>,
    pub flags: KeySpecFlags,
    pub begin: BeginSearch,
    pub find: FindKeys,
}

/// How a key spec finds where its keys start.
#[derive(Debug, Clone, Copy)]
pub enum BeginSearch {
    /// At this argument (the name is argument 0).
    Index(i32),
    /// After this word, searched from `startfrom` (negative: from the end,
    /// backwards).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
    /// Not said by the spec (an `incomplete` one).
    Unknown,
}

/// How a key spec finds its keys from where they start.
#[derive(Debug, Clone, Copy)]
pub enum FindKeys {
    /// Keys from the start to `lastkey` (relative to the start; negative
    /// counts from the end), every `keystep`; with `limit` N > 1 only the
    /// first 1/N of the rest.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// A count at `keynumidx` (relative to the start), then that many keys
    /// from `firstkey` (relative to the start), every `keystep`.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
    Unknown,
}

/// The metadata of the command named `name` (lowercase). Evaluated at
/// compile time by the command table's rows: a name without metadata
/// stops the build.
pub const fn find(name: &str) -> &'static CommandMeta {
    let all: &'static [CommandMeta] = &META;
    let mut i = 0;
    while i < all.len() {
        if same(all[i].name, name) {
            return &all[i];
        }
        i += 1;
    }
    panic!("a command of the table has no metadata: run scripts/gen_command_meta.py")
}

/// `a == b` for `&str`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `meta`'s subcommands are `declared` (short names, in order):
/// the table's rows check this at compile time.
pub const fn subcommands_are(meta: &CommandMeta, container: &str, declared: &[&str]) -> bool {
    if meta.subcommands.len() != declared.len() {
        return false;
    }
    let mut i = 0;
    while i < declared.len() {
        // The full name is `container|sub`.
        let full = meta.subcommands[i].name.as_bytes();
        let (c, s) = (container.as_bytes(), declared[i].as_bytes());
        if full.len() != c.len() + 1 + s.len() || full[c.len()] != b'|' {
            return false;
        }
        let mut j = 0;
        while j < c.len() {
            if full[j] != c[j] {
                return false;
            }
            j += 1;
        }
        let mut j = 0;
        while j < s.len() {
            if full[c.len() + 1 + j] != s[j] {
                return false;
            }
            j += 1;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subcommands_are_found_by_their_short_name() {
        let config = find("config");
        let get = config.subcommand(b"GET").unwrap();
        assert_eq!(get.name, "config|get");
        assert_eq!(get.short_name(), "get");
        assert!(config.subcommand(b"nosuch").is_none());
        assert!(find("get").subcommand(b"x").is_none());
        assert!(subcommands_are(
            config,
            "config",
            &["get", "help", "resetstat", "rewrite", "set"]
        ));
        assert!(!subcommands_are(
            config,
            "config",
            &["get", "help", "set", "resetstat"]
        ));
        assert!(!subcommands_are(
            config,
            "config",
            &["get", "help", "resetstat"]
        ));
        assert!(!subcommands_are(
            config,
            "conf",
            &["get", "help", "resetstat", "set"]
        ));
    }

    #[test]
    fn movable_keys_come_with_a_key_spec_that_counts_or_searches() {
        // What Redis derives: a command whose keys one range cannot say
        // is movablekeys and shows 0, 0, 0 or a partial range.
        for meta in META.iter().chain(META.iter().flat_map(|m| m.subcommands)) {
            let computed = meta.key_specs.iter().any(|s| {
                !matches!(s.begin, BeginSearch::Index(_))
                    || !matches!(s.find, FindKeys::Range { .. })
            });
            assert_eq!(
                computed,
                meta.flags.contains(CommandFlags::MOVABLEKEYS),
                "{}",
                meta.name
            );
            // Shard channels (SSUBSCRIBE, SPUBLISH) are specs flagged
            // not_key: a legacy range, but no keys.
            let only_channels = !meta.key_specs.is_empty()
                && meta
                    .key_specs
                    .iter()
                    .all(|s| s.flags.contains(KeySpecFlags::NOT_KEY));
            assert_eq!(
                meta.has_keys(),
                (meta.first_key != 0 || computed) && !only_channels,
                "{}",
                meta.name
            );
        }
    }

    #[test]
    fn names_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for meta in &META {
            assert!(seen.insert(meta.name), "{}", meta.name);
            for sub in meta.subcommands {
                assert!(seen.insert(sub.name), "{}", sub.name);
                let short = sub
                    .name
                    .strip_prefix(meta.name)
                    .and_then(|s| s.strip_prefix('|'));
                assert_eq!(short, Some(sub.short_name()), "{}", sub.name);
                assert!(sub.subcommands.is_empty());
            }
        }
    }
}
