//! The load engine: worker threads, each driving many non-blocking mio
//! connections with pipelining.
//!
//! Closed loop (no rate): every connection keeps `pipeline` requests in
//! flight and latency is measured from the moment a request is written.
//! Open loop (`rate_per_conn`): request *i* of a connection is due at
//! `epoch + offset + i / rate`; it is sent when due (as soon as fewer than
//! `pipeline` are in flight) and its latency is measured from the due time,
//! so time spent queued behind a stalled server is counted (coordinated
//! omission corrected).
//!
//! A `--command` template may hold several commands (`MULTI ; INCR __key__ ;
//! EXEC`): they are written back to back as one request, which completes with
//! the reply to its last command (one latency sample, one op); the replies
//! before it are read and counted (bytes, errors) as they arrive.
//!
//! The hot path does not allocate: requests are encoded into a reused write
//! buffer, replies are parsed in place by [`crate::resp::parse_reply`], and
//! the bookkeeping of in-flight requests is a preallocated ring.

use crate::keys::{below, rng, unit_f64, KeyGen, KeySpace, Pattern};
use crate::progress::Progress;
use crate::resp::{
    parse_reply, put_array_header, put_bulk, put_bulk_header, put_bulk_u64, put_key, Kind, Reply,
};
use crate::stats::{new_win_hist, Collector, ErrorCounts, KindTotals, WindowMsg, WINDOW_MS};
use crate::verify::{self, wall_us, ConnVerify, GetCheck, KeyState, VerifyReport};
use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use rand_core::RngCore;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// One part of a `--command` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Part {
    Lit(Vec<u8>),
    /// `__key__`: the request's key (the same in every command of a request).
    Key,
    /// `__key2__`: a second key of the request, drawn independently from the
    /// same key pattern.
    Key2,
    Data,
}

/// The placeholders of a `--command` argument and what they stand for.
const PLACEHOLDERS: [(&str, Part); 3] = [
    ("__key__", Part::Key),
    ("__key2__", Part::Key2),
    ("__data__", Part::Data),
];

/// Most commands in one template (a request's replies are counted in a `u16`).
const MAX_TEMPLATE_CMDS: usize = 1000;

/// One command of a template: its arguments, each a sequence of parts.
pub type CmdArgs = Vec<Vec<Part>>;

/// A `--command` template such as `SET __key__ __data__`, or several commands
/// separated by ` ; ` (`MULTI ; INCR __key__ ; EXEC`) sent back to back as
/// one request that completes with the reply to the last one.
#[derive(Clone, Debug)]
pub struct CmdTemplate {
    /// Display name ("Sets", "Hsets", "Txs" for `MULTI ; ...`, "Watch..." for
    /// other multi-command templates).
    pub name: String,
    /// The commands of one request, in sending order.
    pub cmds: Vec<CmdArgs>,
    pub ratio: u32,
    pub pattern: Pattern,
    /// A GET: nil counts as a miss, a value as a hit.
    pub is_get: bool,
    /// Some argument holds `__key2__`: draw a second key per request.
    pub uses_key2: bool,
    /// Some argument holds `__data__`: draw a value length per request.
    pub uses_data: bool,
    /// The last command is EXEC: a nil reply means the transaction aborted
    /// and errors inside its array are errors of the request.
    pub ends_with_exec: bool,
}

/// Splits a command line into words; double quotes group words and make a
/// `;` literal. Returns each word and whether any of it was quoted.
fn split_words(s: &str) -> Result<Vec<(String, bool)>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_q = false;
    let mut have = false;
    let mut quoted = false;
    for ch in s.chars() {
        match ch {
            '"' => {
                in_q = !in_q;
                have = true;
                quoted = true;
            }
            c if c.is_whitespace() && !in_q => {
                if have {
                    words.push((std::mem::take(&mut cur), quoted));
                    have = false;
                    quoted = false;
                }
            }
            c => {
                cur.push(c);
                have = true;
            }
        }
    }
    if in_q {
        return Err(format!("unbalanced quote in command {s:?}"));
    }
    if have {
        words.push((cur, quoted));
    }
    Ok(words)
}

/// Cuts one argument into literals and placeholders.
fn parse_arg(word: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut rest = word;
    while !rest.is_empty() {
        let first = PLACEHOLDERS
            .iter()
            .filter_map(|(text, part)| rest.find(text).map(|pos| (pos, text.len(), part)))
            .min_by_key(|(pos, _, _)| *pos);
        let Some((pos, plen, part)) = first else {
            parts.push(Part::Lit(rest.as_bytes().to_vec()));
            break;
        };
        if pos > 0 {
            parts.push(Part::Lit(rest.as_bytes()[..pos].to_vec()));
        }
        parts.push(part.clone());
        rest = &rest[pos + plen..];
    }
    parts
}

/// `hset` -> "Hset".
fn capitalized(word: &str) -> String {
    let mut name = word.to_ascii_lowercase();
    if let Some(f) = name.get_mut(0..1) {
        f.make_ascii_uppercase();
    }
    name
}

impl CmdTemplate {
    /// Parses a command line; double quotes group words, an unquoted `;`
    /// word separates the commands of a multi-command request.
    pub fn parse(s: &str, ratio: u32, pattern: Pattern) -> Result<CmdTemplate, String> {
        let words = split_words(s)?;
        if words.is_empty() {
            return Err("empty --command".into());
        }
        let mut cmds: Vec<Vec<&str>> = vec![Vec::new()];
        for (w, quoted) in &words {
            if w == ";" && !quoted {
                cmds.push(Vec::new());
            } else if let Some(last) = cmds.last_mut() {
                last.push(w);
            }
        }
        if cmds.iter().any(|c| c.is_empty()) {
            return Err(format!("empty command between ` ; ` in {s:?}"));
        }
        if cmds.len() > MAX_TEMPLATE_CMDS {
            return Err(format!(
                "more than {MAX_TEMPLATE_CMDS} commands in one --command"
            ));
        }
        let cmds: Vec<CmdArgs> = cmds
            .iter()
            .map(|c| c.iter().map(|w| parse_arg(w)).collect())
            .collect();
        let uses = |p: Part| cmds.iter().flatten().flatten().any(|x| *x == p);
        let first = cmds[0][0].as_slice();
        let first_word = match first {
            [Part::Lit(l)] => String::from_utf8_lossy(l).to_ascii_lowercase(),
            _ => String::new(),
        };
        let last_word = cmds.last().map(|c| c[0].as_slice());
        let ends_with_exec = cmds.len() > 1
            && matches!(last_word, Some([Part::Lit(l)]) if l.eq_ignore_ascii_case(b"exec"));
        let name = match cmds.len() {
            1 => capitalized(&first_word) + "s",
            _ if first_word == "multi" => "Txs".to_string(),
            _ => capitalized(&first_word) + "...",
        };
        Ok(CmdTemplate {
            name,
            is_get: cmds.len() == 1 && first_word == "get",
            uses_key2: uses(Part::Key2),
            uses_data: uses(Part::Data),
            ends_with_exec,
            cmds,
            ratio: ratio.max(1),
            pattern,
        })
    }
}

/// Appends one command of a template with its placeholders filled in.
fn put_template_cmd(w: &mut Vec<u8>, args: &CmdArgs, prefix: &[u8], keys: [u64; 2], value: &[u8]) {
    put_array_header(w, args.len());
    for arg in args {
        let mut alen = 0;
        for part in arg {
            alen += match part {
                Part::Lit(l) => l.len(),
                Part::Key => prefix.len() + crate::resp::digits(keys[0]),
                Part::Key2 => prefix.len() + crate::resp::digits(keys[1]),
                Part::Data => value.len(),
            };
        }
        put_bulk_header(w, alen);
        for part in arg {
            match part {
                Part::Lit(l) => w.extend_from_slice(l),
                Part::Key => {
                    w.extend_from_slice(prefix);
                    crate::resp::put_u64(w, keys[0]);
                }
                Part::Key2 => {
                    w.extend_from_slice(prefix);
                    crate::resp::put_u64(w, keys[1]);
                }
                Part::Data => w.extend_from_slice(value),
            }
        }
        w.extend_from_slice(b"\r\n");
    }
}

/// What requests a run sends.
#[derive(Clone, Debug)]
pub enum Ops {
    /// memtier's default SET/GET mix: `set` SETs then `get` GETs, repeated.
    SetGet {
        set: u32,
        get: u32,
        set_pattern: Pattern,
        get_pattern: Pattern,
    },
    /// Arbitrary `--command`s, cycled by their ratios.
    Commands(Vec<CmdTemplate>),
}

/// Everything a run needs to know.
#[derive(Clone, Debug)]
pub struct Workload {
    pub addr: SocketAddr,
    pub threads: usize,
    pub clients: usize,
    pub pipeline: usize,
    pub ops: Ops,
    pub keys: KeySpace,
    pub prefix: Vec<u8>,
    pub data_min: usize,
    pub data_max: usize,
    /// SET expiry range in seconds (`--expiry-range`).
    pub expiry: Option<(u64, u64)>,
    /// Requests per connection; `None` runs until the duration or a stop.
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    /// Open loop: requests per second per connection.
    pub rate_per_conn: Option<f64>,
    pub seed: u64,
    pub distinct_client_seed: bool,
    pub verify: bool,
    /// Keep the 100 ms window histograms (for phase percentiles).
    pub keep_window_hists: bool,
    pub percentiles: Vec<f64>,
    /// Start of the run (window 0, first due time); default: now.
    pub epoch: Option<Instant>,
    /// How long to wait for in-flight replies after the run ends.
    pub drain: Duration,
    /// Cache-aside (`--cache-aside`): a GET that misses is followed by a
    /// SET of its key, as an application filling its cache would do.
    pub cache_aside: bool,
    /// Scan pollution (`--scan-ratio`, `--scan-keys`): this share of GETs
    /// walk, in order, a range of this many cold keys past the key range
    /// (each connection its own stretch of it), as a batch job or crawler
    /// reading everything once would.
    pub scan: Option<(f64, u64)>,
}

impl Workload {
    /// Names of the request kinds, in stats order.
    pub fn kinds(&self) -> Vec<String> {
        match &self.ops {
            Ops::SetGet { .. } => vec!["Sets".into(), "Gets".into()],
            Ops::Commands(c) => c.iter().map(|c| c.name.clone()).collect(),
        }
    }

    /// Which kinds count hits and misses.
    pub fn is_get(&self, kind: usize) -> bool {
        match &self.ops {
            Ops::SetGet { .. } => kind == 1,
            Ops::Commands(c) => c[kind].is_get,
        }
    }

    fn schedule(&self) -> Vec<u8> {
        match &self.ops {
            Ops::SetGet { set, get, .. } => {
                let mut v = vec![0u8; *set as usize];
                v.extend(std::iter::repeat_n(1u8, *get as usize));
                if v.is_empty() {
                    v.push(1);
                }
                v
            }
            Ops::Commands(c) => c
                .iter()
                .enumerate()
                .flat_map(|(i, c)| std::iter::repeat_n(i as u8, c.ratio as usize))
                .collect(),
        }
    }

    fn patterns(&self) -> Vec<Pattern> {
        match &self.ops {
            Ops::SetGet {
                set_pattern,
                get_pattern,
                ..
            } => vec![*set_pattern, *get_pattern],
            Ops::Commands(c) => c.iter().map(|c| c.pattern).collect(),
        }
    }

    pub fn total_conns(&self) -> u64 {
        (self.threads * self.clients) as u64
    }

    /// Under `--verify` each connection owns the keys congruent to its index.
    fn partition(&self, key: u64, conn: u64) -> u64 {
        let n = self.total_conns();
        let range = self.keys.range();
        if range < n {
            return self.keys.min + conn % range;
        }
        let off = key - self.keys.min;
        let mut k = off - off % n + conn;
        if k >= range {
            k -= n;
        }
        self.keys.min + k
    }
}

/// Filler bytes for values (printable, deterministic).
pub fn filler(len: usize) -> Vec<u8> {
    let mut r = rng(0xda7a);
    (0..len.max(16))
        .map(|_| {
            b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                [below(&mut r, 62) as usize]
        })
        .collect()
}

/// Result of one run.
pub struct RunResult {
    pub kinds: Vec<String>,
    pub totals: Vec<KindTotals>,
    pub get_kinds: Vec<bool>,
    pub start_unix_ms: u64,
    pub end_unix_ms: u64,
    pub duration: Duration,
    pub collector: Collector,
    pub errors: ErrorCounts,
    pub verify: VerifyReport,
    pub connections: u64,
}

impl RunResult {
    pub fn total_ops(&self) -> u64 {
        self.totals.iter().map(|k| k.ops).sum()
    }

    pub fn ops_per_sec(&self) -> f64 {
        let s = self.duration.as_secs_f64();
        if s > 0.0 {
            self.total_ops() as f64 / s
        } else {
            0.0
        }
    }

    /// All kinds merged.
    pub fn total_hist(&self) -> Histogram<u64> {
        let mut h = crate::stats::new_hist();
        for k in &self.totals {
            h.add(&k.hist).expect("same bounds");
        }
        h
    }
}

#[derive(Clone, Copy)]
struct Pending {
    kind: u8,
    /// When the request was due (latency counts from here, open loop).
    t0: Instant,
    /// How late it was written out, µs after `t0`: the reply's delay from
    /// then on is the server's (and the network's), not loadgen's.
    late_us: u32,
    out: u32,
    key: u64,
    /// Verify: the SET's sequence, or the sequence a GET expects (0: unknown).
    seq: u64,
    ver: u64,
    vlen: u32,
    sent_us: u64,
    /// Replies still due before the last one (multi-command templates).
    left: u16,
    /// An earlier reply of this request was an error.
    failed: bool,
}

struct ThreadStats {
    kinds: Vec<KindTotals>,
    get_kinds: Vec<bool>,
    win_idx: u32,
    win: Vec<Histogram<u64>>,
    win_count: u64,
    /// The longest reply delay from the actual send in this window, µs.
    win_service_max_us: u64,
    tx: mpsc::Sender<WindowMsg>,
    errors: ErrorCounts,
    verify: VerifyReport,
    ops: u64,
}

impl ThreadStats {
    fn roll(&mut self, idx: u32) {
        if idx > self.win_idx {
            self.flush_window();
            self.win_idx = idx;
        }
    }

    fn flush_window(&mut self) {
        if self.win_count > 0 {
            let fresh = (0..self.win.len()).map(|_| new_win_hist()).collect();
            let kinds = std::mem::replace(&mut self.win, fresh);
            let _ = self.tx.send(WindowMsg {
                idx: self.win_idx,
                kinds,
                service_max_us: self.win_service_max_us,
            });
            self.win_count = 0;
            self.win_service_max_us = 0;
        }
    }
}

struct Conn {
    gidx: u64,
    stream: TcpStream,
    wbuf: Vec<u8>,
    wpos: usize,
    rbuf: Vec<u8>,
    rpos: usize,
    rlen: usize,
    pending: VecDeque<Pending>,
    rng: Xoshiro256PlusPlus,
    gens: Vec<KeyGen>,
    sched_pos: usize,
    issued: u64,
    next_due: Instant,
    interval: Duration,
    done_issuing: bool,
    dead: bool,
    ver: Option<ConnVerify>,
    /// Keys whose GET missed, to SET next (cache-aside).
    refill: VecDeque<u64>,
    /// The next cold key of this connection's scan (`Workload::scan`),
    /// as an offset into the scan range.
    scan_next: u64,
}

impl Conn {
    fn finished(&self) -> bool {
        self.dead || (self.done_issuing && self.pending.is_empty())
    }

    fn drop_conn(&mut self, stats: &mut ThreadStats, why: String) {
        if self.dead {
            return;
        }
        self.dead = true;
        stats.errors.connections_dropped += 1;
        stats.errors.unanswered += self.pending.len() as u64;
        stats.errors.sample(why);
        self.pending.clear();
    }

    fn fill(&mut self, wl: &Workload, sched: &[u8], data: &[u8], now: Instant) {
        if self.dead || self.done_issuing {
            return;
        }
        while self.pending.len() < wl.pipeline {
            // A miss's refill goes first and is not one of the requests
            // counted by `-n`.
            if let Some(key) = self.refill.pop_front() {
                self.issue_as(wl, sched, data, now, now, Some(key));
                continue;
            }
            if wl.requests.is_some_and(|n| self.issued >= n) {
                self.done_issuing = true;
                break;
            }
            let t0 = if wl.rate_per_conn.is_some() {
                if self.next_due > now {
                    break;
                }
                let t = self.next_due;
                self.next_due += self.interval;
                t
            } else {
                now
            };
            self.issue(wl, sched, data, t0, now);
        }
    }

    fn value_len(&mut self, wl: &Workload) -> usize {
        if wl.data_max > wl.data_min {
            wl.data_min + below(&mut self.rng, (wl.data_max - wl.data_min + 1) as u64) as usize
        } else {
            wl.data_min
        }
    }

    /// The next key of `kind`'s pattern (under `--verify`, one this connection owns).
    fn next_key(&mut self, wl: &Workload, kind: u8) -> u64 {
        if let Some((share, keys)) = wl.scan {
            if wl.is_get(usize::from(kind)) && unit_f64(&mut self.rng) < share {
                let key = wl.keys.max + 1 + self.scan_next % keys.max(1);
                self.scan_next += 1;
                return key;
            }
        }
        let key = self.gens[kind as usize].next_key(&mut self.rng);
        if self.ver.is_some() {
            wl.partition(key, self.gidx)
        } else {
            key
        }
    }

    /// Writes the next request, due at `t0`, into the buffer at `now`
    /// (flushed right after).
    fn issue(&mut self, wl: &Workload, sched: &[u8], data: &[u8], t0: Instant, now: Instant) {
        self.issue_as(wl, sched, data, t0, now, None);
        self.issued += 1;
    }

    /// [`issue`](Self::issue) of the next scheduled request, or with
    /// `refill` a SET of that key (cache-aside).
    fn issue_as(
        &mut self,
        wl: &Workload,
        sched: &[u8],
        data: &[u8],
        t0: Instant,
        now: Instant,
        refill: Option<u64>,
    ) {
        let kind = match refill {
            Some(_) => 0,
            None => {
                let kind = sched[self.sched_pos];
                self.sched_pos += 1;
                if self.sched_pos == sched.len() {
                    self.sched_pos = 0;
                }
                kind
            }
        };
        let start = self.wbuf.len();
        let mut p = Pending {
            kind,
            t0,
            late_us: now
                .saturating_duration_since(t0)
                .as_micros()
                .min(u32::MAX as u128) as u32,
            out: 0,
            key: 0,
            seq: 0,
            ver: 0,
            vlen: 0,
            sent_us: 0,
            left: 0,
            failed: false,
        };
        let key = match refill {
            Some(key) => key,
            None => self.next_key(wl, kind),
        };
        p.key = key;
        match &wl.ops {
            Ops::SetGet { .. } if kind == 0 => {
                let len = self.value_len(wl);
                let exp = wl
                    .expiry
                    .map(|(a, b)| a + below(&mut self.rng, b.saturating_sub(a) + 1));
                let w = &mut self.wbuf;
                put_array_header(w, if exp.is_some() { 5 } else { 3 });
                put_bulk(w, b"SET");
                put_key(w, &wl.prefix, key);
                put_bulk_header(w, len);
                if let Some(v) = &mut self.ver {
                    let now_us = wall_us();
                    v.next_seq += 1;
                    let seq = v.next_seq;
                    verify::write_value(w, verify::tag(self.gidx, key, seq), len, data);
                    v.keys.insert(
                        key,
                        KeyState {
                            ver: seq,
                            len: len as u32,
                            seq,
                            set_sent_us: now_us,
                            set_reply_us: None,
                            ttl_us: exp.map(|s| s * 1_000_000),
                        },
                    );
                    p.seq = seq;
                    p.sent_us = now_us;
                } else {
                    w.extend_from_slice(&data[..len]);
                }
                w.extend_from_slice(b"\r\n");
                if let Some(s) = exp {
                    put_bulk(w, b"EX");
                    put_bulk_u64(w, s);
                }
            }
            Ops::SetGet { .. } => {
                let w = &mut self.wbuf;
                put_array_header(w, 2);
                put_bulk(w, b"GET");
                put_key(w, &wl.prefix, key);
                if let Some(v) = &self.ver {
                    p.sent_us = wall_us();
                    if let Some(st) = v.keys.get(&key) {
                        p.seq = st.seq;
                        p.ver = st.ver;
                        p.vlen = st.len;
                    }
                }
            }
            Ops::Commands(cmds) => {
                let c = &cmds[kind as usize];
                let len = if c.uses_data { self.value_len(wl) } else { 0 };
                let key2 = if c.uses_key2 {
                    self.next_key(wl, kind)
                } else {
                    0
                };
                for cmd in &c.cmds {
                    put_template_cmd(&mut self.wbuf, cmd, &wl.prefix, [key, key2], &data[..len]);
                }
                p.left = (c.cmds.len() - 1) as u16;
            }
        }
        p.out = (self.wbuf.len() - start) as u32;
        self.pending.push_back(p);
    }

    fn flush(&mut self, stats: &mut ThreadStats) {
        while self.wpos < self.wbuf.len() {
            match self.stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => {
                    self.drop_conn(stats, "connection closed while writing".into());
                    return;
                }
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.drop_conn(stats, format!("write failed: {e}"));
                    return;
                }
            }
        }
        self.wbuf.clear();
        self.wpos = 0;
    }

    fn on_readable(&mut self, wl: &Workload, data: &[u8], stats: &mut ThreadStats, now: Instant) {
        while !self.dead {
            if self.rlen == self.rbuf.len() {
                if self.rpos > 0 {
                    self.rbuf.copy_within(self.rpos..self.rlen, 0);
                    self.rlen -= self.rpos;
                    self.rpos = 0;
                } else {
                    let n = self.rbuf.len() * 2;
                    self.rbuf.resize(n, 0);
                }
            }
            match self.stream.read(&mut self.rbuf[self.rlen..]) {
                Ok(0) => {
                    self.drop_conn(stats, "connection closed by server".into());
                }
                Ok(n) => {
                    let want = self.rbuf.len() - self.rlen;
                    self.rlen += n;
                    self.process(wl, data, stats, now);
                    // A short read drained the socket: skip the read that
                    // would only say WouldBlock (new data raises a new edge).
                    if n < want {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => self.drop_conn(stats, format!("read failed: {e}")),
            }
        }
    }

    fn process(&mut self, wl: &Workload, data: &[u8], stats: &mut ThreadStats, now: Instant) {
        // One wall-clock reading per batch, only when verifying.
        let mut now_us = 0;
        loop {
            match parse_reply(&self.rbuf[self.rpos..self.rlen]) {
                Ok(Some(r)) => {
                    let Some(front) = self.pending.front_mut() else {
                        stats.errors.protocol_errors += 1;
                        self.drop_conn(stats, "reply without a request".into());
                        return;
                    };
                    if front.left > 0 {
                        // Not yet the last reply of a multi-command request.
                        front.left -= 1;
                        front.failed |= r.kind == Kind::Error;
                        let kind = front.kind as usize;
                        self.on_partial_reply(stats, kind, r);
                        self.rpos += r.len;
                        continue;
                    }
                    let p = *front;
                    self.pending.pop_front();
                    if self.ver.is_some() && now_us == 0 {
                        now_us = wall_us();
                    }
                    self.on_reply(wl, data, stats, &p, r, now, now_us);
                    self.rpos += r.len;
                }
                Ok(None) => break,
                Err(e) => {
                    stats.errors.protocol_errors += 1;
                    self.drop_conn(stats, e.to_string());
                    return;
                }
            }
        }
        if self.rpos == self.rlen {
            self.rpos = 0;
            self.rlen = 0;
        }
    }

    /// A reply before the last one of a multi-command request: counted in
    /// bytes and errors; the latency sample is taken at the last reply.
    fn on_partial_reply(&mut self, stats: &mut ThreadStats, kind: usize, r: Reply) {
        stats.kinds[kind].bytes += r.len as u64;
        if r.kind == Kind::Error {
            self.count_error_reply(stats, r);
        }
    }

    /// Counts the error reply `r` (at `self.rpos`) and keeps its text as a sample.
    fn count_error_reply(&self, stats: &mut ThreadStats, r: Reply) {
        stats.errors.error_replies += 1;
        if stats.errors.samples.len() < 10 {
            let base = self.rpos;
            let msg = String::from_utf8_lossy(&self.rbuf[base + r.start..base + r.end]);
            stats.errors.sample(format!("error reply: {msg}"));
        }
    }

    /// The end of a multi-command request that failed earlier or ends with
    /// EXEC: counts an aborted EXEC (nil) and errors inside EXEC's array, and
    /// the request as failed once (unless its last reply, an error, already was).
    fn finish_multi(stats: &mut ThreadStats, kind: usize, p: &Pending, exec: bool, r: Reply) {
        let aborted = exec && r.kind == Kind::Nil;
        let nested = if exec { r.nested_errors } else { 0 };
        if aborted {
            stats.errors.aborted += 1;
            stats
                .errors
                .sample("EXEC answered nil: transaction aborted".into());
        }
        if nested > 0 {
            stats.errors.error_replies += nested as u64;
            stats
                .errors
                .sample("EXEC's reply holds errors of queued commands".into());
        }
        if r.kind != Kind::Error && (p.failed || aborted || nested > 0) {
            stats.kinds[kind].errors += 1;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_reply(
        &mut self,
        wl: &Workload,
        data: &[u8],
        stats: &mut ThreadStats,
        p: &Pending,
        r: Reply,
        now: Instant,
        now_us: u64,
    ) {
        let kind = p.kind as usize;
        let lat = (now.saturating_duration_since(p.t0).as_micros() as u64).max(1);
        let k = &mut stats.kinds[kind];
        k.ops += 1;
        k.bytes += p.out as u64 + r.len as u64;
        k.hist.saturating_record(lat);
        stats.win[kind].saturating_record(lat);
        stats.win_count += 1;
        let service = lat.saturating_sub(u64::from(p.late_us));
        stats.win_service_max_us = stats.win_service_max_us.max(service);
        stats.ops += 1;
        let base = self.rpos;
        match r.kind {
            Kind::Error => {
                k.errors += 1;
                self.count_error_reply(stats, r);
            }
            Kind::Bulk if stats.get_kinds[kind] => k.hits += 1,
            Kind::Nil if stats.get_kinds[kind] => {
                k.misses += 1;
                if wl.cache_aside && matches!(wl.ops, Ops::SetGet { .. }) {
                    self.refill.push_back(p.key);
                }
            }
            _ => {}
        }
        // A template ending with EXEC (nil: aborted).
        let exec = matches!(&wl.ops, Ops::Commands(c) if c[kind].ends_with_exec);
        if exec || p.failed {
            Self::finish_multi(stats, kind, p, exec, r);
        }
        let Some(v) = &mut self.ver else { return };
        let is_set = matches!(wl.ops, Ops::SetGet { .. }) && kind == 0;
        if is_set {
            if let Some(st) = v.keys.get_mut(&p.key) {
                if st.seq == p.seq {
                    if r.kind == Kind::Error {
                        v.keys.remove(&p.key);
                    } else {
                        st.set_reply_us = Some(now_us);
                    }
                }
            }
            return;
        }
        if !stats.get_kinds[kind] || r.kind == Kind::Error {
            return;
        }
        let state = v.keys.get(&p.key).copied();
        let Some(st) = state.filter(|st| p.seq != 0 && st.seq == p.seq) else {
            stats.verify.unchecked += 1;
            return;
        };
        stats.verify.checked += 1;
        let got = match r.kind {
            Kind::Bulk => Some(&self.rbuf[base + r.start..base + r.end]),
            _ => None,
        };
        let check = GetCheck {
            key: String::new(),
            got,
            get_sent_us: p.sent_us,
            get_reply_us: now_us,
            tag: verify::tag(self.gidx, p.key, p.ver),
            len: p.vlen as usize,
            deadlines: st.deadlines(now_us),
        };
        if let Some(mut viol) = verify::check_get(&check, data) {
            viol.key = format!("{}{}", String::from_utf8_lossy(&wl.prefix), p.key);
            stats.verify.add(viol);
        }
    }
}

/// Shared state between the run and its caller.
pub struct Control {
    /// Set to stop issuing (Ctrl-C, storm end).
    pub stop: Arc<AtomicBool>,
}

fn window_index(epoch: Instant, now: Instant) -> u32 {
    (now.saturating_duration_since(epoch).as_millis() as u64 / WINDOW_MS) as u32
}

struct ThreadResult {
    kinds: Vec<KindTotals>,
    errors: ErrorCounts,
    verify: VerifyReport,
    connections: u64,
}

#[allow(clippy::too_many_arguments)]
fn worker(
    t: usize,
    wl: Arc<Workload>,
    epoch: Instant,
    stop: Arc<AtomicBool>,
    ops_counter: Arc<AtomicU64>,
    tx: mpsc::Sender<WindowMsg>,
    data: Arc<Vec<u8>>,
) -> ThreadResult {
    let kinds_n = wl.kinds().len();
    let mut stats = ThreadStats {
        kinds: (0..kinds_n).map(|_| KindTotals::default()).collect(),
        get_kinds: (0..kinds_n).map(|k| wl.is_get(k)).collect(),
        win_idx: 0,
        win: (0..kinds_n).map(|_| new_win_hist()).collect(),
        win_count: 0,
        win_service_max_us: 0,
        tx,
        errors: ErrorCounts::default(),
        verify: VerifyReport {
            enabled: wl.verify,
            ..Default::default()
        },
        ops: 0,
    };
    let sched = wl.schedule();
    let patterns = wl.patterns();
    let nconns = wl.total_conns();
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            stats.errors.connect_failed += wl.clients as u64;
            stats.errors.sample(format!("cannot create poller: {e}"));
            return ThreadResult {
                kinds: stats.kinds,
                errors: stats.errors,
                verify: stats.verify,
                connections: 0,
            };
        }
    };
    let interval = wl
        .rate_per_conn
        .map(|r| Duration::from_secs_f64(1.0 / r.max(1e-6)))
        .unwrap_or_default();
    let mut conns: Vec<Conn> = Vec::with_capacity(wl.clients);
    for c in 0..wl.clients {
        let gidx = (t * wl.clients + c) as u64;
        let std_stream =
            match std::net::TcpStream::connect_timeout(&wl.addr, Duration::from_secs(3)) {
                Ok(s) => s,
                Err(e) => {
                    stats.errors.connect_failed += 1;
                    stats
                        .errors
                        .sample(format!("cannot connect to {}: {e}", wl.addr));
                    continue;
                }
            };
        let _ = std_stream.set_nodelay(true);
        if let Err(e) = std_stream.set_nonblocking(true) {
            stats.errors.connect_failed += 1;
            stats.errors.sample(format!("set_nonblocking: {e}"));
            continue;
        }
        let mut stream = TcpStream::from_std(std_stream);
        let token = Token(conns.len());
        if let Err(e) =
            poll.registry()
                .register(&mut stream, token, Interest::READABLE | Interest::WRITABLE)
        {
            stats.errors.connect_failed += 1;
            stats.errors.sample(format!("register: {e}"));
            continue;
        }
        let seed = if wl.distinct_client_seed {
            wl.seed.wrapping_add(gidx.wrapping_mul(0x9e37_79b9))
        } else {
            wl.seed
        };
        let mut r = rng(seed);
        // Spread the first due times of the connections over one interval.
        let offset = interval.mul_f64(gidx as f64 / nconns.max(1) as f64);
        let _ = r.next_u64();
        conns.push(Conn {
            gidx,
            stream,
            wbuf: Vec::with_capacity(64 * 1024),
            wpos: 0,
            rbuf: vec![0; 64 * 1024],
            rpos: 0,
            rlen: 0,
            pending: VecDeque::with_capacity(wl.pipeline),
            rng: r,
            gens: patterns
                .iter()
                .map(|p| KeyGen::new(*p, &wl.keys, gidx, nconns))
                .collect(),
            sched_pos: 0,
            issued: 0,
            next_due: epoch + offset,
            interval,
            done_issuing: false,
            refill: VecDeque::new(),
            scan_next: wl.scan.map_or(0, |(_, keys)| keys / nconns.max(1) * gidx),
            dead: false,
            ver: wl.verify.then(ConnVerify::default),
        });
    }
    let connections = conns.len() as u64;
    // Wait for the epoch (storm starts traffic at a given instant).
    sleep_until(epoch, &stop);
    let deadline = wl.duration.map(|d| epoch + d);
    let mut events = Events::with_capacity(1024);
    let mut stopping = false;
    let mut drain_until = None;
    let mut next_wake = Instant::now();
    let rate_mode = wl.rate_per_conn.is_some();
    let mut first = true;
    loop {
        let now = Instant::now();
        if !stopping && (stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d)) {
            stopping = true;
            drain_until = Some(now + wl.drain);
            for c in conns.iter_mut() {
                c.done_issuing = true;
            }
        }
        stats.roll(window_index(epoch, now));
        if first || (rate_mode && now >= next_wake) {
            first = false;
            for c in conns.iter_mut() {
                c.fill(&wl, &sched, &data, now);
                c.flush(&mut stats);
            }
        }
        if rate_mode {
            next_wake = conns
                .iter()
                .filter(|c| !c.dead && !c.done_issuing && c.pending.len() < wl.pipeline)
                .map(|c| c.next_due)
                .min()
                .unwrap_or(now + Duration::from_millis(10));
        }
        ops_counter.store(stats.ops, Ordering::Relaxed);
        if conns.iter().all(|c| c.finished()) {
            break;
        }
        if drain_until.is_some_and(|d| now >= d) {
            for c in conns.iter_mut().filter(|c| !c.dead) {
                stats.errors.unanswered += c.pending.len() as u64;
                c.pending.clear();
            }
            if stats.errors.unanswered > 0 {
                stats
                    .errors
                    .sample("requests still unanswered when the run ended".into());
            }
            break;
        }
        // epoll waits in whole milliseconds (rounded up, plus timer slack),
        // which would add up to ~1 ms of our own lag to open-loop latencies:
        // wait in epoll only until ~1 ms before the next due request, then
        // alternate non-blocking polls with short sleeps.
        let wait = next_wake.saturating_duration_since(now);
        let timeout = if !rate_mode {
            Duration::from_millis(10)
        } else if wait >= Duration::from_millis(2) {
            (wait - Duration::from_millis(1)).min(Duration::from_millis(10))
        } else {
            Duration::ZERO
        };
        if let Err(e) = poll.poll(&mut events, Some(timeout)) {
            if e.kind() != ErrorKind::Interrupted {
                stats.errors.sample(format!("poll failed: {e}"));
                break;
            }
        }
        if timeout.is_zero() && events.is_empty() && !wait.is_zero() {
            std::thread::sleep(wait.min(Duration::from_micros(100)));
        }
        let now = Instant::now();
        stats.roll(window_index(epoch, now));
        for ev in events.iter() {
            let c = &mut conns[ev.token().0];
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                c.on_readable(&wl, &data, &mut stats, now);
            }
            c.fill(&wl, &sched, &data, now);
            c.flush(&mut stats);
        }
    }
    stats.flush_window();
    ops_counter.store(stats.ops, Ordering::Relaxed);
    ThreadResult {
        kinds: stats.kinds,
        errors: stats.errors,
        verify: stats.verify,
        connections,
    }
}

/// Sleeps until `t` or until `stop` is set.
pub fn sleep_until(t: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= t || stop.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(10)));
    }
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Runs a workload to completion (requests, duration or `ctl.stop`).
pub fn run(wl: Workload, ctl: &Control, progress: &mut Progress) -> RunResult {
    let wl = Arc::new(wl);
    let data = Arc::new(filler(wl.data_max.max(16)));
    let now = Instant::now();
    let epoch = wl.epoch.unwrap_or(now);
    let start_unix_ms = unix_ms() + epoch.saturating_duration_since(now).as_millis() as u64;
    let (tx, rx) = mpsc::channel();
    let counters: Vec<Arc<AtomicU64>> = (0..wl.threads)
        .map(|_| Arc::new(AtomicU64::new(0)))
        .collect();
    let mut handles = Vec::new();
    for (t, counter) in counters.iter().enumerate() {
        let (wl2, stop, ctr, tx2, d) = (
            wl.clone(),
            ctl.stop.clone(),
            counter.clone(),
            tx.clone(),
            data.clone(),
        );
        handles.push(
            std::thread::Builder::new()
                .name(format!("loadgen-{t}"))
                .spawn(move || worker(t, wl2, epoch, stop, ctr, tx2, d))
                .expect("spawn worker thread"),
        );
    }
    drop(tx);
    let kinds = wl.kinds();
    let mut coll = Collector::new(kinds.len(), wl.keep_window_hists, wl.percentiles.clone());
    let total_planned = wl.requests.map(|n| n * wl.total_conns());
    progress.start(total_planned, wl.duration);
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(m) => {
                coll.add(m);
                while let Ok(m) = rx.try_recv() {
                    coll.add(m);
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        let cur = window_index(epoch, now);
        coll.finalize_before(cur.saturating_sub(10));
        let done: u64 = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let (recent_ops, recent_p99) = coll.recent(10);
        progress.tick(
            done,
            now.saturating_duration_since(epoch),
            recent_ops,
            recent_p99,
        );
    }
    let end = Instant::now();
    let mut totals: Vec<KindTotals> = (0..kinds.len()).map(|_| KindTotals::default()).collect();
    let mut errors = ErrorCounts::default();
    let mut verify = VerifyReport {
        enabled: wl.verify,
        ..Default::default()
    };
    let mut connections = 0;
    for h in handles {
        match h.join() {
            Ok(r) => {
                for (a, b) in totals.iter_mut().zip(r.kinds.iter()) {
                    a.merge(b);
                }
                errors.merge(&r.errors);
                verify.merge(&r.verify);
                connections += r.connections;
            }
            Err(_) => errors.sample("a worker thread panicked".into()),
        }
    }
    coll.finish(window_index(epoch, end));
    progress.finish();
    RunResult {
        get_kinds: (0..kinds.len()).map(|k| wl.is_get(k)).collect(),
        kinds,
        totals,
        start_unix_ms,
        end_unix_ms: unix_ms(),
        duration: end.saturating_duration_since(epoch),
        collector: coll,
        errors,
        verify,
        connections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_templates() {
        let c =
            CmdTemplate::parse("HSET h:__key__ f \"a b\" __data__", 2, Pattern::Random).unwrap();
        assert_eq!(c.name, "Hsets");
        assert_eq!(c.cmds.len(), 1);
        let args = &c.cmds[0];
        assert_eq!(args.len(), 5);
        assert!(matches!(args[1][1], Part::Key));
        assert!(matches!(&args[3][0], Part::Lit(l) if l == b"a b"));
        assert!(matches!(args[4][0], Part::Data));
        assert!(c.uses_data && !c.uses_key2 && !c.ends_with_exec);
        assert!(
            CmdTemplate::parse("GET __key__", 1, Pattern::Random)
                .unwrap()
                .is_get
        );
        assert!(CmdTemplate::parse("  ", 1, Pattern::Random).is_err());
    }

    #[test]
    fn multi_command_templates() {
        let c = CmdTemplate::parse(
            "MULTI ; INCR {__key__}a ; INCR __key2__ ; exec",
            1,
            Pattern::Random,
        )
        .unwrap();
        assert_eq!(c.name, "Txs");
        assert_eq!(c.cmds.len(), 4);
        assert_eq!(
            c.cmds[1][1],
            vec![
                Part::Lit(b"{".to_vec()),
                Part::Key,
                Part::Lit(b"}a".to_vec())
            ]
        );
        assert_eq!(c.cmds[2][1], vec![Part::Key2]);
        assert!(c.uses_key2 && !c.uses_data && c.ends_with_exec && !c.is_get);

        let w = CmdTemplate::parse("GET __key__ ; GET __key__", 1, Pattern::Random).unwrap();
        assert_eq!(w.name, "Get...");
        assert!(!w.is_get && !w.ends_with_exec);
        // A quoted or attached `;` is an argument, not a separator.
        let q = CmdTemplate::parse("SET k \";\" ; ECHO a;", 1, Pattern::Random).unwrap();
        assert_eq!(q.cmds.len(), 2);
        assert_eq!(q.cmds[0][2], vec![Part::Lit(b";".to_vec())]);
        assert_eq!(q.cmds[1][1], vec![Part::Lit(b"a;".to_vec())]);
        for bad in ["MULTI ; ; EXEC", "; GET k", "GET k ;"] {
            assert!(
                CmdTemplate::parse(bad, 1, Pattern::Random).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn pending_stays_one_cache_line() {
        // Multi-command bookkeeping must not grow the single-command ring.
        assert!(std::mem::size_of::<Pending>() <= 64);
    }

    #[test]
    fn multi_command_encoding() {
        let c = CmdTemplate::parse("MULTI ; SET __key__:__key2__ __data__", 1, Pattern::Random)
            .unwrap();
        let mut w = Vec::new();
        for cmd in &c.cmds {
            put_template_cmd(&mut w, cmd, b"k", [7, 42], b"xy");
        }
        assert_eq!(
            w,
            b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$6\r\nk7:k42\r\n$2\r\nxy\r\n"
        );
    }
}
