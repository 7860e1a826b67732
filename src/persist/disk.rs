//! Files on disk: a snapshot written to a temporary file, synced and
//! renamed over `dir/dbfilename` (so a crash leaves the old file or the
//! new one, never half of one). The start-up load is `shard::loading`.

use std::io::Write;
use std::path::{Path, PathBuf};

/// `dir/dbfilename`.
pub fn target(dir: &str, name: &str) -> PathBuf {
    Path::new(dir).join(name)
}

/// Writes `bytes` as `dir/name`: first to `temp-<pid>-<n>.rdb` beside it
/// (Redis's temporary name), synced, then renamed into place. With a save
/// process (`child`) the process writes and syncs the temporary file.
pub fn write_atomically(
    dir: &str,
    name: &str,
    bytes: &[u8],
    tag: &str,
    child: Option<super::child::SaveChild>,
) -> std::io::Result<()> {
    let temp = Path::new(dir).join(format!("temp-{tag}-{}.rdb", std::process::id()));
    let result = (|| {
        write_temp(&temp, bytes, false, child)?;
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

/// Writes and syncs `temp`, through the save process when there is one.
pub fn write_temp(
    temp: &Path,
    bytes: &[u8],
    incremental: bool,
    child: Option<super::child::SaveChild>,
) -> std::io::Result<()> {
    if let Some(mut child) = child {
        return child
            .deliver(temp, bytes, incremental)
            .map_err(|why| std::io::Error::other(format!("the save process {why}")));
    }
    const CHUNK: usize = 4 * 1024 * 1024;
    let mut f = std::fs::File::create(temp)?;
    for chunk in bytes.chunks(CHUNK) {
        f.write_all(chunk)?;
        if incremental && chunk.len() == CHUNK {
            f.sync_data()?;
        }
    }
    f.sync_all()
}
