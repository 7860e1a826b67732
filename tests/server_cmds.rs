//! Connection and server commands: PING, ECHO, QUIT, SELECT, CLIENT,
//! COMMAND, INFO, CONFIG, DBSIZE/FLUSH*, TIME, SWAPDB, DEBUG, config files.
//! Expected replies were taken from redis-server 7.0.15.

mod common;

use std::time::Duration;

use common::{err, info_field, keys_on_shard, run_with_bad_config, wait_until, Reply, Server};

fn pong() -> Reply {
    Reply::Simple("PONG".into())
}

#[test]
fn ping_echo_quit() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    raw.send(b"PING\r\n");
    raw.expect_bytes(b"+PONG\r\n");
    raw.send(b"PING hello\r\n");
    raw.expect_bytes(b"$5\r\nhello\r\n");
    raw.send(b"PING a b\r\n");
    raw.expect_bytes(b"-ERR wrong number of arguments for 'ping' command\r\n");
    raw.send(b"ECHO \"x y\"\r\n");
    raw.expect_bytes(b"$3\r\nx y\r\n");
    raw.send(b"ECHO\r\n");
    raw.expect_bytes(b"-ERR wrong number of arguments for 'echo' command\r\n");
    raw.send(b"QUIT\r\n");
    raw.expect_bytes(b"+OK\r\n");
    assert!(raw.closed());
    // Commands pipelined after QUIT are not run.
    let mut raw = server.raw();
    raw.send(b"QUIT\r\nSET afterquit 1\r\n");
    raw.expect_bytes(b"+OK\r\n");
    assert!(raw.closed());
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["EXISTS", "afterquit"]), Reply::Int(0));
}

#[test]
fn select_and_db_isolation() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    for db in 0..16 {
        assert_eq!(raw.cmd(&["SELECT", &db.to_string()]), Reply::ok());
    }
    assert_eq!(
        raw.cmd(&["SELECT", "16"]),
        Reply::err("ERR DB index is out of range")
    );
    assert_eq!(
        raw.cmd(&["SELECT", "-1"]),
        Reply::err("ERR DB index is out of range")
    );
    assert_eq!(
        raw.cmd(&["SELECT", "abc"]),
        Reply::err("ERR value is not an integer or out of range")
    );
    assert_eq!(raw.cmd(&["SELECT", "1"]), Reply::ok());
    // Keys on both shards.
    let keys: Vec<String> = keys_on_shard("db1k", 0, 2, 2)
        .into_iter()
        .chain(keys_on_shard("db1k", 1, 2, 2))
        .collect();
    for k in &keys {
        assert_eq!(raw.cmd(&["SET", k, "in-db1"]), Reply::ok());
    }
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(4));
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    for k in &keys {
        assert_eq!(raw.cmd(&["GET", k]), Reply::Nil);
        assert_eq!(raw.cmd(&["EXISTS", k]), Reply::Int(0));
    }
    // Another connection starts in db 0.
    let mut other = server.raw();
    assert_eq!(other.cmd(&["GET", &keys[0]]), Reply::Nil);
    assert_eq!(other.cmd(&["SELECT", "1"]), Reply::ok());
    assert_eq!(other.cmd(&["GET", &keys[0]]), Reply::bulk("in-db1"));
    // MOVE semantics aside, a key of the same name in db 0 is independent.
    assert_eq!(raw.cmd(&["SET", &keys[0], "in-db0"]), Reply::ok());
    assert_eq!(other.cmd(&["GET", &keys[0]]), Reply::bulk("in-db1"));
}

#[test]
fn client_setname_getname_id_info() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["CLIENT", "GETNAME"]), Reply::Nil);
    assert_eq!(raw.cmd(&["CLIENT", "SETNAME", "worker-1"]), Reply::ok());
    assert_eq!(raw.cmd(&["CLIENT", "GETNAME"]), Reply::bulk("worker-1"));
    let bad = Reply::err("ERR Client names cannot contain spaces, newlines or special characters.");
    assert_eq!(raw.cmd(&["CLIENT", "SETNAME", "a b"]), bad);
    assert_eq!(raw.cmd(&["CLIENT", "SETNAME", "a\nb"]), bad);
    assert_eq!(raw.cmd(&["CLIENT", "GETNAME"]), Reply::bulk("worker-1"));
    assert_eq!(
        raw.cmd(&["CLIENT", "SETNAME"]),
        Reply::err("ERR wrong number of arguments for 'client|setname' command")
    );
    assert_eq!(
        raw.cmd(&["CLIENT", "NOSUCH"]),
        Reply::err("ERR unknown subcommand 'NOSUCH'. Try CLIENT HELP.")
    );
    let id = raw.cmd(&["CLIENT", "ID"]).int();
    assert!(id > 0);
    let info = raw.cmd(&["CLIENT", "INFO"]).text();
    assert!(
        info.starts_with(&format!("id={id} addr={} ", raw.local_addr())),
        "{info}"
    );
    assert!(info.contains(" name=worker-1 "), "{info}");
    assert!(info.contains(" db=0 "), "{info}");
    assert!(info.ends_with('\n'));
    // An empty name clears it.
    assert_eq!(raw.cmd(&["CLIENT", "SETNAME", ""]), Reply::ok());
    assert_eq!(raw.cmd(&["CLIENT", "GETNAME"]), Reply::Nil);
    // Ids are distinct per connection.
    let mut other = server.raw();
    assert_ne!(other.cmd(&["CLIENT", "ID"]).int(), id);
}

#[test]
fn client_list_shows_clients_on_all_shards() {
    let server = Server::start(2, &[]);
    let mut conns: Vec<_> = (0..8).map(|_| server.raw()).collect();
    let mut ids = Vec::new();
    for (i, c) in conns.iter_mut().enumerate() {
        assert_eq!(c.cmd(&["CLIENT", "SETNAME", &format!("c{i}")]), Reply::ok());
        ids.push(c.cmd(&["CLIENT", "ID"]).int());
    }
    for c in conns.iter_mut() {
        let list = c.cmd(&["CLIENT", "LIST"]).text();
        for (i, id) in ids.iter().enumerate() {
            let line = list
                .lines()
                .find(|l| l.starts_with(&format!("id={id} ")))
                .unwrap_or_else(|| panic!("client {id} missing from\n{list}"));
            assert!(line.contains(&format!(" name=c{i} ")), "{line}");
            // Every client's last command was CLIENT LIST or CLIENT ID, named as Redis does.
            assert!(
                line.contains(" cmd=client|list ") || line.contains(" cmd=client|id "),
                "{line}"
            );
        }
        // Sorted by id.
        let listed: Vec<i64> = list
            .lines()
            .map(|l| l[3..].split(' ').next().unwrap().parse().unwrap())
            .collect();
        let mut sorted = listed.clone();
        sorted.sort();
        assert_eq!(listed, sorted);
    }
    // LIST ID filter.
    let list = conns[0]
        .cmd(&[
            "CLIENT",
            "LIST",
            "ID",
            &ids[3].to_string(),
            &ids[5].to_string(),
        ])
        .text();
    assert_eq!(list.lines().count(), 2, "{list}");
    assert_eq!(
        conns[0].cmd(&["CLIENT", "LIST", "ID", "abc"]),
        Reply::err("ERR Invalid client ID")
    );
    assert_eq!(
        conns[0].cmd(&["CLIENT", "LIST", "foo"]),
        Reply::err("ERR syntax error")
    );
}

#[test]
fn client_kill_forms() {
    let server = Server::start(2, &[]);
    let mut admin = server.raw();
    let admin_id = admin.cmd(&["CLIENT", "ID"]).int();

    // ID filter.
    let mut victim = server.raw();
    let id = victim.cmd(&["CLIENT", "ID"]).int();
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]),
        Reply::Int(1)
    );
    assert!(victim.closed());
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]),
        Reply::Int(0)
    );

    // ADDR filter.
    let mut victim = server.raw();
    assert_eq!(victim.cmd(&["PING"]), pong());
    let addr = victim.local_addr();
    assert_eq!(admin.cmd(&["CLIENT", "KILL", "ADDR", &addr]), Reply::Int(1));
    assert!(victim.closed());

    // Old form.
    let mut victim = server.raw();
    assert_eq!(victim.cmd(&["PING"]), pong());
    let addr = victim.local_addr();
    assert_eq!(admin.cmd(&["CLIENT", "KILL", &addr]), Reply::ok());
    assert!(victim.closed());
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", &addr]),
        Reply::err("ERR No such client")
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "1.2.3.4:5"]),
        Reply::err("ERR No such client")
    );

    // SKIPME yes by default with the new form.
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "ID", &admin_id.to_string()]),
        Reply::Int(0)
    );
    assert_eq!(admin.cmd(&["PING"]), pong());

    // Errors.
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "ID", "abc"]),
        Reply::err("ERR client-id should be greater than 0")
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL", "foo", "bar"]),
        Reply::err("ERR syntax error")
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "KILL"]),
        Reply::err("ERR wrong number of arguments for 'client|kill' command")
    );

    // Killing several clients spread over shards, by id, from one connection.
    let mut victims: Vec<_> = (0..6).map(|_| server.raw()).collect();
    for v in victims.iter_mut() {
        let id = v.cmd(&["CLIENT", "ID"]).int();
        assert_eq!(
            admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()]),
            Reply::Int(1)
        );
    }
    for v in victims.iter_mut() {
        assert!(v.closed());
    }
    assert!(wait_until(Duration::from_secs(5), || {
        let info = admin.cmd(&["INFO", "clients"]).text();
        info_field(&info, "connected_clients").as_deref() == Some("1")
    }));
}

#[test]
fn command_introspection() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    let count = raw.cmd(&["COMMAND", "COUNT"]).int();
    assert!(count > 50, "{count}");
    // LIST names the subcommands too (`config|get`), as Redis 7.0 does;
    // COUNT counts commands.
    let list = raw.cmd(&["COMMAND", "LIST"]).items();
    let top = list.iter().filter(|n| !n.text().contains('|')).count();
    assert_eq!(top as i64, count);
    assert!(list.contains(&Reply::bulk("config|get")));
    for name in ["get", "set", "mget", "scan", "client", "config"] {
        assert!(list.contains(&Reply::bulk(name)), "{name} missing");
    }
    // FILTERBY, answered as redis-server 7.0 answers.
    let mut lp = raw
        .cmd(&["COMMAND", "LIST", "FILTERBY", "PATTERN", "lp*"])
        .items();
    lp.sort_by_key(|r| r.text());
    assert_eq!(
        lp,
        common::bulks(&["lpop", "lpos", "lpush", "lpushx"]).items()
    );
    let lists = raw
        .cmd(&["COMMAND", "LIST", "filterby", "aclcat", "LIST"])
        .items();
    assert!(lists.contains(&Reply::bulk("blpop")) && !lists.contains(&Reply::bulk("get")));
    for none in [&["ACLCAT", "nosuch"][..], &["MODULE", "m"]] {
        let mut args = vec!["COMMAND", "LIST", "FILTERBY"];
        args.extend_from_slice(none);
        assert_eq!(raw.cmd(&args), Reply::Array(vec![]), "{none:?}");
    }
    for bad in [
        &["x"][..],
        &["FILTERBY", "foo", "x"],
        &["FILTERBY", "PATTERN"],
    ] {
        let mut args = vec!["COMMAND", "LIST"];
        args.extend_from_slice(bad);
        assert_eq!(raw.cmd(&args), Reply::err("ERR syntax error"), "{bad:?}");
    }
    let info = raw.cmd(&["COMMAND", "INFO", "get"]).items();
    assert_eq!(info.len(), 1);
    let get = info[0].items();
    assert_eq!(get[0], Reply::bulk("get"));
    assert_eq!(get[1], Reply::Int(2));
    assert_eq!(
        get[2],
        Reply::Array(vec![
            Reply::Simple("readonly".into()),
            Reply::Simple("fast".into())
        ])
    );
    assert_eq!(&get[3..6], &[Reply::Int(1), Reply::Int(1), Reply::Int(1)]);
    assert_eq!(
        get[6],
        Reply::Array(vec![
            Reply::Simple("@read".into()),
            Reply::Simple("@string".into()),
            Reply::Simple("@fast".into())
        ])
    );
    // Unknown commands are a null bulk in the array.
    raw.send(b"COMMAND INFO nosuchcmd\r\n");
    raw.expect_bytes(b"*1\r\n$-1\r\n");
    let set = raw.cmd(&["COMMAND", "INFO", "SET"]).items()[0].items();
    assert_eq!(set[1], Reply::Int(-3));
    let mset = raw.cmd(&["COMMAND", "INFO", "mset"]).items()[0].items();
    assert_eq!(&mset[3..6], &[Reply::Int(1), Reply::Int(-1), Reply::Int(2)]);

    let docs = raw.cmd(&["COMMAND", "DOCS", "get"]).items();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0], Reply::bulk("get"));
    let fields = docs[1].items();
    let pos = fields
        .iter()
        .position(|f| *f == Reply::bulk("group"))
        .unwrap();
    assert_eq!(fields[pos + 1], Reply::bulk("string"));
    let pos = fields
        .iter()
        .position(|f| *f == Reply::bulk("since"))
        .unwrap();
    assert_eq!(fields[pos + 1], Reply::bulk("1.0.0"));
    assert_eq!(
        raw.cmd(&["COMMAND", "DOCS", "nosuchcmd"]),
        Reply::Array(vec![])
    );

    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "SET", "a", "b"]),
        Reply::Array(vec![Reply::bulk("a")])
    );
    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "MSET", "a", "b", "c", "d"]),
        Reply::Array(vec![Reply::bulk("a"), Reply::bulk("c")])
    );
    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "GET", "a", "b"]),
        Reply::err("ERR Invalid number of arguments specified for command")
    );
    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "foo", "a"]),
        Reply::err("ERR Invalid command specified")
    );
    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "PING", "a"]),
        Reply::err("ERR The command has no key arguments")
    );
    // Redis 7.0's COMMAND GETKEYS has arity -4.
    assert_eq!(
        raw.cmd(&["COMMAND", "GETKEYS", "GET"]),
        Reply::err("ERR wrong number of arguments for 'command|getkeys' command")
    );
    assert_eq!(
        raw.cmd(&["COMMAND", "foo"]),
        Reply::err("ERR unknown subcommand 'foo'. Try COMMAND HELP.")
    );
    // Plain COMMAND lists everything.
    assert_eq!(raw.cmd(&["COMMAND"]).items().len() as i64, count);
}

#[test]
fn info_sections() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let info = raw.cmd(&["INFO"]).text();
    assert!(info.starts_with("# Server\r\n"), "{info}");
    assert_eq!(
        info_field(&info, "redis_version").as_deref(),
        Some("7.0.15")
    );
    assert_eq!(info_field(&info, "tcp_port"), Some(server.port.to_string()));
    for section in ["# Clients", "# Memory", "# Stats", "# Keyspace"] {
        assert!(info.contains(section), "{section} missing");
    }
    let server_only = raw.cmd(&["INFO", "server"]).text();
    assert!(!server_only.contains("# Clients"));
    // Unknown section: empty.
    assert_eq!(raw.cmd(&["INFO", "foo"]), Reply::bulk(""));

    // Keyspace after writes on both shards, with TTLs.
    let keyspace = raw.cmd(&["INFO", "keyspace"]).text();
    assert_eq!(keyspace, "# Keyspace\r\n");
    let keys: Vec<String> = keys_on_shard("ks", 0, 2, 3)
        .into_iter()
        .chain(keys_on_shard("ks", 1, 2, 3))
        .collect();
    for k in &keys {
        assert_eq!(raw.cmd(&["SET", k, "v"]), Reply::ok());
    }
    assert_eq!(raw.cmd(&["PEXPIRE", &keys[0], "100000"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["PEXPIRE", &keys[5], "100000"]), Reply::Int(1));
    let keyspace = raw.cmd(&["INFO", "keyspace"]).text();
    assert!(
        keyspace.contains("db0:keys=6,expires=2,avg_ttl="),
        "{keyspace}"
    );
    assert!(!keyspace.contains("db1:"));
    assert_eq!(raw.cmd(&["SELECT", "3"]), Reply::ok());
    assert_eq!(raw.cmd(&["SET", "x", "1"]), Reply::ok());
    let keyspace = raw.cmd(&["INFO", "keyspace"]).text();
    assert!(
        keyspace.contains("db3:keys=1,expires=0,avg_ttl=0"),
        "{keyspace}"
    );
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());

    // expired_keys in stats (lazy expiry on access).
    assert_eq!(raw.cmd(&["SET", "short", "v", "PX", "20"]), Reply::ok());
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(raw.cmd(&["GET", "short"]), Reply::Nil);
    let stats = raw.cmd(&["INFO", "stats"]).text();
    assert_eq!(
        info_field(&stats, "expired_keys").as_deref(),
        Some("1"),
        "{stats}"
    );

    // commandstats after commands.
    let cs = raw.cmd(&["INFO", "commandstats"]).text();
    assert!(cs.starts_with("# Commandstats\r\n"));
    assert!(cs.contains("cmdstat_set:calls=8,"), "{cs}");
    assert!(cs.contains("cmdstat_get:calls=1,"), "{cs}");

    // everything includes commandstats.
    let all = raw.cmd(&["INFO", "everything"]).text();
    assert!(
        all.contains("# Server") && all.contains("# Commandstats"),
        "{all}"
    );
    // Multiple sections.
    let two = raw.cmd(&["INFO", "server", "clients"]).text();
    assert!(two.contains("# Server") && two.contains("# Clients") && !two.contains("# Stats"));
}

#[test]
fn config_get_and_set() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "hz"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("10")])
    );
    let expire = raw.cmd(&["CONFIG", "GET", "active-expire*"]).items();
    let pos = expire
        .iter()
        .position(|r| *r == Reply::bulk("active-expire-effort"))
        .unwrap();
    assert_eq!(expire[pos + 1], Reply::bulk("1"));
    // ember's storm knobs, with their defaults.
    for (name, default) in [
        ("active-expire-slice-us", "100"),
        ("active-expire-storm-cpu-perc", "90"),
        ("active-expire-storm-busy-perc", "95"),
        ("active-expire-storm-defer-purge", "yes"),
    ] {
        let pos = expire.iter().position(|r| *r == Reply::bulk(name));
        assert_eq!(
            pos.map(|p| &expire[p + 1]),
            Some(&Reply::bulk(default)),
            "{name}"
        );
    }
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "active-expire-storm-busy-perc", "101"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'active-expire-storm-busy-perc') - argument must be between 1 and 100 inclusive")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "active-expire-storm-busy-perc", "90"]),
        Reply::ok()
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "active-expire-storm-defer-purge", "maybe"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'active-expire-storm-defer-purge') - argument must be 'yes' or 'no'")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "active-expire-storm-defer-purge", "no"]),
        Reply::ok()
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "nosuchparam"]),
        Reply::Array(vec![])
    );
    // Several patterns in one CONFIG GET.
    let two = raw.cmd(&["CONFIG", "GET", "hz", "maxclients"]).items();
    assert_eq!(two.len(), 4);

    assert_eq!(raw.cmd(&["CONFIG", "SET", "hz", "1000"]), Reply::ok());
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "hz"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("500")])
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "foo", "bar"]),
        Reply::err("ERR Unknown option or number of arguments for CONFIG SET - 'foo'")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "hz", "abc"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "databases", "5"]),
        Reply::err("ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "hz", "10", "foo"]),
        Reply::err("ERR syntax error")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "hz", "10", "hz", "20"]),
        Reply::err(
            "ERR CONFIG SET failed (possibly related to argument 'hz') - duplicate parameter"
        )
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "hz"]),
        Reply::err("ERR wrong number of arguments for 'config|set' command")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET"]),
        Reply::err("ERR wrong number of arguments for 'config|get' command")
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "foo"]),
        Reply::err("ERR unknown subcommand 'foo'. Try CONFIG HELP.")
    );
    // Multi-pair set applies all.
    assert_eq!(
        raw.cmd(&["CONFIG", "SET", "hz", "25", "maxclients", "77"]),
        Reply::ok()
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "hz"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("25")])
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "maxclients"]),
        Reply::Array(vec![Reply::bulk("maxclients"), Reply::bulk("77")])
    );
    // ... or none when one fails.
    assert!(matches!(
        raw.cmd(&["CONFIG", "SET", "hz", "30", "maxclients", "abc"]),
        Reply::Error(_)
    ));
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "hz"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("25")])
    );
    // INFO reflects CONFIG SET.
    let info = raw.cmd(&["INFO", "server"]).text();
    assert_eq!(info_field(&info, "hz").as_deref(), Some("25"));
}

#[test]
fn config_resetstat_zeroes_stats() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    for i in 0..10 {
        assert_eq!(raw.cmd(&["SET", &format!("k{i}"), "v"]), Reply::ok());
        assert_eq!(raw.cmd(&["GET", &format!("k{i}")]), Reply::bulk("v"));
    }
    assert_eq!(raw.cmd(&["GET", "missing"]), Reply::Nil);
    let stats = raw.cmd(&["INFO", "stats"]).text();
    assert_eq!(info_field(&stats, "keyspace_hits").as_deref(), Some("10"));
    assert_eq!(info_field(&stats, "keyspace_misses").as_deref(), Some("1"));
    assert_eq!(raw.cmd(&["CONFIG", "RESETSTAT"]), Reply::ok());
    let stats = raw.cmd(&["INFO", "stats"]).text();
    assert_eq!(info_field(&stats, "keyspace_hits").as_deref(), Some("0"));
    assert_eq!(info_field(&stats, "keyspace_misses").as_deref(), Some("0"));
    assert_eq!(info_field(&stats, "expired_keys").as_deref(), Some("0"));
    let processed: i64 = info_field(&stats, "total_commands_processed")
        .unwrap()
        .parse()
        .unwrap();
    assert!(processed <= 2, "{processed}");
    let cs = raw.cmd(&["INFO", "commandstats"]).text();
    assert!(!cs.contains("cmdstat_set:"), "{cs}");
    assert!(!cs.contains("cmdstat_get:"), "{cs}");
    // Data is untouched.
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(10));
}

#[test]
fn dbsize_flushdb_flushall() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let keys: Vec<String> = keys_on_shard("f", 0, 2, 5)
        .into_iter()
        .chain(keys_on_shard("f", 1, 2, 5))
        .collect();
    for k in &keys {
        assert_eq!(raw.cmd(&["SET", k, "v"]), Reply::ok());
    }
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(10));
    assert_eq!(raw.cmd(&["SELECT", "1"]), Reply::ok());
    for k in &keys[..3] {
        assert_eq!(raw.cmd(&["SET", k, "v"]), Reply::ok());
    }
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(3));
    // FLUSHDB only empties the selected db.
    assert_eq!(raw.cmd(&["FLUSHDB"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(10));
    assert_eq!(raw.cmd(&["FLUSHDB", "ASYNC"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["FLUSHDB", "foo"]), Reply::err("ERR syntax error"));

    // FLUSHALL empties every db.
    for db in ["0", "5"] {
        assert_eq!(raw.cmd(&["SELECT", db]), Reply::ok());
        for k in &keys {
            assert_eq!(raw.cmd(&["SET", k, "v"]), Reply::ok());
        }
    }
    assert_eq!(raw.cmd(&["FLUSHALL"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    for mode in ["ASYNC", "SYNC", "async"] {
        assert_eq!(raw.cmd(&["SET", &keys[0], "v"]), Reply::ok());
        assert_eq!(raw.cmd(&["FLUSHALL", mode]), Reply::ok());
        assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(0));
    }
    assert_eq!(
        raw.cmd(&["FLUSHALL", "foo"]),
        Reply::err("ERR syntax error")
    );
    assert_eq!(
        raw.cmd(&["DBSIZE", "x"]),
        Reply::err("ERR wrong number of arguments for 'dbsize' command")
    );
}

#[test]
fn time_is_sane() {
    let server = Server::start(1, &[]);
    let mut raw = server.raw();
    let items = raw.cmd(&["TIME"]).items();
    assert_eq!(items.len(), 2);
    let secs: u64 = items[0].text().parse().unwrap();
    let micros: u64 = items[1].text().parse().unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(secs.abs_diff(now) <= 5, "{secs} vs {now}");
    assert!(micros < 1_000_000);
    assert_eq!(
        raw.cmd(&["TIME", "x"]),
        Reply::err("ERR wrong number of arguments for 'time' command")
    );
}

#[test]
fn swapdb_swaps_on_every_shard() {
    let server = Server::start(2, &[]);
    let mut raw = server.raw();
    let a: Vec<String> = keys_on_shard("sw", 0, 2, 3);
    let b: Vec<String> = keys_on_shard("sw", 1, 2, 3);
    for k in a.iter().chain(&b) {
        assert_eq!(raw.cmd(&["SET", k, "zero"]), Reply::ok());
    }
    assert_eq!(raw.cmd(&["PEXPIRE", &a[0], "100000"]), Reply::Int(1));
    assert_eq!(raw.cmd(&["SELECT", "1"]), Reply::ok());
    assert_eq!(raw.cmd(&["SET", &a[1], "one"]), Reply::ok());
    assert_eq!(raw.cmd(&["SET", &b[1], "one"]), Reply::ok());
    assert_eq!(raw.cmd(&["SELECT", "0"]), Reply::ok());

    assert_eq!(raw.cmd(&["SWAPDB", "0", "1"]), Reply::ok());
    // This connection still has db 0 selected, which now holds the old db 1.
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(2));
    assert_eq!(raw.cmd(&["GET", &a[1]]), Reply::bulk("one"));
    assert_eq!(raw.cmd(&["GET", &b[1]]), Reply::bulk("one"));
    assert_eq!(raw.cmd(&["GET", &a[0]]), Reply::Nil);
    assert_eq!(raw.cmd(&["SELECT", "1"]), Reply::ok());
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(6));
    for k in a.iter().chain(&b) {
        assert_eq!(raw.cmd(&["GET", k]), Reply::bulk("zero"));
    }
    let pttl = raw.cmd(&["PTTL", &a[0]]).int();
    assert!(pttl > 90_000 && pttl <= 100_000, "{pttl}");
    // Another connection in db 0 sees the swap too.
    let mut other = server.raw();
    assert_eq!(other.cmd(&["GET", &b[1]]), Reply::bulk("one"));

    assert_eq!(
        raw.cmd(&["SWAPDB", "0", "a"]),
        Reply::err("ERR invalid second DB index")
    );
    assert_eq!(
        raw.cmd(&["SWAPDB", "a", "0"]),
        Reply::err("ERR invalid first DB index")
    );
    assert_eq!(
        raw.cmd(&["SWAPDB", "0", "99"]),
        Reply::err("ERR DB index is out of range")
    );
}

#[test]
fn debug_subcommands() {
    let server = Server::start(2, &["--enable-debug-command", "local"]);
    let mut raw = server.raw();
    assert_eq!(raw.cmd(&["DEBUG", "SLEEP", "0"]), Reply::ok());
    assert_eq!(
        raw.cmd(&["DEBUG", "OBJECT", "nokey"]),
        Reply::err("ERR no such key")
    );
    assert_eq!(raw.cmd(&["SET", "obj", "12345"]), Reply::ok());
    let text = raw.cmd(&["DEBUG", "OBJECT", "obj"]).text();
    assert!(text.starts_with("Value at:"), "{text}");
    assert!(text.contains(" encoding:int "), "{text}");
    assert!(text.contains(" refcount:"), "{text}");

    // Active expiry off: an expired key stays in the keyspace until touched.
    let keys: Vec<String> = keys_on_shard("ae", 0, 2, 2)
        .into_iter()
        .chain(keys_on_shard("ae", 1, 2, 2))
        .collect();
    assert_eq!(raw.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Reply::ok());
    assert_eq!(raw.cmd(&["CONFIG", "SET", "hz", "100"]), Reply::ok());
    for k in &keys {
        assert_eq!(raw.cmd(&["SET", k, "v", "PX", "10"]), Reply::ok());
    }
    std::thread::sleep(Duration::from_millis(300));
    let stats = raw.cmd(&["INFO", "stats"]).text();
    assert_eq!(
        info_field(&stats, "expired_keys").as_deref(),
        Some("0"),
        "{stats}"
    );
    assert_eq!(raw.cmd(&["DBSIZE"]), Reply::Int(5));
    // On again: the sweep removes them.
    assert_eq!(raw.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]), Reply::ok());
    assert!(wait_until(Duration::from_secs(5), || {
        raw.cmd(&["DBSIZE"]) == Reply::Int(1)
    }));
    let stats = raw.cmd(&["INFO", "stats"]).text();
    assert_eq!(info_field(&stats, "expired_keys").as_deref(), Some("4"));
}

#[test]
fn config_file_is_honoured() {
    let server = Server::start_with_config(2, "# a comment\n\nhz 50\nmaxclients 7\n");
    let mut raw = server.raw();
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "hz"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("50")])
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "maxclients"]),
        Reply::Array(vec![Reply::bulk("maxclients"), Reply::bulk("7")])
    );
    assert_eq!(
        raw.cmd(&["CONFIG", "GET", "port"]),
        Reply::Array(vec![
            Reply::bulk("port"),
            Reply::bulk(&server.port.to_string())
        ])
    );
    let info = raw.cmd(&["INFO", "server"]).text();
    assert!(
        info_field(&info, "config_file").is_some_and(|f| f.ends_with(".conf")),
        "{info}"
    );
}

#[test]
fn config_file_with_unknown_directive_fails() {
    let (status, stderr) = run_with_bad_config("hz 10\nfoo bar\n");
    assert!(!status.success());
    assert!(
        stderr.contains("Bad directive or wrong number of arguments"),
        "{stderr}"
    );
    assert!(stderr.contains("'foo bar'"), "{stderr}");
    assert!(stderr.contains("line 2"), "{stderr}");
    // A known directive without a value: Redis's own reason for it.
    let (status, stderr) = run_with_bad_config("hz\n");
    assert!(!status.success());
    assert!(
        stderr.contains(">>> 'hz'\nwrong number of arguments"),
        "{stderr}"
    );
}

#[test]
fn client_list_type_filters_by_kind() {
    let server = Server::start(2, &[]);
    let mut plain = server.raw();
    let mut sub = server.raw();
    let plain_id = plain.cmd(&["CLIENT", "ID"]).int();
    let sub_id = sub.cmd(&["CLIENT", "ID"]).int();
    sub.cmd(&["SUBSCRIBE", "news"]);
    let ids_of = |list: String| -> Vec<i64> {
        list.lines()
            .map(|l| l[3..].split(' ').next().unwrap().parse().unwrap())
            .collect()
    };
    let normal = ids_of(plain.cmd(&["CLIENT", "LIST", "TYPE", "normal"]).text());
    assert!(
        normal.contains(&plain_id) && !normal.contains(&sub_id),
        "{normal:?}"
    );
    let pubsub = ids_of(plain.cmd(&["CLIENT", "LIST", "TYPE", "PubSub"]).text());
    assert_eq!(pubsub, vec![sub_id]);
    for none in ["master", "replica", "slave"] {
        assert_eq!(plain.cmd(&["CLIENT", "LIST", "TYPE", none]).text(), "");
    }
    assert_eq!(
        plain.cmd(&["CLIENT", "LIST", "TYPE", "foo"]),
        Reply::err("ERR Unknown client type 'foo'")
    );
}

#[test]
fn shutdown_abort_and_contradictions_are_refused() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["SHUTDOWN", "ABORT"]),
        Reply::err("ERR No shutdown in progress.")
    );
    for words in [
        &["NOSAVE", "ABORT"][..],
        &["NOSAVE", "SAVE"],
        &["NOW", "ABORT"],
        &["BOGUS"],
    ] {
        let mut args = vec!["SHUTDOWN"];
        args.extend_from_slice(words);
        assert_eq!(c.cmd(&args), Reply::err("ERR syntax error"), "{words:?}");
    }
    assert_eq!(c.cmd(&["PING"]), pong(), "still running");
}

#[test]
fn the_default_user_takes_any_password() {
    // No password is configured, so Redis's `default` user is `nopass`.
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let wrongpass = Reply::err("WRONGPASS invalid username-password pair or user is disabled.");
    assert_eq!(c.cmd(&["AUTH", "default", "anything"]), Reply::ok());
    assert_eq!(c.cmd(&["AUTH", "default", ""]), Reply::ok());
    assert_eq!(c.cmd(&["AUTH", "someone", "pw"]), wrongpass);
    assert_eq!(
        c.cmd(&["AUTH", "Default", "pw"]),
        wrongpass,
        "names are exact"
    );
    assert!(matches!(
        c.cmd(&["AUTH", "pw"]),
        Reply::Error(e) if e.starts_with("ERR AUTH <password> called without any password")
    ));
    assert!(matches!(
        c.cmd(&["HELLO", "3", "AUTH", "default", "pw", "SETNAME", "app"]),
        Reply::Map(_)
    ));
    assert_eq!(c.cmd(&["CLIENT", "GETNAME"]), Reply::bulk("app"));
    assert_eq!(c.cmd(&["HELLO", "2", "AUTH", "someone", "pw"]), wrongpass);
    // A refused HELLO changes nothing: still RESP3.
    assert!(matches!(c.cmd(&["HELLO"]), Reply::Map(_)));
}

#[test]
fn config_get_answers_a_plain_name_as_typed() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "HZ"]),
        Reply::Array(vec![Reply::bulk("HZ"), Reply::bulk("10")])
    );
    // A pattern answers with the parameters' own names.
    assert_eq!(
        c.cmd(&["CONFIG", "GET", "H?"]),
        Reply::Array(vec![Reply::bulk("hz"), Reply::bulk("10")])
    );
    assert_eq!(c.cmd(&["CONFIG", "GET", "nosuch"]), Reply::Array(vec![]));
}

#[test]
fn select_checks_the_int_range_first() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["SELECT", "2147483648"]),
        Reply::err("ERR value is out of range, value must between -2147483648 and 2147483647")
    );
    assert_eq!(
        c.cmd(&["SELECT", "16"]),
        Reply::err("ERR DB index is out of range")
    );
    assert_eq!(
        c.cmd(&["SELECT", "x"]),
        Reply::err("ERR value is not an integer or out of range")
    );
}

/// MEMORY USAGE counts a key and its value (growing with it), with
/// Redis's replies for a missing key and bad options; DOCTOR and HELP.
#[test]
fn memory_usage_doctor_and_help() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    r.cmd(&["SET", "small", "v"]);
    r.cmd(&["SET", "big", &"v".repeat(10_000)]);
    let small = r.int(&["MEMORY", "USAGE", "small"]);
    let big = r.int(&["MEMORY", "USAGE", "big", "SAMPLES", "0"]);
    assert!(small > 0 && big > 10_000 && big > small, "{small} {big}");
    r.cmd(&["RPUSH", "list", "a", "b", "c"]);
    let list = r.int(&["MEMORY", "USAGE", "list"]);
    r.cmd(&["RPUSH", "list", &"x".repeat(1000)]);
    let grown = r.int(&["MEMORY", "USAGE", "list"]);
    // Most of the new element's 1000 bytes: the first figure counted the
    // share headers its copy gave the first three elements once
    // (`cmd::memory::allocated_by_copy`), which the second does not.
    assert!(grown > list + 900, "{list} -> {grown}");
    assert_eq!(r.cmd(&["MEMORY", "USAGE", "missing"]), Reply::Nil);
    assert_eq!(
        r.cmd(&["MEMORY", "USAGE", "small", "SAMPLES", "-1"]),
        err("ERR syntax error")
    );
    assert_eq!(
        r.cmd(&["MEMORY", "USAGE", "small", "SAMPLES", "x"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        r.cmd(&["MEMORY", "USAGE", "small", "bar"]),
        err("ERR syntax error")
    );
    assert_eq!(
        r.cmd(&["MEMORY", "USAGE"]),
        err("ERR wrong number of arguments for 'memory|usage' command")
    );
    assert_eq!(
        r.cmd(&["MEMORY", "foo"]),
        err("ERR unknown subcommand 'foo'. Try MEMORY HELP.")
    );
    let Reply::Bulk(doctor) = r.cmd(&["MEMORY", "DOCTOR"]) else {
        panic!("DOCTOR answers a bulk");
    };
    assert!(doctor.starts_with(b"Hi Sam, "));
    let help = r.cmd(&["MEMORY", "HELP"]).items();
    assert_eq!(
        help[0],
        Reply::Simple("MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:".into())
    );
}

/// The field names of a MEMORY STATS reply, with `db.N` and the names
/// inside it, in order.
fn memory_stats_names(reply: &Reply) -> Vec<String> {
    let mut names = Vec::new();
    for pair in reply.items().chunks(2) {
        names.push(pair[0].text());
        if let Reply::Array(inner) = &pair[1] {
            names.extend(inner.iter().step_by(2).map(Reply::text));
        }
    }
    names
}

/// MEMORY STATS: redis-server 7.0.15's fields in its order (a database
/// listed when it holds keys), its key count over every shard, its sums,
/// and its arity error; in RESP3 a map. Compared with redis-server's reply
/// where it is installed.
#[test]
fn memory_stats_fields_and_figures() {
    let server = Server::start(3, &[]);
    let mut r = server.raw();
    for i in 0..30 {
        r.cmd(&["SET", &format!("k{i}"), "v"]);
    }
    r.cmd(&["SET", "t", "v", "EX", "100"]);
    r.cmd(&["SELECT", "3"]);
    r.cmd(&["SET", "other", "v"]);
    let reply = r.cmd(&["MEMORY", "STATS"]);
    let names = memory_stats_names(&reply);
    let field = |name: &str| -> Reply {
        let items = reply.items();
        let at = items
            .iter()
            .step_by(2)
            .position(|k| k.text() == name)
            .unwrap();
        items[at * 2 + 1].clone()
    };
    assert_eq!(field("keys.count"), Reply::Int(32));
    assert!(names.contains(&"db.0".to_string()) && names.contains(&"db.3".to_string()));
    assert!(!names.contains(&"db.1".to_string()));
    let total = field("total.allocated").int();
    assert!(field("peak.allocated").int() >= total);
    assert_eq!(field("allocator.allocated").int(), total);
    let net = total - field("startup.allocated").int();
    assert_eq!(field("keys.bytes-per-key").int(), net / 32);
    let overhead = field("overhead.total").int();
    assert_eq!(field("dataset.bytes").int(), (total - overhead).max(0));
    let Reply::Array(db0) = field("db.0") else {
        panic!("db.0 is a map");
    };
    // The expires overhead counts the one key with a TTL.
    assert!(db0[1].int() > 0 && db0[3].int() > 0, "{db0:?}");
    assert_eq!(
        r.cmd(&["MEMORY", "STATS", "x"]),
        err("ERR wrong number of arguments for 'memory|stats' command")
    );
    r.cmd(&["HELLO", "3"]);
    assert!(matches!(r.cmd(&["MEMORY", "STATS"]), Reply::Map(_)));

    // The same names as redis-server, holding keys in databases 0 and 3.
    let Some(redis) = common::reference::Redis::or_skip("memory_stats_fields_and_figures") else {
        return;
    };
    let mut reference = common::Raw::connect(redis.port);
    reference.cmd(&["SET", "k", "v", "EX", "100"]);
    reference.cmd(&["SELECT", "3"]);
    reference.cmd(&["SET", "other", "v"]);
    assert_eq!(
        names,
        memory_stats_names(&reference.cmd(&["MEMORY", "STATS"]))
    );
}

/// INFO's default sections are redis-server 7.0's (Modules, Errorstats and
/// Cluster among them: clients read `cluster_enabled` before anything
/// else), and errorstats counts every error reply by its first word:
/// refused commands, failed ones, and those inside EXEC, on any shard.
#[test]
fn info_has_redis_sections_and_counts_errors_by_code() {
    let server = Server::start(2, &[]);
    let mut r = server.raw();
    let Reply::Bulk(text) = r.cmd(&["INFO"]) else {
        panic!("INFO answers a bulk");
    };
    let headers: Vec<String> = String::from_utf8(text)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(str::to_string)
        .collect();
    assert_eq!(
        headers,
        [
            "# Server",
            "# Clients",
            "# Memory",
            "# Persistence",
            "# Stats",
            "# Replication",
            "# CPU",
            "# Modules",
            "# Errorstats",
            "# Cluster",
            "# Keyspace"
        ]
    );
    assert_eq!(
        r.info_field("cluster", "cluster_enabled").as_deref(),
        Some("0")
    );
    let replid = r.info_field("replication", "master_replid").unwrap();
    assert!(
        replid.len() == 40 && replid.bytes().all(|b| b.is_ascii_hexdigit()),
        "{replid}"
    );
    assert_eq!(
        r.info_field("replication", "master_repl_offset").as_deref(),
        Some("0")
    );
    assert!(r.info_field("cpu", "used_cpu_user_children").is_some());
    assert_eq!(r.info_int("stats", "total_error_replies"), 0);
    r.cmd(&["NOSUCHCOMMAND"]); // ERR, refused before it runs
    r.cmd(&["SET", "a", "b", "c"]); // ERR syntax error
    r.cmd(&["SET", "s", "v"]);
    let keys = keys_on_shard("k", 1, 2, 1);
    r.cmd(&["LPUSH", &keys[0], "x"]);
    r.cmd(&["INCR", &keys[0]]); // WRONGTYPE, from the other shard
    r.cmd(&["MULTI"]);
    r.cmd(&["LPUSH", "s", "x"]); // WRONGTYPE inside EXEC
    r.cmd(&["EXEC"]);
    assert_eq!(
        r.info_field("errorstats", "errorstat_ERR").as_deref(),
        Some("count=2")
    );
    assert_eq!(
        r.info_field("errorstats", "errorstat_WRONGTYPE").as_deref(),
        Some("count=2")
    );
    assert_eq!(r.info_int("stats", "total_error_replies"), 4);
    assert_eq!(r.cmd(&["CONFIG", "RESETSTAT"]), Reply::ok());
    assert_eq!(r.info_int("stats", "total_error_replies"), 0);
}

/// INFO commandstats counts a command refused before it ran as rejected,
/// not called, as Redis 7.0 does (wrong arity, ACL, a queueing error).
#[test]
fn refused_commands_count_as_rejected_calls() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let cmdstat = |c: &mut common::Raw, name: &str| {
        let info = c.cmd(&["INFO", "commandstats"]).text();
        info.lines()
            .find_map(|l| {
                l.strip_prefix(&format!("cmdstat_{name}:"))
                    .map(str::to_string)
            })
            .unwrap_or_default()
    };
    c.cmd(&["CONFIG", "RESETSTAT"]);
    assert!(matches!(c.cmd(&["SET", "k"]), Reply::Error(_)));
    assert!(
        cmdstat(&mut c, "set").starts_with("calls=0,")
            && cmdstat(&mut c, "set").contains(",rejected_calls=1,failed_calls=0"),
        "{}",
        cmdstat(&mut c, "set")
    );
    // Inside MULTI: refused when queued.
    c.cmd(&["MULTI"]);
    assert!(matches!(c.cmd(&["SET", "k"]), Reply::Error(_)));
    assert!(matches!(c.cmd(&["EXEC"]), Reply::Error(_)));
    assert!(cmdstat(&mut c, "set").contains(",rejected_calls=2,"));
    // A call that ran and failed is failed, not rejected.
    c.cmd(&["SET", "s", "v"]);
    assert!(matches!(c.cmd(&["INCR", "s"]), Reply::Error(_)));
    assert!(cmdstat(&mut c, "incr").contains("rejected_calls=0,failed_calls=1"));
}

/// ember is no cluster node: CLUSTER answers as a standalone redis-server
/// 7.0.15 does, and its RESET is refused to scripts (`noscript`).
#[test]
fn cluster_answers_as_a_standalone_redis() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let disabled = err("ERR This instance has cluster support disabled");
    assert_eq!(c.cmd(&["CLUSTER", "INFO"]), disabled);
    assert_eq!(c.cmd(&["cluster", "keyslot", "k"]), disabled);
    assert_eq!(
        c.cmd(&["CLUSTER", "nosuch"]),
        err("ERR unknown subcommand 'nosuch'. Try CLUSTER HELP.")
    );
    let reset = c.cmd(&["EVAL", "return redis.call('cluster', 'reset', 'hard')", "0"]);
    assert!(
        matches!(&reset, Reply::Error(e) if e.starts_with("ERR This Redis command is not allowed from script")),
        "{reset:?}"
    );
}

fn info_memory_lines(c: &mut common::Raw) -> Vec<(String, String)> {
    let text = match c.cmd(&["INFO", "memory"]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("INFO answered {other:?}"),
    };
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn info_memory_has_redis_fields_in_redis_order_and_adds_up() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    for i in 0..50 {
        c.cmd(&["SET", &format!("k{i}"), "value"]);
    }
    let ours = info_memory_lines(&mut c);
    let value = |name: &str| -> String {
        ours.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let int = |name: &str| value(name).parse::<i64>().unwrap();
    assert_eq!(
        int("used_memory"),
        int("used_memory_overhead") + int("used_memory_dataset")
    );
    assert!(int("used_memory_startup") > 0);
    assert!(int("used_memory_startup") <= int("used_memory"));
    assert!(int("total_system_memory") > 0);
    for ratio in [
        "allocator_frag_ratio",
        "allocator_rss_ratio",
        "rss_overhead_ratio",
        "mem_fragmentation_ratio",
    ] {
        assert!(value(ratio).parse::<f64>().is_ok(), "{ratio}");
    }
    assert!(value("used_memory_peak_perc").ends_with('%'));
    let Some(redis) = common::reference::Redis::or_skip("INFO memory fields") else {
        return;
    };
    let names = |lines: Vec<(String, String)>| -> Vec<String> {
        lines.into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(
        names(ours.clone()),
        names(info_memory_lines(&mut common::Raw::connect(redis.port)))
    );
}

fn info_names(c: &mut common::Raw, section: &str) -> Vec<String> {
    c.cmd(&["INFO", section])
        .text()
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, _)| k.to_string())
        .collect()
}

/// Every field of redis-server 7.0.15's sections is in ember's, in
/// Redis's order (ember's own fields, `shards` and the expiry figures, may
/// come between them).
#[test]
fn info_sections_have_every_redis_field_in_redis_order() {
    let Some(redis) = common::reference::Redis::or_skip("INFO fields") else {
        return;
    };
    let server = Server::start(2, &[]);
    let mut ours = server.raw();
    let mut theirs = common::Raw::connect(redis.port);
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["SET", "k", "v"]);
    }
    for section in [
        "server",
        "clients",
        "persistence",
        "stats",
        "replication",
        "cpu",
        "cluster",
    ] {
        let want = info_names(&mut theirs, section);
        let got: Vec<String> = info_names(&mut ours, section)
            .into_iter()
            .filter(|name| want.contains(name))
            .collect();
        assert_eq!(got, want, "INFO {section}");
    }
    let os = info_field(&ours.cmd(&["INFO", "server"]).text(), "os").unwrap();
    let redis_os = info_field(&theirs.cmd(&["INFO", "server"]).text(), "os").unwrap();
    assert_eq!(os, redis_os);
}

#[test]
fn memory_purge_and_malloc_stats_answer_as_redis_with_jemalloc() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    for i in 0..2000 {
        c.cmd(&["SET", &format!("k{i}"), &"x".repeat(500)]);
    }
    c.cmd(&["FLUSHALL"]);
    assert_eq!(c.cmd(&["MEMORY", "PURGE"]), Reply::Simple("OK".into()));
    let report = match c.cmd(&["MEMORY", "MALLOC-STATS"]) {
        Reply::Bulk(b) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    };
    assert!(report.contains("jemalloc statistics"), "{report:.200}");
    let Some(redis) = common::reference::Redis::or_skip("MEMORY PURGE / MALLOC-STATS") else {
        return;
    };
    let mut r = common::Raw::connect(redis.port);
    for case in [
        &["MEMORY", "PURGE", "x"][..],
        &["MEMORY", "MALLOC-STATS", "x"],
        &["MEMORY", "HELP"],
        &["MEMORY", "NOSUCH"],
    ] {
        assert_eq!(c.cmd(case), r.cmd(case), "{case:?}");
    }
    assert_eq!(r.cmd(&["MEMORY", "PURGE"]), Reply::Simple("OK".into()));
}

/// MODULE on a server without modules, LOLWUT's version line, and the
/// DEBUG subcommands Redis's tests call, answered as redis-server 7.0.15
/// answers them.
#[test]
fn module_lolwut_and_debug_answer_as_redis() {
    let Some(redis) = common::reference::Redis::start(&["--enable-debug-command", "yes"]) else {
        eprintln!("redis-server is not installed: skipped (CI installs it)");
        return;
    };
    let server = Server::start(2, &["--enable-debug-command", "yes"]);
    let (mut ours, mut theirs) = (server.raw(), common::Raw::connect(redis.port));
    for case in [
        &["MODULE", "LIST"][..],
        &["MODULE", "HELP"],
        &["MODULE", "LOAD", "/x.so"],
        &["MODULE", "UNLOAD", "x"],
        &["MODULE", "LIST", "x"],
        &["MODULE", "NOSUCH"],
        &["MODULE"],
        &["LOLWUT"],
        &["LOLWUT", "VERSION", "x"],
        &["DEBUG", "ERROR", "some text"],
        &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"],
        &["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "abc"],
        &["DEBUG", "SET-SKIP-CHECKSUM-VALIDATION", "1"],
        &["DEBUG", "CHANGE-REPL-ID"],
        &["DEBUG", "NOSUCH"],
    ] {
        assert_eq!(ours.cmd(case), theirs.cmd(case), "{case:?}");
    }
}
