//! The bitsets of command metadata: command flags, ACL categories, key-spec
//! flags, argument flags and doc flags. Each is declared once, as a list of
//! Redis's names in the order Redis prints them: a bit's position is its
//! place in the list, so printing the set bits in order reproduces Redis's
//! replies, and the generated table spells each set as the words Redis
//! prints (`"readonly fast"`), read into bits at compile time.

use std::fmt;

/// Declares a bitset whose bits are named, in print order.
macro_rules! named_bits {
    (
        $(#[$doc:meta])*
        pub struct $name:ident($repr:ty) in $index:ident {
            $($(#[$fdoc:meta])* $flag:ident = $text:literal,)*
        }
    ) => {
        /// Numbers the bits in declaration order.
        mod $index {
            #[allow(non_camel_case_types, clippy::upper_case_acronyms, dead_code)]
            pub enum Bit { $($flag),* }
        }

        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name($repr);

        impl $name {
            /// No bit set.
            pub const NONE: Self = Self(0);
            $(
                $(#[$fdoc])*
                pub const $flag: Self = Self(1 << ($index::Bit::$flag as u32));
            )*
            /// Every bit with its name, in the order Redis prints them.
            pub const NAMES: &'static [(Self, &'static str)] = &[$((Self::$flag, $text)),*];

            /// Whether every bit of `other` is set here.
            pub const fn contains(self, other: Self) -> bool {
                self.0 & other.0 == other.0
            }

            /// Whether any bit of `other` is set here.
            pub const fn intersects(self, other: Self) -> bool {
                self.0 & other.0 != 0
            }

            pub const fn union(self, other: Self) -> Self {
                Self(self.0 | other.0)
            }

            pub const fn is_empty(self) -> bool {
                self.0 == 0
            }

            /// The set bits' names, in Redis's order.
            pub fn names(self) -> impl Iterator<Item = &'static str> {
                Self::NAMES
                    .iter()
                    .filter(move |(bit, _)| self.contains(*bit))
                    .map(|(_, name)| *name)
            }

            /// The bit named `name`, compared without case (`ACLCAT Admin`).
            pub fn named(name: &[u8]) -> Option<Self> {
                Self::NAMES
                    .iter()
                    .find(|(_, n)| n.as_bytes().eq_ignore_ascii_case(name))
                    .map(|(bit, _)| *bit)
            }

            /// The set spelled as Redis prints it: names separated by one
            /// space, in Redis's order. Evaluated at compile time by the
            /// generated table, where an unknown name or one out of order
            /// (the table's order would then print differently from
            /// Redis) stops the build.
            pub const fn parse(words: &str) -> Self {
                Self(parse_words(words, &[$($text),*]) as $repr)
            }
        }

        impl std::ops::BitOr for $name {
            type Output = Self;

            fn bitor(self, other: Self) -> Self {
                self.union(other)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_set().entries(self.names()).finish()
            }
        }
    };
}

named_bits! {
    /// What a command is and may do (`COMMAND INFO`'s third field).
    pub struct CommandFlags(u32) in command_flags {
        /// May change the keyspace.
        WRITE = "write",
        /// Only reads the keyspace.
        READONLY = "readonly",
        /// May grow memory (refused when over `maxmemory`).
        DENYOOM = "denyoom",
        MODULE = "module",
        ADMIN = "admin",
        PUBSUB = "pubsub",
        /// Not allowed from scripts.
        NOSCRIPT = "noscript",
        /// May block the client: `dispatch` lets it wait outside MULTI.
        BLOCKING = "blocking",
        /// Allowed while the dataset loads.
        LOADING = "loading",
        /// Allowed on a replica with stale data.
        STALE = "stale",
        SKIP_MONITOR = "skip_monitor",
        SKIP_SLOWLOG = "skip_slowlog",
        ASKING = "asking",
        /// O(1) or O(log N) and never blocking: its latency events are
        /// `fast-command` ones.
        FAST = "fast",
        /// Allowed before AUTH.
        NO_AUTH = "no_auth",
        MAY_REPLICATE = "may_replicate",
        NO_MANDATORY_KEYS = "no_mandatory_keys",
        NO_ASYNC_LOADING = "no_async_loading",
        /// Refused inside MULTI when queued.
        NO_MULTI = "no_multi",
        /// Its keys are found by reading its arguments (`numkeys`).
        MOVABLEKEYS = "movablekeys",
        /// Allowed while a script or function runs too long.
        ALLOW_BUSY = "allow_busy",
    }
}

named_bits! {
    /// ACL categories (`COMMAND INFO`'s seventh field, with an `@` before
    /// each name; `ACL CAT` lists them without). The order is `ACL CAT`'s.
    pub struct AclCategories(u32) in acl_categories {
        KEYSPACE = "keyspace",
        READ = "read",
        WRITE = "write",
        SET = "set",
        SORTEDSET = "sortedset",
        LIST = "list",
        HASH = "hash",
        STRING = "string",
        BITMAP = "bitmap",
        HYPERLOGLOG = "hyperloglog",
        GEO = "geo",
        STREAM = "stream",
        PUBSUB = "pubsub",
        ADMIN = "admin",
        FAST = "fast",
        SLOW = "slow",
        BLOCKING = "blocking",
        DANGEROUS = "dangerous",
        CONNECTION = "connection",
        TRANSACTION = "transaction",
        SCRIPTING = "scripting",
    }
}

named_bits! {
    /// How a command uses the keys one key spec finds.
    pub struct KeySpecFlags(u16) in key_spec_flags {
        /// Read-only.
        RO = "RO",
        /// Read and write.
        RW = "RW",
        /// Overwrite: the old value is not read.
        OW = "OW",
        /// Remove.
        RM = "RM",
        /// The value's data is returned or copied.
        ACCESS = "access",
        UPDATE = "update",
        INSERT = "insert",
        DELETE = "delete",
        /// Not a key (a channel), though found like one.
        NOT_KEY = "not_key",
        /// The spec may miss keys.
        INCOMPLETE = "incomplete",
        /// The flags depend on the arguments.
        VARIABLE_FLAGS = "variable_flags",
    }
}

named_bits! {
    /// Flags of one argument in `COMMAND DOCS`.
    pub struct ArgFlags(u8) in arg_flags {
        OPTIONAL = "optional",
        MULTIPLE = "multiple",
        MULTIPLE_TOKEN = "multiple_token",
    }
}

named_bits! {
    /// `COMMAND DOCS`'s `doc_flags`.
    pub struct DocFlags(u8) in doc_flags {
        DEPRECATED = "deprecated",
        /// A system command (PFDEBUG): not for users.
        SYSCMD = "syscmd",
    }
}

/// The bits of `words` (names separated by single spaces) among `names`,
/// which must come in `names`' order. Panics otherwise: in the constant
/// evaluation of the generated table that is a build error.
const fn parse_words(words: &str, names: &[&str]) -> u32 {
    let bytes = words.as_bytes();
    let mut bits = 0u32;
    let mut next_allowed = 0; // names before this one would be out of order
    let mut start = 0;
    while start < bytes.len() {
        let mut end = start;
        while end < bytes.len() && bytes[end] != b' ' {
            end += 1;
        }
        let mut i = next_allowed;
        loop {
            if i == names.len() {
                panic!("unknown or out-of-order name in a metadata bitset");
            }
            if word_is(bytes, start, end, names[i].as_bytes()) {
                break;
            }
            i += 1;
        }
        bits |= 1 << i;
        next_allowed = i + 1;
        start = end + 1;
    }
    bits
}

/// Whether `bytes[start..end]` is `name` (slicing is not const).
const fn word_is(bytes: &[u8], start: usize, end: usize, name: &[u8]) -> bool {
    if end - start != name.len() {
        return false;
    }
    let mut i = 0;
    while i < name.len() {
        if bytes[start + i] != name[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_follow_the_declared_order() {
        let fast = CommandFlags::parse("readonly fast");
        assert!(fast.contains(CommandFlags::READONLY) && fast.contains(CommandFlags::FAST));
        assert!(!fast.contains(CommandFlags::WRITE));
        assert_eq!(fast.names().collect::<Vec<_>>(), ["readonly", "fast"]);
        assert_eq!(CommandFlags::parse(""), CommandFlags::NONE);
        assert_eq!(
            CommandFlags::WRITE | CommandFlags::DENYOOM,
            CommandFlags::parse("write denyoom")
        );
        assert_eq!(
            AclCategories::named(b"SortedSet"),
            Some(AclCategories::SORTEDSET)
        );
        assert_eq!(AclCategories::named(b"nosuch"), None);
        assert_eq!(
            format!("{:?}", KeySpecFlags::parse("RW access")),
            "{\"RW\", \"access\"}"
        );
    }

    #[test]
    fn every_name_has_its_own_bit() {
        fn check(names: &[(u32, &str)]) {
            for (i, (bit, _)) in names.iter().enumerate() {
                assert_eq!(*bit, 1 << i);
            }
        }
        check(
            &CommandFlags::NAMES
                .iter()
                .map(|(b, n)| (b.0, *n))
                .collect::<Vec<_>>(),
        );
        check(
            &AclCategories::NAMES
                .iter()
                .map(|(b, n)| (b.0, *n))
                .collect::<Vec<_>>(),
        );
        check(
            &KeySpecFlags::NAMES
                .iter()
                .map(|(b, n)| (u32::from(b.0), *n))
                .collect::<Vec<_>>(),
        );
        assert_eq!(AclCategories::NAMES.len(), 21);
    }

    #[test]
    #[should_panic]
    fn out_of_order_names_are_refused() {
        CommandFlags::parse("fast readonly");
    }

    #[test]
    #[should_panic]
    fn unknown_names_are_refused() {
        AclCategories::parse("read nosuch");
    }
}
