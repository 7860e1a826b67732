//! The `const` constructors `generated.rs` is written with: one call per
//! command, key spec and argument, with builder methods for the fields
//! most commands leave empty, so a row reads like Redis's declaration.
//! Bitsets are spelled with Redis's words and read at compile time.

use super::{
    AclCategories, Arg, ArgFlags, ArgType, BeginSearch, CommandFlags, CommandMeta, DocFlags, Docs,
    FindKeys, KeySpec, KeySpecFlags,
};

/// A command: name, arity, flags and ACL categories (Redis's words, in
/// Redis's order, categories without their `@`), legacy key range.
pub const fn cmd(
    name: &'static str,
    arity: i32,
    flags: &str,
    acl: &str,
    keys: (i32, i32, i32),
) -> CommandMeta {
    CommandMeta {
        name,
        arity,
        flags: CommandFlags::parse(flags),
        acl: AclCategories::parse(acl),
        first_key: keys.0,
        last_key: keys.1,
        step: keys.2,
        tips: &[],
        key_specs: &[],
        docs: Docs {
            summary: "",
            since: "",
            group: "",
            complexity: "",
            doc_flags: DocFlags::NONE,
            deprecated_since: None,
            replaced_by: None,
            history: &[],
            args: &[],
        },
        subcommands: &[],
    }
}

impl CommandMeta {
    pub const fn tips(mut self, tips: &'static [&'static str]) -> Self {
        self.tips = tips;
        self
    }

    pub const fn key_specs(mut self, specs: &'static [KeySpec]) -> Self {
        self.key_specs = specs;
        self
    }

    /// The four fields every command's docs have, in COMMAND DOCS's order.
    pub const fn docs(
        mut self,
        summary: &'static str,
        since: &'static str,
        group: &'static str,
        complexity: &'static str,
    ) -> Self {
        self.docs.summary = summary;
        self.docs.since = since;
        self.docs.group = group;
        self.docs.complexity = complexity;
        self
    }

    pub const fn doc_flags(mut self, flags: &str) -> Self {
        self.docs.doc_flags = DocFlags::parse(flags);
        self
    }

    pub const fn deprecated(mut self, since: &'static str, replaced_by: &'static str) -> Self {
        self.docs.deprecated_since = Some(since);
        self.docs.replaced_by = Some(replaced_by);
        self
    }

    pub const fn history(mut self, history: &'static [(&'static str, &'static str)]) -> Self {
        self.docs.history = history;
        self
    }

    pub const fn args(mut self, args: &'static [Arg]) -> Self {
        self.docs.args = args;
        self
    }

    pub const fn subcommands(mut self, subcommands: &'static [CommandMeta]) -> Self {
        self.subcommands = subcommands;
        self
    }
}

/// A key spec: flags (Redis's words), where its keys begin, how they go on.
pub const fn spec(flags: &str, begin: BeginSearch, find: FindKeys) -> KeySpec {
    KeySpec {
        notes: None,
        flags: KeySpecFlags::parse(flags),
        begin,
        find,
    }
}

impl KeySpec {
    pub const fn notes(mut self, notes: &'static str) -> Self {
        self.notes = Some(notes);
        self
    }
}

pub const fn index(pos: i32) -> BeginSearch {
    BeginSearch::Index(pos)
}

// No command of ember's finds keys after a keyword yet (XREAD's STREAMS,
// GEORADIUS's STORE would); the key-spec reader's tests do.
#[cfg_attr(not(test), allow(dead_code))]
pub const fn keyword(keyword: &'static str, startfrom: i32) -> BeginSearch {
    BeginSearch::Keyword { keyword, startfrom }
}

pub const fn range(lastkey: i32, keystep: i32, limit: i32) -> FindKeys {
    FindKeys::Range {
        lastkey,
        keystep,
        limit,
    }
}

pub const fn keynum(keynumidx: i32, firstkey: i32, keystep: i32) -> FindKeys {
    FindKeys::Keynum {
        keynumidx,
        firstkey,
        keystep,
    }
}

const fn arg(kind: ArgType, name: &'static str) -> Arg {
    Arg {
        name,
        kind,
        key_spec_index: None,
        token: None,
        since: None,
        deprecated_since: None,
        flags: ArgFlags::NONE,
        args: &[],
    }
}

/// A key argument, found by the key spec at `spec_index`.
pub const fn key(name: &'static str, spec_index: u8) -> Arg {
    arg(ArgType::Key, name).key_spec(spec_index)
}

pub const fn string(name: &'static str) -> Arg {
    arg(ArgType::String, name)
}

pub const fn integer(name: &'static str) -> Arg {
    arg(ArgType::Integer, name)
}

pub const fn double(name: &'static str) -> Arg {
    arg(ArgType::Double, name)
}

pub const fn pattern(name: &'static str) -> Arg {
    arg(ArgType::Pattern, name)
}

pub const fn unix_time(name: &'static str) -> Arg {
    arg(ArgType::UnixTime, name)
}

/// A word that is the whole argument (`NX`).
pub const fn pure_token(name: &'static str, token: &'static str) -> Arg {
    arg(ArgType::PureToken, name).token(token)
}

/// One of `args`.
pub const fn oneof(name: &'static str, args: &'static [Arg]) -> Arg {
    let mut a = arg(ArgType::OneOf, name);
    a.args = args;
    a
}

/// `args` in sequence.
pub const fn block(name: &'static str, args: &'static [Arg]) -> Arg {
    let mut a = arg(ArgType::Block, name);
    a.args = args;
    a
}

impl Arg {
    pub const fn key_spec(mut self, index: u8) -> Self {
        self.key_spec_index = Some(index);
        self
    }

    pub const fn token(mut self, token: &'static str) -> Self {
        self.token = Some(token);
        self
    }

    pub const fn since(mut self, version: &'static str) -> Self {
        self.since = Some(version);
        self
    }

    pub const fn deprecated_since(mut self, version: &'static str) -> Self {
        self.deprecated_since = Some(version);
        self
    }

    /// Flags in Redis's words (`"optional multiple"`).
    pub const fn flags(mut self, flags: &str) -> Self {
        self.flags = ArgFlags::parse(flags);
        self
    }
}
