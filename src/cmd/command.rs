//! COMMAND and its subcommands, answered from the command metadata
//! (`cmd::meta`) as redis-server 7.0.15 answers them: INFO and DOCS
//! entries, COUNT, LIST with its filters, GETKEYS and GETKEYSANDFLAGS.
//! `tests/command_meta.rs` compares the replies with Redis's.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::meta::{self, keys, reply, AclCategories, CommandFlags, CommandMeta};
use super::table::{lookup, COMMANDS};
use super::{Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;

/// COMMAND's own metadata, whose subcommands this handler serves.
static COMMAND: &CommandMeta = meta::find("command");

/// Redis 7.0.15's COMMAND HELP.
const HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

pub fn command(_: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let Some(sub) = argv.get(1) else {
        return Frame::Array(COMMANDS.iter().map(|c| reply::info(c.meta)).collect()).into();
    };
    let Some(sub) = COMMAND.subcommand(sub) else {
        return err::unknown_subcommand(sub, "command").into();
    };
    if !arity_ok(sub.arity, argv.len()) {
        return err::wrong_arity(sub.name).into();
    }
    let rest = &argv[2..];
    match sub.short_name() {
        "count" => Frame::Integer(COMMANDS.len() as i64).into(),
        "info" => info(rest).into(),
        "docs" => docs(rest).into(),
        "list" => list(rest).into(),
        "getkeys" => getkeys(rest, false).into(),
        "getkeysandflags" => getkeys(rest, true).into(),
        "help" => help_reply(HELP).into(),
        _ => err::unknown_subcommand(&argv[1], "command").into(),
    }
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    let argc = argc as i64;
    let arity = i64::from(arity);
    if arity >= 0 {
        argc == arity
    } else {
        argc >= -arity
    }
}

/// Every command of the table, with its subcommands after it.
fn all_metas() -> impl Iterator<Item = &'static CommandMeta> {
    COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.meta).chain(c.meta.subcommands))
}

/// The metadata a name refers to: `get`, or `config|get` for a
/// subcommand (any case), among ember's commands.
fn by_name(name: &[u8]) -> Option<&'static CommandMeta> {
    let mut parts = name.splitn(2, |&b| b == b'|');
    let container = lookup(parts.next()?)?.meta;
    match parts.next() {
        None => Some(container),
        Some(sub) => container.subcommand(sub),
    }
}

/// COMMAND INFO: every command when no name is given, else one entry per
/// name (a null for a name ember does not have).
fn info(names: &[Bytes]) -> Frame {
    if names.is_empty() {
        return Frame::Array(COMMANDS.iter().map(|c| reply::info(c.meta)).collect());
    }
    let entries = names
        .iter()
        .map(|n| by_name(n).map_or(Frame::Null, reply::info));
    Frame::Array(entries.collect())
}

/// COMMAND DOCS: a map from each command's name to its docs; names ember
/// does not have are left out.
fn docs(names: &[Bytes]) -> Frame {
    let metas: Vec<&'static CommandMeta> = if names.is_empty() {
        COMMANDS.iter().map(|c| c.meta).collect()
    } else {
        names.iter().filter_map(|n| by_name(n)).collect()
    };
    let pair = |m: &'static CommandMeta| {
        (
            Frame::Bulk(Bytes::from_static(m.name.as_bytes())),
            reply::docs(m),
        )
    };
    Frame::Map(metas.into_iter().map(pair).collect())
}

/// Which commands COMMAND LIST names.
enum Filter {
    All,
    /// `FILTERBY MODULE name`: ember has no modules.
    Module,
    /// `FILTERBY ACLCAT category`: none when the category is unknown.
    Category(Option<AclCategories>),
    /// `FILTERBY PATTERN glob`, matched against the full name, any case.
    Pattern(Bytes),
}

impl Filter {
    fn parse(options: &[Bytes]) -> Option<Filter> {
        match options {
            [] => Some(Filter::All),
            [filterby, kind, arg] if filterby.eq_ignore_ascii_case(b"filterby") => {
                match kind.to_ascii_lowercase().as_slice() {
                    b"module" => Some(Filter::Module),
                    b"aclcat" => Some(Filter::Category(AclCategories::named(arg))),
                    b"pattern" => Some(Filter::Pattern(arg.clone())),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn keeps(&self, meta: &CommandMeta) -> bool {
        match self {
            Filter::All => true,
            Filter::Module => false,
            Filter::Category(cat) => cat.is_some_and(|cat| meta.acl.contains(cat)),
            Filter::Pattern(glob) => {
                crate::util::glob::glob_match(glob, meta.name.as_bytes(), true)
            }
        }
    }
}

/// COMMAND LIST: the names of the commands and subcommands (`config|get`)
/// the filter keeps, each judged on its own.
fn list(options: &[Bytes]) -> Frame {
    let Some(filter) = Filter::parse(options) else {
        return err::syntax();
    };
    let names = all_metas()
        .filter(|m| filter.keeps(m))
        .map(|m| Frame::Bulk(Bytes::from_static(m.name.as_bytes())));
    Frame::Array(names.collect())
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS of the command `argv`, with Redis's
/// checks in Redis's order: a command ember has, one with keys, its arity,
/// then arguments its key specs can read.
fn getkeys(argv: &[Bytes], with_flags: bool) -> Frame {
    let target = lookup(&argv[0]).and_then(|spec| {
        if spec.container {
            spec.meta.subcommand(argv.get(1)?)
        } else {
            Some(spec.meta)
        }
    });
    let Some(target) = target else {
        return err::frame("ERR Invalid command specified");
    };
    if !target.has_keys() {
        return err::frame("ERR The command has no key arguments");
    }
    if !arity_ok(target.arity, argv.len()) {
        return err::frame("ERR Invalid number of arguments specified for command");
    }
    let Some(found) = keys::command_keys(target, argv) else {
        if target.flags.contains(CommandFlags::NO_MANDATORY_KEYS) {
            return Frame::Array(Vec::new());
        }
        return err::frame("ERR Invalid arguments specified for command");
    };
    let entries = found.into_iter().map(|(position, flags)| {
        let key = Frame::Bulk(argv[position].clone());
        if with_flags {
            let flags = Frame::Set(flags.names().map(Frame::Simple).collect());
            Frame::Array(vec![key, flags])
        } else {
            key
        }
    });
    Frame::Array(entries.collect())
}
