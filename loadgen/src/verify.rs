//! `--verify`: every GET reply is checked against what this run wrote.
//!
//! Values written under verification carry a 16-hex-digit tag derived from
//! (writer, key, version) followed by the run's filler bytes, so a reply can
//! be checked without keeping values around. A connection only touches its
//! own keys (the key space is partitioned), so the order of its own requests
//! is the order the server applied them.
//!
//! Timing rules (1 ms tolerance): a value is *stale* when the GET was sent
//! after the latest possible deadline (SET reply time + TTL, or the absolute
//! PXAT instant); a key is *missing* when the GET was answered before the
//! earliest possible deadline (SET send time + TTL) but returned nil; a value
//! that differs from the last one written is *wrong*.

use serde::Serialize;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

/// Tolerance on deadlines.
pub const TOLERANCE_US: u64 = 1_000;
/// How many violations are kept with details.
pub const MAX_SAMPLES: usize = 50;

/// Wall clock in µs since the Unix epoch.
#[inline]
pub fn wall_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0)
}

/// A 64-bit mix (splitmix64 finaliser).
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The tag of version `ver` of `key` written by `writer`.
#[inline]
pub fn tag(writer: u64, key: u64, ver: u64) -> u64 {
    mix(mix(writer ^ 0x5eed) ^ key.rotate_left(17) ^ ver.rotate_left(41))
}

/// Writes the value of length `len` for `tag`: tag hex, then `filler` bytes.
pub fn write_value(buf: &mut Vec<u8>, tag: u64, len: usize, filler: &[u8]) {
    let mut hex = [0u8; 16];
    for (i, h) in hex.iter_mut().enumerate() {
        let nib = (tag >> (60 - 4 * i)) & 0xf;
        *h = b"0123456789abcdef"[nib as usize];
    }
    let n = len.min(16);
    buf.extend_from_slice(&hex[..n]);
    if len > 16 {
        buf.extend_from_slice(&filler[16..len]);
    }
}

/// Whether `got` is the value `write_value` produces for these inputs.
pub fn value_matches(got: &[u8], tag: u64, len: usize, filler: &[u8]) -> bool {
    if got.len() != len {
        return false;
    }
    let mut v = Vec::with_capacity(len);
    write_value(&mut v, tag, len, filler);
    v == got
}

/// What kind of violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A value returned after its deadline.
    Stale,
    /// A live key returned nil.
    Missing,
    /// A value other than the one last written.
    Wrong,
}

/// One violation, with enough detail to investigate.
#[derive(Clone, Debug, Serialize)]
pub struct Violation {
    pub kind: ViolationKind,
    pub key: String,
    pub detail: String,
}

/// Verification results of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct VerifyReport {
    pub enabled: bool,
    /// GET replies checked.
    pub checked: u64,
    /// GET replies that could not be judged (key never written by this run).
    pub unchecked: u64,
    pub stale: u64,
    pub missing: u64,
    pub wrong: u64,
    pub samples: Vec<Violation>,
}

impl VerifyReport {
    pub fn violations(&self) -> u64 {
        self.stale + self.missing + self.wrong
    }

    pub fn add(&mut self, v: Violation) {
        match v.kind {
            ViolationKind::Stale => self.stale += 1,
            ViolationKind::Missing => self.missing += 1,
            ViolationKind::Wrong => self.wrong += 1,
        }
        if self.samples.len() < MAX_SAMPLES {
            self.samples.push(v);
        }
    }

    pub fn merge(&mut self, o: &VerifyReport) {
        self.enabled |= o.enabled;
        self.checked += o.checked;
        self.unchecked += o.unchecked;
        self.stale += o.stale;
        self.missing += o.missing;
        self.wrong += o.wrong;
        for s in &o.samples {
            if self.samples.len() < MAX_SAMPLES {
                self.samples.push(s.clone());
            }
        }
    }

    /// Human-readable listing.
    pub fn print(&self) {
        if !self.enabled {
            return;
        }
        println!(
            "\nVERIFY: {} GET replies checked, {} unjudged, {} violations ({} stale, {} missing, {} wrong)",
            self.checked,
            self.unchecked,
            self.violations(),
            self.stale,
            self.missing,
            self.wrong
        );
        for v in &self.samples {
            println!("  {:?} {}: {}", v.kind, v.key, v.detail);
        }
        if self.violations() as usize > self.samples.len() {
            println!(
                "  ... and {} more",
                self.violations() as usize - self.samples.len()
            );
        }
    }
}

/// What this run last wrote to a key.
#[derive(Clone, Copy, Debug)]
pub struct KeyState {
    pub ver: u64,
    pub len: u32,
    /// Sequence number of the SET that wrote it.
    pub seq: u64,
    pub set_sent_us: u64,
    /// Filled when the SET's reply arrives.
    pub set_reply_us: Option<u64>,
    pub ttl_us: Option<u64>,
}

impl KeyState {
    /// Earliest and latest instant the server may expire the key.
    pub fn deadlines(&self, fallback_reply_us: u64) -> Option<(u64, u64)> {
        self.ttl_us.map(|t| {
            (
                self.set_sent_us + t,
                self.set_reply_us.unwrap_or(fallback_reply_us) + t,
            )
        })
    }
}

/// Per-connection verification state.
#[derive(Default)]
pub struct ConnVerify {
    pub keys: HashMap<u64, KeyState>,
    pub next_seq: u64,
}

/// Outcome of checking one GET reply; `None` value means nil.
pub struct GetCheck<'a> {
    pub key: String,
    pub got: Option<&'a [u8]>,
    pub get_sent_us: u64,
    pub get_reply_us: u64,
    /// Expected value tag and length.
    pub tag: u64,
    pub len: usize,
    /// (earliest, latest) deadline, if the key has one.
    pub deadlines: Option<(u64, u64)>,
}

/// Judges one GET reply.
pub fn check_get(c: &GetCheck<'_>, filler: &[u8]) -> Option<Violation> {
    match c.got {
        Some(v) => {
            if !value_matches(v, c.tag, c.len, filler) {
                return Some(Violation {
                    kind: ViolationKind::Wrong,
                    key: c.key.clone(),
                    detail: format!(
                        "expected {} bytes starting {:016x}, got {} bytes starting {:?}",
                        c.len,
                        c.tag,
                        v.len(),
                        String::from_utf8_lossy(&v[..v.len().min(16)])
                    ),
                });
            }
            if let Some((_, late)) = c.deadlines {
                if c.get_sent_us > late + TOLERANCE_US {
                    return Some(Violation {
                        kind: ViolationKind::Stale,
                        key: c.key.clone(),
                        detail: format!(
                            "value returned for a GET sent {:.3} ms after the key's deadline",
                            (c.get_sent_us - late) as f64 / 1000.0
                        ),
                    });
                }
            }
            None
        }
        None => {
            let live = match c.deadlines {
                None => true,
                Some((early, _)) => c.get_reply_us + TOLERANCE_US < early,
            };
            live.then(|| Violation {
                kind: ViolationKind::Missing,
                key: c.key.clone(),
                detail: match c.deadlines {
                    None => "key written without expiry returned nil".to_string(),
                    Some((early, _)) => format!(
                        "nil returned {:.3} ms before the key's deadline",
                        (early - c.get_reply_us) as f64 / 1000.0
                    ),
                },
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filler() -> Vec<u8> {
        (0..64u8).map(|i| b'a' + i % 26).collect()
    }

    #[test]
    fn value_roundtrip() {
        let f = filler();
        for len in [1, 15, 16, 17, 40] {
            let mut v = Vec::new();
            write_value(&mut v, tag(1, 2, 3), len, &f);
            assert_eq!(v.len(), len);
            assert!(value_matches(&v, tag(1, 2, 3), len, &f));
            assert!(!value_matches(&v, tag(1, 2, 4), len, &f) || len < 4);
        }
    }

    #[test]
    fn judging() {
        let f = filler();
        let mut v = Vec::new();
        write_value(&mut v, 77, 32, &f);
        let base = GetCheck {
            key: "k".into(),
            got: Some(&v),
            get_sent_us: 1_000_000,
            get_reply_us: 1_000_100,
            tag: 77,
            len: 32,
            deadlines: Some((2_000_000, 2_000_500)),
        };
        assert!(check_get(&base, &f).is_none());
        let stale = GetCheck {
            get_sent_us: 2_002_000,
            get_reply_us: 2_002_100,
            ..base
        };
        assert_eq!(check_get(&stale, &f).unwrap().kind, ViolationKind::Stale);
        let within_tol = GetCheck {
            get_sent_us: 2_001_000,
            get_reply_us: 2_001_100,
            got: Some(&v),
            ..stale
        };
        assert!(check_get(&within_tol, &f).is_none());
        let missing = GetCheck {
            got: None,
            ..within_tol
        };
        assert!(check_get(&missing, &f).is_none()); // after deadline: fine
        let early_missing = GetCheck {
            got: None,
            get_sent_us: 1_000_000,
            get_reply_us: 1_000_100,
            ..missing
        };
        assert_eq!(
            check_get(&early_missing, &f).unwrap().kind,
            ViolationKind::Missing
        );
        let wrong = GetCheck {
            got: Some(b"nope"),
            ..early_missing
        };
        assert_eq!(check_get(&wrong, &f).unwrap().kind, ViolationKind::Wrong);
    }
}
