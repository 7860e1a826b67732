//! The `cmsgpack` library Redis bundles (lua-cmsgpack): `pack` of any
//! number of values into one MessagePack string, `unpack` of all values
//! in one, `unpack_one` / `unpack_limit` for a count from an offset. Its
//! choices: integral numbers as the smallest integer form, other numbers as
//! a float32 when that is exact, else a float64; tables whose keys are
//! exactly 1..n as arrays; nesting past 16 levels as nil.

use mlua::{Lua, MultiValue, Table, Value};

const MAX_NESTING: usize = 16;

fn fail<T>(msg: &str) -> mlua::Result<T> {
    Err(mlua::Error::RuntimeError(msg.to_string()))
}

fn int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        let u = n as u64;
        if u < 128 {
            out.push(u as u8);
        } else if u <= 0xff {
            out.extend_from_slice(&[0xcc, u as u8]);
        } else if u <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(u as u16).to_be_bytes());
        } else if u <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(u as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&u.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2147483648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn number(out: &mut Vec<u8>, f: f64) {
    if f.fract() == 0.0 && f.is_finite() && f.abs() < 9.2e18 {
        int(out, f as i64);
    } else if (f as f32) as f64 == f || f.is_nan() {
        out.push(0xca);
        out.extend_from_slice(&(f as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&f.to_be_bytes());
    }
}

fn header(out: &mut Vec<u8>, len: usize, fix: u8, fix_max: usize, codes: [u8; 3]) {
    if len < fix_max {
        out.push(fix | len as u8);
    } else if codes[0] != 0 && len <= 0xff {
        out.extend_from_slice(&[codes[0], len as u8]);
    } else if len <= 0xffff {
        out.push(codes[1]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(codes[2]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn array_len(t: &Table) -> mlua::Result<Option<usize>> {
    let mut count = 0usize;
    let mut max = 0usize;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match k {
            Value::Integer(i) if i >= 1 => max = max.max(i as usize),
            Value::Number(f) if f >= 1.0 && f.fract() == 0.0 => max = max.max(f as usize),
            _ => return Ok(None),
        }
        count += 1;
    }
    Ok((count == max).then_some(max))
}

fn encode(out: &mut Vec<u8>, v: Value, depth: usize) -> mlua::Result<()> {
    match v {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => int(out, i),
        Value::Number(f) => number(out, f),
        Value::String(s) => {
            let b = s.as_bytes();
            header(out, b.len(), 0xa0, 32, [0xd9, 0xda, 0xdb]);
            out.extend_from_slice(&b);
        }
        Value::Table(t) if depth < MAX_NESTING => match array_len(&t)? {
            Some(n) => {
                header(out, n, 0x90, 16, [0, 0xdc, 0xdd]);
                for i in 1..=n {
                    encode(out, t.raw_get(i)?, depth + 1)?;
                }
            }
            None => {
                // Counted first, then encoded pair by pair: holding every
                // pair at once would hold a Lua reference each, and a big
                // table runs out of Lua stack.
                let mut n = 0;
                for pair in t.pairs::<Value, Value>() {
                    pair?;
                    n += 1;
                }
                header(out, n, 0x80, 16, [0, 0xde, 0xdf]);
                for pair in t.pairs::<Value, Value>() {
                    let (k, v) = pair?;
                    encode(out, k, depth + 1)?;
                    encode(out, v, depth + 1)?;
                }
            }
        },
        _ => out.push(0xc0),
    }
    Ok(())
}

struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> mlua::Result<&[u8]> {
        if self.s.len() - self.at < n {
            return fail("Missing bytes in input.");
        }
        let out = &self.s[self.at..self.at + n];
        self.at += n;
        Ok(out)
    }

    fn be(&mut self, n: usize) -> mlua::Result<u64> {
        Ok(self.take(n)?.iter().fold(0u64, |a, &b| (a << 8) | b as u64))
    }

    fn value(&mut self, lua: &Lua) -> mlua::Result<Value> {
        let c = self.take(1)?[0];
        Ok(match c {
            0x00..=0x7f => Value::Number(c as f64),
            0xe0..=0xff => Value::Number(c as i8 as f64),
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xcc => Value::Number(self.be(1)? as f64),
            0xcd => Value::Number(self.be(2)? as f64),
            0xce => Value::Number(self.be(4)? as f64),
            0xcf => Value::Number(self.be(8)? as f64),
            0xd0 => Value::Number(self.be(1)? as u8 as i8 as f64),
            0xd1 => Value::Number(self.be(2)? as u16 as i16 as f64),
            0xd2 => Value::Number(self.be(4)? as u32 as i32 as f64),
            0xd3 => Value::Number(self.be(8)? as i64 as f64),
            0xca => Value::Number(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => Value::Number(f64::from_bits(self.be(8)?)),
            0xa0..=0xbf => self.string(lua, (c & 0x1f) as usize)?,
            0xd9 | 0xc4 => {
                let n = self.be(1)? as usize;
                self.string(lua, n)?
            }
            0xda | 0xc5 => {
                let n = self.be(2)? as usize;
                self.string(lua, n)?
            }
            0xdb | 0xc6 => {
                let n = self.be(4)? as usize;
                self.string(lua, n)?
            }
            0x90..=0x9f => self.array(lua, (c & 0x0f) as usize)?,
            0xdc => {
                let n = self.be(2)? as usize;
                self.array(lua, n)?
            }
            0xdd => {
                let n = self.be(4)? as usize;
                self.array(lua, n)?
            }
            0x80..=0x8f => self.map(lua, (c & 0x0f) as usize)?,
            0xde => {
                let n = self.be(2)? as usize;
                self.map(lua, n)?
            }
            0xdf => {
                let n = self.be(4)? as usize;
                self.map(lua, n)?
            }
            _ => return fail("Bad data format in input."),
        })
    }

    fn string(&mut self, lua: &Lua, n: usize) -> mlua::Result<Value> {
        let b = self.take(n)?.to_vec();
        Ok(Value::String(lua.create_string(b)?))
    }

    fn array(&mut self, lua: &Lua, n: usize) -> mlua::Result<Value> {
        let t = lua.create_table()?;
        for i in 1..=n {
            let v = self.value(lua)?;
            t.raw_set(i, v)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, lua: &Lua, n: usize) -> mlua::Result<Value> {
        let t = lua.create_table()?;
        for _ in 0..n {
            let k = self.value(lua)?;
            let v = self.value(lua)?;
            if !k.is_nil() {
                t.raw_set(k, v)?;
            }
        }
        Ok(Value::Table(t))
    }
}

/// Up to `limit` values (0: all) from `offset`; then the offset after them
/// (-1 at the end), as `unpack_one` / `unpack_limit` return it first.
fn unpack_from(
    lua: &Lua,
    s: &[u8],
    limit: usize,
    offset: usize,
) -> mlua::Result<(Vec<Value>, i64)> {
    let mut r = Reader {
        s,
        at: offset.min(s.len()),
    };
    let mut values = Vec::new();
    while r.at < s.len() && (limit == 0 || values.len() < limit) {
        values.push(r.value(lua)?);
    }
    let next = if r.at >= s.len() { -1 } else { r.at as i64 };
    Ok((values, next))
}

pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|lua, args: MultiValue| {
            if args.is_empty() {
                return fail("MessagePack pack needs input.");
            }
            let mut out = Vec::new();
            for v in args {
                encode(&mut out, v, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, s: mlua::LuaString| {
            let (values, _) = unpack_from(lua, &s.as_bytes(), 0, 0)?;
            Ok(MultiValue::from_iter(values))
        })?,
    )?;
    let limited = |one: bool| {
        move |lua: &Lua, (s, a, b): (mlua::LuaString, Option<i64>, Option<i64>)| {
            let (limit, offset) = if one {
                (1, a.unwrap_or(0))
            } else {
                (a.unwrap_or(0).max(0) as usize, b.unwrap_or(0))
            };
            let (values, next) = unpack_from(lua, &s.as_bytes(), limit, offset.max(0) as usize)?;
            let mut out = vec![Value::Number(next as f64)];
            out.extend(values);
            Ok(MultiValue::from_iter(out))
        }
    };
    t.set("unpack_one", lua.create_function(limited(true))?)?;
    t.set("unpack_limit", lua.create_function(limited(false))?)?;
    Ok(t)
}
