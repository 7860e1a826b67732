//! Command line (clap) and its translation into a [`Workload`].

use crate::client::{CmdTemplate, Ops, Workload};
use crate::keys::{KeySpace, Pattern};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

#[derive(Parser, Debug)]
#[command(
    name = "loadgen",
    version,
    about = "memtier-style load generator for RESP servers (ember, redis) that sees expiry storms",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Option<Cmd>,
    #[command(flatten)]
    pub bench: BenchArgs,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Expiry storm: S keys expiring at one instant under steady background traffic.
    Storm(StormArgs),
    /// Run the same scenario against several targets and compare them.
    Compare(CompareArgs),
}

/// Where the server is; with neither `--server` nor `--port`, an embedded
/// ember is started on a free port.
#[derive(Args, Debug, Clone)]
pub struct ConnArgs {
    /// Server address (default: start an embedded ember).
    #[arg(short = 's', long = "server")]
    pub server: Option<String>,
    /// Server port (default 6379 when --server is given).
    #[arg(short = 'p', long = "port")]
    pub port: Option<u16>,
    /// The ember binary for the embedded server (also env EMBER_BIN).
    #[arg(long = "ember-bin")]
    pub ember_bin: Option<PathBuf>,
    /// Shards of the embedded ember.
    #[arg(long = "ember-shards", default_value_t = 1)]
    pub ember_shards: usize,
}

/// memtier_benchmark-compatible options (the default command).
#[derive(Args, Debug, Clone)]
pub struct BenchArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    /// Number of threads.
    #[arg(short = 't', long = "threads", default_value_t = 4)]
    pub threads: usize,
    /// Number of clients (connections) per thread.
    #[arg(short = 'c', long = "clients", default_value_t = 50)]
    pub clients: usize,
    /// Requests per client, or `allkeys` to cover the key range once.
    #[arg(short = 'n', long = "requests", default_value = "10000")]
    pub requests: String,
    /// Run for this many seconds instead of a request count.
    #[arg(long = "test-time")]
    pub test_time: Option<f64>,
    /// Requests in flight per connection.
    #[arg(long = "pipeline", default_value_t = 1)]
    pub pipeline: usize,
    /// SET:GET ratio.
    #[arg(long = "ratio", default_value = "1:10")]
    pub ratio: String,
    /// Key pattern SET:GET, each of R (random), S (sequential), G (gaussian), Z (zipf), P (parallel).
    #[arg(long = "key-pattern", default_value = "R:R")]
    pub key_pattern: String,
    #[arg(long = "key-minimum", default_value_t = 0)]
    pub key_minimum: u64,
    #[arg(long = "key-maximum", default_value_t = 10_000_000)]
    pub key_maximum: u64,
    #[arg(long = "key-prefix", default_value = "memtier-")]
    pub key_prefix: String,
    /// Standard deviation of the G pattern (default: range / 6).
    #[arg(long = "key-stddev")]
    pub key_stddev: Option<f64>,
    /// Median of the G pattern (default: middle of the range).
    #[arg(long = "key-median")]
    pub key_median: Option<f64>,
    /// Exponent of the Z pattern.
    #[arg(long = "key-zipf-exp", default_value_t = 0.99)]
    pub key_zipf_exp: f64,
    /// Value size in bytes.
    #[arg(short = 'd', long = "data-size", default_value_t = 32)]
    pub data_size: usize,
    /// Random value size range `min-max`.
    #[arg(long = "data-size-range")]
    pub data_size_range: Option<String>,
    /// SET expiry range in seconds `min-max`.
    #[arg(long = "expiry-range")]
    pub expiry_range: Option<String>,
    /// Requests per second per connection (open loop, latency from intended send time).
    #[arg(long = "rate-limiting")]
    pub rate_limiting: Option<f64>,
    /// Each client gets its own random seed.
    #[arg(long = "distinct-client-seed")]
    pub distinct_client_seed: bool,
    /// Random seed from the clock instead of a fixed one.
    #[arg(long = "randomize")]
    pub randomize: bool,
    /// Fixed random seed.
    #[arg(long = "seed", default_value_t = 12345)]
    pub seed: u64,
    /// Write memtier-style JSON results here.
    #[arg(long = "json-out-file")]
    pub json_out_file: Option<PathBuf>,
    /// Write HDR histogram files (`<prefix>_FULL_RUN_<n>.txt` / `.hgrm`).
    #[arg(long = "hdr-file-prefix")]
    pub hdr_file_prefix: Option<String>,
    /// Percentiles for the table and JSON.
    #[arg(long = "print-percentiles", default_value = "50,99,99.9")]
    pub print_percentiles: String,
    /// Do not print the latency distribution.
    #[arg(long = "hide-histogram")]
    pub hide_histogram: bool,
    /// Number of full runs.
    #[arg(short = 'x', long = "run-count", default_value_t = 1)]
    pub run_count: usize,
    /// Arbitrary command with __key__ / __key2__ / __data__ placeholders
    /// (repeatable); `A ; B ; C` sends several commands as one request, e.g.
    /// "MULTI ; INCR __key__ ; INCR __key2__ ; EXEC".
    #[arg(long = "command")]
    pub command: Vec<String>,
    /// Ratio of each --command.
    #[arg(long = "command-ratio")]
    pub command_ratio: Vec<u32>,
    /// Key pattern of each --command (R, S, G, Z, P).
    #[arg(long = "command-key-pattern")]
    pub command_key_pattern: Vec<String>,
    /// Check every GET reply against what this run wrote and its deadline.
    #[arg(long = "verify")]
    pub verify: bool,
    /// Cache-aside: each GET that misses is followed by a SET of its key
    /// (use with `--ratio 0:1`); the report gives the hit ratio.
    #[arg(long = "cache-aside")]
    pub cache_aside: bool,
    /// Scan pollution: this share (0..1) of GETs read, in order, cold keys
    /// past --key-maximum instead of the GET pattern's keys.
    #[arg(long = "scan-ratio", default_value_t = 0.0)]
    pub scan_ratio: f64,
    /// How many cold keys the scan walks before it starts over (default:
    /// as many as the key range).
    #[arg(long = "scan-keys")]
    pub scan_keys: Option<u64>,
    /// No progress output.
    #[arg(long = "quiet", short = 'q')]
    pub quiet: bool,
}

/// Which scenario `compare` runs.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scenario {
    Storm,
    Steady,
}

/// Parameters of the storm (and of `compare`'s steady scenario).
#[derive(Args, Debug, Clone)]
pub struct StormParams {
    /// Volatile keys that all expire at one instant.
    #[arg(short = 'S', long = "keys", default_value_t = 1_000_000)]
    pub keys: u64,
    /// Value size in bytes.
    #[arg(short = 'd', long = "data-size", default_value_t = 32)]
    pub data_size: usize,
    /// Background traffic starts this many seconds before the instant.
    #[arg(long = "pre", default_value_t = 3.0)]
    pub pre: f64,
    /// Background traffic continues this many seconds after the volatile keys are gone.
    #[arg(long = "post", default_value_t = 2.0)]
    pub post: f64,
    /// Stop at most this many seconds after the instant, gone or not.
    #[arg(long = "cap", default_value_t = 60.0)]
    pub cap: f64,
    /// Seconds from the start of the load to the expiry instant (default: estimated).
    #[arg(long = "instant-delay")]
    pub instant_delay: Option<f64>,
    /// Background SET:GET ratio.
    #[arg(long = "ratio", default_value = "1:10")]
    pub ratio: String,
    /// Background requests per second, all connections together.
    #[arg(long = "rate", default_value_t = 10_000.0)]
    pub rate: f64,
    /// Background threads.
    #[arg(short = 't', long = "threads", default_value_t = 1)]
    pub threads: usize,
    /// Background connections per thread.
    #[arg(short = 'c', long = "clients", default_value_t = 16)]
    pub clients: usize,
    /// Background requests in flight per connection (at most).
    #[arg(long = "pipeline", default_value_t = 4)]
    pub pipeline: usize,
    /// Keys of the (non-expiring) background range.
    #[arg(long = "bg-keys", default_value_t = 10_000)]
    pub bg_keys: u64,
    /// Connections used for the pipelined load.
    #[arg(long = "load-conns", default_value_t = 4)]
    pub load_conns: usize,
    /// Commands per pipelined load batch.
    #[arg(long = "load-batch", default_value_t = 1000)]
    pub load_batch: usize,
    /// Key prefix of the scenario's keys.
    #[arg(long = "key-prefix", default_value = "storm:")]
    pub key_prefix: String,
    /// Length of `compare --scenario steady` runs, seconds.
    #[arg(long = "test-time", default_value_t = 5.0)]
    pub test_time: f64,
    /// Probe volatile keys and background keys and check every reply.
    #[arg(long = "verify")]
    pub verify: bool,
    /// Output directory for JSON and charts.
    #[arg(long = "out-dir", default_value = "loadgen-out")]
    pub out_dir: PathBuf,
    /// No progress output.
    #[arg(long = "quiet", short = 'q')]
    pub quiet: bool,
}

#[derive(Args, Debug, Clone)]
pub struct StormArgs {
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub params: StormParams,
    /// JSON report path (default: <out-dir>/storm.json).
    #[arg(long = "json-out-file")]
    pub json_out_file: Option<PathBuf>,
}

#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// `name=host:port` (or `name=embedded`), repeatable; the first is the baseline.
    #[arg(long = "target", required = true)]
    pub target: Vec<String>,
    /// Scenario to run against each target.
    #[arg(long = "scenario", value_enum, default_value = "storm")]
    pub scenario: Scenario,
    /// The ember binary for `embedded` targets (also env EMBER_BIN).
    #[arg(long = "ember-bin")]
    pub ember_bin: Option<PathBuf>,
    #[arg(long = "ember-shards", default_value_t = 1)]
    pub ember_shards: usize,
    #[command(flatten)]
    pub params: StormParams,
}

/// Parses `a-b`.
pub fn parse_range(s: &str, what: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once('-')
        .ok_or_else(|| format!("{what}: expected min-max, got {s:?}"))?;
    let a: u64 = a
        .trim()
        .parse()
        .map_err(|_| format!("{what}: bad number {a:?}"))?;
    let b: u64 = b
        .trim()
        .parse()
        .map_err(|_| format!("{what}: bad number {b:?}"))?;
    if a > b {
        return Err(format!("{what}: min {a} > max {b}"));
    }
    Ok((a, b))
}

/// Parses `set:get`.
pub fn parse_ratio(s: &str) -> Result<(u32, u32), String> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| format!("--ratio: expected SET:GET, got {s:?}"))?;
    let a: u32 = a
        .trim()
        .parse()
        .map_err(|_| format!("--ratio: bad number {a:?}"))?;
    let b: u32 = b
        .trim()
        .parse()
        .map_err(|_| format!("--ratio: bad number {b:?}"))?;
    if a == 0 && b == 0 {
        return Err("--ratio: 0:0 sends nothing".into());
    }
    Ok((a, b))
}

pub fn parse_percentiles(s: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(|p| {
            let v: f64 = p
                .trim()
                .parse()
                .map_err(|_| format!("--print-percentiles: bad value {p:?}"))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(format!("--print-percentiles: {v} outside 0..100"));
            }
            Ok(v)
        })
        .collect()
}

/// Resolves `host:port`.
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}:{port}: {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve {host}:{port}"))
}

impl BenchArgs {
    /// Builds the workload for `addr`.
    pub fn workload(&self, addr: SocketAddr) -> Result<Workload, String> {
        if self.threads == 0 || self.clients == 0 || self.pipeline == 0 {
            return Err("--threads, --clients and --pipeline must be at least 1".into());
        }
        if self.key_maximum < self.key_minimum {
            return Err("--key-maximum is below --key-minimum".into());
        }
        let keys = KeySpace {
            min: self.key_minimum,
            max: self.key_maximum,
            stddev: self.key_stddev,
            median: self.key_median,
            zipf_exp: self.key_zipf_exp,
        };
        let (set_pattern, get_pattern) = Pattern::parse_pair(&self.key_pattern)?;
        let ops = if self.command.is_empty() {
            let (set, get) = parse_ratio(&self.ratio)?;
            Ops::SetGet {
                set,
                get,
                set_pattern,
                get_pattern,
            }
        } else {
            let mut cmds = Vec::new();
            for (i, c) in self.command.iter().enumerate() {
                let ratio = self.command_ratio.get(i).copied().unwrap_or(1);
                let pat = match self.command_key_pattern.get(i) {
                    Some(p) => Pattern::parse(p)?,
                    None => set_pattern,
                };
                cmds.push(CmdTemplate::parse(c, ratio, pat)?);
            }
            if cmds.len() > 200 {
                return Err("too many --command".into());
            }
            Ops::Commands(cmds)
        };
        let (data_min, data_max) = match &self.data_size_range {
            Some(r) => {
                let (a, b) = parse_range(r, "--data-size-range")?;
                (a as usize, b as usize)
            }
            None => (self.data_size, self.data_size),
        };
        if data_max > 512 * 1024 * 1024 {
            return Err("value size above 512 MB".into());
        }
        let expiry = self
            .expiry_range
            .as_deref()
            .map(|r| parse_range(r, "--expiry-range"))
            .transpose()?;
        let conns = (self.threads * self.clients) as u64;
        let requests = if self.test_time.is_some() {
            None
        } else if self.requests == "allkeys" {
            Some(keys.range().div_ceil(conns))
        } else {
            Some(self.requests.parse::<u64>().map_err(|_| {
                format!(
                    "--requests: expected a number or allkeys, got {:?}",
                    self.requests
                )
            })?)
        };
        let seed = if self.randomize {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
        } else {
            self.seed
        };
        let scan = (self.scan_ratio > 0.0).then(|| {
            (
                self.scan_ratio.min(1.0),
                self.scan_keys.unwrap_or(keys.range()),
            )
        });
        Ok(Workload {
            addr,
            threads: self.threads,
            clients: self.clients,
            pipeline: self.pipeline,
            ops,
            keys,
            prefix: self.key_prefix.as_bytes().to_vec(),
            data_min: data_min.max(if self.verify { 1 } else { 0 }),
            data_max: data_max.max(if self.verify { 1 } else { 0 }),
            expiry,
            requests,
            duration: self.test_time.map(Duration::from_secs_f64),
            rate_per_conn: self.rate_limiting.filter(|r| *r > 0.0),
            seed,
            distinct_client_seed: self.distinct_client_seed,
            verify: self.verify,
            keep_window_hists: false,
            percentiles: parse_percentiles(&self.print_percentiles)?,
            epoch: None,
            drain: Duration::from_secs(5),
            cache_aside: self.cache_aside,
            scan,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_flags_parse() {
        let cli = Cli::try_parse_from([
            "loadgen",
            "-s",
            "127.0.0.1",
            "-p",
            "6390",
            "-t",
            "2",
            "-c",
            "3",
            "--pipeline",
            "4",
            "--ratio",
            "1:1",
            "--key-pattern",
            "S:G",
            "--key-minimum",
            "1",
            "--key-maximum",
            "100",
            "-n",
            "allkeys",
            "--data-size-range",
            "10-20",
            "--expiry-range",
            "5-10",
            "--distinct-client-seed",
            "--hide-histogram",
            "-x",
            "2",
            "--print-percentiles",
            "50,90,99.99",
        ])
        .unwrap();
        assert!(cli.cmd.is_none());
        let wl = cli
            .bench
            .workload("127.0.0.1:6390".parse().unwrap())
            .unwrap();
        assert_eq!(wl.requests, Some(17)); // ceil(100 / 6)
        assert_eq!((wl.data_min, wl.data_max), (10, 20));
        assert_eq!(wl.expiry, Some((5, 10)));
        assert_eq!(wl.percentiles, vec![50.0, 90.0, 99.99]);
    }

    #[test]
    fn subcommands_parse() {
        let cli =
            Cli::try_parse_from(["loadgen", "storm", "--keys", "20000", "-p", "7000"]).unwrap();
        match cli.cmd {
            Some(Cmd::Storm(s)) => {
                assert_eq!(s.params.keys, 20000);
                assert_eq!(s.conn.port, Some(7000));
            }
            _ => panic!("expected storm"),
        }
        let cli = Cli::try_parse_from([
            "loadgen",
            "compare",
            "--target",
            "a=127.0.0.1:1",
            "--target",
            "b=127.0.0.1:2",
            "--scenario",
            "steady",
        ])
        .unwrap();
        assert!(
            matches!(cli.cmd, Some(Cmd::Compare(c)) if c.target.len() == 2 && c.scenario == Scenario::Steady)
        );
    }

    #[test]
    fn bad_values_are_errors() {
        assert!(parse_ratio("1").is_err());
        assert!(parse_range("5-1", "x").is_err());
        assert!(parse_percentiles("50,101").is_err());
    }
}
