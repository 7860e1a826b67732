//! DUMP and RESTORE: a key's value in Redis's serialized form and back.
//! The format itself is `store::rdb`; this is the commands around it:
//! options, TTLs, and the keyspace's rules (BUSYKEY, events, watchers,
//! blocked clients).
//!
//! RESTORE checks in Redis's order, so the same bad command gets the same
//! error: the options, then whether the key exists (without REPLACE), then
//! the TTL, then the payload's footer, then its body.
//!
//! IDLETIME sets the key's LRU clock (what OBJECT IDLETIME reports) and
//! FREQ its LFU counter (OBJECT FREQ), each only under a policy of its kind
//! (`store::access`), as Redis ignores the other.

use bytes::Bytes;

use super::args::{err, Args, Reply};
use super::Ctx;
use crate::resp::Frame;
use crate::store::access;
use crate::store::notify::GENERIC;
use crate::store::rdb;
use crate::store::Value;

const BUSYKEY: &str = "BUSYKEY Target key name already exists.";

/// DUMP key: the payload, or nil for a missing key. Reads the key as a read
/// command does (its access time, the keyspace hit counters).
pub fn dump(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    Ok(match ctx.ks().read(&argv[1]) {
        Some(entry) => Frame::Bulk(Bytes::from(rdb::dump(&entry.value))),
        None => Frame::Null,
    })
}

/// RESTORE's options.
#[derive(Default)]
struct Options {
    replace: bool,
    absttl: bool,
    idle_s: Option<i64>,
    freq: Option<u8>,
}

/// Parses the words after the payload as Redis does: IDLETIME and FREQ
/// each need a value and exclude each other (the second one named is a
/// syntax error), and a value is checked where it is read.
fn options(argv: &[Bytes]) -> Result<Options, Frame> {
    let mut opts = Options::default();
    // Args skips its first item: start it on the payload.
    let mut args = Args::new(&argv[3..]);
    while !args.is_empty() {
        let word = args.next_keyword()?;
        let has_value = args.remaining() >= 1;
        if word.is("REPLACE") {
            opts.replace = true;
        } else if word.is("ABSTTL") {
            opts.absttl = true;
        } else if word.is("IDLETIME") && has_value && opts.freq.is_none() {
            let idle = args.next_i64()?;
            if idle < 0 {
                return Err(err::frame("ERR Invalid IDLETIME value, must be >= 0"));
            }
            opts.idle_s = Some(idle);
        } else if word.is("FREQ") && has_value && opts.idle_s.is_none() {
            let f = args.next_i64()?;
            if !(0..=255).contains(&f) {
                return Err(err::frame(
                    "ERR Invalid FREQ value, must be >= 0 and <= 255",
                ));
            }
            opts.freq = Some(f as u8);
        } else {
            return Err(err::syntax());
        }
    }
    Ok(opts)
}

/// RESTORE key ttl payload [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f].
pub fn restore(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let opts = options(argv)?;
    let key = &argv[1];
    if !opts.replace && ctx.ks().exists(key) {
        return Err(err::frame(BUSYKEY));
    }
    let ttl = super::args::int_arg(&argv[2])?;
    if ttl < 0 {
        return Err(err::frame("ERR Invalid TTL value, must be >= 0"));
    }
    let limits = rdb::Limits {
        hash: ctx.shard.shared.config.hash_listpack(),
    };
    let mut value = rdb::restore(&argv[3], &limits).map_err(|e| err::frame(e.message()))?;
    let now = ctx.now_ms();
    // 0 is no TTL. A relative TTL whose deadline would not fit an i64 is
    // one Redis's addition wraps into the past: the key is not created.
    let deadline = match ttl {
        0 => None,
        _ if opts.absttl => Some(ttl),
        _ => Some(ttl.checked_add(now as i64).unwrap_or(i64::MIN)),
    };
    // Fields whose deadline has passed are not restored (a hash with none
    // left is no key), as a key whose deadline has passed is not.
    let gone = match &mut value {
        Value::Hash(h) if h.may_have_expired(now) => {
            h.remove_expired(now);
            h.is_empty()
        }
        _ => false,
    };
    let mut ks = ctx.ks();
    // Redis's `checkAlreadyExpired`: a deadline not after now.
    if gone || deadline.is_some_and(|at| at <= now as i64) {
        if opts.replace && ks.remove(key).is_some() {
            ks.notify(GENERIC, "del", key);
        }
        return Ok(Frame::OK);
    }
    ks.set(key, value, deadline.map(|at| at as u64));
    let word = if crate::config::EVICTION.policy().is_lfu() {
        opts.freq.map(|f| access::lfu_word(now, f))
    } else {
        opts.idle_s
            .map(|idle| access::lru_with_idle(now, idle as u64))
    };
    if let Some(word) = word {
        ks.set_access(key, word);
    }
    ks.notify(GENERIC, "restore", key);
    Ok(Frame::OK)
}
