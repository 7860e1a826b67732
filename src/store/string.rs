//! A stored string: short ones inside the value, longer ones in a buffer.
//!
//! Most cached values are short (counters, flags, ids, small JSON), and a
//! string in its own heap buffer costs the buffer (a jemalloc size class of
//! at least its length) on top of the 32-byte `Bytes` handle in the slot.
//! A string of up to [`INLINE_MAX`] bytes is kept in the value's own 40
//! bytes instead, so a 32-byte value costs nothing beyond its slot. Longer
//! strings stay a `Bytes`, which a large reply shares rather than copies.
//!
//! Where a string lives is invisible outside this module: OBJECT ENCODING
//! comes from its [`StrForm`] and length only (as Redis's `int` / `embstr` /
//! `raw` come from how the string was written), and DUMP, RDB and AOF
//! write the bytes. Every write goes through [`Str::edit`], which puts the
//! result back inline when it is short, so a string is inline exactly when
//! it is at most [`INLINE_MAX`] bytes long.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

/// The longest string kept inline: what fits in the value's 40 bytes beside
/// its length, its form and the tag (`Value` stays 40 bytes; a unit test
/// holds it there).
pub const INLINE_MAX: usize = 37;

/// Strings up to this length get as much room again as they hold when they
/// grow in place; longer ones get this much (Redis's `SDS_MAX_PREALLOC`,
/// 1 MiB).
const GROW_ROOM_MAX: usize = 1024 * 1024;

/// How a string was written. Redis chooses a string's encoding when it is
/// written and keeps it, so OBJECT ENCODING depends on the command that made
/// the value, not only on its bytes. It costs nothing: it sits beside the
/// length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrForm {
    /// Stored as a client sent it or as an integer result (SET, MSET, INCR,
    /// APPEND creating the key, ...): `int` when it is an integer that fits
    /// a long, else `embstr` up to 44 bytes, else `raw`.
    Given,
    /// Formatted as a number's text (INCRBYFLOAT): `embstr` up to 44
    /// bytes, else `raw`, never `int`.
    Text,
    /// Edited in place (APPEND to a string, SETRANGE): `raw` at any length.
    Raw,
}

#[derive(Clone)]
pub struct Str(Repr);

#[derive(Clone)]
enum Repr {
    /// `form` doubles as the tag's niche, so the whole is 40 bytes.
    Inline {
        form: StrForm,
        len: u8,
        bytes: [u8; INLINE_MAX],
    },
    Heap(Bytes, StrForm),
}

impl Str {
    /// `bytes` as a string of `form`: copied inline when short (so a short
    /// value never holds on to a larger buffer it was cut from).
    pub fn new(bytes: Bytes, form: StrForm) -> Str {
        match inline(&bytes, form) {
            Some(s) => s,
            None => Str(Repr::Heap(bytes, form)),
        }
    }

    /// A copy of `bytes`.
    pub fn copy_of(bytes: &[u8], form: StrForm) -> Str {
        match inline(bytes, form) {
            Some(s) => s,
            None => Str(Repr::Heap(Bytes::copy_from_slice(bytes), form)),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes, .. } => &bytes[..usize::from(*len)],
            Repr::Heap(bytes, _) => bytes,
        }
    }

    pub fn form(&self) -> StrForm {
        match &self.0 {
            Repr::Inline { form, .. } | Repr::Heap(_, form) => *form,
        }
    }

    pub fn set_form(&mut self, to: StrForm) {
        match &mut self.0 {
            Repr::Inline { form, .. } | Repr::Heap(_, form) => *form = to,
        }
    }

    /// The bytes as a `Bytes`: the same buffer for a long string (a
    /// reference count), a copy of a short one.
    pub fn to_bytes(&self) -> Bytes {
        match &self.0 {
            Repr::Inline { .. } => Bytes::copy_from_slice(self.as_bytes()),
            Repr::Heap(bytes, _) => bytes.clone(),
        }
    }

    /// The string as a `Bytes`, without a copy for a long one.
    pub fn into_bytes(self) -> Bytes {
        match self.0 {
            Repr::Inline { .. } => Bytes::copy_from_slice(self.as_bytes()),
            Repr::Heap(bytes, _) => bytes,
        }
    }

    /// Whether the string lives in a buffer of its own.
    pub fn is_heap(&self) -> bool {
        matches!(self.0, Repr::Heap(..))
    }

    /// Runs `f` on the string as a buffer with room for at least `room`
    /// bytes, then keeps what `f` left (inline again when it is short). A
    /// long string's buffer is taken over without a copy when nothing else
    /// holds it (a reply still being written may). Room grows as Redis's
    /// sds grows: n appends to a string copy it O(log n) times while it is
    /// short and once a MiB after that, where building a new value per
    /// append copied the whole string every time (1,024 appends of 16 KB
    /// moved 8 GB; 10 one-byte appends to 128 MB moved 1.3 GB).
    pub fn edit<T>(&mut self, room: usize, f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let form = self.form();
        let mut buf: Vec<u8> = match std::mem::replace(&mut self.0, EMPTY) {
            Repr::Inline { len, bytes, .. } => bytes[..usize::from(len)].to_vec(),
            Repr::Heap(bytes, _) => bytes.into(),
        };
        if buf.capacity() < room {
            let grown = if room < GROW_ROOM_MAX {
                room * 2
            } else {
                room + GROW_ROOM_MAX
            };
            buf.reserve_exact(grown - buf.len());
        }
        let out = f(&mut buf);
        *self = match inline(&buf, form) {
            Some(s) => s,
            None => Str(Repr::Heap(Bytes::from(buf), form)),
        };
        out
    }

    /// Heap bytes the string holds beyond its value (memory accounting).
    pub fn heap_size(&self) -> usize {
        match &self.0 {
            Repr::Inline { .. } => 0,
            Repr::Heap(bytes, _) => bytes.len(),
        }
    }
}

const EMPTY: Repr = Repr::Inline {
    form: StrForm::Raw,
    len: 0,
    bytes: [0; INLINE_MAX],
};

fn inline(from: &[u8], form: StrForm) -> Option<Str> {
    (from.len() <= INLINE_MAX).then(|| {
        let mut bytes = [0; INLINE_MAX];
        bytes[..from.len()].copy_from_slice(from);
        Str(Repr::Inline {
            form,
            len: from.len() as u8,
            bytes,
        })
    })
}

impl Deref for Str {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Str {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Equal when bytes and form are; where the bytes live does not count.
impl PartialEq for Str {
    fn eq(&self, other: &Str) -> bool {
        self.as_bytes() == other.as_bytes() && self.form() == other.form()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}/{:?}",
            bytes::Bytes::copy_from_slice(self),
            self.form()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_takes_40_bytes_whatever_its_length() {
        assert_eq!(std::mem::size_of::<Str>(), 40);
    }

    #[test]
    fn short_strings_are_inline_and_long_ones_keep_their_buffer() {
        for len in [0, 1, INLINE_MAX - 1, INLINE_MAX, INLINE_MAX + 1, 4096] {
            let bytes = Bytes::from((0..len).map(|i| i as u8).collect::<Vec<u8>>());
            let s = Str::new(bytes.clone(), StrForm::Text);
            assert_eq!(s.as_bytes(), &bytes[..]);
            assert_eq!(s.is_heap(), len > INLINE_MAX, "{len}");
            assert_eq!(s.heap_size(), if len > INLINE_MAX { len } else { 0 });
            assert_eq!(s.form(), StrForm::Text);
            assert_eq!(s.to_bytes(), bytes);
            assert_eq!(Str::copy_of(&bytes, StrForm::Text), s);
            if len > INLINE_MAX {
                assert_eq!(s.to_bytes().as_ptr(), bytes.as_ptr(), "shared, not copied");
            }
        }
    }

    #[test]
    fn edits_cross_the_inline_limit_both_ways() {
        let mut s = Str::copy_of(b"12345", StrForm::Given);
        // Grows past the limit: moves to the heap, with room to grow on.
        s.edit(50, |buf| buf.resize(50, b'x'));
        assert!(s.is_heap());
        assert_eq!(s.len(), 50);
        assert_eq!(&s[..5], b"12345");
        // Shrinks back under it: inline again.
        s.edit(0, |buf| buf.truncate(INLINE_MAX));
        assert!(!s.is_heap());
        assert_eq!(s.len(), INLINE_MAX);
        s.set_form(StrForm::Raw);
        let out = s.edit(INLINE_MAX + 1, |buf| {
            buf.push(b'!');
            buf.len()
        });
        assert_eq!(out, INLINE_MAX + 1);
        assert!(s.is_heap());
        assert_eq!(s.form(), StrForm::Raw, "the form survives edits");
        assert_eq!(s.last(), Some(&b'!'));
    }

    #[test]
    fn appends_to_a_long_string_reuse_its_buffer() {
        let mut s = Str::copy_of(&[b'a'; 100], StrForm::Raw);
        s.edit(101, |buf| buf.push(b'b'));
        let at = s.as_ptr();
        for _ in 0..50 {
            s.edit(s.len() + 1, |buf| buf.push(b'c'));
        }
        assert_eq!(s.as_ptr(), at, "the room reserved took every append");
        assert_eq!(s.len(), 151);
    }
}
