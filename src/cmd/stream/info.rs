//! XINFO STREAM (FULL), GROUPS, CONSUMERS and HELP, as Redis 7.0 answers
//! them (maps in RESP3, flat arrays in RESP2).

use bytes::Bytes;

use super::{as_stream, entry_frame, subcommand, NO_GROUP};
use crate::cmd::args::{err, int_arg, Reply};
use crate::cmd::keys::help_reply;
use crate::cmd::Ctx;
use crate::resp::Frame;
use crate::store::stream::{Fields, Group, Stream, StreamId};

const HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

fn text(s: &'static str) -> Frame {
    Frame::bulk(s)
}

fn id(id: StreamId) -> Frame {
    Frame::Bulk(id.to_bytes())
}

fn opt_int(v: Option<u64>) -> Frame {
    v.map_or(Frame::Null, |n| Frame::Integer(n as i64))
}

pub fn xinfo(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sub = subcommand(argv, "xinfo")?;
    if sub == "help" {
        return Ok(help_reply(HELP));
    }
    let now = ctx.now_ms();
    let mut ks = ctx.ks();
    let Some(entry) = ks.read(&argv[2]) else {
        return Err(err::frame(err::NO_SUCH_KEY));
    };
    let s = as_stream(entry)?;
    match sub.as_str() {
        "stream" => stream(s, argv, now),
        "groups" => Ok(Frame::Array(
            s.groups
                .iter()
                .map(|(name, g)| {
                    Frame::Map(vec![
                        (text("name"), Frame::Bulk(name.clone())),
                        (text("consumers"), Frame::Integer(g.consumers.len() as i64)),
                        (text("pending"), Frame::Integer(g.pel.len() as i64)),
                        (text("last-delivered-id"), id(g.last_id)),
                        (text("entries-read"), opt_int(g.entries_read)),
                        (text("lag"), opt_int(s.lag(g))),
                    ])
                })
                .collect(),
        )),
        _ => {
            let Some(g) = s.groups.get(&argv[3]) else {
                return Err(no_group(&argv[3], &argv[2]));
            };
            Ok(Frame::Array(
                g.consumers
                    .iter()
                    .map(|(name, c)| {
                        Frame::Map(vec![
                            (text("name"), Frame::Bulk(name.clone())),
                            (text("pending"), Frame::Integer(c.pel.len() as i64)),
                            (
                                text("idle"),
                                Frame::Integer(now.saturating_sub(c.seen_time) as i64),
                            ),
                        ])
                    })
                    .collect(),
            ))
        }
    }
}

/// `NOGROUP No such consumer group '<group>' for key name '<key>'`.
pub fn no_group(group: &[u8], key: &[u8]) -> Frame {
    Frame::Error(format!(
        "{NO_GROUP} No such consumer group '{}' for key name '{}'",
        String::from_utf8_lossy(group),
        String::from_utf8_lossy(key)
    ))
}

fn stream(s: &Stream, argv: &[Bytes], now: u64) -> Reply {
    let bad = || {
        err::frame(
            "ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.",
        )
    };
    let full = match argv.len() {
        3 => None,
        4 if argv[3].eq_ignore_ascii_case(b"full") => Some(10),
        6 if argv[3].eq_ignore_ascii_case(b"full") && argv[4].eq_ignore_ascii_case(b"count") => {
            let n = int_arg(&argv[5])?;
            Some(if n < 0 { 10 } else { n as usize })
        }
        _ => return Err(bad()),
    };
    let mut map = vec![
        (text("length"), Frame::Integer(s.len() as i64)),
        (
            text("radix-tree-keys"),
            Frame::Integer(s.node_count() as i64),
        ),
        // Redis counts its radix tree's inner nodes; ember has none, so
        // this is the count a tree of 16-byte keys about has.
        (
            text("radix-tree-nodes"),
            Frame::Integer(s.node_count() as i64 + 1),
        ),
        (text("last-generated-id"), id(s.last_id)),
        (text("max-deleted-entry-id"), id(s.max_deleted)),
        (
            text("entries-added"),
            Frame::Integer(s.entries_added as i64),
        ),
        (text("recorded-first-entry-id"), id(s.first_id())),
    ];
    let Some(count) = full else {
        map.push((text("groups"), Frame::Integer(s.groups.len() as i64)));
        let edge =
            |e: Option<(StreamId, Fields<'_>)>| e.map_or(Frame::Null, |(i, fv)| entry_frame(i, fv));
        map.push((text("first-entry"), edge(s.first())));
        map.push((text("last-entry"), edge(s.last())));
        return Ok(Frame::Map(map));
    };
    let limit = if count == 0 { usize::MAX } else { count };
    map.push((
        text("entries"),
        Frame::Array(
            s.range(StreamId::MIN, StreamId::MAX, false)
                .take(limit)
                .map(|(i, fv)| entry_frame(i, fv))
                .collect(),
        ),
    ));
    map.push((
        text("groups"),
        Frame::Array(
            s.groups
                .iter()
                .map(|(name, g)| full_group(s, name, g, limit, now))
                .collect(),
        ),
    ));
    Ok(Frame::Map(map))
}

fn full_group(s: &Stream, name: &Bytes, g: &Group, limit: usize, _now: u64) -> Frame {
    let pending = g
        .pel
        .iter()
        .take(limit)
        .map(|(i, p)| {
            Frame::Array(vec![
                id(*i),
                Frame::Bulk(p.consumer.clone()),
                Frame::Integer(p.delivery_time as i64),
                Frame::Integer(p.delivery_count as i64),
            ])
        })
        .collect();
    let consumers = g
        .consumers
        .iter()
        .map(|(cname, c)| {
            let pending = c
                .pel
                .iter()
                .take(limit)
                .filter_map(|i| {
                    let p = g.pel.get(i)?;
                    Some(Frame::Array(vec![
                        id(*i),
                        Frame::Integer(p.delivery_time as i64),
                        Frame::Integer(p.delivery_count as i64),
                    ]))
                })
                .collect();
            Frame::Map(vec![
                (text("name"), Frame::Bulk(cname.clone())),
                (text("seen-time"), Frame::Integer(c.seen_time as i64)),
                (text("pel-count"), Frame::Integer(c.pel.len() as i64)),
                (text("pending"), Frame::Array(pending)),
            ])
        })
        .collect();
    Frame::Map(vec![
        (text("name"), Frame::Bulk(name.clone())),
        (text("last-delivered-id"), id(g.last_id)),
        (text("entries-read"), opt_int(g.entries_read)),
        (text("lag"), opt_int(s.lag(g))),
        (text("pel-count"), Frame::Integer(g.pel.len() as i64)),
        (text("pending"), Frame::Array(pending)),
        (text("consumers"), Frame::Array(consumers)),
    ])
}
