//! CLIENT PAUSE's state, shared by every shard: until when, and whether
//! writes or all commands wait. A command checks it with one relaxed load
//! while no pause is set.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

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
}

impl Pause {
    /// The pause in force at `now_ms`, if any.
    pub fn active(&self, now_ms: u64) -> Option<PauseMode> {
        let mode = match self.mode.load(Relaxed) {
            0 => return None,
            1 => PauseMode::Write,
            _ => PauseMode::All,
        };
        (now_ms < self.end_ms.load(Relaxed)).then_some(mode)
    }

    /// CLIENT PAUSE: as Redis, a pause already in force is only made
    /// longer or stronger, never shorter or weaker.
    pub fn pause(&self, mode: PauseMode, end_ms: u64, now_ms: u64) {
        let (mode, end_ms) = match self.active(now_ms) {
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
}
