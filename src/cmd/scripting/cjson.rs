//! The `cjson` library Redis bundles: `cjson.encode`, `cjson.decode` and
//! `cjson.null`, with lua-cjson's choices (forward slashes escaped, numbers
//! as Lua prints them, an empty table as `{}`, a table whose keys are
//! 1..n as an array).

use mlua::{LightUserData, Lua, Table, Value};

/// Nesting past this fails, as lua-cjson's default limit does.
const MAX_DEPTH: usize = 1000;

thread_local! {
    /// `cjson.encode_max_depth` / `cjson.decode_max_depth`: settings of
    /// this thread's VM (lua-cjson keeps them per state).
    static DEPTHS: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((MAX_DEPTH, MAX_DEPTH)) };
}

/// `cjson.encode_invalid_numbers`: what NaN and infinities become.
#[derive(Clone, Copy)]
enum Invalid {
    Refuse,
    Allow,
    Null,
}

thread_local! {
    static INVALID_NUMBERS: std::cell::Cell<Invalid> = const { std::cell::Cell::new(Invalid::Refuse) };
}

/// `cjson.encode_invalid_numbers([setting])`: true, false or "null";
/// answers the setting.
fn encode_invalid_numbers(lua: &Lua, arg: Option<Value>) -> mlua::Result<Value> {
    let set = match arg {
        None | Some(Value::Nil) => None,
        Some(Value::Boolean(true)) => Some(Invalid::Allow),
        Some(Value::Boolean(false)) => Some(Invalid::Refuse),
        Some(Value::String(s)) if s.as_bytes().as_ref() == b"null" => Some(Invalid::Null),
        Some(Value::String(s)) if s.as_bytes().as_ref() == b"on" => Some(Invalid::Allow),
        Some(Value::String(s)) if s.as_bytes().as_ref() == b"off" => Some(Invalid::Refuse),
        Some(_) => {
            return fail("bad argument #1 to 'encode_invalid_numbers' (invalid option)".into())
        }
    };
    if let Some(set) = set {
        INVALID_NUMBERS.with(|i| i.set(set));
    }
    Ok(match INVALID_NUMBERS.with(|i| i.get()) {
        Invalid::Refuse => Value::Boolean(false),
        Invalid::Allow => Value::Boolean(true),
        Invalid::Null => Value::String(lua.create_string("null")?),
    })
}

fn encode_depth() -> usize {
    DEPTHS.with(|d| d.get().0)
}

fn decode_depth() -> usize {
    DEPTHS.with(|d| d.get().1)
}

/// Sets one of the depths from `arg` when it is a number from 1; answers
/// the setting.
fn set_depth(arg: Option<f64>, encode: bool) -> usize {
    DEPTHS.with(|d| {
        let (mut e, mut de) = d.get();
        if let Some(n) = arg.filter(|n| *n >= 1.0) {
            if encode {
                e = n as usize;
            } else {
                de = n as usize;
            }
            d.set((e, de));
        }
        if encode {
            e
        } else {
            de
        }
    })
}

fn null() -> Value {
    Value::LightUserData(LightUserData(std::ptr::null_mut()))
}

fn fail<T>(msg: String) -> mlua::Result<T> {
    Err(mlua::Error::RuntimeError(msg))
}

fn escape(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x20 || b == 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

fn number(lua: &Lua, v: Value, out: &mut Vec<u8>) -> mlua::Result<()> {
    if let Value::Number(f) = v {
        if !f.is_finite() {
            match INVALID_NUMBERS.with(|i| i.get()) {
                Invalid::Refuse => {
                    return fail("Cannot serialise number: must not be NaN or Inf".into())
                }
                Invalid::Null => out.extend_from_slice(b"null"),
                // lua-cjson prints them as C's printf does.
                Invalid::Allow if f.is_nan() => out.extend_from_slice(b"nan"),
                Invalid::Allow if f > 0.0 => out.extend_from_slice(b"inf"),
                Invalid::Allow => out.extend_from_slice(b"-inf"),
            }
            return Ok(());
        }
    }
    match lua.coerce_string(v)? {
        Some(s) => out.extend_from_slice(&s.as_bytes()),
        None => out.push(b'0'),
    }
    Ok(())
}

fn encode(lua: &Lua, v: Value, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        v @ (Value::Integer(_) | Value::Number(_)) => number(lua, v, out)?,
        Value::String(s) => escape(&s.as_bytes(), out),
        Value::Table(t) => {
            if depth >= encode_depth() {
                return fail(format!(
                    "Cannot serialise, excessive nesting ({})",
                    depth + 1
                ));
            }
            table(lua, t, out, depth + 1)?
        }
        other => {
            return fail(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            ))
        }
    }
    Ok(())
}

/// A positive whole number usable as an array index.
fn index(k: &Value) -> Option<usize> {
    match k {
        Value::Integer(i) if *i >= 1 => Some(*i as usize),
        Value::Number(f) if *f >= 1.0 && f.fract() == 0.0 && *f < 1e15 => Some(*f as usize),
        _ => None,
    }
}

fn table(lua: &Lua, t: Table, out: &mut Vec<u8>, depth: usize) -> mlua::Result<()> {
    // One pass for the shape (the pairs are not kept: each would hold a
    // Lua reference, and a big table runs out of Lua stack), one to write.
    let (mut count, mut max, mut array) = (0, 0, true);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        count += 1;
        match index(&k) {
            Some(i) => max = max.max(i),
            None => array = false,
        }
    }
    if count == 0 {
        out.extend_from_slice(b"{}");
        return Ok(());
    }
    if array {
        // lua-cjson's default: sparse beyond ratio 2 once past 10 slots.
        if max > 10 && max > 2 * count {
            return fail("Cannot serialise table: excessively sparse array".into());
        }
        out.push(b'[');
        for i in 1..=max {
            if i > 1 {
                out.push(b',');
            }
            encode(lua, t.raw_get(i)?, out, depth)?;
        }
        out.push(b']');
        return Ok(());
    }
    out.push(b'{');
    for (n, pair) in t.pairs::<Value, Value>().enumerate() {
        let (k, v) = pair?;
        if n > 0 {
            out.push(b',');
        }
        match k {
            Value::String(s) => escape(&s.as_bytes(), out),
            k @ (Value::Integer(_) | Value::Number(_)) => {
                let mut text = Vec::new();
                number(lua, k, &mut text)?;
                escape(&text, out);
            }
            _ => {
                return fail("Cannot serialise table: table key must be a number or string".into())
            }
        }
        out.push(b':');
        encode(lua, v, out, depth)?;
    }
    out.push(b'}');
    Ok(())
}

/// A JSON reader over bytes producing Lua values.
struct Reader<'a> {
    s: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.at < self.s.len() && matches!(self.s[self.at], b' ' | b'\t' | b'\n' | b'\r') {
            self.at += 1;
        }
    }

    fn bad<T>(&self, what: &str) -> mlua::Result<T> {
        fail(format!(
            "Expected {what} but found invalid token at character {}",
            self.at + 1
        ))
    }

    fn value(&mut self, lua: &Lua, depth: usize) -> mlua::Result<Value> {
        self.ws();
        if depth > decode_depth() && matches!(self.s.get(self.at), Some(b'{' | b'[')) {
            return fail(format!(
                "Found too many nested data structures ({depth}) at character {}",
                self.at + 1
            ));
        }
        self.ws();
        let Some(&c) = self.s.get(self.at) else {
            return self.bad("value");
        };
        match c {
            b'{' => {
                self.at += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.s.get(self.at) == Some(&b'}') {
                    self.at += 1;
                    return Ok(Value::Table(t));
                }
                loop {
                    self.ws();
                    if self.s.get(self.at) != Some(&b'"') {
                        return self.bad("object key string");
                    }
                    let k = self.string(lua)?;
                    self.ws();
                    if self.s.get(self.at) != Some(&b':') {
                        return self.bad("colon");
                    }
                    self.at += 1;
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(k, v)?;
                    self.ws();
                    match self.s.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return self.bad("comma or object end"),
                    }
                }
            }
            b'[' => {
                self.at += 1;
                let t = lua.create_table()?;
                self.ws();
                if self.s.get(self.at) == Some(&b']') {
                    self.at += 1;
                    return Ok(Value::Table(t));
                }
                let mut i = 1;
                loop {
                    let v = self.value(lua, depth + 1)?;
                    t.raw_set(i, v)?;
                    i += 1;
                    self.ws();
                    match self.s.get(self.at) {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Value::Table(t));
                        }
                        _ => return self.bad("comma or array end"),
                    }
                }
            }
            b'"' => Ok(Value::String(self.string(lua)?)),
            b't' if self.s[self.at..].starts_with(b"true") => {
                self.at += 4;
                Ok(Value::Boolean(true))
            }
            b'f' if self.s[self.at..].starts_with(b"false") => {
                self.at += 5;
                Ok(Value::Boolean(false))
            }
            b'n' if self.s[self.at..].starts_with(b"null") => {
                self.at += 4;
                Ok(null())
            }
            b'-' | b'0'..=b'9' => {
                let start = self.at;
                while self.at < self.s.len()
                    && matches!(
                        self.s[self.at],
                        b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                    )
                {
                    self.at += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
                match text.parse::<f64>() {
                    Ok(f) => Ok(Value::Number(f)),
                    Err(_) => {
                        self.at = start;
                        self.bad("value")
                    }
                }
            }
            _ => self.bad("value"),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.s.get(self.at..self.at + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.at += 4;
        Some(v)
    }

    fn string(&mut self, lua: &Lua) -> mlua::Result<mlua::LuaString> {
        self.at += 1;
        let mut out = Vec::new();
        loop {
            let Some(&c) = self.s.get(self.at) else {
                return fail(format!(
                    "Expected value but found unexpected end of string at character {}",
                    self.at + 1
                ));
            };
            self.at += 1;
            match c {
                b'"' => return lua.create_string(&out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.at) else {
                        return self.bad("value");
                    };
                    self.at += 1;
                    match e {
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'u' => {
                            let Some(mut cp) = self.hex4() else {
                                return self.bad("value");
                            };
                            if (0xd800..0xdc00).contains(&cp)
                                && self.s[self.at..].starts_with(b"\\u")
                            {
                                self.at += 2;
                                let low = self.hex4().unwrap_or(0);
                                cp = 0x10000
                                    + ((cp - 0xd800) << 10)
                                    + (low.wrapping_sub(0xdc00) & 0x3ff);
                            }
                            let ch = char::from_u32(cp).unwrap_or('\u{fffd}');
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "encode",
        lua.create_function(|lua, v: Value| {
            let mut out = Vec::new();
            encode(lua, v, &mut out, 0)?;
            lua.create_string(&out)
        })?,
    )?;
    t.set(
        "decode",
        lua.create_function(|lua, s: mlua::LuaString| {
            let bytes = s.as_bytes();
            let mut r = Reader { s: &bytes, at: 0 };
            let v = r.value(lua, 1)?;
            r.ws();
            if r.at != r.s.len() {
                return r.bad("the end");
            }
            Ok(v)
        })?,
    )?;
    t.set("encode_keep_buffer", t.get::<Value>("encode")?)?;
    // lua-cjson's settings: ember keeps the defaults; each answers them.
    t.set(
        "encode_max_depth",
        lua.create_function(|_, n: Option<f64>| Ok(set_depth(n, true)))?,
    )?;
    t.set(
        "decode_max_depth",
        lua.create_function(|_, n: Option<f64>| Ok(set_depth(n, false)))?,
    )?;
    t.set(
        "encode_invalid_numbers",
        lua.create_function(encode_invalid_numbers)?,
    )?;
    t.set("null", null())?;
    Ok(t)
}
