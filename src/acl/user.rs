//! A user as Redis 7.0's ACL keeps it: flags, password hashes, a root
//! selector and further selectors. A selector says which commands (a
//! bitset over command ids, plus allowed first arguments), which keys (by
//! glob, with read/write permission) and which Pub/Sub channels a command
//! may touch. The ids are the command layer's; this module only stores and
//! matches them.

use bytes::Bytes;

use crate::util::glob::glob_match;

/// Read permission of a key pattern (`%R~`).
pub const READ: u8 = 1;
/// Write permission of a key pattern (`%W~`).
pub const WRITE: u8 = 2;

/// A key pattern and the access it grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Bytes,
    /// [`READ`] | [`WRITE`].
    pub perms: u8,
    /// What the pattern is, worked out once (see [`Shape`]).
    shape: Shape,
}

/// A key pattern's form, so the check on every command of a restricted
/// user need not run the glob matcher for the patterns people write:
/// `~key:*` is a prefix test, `~config` a comparison. Anything else
/// (`?`, `[...]`, `\`, a `*` not at the end) is matched as a glob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// No special byte: the key is the pattern.
    Literal,
    /// Literal bytes then one `*`: the key starts with them. (Not the
    /// empty key, which no pattern but the empty one matches in Redis.)
    Prefix,
    Glob,
}

impl Shape {
    fn of(pattern: &[u8]) -> Shape {
        let special = |b: &u8| matches!(b, b'*' | b'?' | b'[' | b'\\');
        match pattern.split_last() {
            _ if !pattern.iter().any(special) => Shape::Literal,
            Some((b'*', head)) if !head.iter().any(special) => Shape::Prefix,
            _ => Shape::Glob,
        }
    }
}

impl KeyPattern {
    pub fn new(pattern: Bytes, perms: u8) -> KeyPattern {
        let shape = Shape::of(&pattern);
        KeyPattern {
            pattern,
            perms,
            shape,
        }
    }

    /// Whether `key` matches, as `glob_match` (case-sensitive) says.
    pub fn matches(&self, key: &[u8]) -> bool {
        match self.shape {
            Shape::Literal => key == self.pattern.as_ref(),
            Shape::Prefix => {
                !key.is_empty() && key.starts_with(&self.pattern[..self.pattern.len() - 1])
            }
            Shape::Glob => glob_match(&self.pattern, key, false),
        }
    }

    /// As ACL LIST writes it: `~p`, `%R~p`, `%W~p`.
    pub fn describe(&self) -> String {
        let prefix = match self.perms {
            READ => "%R~",
            WRITE => "%W~",
            _ => "~",
        };
        format!("{prefix}{}", String::from_utf8_lossy(&self.pattern))
    }
}

/// What one selector allows.
#[derive(Clone, Debug, Default)]
pub struct Selector {
    /// `+@all` / `allcommands` was the last whole reset: every command,
    /// including those added later (ACL LIST starts with `+@all`).
    pub all_commands: bool,
    /// One bit per command id (subcommands have their own ids).
    pub commands: Vec<u64>,
    /// First arguments allowed of a command whose bit is clear
    /// (`+select|0`), by command id.
    pub first_args: Vec<(usize, Vec<String>)>,
    pub all_keys: bool,
    pub keys: Vec<KeyPattern>,
    pub all_channels: bool,
    pub channels: Vec<Bytes>,
}

impl Selector {
    pub fn allows_id(&self, id: usize) -> bool {
        self.commands
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    pub fn set_id(&mut self, id: usize, on: bool) {
        if self.commands.len() <= id / 64 {
            self.commands.resize(id / 64 + 1, 0);
        }
        if on {
            self.commands[id / 64] |= 1 << (id % 64);
        } else {
            self.commands[id / 64] &= !(1 << (id % 64));
        }
    }

    /// Whether `arg` is an allowed first argument of command `id`.
    pub fn allows_first_arg(&self, id: usize, arg: &[u8]) -> bool {
        self.first_args
            .iter()
            .find(|(i, _)| *i == id)
            .is_some_and(|(_, args)| args.iter().any(|a| a.as_bytes().eq_ignore_ascii_case(arg)))
    }

    /// Whether `key` may be touched with the permissions `need` asks.
    pub fn key_allowed(&self, key: &[u8], need: u8) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .any(|p| p.perms & need == need && p.matches(key))
    }

    /// Whether `channel` (a pattern itself when `is_pattern`: PSUBSCRIBE
    /// may use only a pattern the user has literally) may be used.
    pub fn channel_allowed(&self, channel: &[u8], is_pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|p| {
                if is_pattern {
                    p.as_ref() == channel
                } else {
                    glob_match(p, channel, false)
                }
            })
    }

    /// ACL GETUSER's `keys`.
    pub fn describe_keys(&self) -> String {
        if self.all_keys {
            return "~*".into();
        }
        let parts: Vec<String> = self.keys.iter().map(KeyPattern::describe).collect();
        parts.join(" ")
    }

    /// ACL GETUSER's `channels`.
    pub fn describe_channels(&self) -> String {
        if self.all_channels {
            return "&*".into();
        }
        let parts: Vec<String> = self
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        parts.join(" ")
    }
}

/// A user: its name, flags, password hashes and selectors.
#[derive(Clone, Debug)]
pub struct User {
    pub name: String,
    pub enabled: bool,
    pub nopass: bool,
    /// `Some(true)`: `sanitize-payload`, `Some(false)`: `skip-sanitize-payload`.
    pub sanitize: Option<bool>,
    /// SHA-256 hashes, lowercase hex, in the order added, no duplicates.
    pub passwords: Vec<String>,
    pub root: Selector,
    pub selectors: Vec<Selector>,
}

impl User {
    /// A new user as ACL SETUSER creates one: off, no password, no
    /// command, no key; every channel when `all_channels`
    /// (`acl-pubsub-default allchannels`).
    pub fn new(name: &str, all_channels: bool) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize: None,
            passwords: Vec::new(),
            root: Selector {
                all_channels,
                ..Selector::default()
            },
            selectors: Vec::new(),
        }
    }

    /// Whether `password` is one of this user's (any, with `nopass`).
    pub fn password_ok(&self, password: &[u8]) -> bool {
        if self.nopass {
            return true;
        }
        let hash = super::password::hash_hex(password);
        self.passwords.contains(&hash)
    }

    /// GETUSER's and LIST's flags, in Redis's order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_permissions_and_patterns() {
        let sel = Selector {
            keys: vec![
                KeyPattern::new(Bytes::from_static(b"r*"), READ),
                KeyPattern::new(Bytes::from_static(b"a*"), READ | WRITE),
            ],
            ..Selector::default()
        };
        assert!(sel.key_allowed(b"rx", READ));
        assert!(!sel.key_allowed(b"rx", WRITE));
        assert!(sel.key_allowed(b"ax", READ | WRITE));
        assert!(!sel.key_allowed(b"zz", 0));
        assert_eq!(sel.describe_keys(), "%R~r* ~a*");
    }

    /// The shapes answer as the glob matcher does, on the cases where they
    /// could differ (empty keys, escapes, stars elsewhere).
    #[test]
    fn pattern_shapes_match_as_the_glob_does() {
        let patterns = [
            "", "*", "key:*", "key", "k*y", "key:\\*", "k?y:*", "[k]ey:*", "key:**", "*:x",
        ];
        let keys = [
            "", "key", "key:", "key:1", "kEy:1", "k", "key:*", "kxy:1", "x:x", "ke",
        ];
        for pattern in patterns {
            let p = KeyPattern::new(Bytes::from(pattern), READ);
            for key in keys {
                assert_eq!(
                    p.matches(key.as_bytes()),
                    glob_match(pattern.as_bytes(), key.as_bytes(), false),
                    "pattern {pattern:?} key {key:?}"
                );
            }
        }
        assert_eq!(Shape::of(b"key:*"), Shape::Prefix);
        assert_eq!(Shape::of(b"key"), Shape::Literal);
        assert_eq!(Shape::of(b"key:\\*"), Shape::Glob);
    }

    #[test]
    fn channel_patterns_match_literally_for_psubscribe() {
        let sel = Selector {
            channels: vec![Bytes::from_static(b"news.*")],
            ..Selector::default()
        };
        assert!(sel.channel_allowed(b"news.tech", false));
        assert!(!sel.channel_allowed(b"news.t*", true));
        assert!(sel.channel_allowed(b"news.*", true));
    }

    #[test]
    fn command_bits() {
        let mut sel = Selector::default();
        sel.set_id(130, true);
        assert!(sel.allows_id(130) && !sel.allows_id(129) && !sel.allows_id(9999));
        sel.set_id(130, false);
        assert!(!sel.allows_id(130));
    }
}
