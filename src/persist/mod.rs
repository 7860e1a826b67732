//! Persistence: RDB snapshots, in Redis 7.0's file format, so redis-server
//! loads ember's `dump.rdb` and ember loads redis-server's.
//!
//! The layer sits above `store` (whose value codec, `store::rdb`, it
//! shares with DUMP/RESTORE) and below `exec`, whose `Shared` holds the
//! persistence [`State`]. The commands (SAVE, BGSAVE, LASTSAVE, DEBUG
//! RELOAD, SHUTDOWN's save) are in `cmd::persist`.
//!
//! # Layout
//!
//! - [`file`]: a whole file both ways: header and AUX fields, SELECTDB and
//!   RESIZEDB, key records with their deadlines, EOF and CRC-64; the reader
//!   takes versions 1 to 12 and refuses a torn or hostile file by name.
//! - [`snapshot`]: one shard's part: its live keys, serialized.
//! - [`disk`]: the temporary file renamed into place (the start-up load,
//!   into the running shards, is `shard::loading`).
//! - [`state`]: last save, background save status, the `save` rules, the
//!   running save's process.
//! - [`child`]: the save process that writes a background save's file (a
//!   `kill -9` of it fails the save, as of Redis's child).
//! - [`aof`]: the append-only file: manifest, command files, the writer.

pub mod aof;
pub mod child;
pub mod disk;
pub mod file;
pub mod snapshot;
pub mod state;

pub use file::{DbPart, LoadError, LoadOptions, Loaded};
pub use snapshot::Part;
pub use state::State;

/// Joins the shards' parts into the databases of one file, and the newest
/// version any value needed.
pub fn merge(parts: &[Part], databases: usize) -> (Vec<DbPart>, u16) {
    let mut dbs = vec![DbPart::default(); databases];
    let mut version = crate::store::rdb::RDB_VERSION_7_0;
    for part in parts {
        version = version.max(part.version);
        for (i, db) in part.dbs.iter().enumerate() {
            if let Some(into) = dbs.get_mut(i) {
                into.append(db);
            }
        }
    }
    (dbs, version)
}
