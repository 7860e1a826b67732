//! SORT and SORT_RO: black-box checks against ember (3 shards, so pattern
//! keys live on other shards than the source), and a differential test
//! against redis-server with random containers, patterns and options.

mod common;

use common::reference::Redis;
use common::{bulks, err, int, keys_on_shard, Raw, Reply, Server};

#[test]
fn sorts_numerically_alpha_desc_and_by_patterns_across_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "3", "1", "2", "10"]);
    assert_eq!(c.cmd(&["SORT", "L"]), bulks(&["1", "2", "3", "10"]));
    assert_eq!(
        c.cmd(&["SORT", "L", "ALPHA"]),
        bulks(&["1", "10", "2", "3"])
    );
    assert_eq!(
        c.cmd(&["SORT", "L", "DESC", "LIMIT", "1", "2"]),
        bulks(&["3", "2"])
    );
    c.cmd(&["MSET", "w_1", "5", "w_2", "4", "w_3", "3", "w_10", "1"]);
    c.cmd(&["HSET", "h_1", "f", "a"]);
    assert_eq!(
        c.cmd(&["SORT", "L", "BY", "w_*"]),
        bulks(&["10", "3", "2", "1"])
    );
    let got = c.cmd(&[
        "SORT", "L", "BY", "w_*", "GET", "#", "GET", "h_*->f", "LIMIT", "2", "5",
    ]);
    assert_eq!(
        got,
        Reply::Array(vec![
            Reply::bulk("2"),
            Reply::Nil,
            Reply::bulk("1"),
            Reply::bulk("a")
        ])
    );
    // BY without `*` keeps the list's order; GET without `*` is nil.
    assert_eq!(
        c.cmd(&["SORT", "L", "BY", "nosort", "DESC"]),
        bulks(&["10", "2", "1", "3"])
    );
    assert_eq!(
        c.cmd(&["SORT", "L", "BY", "nosort", "GET", "k", "LIMIT", "0", "1"]),
        Reply::Array(vec![Reply::Nil])
    );
    assert_eq!(
        c.cmd(&["SORT_RO", "L", "GET", "w_*"]),
        bulks(&["5", "4", "3", "1"])
    );
    // Sorted sets keep score order with BY nosort, LIMIT included.
    c.cmd(&[
        "ZADD", "z", "1", "a", "5", "b", "2", "c", "10", "d", "3", "e",
    ]);
    assert_eq!(
        c.cmd(&["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"]),
        bulks(&["d", "b"])
    );
    assert_eq!(
        c.cmd(&["SORT", "z", "ALPHA", "DESC"]),
        bulks(&["e", "d", "c", "b", "a"])
    );
}

#[test]
fn errors_are_redis_texts() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["SADD", "s", "1", "x"]);
    c.cmd(&["SET", "str", "v"]);
    assert_eq!(
        c.cmd(&["SORT", "s"]),
        err("ERR One or more scores can't be converted into double")
    );
    assert_eq!(
        c.cmd(&["SORT", "str"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
    assert_eq!(
        c.cmd(&["SORT_RO", "s", "STORE", "d"]),
        err("ERR syntax error")
    );
    assert_eq!(c.cmd(&["SORT", "s", "LIMIT", "1"]), err("ERR syntax error"));
    assert_eq!(
        c.cmd(&["SORT", "s", "LIMIT", "a", "1"]),
        err("ERR value is not an integer or out of range")
    );
    assert_eq!(
        c.cmd(&["COMMAND", "GETKEYS", "SORT", "a", "STORE", "x", "BY", "store", "STORE", "d"]),
        bulks(&["a", "d"])
    );
}

#[test]
fn store_writes_a_list_on_another_shard_and_empty_deletes() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let src = &keys_on_shard("src", 0, 3, 1)[0];
    let dst = &keys_on_shard("dst", 1, 3, 1)[0];
    c.cmd(&["RPUSH", src, "b", "a", "c"]);
    c.cmd(&["MSET", "w_a", "3", "w_b", "2", "w_c", "1"]);
    assert_eq!(c.cmd(&["SORT", src, "BY", "w_*", "STORE", dst]), int(3));
    assert_eq!(c.cmd(&["LRANGE", dst, "0", "-1"]), bulks(&["c", "b", "a"]));
    assert_eq!(c.cmd(&["SORT", src, "ALPHA", "STORE", dst]), int(3));
    assert_eq!(c.cmd(&["LRANGE", dst, "0", "-1"]), bulks(&["a", "b", "c"]));
    // A set with no order asked for is sorted ALPHA when stored.
    c.cmd(&["SADD", "set", "b", "c", "a"]);
    assert_eq!(
        c.cmd(&["SORT", "set", "BY", "nosort", "STORE", dst]),
        int(3)
    );
    assert_eq!(c.cmd(&["LRANGE", dst, "0", "-1"]), bulks(&["a", "b", "c"]));
    // Missing GETs store as empty strings.
    assert_eq!(
        c.cmd(&["SORT", src, "ALPHA", "GET", "nokey_*", "STORE", dst]),
        int(3)
    );
    assert_eq!(c.cmd(&["LRANGE", dst, "0", "-1"]), bulks(&["", "", ""]));
    assert_eq!(c.cmd(&["SORT", "nosuch", "STORE", dst]), int(0));
    assert_eq!(c.cmd(&["EXISTS", dst]), int(0));
}

#[test]
fn an_empty_store_breaks_a_watch_on_the_destination() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["LPUSH", "foo", "bar"]);
    c.cmd(&["WATCH", "foo"]);
    assert_eq!(c.cmd(&["SORT", "emptylist", "STORE", "foo"]), int(0));
    c.cmd(&["MULTI"]);
    c.cmd(&["PING"]);
    assert_eq!(c.cmd(&["EXEC"]), Reply::Nil);
}

#[test]
fn sort_in_exec_reads_pattern_keys_on_other_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "1", "2", "3"]);
    c.cmd(&["MSET", "w_1", "3", "w_2", "2", "w_3", "1"]);
    c.cmd(&["MULTI"]);
    c.cmd(&["SORT", "L", "BY", "w_*", "GET", "w_*"]);
    c.cmd(&["SORT", "L", "BY", "w_*", "STORE", "out"]);
    assert_eq!(
        c.cmd(&["EXEC"]),
        Reply::Array(vec![bulks(&["1", "2", "3"]), int(3)])
    );
    assert_eq!(
        c.cmd(&["LRANGE", "out", "0", "-1"]),
        bulks(&["3", "2", "1"])
    );
}

#[test]
fn a_sort_by_pattern_sees_a_cross_shard_mset_whole() {
    // Writers change every weight at once (MSET across shards, atomic under
    // key locks); a SORT BY those weights must see one state or the other,
    // never a mix: the order is always one of the two.
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let members: Vec<String> = (0..12).map(|i| i.to_string()).collect();
    let mut push = vec!["RPUSH", "L"];
    push.extend(members.iter().map(String::as_str));
    c.cmd(&push);
    let state = |flip: bool| -> Vec<String> {
        let mut argv = vec!["MSET".to_string()];
        for (i, m) in members.iter().enumerate() {
            let w = if flip { 100 - i } else { i };
            argv.push(format!("w_{m}"));
            argv.push(w.to_string());
        }
        argv
    };
    let up = state(false);
    let down = state(true);
    let refs = |v: &Vec<String>| v.iter().map(String::as_str).collect::<Vec<_>>().join(" ");
    let (up_s, down_s) = (refs(&up), refs(&down));
    c.cmd(&up_s.split(' ').collect::<Vec<_>>());
    let port = server.port;
    let writer = std::thread::spawn(move || {
        let mut w = Raw::connect(port);
        for i in 0..300 {
            let s = if i % 2 == 0 { &down_s } else { &up_s };
            w.cmd(&s.split(' ').collect::<Vec<_>>());
        }
    });
    let asc: Vec<&str> = members.iter().map(String::as_str).collect();
    let desc: Vec<&str> = asc.iter().rev().copied().collect();
    for _ in 0..300 {
        let got = c.cmd(&["SORT", "L", "BY", "w_*"]);
        assert!(
            got == bulks(&asc) || got == bulks(&desc),
            "mixed state: {got:?}"
        );
    }
    writer.join().unwrap();
}

/// A small deterministic generator (xorshift), so failures replay.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn member(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => format!("m{}", rng.below(20)),
        1 => format!("{}.5", rng.below(20)),
        _ => rng.below(40).to_string(),
    }
}

fn weight(rng: &mut Rng) -> String {
    match rng.below(20) {
        0 => "x".into(),
        1 => "".into(),
        2..=6 => format!("{}.{}", rng.below(100), rng.below(100)),
        _ => rng.below(50).to_string(),
    }
}

/// Random data: three containers (list, set, sorted set), string weights
/// and hash fields for most members.
fn fill(rng: &mut Rng) -> Vec<Vec<String>> {
    let mut cmds = vec![vec!["FLUSHALL".to_string()]];
    let n = 1 + rng.below(25);
    let mut list = vec!["RPUSH".to_string(), "L".into()];
    let mut set = vec!["SADD".to_string(), "S".into()];
    let mut zset = vec!["ZADD".to_string(), "Z".into()];
    for _ in 0..n {
        list.push(member(rng));
        set.push(member(rng));
        zset.push(rng.below(10).to_string());
        zset.push(member(rng));
    }
    cmds.extend([list, set, zset]);
    for i in 0..40 {
        for m in [i.to_string(), format!("m{i}"), format!("{i}.5")] {
            if rng.chance(80) {
                cmds.push(vec!["SET".into(), format!("w_{m}"), weight(rng)]);
            }
            if rng.chance(70) {
                cmds.push(vec![
                    "HSET".into(),
                    format!("h_{m}"),
                    "f".into(),
                    weight(rng),
                ]);
            }
        }
    }
    cmds
}

/// A random SORT whose answer is deterministic in Redis: no unsorted set
/// read back (its order is the hash table's), and no ALPHA by a pattern
/// (ties there are left in qsort's order).
fn random_sort(rng: &mut Rng) -> Vec<String> {
    let src = ["L", "S", "Z", "nosuch"][rng.below(4) as usize];
    let ro = rng.chance(20);
    let mut argv = vec![if ro { "SORT_RO" } else { "SORT" }.to_string(), src.into()];
    let alpha = rng.chance(30);
    let store = !ro && rng.chance(30);
    match rng.below(4) {
        0 if !alpha => argv.extend(["BY".into(), "w_*".into()]),
        1 if !alpha => argv.extend(["BY".into(), "h_*->f".into()]),
        2 if src != "S" || store => argv.extend(["BY".into(), "nosort".into()]),
        _ => {}
    }
    if alpha {
        argv.push("ALPHA".into());
    }
    if rng.chance(40) {
        argv.push(if rng.chance(50) { "DESC" } else { "ASC" }.into());
    }
    if rng.chance(40) {
        let start = rng.below(30) as i64 - 5;
        let count = rng.below(30) as i64 - 5;
        argv.extend(["LIMIT".into(), start.to_string(), count.to_string()]);
    }
    for _ in 0..rng.below(3) {
        let get = ["#", "w_*", "h_*->f", "const", "h_*->"][rng.below(5) as usize];
        argv.extend(["GET".into(), get.into()]);
    }
    if store {
        argv.extend(["STORE".into(), format!("dst{}", rng.below(3))]);
    }
    argv
}

fn run(c: &mut Raw, cmd: &[String]) -> Reply {
    let args: Vec<&str> = cmd.iter().map(String::as_str).collect();
    c.cmd(&args)
}

#[test]
fn differential_against_redis() {
    let Some(redis) = Redis::or_skip("sort differential") else {
        return;
    };
    for shards in [3, 1] {
        let server = Server::start(shards, &[]);
        let mut ember = server.raw();
        let mut reference = Raw::connect(redis.port);
        let mut rng = Rng(0x5047_u64 + shards as u64);
        for round in 0..40 {
            for cmd in fill(&mut rng) {
                assert_eq!(run(&mut ember, &cmd), run(&mut reference, &cmd), "{cmd:?}");
            }
            for _ in 0..40 {
                let cmd = random_sort(&mut rng);
                let mine = run(&mut ember, &cmd);
                let theirs = run(&mut reference, &cmd);
                assert_eq!(mine, theirs, "{shards} shards, round {round}: {cmd:?}");
                if let Some(dst) = cmd
                    .last()
                    .filter(|_| cmd.len() > 2 && cmd[cmd.len() - 2] == "STORE")
                {
                    let lrange = ["LRANGE".to_string(), dst.clone(), "0".into(), "-1".into()];
                    assert_eq!(
                        run(&mut ember, &lrange),
                        run(&mut reference, &lrange),
                        "{cmd:?}"
                    );
                    let exists = ["EXISTS".to_string(), dst.clone()];
                    assert_eq!(run(&mut ember, &exists), run(&mut reference, &exists));
                }
            }
        }
    }
}

#[test]
fn a_source_changing_between_the_steps_is_read_again_under_locks() {
    // The writer keeps pushing and popping a member of the source: a SORT
    // that read the source before the change takes its locks again, so
    // every answer pairs each member with its own weight.
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["RPUSH", "L", "1", "2", "3", "4", "5", "6"]);
    for m in ["1", "2", "3", "4", "5", "6", "7"] {
        c.cmd(&["SET", &format!("w_{m}"), m]);
    }
    let port = server.port;
    let writer = std::thread::spawn(move || {
        let mut w = Raw::connect(port);
        for _ in 0..300 {
            w.cmd(&["RPUSH", "L", "7"]);
            w.cmd(&["RPOP", "L"]);
        }
    });
    for _ in 0..300 {
        let got = c.cmd(&["SORT", "L", "BY", "w_*", "GET", "#", "GET", "w_*"]);
        let Reply::Array(items) = got else {
            panic!("{got:?}")
        };
        assert!(items.len() == 12 || items.len() == 14, "{items:?}");
        for pair in items.chunks(2) {
            assert_eq!(pair[0], pair[1]);
        }
    }
    writer.join().unwrap();
}
