//! Checks for the parameters ember accepts for the tools that read and
//! write them but does not act on (`Kind::Fixed` rows: replication, TLS-free
//! networking knobs, process titles, defragmentation): each takes what
//! redis-server 7.0.15 takes, with its error text, so a config file or a
//! CONFIG SET written for Redis is not refused for them.

use super::kind::{one_of, parse_bool, parse_int, Custom, Value};

/// `oom-score-adj-values`: three integers in -2000..=2000.
pub fn oom_score_values(text: &str) -> Result<(), String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() != 3 {
        return Err("Invalid oom-score-adj-values, must be 3 values".into());
    }
    for w in words {
        let n = crate::util::num::parse_i64(w.as_bytes())
            .ok_or_else(|| "Invalid oom-score-adj-values, elements must be integers".to_string())?;
        if !(-2000..=2000).contains(&n) {
            return Err(
                "Invalid oom-score-adj-values, elements must be between -2000 and 2000.".into(),
            );
        }
    }
    Ok(())
}

/// `latency-tracking-info-percentiles`: numbers in 0..=100 (none is fine).
pub fn percentiles(text: &str) -> Result<(), String> {
    normal_percentiles(text).map(|_| ())
}

/// `latency-tracking-info-percentiles` checked as Redis checks it, in the
/// form CONFIG GET prints (each number in its shortest form).
pub fn normal_percentiles(text: &str) -> Result<String, String> {
    let mut out = Vec::new();
    for w in text.split_whitespace() {
        let p: f64 = w
            .parse()
            .map_err(|_| "Invalid latency-tracking-info-percentiles parameters".to_string())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(
                "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
                    .into(),
            );
        }
        out.push(p.to_string());
    }
    Ok(out.join(" "))
}

/// `activedefrag`: ember's jemalloc has no defragmentation hints, so only
/// `no` is taken, with the text Redis gives where it cannot defragment.
pub fn activedefrag(text: &str) -> Result<(), String> {
    match parse_bool(text)? {
        false => Ok(()),
        true => Err("Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution".into()),
    }
}

/// An integer in `min..=max`, as a check.
pub fn int_in(text: &str, min: i64, max: i64) -> Result<(), String> {
    parse_int(text, min, max).map(|_| ())
}

/// A yes/no, as a check.
pub fn boolean(text: &str) -> Result<(), String> {
    parse_bool(text).map(|_| ())
}

/// One of `options`, as a check.
pub fn choice(text: &str, options: &[&str]) -> Result<(), String> {
    one_of(text, options).map(|_| ())
}

/// `proc-title-template`: kept for CONFIG GET and REWRITE (ember does not
/// retitle its process), checked by [`title_template`].
pub(super) static PROC_TITLE_TEMPLATE: Custom = Custom {
    default: "{title} {listen-addr} {server-mode}",
    parse: |_, text| title_template(text).map(|()| Value::Text(text.to_string())),
    read: |live| {
        Value::Text(
            live.v
                .proc_title_template
                .read()
                .map_or_else(|_| String::new(), |t| t.clone()),
        )
    },
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.proc_title_template.write()) {
            *slot = text;
        }
    },
};

/// `proc-title-template`: Redis's `{name}` variables only.
pub fn title_template(text: &str) -> Result<(), String> {
    const VARS: &[&str] = &[
        "title",
        "listen-addr",
        "server-mode",
        "port",
        "tls-port",
        "unixsocket",
        "config-file",
    ];
    let bad = || Err("template format is invalid or contains unknown variables".to_string());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return bad();
        };
        if !VARS.contains(&&rest[open + 1..open + close]) {
            return bad();
        }
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') || text.trim().is_empty() {
        return bad();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_word_values_are_checked_as_redis_checks_them() {
        assert!(oom_score_values("0 200 800").is_ok());
        assert!(oom_score_values("0 200").is_err());
        assert!(oom_score_values("0 200 3000").is_err());
        assert!(percentiles("50 99 99.9").is_ok());
        assert!(percentiles("").is_ok());
        assert!(percentiles("101").is_err());
        assert!(percentiles("abc").is_err());
        assert!(title_template("{title} {listen-addr} {server-mode}").is_ok());
        assert!(title_template("{bad}").is_err());
        assert!(title_template("{title").is_err());
        assert!(activedefrag("no").is_ok());
        assert!(activedefrag("yes").is_err());
    }
}
