//! Full syncs that share one snapshot, as Redis's replicas share one
//! child's save: the first replica asking for a diskless full sync opens a
//! group and waits `repl-diskless-sync-delay` (or until
//! `repl-diskless-sync-max-replicas` replicas wait); one asking for a full
//! sync to disk opens a group that stays open while the background save
//! runs. Replicas asking meanwhile (for the same kind of file) join it
//! instead of starting a snapshot of their own, and all get the same
//! `+FULLRESYNC` offset and the same file. The group's first thread
//! produces the file and publishes it here; every member's thread sends
//! it on its own socket.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use super::repl::StartSlot;

/// The file of a group: not yet, then the bytes or None (the save failed).
type FileState = Option<Option<Arc<Vec<u8>>>>;

pub struct SyncGroup {
    /// The snapshot's offset, set at its instant.
    pub start: Arc<StartSlot>,
    /// Unix ms the group opened: the delay counts from there.
    pub since_ms: u64,
    /// The file goes as `$EOF:` (else `$<len>`).
    pub diskless: bool,
    /// Replicas in the group.
    pub members: AtomicUsize,
    /// The wait is over (the transfer starts): members leave their wait.
    closed: AtomicBool,
    file: Mutex<FileState>,
    known: Condvar,
}

impl SyncGroup {
    pub fn new(start: Arc<StartSlot>, since_ms: u64, diskless: bool) -> SyncGroup {
        SyncGroup {
            start,
            since_ms,
            diskless,
            members: AtomicUsize::new(1),
            closed: AtomicBool::new(false),
            file: Mutex::new(None),
            known: Condvar::new(),
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Relaxed)
    }

    pub fn close(&self) {
        self.closed.store(true, Relaxed);
    }

    /// The first thread has the file (None: there is none).
    pub fn publish(&self, file: Option<Arc<Vec<u8>>>) {
        *self.file.lock().unwrap_or_else(|e| e.into_inner()) = Some(file);
        self.known.notify_all();
    }

    /// The file, waiting up to `timeout`: `Err(())` while it is not known
    /// yet, `Ok(None)` when the group has none.
    #[allow(clippy::result_unit_err)]
    pub fn file(&self, timeout: Duration) -> Result<Option<Arc<Vec<u8>>>, ()> {
        let guard = self.file.lock().unwrap_or_else(|e| e.into_inner());
        let (guard, _) = self
            .known
            .wait_timeout_while(guard, timeout, |f| f.is_none())
            .unwrap_or_else(|e| e.into_inner());
        guard.clone().ok_or(())
    }
}

/// The group open for joining, if any (one at a time, as Redis has one
/// child producing a diskless transfer).
#[derive(Default)]
pub struct Pending {
    open: Mutex<Option<Arc<SyncGroup>>>,
}

impl Pending {
    /// Joins the open group if its file is of the kind wanted: its
    /// snapshot will serve this replica too.
    pub fn join(&self, diskless: bool) -> Option<Arc<SyncGroup>> {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let group = open
            .as_ref()
            .filter(|g| !g.is_closed() && g.diskless == diskless)?;
        group.members.fetch_add(1, Relaxed);
        Some(Arc::clone(group))
    }

    /// A new group, open for joining until [`Pending::close`].
    pub fn open(&self, group: &Arc<SyncGroup>) {
        *self.open.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::clone(group));
    }

    /// The wait of `group` is over: no one joins it any more.
    pub fn close(&self, group: &Arc<SyncGroup>) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        group.close();
        if open.as_ref().is_some_and(|g| Arc::ptr_eq(g, group)) {
            *open = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joiners_share_until_closed() {
        let pending = Pending::default();
        assert!(pending.join(true).is_none());
        let g = Arc::new(SyncGroup::new(Arc::default(), 0, true));
        pending.open(&g);
        assert!(pending.join(false).is_none(), "another kind of file");
        let joined = pending.join(true).expect("open");
        assert!(Arc::ptr_eq(&joined, &g));
        assert_eq!(g.members.load(Relaxed), 2);
        pending.close(&g);
        assert!(pending.join(true).is_none());
        assert!(g.file(Duration::from_millis(1)).is_err());
        g.publish(Some(Arc::new(vec![1, 2])));
        assert_eq!(g.file(Duration::ZERO).unwrap().unwrap().as_slice(), &[1, 2]);
    }
}
