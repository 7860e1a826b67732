//! The start-up load of the append-only file, as Redis 7.0 loads it, on
//! the load's thread while the shards run (`shard::loading`; every other
//! client gets `-LOADING`, INFO `loading:1`).
//!
//! 1. The manifest is read (a legacy single file is upgraded, none at all
//!    makes a new empty base and incr file); the base, an RDB file (or an
//!    AOF whose RDB preamble comes first), goes into the shards as a
//!    `dbfilename` load does, expired keys skipped; every file's commands
//!    are read and checked ([`commands::scan`]): a torn end of the last
//!    file is cut off under `aof-load-truncated yes`, anything else wrong
//!    stops the start with Redis's message.
//! 2. The commands go through a loopback connection like any client's, so
//!    each runs on its keys' shard and a MULTI/EXEC in the file runs as
//!    one transaction; the loader's connection passes the LOADING gate,
//!    the ACL and the memory checks, as Redis's AOF client does.
//! 3. Then the writer appends to the last incr file and loading ends.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;

use crate::exec::Shared;
use crate::persist::aof::{self, Found, Manifest};

use super::StartError;

/// Commands of the AOF's files to replay once the base is in.
struct Replay {
    /// Each file's name and its commands as clean RESP.
    files: Vec<(String, Vec<u8>)>,
    started: std::time::Instant,
}

fn fatal(lines: &[String]) -> StartError {
    let (last, before) = lines
        .split_last()
        .map_or(("", &[][..]), |(l, b)| (l.as_str(), b));
    for line in before {
        log::warn!("{line}");
    }
    StartError::Aof(last.to_string())
}

/// The whole load (see the module doc); `addr` is this server.
pub(super) fn load(shared: &std::sync::Arc<Shared>, addr: &str) -> Result<(), StartError> {
    let replay = read(shared)?;
    send_all(shared, addr, &replay).map_err(|e| {
        StartError::Aof(format!(
            "Fatal error replaying the append only file through {addr}: {e}"
        ))
    })?;
    crate::cmd::aof::attach_at_start(shared)
        .map_err(|e| StartError::Aof(format!("Can't open the append-only file: {e}")))?;
    log::info!(
        "DB loaded from append only file: {:.3} seconds",
        replay.started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Step 1 (see the module doc): the base into the shards, the commands
/// read and checked.
fn read(shared: &Shared) -> Result<Replay, StartError> {
    let config = &shared.config;
    let started = std::time::Instant::now();
    let root = std::path::PathBuf::from(config.dir());
    let dirname = config.appenddirname();
    let prefix = config.appendfilename();
    let dir = root.join(&dirname);
    let found = aof::find(&root, &dirname, &prefix).map_err(|lines| fatal(&lines))?;
    let manifest = match found {
        Found::Manifest(m) if !m.is_empty() => m,
        _ => {
            let m = create_new(shared, &dir, &prefix)?;
            set_state(shared, m, &dir, &prefix);
            return Ok(Replay {
                files: Vec::new(),
                started,
            });
        }
    };
    let opts = crate::cmd::save::load_options(shared, true);
    let total: u64 = manifest
        .to_load()
        .filter_map(|e| std::fs::metadata(dir.join(&e.name)).ok())
        .map(|m| m.len())
        .sum();
    shared.aof.loading_total.store(total, Relaxed);
    let mut keys = super::loading::Keys::new(shared);
    let read = aof::read_files(
        &dir,
        &manifest,
        &opts,
        config.aof_load_truncated(),
        |name| crate::cmd::lookup(name).is_some(),
        |db, key, value, deadline| keys.put(db, key, value, deadline),
    )
    .map_err(|lines| fatal(&lines))?;
    keys.finish();
    let mut loaded = crate::persist::Loaded {
        libraries: read.libraries,
        ..Default::default()
    };
    super::persist::restore_libraries(shared, &mut loaded)?;
    shared.persist.update(|s| {
        s.last_load_keys_loaded = read.keys_loaded;
        s.last_load_keys_expired = read.keys_expired;
    });
    let files = read.commands;
    // What is left to load are the commands (their bytes as replayed).
    let total = total.max(read.command_bytes);
    shared.aof.loading_total.store(total, Relaxed);
    shared
        .aof
        .loading_done
        .store(total - read.command_bytes, Relaxed);
    set_state(shared, manifest, &dir, &prefix);
    Ok(Replay { files, started })
}

/// No AOF yet: an empty base and the first incr file, as Redis makes them
/// when `appendonly yes` finds none.
fn create_new(shared: &Shared, dir: &Path, prefix: &str) -> Result<Manifest, StartError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        fatal(&[format!(
            "Can't open or create append-only dir {}: {e}",
            dir.display()
        )])
    })?;
    let mut m = Manifest::default();
    let base = m.new_base(prefix, shared.config.aof_use_rdb_preamble());
    let bytes = if shared.config.aof_use_rdb_preamble() {
        let aux = crate::persist::file::Aux {
            ctime_s: crate::shard::worker::unix_ms() / 1000,
            used_mem: crate::util::memory::memory_stats().allocated,
            aof_base: true,
            repl: None,
        };
        crate::persist::file::build(
            &[],
            &[],
            &aux,
            shared.config.rdbchecksum(),
            crate::store::rdb::RDB_VERSION_7_0,
        )
    } else {
        Vec::new()
    };
    let temp = format!("temp-rewriteaof-{}.aof", std::process::id());
    let incr = m.new_incr(prefix);
    let written = aof::write_atomically(dir, &temp, &base, &bytes, false, None)
        .and_then(|()| aof::open_append(&dir.join(&incr)).map(drop))
        .and_then(|()| aof::persist_manifest(dir, prefix, &m));
    written.map_err(|e| {
        fatal(&[format!(
            "Can't create the append-only files in {}: {e}",
            dir.display()
        )])
    })?;
    Ok(m)
}

fn set_state(shared: &Shared, manifest: Manifest, dir: &Path, prefix: &str) {
    let mut st = shared.aof.state();
    st.manifest = manifest;
    st.dir = dir.to_path_buf();
    st.prefix = prefix.to_string();
}

/// How much of the replay is written before looking at the clock.
const CHUNK: usize = 256 * 1024;

fn send_all(shared: &Shared, addr: &str, replay: &Replay) -> std::io::Result<()> {
    if replay.files.is_empty() {
        return Ok(());
    }
    let mut conn = connect(addr)?;
    let me = conn.local_addr()?.to_string();
    if let Ok(mut slot) = shared.aof.loader_addr.lock() {
        *slot = me;
    }
    // The end of the replies: the answer to an ECHO of a token no file
    // holds, read by a thread of its own so that neither side waits on
    // a full socket buffer.
    let token = format!("ember-aof-loaded-{:016x}", crate::shard::worker::unix_ms());
    let marker = format!("${}\r\n{token}\r\n", token.len()).into_bytes();
    let mut replies = conn.try_clone()?;
    let reader = std::thread::Builder::new()
        .name("ember-aof-replies".into())
        .spawn(move || -> std::io::Result<()> {
            let mut buf = vec![0u8; 64 * 1024];
            let mut tail: Vec<u8> = Vec::new();
            loop {
                let n = replies.read(&mut buf)?;
                if n == 0 {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
                if log::log_enabled!(log::Level::Debug) {
                    log::debug!(
                        "AOF replay replies: {}",
                        String::from_utf8_lossy(&buf[..n.min(2000)])
                    );
                }
                tail.extend_from_slice(&buf[..n]);
                if tail.windows(marker.len()).any(|w| w == marker.as_slice()) {
                    return Ok(());
                }
                let keep = marker.len().min(tail.len());
                tail.drain(..tail.len() - keep);
            }
        })?;
    for (name, resp) in &replay.files {
        let started = std::time::Instant::now();
        for chunk in resp.chunks(CHUNK) {
            conn.write_all(chunk)?;
            shared
                .aof
                .loading_done
                .fetch_add(chunk.len() as u64, Relaxed);
        }
        log::info!(
            "DB loaded from incr file {name}: {:.3} seconds",
            started.elapsed().as_secs_f64()
        );
    }
    let echo = format!("*2\r\n$4\r\nECHO\r\n${}\r\n{token}\r\n", token.len());
    conn.write_all(echo.as_bytes())?;
    match reader.join() {
        Ok(result) => result,
        Err(_) => Err(std::io::Error::other("the reply reader failed")),
    }
}

/// Connects to this server, waiting a moment for its shards to start.
fn connect(addr: &str) -> std::io::Result<std::net::TcpStream> {
    let mut last = None;
    for _ in 0..50 {
        match std::net::TcpStream::connect(addr) {
            Ok(c) => {
                let _ = c.set_nodelay(true);
                return Ok(c);
            }
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(last.unwrap_or_else(|| std::io::ErrorKind::TimedOut.into()))
}
