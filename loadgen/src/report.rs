//! memtier-style output: the ALL STATS table, the latency distribution, JSON
//! with memtier's field names (plus the 100 ms time series) and HDR files.

use crate::client::RunResult;
use crate::stats::{ms, new_hist, ErrorCounts, SecondKind};
use crate::verify::VerifyReport;
use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// Rounds for JSON output.
pub fn r3(x: f64) -> f64 {
    if x.is_finite() {
        (x * 1000.0).round() / 1000.0
    } else {
        0.0
    }
}

fn r2(x: f64) -> f64 {
    if x.is_finite() {
        (x * 100.0).round() / 100.0
    } else {
        0.0
    }
}

/// `50` → "50", `99.9` → "99.9".
pub fn pct_label(p: f64) -> String {
    let s = format!("{p:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One row of the table (a kind, "Waits" or "Totals").
#[derive(Clone)]
pub struct Row {
    pub name: String,
    pub ops_sec: f64,
    pub hits_sec: Option<f64>,
    pub misses_sec: Option<f64>,
    pub kb_sec: Option<f64>,
    /// Requests that failed: an error reply to any of their commands or an
    /// aborted EXEC.
    pub failed: u64,
    pub hist: Histogram<u64>,
    /// Per-second series (memtier's Time-Serie), if any.
    pub seconds: Vec<SecondKind>,
}

/// A run reduced to rows (or several runs averaged).
#[derive(Clone)]
pub struct Summary {
    pub rows: Vec<Row>,
    pub totals: Row,
    pub start_ms: u64,
    pub end_ms: u64,
}

impl Summary {
    pub fn of(r: &RunResult, set_get: bool) -> Summary {
        let secs = r.duration.as_secs_f64().max(1e-9);
        let nk = r.kinds.len();
        let series = |k: usize| -> Vec<SecondKind> {
            r.collector
                .seconds
                .iter()
                .map(|s| s.get(k).cloned().unwrap_or_default())
                .collect()
        };
        let mut rows: Vec<Row> = r
            .kinds
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let k = &r.totals[i];
                Row {
                    name: name.clone(),
                    ops_sec: k.ops as f64 / secs,
                    hits_sec: r.get_kinds[i].then(|| k.hits as f64 / secs),
                    misses_sec: r.get_kinds[i].then(|| k.misses as f64 / secs),
                    kb_sec: Some(k.bytes as f64 / 1024.0 / secs),
                    failed: k.errors,
                    hist: k.hist.clone(),
                    seconds: series(i),
                }
            })
            .collect();
        if set_get {
            rows.push(Row {
                name: "Waits".into(),
                ops_sec: 0.0,
                hits_sec: None,
                misses_sec: None,
                kb_sec: None,
                failed: 0,
                hist: new_hist(),
                seconds: Vec::new(),
            });
        }
        let hits: u64 = r.totals.iter().map(|k| k.hits).sum();
        let misses: u64 = r.totals.iter().map(|k| k.misses).sum();
        let bytes: u64 = r.totals.iter().map(|k| k.bytes).sum();
        let totals = Row {
            name: "Totals".into(),
            ops_sec: r.total_ops() as f64 / secs,
            hits_sec: Some(hits as f64 / secs),
            misses_sec: Some(misses as f64 / secs),
            kb_sec: Some(bytes as f64 / 1024.0 / secs),
            failed: r.totals.iter().map(|k| k.errors).sum(),
            hist: r.total_hist(),
            seconds: series(nk),
        };
        Summary {
            rows,
            totals,
            start_ms: r.start_unix_ms,
            end_ms: r.end_unix_ms,
        }
    }

    /// memtier's AGGREGATED AVERAGE: rates averaged, histograms merged.
    pub fn average(all: &[Summary]) -> Summary {
        let n = all.len().max(1) as f64;
        let mut out = all[0].clone();
        let avg_row = |rows: Vec<&Row>| -> Row {
            let mut r = rows[0].clone();
            r.seconds = Vec::new();
            r.ops_sec = rows.iter().map(|x| x.ops_sec).sum::<f64>() / n;
            r.hits_sec = rows[0]
                .hits_sec
                .map(|_| rows.iter().filter_map(|x| x.hits_sec).sum::<f64>() / n);
            r.misses_sec = rows[0]
                .misses_sec
                .map(|_| rows.iter().filter_map(|x| x.misses_sec).sum::<f64>() / n);
            r.kb_sec = rows[0]
                .kb_sec
                .map(|_| rows.iter().filter_map(|x| x.kb_sec).sum::<f64>() / n);
            // Counts add up over the runs, as the merged histograms' do.
            r.failed = rows.iter().map(|x| x.failed).sum();
            let mut h = new_hist();
            for x in &rows {
                h.add(&x.hist).expect("same bounds");
            }
            r.hist = h;
            r
        };
        out.rows = (0..out.rows.len())
            .map(|i| avg_row(all.iter().map(|s| &s.rows[i]).collect()))
            .collect();
        out.totals = avg_row(all.iter().map(|s| &s.totals).collect());
        out
    }
}

fn opt(v: Option<f64>, w: usize, prec: usize) -> String {
    match v {
        Some(x) => format!("{x:>w$.prec$} "),
        None => format!("{:>w$} ", "---"),
    }
}

/// Renders memtier's stats table.
pub fn table(title: &str, s: &Summary, pcts: &[f64]) -> String {
    let mut cols = vec![
        format!("{:<12} ", "Type"),
        format!("{:>12} ", "Ops/sec"),
        format!("{:>12} ", "Hits/sec"),
        format!("{:>12} ", "Misses/sec"),
        format!("{:>15} ", "Avg. Latency"),
    ];
    for p in pcts {
        cols.push(format!("{:>15} ", format!("p{} Latency", pct_label(*p))));
    }
    cols.push(format!("{:>12} ", "KB/sec"));
    let header: String = cols.concat();
    let width = header.len();
    let mut out = String::new();
    let _ = writeln!(out, "\n\n{title}");
    let _ = writeln!(out, "{}", "=".repeat(width));
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{}", "-".repeat(width));
    for row in s.rows.iter().chain(std::iter::once(&s.totals)) {
        let has = !row.hist.is_empty();
        let mut line = format!("{:<12} {:>12.2} ", row.name, row.ops_sec);
        line += &opt(row.hits_sec, 12, 2);
        line += &opt(row.misses_sec, 12, 2);
        line += &opt(has.then(|| row.hist.mean() / 1000.0), 15, 5);
        for p in pcts {
            line += &opt(
                has.then(|| ms(row.hist.value_at_quantile(p / 100.0))),
                15,
                5,
            );
        }
        line += &opt(row.kb_sec, 12, 2);
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// memtier's "Request Latency Distribution".
pub fn distribution(s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "\n\nRequest Latency Distribution");
    let _ = writeln!(out, "{:<6} {:>12} {:>12}", "Type", "<= msec   ", "Percent");
    let _ = writeln!(out, "{}", "-".repeat(72));
    for row in &s.rows {
        if row.hist.is_empty() {
            continue;
        }
        let ty = row.name.trim_end_matches('s').to_ascii_uppercase();
        for v in row.hist.iter_quantiles(1) {
            let _ = writeln!(
                out,
                "{:<6} {:>8.3} {:>12.2}",
                ty,
                ms(v.value_iterated_to()),
                v.quantile_iterated_to() * 100.0
            );
        }
        let _ = writeln!(out, "---");
    }
    out
}

/// Standard base64.
pub fn base64(data: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let b = [c[0], *c.get(1).unwrap_or(&0), *c.get(2).unwrap_or(&0)];
        let n = (b[0] as u32) << 16 | (b[1] as u32) << 8 | b[2] as u32;
        for i in 0..4 {
            if i <= c.len() {
                out.push(T[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn compressed(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut buf) {
        Ok(_) => base64(&buf),
        Err(_) => String::new(),
    }
}

fn row_json(row: &Row, pcts: &[f64]) -> Value {
    let h = &row.hist;
    let has = !h.is_empty();
    let avg = if has { h.mean() / 1000.0 } else { 0.0 };
    let mut m = Map::new();
    m.insert("Count".into(), json!(h.len()));
    m.insert("Ops/sec".into(), json!(r2(row.ops_sec)));
    m.insert("Hits/sec".into(), json!(r2(row.hits_sec.unwrap_or(0.0))));
    m.insert(
        "Misses/sec".into(),
        json!(r2(row.misses_sec.unwrap_or(0.0))),
    );
    m.insert("Latency".into(), json!(r3(avg)));
    m.insert("Average Latency".into(), json!(r3(avg)));
    m.insert(
        "Min Latency".into(),
        json!(if has { r3(ms(h.min())) } else { 0.0 }),
    );
    m.insert(
        "Max Latency".into(),
        json!(if has { r3(ms(h.max())) } else { 0.0 }),
    );
    m.insert("KB/sec".into(), json!(r2(row.kb_sec.unwrap_or(0.0))));
    m.insert("Failed Requests".into(), json!(row.failed));
    let mut ts = Map::new();
    for (sec, s) in row.seconds.iter().enumerate() {
        let mut e = Map::new();
        e.insert("Count".into(), json!(s.count));
        e.insert("Average Latency".into(), json!(r2(s.avg_us / 1000.0)));
        e.insert("Min Latency".into(), json!(r2(ms(s.min_us))));
        e.insert("Max Latency".into(), json!(r2(ms(s.max_us))));
        for (p, v) in pcts.iter().zip(s.pcts_us.iter()) {
            e.insert(format!("p{p:.2}"), json!(r2(ms(*v))));
        }
        ts.insert(sec.to_string(), Value::Object(e));
    }
    m.insert("Time-Serie".into(), Value::Object(ts));
    let mut pl = Map::new();
    for p in pcts {
        let v = if has {
            ms(h.value_at_quantile(p / 100.0))
        } else {
            0.0
        };
        pl.insert(format!("p{p:.3}"), json!(r3(v)));
    }
    pl.insert(
        "Histogram log format".into(),
        json!({ "Compressed Histogram": compressed(h) }),
    );
    m.insert("Percentile Latencies".into(), Value::Object(pl));
    Value::Object(m)
}

/// The JSON object of one stats section ("ALL STATS", "BEST RUN RESULTS", ...).
pub fn section_json(
    s: &Summary,
    pcts: &[f64],
    run: Option<&RunResult>,
    errors: &ErrorCounts,
    verify: &VerifyReport,
) -> Value {
    let mut m = Map::new();
    for row in &s.rows {
        m.insert(row.name.clone(), row_json(row, pcts));
    }
    m.insert("Totals".into(), row_json(&s.totals, pcts));
    m.insert(
        "Runtime".into(),
        json!({
            "Start time": s.start_ms,
            "Finish time": s.end_ms,
            "Total duration": s.end_ms.saturating_sub(s.start_ms),
            "Time unit": "MILLISECONDS",
        }),
    );
    if let Some(r) = run {
        m.insert("Time-Series-100ms".into(), windows_json(r, 0));
    }
    m.insert(
        "Errors".into(),
        serde_json::to_value(errors).unwrap_or(Value::Null),
    );
    if verify.enabled {
        m.insert(
            "Verify".into(),
            serde_json::to_value(verify).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

/// The 100 ms windows: t_ms (shifted by `offset_ms`), count, percentiles in ms.
pub fn windows_json(r: &RunResult, offset_ms: i64) -> Value {
    Value::Array(
        r.collector
            .windows
            .iter()
            .map(|w| {
                json!({
                    "t_ms": w.t_ms as i64 - offset_ms,
                    "count": w.count,
                    "p50_ms": r3(ms(w.p50_us)),
                    "p99_ms": r3(ms(w.p99_us)),
                    "p99.9_ms": r3(ms(w.p999_us)),
                    "max_ms": r3(ms(w.max_us)),
                })
            })
            .collect(),
    )
}

/// Writes memtier's HDR files for one run.
pub fn write_hdr_files(
    prefix: &str,
    run_no: usize,
    h: &Histogram<u64>,
    r: &RunResult,
) -> Result<Vec<String>, String> {
    let txt = format!("{prefix}_FULL_RUN_{run_no}.txt");
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>12} {:>12} {:>12}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    for v in h.iter_quantiles(5) {
        let q = v.quantile_iterated_to();
        let inv = if q < 1.0 {
            1.0 / (1.0 - q)
        } else {
            f64::INFINITY
        };
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.6} {:>12} {:>14.2}",
            ms(v.value_iterated_to()),
            q,
            v.count_since_last_iteration(),
            inv
        );
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]",
        h.mean() / 1000.0,
        h.stdev() / 1000.0
    );
    let _ = writeln!(
        out,
        "#[Max     = {:>12.3}, Total count    = {:>12}]",
        ms(h.max()),
        h.len()
    );
    std::fs::write(&txt, out).map_err(|e| format!("{txt}: {e}"))?;
    let hgrm = format!("{prefix}_FULL_RUN_{run_no}.hgrm");
    let mut buf = Vec::new();
    {
        let mut ser = V2DeflateSerializer::new();
        let start = UNIX_EPOCH + Duration::from_millis(r.start_unix_ms);
        let mut w = IntervalLogWriterBuilder::new()
            .add_comment("Full Run command HDR latency histogram results (microseconds)")
            .with_start_time(start)
            .with_base_time(start)
            .with_max_value_divisor(1000.0)
            .begin_log_with(&mut buf, &mut ser)
            .map_err(|e| format!("{hgrm}: {e}"))?;
        w.write_histogram(h, Duration::ZERO, r.duration, None)
            .map_err(|e| format!("{hgrm}: {e:?}"))?;
    }
    std::fs::write(&hgrm, buf).map_err(|e| format!("{hgrm}: {e}"))?;
    Ok(vec![txt, hgrm])
}

/// Writes pretty JSON to a path, creating its directory.
pub fn write_json(path: &Path, v: &Value) -> Result<(), String> {
    if let Some(d) = path.parent() {
        if !d.as_os_str().is_empty() {
            std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        }
    }
    let s = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, s + "\n").map_err(|e| format!("{}: {e}", path.display()))
}

/// Prints an error summary when anything went wrong.
pub fn print_errors(e: &ErrorCounts) {
    if e.total() == 0 {
        return;
    }
    println!(
        "\nERRORS: {} connect failures, {} dropped connections, {} error replies, {} aborted transactions, {} protocol errors, {} unanswered requests",
        e.connect_failed, e.connections_dropped, e.error_replies, e.aborted, e.protocol_errors, e.unanswered
    );
    for s in &e.samples {
        println!("  {s}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b64() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn labels() {
        assert_eq!(pct_label(50.0), "50");
        assert_eq!(pct_label(99.9), "99.9");
        assert_eq!(pct_label(99.99), "99.99");
    }
}
