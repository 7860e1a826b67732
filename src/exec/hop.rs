//! A hop: the messages shards send each other through their inboxes, and
//! where an op's answer goes back to.
//!
//! ```text
//!  shard A (the client's home)                 shard B (owns the key)
//!  ---------------------------                 ----------------------
//!  command -> Job { ops, then }
//!  Msg::Run { from: A, to, part, op } ------->  admit: run now, or park
//!                                               behind key locks (Parked)
//!  slot[to.seq].fill(part, out) <-----------  Msg::Done { to, part, out }
//!  all parts in: then(outs) -> reply / next Job
//! ```
//!
//! Each shard sends one batch per peer per pass of its loop; batches between
//! two shards arrive in the order they were sent.

use super::job::Op;
use super::locks::TxId;
use super::wait::BlockMsg;
use super::Out;
use crate::resp::Frame;

/// A message between shards.
pub enum Msg {
    /// Run `op` here and send the output back to shard `from`. `tx`: the
    /// op belongs to that transaction, which holds the locks it needs.
    Run {
        from: usize,
        to: ReplyTo,
        part: usize,
        op: Op,
    },
    /// The output of an op this shard asked for.
    Done { to: ReplyTo, part: usize, out: Out },
    /// Run `op` here; nobody waits for its output (cleanup of a client that left).
    Post(Op),
    /// Transaction `tx` is over: give back its locks here.
    Release { tx: TxId },
    /// An invalidation (CLIENT TRACKING) for one of this shard's connections.
    Invalidate(crate::tracking::Invalidation),
    /// A Pub/Sub message for one of this shard's connections.
    Deliver {
        token: usize,
        conn_id: u64,
        frame: Frame,
    },
    /// About a blocked client, between its shard and its keys' shards.
    Block(BlockMsg),
    /// Run `f` here at once, inside transaction `tx` (which holds this
    /// shard whole): a command of a script running on another shard, whose
    /// thread waits for the answer `f` sends it (`cmd::scripting`).
    Serve {
        db: usize,
        tx: Option<TxId>,
        f: Box<dyn FnOnce(&mut super::Ctx) + Send>,
    },
    /// Accept on these listeners from now on instead of those on the old
    /// `port` (CONFIG SET port; none: stop listening on TCP, as Redis does
    /// for port 0). Those on `tls-port` stay.
    Listen(Vec<mio::net::TcpListener>),
    /// Accept TLS clients on these instead of the `tls-port` listeners
    /// held now (CONFIG SET bind moves both kinds).
    ListenTls(Vec<mio::net::TcpListener>),
    /// Serve this socket as a client of this shard: the connection a
    /// replica applies its master's stream through (`master`), which the
    /// replication link thread writes on.
    Adopt {
        stream: std::net::TcpStream,
        master: bool,
        /// The address CLIENT LIST shows and CLIENT KILL matches.
        addr: String,
    },
}

/// Where a job's output goes back to: the slot `seq` of the connection at
/// `token` on the home shard, if it is still the client `conn_id`.
#[derive(Clone, Copy)]
pub struct ReplyTo {
    pub token: usize,
    pub conn_id: u64,
    pub seq: u64,
    /// The transaction the job runs in, once it holds locks.
    pub tx: Option<TxId>,
    /// The client tracks its reads (CLIENT TRACKING): the shard running
    /// an op of it remembers the keys the op reads for `conn_id`.
    pub track: bool,
}

/// An op waiting on this shard for key locks to be released.
pub struct Parked {
    pub from: usize,
    pub to: ReplyTo,
    pub part: usize,
    pub op: Op,
}
