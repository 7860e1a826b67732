//! A command's entries in COMMAND INFO and COMMAND DOCS, written as
//! redis-server 7.0 writes them: which fields appear, in what order, and
//! with which RESP types (flags are status strings in sets, names and texts
//! bulk strings, key specs and docs maps; RESP2 flattens the sets and maps
//! into arrays). `scripts/gen_command_meta.py` checks that every reply it
//! took from Redis has exactly this shape.

use bytes::Bytes;

use super::{Arg, BeginSearch, CommandMeta, FindKeys, KeySpec};
use crate::resp::Frame;

fn text(s: &'static str) -> Frame {
    Frame::Bulk(Bytes::from_static(s.as_bytes()))
}

fn int(n: i32) -> Frame {
    Frame::Integer(n.into())
}

/// Flag names, as status strings in a set.
fn flag_set(names: impl Iterator<Item = &'static str>) -> Frame {
    Frame::Set(names.map(Frame::Simple).collect())
}

/// `(name, value)` pairs as a map with bulk-string keys.
fn map(fields: Vec<(&'static str, Frame)>) -> Frame {
    Frame::Map(fields.into_iter().map(|(k, v)| (text(k), v)).collect())
}

/// COMMAND INFO's entry: name, arity, flags, first key, last key, step,
/// ACL categories, tips, key specs, subcommands.
pub fn info(meta: &CommandMeta) -> Frame {
    Frame::Array(vec![
        text(meta.name),
        int(meta.arity),
        flag_set(meta.flags.names()),
        int(meta.first_key),
        int(meta.last_key),
        int(meta.step),
        Frame::Set(
            meta.acl
                .names()
                .map(|name| Frame::SimpleOwned(format!("@{name}")))
                .collect(),
        ),
        Frame::Set(meta.tips.iter().map(|tip| text(tip)).collect()),
        Frame::Set(meta.key_specs.iter().map(key_spec).collect()),
        // Redis writes a container's subcommands as an array and the
        // nothing of any other command as an empty set.
        if meta.subcommands.is_empty() {
            Frame::Set(Vec::new())
        } else {
            Frame::Array(meta.subcommands.iter().map(info).collect())
        },
    ])
}

fn key_spec(spec: &KeySpec) -> Frame {
    let mut fields = Vec::with_capacity(4);
    if let Some(notes) = spec.notes {
        fields.push(("notes", text(notes)));
    }
    fields.push(("flags", flag_set(spec.flags.names())));
    let (begin, begin_spec) = match spec.begin {
        BeginSearch::Index(pos) => ("index", vec![("index", int(pos))]),
        BeginSearch::Keyword { keyword, startfrom } => (
            "keyword",
            vec![("keyword", text(keyword)), ("startfrom", int(startfrom))],
        ),
        BeginSearch::Unknown => ("unknown", Vec::new()),
    };
    fields.push((
        "begin_search",
        map(vec![("type", text(begin)), ("spec", map(begin_spec))]),
    ));
    let (find, find_spec) = match spec.find {
        FindKeys::Range {
            lastkey,
            keystep,
            limit,
        } => (
            "range",
            vec![
                ("lastkey", int(lastkey)),
                ("keystep", int(keystep)),
                ("limit", int(limit)),
            ],
        ),
        FindKeys::Keynum {
            keynumidx,
            firstkey,
            keystep,
        } => (
            "keynum",
            vec![
                ("keynumidx", int(keynumidx)),
                ("firstkey", int(firstkey)),
                ("keystep", int(keystep)),
            ],
        ),
        FindKeys::Unknown => ("unknown", Vec::new()),
    };
    fields.push((
        "find_keys",
        map(vec![("type", text(find)), ("spec", map(find_spec))]),
    ));
    map(fields)
}

/// COMMAND DOCS's entry (the value under the command's name): the three
/// fields every command has, its complexity (PSYNC and SYNC declare none),
/// then those it has of doc flags, deprecation, history, arguments and
/// subcommands.
pub fn docs(meta: &CommandMeta) -> Frame {
    let d = &meta.docs;
    let mut fields = vec![
        ("summary", text(d.summary)),
        ("since", text(d.since)),
        ("group", text(d.group)),
    ];
    if !d.complexity.is_empty() {
        fields.push(("complexity", text(d.complexity)));
    }
    if !d.doc_flags.is_empty() {
        fields.push(("doc_flags", flag_set(d.doc_flags.names())));
    }
    if let Some(since) = d.deprecated_since {
        fields.push(("deprecated_since", text(since)));
    }
    if let Some(by) = d.replaced_by {
        fields.push(("replaced_by", text(by)));
    }
    if !d.history.is_empty() {
        let entries = d
            .history
            .iter()
            .map(|(version, change)| Frame::Array(vec![text(version), text(change)]));
        fields.push(("history", Frame::Set(entries.collect())));
    }
    if !d.args.is_empty() {
        fields.push(("arguments", args(d.args)));
    }
    if !meta.subcommands.is_empty() {
        let subs = meta.subcommands.iter().map(|s| (text(s.name), docs(s)));
        fields.push(("subcommands", Frame::Map(subs.collect())));
    }
    map(fields)
}

fn args(args: &[Arg]) -> Frame {
    Frame::Array(args.iter().map(arg).collect())
}

fn arg(a: &Arg) -> Frame {
    let mut fields = vec![("name", text(a.name)), ("type", text(a.kind.name()))];
    if let Some(index) = a.key_spec_index {
        fields.push(("key_spec_index", Frame::Integer(index.into())));
    }
    if let Some(token) = a.token {
        fields.push(("token", text(token)));
    }
    if let Some(since) = a.since {
        fields.push(("since", text(since)));
    }
    if let Some(since) = a.deprecated_since {
        fields.push(("deprecated_since", text(since)));
    }
    if !a.flags.is_empty() {
        fields.push(("flags", flag_set(a.flags.names())));
    }
    if a.kind.has_children() {
        fields.push(("arguments", args(a.args)));
    }
    map(fields)
}
