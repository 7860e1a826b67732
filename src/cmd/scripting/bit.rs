//! The `bit` library Redis bundles (LuaBitOp's functions): 32-bit
//! operations on Lua numbers, results as signed 32-bit numbers.

use mlua::{Lua, Table, Variadic};

/// A number as LuaBitOp reads it: rounded to an integer, taken mod 2^32.
/// Adding 2^52 + 2^51 leaves the rounded integer in the low 32 bits of the
/// double's mantissa, which is how LuaBitOp itself normalizes.
pub fn tobit(x: f64) -> i32 {
    (x + 6_755_399_441_055_744.0).to_bits() as u32 as i32
}

pub fn tohex(x: f64, digits: Option<f64>) -> String {
    let mut n = digits.map_or(8, tobit);
    let upper = n < 0;
    if upper {
        n = n.wrapping_neg();
    }
    let n = n.clamp(1, 8) as usize;
    let v = tobit(x) as u32 as u64;
    let text = if upper {
        format!("{v:08X}")
    } else {
        format!("{v:08x}")
    };
    text[8 - n..].to_string()
}

fn fold(args: &[f64], f: fn(i32, i32) -> i32) -> f64 {
    let mut it = args.iter().map(|&x| tobit(x));
    let first = it.next().unwrap_or(0);
    it.fold(first, f) as f64
}

pub fn library(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "tobit",
        lua.create_function(|_, x: f64| Ok(tobit(x) as f64))?,
    )?;
    t.set(
        "tohex",
        lua.create_function(|_, (x, n): (f64, Option<f64>)| Ok(tohex(x, n)))?,
    )?;
    t.set(
        "bnot",
        lua.create_function(|_, x: f64| Ok(!tobit(x) as f64))?,
    )?;
    t.set(
        "band",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x & y)))?,
    )?;
    t.set(
        "bor",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x | y)))?,
    )?;
    t.set(
        "bxor",
        lua.create_function(|_, a: Variadic<f64>| Ok(fold(&a, |x, y| x ^ y)))?,
    )?;
    let shift = |f: fn(i32, u32) -> i32| {
        move |_: &Lua, (x, n): (f64, f64)| Ok(f(tobit(x), (tobit(n) & 31) as u32) as f64)
    };
    t.set(
        "lshift",
        lua.create_function(shift(|x, n| ((x as u32) << n) as i32))?,
    )?;
    t.set(
        "rshift",
        lua.create_function(shift(|x, n| ((x as u32) >> n) as i32))?,
    )?;
    t.set("arshift", lua.create_function(shift(|x, n| x >> n))?)?;
    t.set(
        "rol",
        lua.create_function(shift(|x, n| (x as u32).rotate_left(n) as i32))?,
    )?;
    t.set(
        "ror",
        lua.create_function(shift(|x, n| (x as u32).rotate_right(n) as i32))?,
    )?;
    t.set(
        "bswap",
        lua.create_function(|_, x: f64| Ok(tobit(x).swap_bytes() as f64))?,
    )?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tobit_wraps_and_rounds_as_luabitop() {
        assert_eq!(tobit(0xffffffff_u32 as f64), -1);
        assert_eq!(tobit(4294967296.0 + 5.0), 5);
        assert_eq!(tobit(-1.0), -1);
    }

    #[test]
    fn tohex_digits_and_case() {
        assert_eq!(tohex(1.0, None), "00000001");
        assert_eq!(tohex(-1.0, Some(-4.0)), "FFFF");
        assert_eq!(tohex(255.0, Some(2.0)), "ff");
    }
}
