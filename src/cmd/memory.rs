//! MEMORY: USAGE (what a key and its value hold), DOCTOR and HELP.
//! MEMORY STATS, PURGE and MALLOC-STATS are not here yet: they answer
//! Redis's unknown-subcommand error.

use bytes::Bytes;

use super::args::{err, Reply};
use super::keys::help_reply;
use super::Ctx;
use crate::resp::Frame;
use crate::util::memory::memory_stats;
use crate::util::num::parse_i64;

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// What a key's slot in its table costs besides the key and value bytes
/// (the slot itself, its index entry, the value's header), as a fixed
/// figure: MEMORY USAGE reports an estimate, as Redis's does.
const ENTRY_OVERHEAD: usize = 48;

/// Below this much allocated memory DOCTOR has nothing to say (Redis's 5 MB).
const DOCTOR_MIN_BYTES: u64 = 5 << 20;

pub fn memory(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let sub = argv[1].to_ascii_lowercase();
    match sub.as_slice() {
        b"help" if argv.len() == 2 => Ok(help_reply(MEMORY_HELP)),
        b"doctor" if argv.len() == 2 => Ok(Frame::bulk(doctor())),
        b"usage" if argv.len() >= 3 => usage(ctx, argv),
        b"usage" => Err(err::wrong_arity("memory|usage")),
        b"help" | b"doctor" => Err(err::wrong_arity(&format!(
            "memory|{}",
            String::from_utf8_lossy(&sub)
        ))),
        _ => Err(err::unknown_subcommand(&argv[1], "memory")),
    }
}

/// MEMORY USAGE key [SAMPLES count]: the key's bytes, its value's and the
/// slot's. Every element is counted, so SAMPLES is checked and then has
/// nothing to change.
fn usage(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut options = argv[3..].iter();
    while let Some(option) = options.next() {
        if !option.eq_ignore_ascii_case(b"samples") {
            return Err(err::syntax());
        }
        let Some(count) = options.next() else {
            return Err(err::syntax());
        };
        match parse_i64(count) {
            None => return Err(err::not_integer()),
            Some(n) if n < 0 => return Err(err::syntax()),
            Some(_) => {}
        }
    }
    let key = &argv[2];
    let mut ks = ctx.ks();
    let Some(entry) = ks.peek(key) else {
        return Ok(Frame::Null);
    };
    let bytes = ENTRY_OVERHEAD + key.len() + entry.value.heap_size();
    Ok(Frame::Integer(bytes as i64))
}

/// DOCTOR's report, in Redis's words for the two cases ember can tell.
fn doctor() -> &'static str {
    if memory_stats().allocated < DOCTOR_MIN_BYTES {
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't be used in these conditions. Please, leave for your mission on Earth and fill it with some data. The new Sam and I will be back to our programming as soon as I finished rebooting."
    } else {
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base."
    }
}
