//! What a blocked client is, as the shards pass it around: the parsed
//! blocking command ([`Request`]), what it hands its shard
//! ([`Wait`], in `Action::Block`), the waiter an owner registers
//! ([`Waiter`]) and the messages about it ([`BlockMsg`]). The protocol and
//! the registries are `shard::blocking`'s; the attempts are
//! `cmd::blocking`'s.

use bytes::Bytes;

use crate::resp::Frame;
use crate::store::list::End;
use crate::store::stream::StreamId;
use crate::store::zset;

/// The type a key must hold for a waiter to be served from it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    List,
    ZSet,
    Stream,
}

/// What a blocked client does with the first of its keys that has data.
#[derive(Clone, Debug)]
pub enum Want {
    /// BLPOP / BRPOP: one element from an end; answers `[key, element]`.
    Pop(End),
    /// BLMPOP: up to `count` elements from an end; answers `[key, [elements]]`.
    Mpop { end: End, count: usize },
    /// BLMOVE / BRPOPLPUSH: moves one element to `dst`; answers the element.
    /// `rpoplpush`: it was BRPOPLPUSH, which Redis propagates as
    /// RPOPLPUSH (BLMOVE as LMOVE).
    Move {
        dst: Bytes,
        from: End,
        to: End,
        rpoplpush: bool,
    },
    /// BZPOPMIN / BZPOPMAX: answers `[key, member, score]`.
    ZPop(zset::End),
    /// BZMPOP: up to `count` members; answers `[key, [[member, score], ...]]`.
    ZMpop { end: zset::End, count: usize },
    /// XREAD / XREADGROUP BLOCK: the entries of the first stream to get
    /// some; answers `[[key, entries]]` (a map in RESP3).
    XRead(Box<StreamRead>),
}

/// A blocked XREAD or XREADGROUP: what it reads of each stream.
#[derive(Clone, Debug)]
pub struct StreamRead {
    /// Each waited key and the ID its entries must be above; None for
    /// XREADGROUP's `>` (above the group's last delivered ID).
    pub after: Vec<(Bytes, Option<StreamId>)>,
    /// At most this many entries (0: all).
    pub count: usize,
    /// XREADGROUP's group and consumer.
    pub group: Option<(Bytes, Bytes)>,
    pub noack: bool,
}

/// A blocking command, parsed.
#[derive(Clone, Debug)]
pub struct Request {
    /// The keys waited on, in argument order.
    pub keys: Vec<Bytes>,
    pub want: Want,
    /// The client's selected database when it asked.
    pub db: usize,
    /// Unix milliseconds after which the client gets the timeout reply;
    /// None waits forever (timeout 0).
    pub deadline_ms: Option<u64>,
}

/// What a blocking command hands to its connection's shard (`Action::Block`).
pub enum Wait {
    /// The immediate attempt found nothing here (or has yet to run on the
    /// keys' shards): wait for the keys.
    Start(Request),
    /// A multi-shard waiter's attempt ended with this reply; a null one
    /// means nothing was there and the client keeps waiting.
    Attempted(Frame),
}

/// One blocking command of one client: connections block one command at a
/// time, and the reply slot's number tells two successive ones apart.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct WaiterId {
    pub conn_id: u64,
    pub seq: u64,
}

/// What a key's owner does for a waiter when the key gets data.
#[derive(Clone, Debug)]
pub enum Task {
    /// Pop for it here (all its keys live on this shard).
    Serve(Want),
    /// Tell its home, which retries (its keys span shards); only for keys
    /// holding `kind`, as a key of another type wakes no one in Redis 7.0.
    /// Its retry takes up to `takes` elements, which the key's later waiters
    /// leave it.
    Notify { kind: Kind, takes: usize },
}

/// A client waiting on some keys of one shard.
#[derive(Clone, Debug)]
pub struct Waiter {
    pub id: WaiterId,
    /// The connection's shard and its token there.
    pub home: usize,
    pub token: usize,
    pub db: usize,
    /// The keys it waits on that this shard owns.
    pub keys: Vec<Bytes>,
    pub task: Task,
}

/// Messages about blocked clients between a client's home and its keys'
/// owners (carried by `Msg::Block`).
pub enum BlockMsg {
    /// Home to owner: try the waiter's attempt (if it serves here) and
    /// register it if nothing was there.
    Wait(Waiter),
    /// Home to owner: forget this waiter; with `ack`, answer `Cancelled` if
    /// it was still waiting.
    Cancel { id: WaiterId, ack: bool },
    /// Owner to home: the waiter was served (or failed, e.g. WRONGTYPE); its reply.
    Served { id: WaiterId, frame: Frame },
    /// Owner to home: a cancel found the waiter still waiting and removed it.
    Cancelled { id: WaiterId },
    /// Owner to home: a key of this notify-only waiter got data.
    Ready { id: WaiterId },
    /// Owner to home: the waiter found nothing and waits here.
    Waiting { id: WaiterId },
}
