//! The save process: a background save's (BGSAVE's, an AOF rewrite's)
//! file is written to disk by a process of its own, as Redis's forked
//! child writes it, so that what operators (and Redis's test suite) do to
//! that child works the same: `kill -9` of it fails the save (the temporary
//! file goes, `rdb_last_bgsave_status:err`, MISCONF for writes under
//! `stop-writes-on-bgsave-error`), `pgrep -P <server>` finds it.
//!
//! It is not a fork of the server: the shards still take the snapshot in
//! slices themselves (`store::snapshot`), with nothing copied and nothing
//! stalled. The process is this same binary started afresh (Rust's spawn
//! is a `posix_spawn`/vfork-style start, which copies no page tables) with
//! [`FLAG`] and the temporary file's path; it copies its standard input to
//! that file, syncs it, and exits 0. The server pipes the finished file to
//! it, waits for it, and renames the file into place.
//!
//! ```text
//!  BGSAVE / BGREWRITEAOF: spawn the child (waiting on stdin)
//!  shards: snapshot slices ... each slice asks whether the child lives;
//!          a dead one aborts the snapshot on every shard
//!  last shard: the bytes -> child's stdin -> temp file, fsync, exit 0
//!  server: exit 0 ? rename into place : the save failed, temp file removed
//! ```

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

/// The first argument that makes the binary a save process.
pub const FLAG: &str = "--ember-save-child";

/// How much is written between two syncs with incremental fsync (as the
/// AOF rewrite's `aof-rewrite-incremental-fsync`).
const CHUNK: usize = 4 * 1024 * 1024;

/// A save process, started and not yet waited for.
#[derive(Debug)]
pub struct SaveChild {
    child: Child,
}

impl SaveChild {
    /// Starts the save process (this binary with [`FLAG`]); it waits on
    /// its standard input for the path and the bytes.
    pub fn spawn() -> std::io::Result<SaveChild> {
        let exe = std::env::current_exe()?;
        let child = Command::new(exe)
            .arg(FLAG)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()?;
        Ok(SaveChild { child })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How it ended, once it has (a kill before the file was delivered).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Hands it the file: `bytes` go to `temp`, synced (every [`CHUNK`]
    /// too when `incremental`). Ok once it exited 0; otherwise the reason,
    /// in Redis's words ("terminated by signal 9"), and `temp` is removed.
    pub fn deliver(&mut self, temp: &Path, bytes: &[u8], incremental: bool) -> Result<(), String> {
        let sent = (|| -> std::io::Result<()> {
            let mut stdin = self
                .child
                .stdin
                .take()
                .ok_or_else(|| std::io::Error::other("no pipe to the save process"))?;
            let path = temp.as_os_str().as_encoded_bytes();
            let header = format!("{} {}\n", path.len(), u8::from(incremental));
            stdin.write_all(header.as_bytes())?;
            stdin.write_all(path)?;
            stdin.write_all(bytes)?;
            Ok(())
        })();
        let status = self.child.wait();
        let outcome = match status {
            Ok(s) if s.success() && sent.is_ok() => Ok(()),
            Ok(s) => Err(describe(s)),
            Err(e) => Err(format!("the save process was lost: {e}")),
        };
        if outcome.is_err() {
            let _ = std::fs::remove_file(temp);
        }
        outcome
    }

    /// Stops it (the save was given up): killed and waited for.
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for SaveChild {
    /// A save process is never left behind, not even as a zombie (the
    /// next save's `pgrep -P` would find it): killed if it still runs, and
    /// reaped. Both are no-ops once it was waited for.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Redis's words for how a child ended.
pub fn describe(status: ExitStatus) -> String {
    match (status.signal(), status.code()) {
        (Some(sig), _) => format!("terminated by signal {sig}"),
        (None, Some(code)) => format!("exited with code {code}"),
        (None, None) => "ended".to_string(),
    }
}

/// The signal a child ended by, if one did.
pub fn signal(status: ExitStatus) -> Option<i32> {
    status.signal()
}

/// The save process's whole life (`main` calls it when the first argument
/// is [`FLAG`]): reads `<path length> <incremental 0|1>\n`, the path, then
/// the file's bytes to the end of its input; returns the exit code.
pub fn run(input: &mut impl Read) -> i32 {
    match write_from(input) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ember save process: {e}");
            1
        }
    }
}

fn write_from(input: &mut impl Read) -> std::io::Result<()> {
    let mut header = Vec::new();
    let mut byte = [0u8; 1];
    while input.read(&mut byte)? == 1 && byte[0] != b'\n' {
        header.push(byte[0]);
        if header.len() > 64 {
            return Err(std::io::Error::other("bad header"));
        }
    }
    let text = String::from_utf8_lossy(&header).to_string();
    let mut words = text.split(' ');
    let len: usize = words
        .next()
        .and_then(|w| w.parse().ok())
        .ok_or_else(|| std::io::Error::other("bad header"))?;
    let incremental = words.next() == Some("1");
    let mut path = vec![0u8; len];
    input.read_exact(&mut path)?;
    let path = PathBuf::from(String::from_utf8_lossy(&path).to_string());
    let mut file = std::fs::File::create(&path)?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut since_sync = 0usize;
    loop {
        let n = input.read(&mut buf)?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n])?;
        since_sync += n;
        if incremental && since_sync >= CHUNK {
            file.sync_data()?;
            since_sync = 0;
        }
    }
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_save_process_writes_its_input_to_the_named_file() {
        let dir = std::env::temp_dir().join(format!("ember-child-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("temp-x.rdb");
        let p = path.to_string_lossy().to_string();
        let mut input = format!("{} 1\n{p}", p.len()).into_bytes();
        input.extend_from_slice(b"REDIS0010 and the rest");
        assert_eq!(run(&mut input.as_slice()), 0);
        assert_eq!(std::fs::read(&path).unwrap(), b"REDIS0010 and the rest");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_garbled_header_fails_without_a_file() {
        assert_eq!(run(&mut b"x y\n".as_slice()), 1);
        assert_eq!(run(&mut b"".as_slice()), 1);
    }
}
