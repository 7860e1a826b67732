//! MONITOR: every command any client runs, as a line to the monitoring
//! clients, in Redis 7.0's format:
//!
//! ```text
//! +1796196072.335254 [0 127.0.0.1:36740] "set" "foo" "bar baz\\n"
//! +1796196072.383714 [0 lua] "set" "foo" "bar"
//! ```
//!
//! (Unix seconds and microseconds, the database after the command ran, the
//! client's address or `lua` for a script's commands, and each argument
//! quoted as Redis's `sdscatrepr` quotes it.) As in Redis 7.0, a command is
//! shown once it ran (commands refused before running, and commands
//! queued in MULTI, are not; EXEC follows the commands it ran); admin
//! commands are never shown; EVAL and FCALL (`skip_monitor`) are shown
//! before their script's commands; AUTH's and HELLO AUTH's credentials and
//! MIGRATE's AUTH/AUTH2 arguments read `(redacted)`.
//!
//! The lines go out through `ShardData::deliveries`, as Pub/Sub messages
//! do, so a monitor on another shard receives them through the inboxes:
//! in the order each shard ran them.

use bytes::Bytes;

use super::{CommandFlags, CommandSpec, Session, ShardData};
use crate::exec::Action;
use crate::pubsub::Delivery;
use crate::resp::Frame;

/// MONITOR: the connection receives every later command's line.
pub fn monitor(shard: &mut ShardData, session: &mut Session, _: &[Bytes]) -> Action {
    if !session.monitor {
        session.monitor = true;
        shard.shared.monitors.add(session.subscriber());
    }
    Frame::OK.into()
}

/// Ends MONITOR mode (RESET, a closed connection).
pub fn stop(shard: &ShardData, session: &mut Session) {
    if std::mem::take(&mut session.monitor) {
        shard.shared.monitors.remove(session.subscriber());
    }
}

/// Whether `spec` (its subcommand's flags for a container) is shown: not
/// an admin command, and not one that shows itself (`skip_monitor`).
pub fn shown(spec: &CommandSpec, argv: &[Bytes]) -> bool {
    let flags = match argv.get(1).filter(|_| spec.container) {
        Some(sub) => spec.meta.subcommand(sub).map_or(spec.flags, |m| m.flags),
        None => spec.flags,
    };
    !flags.intersects(CommandFlags::ADMIN | CommandFlags::SKIP_MONITOR)
}

/// Sends `argv`'s line (run by `from`, an address or `lua`, in `db`) to
/// every monitor. Requires: someone monitors (`Monitors::active`).
pub fn feed(shard: &mut ShardData, db: usize, from: &str, argv: &[Bytes]) {
    let line = line(now_us(), db, from, argv);
    for to in shard.shared.monitors.all() {
        shard.deliveries.push(Delivery {
            to,
            frame: Frame::SimpleOwned(line.clone()),
        });
    }
}

fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// One MONITOR line (without `+` and the line end).
pub fn line(now_us: u64, db: usize, from: &str, argv: &[Bytes]) -> String {
    let mut out = format!(
        "{}.{:06} [{db} {from}]",
        now_us / 1_000_000,
        now_us % 1_000_000
    );
    let redacted = redacted_from(argv);
    for (i, arg) in argv.iter().enumerate() {
        out.push(' ');
        if redacted.contains(&i) {
            out.push_str("\"(redacted)\"");
        } else {
            crate::util::repr::push_repr(&mut out, arg);
        }
    }
    out
}

/// The positions of arguments Redis 7.0 hides: every argument of AUTH,
/// HELLO's AUTH user and password, MIGRATE's AUTH password and AUTH2
/// user and password.
fn redacted_from(argv: &[Bytes]) -> Vec<usize> {
    let name = argv
        .first()
        .map(|a| a.to_ascii_lowercase())
        .unwrap_or_default();
    let is = |i: usize, w: &[u8]| argv[i].eq_ignore_ascii_case(w);
    match name.as_slice() {
        b"auth" => (1..argv.len()).collect(),
        b"hello" => (2..argv.len())
            .filter(|&i| is(i, b"auth"))
            .flat_map(|i| [i + 1, i + 2])
            .collect(),
        b"migrate" => {
            let mut hidden = Vec::new();
            let mut i = 6;
            while i < argv.len() {
                if is(i, b"keys") {
                    break;
                }
                if is(i, b"auth") {
                    hidden.push(i + 1);
                    i += 1;
                } else if is(i, b"auth2") {
                    hidden.extend([i + 1, i + 2]);
                    i += 2;
                }
                i += 1;
            }
            hidden
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_argv as argv;

    #[test]
    fn lines_are_redis_format() {
        let a = argv(&["set", "foo", "bar baz\n\"q\"", "\u{1}"]);
        assert_eq!(
            line(1_796_196_072_000_254, 3, "127.0.0.1:36740", &a),
            r#"1796196072.000254 [3 127.0.0.1:36740] "set" "foo" "bar baz\n\"q\"" "\x01""#
        );
    }

    #[test]
    fn credentials_are_redacted() {
        let l = line(0, 0, "lua", &argv(&["AUTH", "u", "p"]));
        assert_eq!(l, r#"0.000000 [0 lua] "AUTH" "(redacted)" "(redacted)""#);
        let l = line(0, 0, "x", &argv(&["hello", "2", "AUTH", "u", "p"]));
        assert!(l.ends_with(r#""2" "AUTH" "(redacted)" "(redacted)""#));
        let l = line(
            0,
            0,
            "x",
            &argv(&["migrate", "h", "1", "key", "9", "5000", "AUTH2", "u", "p"]),
        );
        assert!(l.ends_with(r#""AUTH2" "(redacted)" "(redacted)""#));
        let l = line(
            0,
            0,
            "x",
            &argv(&["migrate", "h", "1", "key", "9", "5000", "AUTH", "p"]),
        );
        assert!(l.ends_with(r#""AUTH" "(redacted)""#));
    }
}
