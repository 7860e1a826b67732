//! CLIENT PAUSE's state, shared by every shard: until when, and whether
//! writes or all commands wait. A command checks it with one relaxed load
//! while no pause is set. FAILOVER pauses writes too, for as long as it
//! runs, apart from CLIENT PAUSE: CLIENT UNPAUSE does not end its pause.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};

/// What a pause holds back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseMode {
    /// Commands that write or may propagate (Redis's WRITE).
    Write = 1,
    /// Every command (ALL).
    All = 2,
}

#[derive(Default)]
pub struct Pause {
    /// 0: no pause; otherwise a `PauseMode`.
    mode: AtomicU8,
    /// Unix ms the pause ends at.
    end_ms: AtomicU64,
    /// A FAILOVER holds writes back until it ends.
    failover: AtomicBool,
}

impl Pause {
    /// The pause in force at `now_ms`, if any.
    pub fn active(&self, now_ms: u64) -> Option<PauseMode> {
        let failover = self.failover.load(Relaxed).then_some(PauseMode::Write);
        self.client_active(now_ms).max(failover)
    }

    /// CLIENT PAUSE's part of the pause.
    fn client_active(&self, now_ms: u64) -> Option<PauseMode> {
        match self.mode.load(Relaxed) {
            0 => None,
            1 => Some(PauseMode::Write),
            _ => Some(PauseMode::All),
        }
        .filter(|_| now_ms < self.end_ms.load(Relaxed))
    }

    /// FAILOVER's pause of writes, on or off.
    pub fn set_failover(&self, on: bool) {
        self.failover.store(on, Relaxed);
    }

    /// Whether FAILOVER's pause is on (the master then sends its replicas
    /// no PING: their offsets must be able to reach its own).
    pub fn failover(&self) -> bool {
        self.failover.load(Relaxed)
    }

    /// CLIENT PAUSE: as Redis, a pause already in force is only made
    /// longer or stronger, never shorter or weaker.
    pub fn pause(&self, mode: PauseMode, end_ms: u64, now_ms: u64) {
        let (mode, end_ms) = match self.client_active(now_ms) {
            Some(old) => (mode.max(old), end_ms.max(self.end_ms.load(Relaxed))),
            None => (mode, end_ms),
        };
        self.end_ms.store(end_ms, Relaxed);
        self.mode.store(mode as u8, Relaxed);
    }

    /// CLIENT UNPAUSE.
    pub fn unpause(&self) {
        self.mode.store(0, Relaxed);
        self.end_ms.store(0, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_only_grows_until_unpaused() {
        let p = Pause::default();
        assert_eq!(p.active(0), None);
        p.pause(PauseMode::All, 100, 0);
        p.pause(PauseMode::Write, 50, 10);
        assert_eq!(
            p.active(60),
            Some(PauseMode::All),
            "neither weaker nor shorter"
        );
        assert_eq!(p.active(100), None, "over at its end");
        p.pause(PauseMode::Write, 500, 200);
        assert_eq!(
            p.active(300),
            Some(PauseMode::Write),
            "an ended pause is replaced"
        );
        p.unpause();
        assert_eq!(p.active(300), None);
    }

    #[test]
    fn a_failover_pauses_writes_past_client_unpause() {
        let p = Pause::default();
        p.set_failover(true);
        assert_eq!(p.active(0), Some(PauseMode::Write));
        p.pause(PauseMode::All, 100, 0);
        assert_eq!(p.active(50), Some(PauseMode::All), "the stronger one");
        p.unpause();
        assert_eq!(
            p.active(50),
            Some(PauseMode::Write),
            "CLIENT UNPAUSE leaves it"
        );
        p.set_failover(false);
        assert_eq!(p.active(50), None);
    }
}
