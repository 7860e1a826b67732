//! The `struct` library Redis bundles (Roberto Ierusalimschy's): `pack`,
//! `unpack` and `size` over format strings. Options: `<` `>` `=` byte
//! order (native is little-endian here), `!n` alignment, `x` a pad byte,
//! `b`/`B` `h`/`H` `l`/`L` `T` `i`/`I[n]` integers, `f` `d` floats,
//! `c[n]` fixed strings (`c0` sized by the preceding integer when
//! unpacking, the whole string when packing), `s` zero-terminated strings.

use mlua::{Lua, MultiValue, Table, Value};

fn fail<T>(msg: String) -> mlua::Result<T> {
    Err(mlua::Error::RuntimeError(msg))
}

struct Format<'a> {
    f: &'a [u8],
    at: usize,
    little: bool,
    align: usize,
}

/// One option of a format: its letter and size.
enum Item {
    Pad,
    Int { size: usize, signed: bool },
    Float,
    Double,
    Chars(usize),
    Zstr,
    Skip,
}

impl Format<'_> {
    fn new(f: &[u8]) -> Format<'_> {
        Format {
            f,
            at: 0,
            little: true,
            align: 1,
        }
    }

    fn number(&mut self, default: usize) -> usize {
        let start = self.at;
        while self.at < self.f.len() && self.f[self.at].is_ascii_digit() {
            self.at += 1;
        }
        std::str::from_utf8(&self.f[start..self.at])
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(default)
    }

    fn next(&mut self) -> Option<mlua::Result<Item>> {
        let c = *self.f.get(self.at)?;
        self.at += 1;
        Some(Ok(match c {
            b' ' => Item::Skip,
            b'<' => {
                self.little = true;
                Item::Skip
            }
            b'>' => {
                self.little = false;
                Item::Skip
            }
            b'=' => {
                self.little = true;
                Item::Skip
            }
            b'!' => {
                self.align = self.number(8);
                Item::Skip
            }
            b'x' => Item::Pad,
            b'b' => Item::Int {
                size: 1,
                signed: true,
            },
            b'B' => Item::Int {
                size: 1,
                signed: false,
            },
            b'h' => Item::Int {
                size: 2,
                signed: true,
            },
            b'H' => Item::Int {
                size: 2,
                signed: false,
            },
            b'l' => Item::Int {
                size: 8,
                signed: true,
            },
            b'L' | b'T' => Item::Int {
                size: 8,
                signed: false,
            },
            b'i' | b'I' => {
                let size = self.number(4);
                if !(1..=8).contains(&size) {
                    return Some(fail(format!(
                        "integral size {size} is larger than limit of 8"
                    )));
                }
                Item::Int {
                    size,
                    signed: c == b'i',
                }
            }
            b'f' => Item::Float,
            b'd' => Item::Double,
            b'c' => Item::Chars(self.number(1)),
            b's' => Item::Zstr,
            other => {
                return Some(fail(format!("invalid format option '{}'", other as char)));
            }
        }))
    }

    /// Padding before an item of `size` bytes at `offset`.
    fn pad(&self, size: usize, offset: usize) -> usize {
        let a = size.min(self.align);
        if a <= 1 || !a.is_power_of_two() {
            return 0;
        }
        (a - (offset & (a - 1))) & (a - 1)
    }
}

fn number_arg(args: &[Value], i: usize) -> mlua::Result<f64> {
    match args.get(i) {
        Some(Value::Integer(n)) => Ok(*n as f64),
        Some(Value::Number(f)) => Ok(*f),
        Some(Value::String(s)) => match s.to_str().ok().and_then(|t| t.trim().parse().ok()) {
            Some(f) => Ok(f),
            None => fail(format!(
                "bad argument #{} to 'pack' (number expected, got string)",
                i + 2
            )),
        },
        other => fail(format!(
            "bad argument #{} to 'pack' (number expected, got {})",
            i + 2,
            other.map_or("no value", |v| v.type_name())
        )),
    }
}

fn string_arg(args: &[Value], i: usize) -> mlua::Result<Vec<u8>> {
    match args.get(i) {
        Some(Value::String(s)) => Ok(s.as_bytes().to_vec()),
        Some(Value::Integer(n)) => Ok(n.to_string().into_bytes()),
        Some(Value::Number(f)) => Ok(f.to_string().into_bytes()),
        other => fail(format!(
            "bad argument #{} to 'pack' (string expected, got {})",
            i + 2,
            other.map_or("no value", |v| v.type_name())
        )),
    }
}

fn pack(fmt: &[u8], args: &[Value]) -> mlua::Result<Vec<u8>> {
    let mut f = Format::new(fmt);
    let mut out = Vec::new();
    let mut arg = 0;
    while let Some(item) = f.next() {
        let item = item?;
        match item {
            Item::Skip => {}
            Item::Pad => out.push(0),
            Item::Int { size, .. } => {
                out.resize(out.len() + f.pad(size, out.len()), 0);
                let n = number_arg(args, arg)?;
                arg += 1;
                let v = if n < 0.0 { n as i64 as u64 } else { n as u64 };
                let bytes = v.to_le_bytes();
                if f.little {
                    out.extend_from_slice(&bytes[..size]);
                } else {
                    out.extend(bytes[..size].iter().rev());
                }
            }
            Item::Float | Item::Double => {
                let size = if matches!(item, Item::Float) { 4 } else { 8 };
                out.resize(out.len() + f.pad(size, out.len()), 0);
                let n = number_arg(args, arg)?;
                arg += 1;
                let bytes = if size == 4 {
                    let b = (n as f32).to_le_bytes();
                    b.to_vec()
                } else {
                    n.to_le_bytes().to_vec()
                };
                if f.little {
                    out.extend_from_slice(&bytes);
                } else {
                    out.extend(bytes.iter().rev());
                }
            }
            Item::Chars(n) => {
                let s = string_arg(args, arg)?;
                arg += 1;
                let n = if n == 0 { s.len() } else { n };
                if s.len() < n {
                    return fail(format!(
                        "bad argument #{} to 'pack' (string too short)",
                        arg + 1
                    ));
                }
                out.extend_from_slice(&s[..n]);
            }
            Item::Zstr => {
                let s = string_arg(args, arg)?;
                arg += 1;
                if s.contains(&0) {
                    return fail(format!(
                        "bad argument #{} to 'pack' (string contains zeros)",
                        arg + 1
                    ));
                }
                out.extend_from_slice(&s);
                out.push(0);
            }
        }
    }
    Ok(out)
}

fn unpack(lua: &Lua, fmt: &[u8], data: &[u8], start: usize) -> mlua::Result<Vec<Value>> {
    let mut f = Format::new(fmt);
    let mut at = start;
    let mut values = Vec::new();
    let short = || fail::<Vec<Value>>("bad argument #2 to 'unpack' (data string too short)".into());
    while let Some(item) = f.next() {
        let item = item?;
        match item {
            Item::Skip => {}
            Item::Pad => at += 1,
            Item::Int { size, signed } => {
                at += f.pad(size, at);
                let Some(b) = data.get(at..at + size) else {
                    return short();
                };
                let mut v: u64 = 0;
                for i in 0..size {
                    let byte = if f.little { b[size - 1 - i] } else { b[i] };
                    v = (v << 8) | byte as u64;
                }
                let n = if signed && size < 8 && v & (1 << (size * 8 - 1)) != 0 {
                    (v as i64 - (1i64 << (size * 8))) as f64
                } else if signed {
                    v as i64 as f64
                } else {
                    v as f64
                };
                values.push(Value::Number(n));
                at += size;
            }
            Item::Float | Item::Double => {
                let size = if matches!(item, Item::Float) { 4 } else { 8 };
                at += f.pad(size, at);
                let Some(b) = data.get(at..at + size) else {
                    return short();
                };
                let mut bytes = b.to_vec();
                if !f.little {
                    bytes.reverse();
                }
                let n = if size == 4 {
                    f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64
                } else {
                    let mut a = [0u8; 8];
                    a.copy_from_slice(&bytes);
                    f64::from_le_bytes(a)
                };
                values.push(Value::Number(n));
                at += size;
            }
            Item::Chars(n) => {
                let n = if n == 0 {
                    match values.pop() {
                        Some(Value::Number(len)) if len >= 0.0 => len as usize,
                        _ => return fail("format 'c0' needs a previous size".into()),
                    }
                } else {
                    n
                };
                let Some(b) = data.get(at..at + n) else {
                    return short();
                };
                values.push(Value::String(lua.create_string(b)?));
                at += n;
            }
            Item::Zstr => {
                let rest = data.get(at..).unwrap_or(&[]);
                let Some(end) = rest.iter().position(|&b| b == 0) else {
                    return fail("unfinished string in data".into());
                };
                values.push(Value::String(lua.create_string(&rest[..end])?));
                at += end + 1;
            }
        }
    }
    values.push(Value::Number((at + 1) as f64));
    Ok(values)
}

fn size(fmt: &[u8]) -> mlua::Result<usize> {
    let mut f = Format::new(fmt);
    let mut total = 0;
    while let Some(item) = f.next() {
        total += match item? {
            Item::Skip => 0,
            Item::Pad => 1,
            Item::Int { size, .. } => f.pad(size, total) + size,
            Item::Float => f.pad(4, total) + 4,
            Item::Double => f.pad(8, total) + 8,
            Item::Chars(n) => n,
            Item::Zstr => return fail("options 'c0' - 's' have undefined sizes".into()),
        };
    }
    Ok(total)
}

pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|lua, (fmt, rest): (mlua::LuaString, MultiValue)| {
            let args: Vec<Value> = rest.into_iter().collect();
            lua.create_string(pack(&fmt.as_bytes(), &args)?)
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(
            |lua, (fmt, data, init): (mlua::LuaString, mlua::LuaString, Option<i64>)| {
                let start = init.unwrap_or(1).max(1) as usize - 1;
                Ok(MultiValue::from_iter(unpack(
                    lua,
                    &fmt.as_bytes(),
                    &data.as_bytes(),
                    start,
                )?))
            },
        )?,
    )?;
    t.set(
        "size",
        lua.create_function(|_, fmt: mlua::LuaString| Ok(size(&fmt.as_bytes())? as f64))?,
    )?;
    Ok(t)
}
