//! Pub/Sub commands. The registry is shared (`crate::pubsub`); a connection's
//! own subscriptions live in its session.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{Session, ShardData};
use crate::resp::Frame;
use crate::shard::Action;

fn confirmation(kind: &'static str, name: Option<Bytes>, count: usize) -> Frame {
    Frame::Push(vec![
        Frame::Bulk(Bytes::from_static(kind.as_bytes())),
        name.map_or(Frame::Null, Frame::Bulk),
        Frame::Integer(count as i64),
    ])
}

pub fn subscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let me = session.subscriber();
    let replies = argv[1..]
        .iter()
        .map(|channel| {
            if session.channels.insert(channel.clone()) {
                shard.shared.pubsub.subscribe(channel.clone(), me);
            }
            confirmation("subscribe", Some(channel.clone()), session.subscriptions())
        })
        .collect();
    Frame::Sequence(replies).into()
}

pub fn psubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let me = session.subscriber();
    let replies = argv[1..]
        .iter()
        .map(|pattern| {
            if session.patterns.insert(pattern.clone()) {
                shard.shared.pubsub.psubscribe(pattern.clone(), me);
            }
            confirmation("psubscribe", Some(pattern.clone()), session.subscriptions())
        })
        .collect();
    Frame::Sequence(replies).into()
}

pub fn unsubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let names: Vec<Bytes> = if argv.len() > 1 {
        argv[1..].to_vec()
    } else {
        session.channels.iter().cloned().collect()
    };
    if names.is_empty() {
        return Frame::Sequence(vec![confirmation(
            "unsubscribe",
            None,
            session.subscriptions(),
        )])
        .into();
    }
    let me = session.subscriber();
    let replies = names
        .into_iter()
        .map(|channel| {
            if session.channels.shift_remove(&channel) {
                shard.shared.pubsub.unsubscribe(&channel, me);
            }
            confirmation("unsubscribe", Some(channel), session.subscriptions())
        })
        .collect();
    Frame::Sequence(replies).into()
}

pub fn punsubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    let names: Vec<Bytes> = if argv.len() > 1 {
        argv[1..].to_vec()
    } else {
        session.patterns.iter().cloned().collect()
    };
    if names.is_empty() {
        return Frame::Sequence(vec![confirmation(
            "punsubscribe",
            None,
            session.subscriptions(),
        )])
        .into();
    }
    let me = session.subscriber();
    let replies = names
        .into_iter()
        .map(|pattern| {
            if session.patterns.shift_remove(&pattern) {
                shard.shared.pubsub.punsubscribe(&pattern, me);
            }
            confirmation("punsubscribe", Some(pattern), session.subscriptions())
        })
        .collect();
    Frame::Sequence(replies).into()
}

/// Drops every subscription of a closing connection.
pub fn forget(registry: &crate::pubsub::Registry, session: &Session) {
    let me = session.subscriber();
    for channel in &session.channels {
        registry.unsubscribe(channel, me);
    }
    for pattern in &session.patterns {
        registry.punsubscribe(pattern, me);
    }
}

pub fn publish(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let receivers = shard
        .shared
        .pubsub
        .publish(&argv[1], &argv[2], &mut shard.deliveries);
    Frame::Integer(receivers as i64).into()
}

const PUBSUB_HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "HELP",
    "    Print this help.",
];

pub fn pubsub(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let registry = &shard.shared.pubsub;
    let sub = String::from_utf8_lossy(&argv[1]).to_ascii_lowercase();
    match sub.as_str() {
        "channels" if argv.len() <= 3 => {
            let mut names = registry.channels(argv.get(2).map(|p| p.as_ref()));
            names.sort();
            Frame::Array(names.into_iter().map(Frame::Bulk).collect()).into()
        }
        "numsub" => Frame::Array(
            argv[2..]
                .iter()
                .flat_map(|c| {
                    [
                        Frame::Bulk(c.clone()),
                        Frame::Integer(registry.numsub(c) as i64),
                    ]
                })
                .collect(),
        )
        .into(),
        "numpat" if argv.len() == 2 => Frame::Integer(registry.numpat() as i64).into(),
        "help" if argv.len() == 2 => help_reply(PUBSUB_HELP).into(),
        // Redis checks CHANNELS's argument count itself, with this wording.
        "channels" => Frame::Error(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(&argv[1])
        ))
        .into(),
        "numpat" | "help" => err::wrong_arity(&format!("pubsub|{sub}")).into(),
        _ => err::unknown_subcommand(&argv[1], "pubsub").into(),
    }
}
