//! The parameters ember accepts for Redis's tools and config files without
//! acting on them (`config::compat`): CONFIG GET answers what
//! redis-server 7.0.15 answers, and CONFIG SET takes and refuses what it
//! does, with its error texts.

mod common;

use common::reference::Redis;
use common::{Raw, Reply, Server};

const NAMES: &[&str] = &[
    "io-threads",
    "io-threads-do-reads",
    "tcp-backlog",
    "dynamic-hz",
    "activedefrag",
    "active-defrag-cycle-min",
    "active-defrag-cycle-max",
    "active-defrag-threshold-lower",
    "active-defrag-threshold-upper",
    "active-defrag-max-scan-fields",
    "active-defrag-ignore-bytes",
    "cluster-enabled",
    "supervised",
    "syslog-enabled",
    "syslog-ident",
    "syslog-facility",
    "set-proc-title",
    "proc-title-template",
    "crash-log-enabled",
    "crash-memcheck-enabled",
    "disable-thp",
    "oom-score-adj",
    "oom-score-adj-values",
    "latency-tracking",
    "latency-tracking-info-percentiles",
    "tracking-table-max-keys",
    "shutdown-timeout",
    "shutdown-on-sigint",
    "shutdown-on-sigterm",
    "socket-mark-id",
    "ignore-warnings",
    "bind-source-addr",
    "server_cpulist",
    "bio_cpulist",
    "aof_rewrite_cpulist",
    "bgsave_cpulist",
    "replicaof",
    "slaveof",
    "masterauth",
    "masteruser",
    "replica-read-only",
    "slave-read-only",
    "replica-lazy-flush",
    "slave-lazy-flush",
    "replica-priority",
    "slave-priority",
    "replica-announced",
    "replica-announce-ip",
    "slave-announce-ip",
    "replica-announce-port",
    "slave-announce-port",
    "repl-diskless-sync",
    "repl-diskless-sync-max-replicas",
    "repl-diskless-load",
    "repl-disable-tcp-nodelay",
    "repl-backlog-size",
    "repl-backlog-ttl",
    "repl-timeout",
    "repl-ping-replica-period",
    "repl-ping-slave-period",
    "min-replicas-to-write",
    "min-slaves-to-write",
    "min-replicas-max-lag",
    "min-slaves-max-lag",
    "slowlog-log-slower-than",
    "slowlog-max-len",
];

/// CONFIG SETs both servers answer alike: accepted values (each put back
/// to the default afterwards) and refused ones.
const SETS: &[&[&str]] = &[
    &["io-threads", "2"],
    &["tcp-backlog", "1"],
    &["supervised", "auto"],
    &["cluster-enabled", "yes"],
    &["replicaof", "x"],
    &["activedefrag", "yes"],
    &["activedefrag", "no"],
    &["active-defrag-cycle-min", "0"],
    &["active-defrag-cycle-max", "100"],
    &["active-defrag-cycle-max", "25"],
    &["latency-tracking-info-percentiles", "101"],
    &["latency-tracking-info-percentiles", "abc"],
    &["latency-tracking-info-percentiles", "50 99 99.9"],
    &["shutdown-on-sigint", "bad"],
    &["shutdown-on-sigint", "default"],
    &["repl-diskless-load", "bad"],
    &["repl-diskless-load", "disabled"],
    &["oom-score-adj", "x"],
    &["proc-title-template", "{bad}"],
    &["proc-title-template", "{title} {listen-addr} {server-mode}"],
    &["socket-mark-id", "1"],
    &["replica-announce-port", "70000"],
    &["repl-backlog-size", "0"],
    &["repl-backlog-size", "1mb"],
    &["tracking-table-max-keys", "-1"],
    &["repl-timeout", "0"],
    &["replica-read-only", "maybe"],
    &["replica-read-only", "yes"],
    &["masterauth", ""],
    &["slowlog-max-len", "-1"],
    &["sanitize-dump-payload", "x"],
    &["cluster-port", "1"],
    &["cluster-node-timeout", "-1"],
    &["cluster-preferred-endpoint-type", "x"],
    &["tls-auth-clients", "x"],
    &["tls-session-cache-size", "-1"],
    &["slowlog-log-slower-than", "-2"],
];

fn answers(port: u16) -> Vec<Reply> {
    let mut raw = Raw::connect(port);
    let mut out = Vec::new();
    for name in NAMES {
        out.extend(sorted_pairs(raw.cmd(&["CONFIG", "GET", name])));
    }
    for set in SETS {
        let mut cmd = vec!["CONFIG", "SET"];
        cmd.extend_from_slice(set);
        out.push(raw.cmd(&cmd));
    }
    out.extend(sorted_pairs(raw.cmd(&["CONFIG", "GET", "repl-*"])));
    out
}

/// CONFIG GET's pairs, sorted: a pattern's matches come in Redis's
/// dictionary order.
fn sorted_pairs(reply: Reply) -> Vec<Reply> {
    let items = reply.items();
    let mut pairs: Vec<(String, String)> = items
        .chunks(2)
        .map(|p| (p[0].text(), p[1].text()))
        .collect();
    pairs.sort();
    pairs
        .into_iter()
        .map(|(n, v)| Reply::Array(vec![Reply::bulk(&n), Reply::bulk(&v)]))
        .collect()
}

#[test]
fn accepted_parameters_answer_as_redis() {
    let Some(redis) = Redis::or_skip("config_compat_accepted_parameters_answer_as_redis") else {
        return;
    };
    // Redis's default wait before a diskless sync (the test servers start
    // without it).
    let server = Server::start(2, &["--repl-diskless-sync-delay", "5"]);
    let (ours, theirs) = (answers(server.port), answers(redis.port));
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "answer {i}");
    }
    assert_eq!(ours.len(), theirs.len());
}

#[test]
fn a_config_file_written_for_redis_starts_ember() {
    let dir = common::temp_dir();
    let conf = dir.join("redis.conf");
    std::fs::write(
        &conf,
        "io-threads 4\nsupervised no\nrepl-backlog-size 64mb\nreplica-read-only yes\n\
         oom-score-adj-values 0 200 800\nshutdown-on-sigterm nosave now\nactivedefrag no\n",
    )
    .unwrap();
    let server = Server::start(1, &["--config", conf.to_str().unwrap()]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "io-threads"]),
        Reply::Array(vec![Reply::bulk("io-threads"), Reply::bulk("1")])
    );
}
