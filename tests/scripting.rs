//! Lua scripting (EVAL, EVALSHA, SCRIPT): the Redis Lua API, the sandbox,
//! the reply conversions and their errors compared with redis-server, and
//! the patterns web tiers run as scripts (a rate limiter, a lock release,
//! a delayed-job mover hammered by 50 clients across shards).

mod common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use common::reference::Redis;
use common::{int, keys_on_shard, Raw, Reply, Server};

/// Scripts and commands whose replies must be redis-server's, byte for
/// byte (errors included). Run in order on a fresh server of each.
const CASES: &[&[&str]] = &[
    &["SET", "s", "abc"],
    &["EVAL", "return redis.call('incr','x')", "0"],
    &["EVAL", "return redis.call('incr','s')", "0"],
    &["EVAL", "return redis.pcall('incr','s')", "0"],
    &["EVAL", "return a", "0"],
    &["EVAL", "a=1", "0"],
    &["EVAL", "return +", "0"],
    &["EVAL", "error('boom')", "0"],
    &["EVAL", "error({err='X boom'})", "0"],
    &["EVAL", "\n\nerror('line three')", "0"],
    &["EVAL", "return redis.call('nosuch')", "0"],
    &["EVAL", "return redis.call('get')", "0"],
    &["EVAL", "return redis.call('eval','return 1','0')", "0"],
    &["EVAL", "return redis.call('blpop','q',0)", "0"],
    &["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"],
    &["EVALSHA", "abc", "0"],
    &["EVAL", "return 1", "-1"],
    &["EVAL", "return 1", "5", "a"],
    &["EVAL", "return 1", "x"],
    &["SCRIPT", "LOAD", "return 1"],
    &["EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"],
    &["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "ffff"],
    &["SCRIPT", "HELP"],
    &["SCRIPT", "KILL"],
    &["SCRIPT", "FLUSH", "x"],
    &["SCRIPT", "LOAD", "return +"],
    &["SCRIPT", "NOPE"],
    &["EVAL", "return redis.error_reply('My Error')", "0"],
    &["EVAL", "return {err='My Error'}", "0"],
    &["EVAL", "return redis.status_reply('FINE')", "0"],
    &["EVAL", "return {1,2,3,'ciao',{1,2}}", "0"],
    &["EVAL", "return 3.99", "0"],
    &["EVAL", "return -3.99", "0"],
    &["EVAL", "return true", "0"],
    &["EVAL", "return false", "0"],
    &["EVAL", "return nil", "0"],
    &["EVAL", "return {1,2,nil,4}", "0"],
    &["EVAL", "return {1,2,{ok='x'},{err='y'}, 2.5, true}", "0"],
    &["EVAL", "return redis.pcall('nosuch')", "0"],
    &["EVAL", "return redis.call(1)", "0"],
    &["EVAL", "return redis.call()", "0"],
    &["EVAL", "return redis.call({})", "0"],
    &["EVAL", "return os", "0"],
    &["EVAL", "return io", "0"],
    &["EVAL", "return loadfile", "0"],
    &["EVAL", "return dofile", "0"],
    &["EVAL", "return print", "0"],
    &["EVAL", "return redis.sha1hex('')", "0"],
    &["EVAL", "return redis.sha1hex()", "0"],
    &["EVAL", "return redis.REDIS_VERSION", "0"],
    &["EVAL", "return redis.REDIS_VERSION_NUM", "0"],
    &["EVAL", "redis.x = 1", "0"],
    &["EVAL", "string.foo=1", "0"],
    &["EVAL", "local t={} for k,v in pairs(_G) do table.insert(t,k) end table.sort(t) return t", "0"],
    &["EVAL", "return redis.setresp(3)", "0"],
    &["EVAL", "return redis.setresp(4)", "0"],
    &["EVAL", "redis.setresp()", "0"],
    &["EVAL", "redis.setresp(3) return redis.call('hgetall','nokey')", "0"],
    &["EVAL", "return redis.log(redis.LOG_WARNING, 'hi')", "0"],
    &["EVAL", "redis.log()", "0"],
    &["EVAL", "redis.log('a','b')", "0"],
    &["EVAL", "redis.log(99,'b')", "0"],
    &["EVAL", "return redis.call('select', 1)", "0"],
    &["EVAL", "return redis.call('ping')", "0"],
    &["EVAL", "return redis.pcall('get')", "0"],
    &["EVAL_RO", "return redis.call('set','a','b')", "0"],
    &["EVAL", "#!lua flags=no-writes\nreturn redis.call('set','a','b')", "0"],
    &["EVAL", "#!lua flags=bad\nreturn 1", "0"],
    &["EVAL", "#!foo\nreturn 1", "0"],
    &["EVAL", "#!lua\nreturn a", "0"],
    &["EVAL", "#!lua name=x\nreturn 1", "0"],
    &["EVAL", "#!lua flags=no-writes,allow-oom,allow-stale,no-cluster,allow-cross-slot-keys\nreturn 1", "0"],
    &["EVAL", "redis.set_repl(99)", "0"],
    &["EVAL", "redis.set_repl()", "0"],
    &["EVAL", "return redis.set_repl(redis.REPL_ALL)", "0"],
    &["EVAL", "return redis.replicate_commands()", "0"],
    &["EVAL", "return redis.breakpoint()", "0"],
    &["EVAL", "return redis.debug('x')", "0"],
    &["EVAL", "return redis.error_reply()", "0"],
    &["EVAL", "return redis.acl_check_cmd('nosuch')", "0"],
    &["EVAL", "return redis.acl_check_cmd('get')", "0"],
    &["EVAL", "return cjson.encode({a='x/y'})", "0"],
    &["EVAL", "return cjson.encode({})", "0"],
    &["EVAL", "return cjson.encode({1,2,3,{x=1.5},'a\"b'})", "0"],
    &["EVAL", "return cjson.decode('[1,2,{\"a\":3}]')[3].a", "0"],
    &["EVAL", "return cjson.decode('{\"a\":[1,2,\"x\"]}').a", "0"],
    &["EVAL", "return bit.tohex(65535)", "0"],
    &["EVAL", "return {bit.band(7, 3), bit.bor(1, 2), bit.bxor(5, 3), bit.lshift(1, 31), bit.rshift(-1, 28), bit.arshift(-16, 2), bit.bnot(0), bit.tobit(4294967297)}", "0"],
    &["EVAL", "return {KEYS[1], ARGV[1], #KEYS, #ARGV}", "1", "k1", "a1"],
    &["EVAL", "redis.setresp(3) return redis.call('zscore','nz','m')", "0"],
    &["EVAL", "redis.call('zadd','z',1.5,'m') redis.setresp(3) return redis.call('zscore','z','m')", "0"],
    &["EVAL", "redis.setresp(3) local r = redis.call('zscore','z','m') return tostring(r['double'])", "0"],
    &["EVAL", "return redis.call('zscore','z','m')", "0"],
    &["EVAL", "redis.call('hset','h','f','v') redis.setresp(3) return redis.call('hgetall','h')", "0"],
    &["EVAL", "redis.setresp(3) return redis.call('hgetall','h')['map']['f']", "0"],
    &["EVAL", "redis.setresp(3) return redis.call('smembers','nosuchset')", "0"],
    &["EVAL", "redis.setresp(3) return redis.call('exists','z') == 1", "0"],
    &["EVAL", "return {double=3.5}", "0"],
    &["EVAL", "return tostring(1e15)", "0"],
    &["EVAL", "return redis.call('set','x',1.5)", "0"],
    &["GET", "x"],
    &["EVAL", "return redis.call('get','nokey')", "0"],
    &["EVAL", "return type(redis.call('get','nokey'))", "0"],
    &["EVAL", "local ok = pcall(function() redis.call('nosuch') end) return ok", "0"],
    &["EVAL", "return pcall(function() error({err='E'}) end)", "0"],
    &["EVAL", "return _G.x", "0"],
    &["EVAL", "return loadstring('return 1')()", "0"],
    &["EVAL", "local f = function() return nonexist end return f()", "0"],
    &["EVAL", "return 1\n+ nil", "0"],
    &["EVAL", "return redis.call('lpush', KEYS[1], 'a', 'b')", "1", "list"],
    &["EVAL", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "list"],
    &["EVAL", "return redis.call('type', KEYS[1])", "1", "list"],
    &["EVAL", "return redis.call('get', KEYS[1])", "1", "list"],
    // redis.error_reply's code, as luaPushErrorBuff parses it.
    &["EVAL", "return redis.error_reply('')", "0"],
    &["EVAL", "return redis.error_reply('x')", "0"],
    &["EVAL", "return redis.error_reply('MY code')", "0"],
    &["EVAL", "return redis.error_reply('-X y\r\n')", "0"],
    // A script never blocks: XREAD's BLOCK is refused outright.
    &["XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"],
    &["EVAL", "return redis.pcall('xread', 'BLOCK', 0, 'STREAMS', KEYS[1], '$')", "1", "st"],
    &["EVAL", "return redis.pcall('xreadgroup', 'GROUP', 'g', 'c', 'BLOCK', 0, 'STREAMS', KEYS[1], '>')", "1", "st"],
    &["EVAL", "return redis.pcall('xread', 'STREAMS', KEYS[1], '$')", "1", "st"],
    // SORT BY a constant sorts a set's members for a script.
    &["SADD", "letters", "b", "c", "a", "aa", "z", "ab"],
    &["EVAL", "return redis.call('sort', KEYS[1], 'by', 'nosort')", "1", "letters"],
    // cjson's invalid numbers and big tables through cjson and cmsgpack.
    &["EVAL", "return pcall(cjson.encode, {n = 0/0})", "0"],
    &["EVAL", "cjson.encode_invalid_numbers(true) local s = cjson.encode({n = 1/0}) cjson.encode_invalid_numbers(false) return s", "0"],
    &["EVAL", "local m = {} for i = 1, 20000 do m['k' .. i] = i end return #cjson.encode(m)", "0"],
    &["EVAL", "local m = {} for i = 1, 20000 do m['k' .. i] = i end local n = 0 for _ in pairs(cmsgpack.unpack(cmsgpack.pack(m))) do n = n + 1 end return n", "0"],
];

fn hello3(raw: &mut Raw) {
    assert!(matches!(raw.cmd(&["HELLO", "3"]), Reply::Map(_)));
}

#[test]
fn replies_and_errors_match_redis_in_resp2_and_resp3() {
    let Some(redis) = Redis::or_skip("scripting differential") else {
        return;
    };
    for resp3 in [false, true] {
        let server = Server::start(1, &[]);
        let mut ours = server.raw();
        let mut theirs = Raw::connect(redis.port);
        theirs.cmd(&["FLUSHALL"]);
        theirs.cmd(&["SCRIPT", "FLUSH"]);
        if resp3 {
            hello3(&mut ours);
            hello3(&mut theirs);
        }
        for case in CASES {
            let want = theirs.cmd(case);
            let got = ours.cmd(case);
            assert_eq!(got, want, "{case:?} (resp3: {resp3})");
        }
    }
}

#[test]
fn evalsha_sees_scripts_loaded_on_any_shard_and_flush_forgets_them() {
    let server = Server::start(3, &[]);
    let mut a = server.raw();
    let sha = a.cmd(&["SCRIPT", "LOAD", "return 'hi'"]).text();
    // Several connections land on different shards.
    for _ in 0..6 {
        let mut b = server.raw();
        assert_eq!(b.cmd(&["EVALSHA", &sha, "0"]), Reply::bulk("hi"));
    }
    assert_eq!(a.cmd(&["SCRIPT", "FLUSH"]), Reply::Simple("OK".into()));
    for _ in 0..6 {
        let mut b = server.raw();
        assert_eq!(
            b.cmd(&["EVALSHA", &sha, "0"]),
            Reply::Error("NOSCRIPT No matching script. Please use EVAL.".into())
        );
    }
}

#[test]
fn a_script_runs_on_the_shard_of_its_keys() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    for shard in 0..3 {
        let k = &keys_on_shard("k", shard, 3, 1)[0];
        let set = "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])";
        assert_eq!(c.cmd(&["EVAL", set, "1", k, "v"]), Reply::bulk("v"));
        assert_eq!(c.cmd(&["GET", k]), Reply::bulk("v"));
    }
}

const RATE_LIMIT: &str = "local n = redis.call('incr', KEYS[1])
if n == 1 then redis.call('expire', KEYS[1], ARGV[1]) end
if n > tonumber(ARGV[2]) then return 0 end
return 1";

#[test]
fn rate_limiter_increments_and_expires_in_one_script() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let sha = c.cmd(&["SCRIPT", "LOAD", RATE_LIMIT]).text();
    let allowed: i64 = (0..20)
        .map(|_| c.int(&["EVALSHA", &sha, "1", "rate:user1", "60", "5"]))
        .sum();
    assert_eq!(allowed, 5);
    let ttl = c.int(&["TTL", "rate:user1"]);
    assert!((1..=60).contains(&ttl), "ttl {ttl}");
    assert_eq!(c.cmd(&["GET", "rate:user1"]), Reply::bulk("20"));
}

const RELEASE: &str = "if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
else
  return 0
end";

#[test]
fn lock_release_deletes_only_its_own_token() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    c.cmd(&["SET", "lock:a", "token1", "NX", "PX", "30000"]);
    assert_eq!(c.cmd(&["EVAL", RELEASE, "1", "lock:a", "token2"]), int(0));
    assert_eq!(c.cmd(&["GET", "lock:a"]), Reply::bulk("token1"));
    assert_eq!(c.cmd(&["EVAL", RELEASE, "1", "lock:a", "token1"]), int(1));
    assert_eq!(c.cmd(&["EXISTS", "lock:a"]), int(0));
}

const MOVER: &str =
    "local due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, job in ipairs(due) do
  redis.call('lpush', KEYS[2], job)
  redis.call('zrem', KEYS[1], job)
end
return #due";

#[test]
fn delayed_job_mover_under_50_clients_loses_and_repeats_no_job() {
    const QUEUES: usize = 4;
    const JOBS: usize = 400;
    let server = Arc::new(Server::start(3, &[]));
    let mut setup = server.raw();
    let sha = setup.cmd(&["SCRIPT", "LOAD", MOVER]).text();
    let queue = |q: usize| (format!("{{q{q}}}:delayed"), format!("{{q{q}}}:work"));
    let shards: HashSet<usize> = (0..QUEUES)
        .map(|q| ember::util::slot::key_slot(queue(q).0.as_bytes()) as usize % 3)
        .collect();
    assert!(shards.len() > 1, "the queues should span shards");
    for q in 0..QUEUES {
        let (delayed, _) = queue(q);
        for j in 0..JOBS {
            let id = format!("job-{q}-{j}");
            setup.cmd(&["ZADD", &delayed, &j.to_string(), &id]);
        }
    }
    let taken = Arc::new(Mutex::new(Vec::<String>::new()));
    let threads: Vec<_> = (0..50)
        .map(|t| {
            let server = Arc::clone(&server);
            let sha = sha.clone();
            let taken = Arc::clone(&taken);
            std::thread::spawn(move || {
                let mut c = server.raw();
                let mut idle = 0;
                let mut i = t;
                while idle < 20 {
                    i += 1;
                    let (delayed, work) = queue(i % QUEUES);
                    if t % 5 == 0 {
                        // A worker: takes jobs from a work list.
                        match c.cmd(&["RPOP", &work]) {
                            Reply::Bulk(b) => {
                                taken.lock().unwrap().push(String::from_utf8(b).unwrap());
                                idle = 0;
                            }
                            _ => idle += 1,
                        }
                    } else {
                        let moved = c.int(&["EVALSHA", &sha, "2", &delayed, &work, "+inf", "7"]);
                        if moved == 0 {
                            idle += 1;
                        } else {
                            idle = 0;
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = server.raw();
    let mut taken = taken.lock().unwrap().clone();
    for q in 0..QUEUES {
        let (delayed, work) = queue(q);
        while let Reply::Bulk(b) = c.cmd(&["EVALSHA", &sha, "2", &delayed, &work, "+inf", "100"]) {
            let _ = b;
        }
        while c.int(&["EVALSHA", &sha, "2", &delayed, &work, "+inf", "100"]) > 0 {}
        while let Reply::Bulk(b) = c.cmd(&["RPOP", &work]) {
            taken.push(String::from_utf8(b).unwrap());
        }
    }
    let unique: HashSet<&String> = taken.iter().collect();
    assert_eq!(unique.len(), taken.len(), "a job was taken twice");
    assert_eq!(taken.len(), QUEUES * JOBS, "a job was lost");
}

#[test]
fn script_writes_fire_keyspace_events_and_reach_the_feed_as_one_unit() {
    let server = Server::start(1, &["--enable-debug-command", "yes"]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["DEBUG", "EMBER-RECORD", "START"]),
        Reply::Simple("OK".into())
    );
    c.cmd(&[
        "EVAL",
        "redis.call('set', KEYS[1], 'a') redis.call('incr', KEYS[2]) return redis.call('get', KEYS[1])",
        "2",
        "k1",
        "k2",
    ]);
    let feed = c.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]).text();
    let multi = feed.find("MULTI").expect("a MULTI in the feed");
    let set = feed
        .find("set")
        .or_else(|| feed.find("SET"))
        .expect("the SET");
    let exec = feed.find("EXEC").expect("an EXEC in the feed");
    assert!(multi < set && set < exec, "{feed:?}");
    assert!(!feed.contains("EVAL"), "effects, not the script: {feed:?}");
}

/// The bundled libraries' outputs, compared with redis-server's.
const LIBRARY_CASES: &[&str] = &[
    "return cmsgpack.pack(1, -1, 200, -200, 70000, 1.5, 0.1, 'abc', true, false, {1,2,3}, {a=1})",
    "return {cmsgpack.unpack(cmsgpack.pack(1, 'x', {1, 2}, 2.5))}",
    "local t = cmsgpack.unpack(cmsgpack.pack({1, {2, 3}})) return t[2][2]",
    "return cmsgpack.pack(string.rep('x', 40))",
    "return struct.pack('>I2<i4Bc3', 258, -2, 255, 'abcdef')",
    "return {struct.unpack('>I2<i4B', struct.pack('>I2<i4B', 258, -2, 255))}",
    "return struct.size('>I2i4Bd')",
    "return {struct.unpack('s', struct.pack('s', 'hello'))}",
    "return struct.pack('d', 1.5)",
];

#[test]
fn bundled_libraries_match_redis() {
    let Some(redis) = Redis::or_skip("scripting libraries") else {
        return;
    };
    let server = Server::start(1, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    for script in LIBRARY_CASES {
        let case = ["EVAL", script, "0"];
        assert_eq!(ours.cmd(&case), theirs.cmd(&case), "{script}");
    }
}

const TRANSFER: &str = "local n = tonumber(ARGV[1])
if tonumber(redis.call('get', KEYS[1]) or '0') < n then return 0 end
redis.call('decrby', KEYS[1], n)
redis.call('incrby', KEYS[2], n)
return 1";

const SUM: &str = "local s = 0
for _, k in ipairs(KEYS) do s = s + tonumber(redis.call('get', k) or '0') end
return s";

#[test]
fn a_script_over_keys_of_several_shards_runs_atomically() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let a = &keys_on_shard("acct", 0, 3, 1)[0];
    let b = &keys_on_shard("acct", 1, 3, 1)[0];
    c.cmd(&["SET", a, "10"]);
    assert_eq!(c.cmd(&["EVAL", TRANSFER, "2", a, b, "4"]), int(1));
    assert_eq!(c.cmd(&["MGET", a, b]), common::bulks(&["6", "4"]));
    assert_eq!(c.cmd(&["EVAL", SUM, "2", a, b]), int(10));
    // A key of a shard the script did not declare, as Redis allows.
    let other = &keys_on_shard("acct", 2, 3, 1)[0];
    c.cmd(&["SET", other, "7"]);
    let reply = c.cmd(&[
        "EVAL",
        "return redis.call('get', ARGV[1])",
        "2",
        a,
        b,
        other,
    ]);
    assert_eq!(reply, Reply::bulk("7"));
}

/// Moves one unit from an undeclared pool key to the declared key, if any
/// is left: Redis allows the undeclared key outside cluster mode.
const TAKE_FROM_POOL: &str = "local left = tonumber(redis.call('GET', ARGV[1]) or '0') \
    if left <= 0 then return 0 end \
    redis.call('DECR', ARGV[1]) return redis.call('INCR', KEYS[1])";

#[test]
fn a_script_may_reach_undeclared_keys_of_other_shards_as_in_redis() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let mine = &keys_on_shard("mine", 0, 2, 1)[0];
    let pool = &keys_on_shard("pool", 1, 2, 1)[0];
    c.cmd(&["SET", pool, "2"]);
    assert_eq!(c.cmd(&["EVAL", TAKE_FROM_POOL, "1", mine, pool]), int(1));
    // Known wide now: EVALSHA of the same body takes every shard at once.
    let sha = match c.cmd(&["SCRIPT", "LOAD", TAKE_FROM_POOL]) {
        Reply::Bulk(sha) => String::from_utf8(sha).unwrap(),
        other => panic!("{other:?}"),
    };
    assert_eq!(c.cmd(&["EVALSHA", &sha, "1", mine, pool]), int(2));
    assert_eq!(c.cmd(&["EVALSHA", &sha, "1", mine, pool]), int(0));
    assert_eq!(c.cmd(&["MGET", mine, pool]), common::bulks(&["2", "0"]));
    // Writing first is no obstacle to a first run (it holds every shard).
    let other = &keys_on_shard("other", 1, 2, 1)[0];
    let write_first = "redis.call('INCR', KEYS[1]) return redis.call('INCR', ARGV[1])";
    assert_eq!(c.cmd(&["EVAL", write_first, "1", mine, other]), int(1));
    assert_eq!(c.cmd(&["MGET", mine, other]), common::bulks(&["3", "1"]));
}

/// Touches ARGV[1] (undeclared) when it is not empty: which shards a run
/// reaches depends on its data. The read is under pcall.
const MAYBE_ELSEWHERE: &str = "if ARGV[1] ~= '' then pcall(redis.call, 'GET', ARGV[1]) end \
    return redis.call('INCR', KEYS[1])";

#[test]
fn a_script_that_stayed_home_and_then_reaches_further_before_writing_runs_again_wide() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let mine = &keys_on_shard("mine", 0, 2, 1)[0];
    let other = &keys_on_shard("other", 1, 2, 1)[0];
    // Its first run stays on its shard: it is known to, and runs there.
    assert_eq!(c.cmd(&["EVAL", MAYBE_ELSEWHERE, "1", mine, ""]), int(1));
    // Then one reaches another shard before it writes: that run is dropped
    // (the pcall that caught the refusal does not keep it going) and the
    // script runs again over every shard; its write happens once.
    assert_eq!(c.cmd(&["EVAL", MAYBE_ELSEWHERE, "1", mine, other]), int(2));
    assert_eq!(c.cmd(&["EVAL", MAYBE_ELSEWHERE, "1", mine, other]), int(3));
    assert_eq!(c.cmd(&["GET", mine]), Reply::bulk("3"));
}

#[test]
fn a_script_that_stayed_home_and_then_reaches_further_after_writing_fails_once() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let mine = &keys_on_shard("mine", 0, 2, 1)[0];
    let other = &keys_on_shard("other", 1, 2, 1)[0];
    let script = "redis.call('INCR', KEYS[1]) \
        if ARGV[1] ~= '' then return redis.call('INCR', ARGV[1]) end return 0";
    assert_eq!(c.cmd(&["EVAL", script, "1", mine, ""]), int(0));
    // It cannot start over (it wrote): Redis Cluster's refusal, the write
    // before it kept, as a script error keeps it in Redis; then it is
    // known to reach further and runs over every shard.
    let reply = c.cmd(&["EVAL", script, "1", mine, other]);
    assert!(
        matches!(&reply, Reply::Error(e) if e.contains("non local key")),
        "{reply:?}"
    );
    assert_eq!(c.cmd(&["EVAL", script, "1", mine, other]), int(1));
    assert_eq!(c.cmd(&["MGET", mine, other]), common::bulks(&["3", "1"]));
    // A step of EXEC neither probes nor starts over.
    let read = "return redis.call('GET', ARGV[1])";
    c.cmd(&["MULTI"]);
    c.cmd(&["EVAL", read, "1", mine, other]);
    match c.cmd(&["EXEC"]) {
        Reply::Array(items) => assert!(
            matches!(&items[0], Reply::Error(e) if e.contains("non local key")),
            "{items:?}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_function_may_reach_undeclared_keys_of_other_shards() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let lib = "#!lua name=pool\nredis.register_function('take', function(keys, args) \
        local left = tonumber(redis.call('GET', args[1]) or '0') \
        if left <= 0 then return 0 end \
        redis.call('DECR', args[1]) return redis.call('INCR', keys[1]) end)";
    assert_eq!(c.cmd(&["FUNCTION", "LOAD", lib]), Reply::bulk("pool"));
    let mine = &keys_on_shard("mine", 1, 2, 1)[0];
    let pool = &keys_on_shard("pool", 0, 2, 1)[0];
    c.cmd(&["SET", pool, "1"]);
    assert_eq!(c.cmd(&["FCALL", "take", "1", mine, pool]), int(1));
    assert_eq!(c.cmd(&["FCALL", "take", "1", mine, pool]), int(0));
    assert_eq!(c.cmd(&["MGET", mine, pool]), common::bulks(&["1", "0"]));
}

/// Clients on every shard take from one undeclared pool at once: each
/// unit is taken exactly once, whether a run starts over or runs wide.
#[test]
fn scripts_taking_from_an_undeclared_pool_from_many_clients_take_each_unit_once() {
    const POOL: i64 = 400;
    const CLIENTS: usize = 8;
    let server = Arc::new(Server::start(2, &[]));
    let pool = keys_on_shard("pool", 1, 2, 1)[0].clone();
    server.raw().cmd(&["SET", &pool, &POOL.to_string()]);
    let threads: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let server = Arc::clone(&server);
            let pool = pool.clone();
            std::thread::spawn(move || {
                let mut c = server.raw();
                let mine = keys_on_shard(&format!("taker{i}:"), i % 2, 2, 1)[0].clone();
                let mut taken = 0;
                loop {
                    match c.cmd(&["EVAL", TAKE_FROM_POOL, "1", &mine, &pool]) {
                        Reply::Int(0) => break,
                        Reply::Int(_) => taken += 1,
                        other => panic!("{other:?}"),
                    }
                }
                (mine, taken)
            })
        })
        .collect();
    let mut c = server.raw();
    let mut total = 0;
    for t in threads {
        let (mine, taken) = t.join().unwrap();
        assert_eq!(c.cmd(&["GET", &mine]), Reply::bulk(&taken.to_string()));
        total += taken;
    }
    assert_eq!(total, POOL);
    assert_eq!(c.cmd(&["GET", &pool]), Reply::bulk("0"));
}

/// Transfers by scripts and by MULTI/EXEC between accounts on every shard,
/// with cross-shard readers, from 50 clients at once: nothing deadlocks,
/// and no reader ever sees money missing or doubled.
#[test]
fn scripts_multi_and_cross_shard_commands_race_without_deadlock() {
    const TOTAL: i64 = 6000;
    let server = Arc::new(Server::start(3, &[]));
    let accounts: Vec<String> = (0..3)
        .flat_map(|s| keys_on_shard("bank", s, 3, 2))
        .collect();
    let mut c = server.raw();
    for a in &accounts {
        c.cmd(&["SET", a, &(TOTAL / accounts.len() as i64).to_string()]);
    }
    let transfer = c.cmd(&["SCRIPT", "LOAD", TRANSFER]).text();
    let sum = c.cmd(&["SCRIPT", "LOAD", SUM]).text();
    let threads: Vec<_> = (0..50u64)
        .map(|t| {
            let server = Arc::clone(&server);
            let accounts = accounts.clone();
            let (transfer, sum) = (transfer.clone(), sum.clone());
            std::thread::spawn(move || {
                let mut c = server.raw();
                let mut rng = common::Rng(t * 7919 + 1);
                for _ in 0..40 {
                    let from = rng
                        .pick(&accounts.iter().map(String::as_str).collect::<Vec<_>>())
                        .to_string();
                    let to = rng
                        .pick(&accounts.iter().map(String::as_str).collect::<Vec<_>>())
                        .to_string();
                    if from == to {
                        continue;
                    }
                    match rng.below(4) {
                        0 => {
                            let r = c.cmd(&["EVALSHA", &transfer, "2", &from, &to, "3"]);
                            assert!(matches!(r, Reply::Int(0 | 1)), "{r:?}");
                        }
                        1 => {
                            c.cmd(&["MULTI"]);
                            c.cmd(&["INCRBY", &to, "2"]);
                            c.cmd(&["DECRBY", &from, "2"]);
                            let r = c.cmd(&["EXEC"]);
                            assert!(matches!(r, Reply::Array(_)), "{r:?}");
                        }
                        2 => {
                            let mut args = vec!["EVALSHA", sum.as_str(), "6"];
                            args.extend(accounts.iter().map(String::as_str));
                            assert_eq!(c.cmd(&args), int(TOTAL));
                        }
                        _ => {
                            let mut args = vec!["MGET"];
                            args.extend(accounts.iter().map(String::as_str));
                            let seen: i64 = c
                                .cmd(&args)
                                .items()
                                .iter()
                                .map(|r| r.text().parse::<i64>().unwrap())
                                .sum();
                            assert_eq!(seen, TOTAL);
                        }
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut args = vec!["EVAL", SUM, "6"];
    args.extend(accounts.iter().map(String::as_str));
    assert_eq!(c.cmd(&args), int(TOTAL));
}

#[test]
fn a_cross_shard_script_reaches_the_feed_as_one_unit() {
    let server = Server::start(3, &["--enable-debug-command", "yes"]);
    let mut c = server.raw();
    let a = &keys_on_shard("acct", 0, 3, 1)[0];
    let b = &keys_on_shard("acct", 2, 3, 1)[0];
    c.cmd(&["SET", a, "10"]);
    c.cmd(&["DEBUG", "EMBER-RECORD", "START"]);
    assert_eq!(c.cmd(&["EVAL", TRANSFER, "2", a, b, "4"]), int(1));
    let feed = c.cmd(&["DEBUG", "EMBER-RECORD", "STOP"]).text();
    let lower = feed.to_ascii_lowercase();
    let multi = lower.find("multi").expect("a MULTI");
    let decr = lower.find("decrby").expect("the DECRBY");
    let incr = lower.find("incrby").expect("the INCRBY");
    let exec = lower.find("exec").expect("an EXEC");
    // Records about different keys commute: the unit keeps each shard's
    // in order, not the two shards' interleaving.
    assert!(multi < decr.min(incr) && decr.max(incr) < exec, "{feed:?}");
    assert_eq!(lower.matches("multi").count(), 1, "{feed:?}");
}

/// Connections to `server` while a script on shard 0 is busy, on every
/// shard (the busy shard's own answer in its busy passes): each answers
/// PING with BUSY.
fn connections_off_the_busy_shard(server: &Server) -> Vec<Raw> {
    let mut all = Vec::new();
    for _ in 0..12 {
        let mut c = server.raw();
        c.set_read_timeout(std::time::Duration::from_secs(10));
        match c.cmd(&["PING"]) {
            Reply::Error(e) => {
                assert!(e.starts_with("BUSY Redis is busy running a script."), "{e}")
            }
            other => panic!("PING during a busy script: {other:?}"),
        }
        all.push(c);
    }
    all
}

#[test]
fn a_long_read_only_script_gets_busy_replies_everywhere_and_script_kill_stops_it() {
    let server = Server::start(3, &["--busy-reply-threshold", "50"]);
    let key = &keys_on_shard("slow", 0, 3, 1)[0];
    let mut runner = server.raw();
    runner.send_cmd(&[
        b"EVAL",
        b"local i = 0 while true do i = i + 1 end",
        b"1",
        key.as_bytes(),
    ]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut others = connections_off_the_busy_shard(&server);
    let killer = &mut others[0];
    assert_eq!(killer.cmd(&["SCRIPT", "KILL"]), Reply::Simple("OK".into()));
    let killed = runner.read().expect("the script's reply");
    assert!(
        matches!(&killed, Reply::Error(e) if e.starts_with("ERR Script killed by user with SCRIPT KILL...")),
        "{killed:?}"
    );
    assert!(common::wait_until(
        std::time::Duration::from_secs(5),
        || { killer.cmd(&["PING"]) == Reply::Simple("PONG".into()) }
    ));
    assert_eq!(
        killer.cmd(&["SCRIPT", "KILL"]),
        Reply::Error("NOTBUSY No scripts in execution right now.".into())
    );
    assert_eq!(runner.cmd(&["PING"]), Reply::Simple("PONG".into()));
}

#[test]
fn a_busy_script_that_wrote_is_unkillable() {
    let server = Server::start(3, &["--lua-time-limit", "50"]);
    let key = &keys_on_shard("slow", 0, 3, 1)[0];
    let mut runner = server.raw();
    let script = "redis.call('set', KEYS[1], 'x') while true do end";
    runner.send_cmd(&[b"EVAL", script.as_bytes(), b"1", key.as_bytes()]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    let mut others = connections_off_the_busy_shard(&server);
    let reply = others[0].cmd(&["SCRIPT", "KILL"]);
    assert!(
        matches!(&reply, Reply::Error(e) if e.starts_with("UNKILLABLE Sorry the script already executed write commands")),
        "{reply:?}"
    );
}

#[test]
fn a_script_that_allocates_without_bound_fails_and_the_server_goes_on() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    let reply = c.cmd(&["EVAL", "local s = 'x' while true do s = s .. s end", "0"]);
    assert!(
        matches!(&reply, Reply::Error(e) if e.contains("memory")),
        "{reply:?}"
    );
    assert_eq!(
        c.cmd(&["EVAL", "return 'still here'", "0"]),
        Reply::bulk("still here")
    );
}

/// FUNCTION and FCALL, compared with redis-server in order.
const FUNCTION_CASES: &[&[&str]] = &[
    &["FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('f1', function(keys, args) return redis.call('incr', keys[1]) end)\nredis.register_function{function_name='f2', callback=function(keys, args) return args[1] end, flags={'no-writes'}, description='desc'}"],
    &["FCALL", "f1", "1", "k"],
    &["FCALL", "f2", "0", "hi"],
    &["FCALL_RO", "f1", "1", "k"],
    &["FCALL_RO", "f2", "0", "x"],
    &["FCALL", "nosuch", "0"],
    &["FCALL", "f1", "x"],
    &["FCALL", "f1", "-1"],
    &["FCALL", "f1", "5", "a"],
    &["FUNCTION", "LOAD", "return 1"],
    &["FUNCTION", "LOAD", "#!lua name=mylib\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua name=other\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua name=x foo=bar\nreturn 1"],
    &["FUNCTION", "LOAD", "#!luax name=x\nreturn 1"],
    &["FUNCTION", "LOAD", "#!lua name=lib2\nredis.register_function('f1', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=lib3\nredis.register_function('bad-name', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=lib4\nredis.call('ping')"],
    &["FUNCTION", "LOAD", "#!lua name=lib5\nredis.register_function('g', function() return a end)"],
    &["FCALL", "g", "0"],
    &["FUNCTION", "LOAD", "#!lua name=lib6\nreturn +"],
    &["FUNCTION", "LOAD", "#!lua name=lib7\nredis.register_function('h', function() error('boom') end)"],
    &["FCALL", "h", "0"],
    &["FUNCTION", "LOAD", "#!lua name=lib8\nredis.register_function{function_name='q', callback=function() end, flags={'bad'}}"],
    &["FUNCTION", "LOAD", "#!lua name=lib9\nredis.register_function('r', 5)"],
    &["FUNCTION", "LOAD", "#!lua name=lib10\nredis.register_function('s')"],
    &["FUNCTION", "LOAD", "#!lua name=lib11\nredis.register_function('f1', function() return 1 end)\nredis.register_function('f1', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=lib12\nlocal function x() end\nredis.register_function{function_name='z', callback=x, foo=1}"],
    &["FUNCTION", "LOAD", "REPLACE", "#!lua name=mylib\nredis.register_function('f1', function(keys, args) return redis.call('incr', keys[1]) end)"],
    &["FCALL", "f2", "0", "x"],
    &["FCALL", "f1", "1", "k"],
    &["FUNCTION", "LIST", "LIBRARYNAME", "mylib", "WITHCODE"],
    &["FUNCTION", "LIST", "x"],
    &["FUNCTION", "STATS"],
    &["FUNCTION", "KILL"],
    &["FUNCTION", "FLUSH", "x"],
    &["FUNCTION", "DELETE", "nope"],
    &["FUNCTION", "DELETE", "lib5"],
    &["FCALL", "g", "0"],
    &["FUNCTION", "HELP"],
    &["FUNCTION", "FLUSH"],
    &["FCALL", "f1", "1", "k"],
    // The load sees only the library API; a function cannot register
    // after it; metadata split as sdssplitargs.
    &["FUNCTION", "LOAD", "#!lua name=m\nreturn math.random()"],
    &["FUNCTION", "LOAD", "#!lua name=a name=b\nredis.register_function('f', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=\"quoted\"\nredis.register_function('fq', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=\"open\nredis.register_function('fo', function() return 1 end)"],
    &["FUNCTION", "LOAD", "#!lua name=late\nlocal r = redis\nr.register_function('outer', function() r.register_function('inner', function() return 1 end) end)"],
    &["FCALL", "outer", "0"],
    &["FUNCTION", "LOAD", "#!lua name=n1\nredis.register_function{function_name=function() end, callback=function() return 1 end}"],
    &["FUNCTION", "LOAD", "#!lua name=n2\nredis.register_function{function_name='f', callback=1}"],
    &["FUNCTION", "LOAD", "#!lua name=spin\nwhile true do end"],
    &["FUNCTION", "LIST", "LIBRARYNAME"],
    &["FUNCTION", "LIST", "WITHCODE", "WITHCODE"],
    &["FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"],
    &["FUNCTION", "FLUSH", "SYNC", "extra"],
];

#[test]
fn functions_match_redis() {
    let Some(redis) = Redis::or_skip("functions differential") else {
        return;
    };
    let server = Server::start(1, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    for case in FUNCTION_CASES {
        assert_eq!(ours.cmd(case), theirs.cmd(case), "{case:?}");
    }
}

#[test]
fn a_function_loaded_on_one_shard_runs_on_every_shard() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let lib = "#!lua name=counters\nredis.register_function('bump', function(keys, args) return redis.call('incrby', keys[1], args[1]) end)";
    assert_eq!(c.cmd(&["FUNCTION", "LOAD", lib]), Reply::bulk("counters"));
    for shard in 0..3 {
        let k = &keys_on_shard("ctr", shard, 3, 1)[0];
        assert_eq!(c.cmd(&["FCALL", "bump", "1", k, "5"]), int(5));
    }
    let a = &keys_on_shard("ctr", 0, 3, 1)[0];
    let b = &keys_on_shard("ctr", 1, 3, 1)[0];
    let both = "#!lua name=pair\nredis.register_function('both', function(keys) return redis.call('incr', keys[1]) + redis.call('incr', keys[2]) end)";
    c.cmd(&["FUNCTION", "LOAD", both]);
    assert_eq!(c.cmd(&["FCALL", "both", "2", a, b]), int(12));
    assert_eq!(
        c.cmd(&["FUNCTION", "DELETE", "counters"]),
        Reply::Simple("OK".into())
    );
    for _ in 0..4 {
        let mut d = server.raw();
        assert_eq!(
            d.cmd(&["FCALL", "bump", "1", a, "1"]),
            Reply::Error("ERR Function not found".into())
        );
    }
}

#[test]
fn a_script_that_declares_no_keys_reaches_every_shard() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let keys: Vec<String> = (0..3)
        .map(|s| keys_on_shard("free", s, 3, 1).remove(0))
        .collect();
    let script = "for i, k in ipairs(ARGV) do redis.call('set', k, i) end
local s = 0
for _, k in ipairs(ARGV) do s = s + tonumber(redis.call('get', k)) end
return s";
    let mut args = vec!["EVAL", script, "0"];
    args.extend(keys.iter().map(String::as_str));
    assert_eq!(c.cmd(&args), int(6));
    assert_eq!(c.cmd(&["GET", &keys[2]]), Reply::bulk("3"));
}

/// INFO memory's scripting fields as (name, value), in the order printed.
fn script_memory_fields(c: &mut Raw) -> Vec<(String, String)> {
    let text = c.cmd(&["INFO", "memory"]).text();
    text.lines()
        .filter_map(|l| l.trim_end().split_once(':'))
        .filter(|(k, _)| {
            ["lua", "script", "function", "librar", "_vm_"]
                .iter()
                .any(|w| k.contains(w))
        })
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn field(fields: &[(String, String)], name: &str) -> u64 {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("{name} in {fields:?}"))
}

#[test]
fn info_memory_counts_scripts_and_libraries_under_redis_names() {
    let server = Server::start(2, &[]);
    let mut c = server.raw();
    let before = script_memory_fields(&mut c);
    assert_eq!(field(&before, "number_of_cached_scripts"), 0);
    let body = format!("return '{}'", "x".repeat(1000));
    c.cmd(&["SCRIPT", "LOAD", &body]);
    c.cmd(&["EVAL", "return redis.call('incr', KEYS[1])", "1", "k"]);
    let lib = "#!lua name=lib1\nredis.register_function('f1', function() return 1 end)\nredis.register_function('f2', function() return 2 end)";
    c.cmd(&["FUNCTION", "LOAD", lib]);
    let after = script_memory_fields(&mut c);
    assert_eq!(field(&after, "number_of_cached_scripts"), 2);
    assert_eq!(field(&after, "number_of_libraries"), 1);
    assert_eq!(field(&after, "number_of_functions"), 2);
    let eval = field(&after, "used_memory_scripts_eval");
    assert!(
        eval >= 1000 + field(&before, "used_memory_scripts_eval"),
        "{after:?}"
    );
    assert!(field(&after, "used_memory_functions") >= lib.len() as u64);
    assert_eq!(
        field(&after, "used_memory_scripts"),
        eval + field(&after, "used_memory_functions")
    );
    // A shard that ran a script has a VM, and the total covers the VMs.
    let vm = field(&after, "used_memory_vm_eval");
    assert!(vm > 0);
    assert_eq!(field(&after, "used_memory_lua"), vm);
    assert_eq!(
        field(&after, "used_memory_vm_total"),
        vm + field(&after, "used_memory_vm_functions")
    );
    c.cmd(&["SCRIPT", "FLUSH"]);
    c.cmd(&["FUNCTION", "FLUSH"]);
    let flushed = script_memory_fields(&mut c);
    assert_eq!(field(&flushed, "number_of_cached_scripts"), 0);
    assert_eq!(field(&flushed, "number_of_libraries"), 0);
    assert_eq!(field(&flushed, "used_memory_scripts_eval"), 0);
}

#[test]
fn info_memory_script_fields_are_redis_fields_in_redis_order() {
    let Some(redis) = Redis::or_skip("INFO memory script fields") else {
        return;
    };
    let server = Server::start(1, &[]);
    let names = |c: &mut Raw| -> Vec<String> {
        script_memory_fields(c)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    };
    let ours = names(&mut server.raw());
    let theirs = names(&mut Raw::connect(redis.port));
    assert_eq!(ours, theirs);
    let mut c = server.raw();
    let mut r = Raw::connect(redis.port);
    for conn in [&mut c, &mut r] {
        conn.cmd(&["SCRIPT", "LOAD", "return 1"]);
        conn.cmd(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=l\nredis.register_function('f', function() return 1 end)",
        ]);
    }
    for name in [
        "number_of_cached_scripts",
        "number_of_functions",
        "number_of_libraries",
    ] {
        assert_eq!(
            field(&script_memory_fields(&mut c), name),
            field(&script_memory_fields(&mut r), name),
            "{name}"
        );
    }
}

/// What a restricted user's scripts try, run as that user: each reply
/// must be redis-server's.
const ACL_SCRIPT_CASES: &[&[&str]] = &[
    &["EVAL", "redis.call('get','x')", "0"],
    &["EVAL", "return redis.pcall('get','x')", "0"],
    &["EVAL", "return redis.call('set','k1','v')", "1", "k1"],
    &["EVAL", "return redis.call('get', KEYS[1])", "1", "k1"],
    &["EVAL", "return redis.pcall('get', KEYS[1])", "1", "other"],
    &["EVAL", "return redis.call('publish','nope','m')", "0"],
    &["EVAL", "return redis.call('config','get','maxmemory')", "0"],
    &["FCALL", "getter", "1", "k1"],
    &["FCALL", "getter", "1", "zz"],
    &["EVAL", "return redis.acl_check_cmd('set','k1','1')", "0"],
    &[
        "EVAL",
        "return redis.acl_check_cmd('hset','k1','f','1')",
        "0",
    ],
    &["EVAL", "return redis.acl_check_cmd('set','yy','1')", "0"],
    &["EVAL", "return redis.acl_check_cmd('nosuch','a')", "0"],
];

const ACL_SCRIPT_LIB: &str = "#!lua name=acllib\nredis.register_function('getter', function(keys) return redis.call('get', keys[1]) end)";

/// The ACL LOG entries without their times and client lines.
fn acl_log(c: &mut Raw) -> Vec<Vec<Reply>> {
    c.cmd(&["ACL", "LOG"])
        .items()
        .into_iter()
        .map(|entry| {
            let items = entry.items();
            items
                .chunks(2)
                .filter(|kv| {
                    let k = kv[0].text();
                    k != "age-seconds" && k != "client-info"
                })
                .flat_map(|kv| kv.to_vec())
                .collect()
        })
        .collect()
}

fn run_acl_cases(admin: &mut Raw, user: &mut Raw) -> (Vec<Reply>, Vec<Vec<Reply>>) {
    admin.cmd(&["FUNCTION", "LOAD", "REPLACE", ACL_SCRIPT_LIB]);
    admin.cmd(&["ACL", "LOG", "RESET"]);
    let replies = ACL_SCRIPT_CASES.iter().map(|case| user.cmd(case)).collect();
    (replies, acl_log(admin))
}

#[test]
fn a_restricted_users_script_gets_redis_refusals_for_commands_keys_and_channels() {
    let Some(redis) = Redis::or_skip("ACL inside scripts") else {
        return;
    };
    let rules = [
        "ACL", "SETUSER", "u", "on", ">pw", "+eval", "+fcall", "+get", "+set", "+publish", "~k*",
        "&ch*",
    ];
    let mut theirs_admin = Raw::connect(redis.port);
    assert_eq!(theirs_admin.cmd(&rules), common::ok());
    let mut theirs_user = Raw::connect(redis.port);
    assert_eq!(theirs_user.cmd(&["AUTH", "u", "pw"]), common::ok());
    let theirs = run_acl_cases(&mut theirs_admin, &mut theirs_user);
    for shards in [1, 3] {
        let server = Server::start(shards, &[]);
        let mut admin = server.raw();
        assert_eq!(admin.cmd(&rules), common::ok());
        let mut user = server.raw();
        assert_eq!(user.cmd(&["AUTH", "u", "pw"]), common::ok());
        let ours = run_acl_cases(&mut admin, &mut user);
        for (i, case) in ACL_SCRIPT_CASES.iter().enumerate() {
            assert_eq!(ours.0[i], theirs.0[i], "{shards} shards: {case:?}");
        }
        assert_eq!(ours.1, theirs.1, "{shards} shards: ACL LOG");
        // The default user's scripts are not checked.
        assert_eq!(
            admin.cmd(&["EVAL", "return redis.call('get','x')", "0"]),
            Reply::Nil
        );
    }
}

const LIB_A: &str =
    "#!lua name=liba\nredis.register_function('fa', function(keys, args) return 'a' end)";
const LIB_B: &str = "#!lua name=libb\nredis.register_function{function_name='fb', callback=function() return 'b' end, flags={'no-writes'}, description='bee'}";
const LIB_B2: &str = "#!lua name=libb\nredis.register_function('fb', function() return 'b2' end)";
const LIB_CLASH: &str = "#!lua name=libc\nredis.register_function('fa', function() return 'c' end)";

fn bulk_bytes(reply: Reply) -> Vec<u8> {
    match reply {
        Reply::Bulk(b) => b,
        other => panic!("not a bulk: {other:?}"),
    }
}

/// FUNCTION LIST WITHCODE, libraries by name (the registries' orders
/// differ).
fn listed(c: &mut Raw) -> Vec<Reply> {
    let mut libs = c.cmd(&["FUNCTION", "LIST", "WITHCODE"]).items();
    libs.sort_by_key(|l| format!("{l:?}"));
    libs
}

#[test]
fn function_dump_payloads_restore_on_redis_and_back() {
    let Some(redis) = Redis::or_skip("FUNCTION DUMP/RESTORE differential") else {
        return;
    };
    let server = Server::start(2, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    let big = format!(
        "#!lua name=big\n{}redis.register_function('fbig', function() return 1 end)",
        "-- pad\n".repeat(100)
    );
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["FUNCTION", "FLUSH"]);
        c.cmd(&["FUNCTION", "LOAD", LIB_A]);
        c.cmd(&["FUNCTION", "LOAD", LIB_B]);
        c.cmd(&["FUNCTION", "LOAD", &big]);
    }
    let our_dump = bulk_bytes(ours.cmd(&["FUNCTION", "DUMP"]));
    let their_dump = bulk_bytes(theirs.cmd(&["FUNCTION", "DUMP"]));
    let expected = listed(&mut theirs);
    // Each server restores the other's payload into an empty registry.
    for (c, payload) in [(&mut ours, &their_dump), (&mut theirs, &our_dump)] {
        assert_eq!(c.cmd(&["FUNCTION", "FLUSH"]), common::ok());
        assert_eq!(
            c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload]),
            common::ok()
        );
        assert_eq!(listed(c), expected);
        assert_eq!(c.cmd(&["FCALL", "fa", "0"]), Reply::bulk("a"));
    }
    // Policies and errors, reply for reply.
    let mut empty = Vec::new();
    for c in [&mut ours, &mut theirs] {
        c.cmd(&["FUNCTION", "FLUSH"]);
        empty.push(bulk_bytes(c.cmd(&["FUNCTION", "DUMP"])));
    }
    assert_eq!(empty[0], empty[1]);
    let mut replies = Vec::new();
    for (c, payload) in [(&mut ours, &our_dump), (&mut theirs, &their_dump)] {
        let mut r = Vec::new();
        c.cmd(&["FUNCTION", "LOAD", LIB_B2]);
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload, b"APPEND"]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload, b"bogus"]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload, b"APPEND", b"x"]));
        r.push(c.cmd(&["FCALL", "fb", "0"]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload, b"replace"]));
        r.push(c.cmd(&["FCALL", "fb", "0"]));
        c.cmd(&["FUNCTION", "DELETE", "liba"]);
        c.cmd(&["FUNCTION", "LOAD", LIB_CLASH]);
        c.cmd(&["FUNCTION", "DELETE", "libb"]);
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", payload, b"FLUSH"]));
        r.push(c.cmd(&["FCALL", "fa", "0"]));
        let mut flipped = payload.clone();
        *flipped.last_mut().unwrap() ^= 1;
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", &flipped]));
        r.push(c.cmd(&["FUNCTION", "RESTORE", ""]));
        c.cmd(&["SET", "sk", "v"]);
        let key_dump = bulk_bytes(c.cmd(&["DUMP", "sk"]));
        r.push(c.cmd_bytes(&[b"FUNCTION", b"RESTORE", &key_dump]));
        r.push(c.cmd(&["FUNCTION", "DUMP", "x"]));
        r.push(c.cmd(&["FUNCTION", "RESTORE"]));
        replies.push(r);
    }
    assert_eq!(replies[0], replies[1]);
}
