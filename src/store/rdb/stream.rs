//! A stream's RDB encoding, both ways. ember writes Redis 7.0's
//! `STREAM_LISTPACKS_2` (type 19) and reads it, 5.0's `STREAM_LISTPACKS`
//! (15) and 7.2's `STREAM_LISTPACKS_3` (21).
//!
//! ```text
//!   <nodes: len> (<master ID: 16-byte BE string> <listpack: string>)*
//!   <length: len> <last ID: len len>
//!   [19+] <first ID: len len> <max deleted ID: len len> <entries added: len>
//!   <groups: len> per group:
//!     <name: string> <last ID: len len> [19+] <entries read: len, 2^64-1 = unknown>
//!     <PEL: len> (<ID: 16 raw BE bytes> <delivery time: ms LE u64> <deliveries: len>)*
//!     <consumers: len> per consumer:
//!       <name: string> <seen time: ms> [21] <active time: ms>
//!       <PEL: len> (<ID: 16 raw BE bytes>)*
//!
//!   a node's listpack:
//!     master entry: <live count> <deleted count> <fields: n> <field>* 0
//!     then per entry: <flags> <ms - master ms> <seq - master seq>
//!       flags & SAMEFIELDS: <value>* (the master's fields)
//!       else:               <fields: n> (<field> <value>)*
//!       <elements in the entry before this one>
//! ```
//!
//! ember writes every node with only its live entries (deleted ones are
//! dropped, as a fresh node would be); Redis reads that as any node.

use bytes::Bytes;

use super::listpack::{self, Writer};
use super::reader::Reader;
use super::types::{STREAM_LISTPACKS, STREAM_LISTPACKS_2, STREAM_LISTPACKS_3};
use super::writer::{put_len, put_string};
use super::{BadData, Elem};
use crate::store::stream::{Consumer, Group, Pending, Stream, StreamId};
use crate::store::value::Value;

const FLAG_DELETED: i64 = 1;
const FLAG_SAMEFIELDS: i64 = 2;
/// Redis's `SCG_INVALID_ENTRIES_READ` (-1) as the length it writes.
const UNKNOWN_READ: u64 = u64::MAX;

/// Appends the type byte and body of `stream`.
pub fn put_stream(out: &mut Vec<u8>, stream: &Stream) {
    out.push(STREAM_LISTPACKS_2);
    let masters: Vec<StreamId> = stream.nodes().map(|(m, _)| *m).collect();
    put_len(out, masters.len() as u64);
    for (i, (master, node)) in stream.nodes().enumerate() {
        let end = masters.get(i + 1).and_then(|m| m.prev());
        let mut lp = Writer::default();
        lp.push_int(node.live as i64);
        lp.push_int(0);
        lp.push_int(node.fields.len() as i64);
        for f in node.fields.iter() {
            lp.push(f);
        }
        lp.push_int(0);
        for (id, fv) in stream.range(*master, end.unwrap_or(StreamId::MAX), false) {
            let same = fv.len() / 2 == node.fields.len()
                && fv
                    .iter()
                    .step_by(2)
                    .zip(node.fields.iter())
                    .all(|(a, b)| a == b);
            lp.push_int(if same { FLAG_SAMEFIELDS } else { 0 });
            lp.push_int(id.ms.wrapping_sub(master.ms) as i64);
            lp.push_int(id.seq.wrapping_sub(master.seq) as i64);
            if same {
                for v in fv.iter().skip(1).step_by(2) {
                    lp.push(v);
                }
                lp.push_int(3 + (fv.len() / 2) as i64);
            } else {
                lp.push_int((fv.len() / 2) as i64);
                for x in fv.iter() {
                    lp.push(x);
                }
                lp.push_int(4 + fv.len() as i64);
            }
        }
        put_string(out, &master.to_be_bytes());
        put_string(out, &lp.finish());
    }
    put_len(out, stream.len() as u64);
    put_id(out, stream.last_id);
    put_id(out, stream.first_id());
    put_id(out, stream.max_deleted);
    put_len(out, stream.entries_added);
    put_len(out, stream.groups.len() as u64);
    for (name, group) in &stream.groups {
        put_string(out, name);
        put_id(out, group.last_id);
        put_len(out, group.entries_read.unwrap_or(UNKNOWN_READ));
        put_len(out, group.pel.len() as u64);
        for (id, p) in &group.pel {
            out.extend_from_slice(&id.to_be_bytes());
            out.extend_from_slice(&p.delivery_time.to_le_bytes());
            put_len(out, p.delivery_count);
        }
        put_len(out, group.consumers.len() as u64);
        for (name, c) in &group.consumers {
            put_string(out, name);
            out.extend_from_slice(&c.seen_time.to_le_bytes());
            put_len(out, c.pel.len() as u64);
            for id in &c.pel {
                out.extend_from_slice(&id.to_be_bytes());
            }
        }
    }
}

fn put_id(out: &mut Vec<u8>, id: StreamId) {
    put_len(out, id.ms);
    put_len(out, id.seq);
}

fn get_id(r: &mut Reader<'_>) -> Result<StreamId, BadData> {
    Ok(StreamId::new(r.length()?, r.length()?))
}

fn raw_id(r: &mut Reader<'_>) -> Result<StreamId, BadData> {
    StreamId::from_be_bytes(r.take(16)?).ok_or(BadData("stream ID"))
}

fn int(e: Option<&Elem<'_>>) -> Result<i64, BadData> {
    match e {
        Some(Elem::Int(v)) => Ok(*v),
        Some(Elem::Str(s)) => crate::util::num::parse_i64(s).ok_or(BadData("stream node integer")),
        None => Err(BadData("stream node cut short")),
    }
}

fn text(e: Option<&Elem<'_>>) -> Result<Bytes, BadData> {
    e.map(Elem::to_bytes)
        .ok_or(BadData("stream node cut short"))
}

/// Decodes a stream body of type `kind` (15, 19 or 21).
pub fn decode_stream(kind: u8, r: &mut Reader<'_>) -> Result<Value, BadData> {
    let mut s = Stream::default();
    let nodes = r.count(2)?;
    for _ in 0..nodes {
        let key = r.string()?;
        let master = StreamId::from_be_bytes(&key).ok_or(BadData("stream node key"))?;
        let blob = r.string()?;
        load_node(&mut s, master, &listpack::entries(&blob)?)?;
    }
    let _length = r.length()?;
    s.last_id = get_id(r)?;
    if kind == STREAM_LISTPACKS {
        s.entries_added = s.len() as u64;
    } else {
        let _first = get_id(r)?;
        s.max_deleted = get_id(r)?;
        s.entries_added = r.length()?;
    }
    if s.last().is_some_and(|(id, _)| id > s.last_id) {
        return Err(BadData("stream entry above its last ID"));
    }
    let groups = r.count(1)?;
    for _ in 0..groups {
        let name = Bytes::from(r.string()?.into_owned());
        let last_id = get_id(r)?;
        let entries_read = if kind == STREAM_LISTPACKS {
            s.entries_read_at(last_id)
        } else {
            match r.length()? {
                UNKNOWN_READ => None,
                n => Some(n),
            }
        };
        let mut group = Group::new(last_id, entries_read);
        let pel = r.count(17)?;
        for _ in 0..pel {
            let id = raw_id(r)?;
            let delivery_time = r.millis()?;
            let delivery_count = r.length()?;
            let p = Pending {
                consumer: Bytes::new(),
                delivery_time,
                delivery_count,
            };
            if group.pel.insert(id, p).is_some() {
                return Err(BadData("an ID twice in a group's PEL"));
            }
        }
        let consumers = r.count(1)?;
        for _ in 0..consumers {
            let cname = Bytes::from(r.string()?.into_owned());
            let seen_time = r.millis()?;
            if kind == STREAM_LISTPACKS_3 {
                r.millis()?;
            }
            let mut c = Consumer {
                seen_time,
                ..Consumer::default()
            };
            let owned = r.count(16)?;
            for _ in 0..owned {
                let id = raw_id(r)?;
                let p = group
                    .pel
                    .get_mut(&id)
                    .ok_or(BadData("a consumer's ID not in its group's PEL"))?;
                if !p.consumer.is_empty() {
                    return Err(BadData("a pending ID owned twice"));
                }
                p.consumer = cname.clone();
                c.pel.insert(id);
            }
            if group.consumers.insert(cname, c).is_some() {
                return Err(BadData("a consumer twice"));
            }
        }
        if group.pel.values().any(|p| p.consumer.is_empty()) {
            return Err(BadData("a pending ID without a consumer"));
        }
        if s.groups.insert(name, group).is_some() {
            return Err(BadData("a group twice"));
        }
    }
    debug_assert!(matches!(
        kind,
        STREAM_LISTPACKS | STREAM_LISTPACKS_2 | STREAM_LISTPACKS_3
    ));
    Ok(Value::Stream(Box::new(s)))
}

/// One node's listpack into `s`, its live entries only.
fn load_node(s: &mut Stream, master: StreamId, lp: &[Elem<'_>]) -> Result<(), BadData> {
    let bad = |why| Err(BadData(why));
    if lp.is_empty() {
        return bad("empty stream node");
    }
    if s.last().is_some_and(|(id, _)| id >= master) {
        return bad("stream nodes out of order");
    }
    let mut it = lp.iter().peekable();
    let live = int(it.next())?;
    let deleted = int(it.next())?;
    let nfields = usize::try_from(int(it.next())?).map_err(|_| BadData("field count"))?;
    if nfields > lp.len() {
        return bad("field count");
    }
    let mut fields = Vec::with_capacity(nfields);
    for _ in 0..nfields {
        fields.push(text(it.next())?);
    }
    if int(it.next())? != 0 {
        return bad("master entry terminator");
    }
    let mut seen_live = 0i64;
    let mut seen_deleted = 0i64;
    let mut last: Option<StreamId> = None;
    while it.peek().is_some() {
        let flags = int(it.next())?;
        let ms = master.ms.wrapping_add(int(it.next())? as u64);
        let seq = master.seq.wrapping_add(int(it.next())? as u64);
        let id = StreamId::new(ms, seq);
        if id < master || last.is_some_and(|l| l >= id) {
            return bad("stream entries out of order");
        }
        last = Some(id);
        let mut fv = Vec::new();
        if flags & FLAG_SAMEFIELDS != 0 {
            for f in &fields {
                fv.push(f.clone());
                fv.push(text(it.next())?);
            }
        } else {
            let n = usize::try_from(int(it.next())?).map_err(|_| BadData("field count"))?;
            if n == 0 || n > lp.len() {
                return bad("entry field count");
            }
            for _ in 0..2 * n {
                fv.push(text(it.next())?);
            }
        }
        int(it.next())?;
        if flags & FLAG_DELETED != 0 {
            seen_deleted += 1;
        } else {
            seen_live += 1;
            s.load_entry(master, id, fv);
        }
    }
    if seen_live != live || seen_deleted != deleted || live == 0 {
        return bad("stream node counts");
    }
    Ok(())
}
