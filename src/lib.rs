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
//! The modules form layers, each using only those below it
//! (`tests/layers.rs` fails on a path that points up or sideways); the
//! architecture, with pictures, is `docs/DESIGN.md`.
//!
//! ```text
//!   shard            the loops: connections, hops, expiry pacing, blocked clients
//!   net              connections and their ordered reply queues
//!   cmd              admission, the command table, the dispatcher, the families
//!   exec             the execution core: Ctx, jobs, key locks, hops, waits, Shared
//!   persist          RDB files both ways, the persistence state
//!   tracking         client-side caching: the tracking clients and BCAST prefixes
//!   store pubsub latency slowlog acl
//!   resp config
//!   util logging
//! ```
//!
//! - [`util`]: glob matching, key slots, number parsing and formatting, LCS,
//!   the process's memory and CPU figures (`util::memory`), keeping
//!   housekeeping threads off the shards' cores and purging paused while a
//!   storm is reclaimed (`util::purge`), the thread CPU clock, the cheap
//!   timestamps commands are timed with, and INCRBYFLOAT's `long double`
//!   arithmetic (through `longdouble.c`, built by `build.rs`).
//! - [`logging`]: the stderr logger with Redis's level names.
//! - [`resp`]: incremental RESP parser and reply encoder; knows nothing of shards.
//! - [`config`]: every parameter declared once (one row each), from which the config file,
//!   `--name value` flags, CONFIG GET/SET and the values the shards read all come.
//! - [`store`]: one shard's databases: a table per database holding keys (inline up to 22
//!   bytes), values and deadlines together, indexed by a one-cache-line-per-probe hash index
//!   that resizes a step at a time; values (small hashes in a compact listpack, sorted sets
//!   in an order-statistic skiplist), hash-field deadlines, WATCH marks, the sliced
//!   active-expiry sweep with its deadline windows, and the lazy-free thread behind UNLINK
//!   and `lazyfree-lazy-*` (`store::lazyfree`).
//! - [`pubsub`]: the channel, pattern and shard-channel registry shared by all shards.
//! - [`acl`]: the ACL users every shard shares (read-mostly, with a generation a connection
//!   compares at each command), password hashes, the ACL log and the denial counters; what
//!   rules mean for commands is `cmd::acl`'s.
//! - [`latency`]: the latency monitor behind LATENCY: what blocked a shard, and for how long.
//! - [`slowlog`]: the server's slow log behind SLOWLOG: slow commands, cut and redacted.
//! - [`tracking`]: client-side caching (CLIENT TRACKING) as every shard sees it: the
//!   tracking clients with their REDIRECT target and options, the BCAST prefixes and a
//!   directory of connections; which client read which key is each key's shard's
//!   (`store::tracking`).
//! - [`persist`]: RDB snapshots in Redis 7.0's file format (the whole file both
//!   ways over `store::rdb`'s value codec), the start-up load, the state behind
//!   LASTSAVE, INFO persistence and the `save` rules.
//! - [`exec`]: the execution core: a shard's data and a command's context, the ops and
//!   jobs that carry work between shards, key locks, the messages between shards, the
//!   blocked-client types, the state every shard shares, the per-shard INFO figures, and
//!   the propagation feed (`exec::feed`): the commands that reproduce every change, in
//!   Redis's wire form, ordered across shards, for the AOF and replication to read.
//! - [`cmd`]: what happens to a parsed command (`cmd::admit`), the command table
//!   joined to Redis's metadata of every command (`cmd::meta`: flags, ACL categories, key
//!   specs, docs, generated from redis-server 7.0.15),
//!   argument parsing, one module per command family, the dispatcher that decides where
//!   a command runs, and INFO's text.
//! - [`net`]: listeners and connections with their ordered reply queue.
//! - [`shard`]: shard threads and their mio loop (input, hops, the client registry,
//!   expiry pacing), and the clients blocked in BLPOP and friends.

pub mod acl;
pub mod cmd;
pub mod config;
pub mod exec;
pub mod latency;
pub mod logging;
pub mod net;
pub mod persist;
pub mod pubsub;
pub mod resp;
pub mod shard;
pub mod slowlog;
pub mod store;
pub mod tracking;
pub mod util;

/// Starts the shards described by `config` and blocks until they stop.
pub fn run(config: config::Live) -> Result<(), shard::StartError> {
    let addr = format!("{} port {}", config.bind(), config.port());
    let shards = config.shards();
    if !config.logfile().is_empty() {
        logging::use_file(&config.logfile());
    }
    if config.always_show_logo() {
        // The banner itself comes once the ports are bound (`shard::start`).
        logging::use_stdout(true);
    }
    if let Some(path) = config.pidfile() {
        util::pidfile::write(&path);
    }
    let (_shared, handles) = shard::start(config)?;
    log::info!(
        "ember {} on {addr} with {shards} shard(s)",
        env!("CARGO_PKG_VERSION")
    );
    // "Ready to accept connections" comes once the data set is loaded
    // (`shard::loading`), as Redis logs it after its load.
    for handle in handles {
        let _ = handle.join();
    }
    Ok(())
}
