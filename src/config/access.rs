//! CONFIG GET and CONFIG SET over the rows, and the start-up directives,
//! with Redis 7.0's order of checks and error texts.
//!
//! CONFIG SET of several pairs is all or nothing, in three steps under
//! [`Live::writer`]:
//! 1. every name is looked up, in order: an unknown one, an immutable one
//!    or one given twice fails the command (the name as typed in the error);
//! 2. every value is parsed, in order; the first that fails, fails the
//!    command (`CONFIG SET failed (possibly related to argument 'name') -
//!    reason`), and a `Set::StartUp` parameter given a new value fails as
//!    immutable here;
//! 3. all values are stored; then what may fail is applied: the TLS set-up
//!    when a `tls-*` value was given, the listeners when `port` changed
//!    (binding the new port fails while anyone listens there). A failure
//!    puts every value back and fails the command, as Redis's rollback
//!    does. Last the hooks of the parameters whose value changed run, once
//!    each; they cannot fail.

use super::kind::Value;
use super::live::Live;
use super::params::{find_param, Param, Set, PARAMS};

impl Live {
    /// CONFIG GET: the parameters whose name or alias matches a pattern
    /// (a glob, any case), each name once, with its value. A plain name is
    /// answered as it was typed, as Redis does; a pattern leaves out the
    /// hidden parameters ([`Param::hidden`]).
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let _writer = self.writer.lock();
        let mut out: Vec<(String, String)> = Vec::new();
        let mut add = |name: String, value: String| {
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, value));
            }
        };
        for pattern in patterns {
            if !pattern.iter().any(|c| matches!(c, b'[' | b'*' | b'?')) {
                if let Some(p) = find_param(pattern) {
                    add(String::from_utf8_lossy(pattern).into_owned(), p.show(self));
                }
                continue;
            }
            for p in PARAMS.iter().filter(|p| !p.hidden()) {
                for name in p.names() {
                    if crate::util::glob::glob_match(pattern, name.as_bytes(), true) {
                        add(name.to_string(), p.show(self));
                    }
                }
            }
        }
        out
    }

    /// CONFIG SET `name value [name value ...]`: all or none (the module
    /// doc has the steps). `Err` is the whole error reply text.
    pub fn set_many(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), String> {
        self.set_many_as(pairs, false)
    }

    /// [`set_many`](Self::set_many) for a client that is `local` (on a
    /// loopback address): `enable-protected-configs local` lets it set the
    /// protected parameters.
    pub fn set_many_as(&self, pairs: &[(&[u8], &[u8])], local: bool) -> Result<(), String> {
        let _writer = self.writer.lock();
        let failed = |name: &[u8], reason: &str| {
            format!(
                "ERR CONFIG SET failed (possibly related to argument '{}') - {reason}",
                String::from_utf8_lossy(name)
            )
        };
        let mut params: Vec<&'static Param> = Vec::with_capacity(pairs.len());
        for (i, (name, _)) in pairs.iter().enumerate() {
            let Some(param) = find_param(name) else {
                return Err(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    String::from_utf8_lossy(name)
                ));
            };
            if param.set == Set::Immutable {
                return Err(failed(name, "can't set immutable config"));
            }
            let protected_ok = match self.protected_configs() {
                super::DebugCommand::Yes => true,
                super::DebugCommand::Local => local,
                super::DebugCommand::No => false,
            };
            if param.set == Set::Protected && !protected_ok {
                return Err(failed(name, "can't set protected config"));
            }
            // The same name twice; a name and its alias are two names, as
            // in Redis, and the later value wins.
            if pairs[..i].iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Err(failed(name, "duplicate parameter"));
            }
            params.push(param);
        }
        let mut values: Vec<Value> = Vec::with_capacity(pairs.len());
        for (param, (name, value)) in params.iter().zip(pairs) {
            let name = name.to_ascii_lowercase();
            let value = param
                .kind
                .parse(self, &String::from_utf8_lossy(value))
                .map_err(|reason| failed(&name, &reason))?;
            if param.set == Set::StartUp && value != param.kind.read(self) {
                return Err(failed(&name, "can't set immutable config"));
            }
            values.push(value);
        }
        let mut hooks: Vec<fn(&Live)> = Vec::new();
        let mut olds: Vec<(&'static Param, Value)> = Vec::new();
        for (param, value) in params.into_iter().zip(values) {
            let old = param.kind.read(self);
            let changed = value != old;
            olds.push((param, old));
            param.kind.store(self, value);
            if let Some(apply) = param.apply.filter(|_| changed) {
                if !hooks.contains(&apply) {
                    hooks.push(apply);
                }
            }
        }
        // The TLS set-up is rebuilt from the new values; one that does not
        // build leaves every value as it was, as Redis's reload does.
        if let Some((param, _)) = olds.iter().find(|(p, _)| p.name.starts_with("tls-")) {
            if let Err(reason) = super::tls::rebuild(self) {
                log::warn!("Failed to update TLS configuration: {reason}");
                for (param, old) in olds.iter().rev() {
                    param.kind.store(self, old.clone());
                }
                let text = "Unable to update TLS configuration. Check server logs.";
                return Err(failed(param.name.as_bytes(), text));
            }
        }
        let moved = |name: &str| {
            olds.iter()
                .find(|(p, old)| p.name == name && *old != p.kind.read(self))
        };
        // A new `bind` moves every listener (Redis's changeBindAddr), a
        // new `port` the plain ones.
        let (port_moved, bind_moved) = (moved("port"), moved("bind"));
        if let (Some((param, _)), Some(rebind)) = (bind_moved.or(port_moved), self.rebind.get()) {
            if let Err(line) = rebind(self.port(), bind_moved.is_some()) {
                log::warn!("{line}");
                let (setting, text) = match bind_moved {
                    Some(_) => ("bind", "Failed to bind to specified addresses."),
                    None => ("port", "Unable to listen on this port. Check server logs."),
                };
                log::warn!("Failed applying new configuration. Possibly related to new {setting} setting. Restoring previous settings.");
                for (param, old) in olds.iter().rev() {
                    param.kind.store(self, old.clone());
                }
                if olds.iter().any(|(p, _)| p.name.starts_with("tls-")) {
                    let _ = super::tls::rebuild(self);
                }
                return Err(failed(param.name.as_bytes(), text));
            }
        }
        for apply in hooks {
            apply(self);
        }
        Ok(())
    }

    /// A config file line or a `--name value` flag: any parameter, the
    /// immutable ones too; no hooks (they run once the server starts,
    /// [`Live::apply_all`]). `Err` is the reason Redis prints under the
    /// line.
    /// A start-up directive as its words after the name: Redis's number
    /// of values first (one, but for its multi-word parameters), then
    /// [`Live::set_directive`] with them joined by spaces.
    pub fn set_directive_words(&self, name: &str, values: &[String]) -> Result<(), String> {
        let param = find_param(name.as_bytes()).ok_or_else(|| BAD_DIRECTIVE.to_string())?;
        if values.len() != 1 && !MULTI_WORD.contains(&param.name) {
            return Err("wrong number of arguments".into());
        }
        self.set_directive(name, &values.join(" "))
    }

    pub fn set_directive(&self, name: &str, value: &str) -> Result<(), String> {
        let param = find_param(name.as_bytes()).ok_or_else(|| BAD_DIRECTIVE.to_string())?;
        let value = param.kind.parse(self, value)?;
        param.kind.store(self, value);
        Ok(())
    }
}

/// Redis's reason for an unknown parameter.
pub const BAD_DIRECTIVE: &str = "Bad directive or wrong number of arguments";

/// The parameters a config line gives any number of words (Redis's
/// `MULTI_ARG_CONFIG`, and `replicaof`, whose value checks its own two);
/// every other one takes exactly one.
pub(super) const MULTI_WORD: &[&str] = &[
    "save",
    "bind",
    "client-output-buffer-limit",
    "oom-score-adj-values",
    "shutdown-on-sigint",
    "shutdown-on-sigterm",
    "latency-tracking-info-percentiles",
    "replicaof",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn set(live: &Live, args: &[&str]) -> Result<(), String> {
        let pairs: Vec<(&[u8], &[u8])> = args
            .chunks(2)
            .map(|p| (p[0].as_bytes(), p[1].as_bytes()))
            .collect();
        live.set_many(&pairs)
    }

    fn get(live: &Live, pattern: &str) -> Vec<(String, String)> {
        live.get_matching(&[pattern.as_bytes()])
    }

    fn value(live: &Live, name: &str) -> String {
        get(live, name)[0].1.clone()
    }

    #[test]
    fn hidden_parameters_answer_only_to_their_own_name() {
        let live = Live::new();
        for name in super::super::params::HIDDEN {
            assert!(find_param(name.as_bytes()).is_some(), "{name} is a row");
            assert!(get(&live, "*").iter().all(|(n, _)| n != name));
            assert!(get(&live, "*delay*").iter().all(|(n, _)| n != name));
            assert_eq!(get(&live, name).len(), 1, "{name} asked for by name");
        }
    }

    #[test]
    fn names_are_checked_before_values_as_redis_does() {
        let live = Live::new();
        assert_eq!(
            set(&live, &["hz", "abc", "foo", "bar"]).unwrap_err(),
            "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"
        );
        assert_eq!(
            set(&live, &["hz", "abc", "DATABASES", "3"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'DATABASES') - can't set immutable config"
        );
        assert_eq!(
            set(&live, &["hz", "5", "HZ", "6"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'HZ') - duplicate parameter"
        );
        assert_eq!(
            set(&live, &["HZ", "abc"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"
        );
        assert_eq!(value(&live, "hz"), "10");
    }

    #[test]
    fn several_pairs_are_all_or_nothing() {
        let live = Live::new();
        set(&live, &["hz", "25", "maxclients", "77"]).unwrap();
        assert!(set(&live, &["hz", "30", "maxclients", "abc"]).is_err());
        assert_eq!(
            (value(&live, "hz"), value(&live, "maxclients")),
            ("25".into(), "77".into())
        );
        // A failing output buffer group leaves the earlier pairs unset too.
        assert!(set(
            &live,
            &["timeout", "5", "client-output-buffer-limit", "normal 1 1"]
        )
        .is_err());
        assert_eq!(live.timeout_s(), 0);
        // A name and its alias are two parameters to Redis: the later wins.
        set(
            &live,
            &[
                "hash-max-ziplist-entries",
                "10",
                "hash-max-listpack-entries",
                "20",
            ],
        )
        .unwrap();
        assert_eq!(live.hash_listpack().entries, 20);
    }

    #[test]
    fn start_up_parameters_take_only_the_value_they_have() {
        let live = Live::new();
        let shards = live.shards().to_string();
        set(&live, &["shards", &shards]).unwrap();
        // Another value is refused once it parses (a bad one says why).
        let more_shards = (live.shards() + 1).to_string();
        for (name, other) in [("shards", more_shards.as_str()), ("tls-port", "6390")] {
            assert_eq!(
                set(&live, &[name, other]).unwrap_err(),
                format!("ERR CONFIG SET failed (possibly related to argument '{name}') - can't set immutable config")
            );
        }
        assert_eq!(
            set(&live, &["port", "x"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'port') - argument couldn't be parsed into an integer"
        );
        assert_eq!(live.port(), 6379);
        // Redis's own immutable ones refuse even the value they have.
        assert!(set(&live, &["databases", "16"]).is_err());
        assert!(set(&live, &["enable-debug-command", "no"]).is_err());
        assert!(set(&live, &["daemonize", "no"]).is_err());
    }

    #[test]
    fn a_port_that_cannot_be_bound_rolls_every_value_back() {
        let live = Live::new();
        let tried = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = std::sync::Arc::clone(&tried);
        live.set_rebind(Box::new(move |port, _| {
            seen.lock().unwrap().push(port);
            match port {
                7001 => Err("bind: Address already in use".into()),
                _ => Ok(()),
            }
        }));
        set(&live, &["port", "7000", "hz", "20"]).unwrap();
        assert_eq!((live.port(), value(&live, "hz")), (7000, "20".into()));
        assert_eq!(
            set(&live, &["hz", "30", "PORT", "7001", "maxclients", "5"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
        );
        assert_eq!(
            (live.port(), value(&live, "hz"), value(&live, "maxclients")),
            (7000, "20".into(), "10000".into())
        );
        // The same port again moves nothing.
        set(&live, &["port", "7000"]).unwrap();
        assert_eq!(*tried.lock().unwrap(), [7000, 7001]);
    }

    #[test]
    fn every_value_config_get_gives_can_be_set_back() {
        // Redis's "CONFIG sanity" test does this with every parameter that
        // Redis can change.
        let live = Live::new();
        live.set_directive("enable-protected-configs", "yes")
            .unwrap();
        set(&live, &["notify-keyspace-events", "KEA", "hz", "1000"]).unwrap();
        for (name, value) in get(&live, "*") {
            let p = find_param(name.as_bytes()).unwrap();
            if p.set != Set::Immutable {
                set(&live, &[&name, &value]).unwrap_or_else(|e| panic!("{name} {value:?}: {e}"));
                assert_eq!(p.show(&live), value);
            }
        }
        assert_eq!(value(&live, "notify-keyspace-events"), "AKE");
        assert_eq!(value(&live, "hz"), "500");
    }

    #[test]
    fn get_takes_globs_aliases_and_plain_names_as_typed() {
        let live = Live::new();
        assert_eq!(get(&live, "HZ"), vec![("HZ".to_string(), "10".to_string())]);
        assert_eq!(get(&live, "H?"), vec![("hz".to_string(), "10".to_string())]);
        assert!(get(&live, "nosuch").is_empty());
        assert_eq!(get(&live, "hash-max-*").len(), 4);
        assert_eq!(get(&live, "active-expire-*").len(), 5);
        // Several patterns, each name once.
        let both = live.get_matching(&[b"hz", b"h?", b"maxclients"]);
        assert_eq!(both.len(), 2);
    }

    #[test]
    fn values_are_parsed_by_their_type() {
        let live = Live::new();
        set(
            &live,
            &[
                "hash-max-ziplist-entries",
                "128",
                "hash-max-listpack-value",
                "1kb",
            ],
        )
        .unwrap();
        assert_eq!(
            (live.hash_listpack().entries, live.hash_listpack().value),
            (128, 1024)
        );
        set(&live, &["loglevel", "WARNING", "jemalloc-bg-thread", "YES"]).unwrap();
        assert_eq!(value(&live, "loglevel"), "warning");
        let range = "argument must be between 0 and 9223372036854775807 inclusive";
        for (name, text, want) in [
            ("hash-max-listpack-entries", "-1", range),
            (
                "hash-max-listpack-entries",
                "1k",
                "argument couldn't be parsed into an integer",
            ),
            (
                "hash-max-listpack-value",
                "-1",
                "argument must be a memory value",
            ),
            (
                "hash-max-listpack-value",
                "abc",
                "argument must be a memory value",
            ),
            ("hash-max-listpack-value", "9223372036854775808", range),
            ("hash-max-listpack-value", "99999999999999999999", range),
            (
                "proto-max-bulk-len",
                "1000",
                "argument must be between 1048576 and 9223372036854775807 inclusive",
            ),
            (
                "lazyfree-lazy-user-del",
                "maybe",
                "argument must be 'yes' or 'no'",
            ),
            ("appendonly", "maybe", "argument must be 'yes' or 'no'"),
            (
                "appendfsync",
                "sometimes",
                "argument(s) must be one of the following: everysec, always, no",
            ),
            ("maxmemory", "-1", "argument must be a memory value"),
            (
                "maxmemory-policy",
                "lru",
                "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction, allkeys-tinylfu",
            ),
            (
                "maxmemory-samples",
                "0",
                "argument must be between 1 and 2147483647 inclusive",
            ),
            (
                "maxmemory-eviction-tenacity",
                "101",
                "argument must be between 0 and 100 inclusive",
            ),
            (
                "maxmemory-clients",
                "101%",
                "percentage argument must be less or equal to 100",
            ),
            (
                "maxmemory-clients",
                "1.5%",
                "argument must be a memory or percent value",
            ),
            ("save", "100 x", "Invalid save parameters"),
            ("save", "0 1", "Invalid save parameters"),
            (
                "loglevel",
                "loud",
                "argument(s) must be one of the following: debug, verbose, notice, warning",
            ),
            (
                "timeout",
                "-1",
                "argument must be between 0 and 2147483647 inclusive",
            ),
            (
                "maxclients",
                "0",
                "argument must be between 1 and 4294967295 inclusive",
            ),
            (
                "notify-keyspace-events",
                "Q",
                "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.",
            ),
        ] {
            let err = set(&live, &[name, text]).unwrap_err();
            assert_eq!(
                err,
                format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {want}"),
                "{name} {text}"
            );
        }
        set(&live, &["save", "", "maxmemory", "0", "appendonly", "no"]).unwrap();
        set(&live, &["save", "3600  1 300 100"]).unwrap();
        assert_eq!(value(&live, "save"), "3600 1 300 100");
        // The eviction slots are process-wide (other tests' `Live::new`
        // resets them), so only the acceptance is checked here; the
        // black-box tests read them back.
        set(&live, &["maxmemory", "0", "maxmemory-clients", "10%"]).unwrap();
        set(&live, &["maxmemory-clients", "0"]).unwrap();
    }

    #[test]
    fn dir_and_dbfilename_are_protected_as_in_redis() {
        let live = Live::new();
        assert_eq!(
            set(&live, &["dbfilename", "x.rdb"]).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - can't set protected config"
        );
        live.set_directive("enable-protected-configs", "local")
            .unwrap();
        assert!(
            live.set_many(&[(b"dbfilename", b"x.rdb")]).is_err(),
            "not local"
        );
        live.set_many_as(&[(b"dbfilename", b"x.rdb")], true)
            .unwrap();
        assert_eq!(live.dbfilename(), "x.rdb");
        assert_eq!(
            live.set_many_as(&[(b"dbfilename", b"a/b")], true).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename"
        );
        assert_eq!(
            live.set_many_as(&[(b"dir", b"/no/such/dir")], true).unwrap_err(),
            "ERR CONFIG SET failed (possibly related to argument 'dir') - No such file or directory"
        );
    }

    #[test]
    fn hz_is_clamped_and_shards_zero_means_one_per_core() {
        let live = Live::new();
        set(&live, &["hz", "0"]).unwrap();
        assert_eq!(live.hz(), 1);
        set(&live, &["hz", "1000"]).unwrap();
        assert_eq!(live.hz(), 500);
        live.set_directive("shards", "3").unwrap();
        assert_eq!(live.shards(), 3);
        live.set_directive("shards", "0").unwrap();
        assert_eq!(live.shards(), Live::new().shards());
        assert_eq!(
            live.set_directive("shards", "1025").unwrap_err(),
            "argument must be between 0 and 1024 inclusive"
        );
    }

    #[test]
    fn directives_set_immutable_parameters_too() {
        let live = Live::new();
        live.set_directive("databases", "4").unwrap();
        live.set_directive("enable-debug-command", "local").unwrap();
        live.set_directive("port", "7000").unwrap();
        assert_eq!((live.databases(), live.port()), (4, 7000));
        assert_eq!(
            live.debug_command(),
            super::super::live::DebugCommand::Local
        );
        assert_eq!(live.set_directive("foo", "bar").unwrap_err(), BAD_DIRECTIVE);
        assert_eq!(
            live.set_directive("enable-debug-command", "maybe")
                .unwrap_err(),
            "argument(s) must be one of the following: no, yes, local"
        );
    }

    #[test]
    fn notify_events_are_kept_as_text_and_bits() {
        let live = Live::new();
        set(&live, &["notify-keyspace-events", "Ex"]).unwrap();
        assert_eq!(value(&live, "notify-keyspace-events"), "xE");
        assert_eq!(
            live.notify_flags(),
            super::super::events::EXPIRED | super::super::events::KEYEVENT
        );
    }
}
