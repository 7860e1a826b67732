//! Persistence around the shards: the start-up load of `dir/dbfilename`
//! into the running shards (`shard::loading` streams the keys to their
//! shards; other clients get `-LOADING` meanwhile), with redis-server's
//! log lines, and the thread that checks the `save` rules.

use std::sync::atomic::Ordering::Relaxed;

use crate::exec::Shared;

use super::StartError;

/// `path` (`dir/dbfilename`) into the shards, which already run.
pub(super) fn load_rdb(shared: &Shared, path: &std::path::Path) -> Result<(), StartError> {
    let bytes = std::fs::read(path).map_err(|e| StartError::Load(e.to_string()))?;
    let started = std::time::Instant::now();
    let aof = &shared.aof;
    aof.loading_total.store(bytes.len() as u64, Relaxed);
    let head = crate::persist::file::head_aux(&bytes);
    let aux_of = |name: &str| {
        head.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(mem) = aux_of("used-mem").and_then(|m| m.parse::<u64>().ok()) {
        aof.loading_used_mem.store(mem, Relaxed);
    }
    let opts = crate::cmd::save::load_options(shared, true);
    let mut keys = super::loading::Keys::new(shared);
    let loaded = crate::persist::file::load_at(&bytes, &opts, |db, key, value, at, read| {
        keys.put(db, key, value, at);
        aof.loading_done.store(read as u64, Relaxed);
    });
    let mut loaded = loaded.map_err(|e| {
        log::warn!("{e}");
        if matches!(e, crate::persist::LoadError::Checksum { .. }) {
            // Redis's second line for it, which its tests look for.
            log::warn!(
                "Internal error in RDB reading offset 0, function at rdb.c:0 -> RDB CRC error"
            );
        }
        StartError::Load(e.to_string())
    })?;
    keys.finish();
    aof.loading_done.store(bytes.len() as u64, Relaxed);
    restore_libraries(shared, &mut loaded)?;
    crate::cmd::replication::restore_info(shared, loaded.aux("repl-id"), loaded.aux("repl-offset"));
    let ver = loaded.aux("redis-ver").unwrap_or("unknown");
    log::info!("Loading RDB produced by version {ver}");
    if let Some(ctime) = loaded.aux("ctime").and_then(|c| c.parse::<u64>().ok()) {
        let age = (opts.now_ms / 1000).saturating_sub(ctime);
        log::info!("RDB age {age} seconds");
    }
    if let Some(mem) = loaded.aux("used-mem").and_then(|m| m.parse::<u64>().ok()) {
        log::info!(
            "RDB memory usage when created {:.2} Mb",
            mem as f64 / (1024.0 * 1024.0)
        );
    }
    log::info!(
        "Done loading RDB, keys loaded: {}, keys expired: {}.",
        loaded.keys_loaded,
        loaded.keys_expired
    );
    log::info!(
        "DB loaded from disk: {:.3} seconds",
        started.elapsed().as_secs_f64()
    );
    shared.persist.update(|s| {
        s.last_load_keys_loaded = loaded.keys_loaded;
        s.last_load_keys_expired = loaded.keys_expired;
    });
    Ok(())
}

/// The file's function libraries, run once here to learn what they
/// register; each shard's VM loads them again before its first FCALL.
pub(super) fn restore_libraries(
    shared: &Shared,
    loaded: &mut crate::persist::Loaded,
) -> Result<(), StartError> {
    if loaded.libraries.is_empty() {
        return Ok(());
    }
    let generation = shared.scripts.generation();
    let libraries = std::mem::take(&mut loaded.libraries);
    crate::cmd::scripting::functions::libraries_of(generation, libraries)
        .and_then(|libs| {
            shared
                .libraries
                .restore(libs, crate::exec::scripts::RestorePolicy::Flush)
                .map_err(|e| format!("ERR {e}"))
        })
        .map_err(|e| {
            log::warn!("Failed loading library from the RDB file: {e}");
            StartError::Load(e)
        })?;
    Ok(())
}

/// How long the save rules wait for BGSAVE's answer.
const ASK_WAIT: Option<std::time::Duration> = Some(std::time::Duration::from_secs(10));

/// How often the `save` rules are checked (Redis checks them in its
/// `serverCron`, at `hz`; a second is as precise as the rules are).
const RULES_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Starts the thread that checks the `save` rules over every shard's
/// change counter and starts a BGSAVE when one is met. It asks the way a
/// client does, over a loopback connection, so the save starts at one
/// point of the key-lock order like any BGSAVE (jobs belong to
/// connections); the connection lives for that one command.
pub fn start_rules(shared: std::sync::Arc<Shared>, addr: String) {
    let spawned = std::thread::Builder::new()
        .name("ember-save-rules".into())
        .spawn(move || loop {
            std::thread::sleep(RULES_EVERY);
            // The append-only file's automatic (or scheduled) rewrite.
            if crate::cmd::aof::rewrite_due(&shared) {
                ask(
                    &addr,
                    &shared.config.requirepass(),
                    &["BGREWRITEAOF"],
                    ASK_WAIT,
                );
                continue;
            }
            if shared
                .aof
                .rewriting
                .load(std::sync::atomic::Ordering::Relaxed)
            {
                continue;
            }
            let rules = crate::persist::state::parse_rules(&shared.config.save_text());
            if rules.is_empty()
                || shared
                    .persist
                    .bgsave_in_progress
                    .load(std::sync::atomic::Ordering::Relaxed)
            {
                continue;
            }
            let status = shared.persist.status();
            let changes = shared
                .persist
                .changes_now()
                .wrapping_sub(status.changes_at_save);
            let now_s = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            if !crate::persist::state::rule_due(&rules, &status, changes, now_s) {
                continue;
            }
            if let Some((secs, need)) = rules.iter().find(|&&(secs, need)| {
                changes >= need && now_s.saturating_sub(status.last_save_s) > secs
            }) {
                log::info!("{need} changes in {secs} seconds. Saving...");
            }
            ask(&addr, &shared.config.requirepass(), &["BGSAVE"], ASK_WAIT);
        });
    if let Err(e) = spawned {
        log::warn!("could not start the save rules thread: {e}");
    }
}

/// Sends `command` (BGSAVE, BGREWRITEAOF; SHUTDOWN from the signal
/// thread) to this server and returns the start of its answer (empty when
/// the server closed the connection first), or `None` when it cannot be
/// reached. Logs in as the default user first when it has a password
/// (`requirepass`). A default user restricted by other ACL rules cannot
/// start the work this way: it then needs the command from a client.
/// `wait` bounds the wait for the answer (`None`: until it comes).
pub(super) fn ask(
    addr: &str,
    password: &str,
    command: &[&str],
    wait: Option<std::time::Duration>,
) -> Option<String> {
    use std::io::{Read, Write};
    let Ok(mut conn) = std::net::TcpStream::connect(addr) else {
        log::warn!("cannot reach {addr} to send {}", command.join(" "));
        return None;
    };
    let _ = conn.set_read_timeout(wait);
    let wire = |words: &[&str]| {
        let argv: Vec<bytes::Bytes> = words
            .iter()
            .map(|w| bytes::Bytes::copy_from_slice(w.as_bytes()))
            .collect();
        let mut out = Vec::new();
        crate::exec::feed::write_command(&mut out, &argv);
        out
    };
    let mut answer = [0u8; 128];
    if !password.is_empty() {
        let _ = conn.write_all(&wire(&["AUTH", password]));
        let _ = conn.read(&mut answer);
    }
    let _ = conn.write_all(&wire(command));
    let n = conn.read(&mut answer).unwrap_or(0);
    Some(String::from_utf8_lossy(&answer[..n]).into_owned())
}
