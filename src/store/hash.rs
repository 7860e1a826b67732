//! The hash value: fields in insertion order, and per-field deadlines for
//! the hashes that use them (Redis 7.4's HEXPIRE family).
//!
//! A hash without field TTLs pays one null pointer. The first deadline set
//! allocates [`FieldTtls`]: one `u64` per field, kept at the same position as
//! the field in the map (0 = no deadline), plus a lower bound of the earliest
//! deadline. So a lookup asks "is anything due?" in O(1), and reclaiming the
//! due fields is one pass over the hash. Every change to the map goes through
//! this type, which is how the positions stay aligned; reads borrow the map
//! (`Deref`).

use std::ops::Deref;

use ahash::RandomState;
use bytes::Bytes;
use indexmap::IndexMap;

/// Redis's `hash-max-listpack-entries` default: up to this many fields a
/// hash keeps its fields in insertion order, deletes included (O(n), n
/// small); larger ones remove in O(1).
pub const SMALL_HASH_FIELDS: usize = 128;

/// The fields of a hash.
pub type FieldMap = IndexMap<Bytes, Bytes, RandomState>;

/// "No deadline" in [`FieldTtls::at`]: a stored deadline is always in the
/// future, so never 0.
const NO_TTL: u64 = 0;

/// A hash: fields in insertion order, O(1) lookup and removal, and optional
/// per-field deadlines (absolute Unix milliseconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Hash {
    fields: FieldMap,
    /// Only hashes that ever had a field deadline allocate this.
    ttls: Option<Box<FieldTtls>>,
}

/// The deadlines of a hash's fields.
#[derive(Clone, Debug, PartialEq)]
struct FieldTtls {
    /// `at[i]` is the deadline of the field at position `i` of the map.
    at: Vec<u64>,
    /// Fields with a deadline (the box is dropped when this reaches 0).
    count: usize,
    /// At most the earliest deadline: exact after [`Hash::remove_expired`],
    /// and possibly earlier than the truth after a deadline was removed or
    /// moved later (a lookup then finds nothing due and makes it exact).
    next: u64,
    /// The deadline this hash was last filed under in its database's index
    /// of hashes with field deadlines (see `Db::file_field_deadlines`).
    filed: Option<u64>,
}

impl Deref for Hash {
    type Target = FieldMap;

    fn deref(&self) -> &FieldMap {
        &self.fields
    }
}

impl Hash {
    /// Sets a field's value; a field that existed loses its deadline, as
    /// HSET does in Redis 7.4. Returns the old value.
    pub fn insert(&mut self, field: Bytes, value: Bytes) -> Option<Bytes> {
        let (index, old) = self.fields.insert_full(field, value);
        match &mut self.ttls {
            Some(ttls) if old.is_none() => ttls.at.push(NO_TTL),
            Some(_) => self.clear_deadline_at(index),
            None => {}
        }
        old
    }

    /// Sets a field's value keeping its deadline (HINCRBY, HINCRBYFLOAT).
    pub fn insert_keep_ttl(&mut self, field: Bytes, value: Bytes) -> Option<Bytes> {
        let old = self.fields.insert(field, value);
        if let (Some(ttls), None) = (&mut self.ttls, &old) {
            ttls.at.push(NO_TTL);
        }
        old
    }

    /// Removes a field and its deadline. Small hashes keep their order.
    pub fn remove(&mut self, field: &[u8]) -> Option<Bytes> {
        let keep_order = self.fields.len() <= SMALL_HASH_FIELDS;
        let (index, _, value) = if keep_order {
            self.fields.shift_remove_full(field)?
        } else {
            self.fields.swap_remove_full(field)?
        };
        if let Some(ttls) = &mut self.ttls {
            let at = if keep_order {
                ttls.at.remove(index)
            } else {
                ttls.at.swap_remove(index)
            };
            if at != NO_TTL {
                self.deadline_removed();
            }
        }
        Some(value)
    }

    /// The deadline of `field`, if it exists and has one.
    pub fn deadline(&self, field: &[u8]) -> Option<u64> {
        let ttls = self.ttls.as_ref()?;
        let index = self.fields.get_index_of(field)?;
        Some(ttls.at[index]).filter(|&at| at != NO_TTL)
    }

    /// Gives `field` the deadline `at` (Unix ms, not 0). False when there is
    /// no such field.
    pub fn set_deadline(&mut self, field: &[u8], at: u64) -> bool {
        debug_assert_ne!(at, NO_TTL);
        let Some(index) = self.fields.get_index_of(field) else {
            return false;
        };
        let len = self.fields.len();
        let ttls = self.ttls.get_or_insert_with(|| {
            Box::new(FieldTtls {
                at: vec![NO_TTL; len],
                count: 0,
                next: at,
                filed: None,
            })
        });
        if ttls.at[index] == NO_TTL {
            ttls.count += 1;
        }
        ttls.at[index] = at;
        ttls.next = ttls.next.min(at);
        true
    }

    /// Removes the deadline of `field`; true if it had one (HPERSIST).
    pub fn persist(&mut self, field: &[u8]) -> bool {
        match self.fields.get_index_of(field) {
            Some(index) if self.deadline_at(index).is_some() => {
                self.clear_deadline_at(index);
                true
            }
            _ => false,
        }
    }

    /// At most the earliest field deadline; None when no field has one.
    pub fn next_deadline(&self) -> Option<u64> {
        self.ttls.as_ref().map(|t| t.next)
    }

    /// Whether some field may have expired at `now_ms` (its deadline is
    /// before `now_ms`, the rule keys follow). Cheap: reads the lower bound.
    pub fn may_have_expired(&self, now_ms: u64) -> bool {
        self.next_deadline().is_some_and(|next| next < now_ms)
    }

    /// Whether every field has expired at `now_ms` (KEYS skips such a hash).
    pub fn all_expired(&self, now_ms: u64) -> bool {
        match &self.ttls {
            Some(ttls) if ttls.next < now_ms => ttls.at.iter().all(|&at| expired(at, now_ms)),
            _ => false,
        }
    }

    /// Removes every field whose deadline is before `now_ms` and makes the
    /// earliest deadline exact. Returns how many were removed.
    pub fn remove_expired(&mut self, now_ms: u64) -> usize {
        let Some(ttls) = &mut self.ttls else {
            return 0;
        };
        if ttls.next >= now_ms {
            return 0;
        }
        // `retain` keeps the order and visits the fields in position order,
        // so the deadline of the field it is looking at is `at[position]`.
        let before = self.fields.len();
        let mut position = 0;
        self.fields.retain(|_, _| {
            let keep = !expired(ttls.at[position], now_ms);
            position += 1;
            keep
        });
        ttls.at.retain(|&at| !expired(at, now_ms));
        let removed = before - self.fields.len();
        ttls.count -= removed;
        self.refresh_next();
        removed
    }

    /// The deadline this hash was last filed under in its database's index.
    pub fn filed_under(&self) -> Option<u64> {
        self.ttls.as_ref().and_then(|t| t.filed)
    }

    /// Records the deadline this hash is filed under (no effect without
    /// field deadlines).
    pub fn set_filed_under(&mut self, deadline: Option<u64>) {
        if let Some(ttls) = &mut self.ttls {
            ttls.filed = deadline;
        }
    }

    /// Rough heap footprint of the deadlines.
    pub fn deadlines_heap_size(&self) -> usize {
        self.ttls.as_ref().map_or(0, |t| {
            std::mem::size_of::<FieldTtls>() + t.at.capacity() * 8
        })
    }

    fn deadline_at(&self, index: usize) -> Option<u64> {
        let at = self.ttls.as_ref()?.at[index];
        (at != NO_TTL).then_some(at)
    }

    fn clear_deadline_at(&mut self, index: usize) {
        if let Some(ttls) = &mut self.ttls {
            if std::mem::replace(&mut ttls.at[index], NO_TTL) != NO_TTL {
                self.deadline_removed();
            }
        }
    }

    /// Bookkeeping after one deadline left: the box goes with the last one.
    /// `next` stays as it was, a valid lower bound.
    fn deadline_removed(&mut self) {
        if let Some(ttls) = &mut self.ttls {
            ttls.count -= 1;
            if ttls.count == 0 {
                self.ttls = None;
            }
        }
    }

    /// Recomputes the earliest deadline; drops the deadlines when none is left.
    fn refresh_next(&mut self) {
        let Some(ttls) = &mut self.ttls else {
            return;
        };
        match ttls.at.iter().copied().filter(|&at| at != NO_TTL).min() {
            Some(next) => ttls.next = next,
            None => self.ttls = None,
        }
    }
}

/// Whether deadline `at` (NO_TTL: none) has passed at `now_ms`.
fn expired(at: u64, now_ms: u64) -> bool {
    at != NO_TTL && at < now_ms
}

impl FromIterator<(Bytes, Bytes)> for Hash {
    fn from_iter<I: IntoIterator<Item = (Bytes, Bytes)>>(iter: I) -> Hash {
        Hash {
            fields: iter.into_iter().collect(),
            ttls: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(fields: &[&str]) -> Hash {
        fields
            .iter()
            .map(|f| {
                (
                    Bytes::copy_from_slice(f.as_bytes()),
                    Bytes::from_static(b"v"),
                )
            })
            .collect()
    }

    fn names(h: &Hash) -> Vec<&str> {
        h.keys().map(|k| std::str::from_utf8(k).unwrap()).collect()
    }

    #[test]
    fn deadlines_follow_their_fields_through_removals() {
        let mut h = hash(&["a", "b", "c", "d"]);
        assert!(h.set_deadline(b"b", 200));
        assert!(h.set_deadline(b"d", 400));
        assert!(!h.set_deadline(b"zz", 1));
        h.remove(b"a");
        assert_eq!(names(&h), ["b", "c", "d"]);
        assert_eq!(
            (h.deadline(b"b"), h.deadline(b"c"), h.deadline(b"d")),
            (Some(200), None, Some(400))
        );
        h.insert(Bytes::from_static(b"e"), Bytes::from_static(b"v"));
        assert_eq!(h.deadline(b"e"), None);
        assert_eq!(h.next_deadline(), Some(200));
    }

    #[test]
    fn large_hashes_swap_remove_and_keep_deadlines_aligned() {
        let names: Vec<String> = (0..200).map(|i| format!("f{i}")).collect();
        let mut h = hash(&names.iter().map(String::as_str).collect::<Vec<_>>());
        for i in (0..200).step_by(2) {
            h.set_deadline(format!("f{i}").as_bytes(), 1_000 + i as u64);
        }
        // Swap-removes move the last field into the hole.
        for i in 0..50 {
            h.remove(format!("f{i}").as_bytes());
        }
        for i in 50..200u64 {
            let want = (i % 2 == 0).then_some(1_000 + i);
            assert_eq!(h.deadline(format!("f{i}").as_bytes()), want, "f{i}");
        }
    }

    #[test]
    fn overwriting_clears_the_deadline_and_increments_keep_it() {
        let mut h = hash(&["a", "b"]);
        h.set_deadline(b"a", 100);
        h.set_deadline(b"b", 100);
        h.insert_keep_ttl(Bytes::from_static(b"a"), Bytes::from_static(b"2"));
        assert_eq!(h.deadline(b"a"), Some(100));
        h.insert(Bytes::from_static(b"a"), Bytes::from_static(b"3"));
        assert_eq!(h.deadline(b"a"), None);
        assert!(h.persist(b"b"));
        assert!(!h.persist(b"b"));
        assert_eq!(
            h.next_deadline(),
            None,
            "no deadline left: nothing allocated"
        );
    }

    #[test]
    fn the_earliest_deadline_is_a_lower_bound_made_exact_by_a_purge() {
        let mut h = hash(&["a", "b", "c"]);
        h.set_deadline(b"a", 100);
        h.set_deadline(b"b", 300);
        h.set_deadline(b"c", 500);
        h.persist(b"a");
        assert_eq!(h.next_deadline(), Some(100), "stale but below the truth");
        assert!(h.may_have_expired(101));
        assert_eq!(h.remove_expired(101), 0);
        assert_eq!(h.next_deadline(), Some(300));
        assert!(!h.may_have_expired(300), "due only after the deadline");
        assert_eq!(h.remove_expired(301), 1);
        assert_eq!(names(&h), ["a", "c"]);
        assert_eq!(h.deadline(b"c"), Some(500));
        assert!(!h.all_expired(501), "a has no deadline");
        assert_eq!(h.remove_expired(600), 1);
        assert_eq!(h.next_deadline(), None);
        assert_eq!(names(&h), ["a"]);
    }

    #[test]
    fn purging_keeps_the_order_of_the_survivors() {
        let mut h = hash(&["a", "b", "c", "d", "e"]);
        h.set_deadline(b"b", 10);
        h.set_deadline(b"d", 10);
        h.set_deadline(b"e", 90);
        assert_eq!(h.remove_expired(50), 2);
        assert_eq!(names(&h), ["a", "c", "e"]);
        assert_eq!(h.deadline(b"e"), Some(90));
        let mut all = hash(&["x", "y"]);
        all.set_deadline(b"x", 5);
        all.set_deadline(b"y", 7);
        assert!(all.all_expired(8));
        assert_eq!(all.remove_expired(8), 2);
        assert!(all.is_empty());
    }
}
