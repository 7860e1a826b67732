//! Redis's serialization of one value (its RDB encoding) and the DUMP
//! payload around it: what DUMP returns and RESTORE takes, and what RDB
//! snapshots and replication full syncs will write per key.
//!
//! # A DUMP payload
//!
//! ```text
//!   <type: u8> <the value's body> <RDB version: u16 LE> <CRC-64: u64 LE>
//! ```
//!
//! The checksum (`crc64`, CRC-64/Jones) covers everything before it. A
//! reader refuses a payload from a newer RDB version than it knows, or one
//! whose checksum is wrong, before looking at the body ([`restore`] then
//! answers [`RestoreError::VersionOrChecksum`]); a body that does not decode
//! is [`RestoreError::BadData`]. Like redis-server, bytes between the value
//! and the footer are ignored. Unlike it, the body must hold the whole
//! value: redis-server reads a value cut short on into the footer's bytes
//! (a string claiming five bytes of which three are there takes the
//! version's two), ember refuses it.
//!
//! # Hostile input
//!
//! A payload comes from a client. Decoding never panics; every length is
//! checked against the bytes left before anything is allocated for it;
//! every loop consumes input, so none outlives the payload; blobs
//! (listpacks, ziplists, intsets) are validated whole before a value is
//! built from them. The property tests in `tests` feed random and mutated
//! payloads to the decoder.
//!
//! # Layout
//!
//! - `reader` / `writer`: the primitives (lengths, strings with their
//!   integer and LZF forms, doubles), every read bounded by the bytes left.
//! - `lzf`: the compression strings may use; `crc64`: the footer.
//! - `listpack`, `ziplist`, `intset`, `zipmap`: Redis's compact blobs (a
//!   listpack and an intset both ways, the older two read only).
//! - `stream`: a stream's nodes, metadata and consumer groups.
//! - `decode`: a type byte and body to a [`Value`]; `encode`: the reverse.
//!
//! # Encodings, both ways
//!
//! | type | read | written by ember |
//! |---|---|---|
//! | string | raw, int8/16/32, LZF | as Redis: integer, LZF when it saves 4+ bytes, raw |
//! | list | `LIST`, `LIST_ZIPLIST`, `LIST_QUICKLIST` (ziplists), `LIST_QUICKLIST_2` (listpack and plain nodes) | `LIST_QUICKLIST_2`, listpack nodes of at most 8 KiB (Redis's `list-max-listpack-size -2`) |
//! | set | `SET`, `SET_INTSET`, `SET_LISTPACK` (7.2) | `SET_INTSET` while it is an intset (`OBJECT ENCODING`), else `SET` |
//! | sorted set | `ZSET`, `ZSET_2`, `ZSET_ZIPLIST`, `ZSET_LISTPACK` | `ZSET_LISTPACK` while compact, else `ZSET_2` |
//! | stream | `STREAM_LISTPACKS` (5.0), `STREAM_LISTPACKS_2` (7.0), `STREAM_LISTPACKS_3` (7.2) | `STREAM_LISTPACKS_2`, one listpack per node (`stream`) |
//! | hash | `HASH`, `HASH_ZIPMAP`, `HASH_ZIPLIST`, `HASH_LISTPACK`, 7.4's `HASH_METADATA` and `HASH_LISTPACK_EX` (and their pre-GA forms) | `HASH_LISTPACK` while compact, else `HASH`; with field TTLs, `HASH_METADATA` |
//!
//! ember writes RDB version 10 (Redis 7.0's) for everything but a hash
//! whose fields have TTLs: that needs Redis 7.4's `HASH_METADATA` and so
//! version 12, which redis-server 7.0 refuses (its version check) and 7.4
//! reads. ember reads versions up to 12. Module values decode to
//! `BadData`: ember has none.

pub mod crc64;
pub mod decode;
pub mod encode;
pub mod functions;
pub mod intset;
pub mod listpack;
pub mod lzf;
pub mod reader;
pub mod stream;
pub mod writer;
pub mod ziplist;
pub mod zipmap;

use bytes::Bytes;

use super::hash::ListpackLimits;
use super::value::Value;

pub use decode::decode_value;
pub use encode::encode_value;

/// The newest RDB version this code reads: Redis 7.4's.
pub const RDB_VERSION: u16 = 12;
/// The version ember's payloads carry (Redis 7.0's), unless the value
/// needs a newer one.
pub const RDB_VERSION_7_0: u16 = 10;

/// Object types: the first byte of a payload.
pub mod types {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const MODULE_PRE_GA: u8 = 6;
    pub const MODULE_2: u8 = 7;
    pub const HASH_ZIPMAP: u8 = 9;
    pub const LIST_ZIPLIST: u8 = 10;
    pub const SET_INTSET: u8 = 11;
    pub const ZSET_ZIPLIST: u8 = 12;
    pub const HASH_ZIPLIST: u8 = 13;
    pub const LIST_QUICKLIST: u8 = 14;
    pub const STREAM_LISTPACKS: u8 = 15;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const STREAM_LISTPACKS_2: u8 = 19;
    pub const SET_LISTPACK: u8 = 20;
    pub const STREAM_LISTPACKS_3: u8 = 21;
    pub const HASH_METADATA_PRE_GA: u8 = 22;
    pub const HASH_LISTPACK_EX_PRE_GA: u8 = 23;
    pub const HASH_METADATA: u8 = 24;
    pub const HASH_LISTPACK_EX: u8 = 25;
}

/// A body that does not decode; the reason is for tests and logs, clients
/// get Redis's one `Bad data format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadData(pub &'static str);

impl std::fmt::Display for BadData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Why RESTORE refuses a payload, in Redis's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestoreError {
    /// Too short for a footer, from a newer RDB version, or a wrong checksum.
    VersionOrChecksum,
    /// The body does not decode to a value ember can hold.
    BadData(BadData),
}

impl RestoreError {
    /// The error reply Redis gives.
    pub fn message(&self) -> &'static str {
        match self {
            RestoreError::VersionOrChecksum => "ERR DUMP payload version or checksum are wrong",
            RestoreError::BadData(_) => "ERR Bad data format",
        }
    }
}

/// Settings that choose the form a decoded value takes in memory.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// `hash-max-listpack-*`: whether a decoded hash stays compact.
    pub hash: ListpackLimits,
}

/// One element of a listpack or ziplist: stored as text, or as an integer
/// the reader formats back to its canonical text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem<'a> {
    Str(&'a [u8]),
    Int(i64),
}

impl Elem<'_> {
    /// The element's text.
    pub fn to_vec(&self) -> Vec<u8> {
        match *self {
            Elem::Str(s) => s.to_vec(),
            Elem::Int(v) => {
                let mut out = Vec::with_capacity(20);
                crate::util::num::format_i64(v, &mut out);
                out
            }
        }
    }

    /// The element's text, borrowed when it is stored as text.
    pub fn text(&self) -> std::borrow::Cow<'_, [u8]> {
        match *self {
            Elem::Str(s) => std::borrow::Cow::Borrowed(s),
            Elem::Int(_) => std::borrow::Cow::Owned(self.to_vec()),
        }
    }

    pub fn to_bytes(&self) -> Bytes {
        match *self {
            Elem::Str(s) => Bytes::copy_from_slice(s),
            Elem::Int(_) => Bytes::from(self.to_vec()),
        }
    }
}

/// DUMP: the payload of `value`.
pub fn dump(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let version = encode_value(value, &mut out);
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// RESTORE: the value in `payload`, after its version and checksum are
/// checked. A hash may come with field deadlines already past; the caller
/// drops them (it knows the time).
pub fn restore(payload: &[u8], limits: &Limits) -> Result<Value, RestoreError> {
    let body = verify(payload)?;
    let mut r = reader::Reader::new(body);
    let kind = r.u8().map_err(RestoreError::BadData)?;
    decode_value(kind, &mut r, limits).map_err(RestoreError::BadData)
}

/// The body of a payload whose footer is right.
fn verify(payload: &[u8]) -> Result<&[u8], RestoreError> {
    // Version (2) and checksum (8) at least.
    const FOOTER: usize = 10;
    if payload.len() < FOOTER {
        return Err(RestoreError::VersionOrChecksum);
    }
    let (covered, crc) = payload.split_at(payload.len() - 8);
    let (body, version) = covered.split_at(covered.len() - 2);
    let version = u16::from_le_bytes([version[0], version[1]]);
    let mut stored = [0u8; 8];
    stored.copy_from_slice(crc);
    if version > RDB_VERSION || crc64::crc64(0, covered) != u64::from_le_bytes(stored) {
        return Err(RestoreError::VersionOrChecksum);
    }
    Ok(body)
}

#[cfg(test)]
mod tests;
