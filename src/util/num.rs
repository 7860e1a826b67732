/// Redis's strict `string2ll`: optional '-', no '+', no spaces, no leading zeros.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let _ = s;
    todo!()
}

/// Redis's `string2ld`/`strtold` rules for INCRBYFLOAT and scores: no spaces,
/// no NaN; accepts "inf", "-inf", "+inf", exponents.
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let _ = s;
    todo!()
}

/// Formats like Redis 7.2's reply doubles (shortest round-trip, `%.17g` style exponent).
pub fn format_double(v: f64) -> String {
    let _ = v;
    todo!()
}

/// Formats like INCRBYFLOAT (`%.17Lf` with trailing zeros trimmed, no exponent).
pub fn format_incr_float(v: f64) -> String {
    let _ = v;
    todo!()
}
