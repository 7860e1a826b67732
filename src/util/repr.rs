//! Bytes quoted as Redis's `sdscatrepr` quotes them: in its log lines
//! and in MONITOR's output.

/// Appends `bytes` to `out`, quoted: `"`, then printable ASCII as is, `\\`
/// and `\"` escaped, `\n`, `\r`, `\t`, `\a`, `\b`, any other byte as `\xNN`,
/// then `"`.
pub fn push_repr(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for &c in bytes {
        match c {
            b'\\' | b'"' => {
                out.push('\\');
                out.push(c as char);
            }
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            7 => out.push_str("\\a"),
            8 => out.push_str("\\b"),
            0x20..=0x7e => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
}

/// `bytes` quoted (see [`push_repr`]).
pub fn repr(bytes: &[u8]) -> String {
    let mut out = String::new();
    push_repr(&mut out, bytes);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_sdscatrepr() {
        assert_eq!(
            repr(b"a b\"c\\\n\r\t\x07\x08\x01\xff"),
            r#""a b\"c\\\n\r\t\a\b\x01\xff""#
        );
    }
}
