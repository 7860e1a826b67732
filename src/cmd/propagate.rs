//! The propagation point: where each command's records for the feed
//! (`crate::exec::feed`) are made, and the rewrites that make them deterministic.
//!
//! Every handler of the command table runs through [`call`] (inline,
//! as an op on its keys' shard, inside EXEC: `cmd::run_inline`,
//! `cmd::handler_op`, `transaction::run_keyed`). When the feed is on, the
//! command has the `write` flag and the call moved the store's change
//! counter (`Notifier::dirty`, Redis's `server.dirty`), the command is
//! recorded as run, or as Redis 7.0 rewrites it ([`rewrite`]) when running it
//! again elsewhere, later, would not give the same result:
//!
//! | command | recorded as |
//! |---|---|
//! | SET with EX/PX/EXAT/PXAT, SETEX, PSETEX | `SET key value PXAT <deadline>` |
//! | SET ... GET | the same without GET |
//! | EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT | `PEXPIREAT key <deadline> [options]`; a deadline already past: `DEL key` (`UNLINK` under `lazyfree-lazy-expire`) |
//! | GETEX | `PEXPIREAT key <deadline>`, `PERSIST key`, or `DEL`/`UNLINK` as EXPIRE |
//! | GETDEL | `DEL key` (`UNLINK` under `lazyfree-lazy-user-del`) |
//! | INCRBYFLOAT | `SET key <result> KEEPTTL` |
//! | HINCRBYFLOAT | `HSET key field <result>`, then `HPEXPIREAT key <deadline> FIELDS 1 field` when the field keeps one (HSET clears it) |
//! | SPOP | `SREM key member` per member taken; `DEL key` when a count took the whole set |
//! | LMPOP, ZMPOP | `LPOP`/`RPOP`/`ZPOPMIN`/`ZPOPMAX key <count taken>` |
//! | BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP | their non-blocking form, however they were served (`served`): `LPOP key`, `LMOVE src dst LEFT RIGHT`, `RPOP key <count>`, `ZPOPMIN key`...; a served BRPOPLPUSH as `RPOPLPUSH src dst`, as Redis writes it |
//! | HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT | `HPEXPIREAT key <deadline> FIELDS n field...` for the fields set, `HDEL key field...` for those a past deadline deleted |
//! | GEOADD | `ZADD key [options] <geohash score> member ...`, as Redis rewrites it |
//! | PFCOUNT of one key whose cached estimate it refreshed (a read command) | as run (Redis propagates the cache's change) |
//! | RESTORE with a TTL | `RESTORE key <deadline> payload ... ABSTTL`; a key it did not leave: `DEL`/`UNLINK` (per lazyfree-lazy-server-del) |
//! | anything else that wrote | as run |
//!
//! A handler whose work knows better records its own form with
//! [`Ctx::propagate_as`] (the blocking pops do, since they are also served
//! outside any handler); `call` then adds nothing.
//!
//! Commands whose keys span shards: split commands (DEL, MSET, MSETNX, ...)
//! run the handler per shard, so each part records itself, inside the
//! transaction the key locks make of them. The commands built of custom
//! steps (RENAME, COPY, SMOVE, LMOVE, the STORE set operations, LMPOP...)
//! move values between shards in ways no per-shard command describes, so
//! the whole command is recorded once, by an op appended to the job on the
//! coordinating shard (`record_after`), still inside the transaction.
//! Commands over every shard's keys (FLUSHALL, FLUSHDB, SWAPDB) run under
//! whole-shard locks and are recorded once the same way
//! (`every_shard_write`).
//!
//! The records of one piece of work go to the feed when it ends
//! ([`ShardData::publish_records`]); the feed's module doc argues why the
//! resulting order is right.

use bytes::Bytes;

use super::args::Reply;
use super::blocking::Want;
use super::list::End;
use super::table::{CommandSpec, Handler};
use super::{lookup, Ctx, ShardData};
use crate::exec::{Action, Job, LockPlan, Need, Op, Out, Then};
use crate::resp::Frame;
use crate::store::{zset, Db, Value};

/// Runs `handler` on `argv`, recording the command for the feed when it
/// changed the keyspace (see the module doc). The one call every table
/// handler goes through; with the feed off it costs one relaxed load.
pub fn call(ctx: &mut Ctx, handler: Handler, argv: &[Bytes]) -> Reply {
    if let Some(id) = ctx.shard.reader {
        // A tracking client's read: its keys are remembered once it ran
        // (so a key its own read expired is remembered anew), on this
        // thread, where no write can come between.
        return super::tracking::tracked_call(ctx, argv, id, |ctx| {
            call_recorded(ctx, handler, argv)
        });
    }
    call_recorded(ctx, handler, argv)
}

fn call_recorded(ctx: &mut Ctx, handler: Handler, argv: &[Bytes]) -> Reply {
    if !ctx.recording() {
        return handler(ctx, argv);
    }
    let db = ctx.db;
    let dirty = ctx.shard.store.stats.notify.dirty;
    let own = ctx.shard.store.stats.propagate.by_commands();
    let reply = handler(ctx, argv);
    let stats = &ctx.shard.store.stats;
    if stats.notify.dirty == dirty || stats.propagate.by_commands() != own {
        return reply;
    }
    // A container (XGROUP) writes or not by its subcommand's flags.
    let writes = |s: &&CommandSpec| {
        let flags = match argv.get(1).filter(|_| s.container) {
            Some(sub) => s.meta.subcommand(sub).map(|m| m.flags),
            None => Some(s.flags),
        };
        flags.is_some_and(|f| f.contains(super::CommandFlags::WRITE))
    };
    let Some(spec) = lookup(&argv[0]).filter(writes) else {
        return reply;
    };
    let frame = match &reply {
        Ok(f) | Err(f) => f,
    };
    let lazy = Lazy::now();
    let records = rewrite(spec.name, argv, frame, &ctx.shard.store.dbs[db], lazy);
    for record in records {
        ctx.shard.store.stats.propagate.command(db, record);
    }
    reply
}

impl Ctx<'_> {
    /// Whether the feed records (one relaxed load).
    pub fn recording(&self) -> bool {
        self.shard.store.stats.propagate.is_on()
    }

    /// Records `argv` as what this command did, in its database; [`call`]
    /// then records nothing more for it.
    pub fn propagate_as(&mut self, argv: Vec<Bytes>) {
        let db = self.db;
        self.shard.store.stats.propagate.command(db, argv);
    }
}

/// The `lazyfree-lazy-*` settings that choose between DEL and UNLINK.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lazy {
    /// `lazyfree-lazy-expire`: deadlines already past (EXPIRE, GETEX).
    pub expire: bool,
    /// `lazyfree-lazy-user-del`: GETDEL.
    pub user_del: bool,
    /// `lazyfree-lazy-server-del`: RESTORE's REPLACE of a key it then
    /// did not create.
    pub server_del: bool,
}

impl Lazy {
    pub fn now() -> Lazy {
        Lazy {
            expire: crate::store::lazyfree::expire(),
            user_del: crate::store::lazyfree::user_del(),
            server_del: crate::store::lazyfree::server_del(),
        }
    }
}

fn word(w: &'static str) -> Bytes {
    Bytes::from_static(w.as_bytes())
}

fn number(n: u64) -> Bytes {
    Bytes::from(n.to_string())
}

fn delete(key: &Bytes, unlink: bool) -> Vec<Bytes> {
    vec![word(if unlink { "UNLINK" } else { "DEL" }), key.clone()]
}

fn deadline(db: &Db, key: &[u8]) -> Option<u64> {
    db.expire_at(key)
}

/// What a write named `name` that changed the keyspace is recorded as,
/// given its arguments, its reply and its database after it ran (read
/// without expiring anything). Requires: `argv` passed the command's arity
/// check.
pub fn rewrite(name: &str, argv: &[Bytes], reply: &Frame, db: &Db, lazy: Lazy) -> Vec<Vec<Bytes>> {
    let key = &argv[1];
    let as_run = || vec![argv.to_vec()];
    match name {
        "set" => vec![set(argv, db)],
        "setex" | "psetex" => vec![set_at(key, &argv[3], db)],
        "expire" | "pexpire" | "expireat" | "pexpireat" => match db.peek(key) {
            None => vec![delete(key, lazy.expire)],
            Some(_) => match db.expire_at(key) {
                Some(at) => {
                    let mut out = vec![word("PEXPIREAT"), key.clone(), number(at)];
                    out.extend_from_slice(&argv[3..]);
                    vec![out]
                }
                None => as_run(),
            },
        },
        "getex" => vec![match db.peek(key) {
            None => delete(key, lazy.expire),
            Some(_) => match db.expire_at(key) {
                Some(at) => vec![word("PEXPIREAT"), key.clone(), number(at)],
                None => vec![word("PERSIST"), key.clone()],
            },
        }],
        "getdel" => vec![delete(key, lazy.user_del)],
        // As Redis 7.0 propagates it.
        "getset" => vec![vec![word("SET"), key.clone(), argv[2].clone()]],
        "incrbyfloat" => match reply {
            Frame::Bulk(value) => vec![vec![
                word("SET"),
                key.clone(),
                value.clone(),
                word("KEEPTTL"),
            ]],
            _ => as_run(),
        },
        "hincrbyfloat" => match reply {
            Frame::Bulk(value) => hincrbyfloat(key, &argv[2], value, db),
            _ => as_run(),
        },
        "spop" => spop(key, reply, db),
        "lmpop" | "zmpop" => mpop(name, argv, reply).map_or_else(as_run, |r| vec![r]),
        "hexpire" | "hpexpire" | "hexpireat" | "hpexpireat" => hexpire(argv, reply, db),
        "restore" => vec![restore(argv, db, lazy)],
        _ => as_run(),
    }
}

/// RESTORE: a relative TTL becomes the key's absolute deadline with
/// ABSTTL (as Redis rewrites it); a key the command did not leave (its
/// deadline had passed, after REPLACE removed the old one) is a delete.
fn restore(argv: &[Bytes], db: &Db, lazy: Lazy) -> Vec<Bytes> {
    let key = &argv[1];
    if db.peek(key).is_none() {
        return delete(key, lazy.server_del);
    }
    let deadline = db.expire_at(key);
    let mut out = vec![word("RESTORE"), key.clone()];
    out.push(deadline.map_or_else(|| word("0"), number));
    out.push(argv[3].clone());
    let mut absolute = false;
    for option in &argv[4..] {
        absolute |= option.eq_ignore_ascii_case(b"ABSTTL");
        out.push(option.clone());
    }
    if !absolute && deadline.is_some() {
        out.push(word("ABSTTL"));
    }
    out
}

/// SET: the options a deadline came with become `PXAT <deadline>`; GET
/// is dropped (it only shapes the reply).
fn set(argv: &[Bytes], db: &Db) -> Vec<Bytes> {
    let mut kept = argv[..3].to_vec();
    let mut timed = false;
    let mut i = 3;
    while i < argv.len() {
        let option = argv[i].to_ascii_uppercase();
        match option.as_slice() {
            b"EX" | b"PX" | b"EXAT" | b"PXAT" => {
                timed = true;
                i += 2;
                continue;
            }
            b"GET" => {}
            _ => kept.push(argv[i].clone()),
        }
        i += 1;
    }
    if timed {
        set_at(&argv[1], &argv[2], db)
    } else {
        kept
    }
}

/// `SET key value PXAT <the key's deadline>` (NX/XX are moot once it is set).
fn set_at(key: &Bytes, value: &Bytes, db: &Db) -> Vec<Bytes> {
    let mut out = vec![word("SET"), key.clone(), value.clone()];
    if let Some(at) = deadline(db, key) {
        out.extend([word("PXAT"), number(at)]);
    }
    out
}

fn hincrbyfloat(key: &Bytes, field: &Bytes, value: &Bytes, db: &Db) -> Vec<Vec<Bytes>> {
    let mut out = vec![vec![
        word("HSET"),
        key.clone(),
        field.clone(),
        value.clone(),
    ]];
    let field_deadline = match db.peek(key).map(|e| &e.value) {
        Some(Value::Hash(h)) => h.deadline(field),
        _ => None,
    };
    if let Some(at) = field_deadline {
        out.push(vec![
            word("HPEXPIREAT"),
            key.clone(),
            number(at),
            word("FIELDS"),
            word("1"),
            field.clone(),
        ]);
    }
    out
}

/// SPOP as Redis 7.0 writes it: an SREM per member taken, or a DEL when a
/// count took the whole set.
fn spop(key: &Bytes, reply: &Frame, db: &Db) -> Vec<Vec<Bytes>> {
    let srem = |member: &Bytes| vec![word("SREM"), key.clone(), member.clone()];
    match reply {
        Frame::Bulk(member) => vec![srem(member)],
        Frame::Set(members) | Frame::Array(members) => {
            if db.peek(key).is_none() {
                return vec![delete(key, false)];
            }
            members
                .iter()
                .filter_map(|m| match m {
                    Frame::Bulk(m) => Some(srem(m)),
                    _ => None,
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// LMPOP / ZMPOP (and their blocking forms) as the pop from the key that
/// answered, with the count it took: `[key, [taken...]]`.
fn mpop(name: &str, argv: &[Bytes], reply: &Frame) -> Option<Vec<Bytes>> {
    let Frame::Array(parts) = reply else {
        return None;
    };
    let [Frame::Bulk(key), Frame::Array(taken)] = parts.as_slice() else {
        return None;
    };
    let numkeys_at = if name.starts_with('b') { 2 } else { 1 };
    let pop = if name.ends_with("lmpop") {
        let end = super::list_move::parse_mpop(argv, numkeys_at).ok()?.end;
        list_pop(end)
    } else {
        let end = super::zset::pop::parse_mpop(argv, numkeys_at).ok()?.end;
        zset_pop(end)
    };
    Some(vec![word(pop), key.clone(), number(taken.len() as u64)])
}

fn list_pop(end: End) -> &'static str {
    match end {
        End::Head => "LPOP",
        End::Tail => "RPOP",
    }
}

fn zset_pop(end: zset::End) -> &'static str {
    match end {
        zset::End::Min => "ZPOPMIN",
        zset::End::Max => "ZPOPMAX",
    }
}

fn side(end: End) -> &'static str {
    match end {
        End::Head => "LEFT",
        End::Tail => "RIGHT",
    }
}

/// HEXPIRE and friends, from their per-field answers: the fields given a
/// deadline (1) get it as an absolute HPEXPIREAT, those a past deadline
/// deleted (2) an HDEL.
fn hexpire(argv: &[Bytes], reply: &Frame, db: &Db) -> Vec<Vec<Bytes>> {
    let Frame::Array(codes) = reply else {
        return Vec::new();
    };
    let key = &argv[1];
    let fields_at = if argv[3].eq_ignore_ascii_case(b"FIELDS") {
        3
    } else {
        4
    };
    let fields = argv.get(fields_at + 2..).unwrap_or_default();
    let coded = |code: i64| -> Vec<Bytes> {
        fields
            .iter()
            .zip(codes)
            .filter(|(_, c)| **c == Frame::Integer(code))
            .map(|(f, _)| f.clone())
            .collect()
    };
    let (set, deleted) = (coded(1), coded(2));
    let mut out = Vec::new();
    let hash = match db.peek(key).map(|e| &e.value) {
        Some(Value::Hash(h)) => Some(h),
        _ => None,
    };
    if let Some(at) = set.first().and_then(|f| hash?.deadline(f)) {
        let mut record = vec![word("HPEXPIREAT"), key.clone(), number(at), word("FIELDS")];
        record.push(number(set.len() as u64));
        record.extend(set);
        out.push(record);
    }
    if !deleted.is_empty() {
        let mut record = vec![word("HDEL"), key.clone()];
        record.extend(deleted);
        out.push(record);
    }
    out
}

/// What a blocking command's pop from `key` answering `reply` is recorded
/// as: its non-blocking form, as Redis 7.0 writes a served BLPOP.
pub fn served(want: &Want, key: &Bytes, reply: &Frame) -> Option<Vec<Bytes>> {
    let count = || match reply {
        Frame::Array(parts) => match parts.get(1) {
            Some(Frame::Array(taken)) => Some(number(taken.len() as u64)),
            _ => None,
        },
        _ => None,
    };
    Some(match want {
        Want::Pop(end) => vec![word(list_pop(*end)), key.clone()],
        Want::Mpop { end, .. } => vec![word(list_pop(*end)), key.clone(), count()?],
        Want::Move {
            dst,
            rpoplpush: true,
            ..
        } => vec![word("RPOPLPUSH"), key.clone(), dst.clone()],
        Want::Move { dst, from, to, .. } => vec![
            word("LMOVE"),
            key.clone(),
            dst.clone(),
            word(side(*from)),
            word(side(*to)),
        ],
        Want::ZPop(end) => vec![word(zset_pop(*end)), key.clone()],
        Want::ZMpop { end, .. } => vec![word(zset_pop(*end)), key.clone(), count()?],
        // A served XREADGROUP moved its group: the same read again does
        // the same; XREAD changes nothing.
        Want::XRead(read) => {
            let (group, consumer) = read.group.as_ref()?;
            let mut record = vec![word("XREADGROUP"), word("GROUP"), group.clone()];
            record.push(consumer.clone());
            if read.count > 0 {
                record.extend([word("COUNT"), number(read.count as u64)]);
            }
            if read.noack {
                record.push(word("NOACK"));
            }
            record.extend([word("STREAMS"), key.clone(), word(">")]);
            record
        }
    })
}

/// What a command of custom steps over several shards is recorded as, from
/// its final reply; nothing when it changed nothing, or when its parts
/// record themselves (MSETNX's per-shard MSETs, the blocking pops).
pub fn across(name: &str, argv: &[Bytes], reply: &Frame) -> Vec<Vec<Bytes>> {
    let as_run = vec![argv.to_vec()];
    match (name, reply) {
        ("rename", Frame::Simple("OK")) => as_run,
        ("renamenx" | "copy" | "smove", Frame::Integer(1)) => as_run,
        ("lmove" | "rpoplpush", Frame::Bulk(_)) => as_run,
        ("blmove", Frame::Bulk(_)) => vec![[&[word("LMOVE")], &argv[1..5]].concat()],
        ("brpoplpush", Frame::Bulk(_)) => {
            vec![vec![word("RPOPLPUSH"), argv[1].clone(), argv[2].clone()]]
        }
        (
            "sinterstore" | "sunionstore" | "sdiffstore" | "zrangestore" | "zunionstore"
            | "zinterstore" | "zdiffstore" | "sort" | "georadius" | "georadiusbymember"
            | "geosearchstore" | "bitop",
            Frame::Integer(_),
        ) => as_run,
        ("pfmerge", Frame::Simple("OK")) => as_run,
        ("lmpop" | "zmpop", _) => mpop(name, argv, reply).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A multi-shard job of custom steps, recording itself once when the feed
/// is on (see [`across`]).
pub fn custom(
    shard: &ShardData,
    db: usize,
    spec: &CommandSpec,
    argv: &[Bytes],
    action: Action,
) -> Action {
    if !shard.shared.feed.is_on() || !spec.flags.contains(super::CommandFlags::WRITE) {
        return action;
    }
    let Action::Job(job) = action else {
        return action;
    };
    let (name, argv) = (spec.name, argv.to_vec());
    Action::Job(record_after(job, shard.id, db, move |reply| {
        across(name, &argv, reply)
    }))
}

/// A blocked client's attempt over several shards: a move records itself
/// once it answers (the pops record as they are made).
pub fn served_across(job: Job, here: usize, req: &super::blocking::Request) -> Job {
    let Want::Move {
        dst,
        from,
        to,
        rpoplpush,
    } = &req.want
    else {
        return job;
    };
    let Some(src) = req.keys.first() else {
        return job;
    };
    let record = if *rpoplpush {
        vec![word("RPOPLPUSH"), src.clone(), dst.clone()]
    } else {
        vec![
            word("LMOVE"),
            src.clone(),
            dst.clone(),
            word(side(*from)),
            word(side(*to)),
        ]
    };
    record_after(job, here, req.db, move |reply| match reply {
        Frame::Bulk(_) => vec![record],
        _ => Vec::new(),
    })
}

/// A command over every shard's keys that writes (FLUSHALL, FLUSHDB,
/// SWAPDB): made atomic across shards by taking every shard whole through
/// the key-lock protocol (a shard flushing while another serves a
/// transaction could not be written as one command in one stream, and is
/// not what a client of one Redis sees either), and recorded once.
pub fn every_shard_write(shard: &ShardData, db: usize, argv: &[Bytes], action: Action) -> Action {
    let Action::Job(job) = action else {
        return action;
    };
    let plan: LockPlan = (0..shard.shared.nshards)
        .map(|s| (s, Need::Whole))
        .collect();
    let job = if shard.shared.feed.is_on() {
        let argv = argv.to_vec();
        record_after(job, shard.id, db, move |reply| {
            if reply.is_error() {
                Vec::new()
            } else {
                vec![argv.clone()]
            }
        })
    } else {
        job
    };
    Action::Job(job.locked(plan))
}

/// `job`, whose final reply then decides (`decide`) what is recorded for
/// it; the records are made by one more op on shard `at`, so they belong
/// to the job's transaction and come after everything its steps recorded.
pub fn record_after(
    job: Job,
    at: usize,
    db: usize,
    decide: impl FnOnce(&Frame) -> Vec<Vec<Bytes>> + 'static,
) -> Job {
    Job {
        then: after_reply(job.then, at, db, Box::new(decide)),
        ..job
    }
}

type Decide = Box<dyn FnOnce(&Frame) -> Vec<Vec<Bytes>>>;

fn after_reply(then: Then, at: usize, db: usize, decide: Decide) -> Then {
    Box::new(move |outs| match then(outs) {
        Action::Job(next) => Action::Job(Job {
            then: after_reply(next.then, at, db, decide),
            ..next
        }),
        Action::Reply(frame) => {
            let records = decide(&frame);
            if records.is_empty() {
                return Action::Reply(frame);
            }
            // Need::Nothing: it runs inside the job's transaction, behind no lock.
            let op = Op::Store(
                db,
                Need::Nothing,
                Box::new(move |ctx: &mut Ctx| {
                    for record in records {
                        ctx.propagate_as(record);
                    }
                    Out::Frame(frame)
                }),
            );
            Action::Job(Job::new(vec![(at, op)], |mut outs| {
                Action::Reply(outs.pop().map_or(Frame::Null, Out::frame))
            }))
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::hash::Hash;

    fn argv(words: &str) -> Vec<Bytes> {
        words
            .split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    fn text(records: Vec<Vec<Bytes>>) -> Vec<String> {
        records
            .iter()
            .map(|r| {
                r.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect()
    }

    fn s(v: &str) -> Value {
        Value::copy_of(v.as_bytes())
    }

    fn run(words: &str, reply: Frame, db: &Db) -> Vec<String> {
        let argv = argv(words);
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        text(rewrite(&name, &argv, &reply, db, Lazy::default()))
    }

    #[test]
    fn relative_and_absolute_times_become_the_stored_deadline() {
        let mut db = Db::default();
        db.insert_raw(b"k", s("v"), Some(1_700_000_123_456), 0);
        assert_eq!(
            run("set k v EX 10", Frame::OK, &db),
            ["SET k v PXAT 1700000123456"]
        );
        assert_eq!(
            run("SET k v nx get px 5", Frame::Null, &db),
            ["SET k v PXAT 1700000123456"]
        );
        assert_eq!(
            run("setex k 10 v", Frame::OK, &db),
            ["SET k v PXAT 1700000123456"]
        );
        assert_eq!(
            run("psetex k 10 v", Frame::OK, &db),
            ["SET k v PXAT 1700000123456"]
        );
        assert_eq!(
            run("set k v KEEPTTL GET", Frame::Null, &db),
            ["set k v KEEPTTL"]
        );
        assert_eq!(run("set k v xx", Frame::OK, &db), ["set k v xx"]);
        assert_eq!(
            run("expire k 10 GT", Frame::Integer(1), &db),
            ["PEXPIREAT k 1700000123456 GT"]
        );
        assert_eq!(
            run("expireat k 1700000123", Frame::Integer(1), &db),
            ["PEXPIREAT k 1700000123456"]
        );
        assert_eq!(
            run("getex k PX 100", Frame::bulk("v"), &db),
            ["PEXPIREAT k 1700000123456"]
        );
    }

    #[test]
    fn a_deadline_already_past_is_a_deletion() {
        let mut db = Db::default();
        db.insert_raw(b"p", s("v"), None, 0);
        assert_eq!(run("expire gone -1", Frame::Integer(1), &db), ["DEL gone"]);
        assert_eq!(
            run("getex gone EXAT 1", Frame::bulk("v"), &db),
            ["DEL gone"]
        );
        assert_eq!(run("getex p PERSIST", Frame::bulk("v"), &db), ["PERSIST p"]);
        assert_eq!(run("getdel p", Frame::bulk("v"), &db), ["DEL p"]);
        let lazy = Lazy {
            expire: true,
            user_del: false,
            server_del: false,
        };
        let names = |words: &str, lazy| {
            let argv = argv(words);
            let name = String::from_utf8_lossy(&argv[0]).into_owned();
            text(rewrite(&name, &argv, &Frame::Integer(1), &db, lazy))
        };
        assert_eq!(names("pexpire gone -1", lazy), ["UNLINK gone"]);
        assert_eq!(
            names("getdel p", lazy),
            ["DEL p"],
            "GETDEL follows user-del"
        );
        let lazy = Lazy {
            expire: false,
            user_del: true,
            server_del: false,
        };
        assert_eq!(names("getdel p", lazy), ["UNLINK p"]);
        let lazy = Lazy {
            server_del: true,
            ..Lazy::default()
        };
        assert_eq!(
            names("restore gone 10 payload REPLACE", lazy),
            ["UNLINK gone"],
            "a RESTORE whose deadline had passed removed the key it replaced"
        );
    }

    #[test]
    fn restore_writes_the_deadline_it_stored() {
        let mut db = Db::default();
        db.insert_raw(b"k", s("v"), Some(1_700_000_123_456), 0);
        db.insert_raw(b"p", s("v"), None, 0);
        assert_eq!(
            run("restore k 5000 payload REPLACE", Frame::OK, &db),
            ["RESTORE k 1700000123456 payload REPLACE ABSTTL"]
        );
        assert_eq!(
            run(
                "restore k 1700000123456 payload ABSTTL IDLETIME 5",
                Frame::OK,
                &db
            ),
            ["RESTORE k 1700000123456 payload ABSTTL IDLETIME 5"]
        );
        assert_eq!(
            run("restore p 0 payload", Frame::OK, &db),
            ["RESTORE p 0 payload"]
        );
    }

    #[test]
    fn computed_results_are_written_as_values() {
        let mut db = Db::default();
        assert_eq!(
            run("incrbyfloat n 0.1", Frame::bulk("1.1"), &db),
            ["SET n 1.1 KEEPTTL"]
        );
        let mut h: Hash = [(&b"a"[..], &b"1"[..]), (b"b", b"2")].into_iter().collect();
        h.set_deadline(b"b", 99_000);
        db.insert_raw(b"h", Value::Hash(h), None, 0);
        assert_eq!(
            run("hincrbyfloat h a 1.5", Frame::bulk("2.5"), &db),
            ["HSET h a 2.5"]
        );
        assert_eq!(
            run("hincrbyfloat h b 1", Frame::bulk("3"), &db),
            ["HSET h b 3", "HPEXPIREAT h 99000 FIELDS 1 b"],
            "HSET clears a field's deadline, HINCRBYFLOAT keeps it"
        );
    }

    #[test]
    fn spop_names_the_members_it_took() {
        let mut db = Db::default();
        db.insert_raw(b"s", Value::Set(Default::default()), None, 0);
        assert_eq!(run("spop s", Frame::bulk("m"), &db), ["SREM s m"]);
        let took = Frame::Set(vec![Frame::bulk("a"), Frame::bulk("b")]);
        assert_eq!(run("spop s 2", took.clone(), &db), ["SREM s a", "SREM s b"]);
        assert_eq!(
            run("spop gone 5", took, &db),
            ["DEL gone"],
            "the whole set went"
        );
    }

    #[test]
    fn pops_over_several_keys_name_the_key_and_count() {
        let db = Db::default();
        let popped = |key: &str, n: usize| {
            Frame::Array(vec![
                Frame::bulk(key),
                Frame::Array((0..n).map(|_| Frame::bulk("x")).collect()),
            ])
        };
        assert_eq!(
            run("lmpop 2 a b RIGHT COUNT 5", popped("b", 3), &db),
            ["RPOP b 3"]
        );
        assert_eq!(run("zmpop 1 z MIN", popped("z", 1), &db), ["ZPOPMIN z 1"]);
        assert_eq!(
            text(across("lmpop", &argv("lmpop 2 a b left"), &popped("a", 1))),
            ["LPOP a 1"]
        );
        assert_eq!(
            text(across(
                "zmpop",
                &argv("zmpop 2 a b max count 2"),
                &popped("b", 2)
            )),
            ["ZPOPMAX b 2"]
        );
        assert!(across("lmpop", &argv("lmpop 1 a left"), &Frame::NullArray).is_empty());
    }

    #[test]
    fn field_deadlines_are_absolute_and_past_ones_deletions() {
        let mut db = Db::default();
        let mut h: Hash = [(&b"a"[..], &b"1"[..]), (b"b", b"2"), (b"c", b"3")]
            .into_iter()
            .collect();
        h.set_deadline(b"a", 5_000);
        h.set_deadline(b"c", 5_000);
        db.insert_raw(b"h", Value::Hash(h), None, 0);
        let codes = |c: &[i64]| Frame::Array(c.iter().map(|&n| Frame::Integer(n)).collect());
        assert_eq!(
            run(
                "hexpire h 5 NX FIELDS 4 a b c d",
                codes(&[1, 0, 1, -2]),
                &db
            ),
            ["HPEXPIREAT h 5000 FIELDS 2 a c"]
        );
        assert_eq!(
            run("hpexpireat h 1 FIELDS 2 x y", codes(&[2, 2]), &db),
            ["HDEL h x y"]
        );
    }

    #[test]
    fn served_waiters_are_their_non_blocking_form() {
        let key = Bytes::from_static(b"q");
        let served =
            |want: Want, reply: Frame| text(served(&want, &key, &reply).into_iter().collect());
        assert_eq!(served(Want::Pop(End::Head), Frame::Null), ["LPOP q"]);
        assert_eq!(
            served(Want::ZPop(zset::End::Max), Frame::Null),
            ["ZPOPMAX q"]
        );
        let dst = Bytes::from_static(b"d");
        let want = |rpoplpush| Want::Move {
            dst: dst.clone(),
            from: End::Tail,
            to: End::Head,
            rpoplpush,
        };
        assert_eq!(
            served(want(false), Frame::bulk("x")),
            ["LMOVE q d RIGHT LEFT"]
        );
        assert_eq!(served(want(true), Frame::bulk("x")), ["RPOPLPUSH q d"]);
        let two = Frame::Array(vec![
            Frame::bulk("q"),
            Frame::Array(vec![Frame::bulk("x"), Frame::bulk("y")]),
        ]);
        let want = Want::Mpop {
            end: End::Tail,
            count: 5,
        };
        assert_eq!(served(want, two.clone()), ["RPOP q 2"]);
        let want = Want::ZMpop {
            end: zset::End::Min,
            count: 5,
        };
        assert_eq!(served(want, two), ["ZPOPMIN q 2"]);
    }

    /// A shard outside any server, its feed recording.
    fn shard() -> ShardData {
        let shared = std::sync::Arc::new(crate::exec::Shared::new(Default::default()));
        shared.feed.start();
        ShardData::new(0, shared, 1, 1_000_000)
    }

    fn logged(shard: &mut ShardData) -> Vec<String> {
        let records = shard.store.stats.propagate.take();
        text(records.into_iter().map(|r| r.argv).collect())
    }

    fn stream_lines(shard: &ShardData) -> Vec<String> {
        let stream = shard.shared.feed.stop();
        let text = String::from_utf8_lossy(&stream).into_owned();
        let mut parts = text.split("\r\n");
        let mut out = Vec::new();
        while let Some(n) = parts.next().and_then(|h| h.strip_prefix('*')) {
            let n: usize = n.parse().unwrap();
            let words: Vec<&str> = (0..n).map(|_| parts.nth(1).unwrap()).collect();
            out.push(words.join(" "));
        }
        out
    }

    #[test]
    fn call_records_the_writes_that_changed_something() {
        let mut shard = shard();
        let mut ctx = Ctx::new(&mut shard, 0);
        let set = super::super::strings::set;
        call(&mut ctx, set, &argv("SET k v EX 100")).unwrap();
        call(&mut ctx, set, &argv("SET k w NX")).unwrap();
        call(&mut ctx, super::super::strings::get, &argv("GET k")).unwrap();
        call(&mut ctx, super::super::keys::del, &argv("DEL missing")).unwrap();
        call(&mut ctx, super::super::list::lpush, &argv("LPUSH k x")).unwrap_err();
        assert_eq!(logged(&mut shard), ["SET k v PXAT 1100000"]);
        shard.store.dbs[0].insert_raw(b"old", s("v"), Some(10), 0);
        let mut ctx = Ctx::new(&mut shard, 0);
        call(&mut ctx, super::super::list::lpushx, &argv("LPUSHX old x")).unwrap();
        assert_eq!(
            logged(&mut shard),
            ["DEL old"],
            "the lazy expiry is recorded, the LPUSHX that then did nothing is not"
        );
    }

    #[test]
    fn a_handler_that_records_its_own_form_is_recorded_once() {
        let mut shard = shard();
        let mut ctx = Ctx::new(&mut shard, 3);
        call(&mut ctx, super::super::list::rpush, &argv("RPUSH q a b")).unwrap();
        let blpop = super::super::blocking::immediate;
        call(&mut ctx, blpop, &argv("BLPOP none q 0")).unwrap();
        assert_eq!(logged(&mut shard), ["RPUSH q a b", "LPOP q"]);
    }

    #[test]
    fn the_sweeps_deletions_go_with_the_transaction_holding_their_key() {
        let mut shard = shard();
        let need = Need::keys(0, [Bytes::from_static(b"k")]);
        assert!(shard.locks.try_acquire(7, &need, (1, 1)));
        shard.shared.feed.open(7);
        shard.store.stats.propagate.command(0, argv("APPEND k x"));
        shard.publish_records(Some(7));
        shard.store.stats.propagate.expired(0, b"j", false);
        shard.store.stats.propagate.expired(0, b"k", false);
        shard.publish_expired();
        shard.shared.feed.commit(7);
        assert_eq!(
            stream_lines(&shard),
            ["SELECT 0", "DEL j", "MULTI", "APPEND k x", "DEL k", "EXEC"]
        );
    }

    #[test]
    fn commands_across_shards_record_what_they_did() {
        let rec = |words: &str, reply: Frame| {
            let argv = argv(words);
            text(across(&String::from_utf8_lossy(&argv[0]), &argv, &reply))
        };
        assert_eq!(rec("rename a b", Frame::OK), ["rename a b"]);
        assert!(rec("rename a b", Frame::error("ERR no such key")).is_empty());
        assert!(rec("renamenx a b", Frame::Integer(0)).is_empty());
        assert_eq!(rec("copy a b DB 2", Frame::Integer(1)), ["copy a b DB 2"]);
        assert_eq!(
            rec("blmove a b LEFT RIGHT 0", Frame::bulk("x")),
            ["LMOVE a b LEFT RIGHT"]
        );
        assert_eq!(rec("brpoplpush a b 0", Frame::bulk("x")), ["RPOPLPUSH a b"]);
        assert!(rec("brpoplpush a b 0", Frame::Null).is_empty());
        assert_eq!(
            rec("sunionstore d a b", Frame::Integer(0)),
            ["sunionstore d a b"]
        );
        assert!(
            rec("msetnx a 1 b 2", Frame::Integer(1)).is_empty(),
            "its parts record"
        );
        assert!(rec("sinter a b", Frame::Array(Vec::new())).is_empty());
    }
}
