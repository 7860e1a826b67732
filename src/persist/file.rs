//! A whole RDB file: the header and AUX fields, the databases with their
//! keys, the EOF marker and the CRC-64 footer, both ways. The values inside
//! are `store::rdb`'s codec (the one DUMP/RESTORE use).
//!
//! # Layout (version 10, as redis-server 7.0 writes it)
//!
//! ```text
//!   "REDIS0010"
//!   AUX redis-ver 7.0.15, AUX redis-bits 64, AUX ctime <s>, AUX used-mem <bytes>, AUX aof-base 0
//!   per function library:  FUNCTION2 <code>
//!   per database with keys:  SELECTDB <n>  RESIZEDB <keys> <volatile keys>
//!     per key:  [EXPIRETIME_MS <u64 LE>] <type> <key> <value body>
//!   EOF  <CRC-64 of everything before it, u64 LE; 0 with rdbchecksum no>
//! ```
//!
//! # Reading untrusted files
//!
//! A file may be torn (a crash while another program wrote it), cut short
//! or hostile. [`load`] never panics: every read is bounded by the bytes
//! left (`store::rdb::reader`), every loop consumes input, and what it
//! refuses it names in a [`LoadError`] (the caller logs it and refuses to
//! start, as redis-server does). Keys are handed to the caller one at a
//! time, so a file whose checksum turns out wrong at the end has still been
//! decoded: the caller throws its stores away then.

use crate::store::rdb::reader::Reader;
use crate::store::rdb::writer::{put_len, put_string};
use crate::store::rdb::{crc64, decode_value, functions, Limits, RDB_VERSION_7_0};
use crate::store::Value;

/// The newest version read: Redis 7.4's (hash-field TTLs).
pub const NEWEST_READ: u16 = 12;
/// The oldest version read: as redis-server, every one from 1 (the value
/// codec reads the old encodings: zipmaps, ziplists, text scores); files
/// before version 5 end without a checksum.
pub const OLDEST_READ: u16 = 1;
/// The first version whose files end with a CRC-64.
const CHECKSUM_SINCE: u16 = 5;

/// What redis-server puts in `redis-ver`: the version whose file format
/// (and whose type encodings) ember writes.
pub const REDIS_VER: &str = "7.0.15";

/// Opcodes: bytes that start a record which is not a key.
pub mod op {
    pub const FUNCTION2: u8 = 245;
    pub const FUNCTION_PRE_GA: u8 = 246;
    pub const MODULE_AUX: u8 = 247;
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

pub use crate::store::snapshot::{put_key, DbPart};

/// What the header's AUX fields say besides the version.
pub struct Aux {
    /// `ctime`: Unix seconds of the save.
    pub ctime_s: u64,
    /// `used-mem`: the server's allocated bytes at the save.
    pub used_mem: u64,
    /// `aof-base`: 1 in the base of an append-only file, as Redis marks it.
    pub aof_base: bool,
    /// `repl-stream-db`, `repl-id`, `repl-offset`: the replication
    /// history the file stands at, written as Redis writes them when it
    /// has one, so a restarted master continues with its replicas.
    pub repl: Option<(usize, String, u64)>,
}

/// The header: magic, version and AUX fields, in redis-server 7.0's order.
pub fn put_header(out: &mut Vec<u8>, version: u16, aux: &Aux) {
    out.extend_from_slice(format!("REDIS{version:04}").as_bytes());
    let mut field = |name: &str, value: &str| {
        out.push(op::AUX);
        put_string(out, name.as_bytes());
        put_string(out, value.as_bytes());
    };
    field("redis-ver", REDIS_VER);
    field("redis-bits", "64");
    field("ctime", &aux.ctime_s.to_string());
    field("used-mem", &aux.used_mem.to_string());
    if let Some((db, id, offset)) = &aux.repl {
        field("repl-stream-db", &db.to_string());
        field("repl-id", id);
        field("repl-offset", &offset.to_string());
    }
    field("aof-base", if aux.aof_base { "1" } else { "0" });
}

/// SELECTDB and RESIZEDB before a database's keys.
pub fn put_db_start(out: &mut Vec<u8>, db: usize, keys: u64, expires: u64) {
    out.push(op::SELECTDB);
    put_len(out, db as u64);
    out.push(op::RESIZEDB);
    put_len(out, keys);
    put_len(out, expires);
}

/// EOF and the checksum of everything before it (`crc` so far, updated with
/// the EOF byte); 0 when `checksum` is off, as `rdbchecksum no` writes.
pub fn put_eof(out: &mut Vec<u8>, crc: u64, checksum: bool) {
    out.push(op::EOF);
    let crc = crc64::crc64(crc, &[op::EOF]);
    let footer = if checksum { crc } else { 0 };
    out.extend_from_slice(&footer.to_le_bytes());
}

/// A whole file in memory from every database's part (index = database),
/// with the function libraries whose code is `libraries` before the
/// databases, as Redis 7.0 writes them.
pub fn build(
    parts: &[DbPart],
    libraries: &[&[u8]],
    aux: &Aux,
    checksum: bool,
    version: u16,
) -> Vec<u8> {
    let body: usize = parts.iter().map(|p| p.len() + 16).sum();
    let code: usize = libraries.iter().map(|c| c.len() + 8).sum();
    let mut out = Vec::with_capacity(body + code + 128);
    put_header(&mut out, version.max(RDB_VERSION_7_0), aux);
    for library in libraries {
        functions::put_library(&mut out, library);
    }
    for (db, part) in parts.iter().enumerate() {
        if part.keys == 0 {
            continue;
        }
        put_db_start(&mut out, db, part.keys, part.expires);
        for chunk in part.chunks() {
            out.extend_from_slice(chunk);
        }
    }
    let crc = if checksum { crc64::crc64(0, &out) } else { 0 };
    let mut tail = Vec::with_capacity(9);
    put_eof(&mut tail, crc, checksum);
    out.extend_from_slice(&tail);
    out
}

/// Why a file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadError {
    #[error("Wrong signature trying to load DB from file")]
    Signature,
    #[error("Can't handle RDB format version {0}")]
    Version(u16),
    #[error("Short read or OOM loading DB. Unrecoverable error, aborting now.")]
    Truncated,
    #[error("Wrong RDB checksum expected: ({computed:x}) got ({stored:x}). Aborting now.")]
    Checksum { computed: u64, stored: u64 },
    #[error("FATAL: Data file was created with a Redis server configured to handle more than {0} databases. Exiting")]
    Databases(usize),
    #[error("Bad data in the RDB file at offset {offset}: {what}")]
    Corrupt { offset: usize, what: String },
}

/// What a load found, for the log lines and INFO.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub version: u16,
    pub keys_loaded: u64,
    pub keys_expired: u64,
    /// `redis-ver`, `ctime`, `used-mem` and the rest, as written.
    pub aux: Vec<(String, String)>,
    /// The code of each function library, in the file's order.
    pub libraries: Vec<Vec<u8>>,
    /// Bytes the RDB data took, its checksum included: what follows in
    /// an append-only file with an RDB preamble are commands.
    pub size: usize,
}

impl Loaded {
    pub fn aux(&self, name: &str) -> Option<&str> {
        self.aux
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Options of a load.
pub struct LoadOptions {
    pub databases: usize,
    /// Unix ms: a master skips keys whose deadline is before it.
    pub now_ms: u64,
    /// A master drops expired keys (the seeds' rule); a replica keeps them.
    pub master: bool,
    pub limits: Limits,
}

/// The AUX fields at the head of `file` (before its first other record),
/// which a loader shows before it has read the rest (INFO's
/// `loading_rdb_used_mem` from `used-mem`). Nothing is checked here.
pub fn head_aux(file: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(rest) = file.get(9..) else {
        return out;
    };
    let mut r = Reader::new(rest);
    while r.u8() == Ok(op::AUX) {
        match (r.string(), r.string()) {
            (Ok(name), Ok(value)) => out.push((
                String::from_utf8_lossy(&name).into_owned(),
                String::from_utf8_lossy(&value).into_owned(),
            )),
            _ => break,
        }
    }
    out
}

/// Decodes `file`, giving each live key to `sink(db, key, value, deadline)`.
pub fn load(
    file: &[u8],
    opts: &LoadOptions,
    mut sink: impl FnMut(usize, &[u8], Value, Option<u64>),
) -> Result<Loaded, LoadError> {
    load_at(file, opts, |db, key, value, deadline, _| {
        sink(db, key, value, deadline)
    })
}

/// [`load`], telling `sink` also how many bytes of the file are read once
/// the key is (the start-up load's `loading_loaded_bytes`).
pub fn load_at(
    file: &[u8],
    opts: &LoadOptions,
    mut sink: impl FnMut(usize, &[u8], Value, Option<u64>, usize),
) -> Result<Loaded, LoadError> {
    if file.len() < 9 || &file[..5] != b"REDIS" {
        return Err(LoadError::Signature);
    }
    let version = std::str::from_utf8(&file[5..9])
        .ok()
        .and_then(|v| v.parse::<u16>().ok())
        .ok_or(LoadError::Signature)?;
    if !(OLDEST_READ..=NEWEST_READ).contains(&version) {
        return Err(LoadError::Version(version));
    }
    let mut r = Reader::new(&file[9..]);
    let offset = |r: &Reader| file.len() - r.remaining();
    let corrupt = |r: &Reader, what: &str| LoadError::Corrupt {
        offset: file.len() - r.remaining(),
        what: what.to_string(),
    };
    let cut = |e: crate::store::rdb::BadData| {
        if e.0 == "truncated" {
            LoadError::Truncated
        } else {
            LoadError::Corrupt {
                offset: 0,
                what: e.0.to_string(),
            }
        }
    };
    let mut loaded = Loaded {
        version,
        ..Loaded::default()
    };
    let mut db = 0usize;
    let mut expire_at: Option<u64> = None;
    loop {
        let kind = r.u8().map_err(cut)?;
        match kind {
            op::EOF => break,
            op::SELECTDB => {
                let n = r.length().map_err(cut)?;
                if n >= opts.databases as u64 {
                    return Err(LoadError::Databases(opts.databases));
                }
                db = n as usize;
            }
            op::RESIZEDB => {
                r.length().map_err(cut)?;
                r.length().map_err(cut)?;
            }
            op::AUX => {
                let name = r.string().map_err(cut)?;
                let value = r.string().map_err(cut)?;
                loaded.aux.push((
                    String::from_utf8_lossy(&name).into_owned(),
                    String::from_utf8_lossy(&value).into_owned(),
                ));
            }
            op::EXPIRETIME_MS => expire_at = Some(r.millis().map_err(cut)?),
            op::EXPIRETIME => {
                let s = u32::from_le_bytes(r.take(4).map_err(cut)?.try_into().unwrap_or([0; 4]));
                expire_at = Some(u64::from(s) * 1000);
            }
            op::IDLE => {
                r.length().map_err(cut)?;
            }
            op::FREQ => {
                r.u8().map_err(cut)?;
            }
            op::FUNCTION2 => {
                // A function library (Redis 7.0): its code, which the
                // caller loads (this layer runs no Lua).
                let code = functions::read_library(&mut r).map_err(|_| LoadError::Truncated)?;
                loaded.libraries.push(code);
            }
            op::MODULE_AUX | op::FUNCTION_PRE_GA => {
                return Err(corrupt(
                    &r,
                    "module or pre-GA function data ember cannot read",
                ));
            }
            kind => {
                let at = offset(&r);
                let key = r.string().map_err(cut)?.into_owned();
                let value = decode_value(kind, &mut r, &opts.limits).map_err(|e| {
                    if e.0 == "truncated" {
                        LoadError::Truncated
                    } else {
                        LoadError::Corrupt {
                            offset: at,
                            what: e.0.to_string(),
                        }
                    }
                })?;
                let deadline = expire_at.take();
                let expired = deadline.is_some_and(|t| t < opts.now_ms)
                    || matches!(&value, Value::Hash(h) if h.all_expired(opts.now_ms));
                if opts.master && expired {
                    loaded.keys_expired += 1;
                    continue;
                }
                let mut value = value;
                if let Value::Hash(h) = &mut value {
                    if opts.master && h.may_have_expired(opts.now_ms) {
                        h.remove_expired(opts.now_ms);
                    }
                }
                loaded.keys_loaded += 1;
                sink(db, &key, value, deadline, offset(&r));
            }
        }
    }
    // Versions 5 on end with the checksum; 0 means it was not computed.
    if version < CHECKSUM_SINCE {
        loaded.size = offset(&r);
        return Ok(loaded);
    }
    let end = offset(&r);
    let stored = u64::from_le_bytes(r.take(8).map_err(cut)?.try_into().unwrap_or([0; 8]));
    if stored != 0 {
        let got = crc64::crc64(0, &file[..end]);
        if got != stored {
            return Err(LoadError::Checksum {
                computed: got,
                stored,
            });
        }
    }
    loaded.size = end + 8;
    Ok(loaded)
}

#[cfg(test)]
mod tests;
