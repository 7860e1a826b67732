//! Pub/Sub commands. The registry is shared (`crate::pubsub`); a connection's
//! own subscriptions live in its session.

use bytes::Bytes;

use super::args::err;
use super::keys::help_reply;
use super::{Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;

fn confirmation(kind: &'static str, name: Option<Bytes>, count: usize) -> Frame {
    Frame::Push(vec![
        Frame::Bulk(Bytes::from_static(kind.as_bytes())),
        name.map_or(Frame::Null, Frame::Bulk),
        Frame::Integer(count as i64),
    ])
}

/// Channels or patterns: the two kinds of subscription share every rule.
#[derive(Clone, Copy)]
enum Kind {
    Channel,
    Pattern,
    /// Shard channels: counted apart in the confirmations, as Redis does.
    Shard,
}

impl Kind {
    fn names(self, session: &mut Session) -> &mut indexmap::IndexSet<Bytes> {
        match self {
            Kind::Channel => &mut session.channels,
            Kind::Pattern => &mut session.patterns,
            Kind::Shard => &mut session.shard_channels,
        }
    }

    /// The count a confirmation carries.
    fn count(self, session: &Session) -> usize {
        match self {
            Kind::Shard => session.shard_channels.len(),
            _ => session.channels.len() + session.patterns.len(),
        }
    }

    fn confirm(self, subscribing: bool) -> &'static str {
        match (self, subscribing) {
            (Kind::Channel, true) => "subscribe",
            (Kind::Channel, false) => "unsubscribe",
            (Kind::Pattern, true) => "psubscribe",
            (Kind::Pattern, false) => "punsubscribe",
            (Kind::Shard, true) => "ssubscribe",
            (Kind::Shard, false) => "sunsubscribe",
        }
    }
}

fn subscribe_generic(
    shard: &ShardData,
    session: &mut Session,
    argv: &[Bytes],
    kind: Kind,
) -> Action {
    let me = session.subscriber();
    let registry = &shard.shared.pubsub;
    let replies = argv[1..]
        .iter()
        .map(|name| {
            if kind.names(session).insert(name.clone()) {
                match kind {
                    Kind::Channel => registry.subscribe(name.clone(), me),
                    Kind::Pattern => registry.psubscribe(name.clone(), me),
                    Kind::Shard => registry.ssubscribe(name.clone(), me),
                }
            }
            confirmation(kind.confirm(true), Some(name.clone()), kind.count(session))
        })
        .collect();
    Frame::Sequence(replies).into()
}

/// Without arguments, leaves every subscription of the kind, in the order
/// made. Each removal costs O(1): the set is taken whole when all go, and a
/// named one is swapped out (Redis's own order is its dict's, so any order
/// of what remains is Redis's behaviour); removing in place shifted the
/// rest of the set, and UNSUBSCRIBE of 50,000 channels took seconds.
fn unsubscribe_generic(
    shard: &ShardData,
    session: &mut Session,
    argv: &[Bytes],
    kind: Kind,
) -> Action {
    let me = session.subscriber();
    let registry = &shard.shared.pubsub;
    let leave = |name: &[u8]| match kind {
        Kind::Channel => registry.unsubscribe(name, me),
        Kind::Pattern => registry.punsubscribe(name, me),
        Kind::Shard => registry.sunsubscribe(name, me),
    };
    if argv.len() == 1 {
        let names = std::mem::take(kind.names(session));
        if names.is_empty() {
            return Frame::Sequence(vec![confirmation(
                kind.confirm(false),
                None,
                kind.count(session),
            )])
            .into();
        }
        let mut left = kind.count(session) + names.len();
        let replies = names
            .into_iter()
            .map(|name| {
                leave(&name);
                left -= 1;
                confirmation(kind.confirm(false), Some(name), left)
            })
            .collect();
        return Frame::Sequence(replies).into();
    }
    let replies = argv[1..]
        .iter()
        .map(|name| {
            if kind.names(session).swap_remove(name) {
                leave(name);
            }
            confirmation(kind.confirm(false), Some(name.clone()), kind.count(session))
        })
        .collect();
    Frame::Sequence(replies).into()
}

pub fn ssubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    subscribe_generic(shard, session, argv, Kind::Shard)
}

pub fn sunsubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    unsubscribe_generic(shard, session, argv, Kind::Shard)
}

pub fn spublish(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let receivers = shard
        .shared
        .pubsub
        .spublish(&argv[1], &argv[2], &mut shard.deliveries);
    Frame::Integer(receivers as i64).into()
}

pub fn subscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    subscribe_generic(shard, session, argv, Kind::Channel)
}

pub fn psubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    subscribe_generic(shard, session, argv, Kind::Pattern)
}

pub fn unsubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    unsubscribe_generic(shard, session, argv, Kind::Channel)
}

pub fn punsubscribe(shard: &mut ShardData, session: &mut Session, argv: &[Bytes]) -> Action {
    unsubscribe_generic(shard, session, argv, Kind::Pattern)
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
    for channel in &session.shard_channels {
        registry.sunsubscribe(channel, me);
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
    "    Prints this help.",
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
