//! The execution core: what a command runs in and how work travels between
//! shards, with no command and no event loop in it. `cmd` (the commands)
//! and `shard` (the loops that run them) both build on it.
//!
//! - [`ctx`]: a shard's data ([`ShardData`]) and a command's view of it ([`Ctx`]).
//! - [`job`]: the ops a command sends to shards ([`Op`]), their answers
//!   ([`Out`]), the continuation that combines them ([`Job`]) and what a
//!   command leads to ([`Action`]).
//! - [`locks`]: the key locks that make a job atomic across shards.
//! - [`busy`]: the pass a shard's loop makes while its own script runs long.
//! - [`evict`]: when a shard evicts keys over `maxmemory`, and how many.
//! - [`client_evict`]: the clients' memory summed over shards, and which
//!   shard disconnects which clients over `maxmemory-clients`.
//! - [`failover`]: FAILOVER's state and the decision its driver makes.
//! - [`feed`]: the propagation feed: every shard's records in one ordered stream.
//! - [`monitors`]: the clients in MONITOR mode, which every shard feeds.
//! - [`pause`]: CLIENT PAUSE's state, which every shard reads before a command.
//! - [`repl`]: the replication backlog and the replicas it serves.
//! - [`hop`]: the messages between shards ([`Msg`]) and where answers go back.
//! - [`wait`]: blocked clients as the shards pass them around.
//! - [`shared`]: what every shard thread shares ([`Shared`]).
//! - [`stats`]: the figures a shard keeps for INFO.

pub mod busy;
pub mod client_evict;
pub mod ctx;
pub mod evict;
pub mod failover;
pub mod feed;
pub mod handoff;
pub mod hop;
pub mod job;
pub mod locks;
pub mod monitors;
pub mod pause;
pub mod repl;
pub mod scripts;
pub mod shared;
pub mod stats;
pub mod sync_group;
pub mod wait;

pub use ctx::{Ctx, ShardData};
pub use hop::{Msg, Parked, ReplyTo};
pub use job::{
    Action, ClientType, ClientsOp, Handoff, Job, KillFilter, Later, LockPlan, Op, Out, Responder,
    StoreOp, Then,
};
pub use locks::{LockKey, Need, TxId};
pub use shared::{Counters, Peer, Shared};
pub use wait::Wait;
