//! Keyspace commands, as work on one shard's store. Commands whose keys span
//! shards are divided or sequenced by `cmd::multi`.

use bytes::Bytes;
use rand_core::RngCore;

use super::args::{err, int32_arg, int_arg, Args, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::access;
use crate::store::notify::GENERIC;
use crate::store::{Entry, StrForm, Value};
use crate::util::glob::glob_match;

/// DEL: frees each value here, as Redis does, unless
/// `lazyfree-lazy-user-del` makes it UNLINK.
pub fn del(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    remove_keys(ctx, argv, crate::store::lazyfree::user_del())
}

/// UNLINK: takes the keys out at once and leaves freeing a large value to
/// the lazy-free thread (`store::lazyfree`); a small one is freed here,
/// which costs less than handing it over.
pub fn unlink(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    remove_keys(ctx, argv, true)
}

fn remove_keys(ctx: &mut Ctx, argv: &[Bytes], lazy: bool) -> Reply {
    let mut ks = ctx.ks();
    let mut removed = 0;
    for key in &argv[1..] {
        if let Some(entry) = ks.remove(key) {
            crate::store::lazyfree::free_value_if(lazy, entry.value);
            ks.notify(GENERIC, "del", key);
            removed += 1;
        }
    }
    Ok(Frame::Integer(removed))
}

pub fn exists(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let found = argv[1..].iter().filter(|k| ks.exists(k)).count();
    Ok(Frame::Integer(found as i64))
}

pub fn touch(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut ks = ctx.ks();
    let found = argv[1..].iter().filter(|k| ks.get(k).is_some()).count();
    Ok(Frame::Integer(found as i64))
}

pub fn type_(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(Frame::Simple(
        ctx.ks()
            .peek(&argv[1])
            .map_or("none", |e| e.value.type_name()),
    ))
}

/// RENAME / RENAMENX with both keys on this shard.
pub fn rename(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let nx = argv[0].eq_ignore_ascii_case(b"renamenx");
    let (src, dst) = (&argv[1], &argv[2]);
    let mut ks = ctx.ks();
    if !ks.exists(src) {
        return Err(err::frame(err::NO_SUCH_KEY));
    }
    if src == dst {
        return Ok(if nx { Frame::Integer(0) } else { Frame::OK });
    }
    if nx && ks.exists(dst) {
        return Ok(Frame::Integer(0));
    }
    let entry = ks.remove(src).expect("checked above");
    let ttl = entry.expire_at();
    ks.set(dst, entry.value, ttl);
    ks.notify(GENERIC, "rename_from", src);
    ks.notify(GENERIC, "rename_to", dst);
    Ok(if nx { Frame::Integer(1) } else { Frame::OK })
}

/// COPY's options, parsed where the command arrives.
pub struct CopyOptions {
    pub db: Option<usize>,
    pub replace: bool,
}

pub fn copy_options(argv: &[Bytes], databases: usize) -> Result<CopyOptions, Frame> {
    let mut args = Args::new(&argv[2..]);
    let mut opts = CopyOptions {
        db: None,
        replace: false,
    };
    while !args.is_empty() {
        let word = args.next_keyword()?;
        if word.is("REPLACE") {
            opts.replace = true;
        } else if word.is("DB") && !args.is_empty() {
            let db = int32_arg(args.next_bytes()?)?;
            if db < 0 || db as usize >= databases {
                return Err(err::frame(err::DB_RANGE));
            }
            opts.db = Some(db as usize);
        } else {
            return Err(err::syntax());
        }
    }
    Ok(opts)
}

/// COPY with both keys on this shard.
pub fn copy(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let opts = copy_options(argv, ctx.shard.store.dbs.len())?;
    let (src, dst) = (&argv[1], &argv[2]);
    let dst_db = opts.db.unwrap_or(ctx.db);
    if src == dst && dst_db == ctx.db {
        return Err(err::frame(
            "ERR source and destination objects are the same",
        ));
    }
    let Some((value, ttl)) = ctx
        .ks()
        .peek_with_ttl(src)
        .map(|(e, ttl)| (e.value.clone(), ttl))
    else {
        return Ok(Frame::Integer(0));
    };
    let now = ctx.now_ms();
    let mut target = ctx.shard.store.keyspace(dst_db, now);
    Ok(Frame::Integer(
        put_entry(&mut target, dst, value, ttl, opts.replace, Some("copy_to")) as i64,
    ))
}

/// Stores a value under `key` unless it exists and `replace` is false.
pub fn put_entry(
    ks: &mut crate::store::Keyspace,
    key: &[u8],
    value: Value,
    expire_at: Option<u64>,
    replace: bool,
    event: Option<&'static str>,
) -> bool {
    if !replace && ks.exists(key) {
        return false;
    }
    ks.set(key, value, expire_at);
    if let Some(event) = event {
        ks.notify(GENERIC, event, key);
    }
    true
}

pub fn move_(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let target = int32_arg(&argv[2])?;
    if target < 0 || target as usize >= ctx.shard.store.dbs.len() {
        return Err(err::frame(err::DB_RANGE));
    }
    let target = target as usize;
    if target == ctx.db {
        return Err(err::frame(
            "ERR source and destination objects are the same",
        ));
    }
    let key = &argv[1];
    if !ctx.ks().exists(key) {
        return Ok(Frame::Integer(0));
    }
    let now = ctx.now_ms();
    if ctx.shard.store.keyspace(target, now).exists(key) {
        return Ok(Frame::Integer(0));
    }
    let entry = ctx.ks().remove(key).expect("checked above");
    ctx.notify(GENERIC, "move_from", key);
    let ttl = entry.expire_at();
    let mut target = ctx.shard.store.keyspace(target, now);
    target.set(key, entry.value, ttl);
    target.notify(GENERIC, "move_to", key);
    Ok(Frame::Integer(1))
}

/// Takes a key out of this shard's store (cross-shard RENAME, first half).
pub fn take_entry(ctx: &mut Ctx, key: &[u8]) -> Option<(Value, Option<u64>)> {
    let entry = ctx.ks().remove(key)?;
    ctx.notify(GENERIC, "rename_from", key);
    let ttl = entry.expire_at();
    Some((entry.value, ttl))
}

/// Copies a key out of this shard's store (cross-shard COPY).
pub fn read_entry(ctx: &mut Ctx, key: &[u8]) -> Option<(Value, Option<u64>)> {
    ctx.ks()
        .peek_with_ttl(key)
        .map(|(e, ttl): (&Entry, _)| (e.value.clone(), ttl))
}

pub fn keys(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let pattern = &argv[1];
    let match_all = pattern.as_ref() == b"*";
    let keys = ctx
        .ks()
        .live_keys(|k| match_all || glob_match(pattern, k, false));
    Ok(Frame::Array(keys.into_iter().map(Frame::Bulk).collect()))
}

pub fn dbsize(ctx: &mut Ctx, _argv: &[Bytes]) -> Reply {
    Ok(Frame::Integer(ctx.ks().len() as i64))
}

pub fn flushdb(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    check_flush_mode(argv)?;
    ctx.shard.store.touch_watched_db(ctx.db, None);
    ctx.shard.store.stats.notify.tracking.flush();
    let old = ctx.shard.store.dbs[ctx.db].clear();
    let keys = old.len();
    crate::store::lazyfree::free_keys(old, keys);
    // A blocked XREADGROUP learns its stream went (Redis's signalFlushedDb).
    ctx.shard.store.stats.notify.ready.signal_db(ctx.db);
    Ok(Frame::OK)
}

pub fn flushall(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    check_flush_mode(argv)?;
    // As FLUSHALL kills Redis's saving child: the background save ends
    // without a file (`cmd::save`).
    if ctx.shard.store.abort_snapshot() {
        super::save::shard_aborted(&ctx.shard.shared);
    }
    ctx.shard.store.stats.notify.tracking.flush();
    ctx.shard.store.empty_every_db();
    // A blocked XREADGROUP learns its stream went (Redis's signalFlushedDb).
    for db in 0..ctx.shard.store.dbs.len() {
        ctx.shard.store.stats.notify.ready.signal_db(db);
    }
    Ok(Frame::OK)
}

/// FLUSHDB/FLUSHALL accept SYNC or ASYNC; both answer once the keys are gone
/// from view, and the memory is released on the lazy-free thread either way
/// (and counted in `lazyfreed_objects`, one per key, as Redis counts an
/// async flush): a SYNC flush in Redis stops the server for the whole free,
/// which ember's shards never do. So `lazyfree-lazy-user-flush`, which only
/// picks the mode of a flush that names none, changes nothing here.
pub fn check_flush_mode(argv: &[Bytes]) -> Result<(), Frame> {
    match argv.get(1) {
        None => Ok(()),
        Some(m)
            if argv.len() == 2
                && (m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async")) =>
        {
            Ok(())
        }
        Some(_) => Err(err::syntax()),
    }
}

/// SWAPDB on this shard; the databases were validated where the command arrived.
pub fn swapdb(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let (a, b) = swapdb_args(argv, ctx.shard.store.dbs.len())?;
    ctx.shard.store.touch_watched_db(a, Some(b));
    ctx.shard.store.dbs.swap(a, b);
    // Blocked clients stay on their database number: what it holds now may serve them.
    let ready = &mut ctx.shard.store.stats.notify.ready;
    ready.signal_db(a);
    ready.signal_db(b);
    Ok(Frame::OK)
}

pub fn swapdb_args(argv: &[Bytes], databases: usize) -> Result<(usize, usize), Frame> {
    let parse = |b: &Bytes| {
        let n = crate::util::num::parse_i64(b)
            .ok_or_else(|| err::frame("ERR invalid first DB index"))?;
        Ok::<i64, Frame>(n)
    };
    let a = parse(&argv[1])?;
    let b = crate::util::num::parse_i64(&argv[2])
        .ok_or_else(|| err::frame("ERR invalid second DB index"))?;
    let in_range = |n: i64| n >= 0 && (n as usize) < databases;
    if !in_range(a) || !in_range(b) {
        return Err(err::frame(err::DB_RANGE));
    }
    Ok((a as usize, b as usize))
}

/// One shard's RANDOMKEY candidate.
pub fn randomkey(ctx: &mut Ctx, _argv: &[Bytes]) -> Reply {
    let db = ctx.db;
    let now = ctx.now_ms();
    let shard = &mut *ctx.shard;
    let mut ks = shard.store.keyspace(db, now);
    Ok(ks
        .random_key(shard.sweep.rng())
        .map_or(Frame::Null, Frame::Bulk))
}

/// SCAN's options (MATCH, COUNT, TYPE).
#[derive(Clone)]
pub struct ScanOptions {
    pub pattern: Option<Bytes>,
    pub count: usize,
    pub type_name: Option<String>,
}

/// Parses a SCAN-family cursor as Redis does (`strtoul` in base 10): an
/// optional sign and digits, nothing else. A leading `-` negates modulo
/// 2^64 and the empty string reads as 0, as `strtoul` has it.
pub fn scan_cursor(arg: &[u8]) -> Result<u64, Frame> {
    let invalid = || err::frame("ERR invalid cursor");
    if arg.is_empty() {
        return Ok(0);
    }
    let (negative, digits) = match arg[0] {
        b'-' => (true, &arg[1..]),
        b'+' => (false, &arg[1..]),
        _ => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let value = digits
        .iter()
        .try_fold(0u64, |acc, &d| {
            acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        })
        .ok_or_else(invalid)?;
    Ok(if negative {
        value.wrapping_neg()
    } else {
        value
    })
}

/// SCAN's and its container forms' reply: the next cursor and the items.
pub fn scan_reply(cursor: u64, items: Vec<Bytes>) -> Frame {
    Frame::Array(vec![
        Frame::bulk(cursor.to_string()),
        Frame::Array(items.into_iter().map(Frame::Bulk).collect()),
    ])
}

/// Parses SCAN's options; `with_type` admits TYPE, which only SCAN itself
/// takes (SSCAN, HSCAN and ZSCAN answer it with a syntax error, as Redis).
pub fn scan_options(rest: &[Bytes], with_type: bool) -> Result<ScanOptions, Frame> {
    let mut opts = ScanOptions {
        pattern: None,
        count: 10,
        type_name: None,
    };
    let mut i = 0;
    while i < rest.len() {
        if i + 1 >= rest.len() {
            return Err(err::syntax());
        }
        let (word, value) = (&rest[i], &rest[i + 1]);
        if word.eq_ignore_ascii_case(b"MATCH") {
            opts.pattern = (value.as_ref() != b"*").then(|| value.clone());
        } else if word.eq_ignore_ascii_case(b"COUNT") {
            let n = int_arg(value)?;
            if n < 1 {
                return Err(err::syntax());
            }
            opts.count = n as usize;
        } else if with_type && word.eq_ignore_ascii_case(b"TYPE") {
            opts.type_name = Some(String::from_utf8_lossy(value).to_ascii_lowercase());
        } else {
            return Err(err::syntax());
        }
        i += 2;
    }
    Ok(opts)
}

/// One SCAN step on this shard from dict position `from`.
pub fn scan_step(
    ctx: &mut Ctx,
    from: Option<usize>,
    opts: &ScanOptions,
) -> (Vec<Bytes>, Option<usize>) {
    let mut ks = ctx.ks();
    let (keys, next) = ks.scan(from, opts.count);
    let keys = keys
        .into_iter()
        .filter(|k| {
            opts.pattern
                .as_ref()
                .is_none_or(|p| glob_match(p, k, false))
        })
        .filter(|k| {
            opts.type_name
                .as_ref()
                .is_none_or(|t| ks.peek(k).is_some_and(|e| e.value.type_name() == t))
        })
        .collect();
    (keys, next)
}

const OBJECT_HELP: &[&str] = &[
    "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
    "HELP",
    "    Prints this help.",
];

pub fn help_reply(lines: &[&str]) -> Frame {
    Frame::Array(
        lines
            .iter()
            .map(|l| Frame::SimpleOwned((*l).to_string()))
            .collect(),
    )
}

pub fn object(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sub = &argv[1];
    if sub.eq_ignore_ascii_case(b"help") && argv.len() == 2 {
        return Ok(help_reply(OBJECT_HELP));
    }
    let known = ["encoding", "freq", "idletime", "refcount", "help"];
    let Some(name) = known
        .iter()
        .find(|k| sub.eq_ignore_ascii_case(k.as_bytes()))
    else {
        return Err(err::unknown_subcommand(sub, "object"));
    };
    let want = if *name == "help" { 2 } else { 3 };
    if argv.len() != want {
        return Err(err::wrong_arity(&format!("object|{name}")));
    }
    let now = ctx.now_ms();
    let lfu = crate::config::EVICTION.policy().is_lfu();
    let mut ks = ctx.ks();
    let Some(entry) = ks.peek(&argv[2]) else {
        return Ok(Frame::Null);
    };
    Ok(match sub.to_ascii_lowercase().as_slice() {
        b"encoding" => Frame::bulk(entry.value.encoding()),
        b"idletime" if lfu => {
            return Err(err::frame(
                "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            ))
        }
        b"idletime" => Frame::Integer((access::lru_idle_ms(entry.access, now) / 1000) as i64),
        b"refcount" => Frame::Integer(refcount(&entry.value)),
        _ if lfu => {
            let decay = crate::config::EVICTION.lfu_decay_time();
            Frame::Integer(i64::from(access::lfu_decayed(entry.access, now, decay)))
        }
        _ => {
            return Err(err::frame(
                "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
            ))
        }
    })
}

/// Redis shares the integers 0..10000 between keys (refcount INT_MAX),
/// except with a `maxmemory` and an LRU or LFU policy, where each key needs
/// its own access data.
fn refcount(value: &Value) -> i64 {
    let eviction = &crate::config::EVICTION;
    let shared = eviction.maxmemory() == 0 || !eviction.policy().tracks_access();
    match value {
        Value::Str(s) if shared && s.form() == StrForm::Given => {
            match crate::util::num::parse_i64(s) {
                Some(n) if (0..10_000).contains(&n) => i32::MAX as i64,
                _ => 1,
            }
        }
        _ => 1,
    }
}

/// DEBUG OBJECT's line for one key.
pub fn debug_object(ctx: &mut Ctx, key: &[u8]) -> Reply {
    let now = ctx.now_ms();
    // On a replica a logically expired key is still there, and DEBUG
    // OBJECT finds it (Redis looks it up without expiry).
    let keep = ctx.shard.expiry() == crate::store::Expiry::Hide;
    let mut ks = ctx.ks();
    if keep {
        ks = ks.with_expiry(crate::store::Expiry::Keep);
    }
    let Some(entry) = ks.peek(key) else {
        return Err(err::frame(err::NO_SUCH_KEY));
    };
    // A string's length whether it lives inline or not (an inline one has
    // no heap bytes).
    let serialized = match &entry.value {
        Value::Str(s) => s.len(),
        other => other.heap_size(),
    };
    Ok(Frame::SimpleOwned(format!(
        "Value at:0x0 refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}",
        refcount(&entry.value),
        entry.value.encoding(),
        serialized,
        access::lru_seconds_clock(entry.access, now),
        access::lru_idle_ms(entry.access, now) / 1000
    )))
}

/// A uniformly random pick among shard candidates (RANDOMKEY across shards).
pub fn pick_random(candidates: Vec<Bytes>, rng: &mut impl RngCore) -> Frame {
    if candidates.is_empty() {
        return Frame::Null;
    }
    let i = (rng.next_u64() % candidates.len() as u64) as usize;
    Frame::Bulk(candidates[i].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_read_as_strtoul_does() {
        assert_eq!(scan_cursor(b"0"), Ok(0));
        assert_eq!(scan_cursor(b"+17"), Ok(17));
        assert_eq!(scan_cursor(b"-1"), Ok(u64::MAX));
        assert_eq!(scan_cursor(b""), Ok(0));
        assert_eq!(scan_cursor(b"18446744073709551615"), Ok(u64::MAX));
        for bad in [
            &b"18446744073709551616"[..],
            b" 1",
            b"1 ",
            b"-",
            b"+",
            b"0x1",
            b"1e3",
        ] {
            assert_eq!(
                scan_cursor(bad),
                Err(err::frame("ERR invalid cursor")),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn only_scan_itself_takes_type() {
        let rest = [Bytes::from_static(b"TYPE"), Bytes::from_static(b"set")];
        assert_eq!(
            scan_options(&rest, true).unwrap().type_name.as_deref(),
            Some("set")
        );
        assert!(scan_options(&rest, false).is_err());
    }
}
