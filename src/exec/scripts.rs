//! The server's Lua script cache, shared by every shard: SCRIPT LOAD or an
//! EVAL on any shard makes the body known to all of them (EVALSHA may come
//! in on any connection), while each shard compiles it lazily into its own
//! Lua state (`cmd::scripting::vm`), since a Lua state cannot move between
//! threads.
//!
//! SCRIPT FLUSH empties the map and bumps `generation`; a shard whose VM
//! was built under an older generation drops it before its next script, so
//! the compiled functions go too, as Redis's flush recreates its VM.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use std::time::Instant;

use bytes::Bytes;

/// A script's SHA1 in lowercase hex, as Redis names it.
pub type Sha = [u8; 40];

#[derive(Default)]
pub struct ScriptCache {
    bodies: RwLock<HashMap<Sha, Bytes>>,
    /// Bytes of the cached bodies (INFO `used_memory_scripts_eval`).
    bytes: AtomicU64,
    generation: AtomicU64,
    /// Set by SCRIPT KILL for the script running now (on any shard); the
    /// running script's hook reads it.
    pub kill: AtomicBool,
    /// How many scripts are running past `busy-reply-threshold` now.
    pub busy: AtomicU64,
    /// A busy script has written (SCRIPT KILL answers UNKILLABLE).
    pub busy_wrote: AtomicBool,
    /// The busy script is a function (FCALL): the BUSY texts name
    /// FUNCTION KILL, and SCRIPT KILL may not stop it.
    pub busy_function: AtomicBool,
    /// The busy script, for FUNCTION STATS (set when it turns busy).
    pub running: Mutex<Option<Running>>,
    /// Which scripts stay on their declared keys' shards
    /// (`cmd::scripting::widen`).
    pub reach: ScriptReach,
}

/// What a multi-shard server has learned of each script's keys
/// (`cmd::scripting::widen`): whether its runs stay on the shards of the
/// keys it declares (narrow) or reach past them (wide).
#[derive(Default)]
pub struct ScriptReach {
    /// Keys: `s` and the sha (lowercase), or `f` and the function's name
    /// (lowercase).
    narrow: RwLock<HashSet<Vec<u8>>>,
    wide: RwLock<HashSet<Vec<u8>>>,
}

/// See [`ScriptReach`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Known {
    /// Not run yet (since the server started, or SCRIPT FLUSH).
    Unknown,
    Narrow,
    Wide,
}

impl ScriptReach {
    /// Script `name` (its sha, or a `function`'s name) reached past its
    /// declared keys' shards.
    pub fn mark_wide(&self, function: bool, name: &str) {
        let key = key(function, name.as_bytes());
        if let Ok(mut narrow) = self.narrow.write() {
            narrow.remove(&key);
        }
        if let Ok(mut wide) = self.wide.write() {
            wide.insert(key);
        }
    }

    /// A whole run of script `name` stayed on its declared keys' shards.
    pub fn mark_narrow(&self, function: bool, name: &str) {
        let key = key(function, name.as_bytes());
        if self.wide.read().is_ok_and(|wide| wide.contains(&key)) {
            return;
        }
        if let Ok(mut narrow) = self.narrow.write() {
            narrow.insert(key);
        }
    }

    /// What is known of the script EVAL, EVALSHA or FCALL (or an `_RO`
    /// form) `argv` runs.
    pub fn known(&self, argv: &[Bytes]) -> Known {
        let (Some(command), Some(script)) = (argv.first(), argv.get(1)) else {
            return Known::Unknown;
        };
        let key = if command.len() >= 5 && command[..5].eq_ignore_ascii_case(b"fcall") {
            key(true, script)
        } else if command.len() >= 7 && command[..7].eq_ignore_ascii_case(b"evalsha") {
            key(false, script)
        } else {
            key(false, &sha1_hex(script))
        };
        if self.narrow.read().is_ok_and(|narrow| narrow.contains(&key)) {
            Known::Narrow
        } else if self.wide.read().is_ok_and(|wide| wide.contains(&key)) {
            Known::Wide
        } else {
            Known::Unknown
        }
    }

    /// SCRIPT FLUSH: the scripts are learned again (the functions' marks
    /// stay: a function reloaded under its name keeps its mark, which
    /// costs only speed).
    pub fn forget_scripts(&self) {
        for set in [&self.narrow, &self.wide] {
            if let Ok(mut set) = set.write() {
                set.retain(|key| key.first() == Some(&b'f'));
            }
        }
    }
}

fn key(function: bool, name: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(name.len() + 1);
    key.push(if function { b'f' } else { b's' });
    key.extend(name.iter().map(u8::to_ascii_lowercase));
    key
}

/// A script running past `busy-reply-threshold`, as FUNCTION STATS shows it.
#[derive(Clone, Debug)]
pub struct Running {
    /// The function's name, or the script's sha.
    pub name: String,
    /// The command that runs it, as sent.
    pub command: Vec<Bytes>,
    pub started: Instant,
}

impl ScriptCache {
    pub fn get(&self, sha: &Sha) -> Option<Bytes> {
        self.bodies.read().ok()?.get(sha).cloned()
    }

    pub fn contains(&self, sha: &Sha) -> bool {
        self.bodies.read().is_ok_and(|m| m.contains_key(sha))
    }

    pub fn insert(&self, sha: Sha, body: Bytes) {
        if let Ok(mut map) = self.bodies.write() {
            let len = body.len() as u64;
            if map.insert(sha, body).is_none() {
                self.bytes.fetch_add(len, Ordering::Relaxed);
            }
        }
    }

    /// SCRIPT FLUSH: forgets every script; shards rebuild their VMs.
    pub fn flush(&self) {
        if let Ok(mut map) = self.bodies.write() {
            map.clear();
            self.bytes.store(0, Ordering::Relaxed);
        }
        self.reach.forget_scripts();
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// Whether a script runs past `busy-reply-threshold` (other clients
    /// get BUSY).
    pub fn busy(&self) -> bool {
        self.busy.load(Ordering::Relaxed) > 0
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// (number of cached scripts, bytes of their bodies) for INFO.
    pub fn stats(&self) -> (usize, u64) {
        let n = self.bodies.read().map_or(0, |m| m.len());
        (n, self.bytes.load(Ordering::Relaxed))
    }

    /// What the cache holds (INFO `used_memory_scripts_eval`): the bodies
    /// and, per script, its map entry (the key, the `Bytes` handle and the
    /// map's control byte), as Redis counts its bodies and dict entries.
    pub fn memory(&self) -> u64 {
        let (n, bodies) = self.stats();
        bodies + (n * (std::mem::size_of::<(Sha, Bytes)>() + 1)) as u64
    }
}

/// A function a library registered (FUNCTION LIST shows these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: String,
    pub description: Option<String>,
    /// The flags as given (`no-writes`, `allow-oom`, ...).
    pub flags: Vec<String>,
}

impl FunctionInfo {
    pub fn no_writes(&self) -> bool {
        self.flags.iter().any(|f| f == "no-writes")
    }
}

/// A library of FUNCTION LOAD: its code (each shard's VM runs it to get
/// the callbacks) and what loading it registered.
#[derive(Clone, Debug)]
pub struct Library {
    pub name: String,
    pub code: Bytes,
    pub functions: Vec<FunctionInfo>,
}

/// How FUNCTION RESTORE treats the libraries already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    /// Refused when a library of the payload is there already.
    Append,
    /// Libraries of the payload replace those of the same name.
    Replace,
    /// Every library there goes first.
    Flush,
}

/// The server's function libraries, shared by every shard like the
/// script cache; `generation` moves at every change, and a shard's VM
/// whose libraries are older loads them all again before its next FCALL.
#[derive(Default)]
pub struct Libraries {
    libs: RwLock<std::collections::BTreeMap<String, Library>>,
    generation: AtomicU64,
}

impl Libraries {
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Every library, by name.
    pub fn all(&self) -> Vec<Library> {
        self.libs
            .read()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Names compare without case, as Redis's dictionaries of libraries
    /// and functions do.
    pub fn contains(&self, name: &str) -> bool {
        self.libs
            .read()
            .is_ok_and(|m| m.contains_key(&name.to_ascii_lowercase()))
    }

    /// The library holding function `name`, other than `except`.
    pub fn owner_of(&self, function: &str, except: &str) -> Option<String> {
        let libs = self.libs.read().ok()?;
        libs.values()
            .find(|l| {
                !l.name.eq_ignore_ascii_case(except)
                    && l.functions
                        .iter()
                        .any(|f| f.name.eq_ignore_ascii_case(function))
            })
            .map(|l| l.name.clone())
    }

    /// The function `name`: what it declared.
    pub fn function(&self, name: &str) -> Option<FunctionInfo> {
        let libs = self.libs.read().ok()?;
        libs.values()
            .flat_map(|l| l.functions.iter())
            .find(|f| f.name.eq_ignore_ascii_case(name))
            .cloned()
    }

    pub fn insert(&self, lib: Library) {
        if let Ok(mut m) = self.libs.write() {
            m.insert(lib.name.to_ascii_lowercase(), lib);
        }
        self.generation.fetch_add(1, Ordering::Release);
    }

    pub fn remove(&self, name: &str) -> bool {
        let removed = self
            .libs
            .write()
            .is_ok_and(|mut m| m.remove(name).is_some());
        if removed {
            self.generation.fetch_add(1, Ordering::Release);
        }
        removed
    }

    pub fn flush(&self) {
        if let Ok(mut m) = self.libs.write() {
            m.clear();
        }
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// What the registry holds (INFO `used_memory_functions`): each
    /// library's name, code and entry, and its functions' names,
    /// descriptions and flags.
    pub fn memory(&self) -> u64 {
        self.libs.read().map_or(0, |m| {
            m.iter()
                .map(|(key, lib)| {
                    let functions: usize = lib
                        .functions
                        .iter()
                        .map(|f| {
                            std::mem::size_of::<FunctionInfo>()
                                + f.name.len()
                                + f.description.as_ref().map_or(0, |d| d.len())
                                + f.flags.iter().map(|g| g.len() + 24).sum::<usize>()
                        })
                        .sum();
                    (key.len()
                        + std::mem::size_of::<Library>()
                        + lib.name.len()
                        + lib.code.len()
                        + functions) as u64
                })
                .sum()
        })
    }

    /// FUNCTION RESTORE's join of `new` (libraries loaded from a payload,
    /// names distinct) into the registry, under one lock so no FUNCTION
    /// LOAD of another shard comes between the checks and the change.
    /// Err: the reason, in Redis 7.0.15's words (without `ERR `).
    pub fn restore(&self, new: Vec<Library>, policy: RestorePolicy) -> Result<(), String> {
        let Ok(mut libs) = self.libs.write() else {
            return Err("the function registry is not available".into());
        };
        let mut joined = if policy == RestorePolicy::Flush {
            Default::default()
        } else {
            libs.clone()
        };
        for lib in &new {
            let key = lib.name.to_ascii_lowercase();
            if joined.contains_key(&key) && policy == RestorePolicy::Append {
                return Err(format!("Library {} already exists", lib.name));
            }
            joined.remove(&key);
        }
        for lib in &new {
            for f in &lib.functions {
                let taken = joined.values().any(|old| {
                    old.functions
                        .iter()
                        .any(|g| g.name.eq_ignore_ascii_case(&f.name))
                });
                if taken {
                    return Err(format!("Function {} already exists", f.name));
                }
            }
        }
        for lib in new {
            joined.insert(lib.name.to_ascii_lowercase(), lib);
        }
        *libs = joined;
        drop(libs);
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// (libraries, functions) for FUNCTION STATS.
    pub fn counts(&self) -> (usize, usize) {
        self.libs.read().map_or((0, 0), |m| {
            (m.len(), m.values().map(|l| l.functions.len()).sum())
        })
    }
}

/// The SHA1 of `body` in lowercase hex.
pub fn sha1_hex(body: &[u8]) -> Sha {
    let digest = sha1_smol::Sha1::from(body).digest().bytes();
    let mut out = [0u8; 40];
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for (i, b) in digest.iter().enumerate() {
        out[2 * i] = HEX[(b >> 4) as usize];
        out[2 * i + 1] = HEX[(b & 15) as usize];
    }
    out
}

/// `text` as a cache key: 40 hex digits, any case (EVALSHA and SCRIPT
/// EXISTS take either, as Redis does).
pub fn parse_sha(text: &[u8]) -> Option<Sha> {
    if text.len() != 40 || !text.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 40];
    for (o, c) in out.iter_mut().zip(text) {
        *o = c.to_ascii_lowercase();
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::util::test_argv as argv;

    #[test]
    fn a_script_is_known_by_its_sha_from_eval_and_evalsha() {
        let reach = ScriptReach::default();
        let body = "return redis.call('GET', 'elsewhere')";
        let eval = argv(&["EVAL", body, "1", "k"]);
        assert_eq!(reach.known(&eval), Known::Unknown);
        let sha = String::from_utf8_lossy(&sha1_hex(body.as_bytes())).into_owned();
        reach.mark_narrow(false, &sha);
        assert_eq!(reach.known(&eval), Known::Narrow);
        reach.mark_wide(false, &sha);
        assert_eq!(reach.known(&eval), Known::Wide);
        // Wide for good: a later narrow run does not undo it.
        reach.mark_narrow(false, &sha);
        let evalsha = argv(&["evalsha_ro", &sha.to_uppercase(), "1", "k"]);
        assert_eq!(reach.known(&evalsha), Known::Wide);
        assert_eq!(
            reach.known(&argv(&["EVAL", "return 1", "1", "k"])),
            Known::Unknown
        );
        // A function of the same name is another thing.
        assert_eq!(
            reach.known(&argv(&["FCALL", &sha, "1", "k"])),
            Known::Unknown
        );
    }

    #[test]
    fn a_function_is_known_by_its_name_in_any_case_and_outlives_script_flush() {
        let reach = ScriptReach::default();
        reach.mark_wide(true, "Mover");
        reach.mark_narrow(false, "ab");
        assert_eq!(
            reach.known(&argv(&["FCALL", "mover", "1", "k"])),
            Known::Wide
        );
        assert_eq!(reach.known(&argv(&["fcall_ro", "MOVER", "0"])), Known::Wide);
        assert_eq!(
            reach.known(&argv(&["FCALL", "other", "1", "k"])),
            Known::Unknown
        );
        reach.forget_scripts();
        assert_eq!(reach.known(&argv(&["EVALSHA", "ab", "0"])), Known::Unknown);
        assert_eq!(
            reach.known(&argv(&["FCALL", "mover", "1", "k"])),
            Known::Wide
        );
    }

    #[test]
    fn sha_of_empty_body_is_sha1s() {
        assert_eq!(&sha1_hex(b""), b"da39a3ee5e6b4b0d3255bfef95601890afd80709");
    }

    #[test]
    fn parse_sha_takes_any_case_and_only_40_hex_digits() {
        let upper = b"DA39A3EE5E6B4B0D3255BFEF95601890AFD80709";
        assert_eq!(parse_sha(upper), Some(sha1_hex(b"")));
        assert_eq!(parse_sha(b"abc"), None);
        assert_eq!(parse_sha(&[b'g'; 40]), None);
    }

    #[test]
    fn flush_forgets_and_moves_the_generation() {
        let cache = ScriptCache::default();
        let sha = sha1_hex(b"return 1");
        cache.insert(sha, Bytes::from_static(b"return 1"));
        assert!(cache.contains(&sha));
        let before = cache.generation();
        cache.flush();
        assert!(!cache.contains(&sha));
        assert!(cache.generation() > before);
        assert_eq!(cache.stats(), (0, 0));
    }
}
