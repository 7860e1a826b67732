//! Work that crosses shards: ops sent to a shard's inbox, and the continuation
//! that combines their results on the connection's own shard.

use std::collections::BTreeMap;

use super::ctx::Ctx;
use super::locks::Need;
use crate::resp::Frame;
use crate::store::Value;

/// Work on one shard's store, run on that shard's thread.
pub type StoreOp = Box<dyn FnOnce(&mut Ctx) -> Out + Send>;

/// What a shard is asked to do for another.
pub enum Op {
    /// Store work in database `.0` touching what `.1` says (it runs in a
    /// context on that database); it waits behind key locks held by other
    /// transactions.
    Store(usize, Need, StoreOp),
    /// Store work that may run a Lua script (EVAL, FCALL, an EXEC holding
    /// one): as `Store`, and the loop lends its connections to the
    /// script's busy passes while it runs (`exec::busy`).
    Script(usize, Need, StoreOp),
    /// Client-table work (CLIENT LIST / KILL); run by the shard loop, which owns
    /// the connections.
    Clients(ClientsOp),
    /// Take locks for the message's transaction. `wait`: queue until granted
    /// (answers 1); otherwise answer at once, 1 if granted and 0 if not.
    Lock { need: Need, wait: bool },
    /// Give back the message's transaction's locks on this shard.
    Unlock,
}

impl Op {
    /// Store work in database `db` that may touch any key of the shard.
    pub fn store(db: usize, f: impl FnOnce(&mut Ctx) -> Out + Send + 'static) -> Op {
        Op::Store(db, Need::Whole, Box::new(f))
    }

    /// The same work, marked as one that may run a script (`Op::Script`).
    pub fn scripted(self) -> Op {
        match self {
            Op::Store(db, need, f) => Op::Script(db, need, f),
            other => other,
        }
    }

    /// Store work that touches no key (bookkeeping, figures).
    pub fn keyless(f: impl FnOnce(&mut Ctx) -> Out + Send + 'static) -> Op {
        Op::Store(0, Need::Nothing, Box::new(f))
    }
}

/// The locks a job needs, per shard, taken in ascending shard order.
pub type LockPlan = BTreeMap<usize, Need>;

pub enum ClientsOp {
    /// One CLIENT LIST line per connection, filtered by id and by type
    /// when given.
    List {
        ids: Option<Vec<u64>>,
        kind: Option<ClientType>,
    },
    /// Close the connections matching the filter; answers how many.
    Kill(KillFilter),
    /// CLIENT UNBLOCK: end the wait of client `id` if it is blocked here,
    /// with the timeout reply or (`error`) the UNBLOCKED error; answers 1 or 0.
    Unblock { id: u64, error: bool },
    /// This server became a replica: every blocked client here gets this
    /// error (Redis's `disconnectAllBlockedClients`); answers how many.
    UnblockAll(&'static str),
    /// An ACL change to `user` (every user: None): close its clients if
    /// the user is gone, and its subscribers whose channels it no longer
    /// allows (as Redis 7 does); answers how many closed. `asker` gets
    /// its reply first.
    /// `reloaded` (ACL LOAD): every user but `default` was made anew, and
    /// their clients are closed, as Redis frees the old users.
    AclChanged {
        user: Option<String>,
        reloaded: bool,
        asker: u64,
    },
    /// Evict clients over `maxmemory-clients`, this shard's part
    /// (`exec::client_evict`): after CONFIG SET changed the limit, or
    /// from the shard that planned it; answers 0.
    EvictClients,
}

/// Redis's client types (CLIENT LIST TYPE): a client subscribed to
/// anything is `pubsub`, any other `normal`; ember has no replication, so
/// nothing is a `master` or `replica`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    Normal,
    PubSub,
    Master,
    Replica,
}

impl ClientType {
    /// The type named `word` (`slave` is `replica`), in any case.
    pub fn parse(word: &[u8]) -> Option<ClientType> {
        match word.to_ascii_lowercase().as_slice() {
            b"normal" => Some(ClientType::Normal),
            b"pubsub" => Some(ClientType::PubSub),
            b"master" => Some(ClientType::Master),
            b"replica" | b"slave" => Some(ClientType::Replica),
            _ => None,
        }
    }
}

/// CLIENT KILL's filters; every given one must match.
#[derive(Clone, Debug, Default)]
pub struct KillFilter {
    pub id: Option<u64>,
    pub addr: Option<String>,
    pub laddr: Option<String>,
    /// The id of the client asking, skipped unless SKIPME no.
    pub skip_id: Option<u64>,
    /// Only clients of this type (TYPE).
    pub kind: Option<ClientType>,
    /// Only clients logged in as this user (USER).
    pub user: Option<String>,
    /// The id of the client asking: killed, it gets its reply first.
    pub asker: u64,
}

/// A shard's answer to an op.
pub enum Out {
    Frame(Frame),
    /// A value and its deadline taken or copied from a store (RENAME, COPY).
    Entry(Option<(Value, Option<u64>)>),
    /// Lines or counts from the client table.
    Lines(Vec<String>),
    Count(i64),
    /// INFO's per-shard figures.
    Report(Box<crate::exec::stats::ShardReport>),
    /// MEMORY STATS's per-shard figures.
    Memory(Box<crate::exec::stats::ShardMemory>),
    /// A shard's latency monitor (LATENCY).
    Latency(Box<crate::latency::Monitor>),
    /// A shard's part of a snapshot (SAVE, BGSAVE).
    Snapshot(Box<crate::persist::Part>),
}

impl Out {
    pub fn frame(self) -> Frame {
        match self {
            Out::Frame(f) => f,
            Out::Count(n) => Frame::Integer(n),
            _ => Frame::error("ERR internal: unexpected shard answer"),
        }
    }

    pub fn count(&self) -> i64 {
        match self {
            Out::Frame(Frame::Integer(n)) | Out::Count(n) => *n,
            _ => 0,
        }
    }
}

/// Combines the outputs (in op order) into the reply, or into further work.
pub type Then = Box<dyn FnOnce(Vec<Out>) -> Action>;

/// Ops to run on shards, then what to do with their outputs.
pub struct Job {
    pub ops: Vec<(usize, Op)>,
    pub then: Then,
    /// The job takes several steps: the client's later commands wait for it,
    /// so they observe its effects (single-step jobs keep order by themselves,
    /// since each shard's inbox is FIFO).
    pub ordered: bool,
    /// Keys to lock on each shard before the ops run, so the job is atomic
    /// across shards; released once the job's reply is ready.
    pub lock: Option<LockPlan>,
}

impl Job {
    pub fn new(ops: Vec<(usize, Op)>, then: impl FnOnce(Vec<Out>) -> Action + 'static) -> Job {
        Job {
            ops,
            then: Box::new(then),
            ordered: false,
            lock: None,
        }
    }

    /// Makes the job atomic across shards: it runs once `plan`'s locks are
    /// held. A job with locks is multi-step, so it is ordered too.
    pub fn locked(mut self, plan: LockPlan) -> Job {
        self.lock = Some(plan);
        self.ordered = true;
        self
    }

    /// Takes `plan`'s locks, then goes on with `body`. All shards are first
    /// asked at once without waiting (one round trip when uncontended); if any
    /// refuses, what was granted is given back and the locks are taken one
    /// shard at a time in ascending order, waiting at each, which cannot
    /// deadlock.
    pub fn acquiring(plan: LockPlan, body: Job) -> Job {
        if plan.len() == 1 {
            return Job::in_order(plan, body);
        }
        let ops = plan
            .iter()
            .map(|(s, need)| {
                let need = need.clone();
                (*s, Op::Lock { need, wait: false })
            })
            .collect();
        Job::new(ops, move |outs| {
            let granted: Vec<usize> = plan
                .keys()
                .zip(&outs)
                .filter(|(_, out)| out.count() == 1)
                .map(|(s, _)| *s)
                .collect();
            if granted.len() == plan.len() {
                return Action::Job(body);
            }
            let give_back = granted.into_iter().map(|s| (s, Op::Unlock)).collect();
            Action::Job(Job::new(give_back, move |_| {
                Action::Job(Job::in_order(plan, body))
            }))
        })
    }

    /// Takes `plan`'s locks one shard after another, then runs `body`.
    fn in_order(mut plan: LockPlan, body: Job) -> Job {
        match plan.pop_first() {
            None => body,
            Some((shard, need)) => {
                Job::new(vec![(shard, Op::Lock { need, wait: true })], move |_| {
                    Action::Job(Job::in_order(plan, body))
                })
            }
        }
    }

    /// Marks a multi-step job (see `ordered`).
    pub fn ordered(mut self) -> Job {
        self.ordered = true;
        self
    }

    /// One store op on one shard, in database `db`, whose frame is the reply.
    pub fn single(
        shard: usize,
        db: usize,
        op: impl FnOnce(&mut Ctx) -> Out + Send + 'static,
    ) -> Job {
        Job::new(vec![(shard, Op::store(db, op))], |mut outs| {
            Action::Reply(outs.pop().map_or(Frame::Null, Out::frame))
        })
    }
}

/// What handling a command leads to.
pub enum Action {
    Reply(Frame),
    Job(Job),
    /// Reply, then close the connection once the reply is written (QUIT, protocol errors).
    Close(Frame),
    /// The client waits for a key (BLPOP and friends): the shard's blocking
    /// machinery answers the command's slot later (`shard::blocking`).
    Block(Box<super::wait::Wait>),
    /// EXEC: run the commands queued in the session's transaction, after
    /// taking `plan`'s locks and checking the watched keys with `check`.
    Exec {
        plan: LockPlan,
        check: Job,
    },
    /// From a continuation: the checks passed, run the queued commands.
    RunQueued,
    /// The connection leaves the shard's loop (a replica after PSYNC or
    /// SYNC): once the replies before it are written, its socket and the
    /// input it sent after the command go to the function, on the shard's
    /// thread (which must only hand them on to a thread of their own).
    Handoff(Handoff),
    /// Answered later from another thread (WAIT): the function gets the
    /// [`Responder`] that sends the reply to the client's slot.
    Later(Later),
}

/// See [`Action::Later`].
pub type Later = Box<dyn FnOnce(Responder) + Send>;

/// Sends one reply to a client's slot from any thread: the answer of its
/// slot's only part, through its shard's inbox.
pub struct Responder {
    pub inbox: crossbeam_channel::Sender<Vec<super::Msg>>,
    pub waker: std::sync::Arc<mio::Waker>,
    pub to: super::ReplyTo,
}

impl Responder {
    pub fn send(self, frame: Frame) {
        let done = super::Msg::Done {
            to: self.to,
            part: 0,
            out: Out::Frame(frame),
        };
        if self.inbox.send(vec![done]).is_ok() {
            let _ = self.waker.wake();
        }
    }
}

/// See [`Action::Handoff`].
pub type Handoff = Box<dyn FnOnce(super::handoff::Detached) + Send>;

impl From<Frame> for Action {
    fn from(f: Frame) -> Action {
        Action::Reply(f)
    }
}

impl From<Result<Frame, Frame>> for Action {
    fn from(r: Result<Frame, Frame>) -> Action {
        Action::Reply(r.unwrap_or_else(|e| e))
    }
}
