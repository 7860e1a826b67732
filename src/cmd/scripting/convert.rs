//! The conversions between replies and Lua values, as Redis documents them.
//!
//! A command's reply to Lua (`to_lua`), per the protocol the script chose
//! with `redis.setresp`: RESP2 integers to numbers, bulk strings to strings,
//! arrays to tables, status to `{ok=...}`, errors to `{err=...}`, nil to
//! `false`; RESP3 adds maps `{map=...}`, sets `{set=...}`, doubles
//! `{double=...}`, booleans, and nil as `nil`. RESP3-only replies seen under
//! RESP2 arrive as a RESP2 client would read them.
//!
//! A script's result to the client (`to_frame`): numbers truncated to
//! integers, strings to bulk strings, tables to arrays (up to the first
//! nil) unless they carry `err`, `ok`, `double`, `map` or `set`, `true` to
//! 1 and `false` to nil (RESP3 booleans after `setresp(3)`).

use bytes::Bytes;
use mlua::{Lua, Table, Value};

use crate::resp::{encode, Frame, Protocol};

/// Replies nest at most this deep into Lua (Redis's own guard against a
/// stack overflow is similar).
const MAX_DEPTH: usize = 1000;

fn tagged(lua: &Lua, tag: &str, v: impl mlua::IntoLua) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(tag, v)?;
    Ok(Value::Table(t))
}

/// `frame` as a Lua value under protocol `resp3`.
pub fn to_lua(lua: &Lua, frame: &Frame, resp3: bool) -> mlua::Result<Value> {
    to_lua_at(lua, frame, resp3, 0)
}

fn array(lua: &Lua, items: &[Frame], resp3: bool, depth: usize) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, f) in items.iter().enumerate() {
        t.raw_set(i + 1, to_lua_at(lua, f, resp3, depth + 1)?)?;
    }
    Ok(Value::Table(t))
}

fn to_lua_at(lua: &Lua, frame: &Frame, resp3: bool, depth: usize) -> mlua::Result<Value> {
    if depth > MAX_DEPTH {
        return tagged(lua, "err", "ERR reached lua stack limit");
    }
    Ok(match frame {
        Frame::Simple(s) => tagged(lua, "ok", *s)?,
        Frame::SimpleOwned(s) => tagged(lua, "ok", s.as_str())?,
        Frame::Error(e) => tagged(lua, "err", e.as_str())?,
        Frame::ErrorBytes(e) => tagged(lua, "err", lua.create_string(e)?)?,
        Frame::Integer(i) => Value::Number(*i as f64),
        Frame::Bulk(b) => Value::String(lua.create_string(b)?),
        Frame::Null | Frame::NullArray if resp3 => Value::Nil,
        Frame::Null | Frame::NullArray => Value::Boolean(false),
        Frame::Array(items) | Frame::Push(items) => array(lua, items, resp3, depth)?,
        Frame::Set(items) if resp3 => {
            let set = lua.create_table()?;
            for f in items {
                set.raw_set(to_lua_at(lua, f, resp3, depth + 1)?, true)?;
            }
            tagged(lua, "set", set)?
        }
        Frame::Set(items) => array(lua, items, resp3, depth)?,
        Frame::Map(pairs) if resp3 => {
            let map = lua.create_table()?;
            for (k, v) in pairs {
                map.raw_set(
                    to_lua_at(lua, k, resp3, depth + 1)?,
                    to_lua_at(lua, v, resp3, depth + 1)?,
                )?;
            }
            tagged(lua, "map", map)?
        }
        Frame::Map(pairs) | Frame::Pairs(pairs) if !resp3 => {
            let flat: Vec<Frame> = pairs
                .iter()
                .flat_map(|(k, v)| [k.clone(), v.clone()])
                .collect();
            array(lua, &flat, resp3, depth)?
        }
        Frame::Pairs(pairs) => {
            let nested: Vec<Frame> = pairs
                .iter()
                .map(|(k, v)| Frame::Array(vec![k.clone(), v.clone()]))
                .collect();
            array(lua, &nested, resp3, depth)?
        }
        Frame::Double(d) if resp3 => tagged(lua, "double", *d)?,
        Frame::Boolean(b) if resp3 => Value::Boolean(*b),
        Frame::Boolean(b) => Value::Number(*b as i64 as f64),
        Frame::Sequence(items) => match items.last() {
            Some(f) => to_lua_at(lua, f, resp3, depth)?,
            None => Value::Nil,
        },
        // Doubles, formatted doubles and verbatim strings under RESP2: the
        // bulk string a RESP2 client reads.
        other => Value::String(lua.create_string(resp2_bulk(other))?),
    })
}

/// The payload of the bulk string `frame` encodes to in RESP2.
fn resp2_bulk(frame: &Frame) -> Vec<u8> {
    let mut wire = Vec::new();
    encode(frame, Protocol::Resp2, &mut wire);
    match wire.iter().position(|&b| b == b'\n') {
        Some(nl) if wire.len() >= nl + 3 => wire[nl + 1..wire.len() - 2].to_vec(),
        _ => wire,
    }
}

/// A script's result as the reply to its client; `resp3` is the protocol
/// the script set (booleans differ).
pub fn to_frame(lua: &Lua, v: &Value, resp3: bool) -> Frame {
    to_frame_at(lua, v, resp3, 0)
}

fn text(t: &Table, field: &str) -> Option<Vec<u8>> {
    match t.raw_get::<Value>(field).ok()? {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        _ => None,
    }
}

fn to_frame_at(lua: &Lua, v: &Value, resp3: bool, depth: usize) -> Frame {
    if depth > MAX_DEPTH {
        return Frame::error("ERR reached lua stack limit");
    }
    match v {
        Value::Boolean(b) if resp3 => Frame::Boolean(*b),
        Value::Boolean(true) => Frame::Integer(1),
        Value::Boolean(false) | Value::Nil => Frame::Null,
        Value::Integer(i) => Frame::Integer(*i),
        Value::Number(f) => Frame::Integer(*f as i64),
        Value::String(s) => Frame::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Table(t) => table_frame(lua, t, resp3, depth),
        _ => Frame::Null,
    }
}

/// One line: Redis turns the line breaks of status and error texts into
/// spaces, so the reply stays one RESP line.
fn one_line(mut s: Vec<u8>) -> Vec<u8> {
    for b in s.iter_mut() {
        if *b == b'\r' || *b == b'\n' {
            *b = b' ';
        }
    }
    s
}

fn table_frame(lua: &Lua, t: &Table, resp3: bool, depth: usize) -> Frame {
    if let Some(e) = text(t, "err") {
        return Frame::ErrorBytes(one_line(e));
    }
    if let Some(ok) = text(t, "ok") {
        return Frame::SimpleOwned(String::from_utf8_lossy(&one_line(ok)).into_owned());
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        return Frame::Double(d);
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        return Frame::Double(d as f64);
    }
    if let Ok(Value::Table(map)) = t.raw_get::<Value>("map") {
        let pairs = map
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, v)| {
                (
                    to_frame_at(lua, &k, resp3, depth + 1),
                    to_frame_at(lua, &v, resp3, depth + 1),
                )
            })
            .collect();
        return Frame::Map(pairs);
    }
    if let Ok(Value::Table(set)) = t.raw_get::<Value>("set") {
        let items = set
            .pairs::<Value, Value>()
            .filter_map(Result::ok)
            .map(|(k, _)| to_frame_at(lua, &k, resp3, depth + 1))
            .collect();
        return Frame::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_frame_at(lua, &v, resp3, depth + 1)),
        }
    }
    Frame::Array(items)
}
