//! Files on disk: a snapshot written to a temporary file, synced and
//! renamed over `dir/dbfilename` (so a crash leaves the old file or the
//! new one, never half of one), and a file read back into the shards'
//! stores at start-up.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::file::{self, LoadError, LoadOptions, Loaded};
use crate::store::Store;

/// `dir/dbfilename`.
pub fn target(dir: &str, name: &str) -> PathBuf {
    Path::new(dir).join(name)
}

/// Writes `bytes` as `dir/name`: first to `temp-<pid>-<n>.rdb` beside it
/// (Redis's temporary name), synced, then renamed into place.
pub fn write_atomically(dir: &str, name: &str, bytes: &[u8], tag: &str) -> std::io::Result<()> {
    let temp = Path::new(dir).join(format!("temp-{tag}-{}.rdb", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&temp, target(dir, name))?;
        // The rename itself is durable once the directory is synced.
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Why a start-up load failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Load(#[from] LoadError),
}

/// Loads `bytes` into `stores` (one per shard, keys placed by their slot),
/// which are emptied first. A file refused part way leaves them empty.
pub fn load_into(
    bytes: &[u8],
    stores: &mut [Store],
    opts: &LoadOptions,
) -> Result<Loaded, LoadError> {
    let n = stores.len().max(1);
    let now_ms = opts.now_ms;
    let result = file::load(bytes, opts, |db, key, value, deadline| {
        let shard = if n == 1 {
            0
        } else {
            crate::util::slot::key_slot(key) as usize % n
        };
        stores[shard].dbs[db].insert_raw(key, value, deadline, now_ms);
    });
    if result.is_err() {
        for store in stores.iter_mut() {
            for db in store.dbs.iter_mut() {
                drop(db.clear());
            }
        }
    }
    result
}
