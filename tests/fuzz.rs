//! The fuzz harness of the hardening issue: arbitrary argument vectors,
//! drawn from the command table, driven against a running ember, and raw
//! protocol bytes driven against its RESP parser.
//!
//! There is no nightly toolchain for `cargo-fuzz` here, so this is a stable
//! harness with its own seeded generator (xoshiro), run as an ordinary test.
//!
//! # What it generates
//!
//! - Commands: every row of the command table (`ember::cmd::COMMANDS`),
//!   subcommands of the containers (`CONFIG GET`, `OBJECT ENCODING`,
//!   `CLIENT ...`, `DEBUG EMBER-CHECK`, ...), with argument counts around
//!   each command's arity. Key positions (from the table) take a name from a
//!   small alphabet, plain and `{tag}`ged, so commands meet the same keys
//!   with every type (WRONGTYPE paths) and keys land on every shard (hops,
//!   key locks); the other arguments are numbers at their edges (0, -1,
//!   `i64::MIN`/`MAX`, past them, floats, `inf`, `nan`, `(1`, `[a`, `-`,
//!   `+`), the keywords commands take (EX PX KEEPTTL NX XX GT LT CH INCR
//!   WITHSCORES LIMIT BYSCORE BYLEX REV COUNT MATCH ...), keys, empty and
//!   random bytes and longer strings. Some commands take templates that
//!   reach deeper (SET and ZADD options, numkeys commands, ZRANGE forms,
//!   hash-field TTLs), and some batches wrap commands in WATCH / MULTI /
//!   EXEC. A share of commands is fully random arguments.
//! - Raw protocol: valid frames of such commands, then mutated (flipped,
//!   cut, repeated bytes, wrong `*`/`$` lengths, inline commands), fed to
//!   an in-process [`Parser`] in random chunks, and over a connection of
//!   its own to the server (which replies or closes the connection).
//!
//! Left out, because they stop or stall the server by design: SHUTDOWN
//! (but inside MULTI, where it must be refused), DEBUG SLEEP, PFSELFTEST (ten million elements), CLIENT KILL / PAUSE / REPLY, SUBSCRIBE and MONITOR (they switch
//! the connection's mode), QUIT, MIGRATE (it connects to another server,
//! holding its shard for up to its timeout). Blocking commands always get a timeout of a
//! few milliseconds (0 would block for ever). Sizes are bounded so memory
//! stays small: SETRANGE offsets below 64 KiB, random-member counts small,
//! LCS only on its own keys holding at most a few KB or, rarely, 8 MiB
//! (whose table LCS refuses), occasional FLUSHALLs.
//!
//! # How it drives the server
//!
//! It starts the `ember` binary (`--enable-debug-command yes`, its stderr
//! to a file) once per shard count in `EMBER_FUZZ_SHARDS`, and drives it
//! from several connections at once (`EMBER_FUZZ_CONNS`), each pipelining
//! batches of commands and ending each batch with an `ECHO` of a marker it
//! reads back to. Concurrent connections are what make cross-shard key
//! locks, MULTI/EXEC over several shards, blocking wake-ups and WATCH meet.
//!
//! # What it checks
//!
//! - no panic: the server's stderr never says `panicked at`;
//! - no abort: the process is alive after every batch;
//! - no hang: every batch's marker comes back within 30 s, and the server
//!   still answers PING;
//! - the keyspace invariants, every few batches and at the end: `DEBUG
//!   EMBER-CHECK` (ember's own subcommand: every key in its index, every
//!   deadline in its window, hash-field deadlines filed, no empty
//!   container), and at the end DBSIZE equal to the sum of INFO keyspace;
//! - the in-process parser never panics, and unmutated frames parse back to
//!   their arguments.
//!
//! On a failure it prints the seed, the failing batch, the server's stderr,
//! and the shortest run of commands it could find that still fails on a
//! fresh server (replayed on one connection).
//!
//! # Running it
//!
//! ```text
//! cargo test --test fuzz -- --nocapture                  # short: the CI run
//! EMBER_FUZZ_EXECS=10000000 EMBER_FUZZ_SEED=42 \
//!     cargo test --release --test fuzz -- --nocapture    # long
//! ```
//!
//! Run long ones both ways: release is about three times as fast, and
//! debug also catches arithmetic overflow, which release wraps silently.
//!
//! - `EMBER_FUZZ_EXECS`: commands to send in all (split over the shard
//!   counts), default 60,000; the parser test runs 4x as many inputs.
//! - `EMBER_FUZZ_SEED`: the seed (decimal or 0x hex), default fixed so CI
//!   runs are alike; connection `i` draws from `seed + i`. Threads
//!   interleave as the scheduler wants, so a seed repeats the commands, not
//!   always their order across connections.
//! - `EMBER_FUZZ_SHARDS`: shard counts, one server each, default `1,4`.
//! - `EMBER_FUZZ_CONNS`: connections per server, default 4.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use ember::cmd::{CommandFlags, CommandSpec, COMMANDS};
use ember::resp::{ParseLimits, Parser};
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

type Argv = Vec<Vec<u8>>;

// ---------------------------------------------------------------------------
// Settings

struct Settings {
    execs: u64,
    seed: u64,
    shards: Vec<usize>,
    conns: usize,
}

fn env_u64(name: &str) -> Option<u64> {
    let v = std::env::var(name).ok()?;
    let v = v.trim().replace('_', "");
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

impl Settings {
    fn from_env() -> Settings {
        let shards = std::env::var("EMBER_FUZZ_SHARDS")
            .ok()
            .map(|s| {
                s.split(',')
                    .filter_map(|n| n.trim().parse().ok())
                    .collect::<Vec<usize>>()
            })
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| vec![1, 4]);
        Settings {
            execs: env_u64("EMBER_FUZZ_EXECS").unwrap_or(60_000),
            seed: env_u64("EMBER_FUZZ_SEED").unwrap_or(0x5eed_e4be),
            shards,
            conns: env_u64("EMBER_FUZZ_CONNS").unwrap_or(4).max(1) as usize,
        }
    }
}

// ---------------------------------------------------------------------------
// The generator

struct Gen {
    rng: Xoshiro256PlusPlus,
    /// Rows that may be drawn (see `excluded`).
    specs: Vec<&'static CommandSpec>,
}

/// Key names: few, so commands meet; tagged ones share a slot; plain ones
/// spread over the shards.
const KEYS: &[&str] = &[
    "k1", "k2", "k3", "k4", "s", "l", "h", "z", "{t}a", "{t}b", "{t}c", "{u}x", "{u}y", "foo",
    "bar", "n",
];

const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "3", "5", "10", "-10", "100", "-100", "1000", "0.5", "-0.5", "1.5",
    "3.14", "1e3", "1e-3", "+1", "01", " 1", "1 ", "0x10", "",
];

const EDGES: &[&str] = &[
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775806",
    "-9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "99999999999999999999999",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "-nan",
    "infinity",
    "1e308",
    "1e309",
    "-1e309",
    "5e-324",
    "1.7976931348623157e308",
    "0.1e",
    "1e",
    ".",
    "-",
    "+",
    "(1",
    "(-1",
    "(inf",
    "(-inf",
    "(nan",
    "[a",
    "(a",
    "[",
    "(",
    "[z",
    "-0",
    "0.0",
];

const KEYWORDS: &[&str] = &[
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "PERSIST",
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "GET",
    "WITHSCORES",
    "WITHSCORE",
    "LIMIT",
    "BYSCORE",
    "BYLEX",
    "REV",
    "COUNT",
    "MATCH",
    "TYPE",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "FIELDS",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "RANK",
    "MAXLEN",
    "IDX",
    "LEN",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "REPLACE",
    "DB",
    "ABSTTL",
    "IDLETIME",
    "FREQ",
    "ENCODING",
    "REFCOUNT",
    "HELP",
    "NOVALUES",
    "string",
    "list",
    "hash",
    "set",
    "zset",
    "*",
    "k*",
    "?",
    "[a-z]*",
    "\\",
    "ASYNC",
    "SYNC",
    "ID",
    "FNX",
    "FXX",
];

/// Commands and subcommands that stop or stall the server by design, or
/// change how a connection's replies come (see the module docs).
fn excluded(spec: &CommandSpec) -> bool {
    matches!(
        spec.name,
        // PFSELFTEST adds ten million elements: a second in a release
        // build, a minute per call in a debug one. SYNC and PSYNC turn the
        // connection into a replica's link, REPLICAOF the server into a
        // replica (of a random address), WAIT 1 0 waits for good. MIGRATE
        // connects to a random address (and resolves a random host name),
        // holding its shard for up to its timeout, as Redis's holds it.
        "shutdown"
            | "migrate"
            | "quit"
            | "subscribe"
            | "psubscribe"
            | "ssubscribe"
            | "monitor"
            | "lcs"
            | "pfselftest"
            | "sync"
            | "psync"
            | "replicaof"
            | "slaveof"
            | "wait"
    )
}

const SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "object",
        &["ENCODING", "FREQ", "IDLETIME", "REFCOUNT", "HELP", "NOPE"],
    ),
    (
        "client",
        &[
            "ID", "GETNAME", "SETNAME", "INFO", "LIST", "UNBLOCK", "NO-EVICT", "NO-TOUCH",
            "SETINFO", "HELP", "TRACKING", "NOPE",
        ],
    ),
    (
        "pubsub",
        &[
            "CHANNELS",
            "NUMSUB",
            "NUMPAT",
            "SHARDCHANNELS",
            "SHARDNUMSUB",
            "HELP",
            "NOPE",
        ],
    ),
    (
        "command",
        &[
            "COUNT",
            "LIST",
            "INFO",
            "DOCS",
            "GETKEYS",
            "GETKEYSANDFLAGS",
            "HELP",
            "NOPE",
        ],
    ),
    ("config", &["GET", "SET", "RESETSTAT", "HELP", "NOPE"]),
    // Not SETUSER, DELUSER or LOAD: they could lock the harness out.
    (
        "acl",
        &[
            "CAT", "WHOAMI", "USERS", "LIST", "GETUSER", "GENPASS", "LOG", "DRYRUN", "HELP", "NOPE",
        ],
    ),
    (
        "latency",
        &[
            "LATEST",
            "DOCTOR",
            "HISTORY",
            "RESET",
            "HELP",
            "GRAPH",
            "HISTOGRAM",
            "NOPE",
        ],
    ),
    (
        "debug",
        &["OBJECT", "SET-ACTIVE-EXPIRE", "HELP", "EMBER-CHECK", "NOPE"],
    ),
];

/// CONFIG SET parameters and values that cannot cut the harness off (no
/// `timeout`, `maxclients`, `proto-max-bulk-len`, `loglevel`, no port
/// that binds).
const CONFIG_SETS: &[(&str, &[&str])] = &[
    ("hz", &["1", "10", "100", "500", "0", "-1", "x"]),
    ("active-expire-effort", &["1", "5", "10", "0", "11"]),
    (
        "notify-keyspace-events",
        &["", "KEA", "Ex", "Kg$lshz", "AKE", "xyz!", "n"],
    ),
    (
        "hash-max-listpack-entries",
        &["0", "1", "2", "128", "512", "-1"],
    ),
    ("hash-max-listpack-value", &["0", "1", "8", "64", "1kb"]),
    ("latency-monitor-threshold", &["0", "1", "100"]),
    ("active-expire-storm-cpu-perc", &["10", "90", "100", "0"]),
    ("active-expire-slice-us", &["10", "100", "1000"]),
    ("save", &[""]),
    ("maxmemory", &["0", "1gb"]),
    // Only values CONFIG SET refuses: a good one moves the listeners away.
    ("port", &["x", "65536", "-1"]),
];

/// Timeouts of blocking commands: short, or wrong (never 0: for ever).
const TIMEOUTS: &[&str] = &[
    "0.01", "0.005", "0.001", "0.02", "0.0001", "-1", "abc", "", "-0.5",
];

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
            specs: COMMANDS.iter().filter(|s| !excluded(s)).collect(),
        }
    }

    fn spec(&mut self) -> &'static CommandSpec {
        let i = self.below(self.specs.len());
        self.specs[i]
    }

    fn below(&mut self, n: usize) -> usize {
        (self.rng.next_u64() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }

    fn key(&mut self) -> Vec<u8> {
        if self.chance(3) {
            return self.random_bytes(6);
        }
        self.pick(KEYS).as_bytes().to_vec()
    }

    fn random_bytes(&mut self, max: usize) -> Vec<u8> {
        let len = self.below(max + 1);
        (0..len).map(|_| self.rng.next_u64() as u8).collect()
    }

    fn value(&mut self) -> Vec<u8> {
        match self.below(10) {
            0 => Vec::new(),
            1 => self.random_bytes(12),
            2 => {
                // Longer: past the compact forms' 64-byte limit, sometimes
                // past embstr and the listpack's, rarely a few KB.
                let len = if self.chance(5) {
                    1000 + self.below(4000)
                } else {
                    40 + self.below(100)
                };
                vec![b'a' + self.below(3) as u8; len]
            }
            3 | 4 => self.pick(NUMBERS).as_bytes().to_vec(),
            5 => format!("{}", self.rng.next_u64() as i64 >> self.below(64)).into_bytes(),
            _ => {
                let words = ["a", "b", "c", "v", "x", "field", "m1", "m2", "m3", "hello"];
                self.pick(&words).as_bytes().to_vec()
            }
        }
    }

    fn number(&mut self) -> Vec<u8> {
        if self.chance(25) {
            self.pick(EDGES).as_bytes().to_vec()
        } else {
            self.pick(NUMBERS).as_bytes().to_vec()
        }
    }

    /// Any argument at all.
    fn arg(&mut self) -> Vec<u8> {
        match self.below(10) {
            0..=2 => self.number(),
            3 | 4 => self.pick(KEYWORDS).as_bytes().to_vec(),
            5 | 6 => self.key(),
            _ => self.value(),
        }
    }

    /// A small count, or an edge.
    fn small_count(&mut self) -> Vec<u8> {
        if self.chance(10) {
            return self
                .pick(&["-9223372036854775808", "9223372036854775807", "x", "-0", ""])
                .as_bytes()
                .to_vec();
        }
        (self.below(21) as i64 - 8).to_string().into_bytes()
    }

    fn argc_for(&mut self, spec: &CommandSpec) -> usize {
        let base = spec.arity.unsigned_abs() as usize;
        let argc = if spec.arity >= 0 {
            base
        } else {
            base + self.below(5)
        };
        // Sometimes one too few or too many: the arity errors.
        match self.below(20) {
            0 => argc.saturating_sub(1).max(1),
            1 => argc + 1,
            _ => argc,
        }
    }

    /// One command for the pipeline.
    fn command(&mut self) -> Argv {
        // Rare whole-keyspace resets keep memory bounded over long runs.
        if self.below(3000) == 0 {
            return words(&[self.pick(&["FLUSHALL", "FLUSHDB", "FLUSHALL ASYNC"])]);
        }
        let mut spec = self.spec();
        while spec.name.starts_with("flush") {
            spec = self.spec();
        }
        let name = spec.name;
        if let Some(argv) = self.template(name) {
            return argv;
        }
        let argc = self.argc_for(spec);
        let mut argv: Argv = vec![self.case(name)];
        let random_mode = self.chance(15) && !spec.flags.contains(CommandFlags::BLOCKING);
        if let Some(&(_, subs)) = SUBCOMMANDS.iter().find(|(c, _)| *c == name) {
            argv.push(self.pick(subs).as_bytes().to_vec());
            if let Some(sub) = self.subcommand(name, &argv[1]) {
                return sub;
            }
        }
        while argv.len() < argc {
            argv.push(if random_mode { self.arg() } else { Vec::new() });
        }
        if !random_mode {
            // Keys where the table says; the rest any argument.
            let keys: Vec<usize> = spec
                .key_positions(&argv.iter().map(|a| a.clone().into()).collect::<Vec<_>>())
                .collect();
            for (i, arg) in argv.iter_mut().enumerate().skip(1) {
                if i == 1 && spec.container {
                    continue;
                }
                *arg = if keys.contains(&i) {
                    self.key()
                } else {
                    self.arg()
                };
            }
        }
        if spec.flags.contains(CommandFlags::BLOCKING) {
            self.fix_timeout(&mut argv);
        }
        // SETRANGE at any offset below 512 MB is valid, and allocates it.
        if name == "setrange" && argv.len() > 2 {
            argv[2] = self.offset();
        }
        if (name.ends_with("randmember") || name == "hrandfield") && argv.len() > 2 {
            argv[2] = self.small_count();
        }
        argv
    }

    fn offset(&mut self) -> Vec<u8> {
        self.pick(&[
            "0",
            "1",
            "5",
            "-1",
            "100",
            "4095",
            "65535",
            "x",
            "536870912",
            "9223372036854775807",
        ])
        .as_bytes()
        .to_vec()
    }

    fn case(&mut self, name: &str) -> Vec<u8> {
        if self.chance(20) {
            name.to_ascii_uppercase().into_bytes()
        } else {
            name.as_bytes().to_vec()
        }
    }

    fn fix_timeout(&mut self, argv: &mut Argv) {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        let at = if name == "blmpop" || name == "bzmpop" {
            1
        } else {
            argv.len() - 1
        };
        if at < argv.len() && at > 0 {
            argv[at] = self.pick(TIMEOUTS).as_bytes().to_vec();
        }
    }

    fn subcommand(&mut self, name: &str, sub: &[u8]) -> Option<Argv> {
        let sub = String::from_utf8_lossy(sub).to_ascii_uppercase();
        let mut argv = vec![name.as_bytes().to_vec(), sub.as_bytes().to_vec()];
        match (name, sub.as_str()) {
            ("config", "SET") => {
                let (param, values) = CONFIG_SETS[self.below(CONFIG_SETS.len())];
                argv.push(param.as_bytes().to_vec());
                argv.push(self.pick(values).as_bytes().to_vec());
            }
            ("config", "GET") => {
                let pattern = self.pick(&["*", "hz", "*max*", "notify*", "port", "nope", "["]);
                argv.push(pattern.as_bytes().to_vec());
            }
            ("debug", "SET-ACTIVE-EXPIRE") => {
                argv.push(self.pick(&["0", "1", "1", "1"]).as_bytes().to_vec());
            }
            ("debug", "OBJECT") | ("object", _) => {
                let key = self.key();
                argv.push(key);
            }
            ("client", "UNBLOCK") => {
                argv.push(self.below(12).to_string().into_bytes());
                if self.chance(50) {
                    argv.push(self.pick(&["ERROR", "TIMEOUT", "x"]).as_bytes().to_vec());
                }
            }
            ("client", "SETNAME") => argv.push(self.pick(&["fuzz", "a b", ""]).as_bytes().to_vec()),
            ("client", "LIST") if self.chance(50) => {
                argv.push(self.pick(&["TYPE", "ID"]).as_bytes().to_vec());
                argv.push(
                    self.pick(&["normal", "pubsub", "1", "x"])
                        .as_bytes()
                        .to_vec(),
                );
            }
            ("command", "GETKEYS") | ("command", "GETKEYSANDFLAGS") => {
                let inner = self.command();
                argv.extend(inner);
            }
            ("command", "INFO") | ("command", "DOCS") => {
                for _ in 0..self.below(3) {
                    let spec = self.spec();
                    argv.push(spec.name.as_bytes().to_vec());
                }
            }
            _ => {
                for _ in 0..self.below(3) {
                    let a = self.arg();
                    argv.push(a);
                }
            }
        }
        Some(argv)
    }

    /// Commands whose interesting paths need their arguments in a shape.
    fn template(&mut self, name: &str) -> Option<Argv> {
        if !self.chance(50) {
            return None;
        }
        let k = self.key();
        let v = self.value();
        let mut argv: Argv = vec![name.as_bytes().to_vec()];
        match name {
            "set" => {
                argv.extend([k, v]);
                for _ in 0..self.below(4) {
                    match self.below(8) {
                        0 => argv.push(b"NX".to_vec()),
                        1 => argv.push(b"XX".to_vec()),
                        2 => argv.push(b"GET".to_vec()),
                        3 => argv.push(b"KEEPTTL".to_vec()),
                        _ => {
                            let unit = self.pick(&["EX", "PX", "EXAT", "PXAT"]);
                            argv.push(unit.as_bytes().to_vec());
                            argv.push(self.ttl(unit));
                        }
                    }
                }
            }
            "expire" | "pexpire" | "expireat" | "pexpireat" | "getex" | "setex" | "psetex" => {
                let unit = match name {
                    "expire" | "setex" => "EX",
                    "pexpire" | "psetex" => "PX",
                    "expireat" => "EXAT",
                    "pexpireat" => "PXAT",
                    _ => self.pick(&["EX", "PX", "EXAT", "PXAT", "PERSIST"]),
                };
                argv.push(k);
                if name == "getex" {
                    argv.push(unit.as_bytes().to_vec());
                    if unit != "PERSIST" {
                        argv.push(self.ttl(unit));
                    }
                } else {
                    argv.push(self.ttl(unit));
                    if name.starts_with("set") || name.starts_with("pset") {
                        argv.push(v);
                    } else if self.chance(40) {
                        let flag = self.pick(&["NX", "XX", "GT", "LT", "nx", "XY"]);
                        argv.push(flag.as_bytes().to_vec());
                    }
                }
            }
            "zadd" => {
                argv.push(k);
                for _ in 0..self.below(3) {
                    let flag = self.pick(&["NX", "XX", "GT", "LT", "CH", "INCR"]);
                    argv.push(flag.as_bytes().to_vec());
                }
                for _ in 0..1 + self.below(4) {
                    argv.push(self.score());
                    argv.push(self.member());
                }
            }
            "zrange" | "zrangestore" => {
                if name == "zrangestore" {
                    argv.push(self.key());
                }
                argv.push(k);
                let (lo, hi, form) = match self.below(3) {
                    0 => (self.number(), self.number(), None),
                    1 => (self.score(), self.score(), Some("BYSCORE")),
                    _ => (self.lex(), self.lex(), Some("BYLEX")),
                };
                argv.extend([lo, hi]);
                if let Some(f) = form {
                    argv.push(f.as_bytes().to_vec());
                }
                if self.chance(30) {
                    argv.push(b"REV".to_vec());
                }
                if self.chance(30) {
                    argv.extend([b"LIMIT".to_vec(), self.number(), self.number()]);
                }
                if name == "zrange" && self.chance(30) {
                    argv.push(b"WITHSCORES".to_vec());
                }
            }
            "zrangebyscore" | "zrevrangebyscore" | "zcount" | "zremrangebyscore" => {
                argv.extend([k, self.score(), self.score()]);
                if name.contains("range") && !name.starts_with("zrem") {
                    if self.chance(40) {
                        argv.push(b"WITHSCORES".to_vec());
                    }
                    if self.chance(40) {
                        argv.extend([b"LIMIT".to_vec(), self.number(), self.number()]);
                    }
                }
            }
            "zrangebylex" | "zrevrangebylex" | "zlexcount" | "zremrangebylex" => {
                argv.extend([k, self.lex(), self.lex()]);
                if name.contains("range") && !name.starts_with("zrem") && self.chance(40) {
                    argv.extend([b"LIMIT".to_vec(), self.number(), self.number()]);
                }
            }
            "zunionstore" | "zinterstore" | "zdiffstore" | "zunion" | "zinter" | "zdiff"
            | "zintercard" | "sintercard" | "lmpop" | "zmpop" | "blmpop" | "bzmpop" => {
                if name.ends_with("store") {
                    argv.push(k);
                }
                if name.starts_with('b') {
                    argv.push(self.pick(TIMEOUTS).as_bytes().to_vec());
                }
                let n = self.below(4);
                argv.push(if self.chance(90) {
                    n.to_string().into_bytes()
                } else {
                    self.number()
                });
                for _ in 0..n {
                    argv.push(self.key());
                }
                if name.contains("mpop") {
                    let end = self.pick(&["LEFT", "RIGHT", "MIN", "MAX", "x"]);
                    argv.push(end.as_bytes().to_vec());
                    if self.chance(50) {
                        argv.extend([b"COUNT".to_vec(), self.small_count()]);
                    }
                } else if name.contains("card") {
                    if self.chance(50) {
                        argv.extend([b"LIMIT".to_vec(), self.number()]);
                    }
                } else {
                    if self.chance(30) {
                        argv.push(b"WEIGHTS".to_vec());
                        for _ in 0..n {
                            argv.push(self.score());
                        }
                    }
                    if self.chance(30) {
                        let agg = self.pick(&["SUM", "MIN", "MAX", "AVG"]);
                        argv.extend([b"AGGREGATE".to_vec(), agg.as_bytes().to_vec()]);
                    }
                    if !name.ends_with("store") && self.chance(30) {
                        argv.push(b"WITHSCORES".to_vec());
                    }
                }
            }
            "hexpire" | "hpexpire" | "hexpireat" | "hpexpireat" | "hpersist" | "httl" | "hpttl"
            | "hexpiretime" | "hpexpiretime" => {
                argv.push(k);
                if name.contains("expire") && !name.contains("time") {
                    let unit = if name.starts_with("hp") { "PX" } else { "EX" };
                    let unit = if name.ends_with("at") {
                        if unit == "PX" {
                            "PXAT"
                        } else {
                            "EXAT"
                        }
                    } else {
                        unit
                    };
                    argv.push(self.ttl(unit));
                    if self.chance(30) {
                        let flag = self.pick(&["NX", "XX", "GT", "LT"]);
                        argv.push(flag.as_bytes().to_vec());
                    }
                }
                argv.push(b"FIELDS".to_vec());
                let n = self.below(4);
                argv.push(if self.chance(90) {
                    n.to_string().into_bytes()
                } else {
                    self.number()
                });
                for _ in 0..n {
                    argv.push(self.field());
                }
            }
            "hset" | "hmset" | "hsetnx" => {
                argv.push(k);
                for _ in 0..if name == "hsetnx" {
                    1
                } else {
                    1 + self.below(4)
                } {
                    argv.push(self.field());
                    argv.push(self.value());
                }
            }
            "rpush" | "lpush" | "sadd" | "srem" | "hdel" | "zrem" => {
                argv.push(k);
                for _ in 0..1 + self.below(5) {
                    argv.push(if name.starts_with('h') {
                        self.field()
                    } else {
                        self.member()
                    });
                }
            }
            "blpop" | "brpop" | "bzpopmin" | "bzpopmax" => {
                for _ in 0..1 + self.below(3) {
                    argv.push(self.key());
                }
                argv.push(self.pick(TIMEOUTS).as_bytes().to_vec());
            }
            "lmove" | "blmove" => {
                argv.extend([k, self.key()]);
                argv.push(
                    self.pick(&["LEFT", "RIGHT", "left", "UP"])
                        .as_bytes()
                        .to_vec(),
                );
                argv.push(self.pick(&["LEFT", "RIGHT", "right"]).as_bytes().to_vec());
                if name == "blmove" {
                    argv.push(self.pick(TIMEOUTS).as_bytes().to_vec());
                }
            }
            "scan" | "sscan" | "hscan" | "zscan" => {
                if name != "scan" {
                    argv.push(k);
                }
                argv.push(
                    self.pick(&["0", "0", "1", "5", "100", "x", "-1"])
                        .as_bytes()
                        .to_vec(),
                );
                for _ in 0..self.below(3) {
                    match self.below(3) {
                        0 => argv.extend([b"COUNT".to_vec(), self.small_count()]),
                        1 => {
                            let pattern = self.pick(&["*", "k*", "{t}*", "?", "[a-", "\\"]);
                            argv.extend([b"MATCH".to_vec(), pattern.as_bytes().to_vec()]);
                        }
                        _ => {
                            let ty = self.pick(&["string", "list", "hash", "zset", "nope"]);
                            argv.extend([b"TYPE".to_vec(), ty.as_bytes().to_vec()]);
                        }
                    }
                }
            }
            "copy" => {
                argv.extend([k, self.key()]);
                if self.chance(40) {
                    argv.extend([b"DB".to_vec(), self.db()]);
                }
                if self.chance(40) {
                    argv.push(b"REPLACE".to_vec());
                }
            }
            "move" => argv.extend([k, self.db()]),
            "select" => argv.push(self.db()),
            "swapdb" => argv.extend([self.db(), self.db()]),
            "hello" => {
                argv.push(self.pick(&["2", "3", "3", "4", "x"]).as_bytes().to_vec());
                if self.chance(30) {
                    argv.extend([b"SETNAME".to_vec(), b"fz".to_vec()]);
                }
            }
            "incrbyfloat" | "zincrby" | "hincrbyfloat" => {
                argv.push(k);
                if name == "hincrbyfloat" {
                    argv.push(self.field());
                }
                let by = self.score();
                if name == "zincrby" {
                    argv.extend([by, self.member()]);
                } else {
                    argv.push(by);
                }
            }
            "multi" => return Some(words(&["MULTI"])),
            _ => return None,
        }
        Some(argv)
    }

    fn ttl(&mut self, unit: &str) -> Vec<u8> {
        if self.chance(15) {
            return self.pick(EDGES).as_bytes().to_vec();
        }
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        // Mostly short, so keys and fields expire while the run goes on:
        // the sweep, lazy expiry and the deadline windows all get work.
        let ms = match self.below(6) {
            0 => self.below(5) as i64,
            1 => self.below(200) as i64,
            2 => self.below(3000) as i64,
            3 => 100_000 + self.below(1_000_000) as i64,
            4 => -(self.below(3000) as i64),
            _ => self.below(50) as i64,
        };
        let n = match unit {
            "EX" => ms / 1000 + i64::from(self.chance(50)),
            "PX" => ms,
            "EXAT" => (now_ms + ms) / 1000,
            _ => now_ms + ms,
        };
        n.to_string().into_bytes()
    }

    fn score(&mut self) -> Vec<u8> {
        if self.chance(30) {
            return self.pick(EDGES).as_bytes().to_vec();
        }
        self.pick(&[
            "0", "1", "-1", "2.5", "10", "1e10", "-3", "(1", "(2", "-inf", "+inf",
        ])
        .as_bytes()
        .to_vec()
    }

    fn lex(&mut self) -> Vec<u8> {
        self.pick(&[
            "-", "+", "[a", "(a", "[m2", "(m3", "[", "a", "(", "[z", "+inf",
        ])
        .as_bytes()
        .to_vec()
    }

    fn member(&mut self) -> Vec<u8> {
        if self.chance(10) {
            return self.value();
        }
        self.pick(&["m1", "m2", "m3", "a", "b", "1", "2", "-5", "100000", ""])
            .as_bytes()
            .to_vec()
    }

    fn field(&mut self) -> Vec<u8> {
        if self.chance(10) {
            return self.value();
        }
        self.pick(&["f1", "f2", "f3", "a", "b", ""])
            .as_bytes()
            .to_vec()
    }

    fn db(&mut self) -> Vec<u8> {
        self.pick(&["0", "0", "1", "2", "15", "16", "-1", "x"])
            .as_bytes()
            .to_vec()
    }

    /// LCS on keys of its own, each set first to at most a few KB, or now
    /// and then to 8 MiB (a table LCS must refuse).
    fn lcs(&mut self) -> Vec<Argv> {
        let keys = ["{lcs}a", "{lcs}b", "lcs-x"];
        let mut out = Vec::new();
        for key in keys {
            if self.chance(1) {
                // 8 MiB: LCS with any but an empty string must refuse its
                // table (over proto-max-bulk-len), not try to allocate it.
                out.push(words(&["SETRANGE", key, "8388607", "x"]));
            } else if self.chance(60) {
                let max = if self.chance(10) { 3000 } else { 40 };
                let len = self.below(max);
                let v: Vec<u8> = (0..len).map(|_| b"abc"[self.below(3)]).collect();
                out.push(vec![b"SET".to_vec(), key.as_bytes().to_vec(), v]);
            }
        }
        let a = keys[self.below(3)].as_bytes().to_vec();
        let b = keys[self.below(3)].as_bytes().to_vec();
        let mut lcs = vec![b"LCS".to_vec(), a, b];
        for _ in 0..self.below(3) {
            match self.below(4) {
                0 => lcs.push(b"LEN".to_vec()),
                1 => lcs.push(b"IDX".to_vec()),
                2 => lcs.extend([b"MINMATCHLEN".to_vec(), self.number()]),
                _ => lcs.push(b"WITHMATCHLEN".to_vec()),
            }
        }
        out.push(lcs);
        out
    }

    /// A batch for the pipeline: commands, sometimes in a transaction.
    fn batch(&mut self, len: usize) -> Vec<Argv> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            match self.below(40) {
                0 => {
                    // A transaction over keys on any shards.
                    if self.chance(40) {
                        let mut watch = vec![b"WATCH".to_vec()];
                        for _ in 0..1 + self.below(3) {
                            watch.push(self.key());
                        }
                        out.push(watch);
                    }
                    out.push(words(&["MULTI"]));
                    if self.chance(5) {
                        // Refused when queued (no_multi): EXEC must not stop
                        // the server. Right after MULTI, before a random
                        // DISCARD or RESET could end the transaction.
                        out.push(words(&["SHUTDOWN", "NOSAVE"]));
                    }
                    for _ in 0..1 + self.below(6) {
                        let c = self.command();
                        out.push(c);
                    }
                    out.push(words(&[self.pick(&["EXEC", "EXEC", "EXEC", "DISCARD"])]));
                }
                1 => {
                    let l = self.lcs();
                    out.extend(l);
                }
                _ => {
                    let c = self.command();
                    out.push(c);
                }
            }
        }
        out
    }
}

fn words(w: &[&str]) -> Argv {
    w.iter()
        .flat_map(|s| s.split(' '))
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

fn encode(argv: &Argv, out: &mut Vec<u8>) {
    out.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
    for a in argv {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

fn show(argv: &Argv) -> String {
    argv.iter()
        .map(|a| {
            let s: String = a
                .iter()
                .flat_map(|&b| std::ascii::escape_default(b))
                .map(char::from)
                .collect();
            format!("\"{}\"", s.replace('"', "\\\""))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------
// Raw protocol

/// Valid frames of generated commands, then mutated.
fn raw_input(g: &mut Gen) -> (Vec<u8>, Option<Vec<Argv>>) {
    let mut cmds = Vec::new();
    for _ in 0..1 + g.below(4) {
        let c = g.command();
        // Nothing that blocks or changes the connection: the raw connection
        // is read to its end.
        let name = String::from_utf8_lossy(&c[0]).to_ascii_lowercase();
        if name.starts_with('b') || name == "debug" || name == "client" || name == "multi" {
            continue;
        }
        cmds.push(c);
    }
    let mut bytes = Vec::new();
    if g.chance(20) {
        // Inline commands.
        for c in &cmds {
            let line: Vec<String> = c
                .iter()
                .map(|a| {
                    let s = String::from_utf8_lossy(a).replace(['\r', '\n', ' ', '"', '\''], "");
                    match g.below(4) {
                        0 => format!("\"{s}\""),
                        1 => format!("'{s}'"),
                        _ if s.is_empty() => "\"\"".to_string(),
                        _ => s,
                    }
                })
                .collect();
            bytes.extend_from_slice(line.join(" ").as_bytes());
            bytes.extend_from_slice(if g.chance(50) { b"\r\n" } else { b"\n" });
        }
    } else {
        for c in &cmds {
            encode(c, &mut bytes);
        }
    }
    if g.chance(30) {
        let valid = (!cmds.is_empty()).then_some(cmds);
        return (bytes, valid);
    }
    let mutations = 1 + g.below(4);
    for _ in 0..mutations {
        if bytes.is_empty() {
            bytes.push(b'*');
        }
        let at = g.below(bytes.len());
        match g.below(9) {
            0 => bytes[at] ^= 1 << g.below(8),
            1 => bytes[at] = g.rng.next_u64() as u8,
            2 => bytes.truncate(at),
            3 => {
                let end = (at + 1 + g.below(8)).min(bytes.len());
                let piece = bytes[at..end].to_vec();
                bytes.splice(at..at, piece);
            }
            4 => {
                let junk = g.pick(&[
                    "*-1\r\n",
                    "*0\r\n",
                    "$-1\r\n",
                    "*2147483648\r\n",
                    "*1\r\n$100000000\r\n",
                    "$9223372036854775808\r\n",
                    "*3\r\n",
                    "\r\n",
                    "\n",
                    "\"",
                    "'",
                    "*1\r\n$0\r\n\r\n",
                    "*1\r\n$4\r\nPING\r\n",
                    "*x\r\n",
                    "$",
                    "*",
                    "\0",
                    "PING\r\n",
                ]);
                bytes.splice(at..at, junk.bytes());
            }
            5 => {
                bytes.remove(at);
            }
            6 => {
                // A length line made wrong.
                if let Some(p) = bytes[at..].iter().position(|&b| b == b'$' || b == b'*') {
                    let n = g.pick(&["0", "1", "-2", "99", "4294967297", "x"]);
                    bytes.splice(at + p + 1..at + p + 1, n.bytes());
                }
            }
            7 => bytes.insert(at, b"\r\n\"'\\ "[g.below(6)]),
            _ => bytes.extend(g.random_bytes(16)),
        }
    }
    (bytes, None)
}

fn feed_parser(bytes: &[u8], chunk: usize, limits: ParseLimits) -> Result<Vec<Argv>, String> {
    let mut p = Parser::new(limits);
    let mut buf = BytesMut::new();
    let mut got = Vec::new();
    for piece in bytes.chunks(chunk.max(1)) {
        buf.extend_from_slice(piece);
        loop {
            match p.next_command(&mut buf) {
                Ok(Some(argv)) => got.push(argv.iter().map(|a| a.to_vec()).collect()),
                Ok(None) => break,
                Err(e) => {
                    if !e.0.starts_with("Protocol error: ") {
                        return Err(format!("error text {:?}", e.0));
                    }
                    return Ok(got);
                }
            }
        }
    }
    Ok(got)
}

/// The RESP parser alone, in-process: mutated frames in random chunks.
#[test]
fn fuzz_parser() {
    let settings = Settings::from_env();
    let n = settings.execs * 4;
    let mut g = Gen::new(settings.seed ^ 0xfa75e);
    let limits = [
        ParseLimits::default(),
        ParseLimits {
            max_bulk_len: 64,
            max_multibulk_len: 8,
            max_inline_len: 64,
        },
    ];
    let (mut panics, mut roundtrips) = (0u64, 0u64);
    for i in 0..n {
        let (bytes, valid) = raw_input(&mut g);
        let max = if g.chance(20) { 4 } else { 64 };
        let chunk = 1 + g.below(max);
        let l = limits[g.below(2)];
        let result = std::panic::catch_unwind(|| feed_parser(&bytes, chunk, l));
        let fail = match result {
            Err(_) => {
                panics += 1;
                Some("panicked".to_string())
            }
            Ok(Err(e)) => Some(e),
            Ok(Ok(got)) => match &valid {
                Some(cmds) if l.max_bulk_len == ParseLimits::default().max_bulk_len => {
                    roundtrips += 1;
                    let multibulk = bytes.first() == Some(&b'*');
                    (multibulk && &got != cmds).then(|| format!("parsed back as {got:?}"))
                }
                _ => None,
            },
        };
        if let Some(why) = fail {
            panic!(
                "parser input {i} (seed {:#x}, chunk {chunk}, limits {l:?}) failed: {why}\ninput: {:?}",
                settings.seed,
                String::from_utf8_lossy(&bytes)
            );
        }
    }
    println!("fuzz_parser: {n} inputs, {roundtrips} valid ones parsed back, {panics} panics");
}

// ---------------------------------------------------------------------------
// Talking to the server

/// A running ember whose stderr goes to a file, killed when dropped.
struct Server {
    child: Child,
    port: u16,
    stderr: std::path::PathBuf,
}

impl Server {
    fn start(shards: usize, tag: &str) -> Server {
        let dir = std::env::temp_dir();
        for attempt in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let stderr = dir.join(format!(
                "ember-fuzz-{}-{tag}-{attempt}.err",
                std::process::id()
            ));
            let file = std::fs::File::create(&stderr).unwrap();
            // SAVE, BGSAVE and DEBUG RELOAD write dump.rdb in the working
            // directory: one of the server's own, not the repository's.
            let workdir = stderr.with_extension("dir");
            std::fs::create_dir_all(&workdir).unwrap();
            let mut child = Command::new(env!("CARGO_BIN_EXE_ember"))
                .current_dir(&workdir)
                .args(["--port", &port.to_string(), "--shards", &shards.to_string()])
                .args(["--loglevel", "warning", "--enable-debug-command", "yes"])
                .args(["--save", ""])
                .stdout(Stdio::null())
                .stderr(file)
                .spawn()
                .expect("spawn ember");
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                if let Ok(mut c) = Conn::connect(port) {
                    if c.call(&words(&["PING"])).is_ok() {
                        return Server {
                            child,
                            port,
                            stderr,
                        };
                    }
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("ember did not start");
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn stderr_text(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    fn panicked(&self) -> bool {
        self.stderr_text().contains("panicked at")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.stderr);
        let _ = std::fs::remove_dir_all(self.stderr.with_extension("dir"));
    }
}

/// A decoded reply, RESP2 or RESP3.
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    Simple(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Vec<u8>),
    Nil,
    Many(Vec<Reply>),
}

struct Conn {
    reader: BufReader<TcpStream>,
    stream: TcpStream,
}

impl Conn {
    fn connect(port: u16) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream.try_clone()?),
            stream,
        })
    }

    fn line(&mut self) -> std::io::Result<Vec<u8>> {
        let mut line = Vec::new();
        if self.reader.read_until(b'\n', &mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "connection closed",
            ));
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        Ok(line)
    }

    fn read(&mut self) -> std::io::Result<Reply> {
        let bad =
            |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
        let line = self.line()?;
        let Some((&kind, rest)) = line.split_first() else {
            return Err(bad("empty reply line"));
        };
        let text = String::from_utf8_lossy(rest).into_owned();
        let int = |t: &str| {
            t.parse::<i64>()
                .map_err(|_| bad(&format!("bad length {t:?}")))
        };
        Ok(match kind {
            b'+' => Reply::Simple(rest.to_vec()),
            b'-' => Reply::Error(rest.to_vec()),
            b':' => Reply::Int(int(&text)?),
            b'_' => Reply::Nil,
            b',' | b'#' | b'(' => Reply::Simple(rest.to_vec()),
            b'$' | b'=' | b'!' => {
                let len = int(&text)?;
                if len < 0 {
                    return Ok(Reply::Nil);
                }
                let mut buf = vec![0; len as usize + 2];
                self.reader.read_exact(&mut buf)?;
                if &buf[len as usize..] != b"\r\n" {
                    return Err(bad("bulk not ended by CRLF"));
                }
                buf.truncate(len as usize);
                if kind == b'!' {
                    Reply::Error(buf)
                } else {
                    Reply::Bulk(buf)
                }
            }
            b'*' | b'~' | b'>' | b'%' | b'|' => {
                let n = int(&text)?;
                if n < 0 {
                    return Ok(Reply::Nil);
                }
                let n = if matches!(kind, b'%' | b'|') {
                    n * 2
                } else {
                    n
                };
                let items = (0..n).map(|_| self.read()).collect::<Result<Vec<_>, _>>()?;
                if kind == b'|' {
                    // An attribute: the reply itself follows.
                    return self.read();
                }
                Reply::Many(items)
            }
            _ => {
                return Err(bad(&format!(
                    "unexpected reply {:?}",
                    String::from_utf8_lossy(&line)
                )))
            }
        })
    }

    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.write_all(bytes)
    }

    fn call(&mut self, argv: &Argv) -> std::io::Result<Reply> {
        let mut out = Vec::new();
        encode(argv, &mut out);
        self.send(&out)?;
        self.read()
    }

    /// Sends the batch and reads replies until the marker's echo.
    fn run_batch(&mut self, batch: &[Argv], marker: &[u8]) -> std::io::Result<u64> {
        let mut out = Vec::new();
        for argv in batch {
            encode(argv, &mut out);
        }
        // Leaves a transaction the batch left open, so the marker is
        // answered rather than queued.
        encode(&words(&["DISCARD"]), &mut out);
        encode(&vec![b"ECHO".to_vec(), marker.to_vec()], &mut out);
        self.send(&out)?;
        let mut errors = 0;
        loop {
            match self.read()? {
                Reply::Bulk(b) if b == marker => return Ok(errors),
                Reply::Error(_) => errors += 1,
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The server fuzz

/// Shared between the connections of one server's run.
struct Run {
    stop: AtomicBool,
    sent: AtomicU64,
    /// Error replies (the rest were answers).
    errors: AtomicU64,
    checks: AtomicU64,
    raw: AtomicU64,
    failure: Mutex<Option<Failure>>,
    /// Each connection's batch in flight, for the report.
    current: Mutex<Vec<Vec<Argv>>>,
}

struct Failure {
    conn: usize,
    batch_no: u64,
    what: String,
    batch: Vec<Argv>,
}

fn ember_check(c: &mut Conn) -> Result<(), String> {
    match c.call(&words(&["DEBUG", "EMBER-CHECK"])) {
        Ok(Reply::Simple(s)) if s == b"OK" => {}
        other => return Err(format!("DEBUG EMBER-CHECK answered {other:?}")),
    }
    match c.call(&words(&["PING"])) {
        Ok(Reply::Simple(s)) if s == b"PONG" => Ok(()),
        other => Err(format!("PING answered {other:?}")),
    }
}

fn worker(run: &Run, port: u16, id: usize, seed: u64, quota: u64) {
    let mut g = Gen::new(seed);
    let mut conn = match Conn::connect(port) {
        Ok(c) => c,
        Err(e) => return fail(run, id, 0, format!("connect: {e}"), Vec::new()),
    };
    let mut batch_no = 0u64;
    let mut done = 0u64;
    while done < quota && !run.stop.load(Relaxed) {
        batch_no += 1;
        let len = 16 + g.below(64);
        let batch = g.batch(len);
        run.current.lock().unwrap()[id] = batch.clone();
        let marker = format!("fuzz-marker-{id}-{batch_no}").into_bytes();
        match conn.run_batch(&batch, &marker) {
            Ok(errors) => run.errors.fetch_add(errors, Relaxed),
            Err(e) => return fail(run, id, batch_no, format!("batch: {e}"), batch),
        };
        done += batch.len() as u64;
        run.sent.fetch_add(batch.len() as u64, Relaxed);
        if batch_no.is_multiple_of(25) {
            if let Err(e) = ember_check(&mut conn) {
                return fail(run, id, batch_no, e, batch);
            }
            run.checks.fetch_add(1, Relaxed);
        }
        if batch_no.is_multiple_of(10) {
            if let Err(e) = raw_round(&mut g, port) {
                return fail(run, id, batch_no, format!("raw protocol: {e}"), batch);
            }
            run.raw.fetch_add(1, Relaxed);
        }
    }
}

/// Mutated protocol on a connection of its own, read until the server
/// closes it (after a protocol error, or once it reads our end's EOF).
fn raw_round(g: &mut Gen, port: u16) -> Result<(), String> {
    let (bytes, _) = raw_input(g);
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // The server may close mid-write after a protocol error.
    let _ = stream.write_all(&bytes);
    let _ = stream.shutdown(Shutdown::Write);
    let mut sink = Vec::new();
    match stream.read_to_end(&mut sink) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => Ok(()),
        Err(e) => Err(format!(
            "not closed after our EOF: {e}; input {:?}",
            String::from_utf8_lossy(&bytes)
        )),
    }
}

fn fail(run: &Run, conn: usize, batch_no: u64, what: String, batch: Vec<Argv>) {
    run.stop.store(true, Relaxed);
    let mut f = run.failure.lock().unwrap();
    if f.is_none() {
        *f = Some(Failure {
            conn,
            batch_no,
            what,
            batch,
        });
    }
}

/// Replays `cmds` one at a time on a fresh server; true if it fails
/// (panics, dies, hangs, or breaks an invariant).
fn replay_fails(shards: usize, cmds: &[Argv]) -> bool {
    let mut server = Server::start(shards, "replay");
    let Ok(mut c) = Conn::connect(server.port) else {
        return true;
    };
    for (i, argv) in cmds.iter().enumerate() {
        let marker = format!("replay-{i}").into_bytes();
        if c.run_batch(std::slice::from_ref(argv), &marker).is_err() {
            return true;
        }
    }
    ember_check(&mut c).is_err() || server.panicked() || !server.alive()
}

/// The shortest run of the failing batch that still fails alone: the
/// shortest failing prefix, then each earlier command dropped if the rest
/// still fails.
fn shrink(shards: usize, batch: &[Argv]) -> Option<Vec<Argv>> {
    if !replay_fails(shards, batch) {
        return None;
    }
    let (mut lo, mut hi) = (1, batch.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if replay_fails(shards, &batch[..mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let mut cmds = batch[..hi].to_vec();
    let mut i = 0;
    while i + 1 < cmds.len() {
        let mut fewer = cmds.clone();
        fewer.remove(i);
        if replay_fails(shards, &fewer) {
            cmds = fewer;
        } else {
            i += 1;
        }
    }
    Some(cmds)
}

fn fuzz_server(shards: usize, settings: &Settings, execs: u64) {
    let mut server = Server::start(shards, &format!("s{shards}"));
    let run = Arc::new(Run {
        stop: AtomicBool::new(false),
        sent: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        checks: AtomicU64::new(0),
        raw: AtomicU64::new(0),
        failure: Mutex::new(None),
        current: Mutex::new(vec![Vec::new(); settings.conns]),
    });
    let started = Instant::now();
    let base = settings.seed.wrapping_add(shards as u64 * 1000);
    let handles: Vec<_> = (0..settings.conns)
        .map(|id| {
            let run = Arc::clone(&run);
            let port = server.port;
            let quota = execs / settings.conns as u64;
            std::thread::spawn(move || worker(&run, port, id, base.wrapping_add(id as u64), quota))
        })
        .collect();
    // Watch for a panic or an abort while the connections run.
    let mut last_report = Instant::now();
    while handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if !server.alive() || server.panicked() {
            fail(
                &run,
                usize::MAX,
                0,
                "server panicked or died".into(),
                Vec::new(),
            );
        }
        if last_report.elapsed() > Duration::from_secs(60) {
            last_report = Instant::now();
            println!(
                "  shards={shards}: {} commands so far ({:.0}/s)",
                run.sent.load(Relaxed),
                run.sent.load(Relaxed) as f64 / started.elapsed().as_secs_f64()
            );
        }
    }
    for h in handles {
        h.join().unwrap();
    }
    // The final checks, with every connection done.
    if run.failure.lock().unwrap().is_none() {
        let result = Conn::connect(server.port)
            .map_err(|e| e.to_string())
            .and_then(|mut c| {
                ember_check(&mut c)?;
                final_counts(&mut c)
            });
        if let Err(e) = result {
            fail(&run, usize::MAX, 0, format!("final check: {e}"), Vec::new());
        } else {
            run.checks.fetch_add(1, Relaxed);
        }
        if !server.alive() || server.panicked() {
            fail(
                &run,
                usize::MAX,
                0,
                "server panicked or died".into(),
                Vec::new(),
            );
        }
    }
    let panicked = server.panicked();
    let stderr = server.stderr_text();
    let secs = started.elapsed().as_secs_f64();
    println!(
        "fuzz_server shards={shards}: {} commands ({} error replies), {} raw-protocol connections, {} invariant checks, {} panics, in {secs:.1} s (seed {:#x})",
        run.sent.load(Relaxed),
        run.errors.load(Relaxed),
        run.raw.load(Relaxed),
        run.checks.load(Relaxed),
        stderr.matches("panicked at").count(),
        settings.seed,
    );
    let failure = run.failure.lock().unwrap().take();
    if let Some(f) = failure {
        let current = run.current.lock().unwrap().clone();
        drop(server);
        let batch = if f.batch.is_empty() {
            current.iter().flatten().cloned().collect()
        } else {
            f.batch.clone()
        };
        let mut report = format!(
            "FUZZ FAILURE (seed {:#x}, shards {shards}, connection {}, batch {}): {}\n",
            settings.seed, f.conn, f.batch_no, f.what
        );
        report += &format!(
            "panicked: {panicked}\nserver stderr:\n{}\n",
            tail(&stderr, 4000)
        );
        for (i, b) in current.iter().enumerate() {
            report += &format!("batch in flight on connection {i}:\n");
            for argv in b {
                report += &format!("  {}\n", show(argv));
            }
        }
        match shrink(shards, &batch) {
            Some(cmds) => {
                report += "shortest failing run on a fresh server, one connection:\n";
                for argv in &cmds {
                    report += &format!("  {}\n", show(argv));
                }
            }
            None => report += "the batch alone does not fail on a fresh server (it needs the state or the other connections)\n",
        }
        panic!("{report}");
    }
}

fn final_counts(c: &mut Conn) -> Result<(), String> {
    // Without the sweep nothing removes keys between DBSIZE and INFO (they
    // read the counts and expire nothing themselves).
    c.call(&words(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]))
        .map_err(|e| e.to_string())?;
    for db in 0..16 {
        c.call(&words(&["SELECT", &db.to_string()]))
            .map_err(|e| e.to_string())?;
        let dbsize = match c.call(&words(&["DBSIZE"])) {
            Ok(Reply::Int(n)) => n,
            other => return Err(format!("DBSIZE answered {other:?}")),
        };
        let info = match c.call(&words(&["INFO", "keyspace"])) {
            Ok(Reply::Bulk(b)) => String::from_utf8_lossy(&b).into_owned(),
            other => return Err(format!("INFO answered {other:?}")),
        };
        let keys: i64 = info
            .lines()
            .filter(|l| l.starts_with(&format!("db{db}:")))
            .filter_map(|l| l.split(['=', ',']).nth(1)?.parse::<i64>().ok())
            .sum();
        if keys != dbsize {
            return Err(format!(
                "db{db}: DBSIZE {dbsize}, INFO keyspace {keys}: {info}"
            ));
        }
    }
    Ok(())
}

fn tail(s: &str, n: usize) -> &str {
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// The server under generated command sequences, for each shard count.
#[test]
fn fuzz_commands() {
    let settings = Settings::from_env();
    let each = settings.execs / settings.shards.len() as u64;
    println!(
        "fuzz_commands: {} commands, seed {:#x}, shards {:?}, {} connections",
        settings.execs, settings.seed, settings.shards, settings.conns
    );
    for &shards in &settings.shards {
        fuzz_server(shards, &settings, each);
    }
}
