//! ember: a Redis-compatible cache server that uses every core and stays
//! smooth when millions of keys expire at once.
//!
//! # Thread model
//!
//! ```text
//!             clients (RESP over TCP, pipelined)
//!                |          |           |
//!       SO_REUSEPORT: the kernel spreads connections over the shard threads
//!                v          v           v
//!    +-----------------+ +-----------------+      +-----------------+
//!    | shard 0 (core 0)| | shard 1 (core 1)|  ... | shard N-1       |
//!    | mio Poll        | | mio Poll        |      |                 |
//!    |  connections    | |  connections    |      |                 |
//!    |  Store + expiry | |  Store + expiry |      |                 |
//!    |  inbox + Waker  |<->  inbox + Waker |<---->|                 |
//!    +-----------------+ +-----------------+      +-----------------+
//! ```
//!
//! A key belongs to shard `CRC16(key) mod 16384 mod N` (`{hash tags}`
//! honoured). A connection runs a command inline when its keys are local and
//! otherwise sends it to the owner's inbox; replies return the same way and
//! are written in request order.
//!
//! # Layout
//!
//! - [`config`]: flags, the redis.conf subset, CONFIG GET/SET parameters.
//! - [`resp`]: incremental RESP parser and reply encoder; knows nothing of shards.
//! - [`cmd`]: the command table, argument parsing, one module per command family,
//!   and the dispatcher that decides where a command runs.
//! - [`store`]: one shard's databases: a table per database holding keys (inline up to 22
//!   bytes), values and deadlines together, indexed by a one-cache-line-per-probe hash index
//!   that resizes a step at a time; values (small hashes in a compact listpack, sorted sets
//!   in an order-statistic skiplist), hash-field deadlines, WATCH marks, and the sliced
//!   active-expiry sweep with its deadline windows.
//! - [`shard`]: shard threads, their mio loop, inbox messages, cross-shard jobs, key
//!   locks, and the clients blocked in BLPOP and friends.
//! - [`net`]: listeners and connections with their ordered reply queue.
//! - [`pubsub`]: the channel and pattern registry shared by all shards.
//! - [`feed`]: the propagation feed: the commands that reproduce every change, in Redis's
//!   wire form, ordered across shards (cross-shard transactions as MULTI/EXEC), for the
//!   AOF and replication to read.
//! - [`info`]: per-shard counters and the INFO text.
//! - [`latency`]: the latency monitor behind LATENCY: what blocked a shard, and for how long.
//! - [`util`]: glob matching, key slots, number parsing and formatting, LCS, keeping
//!   housekeeping threads (allocator purging, the lazy-free thread behind UNLINK and
//!   `lazyfree-lazy-*`, `util::lazyfree`) off the shards' cores
//!   and purging paused while a storm is reclaimed (`util::purge`),
//!   the thread CPU clock, the cheap timestamps commands are timed with, and
//!   INCRBYFLOAT's `long double` arithmetic (through `longdouble.c`, built by `build.rs`).
//! - [`logging`]: the stderr logger with Redis's level names.

pub mod cmd;
pub mod config;
pub mod feed;
pub mod info;
pub mod latency;
pub mod logging;
pub mod net;
pub mod pubsub;
pub mod resp;
pub mod shard;
pub mod store;
pub mod util;

/// Starts the shards described by `config` and blocks until they stop.
pub fn run(config: config::Config) -> Result<(), shard::StartError> {
    let addr = format!("{}:{}", config.bind, config.port);
    let shards = config.shards;
    let (_shared, handles) = shard::start(config)?;
    log::info!(
        "ember {} ready to accept connections on {addr} with {shards} shard(s)",
        env!("CARGO_PKG_VERSION")
    );
    for handle in handles {
        let _ = handle.join();
    }
    Ok(())
}
