//! One shard's part of a snapshot: every live key of every database,
//! serialized as RDB key records (`file::DbPart`).

use super::file::DbPart;
use crate::store::rdb::writer::without_compression;
use crate::store::rdb::RDB_VERSION_7_0;
use crate::store::Store;

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
    /// Bytes written early because a write was about to change a key
    /// (`rdb_last_cow_size`, `aof_last_cow_size`).
    pub copied: u64,
}

pub use crate::store::snapshot::is_live;

/// A background snapshot's parts, as the shard hands them over.
pub fn from_shard(done: crate::store::ShardSnapshot, databases: usize) -> Part {
    let mut part = Part {
        dbs: vec![DbPart::default(); databases],
        version: RDB_VERSION_7_0,
        changes: done.changes,
        copied: done.copied,
    };
    for (db, out, version) in done.parts {
        part.version = part.version.max(version);
        if let Some(slot) = part.dbs.get_mut(db) {
            slot.append(&out);
        }
    }
    part
}

/// Serializes every live key of `store` as of `now_ms`, at once (SAVE,
/// SHUTDOWN, DEBUG RELOAD; the shard is stopped meanwhile, as Redis is).
pub fn serialize(store: &Store, now_ms: u64, compress: bool) -> Part {
    let run = || {
        let mut part = Part {
            dbs: Vec::with_capacity(store.dbs.len()),
            version: RDB_VERSION_7_0,
            changes: store.stats.notify.dirty,
            copied: 0,
        };
        for db in &store.dbs {
            let mut out = DbPart::default();
            for (key, entry, deadline) in db.iter() {
                if !is_live(&entry.value, deadline, now_ms) {
                    continue;
                }
                let v = out.put(key, &entry.value, deadline);
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
