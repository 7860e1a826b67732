//! The slow log behind SLOWLOG (Redis's `slowlog-log-slower-than` and
//! `slowlog-max-len`): commands that took at least the threshold, newest
//! first, each with an id, its Unix time, its duration, its arguments (cut
//! as Redis cuts them, secrets redacted) and its client.
//!
//! One log for the whole server, behind a mutex, rather than one per shard
//! merged at SLOWLOG GET: only a command already found slow takes the lock
//! (the test before it is a relaxed load and a comparison, in the shard
//! that timed the command), so at the default threshold (10 ms) the lock
//! is all but never contended. The ids are then handed out under the same
//! lock that orders the entries, so "newest first" and "ids increasing" are
//! one order for every shard, with no merge by timestamps that tie within
//! a second. At `slowlog-log-slower-than 0` every command takes the lock:
//! a debugging setting, as it is in Redis.

use std::collections::VecDeque;
use std::sync::Mutex;

use bytes::Bytes;

/// Redis's `SLOWLOG_ENTRY_MAX_ARGC`: arguments kept per entry; the last
/// kept one says how many more there were.
pub const MAX_ARGC: usize = 32;
/// Redis's `SLOWLOG_ENTRY_MAX_STRING`: bytes kept of each argument.
pub const MAX_STRING: usize = 128;

/// One logged command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub id: u64,
    /// Unix seconds when it was logged.
    pub time_s: u64,
    pub duration_us: u64,
    /// Already cut and redacted ([`entry_argv`]).
    pub argv: Vec<Bytes>,
    /// The client's `ip:port`.
    pub addr: String,
    /// The client's name (empty if none), as it was after the command.
    pub name: String,
}

#[derive(Default)]
struct Inner {
    /// Newest first.
    entries: VecDeque<Entry>,
    next_id: u64,
}

/// The server's slow log (see the module docs).
#[derive(Default)]
pub struct SlowLog {
    inner: Mutex<Inner>,
}

impl SlowLog {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves a log that is
        // still well formed: keep using it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs a command (its argv as run; cut and redacted here) and drops
    /// the oldest entries past `max_len`. As in Redis, a lowered
    /// `slowlog-max-len` trims at the next entry, not at once.
    pub fn push(
        &self,
        argv: &[Bytes],
        duration_us: u64,
        time_s: u64,
        addr: &str,
        name: &str,
        max_len: usize,
    ) {
        let argv = entry_argv(argv);
        let mut inner = self.lock();
        let id = inner.next_id;
        inner.next_id += 1;
        inner.entries.push_front(Entry {
            id,
            time_s,
            duration_us,
            argv,
            addr: addr.to_string(),
            name: name.to_string(),
        });
        inner.entries.truncate(max_len);
    }

    /// The newest `count` entries (all of them for `None`), newest first.
    pub fn newest(&self, count: Option<usize>) -> Vec<Entry> {
        let inner = self.lock();
        let n = count.map_or(inner.entries.len(), |c| c.min(inner.entries.len()));
        inner.entries.iter().take(n).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every entry; ids go on increasing, as Redis's do.
    pub fn reset(&self) {
        self.lock().entries.clear();
    }
}

/// The arguments an entry keeps: secrets replaced by `(redacted)`, at most
/// [`MAX_ARGC`] of them (the last one then `... (N more arguments)`), each
/// at most [`MAX_STRING`] bytes (then `... (N more bytes)`), as Redis 7.0.
pub fn entry_argv(argv: &[Bytes]) -> Vec<Bytes> {
    let secret = redacted(argv);
    let kept = argv.len().min(MAX_ARGC);
    (0..kept)
        .map(|j| {
            if kept != argv.len() && j == kept - 1 {
                let more = argv.len() - kept + 1;
                return Bytes::from(format!("... ({more} more arguments)"));
            }
            if secret.contains(&j) {
                return Bytes::from_static(b"(redacted)");
            }
            let arg = &argv[j];
            if arg.len() > MAX_STRING {
                let mut cut = arg[..MAX_STRING].to_vec();
                cut.extend_from_slice(
                    format!("... ({} more bytes)", arg.len() - MAX_STRING).as_bytes(),
                );
                return Bytes::from(cut);
            }
            // A copy: a slice would keep the whole read buffer it came
            // from alive for as long as the entry lives.
            Bytes::copy_from_slice(arg)
        })
        .collect()
}

/// The CONFIG parameters whose values Redis 7.0 marks sensitive.
const SENSITIVE_CONFIGS: &[&str] = &[
    "requirepass",
    "masterauth",
    "masteruser",
    "tls-key-file-pass",
    "tls-client-key-file-pass",
];

/// Positions of `argv` that Redis 7.0 never shows (passwords and ACL
/// rules), as its commands redact them for the slow log and MONITOR.
pub fn redacted(argv: &[Bytes]) -> Vec<usize> {
    let is = |i: usize, word: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(word.as_bytes()))
    };
    let n = argv.len();
    if is(0, "auth") {
        return (1..n).collect();
    }
    if is(0, "acl") && is(1, "setuser") {
        return (2..n).collect();
    }
    if is(0, "hello") {
        // HELLO [protover [AUTH username password] [SETNAME name]]
        let mut out = Vec::new();
        let mut j = 2;
        while j < n {
            if is(j, "auth") && j + 2 < n {
                out.extend([j + 1, j + 2]);
                j += 3;
            } else {
                j += if is(j, "setname") { 2 } else { 1 };
            }
        }
        return out;
    }
    if is(0, "config") && is(1, "set") {
        return (2..n)
            .step_by(2)
            .filter(|&j| j + 1 < n && SENSITIVE_CONFIGS.iter().any(|c| is(j, c)))
            .map(|j| j + 1)
            .collect();
    }
    if is(0, "migrate") {
        // MIGRATE host port key db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS ...]
        let mut out = Vec::new();
        let mut j = 6;
        while j < n {
            if is(j, "keys") {
                break;
            } else if is(j, "auth") {
                out.push(j + 1);
                j += 2;
            } else if is(j, "auth2") {
                out.extend([j + 1, j + 2]);
                j += 3;
            } else {
                j += 1;
            }
        }
        out.retain(|&j| j < n);
        return out;
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Bytes> {
        words.iter().map(|w| Bytes::from(w.to_string())).collect()
    }

    fn shown(words: &[&str]) -> Vec<String> {
        entry_argv(&args(words))
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    #[test]
    fn long_argument_lists_and_strings_are_cut_as_redis_cuts_them() {
        let mut words = vec!["sadd", "set"];
        let nums: Vec<String> = (3..=33).map(|i| i.to_string()).collect();
        words.extend(nums.iter().map(|s| s.as_str()));
        let out = shown(&words);
        assert_eq!(out.len(), 32);
        assert_eq!(out[30], "31");
        assert_eq!(out[31], "... (2 more arguments)");
        // Exactly 32 arguments are all kept.
        assert_eq!(shown(&words[..32]).len(), 32);
        assert_eq!(shown(&words[..32])[31], "32");

        let long = "A".repeat(129);
        let out = shown(&["sadd", "set", "foo", &long]);
        assert_eq!(out[3], format!("{}... (1 more bytes)", "A".repeat(128)));
        assert_eq!(shown(&["x", &"B".repeat(128)])[1], "B".repeat(128));
    }

    #[test]
    fn secrets_are_redacted() {
        assert_eq!(shown(&["AUTH", "pw"]), ["AUTH", "(redacted)"]);
        assert_eq!(
            shown(&["auth", "u", "pw"]),
            ["auth", "(redacted)", "(redacted)"]
        );
        assert_eq!(
            shown(&["acl", "SETUSER", "u", "on", ">p"]),
            ["acl", "SETUSER", "(redacted)", "(redacted)", "(redacted)"]
        );
        assert_eq!(shown(&["acl", "getuser", "u"]), ["acl", "getuser", "u"]);
        assert_eq!(
            shown(&["hello", "3", "AUTH", "a", "b", "setname", "n"]),
            [
                "hello",
                "3",
                "AUTH",
                "(redacted)",
                "(redacted)",
                "setname",
                "n"
            ]
        );
        assert_eq!(
            shown(&["hello", "3", "setname", "auth"]),
            ["hello", "3", "setname", "auth"]
        );
        assert_eq!(
            shown(&["config", "set", "maxmemory", "0", "requirepass", "x"]),
            [
                "config",
                "set",
                "maxmemory",
                "0",
                "requirepass",
                "(redacted)"
            ]
        );
        assert_eq!(
            shown(&["migrate", "h", "1", "k", "9", "5000", "AUTH2", "u", "p"]),
            [
                "migrate",
                "h",
                "1",
                "k",
                "9",
                "5000",
                "AUTH2",
                "(redacted)",
                "(redacted)"
            ]
        );
        assert_eq!(
            shown(&["migrate", "h", "1", "k", "9", "5000", "AUTH"]).len(),
            7
        );
    }

    #[test]
    fn newest_first_with_increasing_ids_and_trimmed_to_max_len() {
        let log = SlowLog::default();
        for i in 0..5u64 {
            log.push(&args(&["ping", &i.to_string()]), i, 100, "1.2.3.4:5", "", 3);
        }
        assert_eq!(log.len(), 3);
        let all = log.newest(None);
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [4, 3, 2]);
        assert_eq!(log.newest(Some(1))[0].argv[1], "4");
        assert_eq!(log.newest(Some(0)).len(), 0);
        assert_eq!(log.newest(Some(10)).len(), 3);
        log.reset();
        assert!(log.is_empty());
        log.push(&args(&["ping"]), 1, 100, "a", "n", 3);
        assert_eq!(log.newest(None)[0].id, 5);
        assert_eq!(log.newest(None)[0].name, "n");
        // max-len 0 keeps nothing.
        log.push(&args(&["ping"]), 1, 100, "a", "n", 0);
        assert!(log.is_empty());
    }
}
