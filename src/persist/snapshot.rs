//! One shard's part of a snapshot: every live key of every database,
//! serialized as RDB key records (`file::DbPart`).

use super::file::DbPart;
use crate::store::rdb::writer::without_compression;
use crate::store::rdb::RDB_VERSION_7_0;
use crate::store::{Store, Value};

/// A shard's databases, serialized, with what the save needs to know.
#[derive(Debug, Default)]
pub struct Part {
    /// Index = database.
    pub dbs: Vec<DbPart>,
    /// The newest RDB version a value needed (12 with hash-field TTLs).
    pub version: u16,
    /// The shard's change counter when it was taken
    /// (`rdb_changes_since_last_save` counts from there).
    pub changes: u64,
}

/// Whether a key is still there at `now_ms`: the seeds' rule is that keys
/// already expired are not written.
pub fn is_live(value: &Value, expire_at: Option<u64>, now_ms: u64) -> bool {
    expire_at.is_none_or(|at| now_ms <= at)
        && !matches!(value, Value::Hash(h) if h.all_expired(now_ms))
}

/// Serializes every live key of `store` as of `now_ms`, at once (SAVE,
/// SHUTDOWN, DEBUG RELOAD; the shard is stopped meanwhile, as Redis is).
pub fn serialize(store: &Store, now_ms: u64, compress: bool) -> Part {
    let run = || {
        let mut part = Part {
            dbs: Vec::with_capacity(store.dbs.len()),
            version: RDB_VERSION_7_0,
            changes: store.stats.notify.dirty,
        };
        for db in &store.dbs {
            let mut out = DbPart::default();
            for (key, entry) in db.iter() {
                if !is_live(&entry.value, entry.expire_at(), now_ms) {
                    continue;
                }
                let v = out.put(key, &entry.value, entry.expire_at());
                part.version = part.version.max(v);
            }
            part.dbs.push(out);
        }
        part
    };
    if compress {
        run()
    } else {
        without_compression(run)
    }
}
