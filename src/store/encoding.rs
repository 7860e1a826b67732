//! OBJECT ENCODING for containers: Redis 7.0's compact encodings (`intset`,
//! `listpack`), their thresholds, and the record that a container has
//! outgrown them, since Redis never converts a container back.
//!
//! Sets and sorted sets are stored the same way whatever their size; their
//! encoding is only reported, so clients and tools that look at it (and
//! SSCAN/ZSCAN, which answer a compact container in one call as Redis does)
//! see what Redis would show. Hashes really have a compact form
//! (`store::hash`, `store::listpack`) and report it themselves.

use std::ops::{Deref, DerefMut};

use bytes::Bytes;

use super::value::Set;
use super::zset::ZSet;

use crate::config::ENCODINGS;

/// A container type that Redis holds in a compact encoding while it is small.
pub trait Compact {
    /// The thresholds in force now (CONFIG SET may change them).
    fn limits_now() -> CompactLimits;

    /// Whether Redis would hold the container, as it is now, compactly
    /// under `limits`.
    fn fits_within(&self, limits: CompactLimits) -> bool;

    /// The same under the thresholds in force now.
    fn fits_compact(&self) -> bool {
        self.fits_within(Self::limits_now())
    }
}

/// A compact encoding's thresholds: most elements, longest element (bytes;
/// sets have no such limit).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompactLimits {
    pub entries: usize,
    pub value: usize,
}

impl Compact for Set {
    fn limits_now() -> CompactLimits {
        CompactLimits {
            entries: ENCODINGS.set_max_intset_entries(),
            value: usize::MAX,
        }
    }

    /// `intset`: only integers (as Redis's strict `string2ll` reads them).
    fn fits_within(&self, limits: CompactLimits) -> bool {
        self.len() <= limits.entries
            && self
                .iter()
                .all(|m| crate::util::num::parse_i64(m).is_some())
    }
}

impl Compact for ZSet {
    fn limits_now() -> CompactLimits {
        CompactLimits {
            entries: ENCODINGS.zset_max_listpack_entries(),
            value: ENCODINGS.zset_max_listpack_value(),
        }
    }

    fn fits_within(&self, limits: CompactLimits) -> bool {
        self.len() <= limits.entries && self.iter().all(|(member, _)| member.len() <= limits.value)
    }
}

/// Puts members of an intset in the order Redis keeps an intset: ascending
/// by value. Listings of a compact set (SMEMBERS, SSCAN, ...) use it so they
/// read as Redis's do. Requires: every member is an integer (else it goes last).
pub fn sort_as_intset(members: &mut [Bytes]) {
    members.sort_by_key(|m| crate::util::num::parse_i64(m).unwrap_or(i64::MAX));
}

/// A container and whether it has outgrown its compact encoding.
///
/// Every write reaches the container through `DerefMut`, which first records
/// whether the state the previous write left had outgrown the compact form
/// under the thresholds in force at that write (kept in `limits`, so a
/// CONFIG SET in between changes nothing about it), and
/// [`is_compact`](Self::is_compact) also checks the current state. So the
/// state each command leaves is checked against the thresholds of its time,
/// and once outgrown a container stays outgrown (a copy or a rename keeps
/// the record, as Redis keeps the object's encoding). The check is O(1) once
/// outgrown and, while compact, one pass over at most a threshold's worth of
/// elements, the same order as the O(n) writes of Redis's compact encodings.
#[derive(Clone, Debug, Default)]
pub struct Encoded<T> {
    items: T,
    outgrown: bool,
    /// The thresholds in force at the last write.
    limits: CompactLimits,
}

impl<T: Compact> Encoded<T> {
    /// A container built in one go (SINTERSTORE, ...): compact when its
    /// content fits, as Redis converts a freshly built result.
    pub fn new(items: T) -> Encoded<T> {
        let limits = T::limits_now();
        let outgrown = !items.fits_within(limits);
        Encoded {
            items,
            outgrown,
            limits,
        }
    }

    /// Whether OBJECT ENCODING names the compact encoding.
    pub fn is_compact(&self) -> bool {
        !self.outgrown && self.items.fits_within(self.limits)
    }

    /// The container itself, its encoding forgotten.
    pub fn into_items(self) -> T {
        self.items
    }
}

impl<T: Compact> From<T> for Encoded<T> {
    fn from(items: T) -> Encoded<T> {
        Encoded::new(items)
    }
}

impl<T> Deref for Encoded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.items
    }
}

impl<T: Compact> DerefMut for Encoded<T> {
    fn deref_mut(&mut self) -> &mut T {
        if !self.outgrown && !self.items.fits_within(self.limits) {
            self.outgrown = true;
        }
        self.limits = T::limits_now();
        &mut self.items
    }
}

/// Equal when the contents are; the encoding is a detail of how it got there.
impl<T: PartialEq> PartialEq for Encoded<T> {
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set_of(members: &[&str]) -> Set {
        members
            .iter()
            .map(|m| Bytes::copy_from_slice(m.as_bytes()))
            .collect()
    }

    #[test]
    fn integer_sets_are_compact_up_to_the_threshold() {
        assert!(set_of(&["1", "-2", "9223372036854775807"]).fits_compact());
        for not_integer in ["01", "+1", "-0", " 1", "x", "9223372036854775808"] {
            assert!(!set_of(&["1", not_integer]).fits_compact(), "{not_integer}");
        }
        let numbers: Vec<String> = (0..ENCODINGS.set_max_intset_entries())
            .map(|i| i.to_string())
            .collect();
        let mut set: Set = numbers.iter().map(|n| Bytes::from(n.clone())).collect();
        assert!(set.fits_compact());
        set.insert(Bytes::from_static(b"-1"));
        assert!(!set.fits_compact());
    }

    #[test]
    fn intsets_list_by_value() {
        let mut members: Vec<Bytes> = ["10", "-3", "9", "0"]
            .iter()
            .map(|m| Bytes::copy_from_slice(m.as_bytes()))
            .collect();
        sort_as_intset(&mut members);
        assert_eq!(members, ["-3", "0", "9", "10"]);
    }

    #[test]
    fn outgrowing_is_remembered_across_writes_and_clones() {
        let mut set = Encoded::new(set_of(&["1", "2"]));
        assert!(set.is_compact());
        set.insert(Bytes::from_static(b"x"));
        assert!(!set.is_compact(), "the current state is checked");
        set.swap_remove(b"x".as_ref());
        assert!(!set.is_compact(), "the write that removed x saw it first");
        assert!(!set.clone().is_compact());
        assert!(Encoded::new(set_of(&["7"])).is_compact());
        assert!(!Encoded::new(set_of(&["y"])).is_compact());
    }

    #[test]
    fn sorted_sets_follow_their_own_limits() {
        let long = Bytes::from(vec![b'x'; ENCODINGS.zset_max_listpack_value() + 1]);
        let mut zset = ZSet::default();
        zset.insert(&long[1..], 1.0);
        assert!(zset.fits_compact());
        zset.insert(&long, 1.0);
        assert!(!zset.fits_compact());
    }
}
