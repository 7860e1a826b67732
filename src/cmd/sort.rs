//! SORT and SORT_RO: a list, set or sorted set's members sorted
//! numerically or by bytes (ALPHA), by the members themselves or by keys
//! their BY pattern names, cut by LIMIT, answered as the members or as the
//! values their GET patterns name, or stored as a list (STORE).
//!
//! The keys BY and GET read are computed from the data, so they are unknown
//! until the source is read. With one shard, or no pattern that reads a key,
//! SORT is an ordinary keyed command (inline when its keys are local, no
//! lock). Otherwise it runs in steps (`sort_job`):
//!
//! 1. an op on the source's shard reads the source and works out the keys
//!    its patterns name; when they (and the destination) are all on that
//!    shard, the op finishes the command there, atomically;
//! 2. otherwise the source, the destination and those keys are locked, the
//!    source is read again with the pattern keys' values (one op per shard);
//!    if the source changed between the steps, the locks are given back and
//!    taken again for the keys its new members name;
//! 3. the members are sorted here and the reply sent, or the result stored
//!    on the destination's shard, still under the locks.
//!
//! The pure parts (options, patterns, LIMIT's window, the order) are plain
//! functions over a [`Lookup`], which is the keyspace inline and a map of
//! values read from their shards in a job.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet, VecDeque};

use bytes::Bytes;

use super::args::{err, int_arg, Reply};
use super::{lock_plan, shard_of, Ctx, Session, ShardData};
use crate::exec::{Action, Job, LockPlan, Need, Op, Out};
use crate::resp::Frame;
use crate::store::notify::{GENERIC, LIST};
use crate::store::{Keyspace, Value};
use crate::util::num::{parse_f64, parse_range_f64};

const NOT_DOUBLE: &str = "ERR One or more scores can't be converted into double";

/// SORT's options, as Redis reads them (a later ASC/DESC, LIMIT, BY or
/// STORE replaces an earlier one; GETs add up).
#[derive(Clone, Debug, Default)]
pub struct Options {
    desc: bool,
    alpha: bool,
    limit: Option<(i64, i64)>,
    store: Option<Bytes>,
    by: Option<Bytes>,
    /// A BY pattern without `*`: keep the container's order.
    dontsort: bool,
    gets: Vec<Bytes>,
    /// Run by a script: a set's members come sorted even for a BY
    /// constant (a script must see the same order on every replica).
    for_script: bool,
}

/// Parses SORT's (`readonly`: SORT_RO's) options after the key.
pub fn parse(argv: &[Bytes], readonly: bool) -> Result<Options, Frame> {
    let mut o = Options::default();
    let mut j = 2;
    while j < argv.len() {
        let left = argv.len() - j - 1;
        let word = argv[j].to_ascii_lowercase();
        match word.as_slice() {
            b"asc" => o.desc = false,
            b"desc" => o.desc = true,
            b"alpha" => o.alpha = true,
            b"limit" if left >= 2 => {
                o.limit = Some((int_arg(&argv[j + 1])?, int_arg(&argv[j + 2])?));
                j += 2;
            }
            b"store" if !readonly && left >= 1 => {
                o.store = Some(argv[j + 1].clone());
                j += 1;
            }
            b"by" if left >= 1 => {
                o.dontsort = !c_str(&argv[j + 1]).contains(&b'*');
                o.by = Some(argv[j + 1].clone());
                j += 1;
            }
            b"get" if left >= 1 => {
                o.gets.push(argv[j + 1].clone());
                j += 1;
            }
            _ => return Err(err::syntax()),
        }
        j += 1;
    }
    Ok(o)
}

/// SORT's key positions for COMMAND GETKEYS and routing: the source and
/// the last STORE's destination, skipping what LIMIT, GET and BY take (as
/// Redis's `sortGetKeys`).
pub fn keys(argv: &[Bytes]) -> Vec<usize> {
    let mut found = vec![1];
    let mut store = None;
    let mut i = 2;
    while i < argv.len() {
        let word = argv[i].to_ascii_lowercase();
        match word.as_slice() {
            b"limit" => i += 2,
            b"get" | b"by" => i += 1,
            b"store" if i + 1 < argv.len() => store = Some(i + 1),
            _ => {}
        }
        i += 1;
    }
    found.extend(store);
    found
}

/// SORT_RO's key positions: its source alone.
pub fn ro_keys(_: &[Bytes]) -> Vec<usize> {
    vec![1]
}

/// Whether SORT's arguments name a pattern that reads keys (a BY or GET
/// pattern with `*`): then the keys it reads come from the data.
pub fn reaches_keys(argv: &[Bytes]) -> bool {
    let readonly = argv[0].eq_ignore_ascii_case(b"sort_ro");
    match parse(argv, readonly) {
        Ok(o) => o.gets.iter().chain(o.by.iter()).any(|p| has_star(p)),
        Err(_) => false, // the handler reports the error
    }
}

/// The bytes C's string functions see: up to the first NUL (Redis looks
/// for `*` and `->` with strchr/strstr, and compares ALPHA with strcoll).
fn c_str(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

fn has_star(pattern: &[u8]) -> bool {
    pattern != b"#" && c_str(pattern).contains(&b'*')
}

/// What a pattern reads: a string key, or one field of a hash.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    key: Bytes,
    field: Option<Bytes>,
}

/// What a pattern gives for one member.
#[derive(Debug, PartialEq)]
enum Resolved {
    /// `#`: the member itself.
    Member,
    Read(Target),
    /// No `*`: nothing (nil).
    Nil,
}

/// Substitutes `member` for the pattern's first `*`; `key->field` after it
/// names a hash field (an empty field name does not).
fn resolve(pattern: &[u8], member: &[u8]) -> Resolved {
    if pattern == b"#" {
        return Resolved::Member;
    }
    let Some(star) = c_str(pattern).iter().position(|&c| c == b'*') else {
        return Resolved::Nil;
    };
    let after = &c_str(pattern)[star + 1..];
    let arrow = after
        .windows(2)
        .position(|w| w == b"->")
        .map(|p| star + 1 + p)
        .filter(|&p| p + 2 < pattern.len() && pattern[p + 2] != 0);
    let (end, field) = match arrow {
        Some(p) => (p, Some(Bytes::copy_from_slice(&pattern[p + 2..]))),
        None => (pattern.len(), None),
    };
    let mut key = Vec::with_capacity(end + member.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(member);
    key.extend_from_slice(&pattern[star + 1..end]);
    Resolved::Read(Target {
        key: key.into(),
        field,
    })
}

/// Reads what patterns name.
pub trait Lookup {
    fn get(&mut self, target: &Target) -> Option<Bytes>;
}

/// The value a target names in a keyspace: a string's bytes or a hash
/// field's; nothing for a missing key or one of another type.
fn read_target(ks: &mut Keyspace, target: &Target) -> Option<Bytes> {
    let entry = ks.read(&target.key)?;
    match (&entry.value, &target.field) {
        (Value::Str(s), None) => Some(s.to_bytes()),
        (Value::Hash(hash), Some(field)) => hash.get(field).map(Bytes::copy_from_slice),
        _ => None,
    }
}

impl Lookup for Keyspace<'_> {
    fn get(&mut self, target: &Target) -> Option<Bytes> {
        read_target(self, target)
    }
}

/// Values read from their shards.
type Found = HashMap<Target, Option<Bytes>>;

impl Lookup for Found {
    fn get(&mut self, target: &Target) -> Option<Bytes> {
        HashMap::get(self, target).cloned().flatten()
    }
}

/// The container's kind, which decides what `BY nosort` keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    List,
    Set,
    ZSet,
}

/// A copy of the source's members in the container's order (a sorted set
/// in score order); a missing key is an empty list.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    kind: Kind,
    members: Vec<Bytes>,
}

fn read_source(ks: &mut Keyspace, key: &[u8]) -> Result<Source, Frame> {
    let Some(entry) = ks.read(key) else {
        return Ok(Source {
            kind: Kind::List,
            members: Vec::new(),
        });
    };
    Ok(match &entry.value {
        Value::List(l) => Source {
            kind: Kind::List,
            members: l.iter().cloned().collect(),
        },
        Value::Set(s) => Source {
            kind: Kind::Set,
            members: s.iter().cloned().collect(),
        },
        Value::ZSet(z) => Source {
            kind: Kind::ZSet,
            members: z.iter().map(|(m, _)| m.clone()).collect(),
        },
        _ => return Err(err::wrongtype()),
    })
}

/// The members to sort (or to answer in order) and how.
struct Work {
    members: Vec<Bytes>,
    /// Sort at all; by the BY pattern when given.
    sort: bool,
    alpha: bool,
    by: Option<Bytes>,
    /// The window of the sorted members answered, `start..end`.
    start: usize,
    end: usize,
}

/// Applies Redis's rules to the source: a set with no order asked for is
/// sorted ALPHA when stored (so a replica gets the same list); LIMIT is
/// clamped to the members; `BY nosort` on a list or sorted set takes the
/// window in the container's order (DESC reverses it).
fn plan(o: &Options, src: Source) -> Work {
    let mut sort = !o.dontsort;
    let mut alpha = o.alpha;
    let mut by = o.by.clone().filter(|_| !o.dontsort);
    if o.dontsort && src.kind == Kind::Set && (o.store.is_some() || o.for_script) {
        (sort, alpha, by) = (true, true, None);
    }
    let len = src.members.len() as i64;
    let (lstart, lcount) = o.limit.unwrap_or((0, -1));
    let mut start = lstart.clamp(0, len);
    let count = lcount.clamp(-1, len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    let start = start.max(0);
    let (start, end) = (start as usize, (end + 1).max(start) as usize);
    let mut members = src.members;
    if !sort && src.kind != Kind::Set {
        if o.desc {
            members.reverse();
        }
        members = members.drain(start..end).collect();
        return Work {
            end: members.len(),
            members,
            sort,
            alpha,
            by,
            start: 0,
        };
    }
    Work {
        members,
        sort,
        alpha,
        by,
        start,
        end,
    }
}

/// What the patterns read for `work`: BY's keys when sorting by it, GET's
/// for every member (the window is known only after sorting).
fn targets(o: &Options, work: &Work) -> Vec<Target> {
    let by = work.by.iter().filter(|_| work.sort);
    let patterns: Vec<&Bytes> = by.chain(o.gets.iter()).collect();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for member in &work.members {
        for p in &patterns {
            if let Resolved::Read(t) = resolve(p, member) {
                if seen.insert(t.clone()) {
                    out.push(t);
                }
            }
        }
    }
    out
}

/// strtod's rule as SORT applies it: all text read (leading blanks and the
/// empty string allowed), no overflow or underflow, not NaN.
fn score(b: &[u8]) -> Option<f64> {
    let v = parse_range_f64(b)?;
    let text = b.trim_ascii_start();
    if text.is_empty() {
        return Some(v);
    }
    parse_f64(text).map(|_| v)
}

/// A member with what it sorts by.
struct Keyed {
    member: Bytes,
    score: f64,
    /// ALPHA BY: the pattern's value (None sorts first).
    by: Option<Bytes>,
}

/// Sorts `work` and returns its window, or the conversion error.
fn order(
    work: Work,
    desc: bool,
    storing: bool,
    lookup: &mut dyn Lookup,
) -> Result<Vec<Bytes>, Frame> {
    let Work {
        members,
        sort,
        alpha,
        by,
        start,
        end,
    } = work;
    if !sort {
        return Ok(members.into_iter().skip(start).take(end - start).collect());
    }
    let mut bad = false;
    let mut keyed: Vec<Keyed> = members
        .into_iter()
        .map(|member| {
            let value = match &by {
                Some(p) => match resolve(p, &member) {
                    Resolved::Read(t) => lookup.get(&t),
                    Resolved::Member => Some(member.clone()),
                    Resolved::Nil => None,
                },
                None => None,
            };
            let score = match (alpha, &by, &value) {
                (true, _, _) => 0.0,
                (false, None, _) => score(&member).unwrap_or_else(|| {
                    bad = true;
                    0.0
                }),
                (false, Some(_), Some(v)) => score(v).unwrap_or_else(|| {
                    bad = true;
                    0.0
                }),
                (false, Some(_), None) => 0.0,
            };
            Keyed {
                member,
                score,
                by: value,
            }
        })
        .collect();
    if bad {
        return Err(err::frame(NOT_DOUBLE));
    }
    // Redis compares ALPHA with strcoll (the C locale's strcmp, to the
    // first NUL) when answering and with memcmp when storing.
    let bytes = |a: &[u8], b: &[u8]| {
        if storing {
            a.cmp(b)
        } else {
            c_str(a).cmp(c_str(b))
        }
    };
    let by_pattern = by.is_some();
    let cmp = |a: &Keyed, b: &Keyed| -> Ordering {
        let c = if !alpha {
            a.score
                .partial_cmp(&b.score)
                .unwrap_or(Ordering::Equal)
                .then_with(|| a.member.cmp(&b.member))
        } else if by_pattern {
            match (&a.by, &b.by) {
                (Some(x), Some(y)) => bytes(x, y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            }
        } else {
            bytes(&a.member, &b.member)
        };
        if desc {
            c.reverse()
        } else {
            c
        }
    };
    keyed.sort_by(cmp);
    Ok(keyed
        .into_iter()
        .skip(start)
        .take(end - start)
        .map(|k| k.member)
        .collect())
}

/// The values answered or stored for the sorted window: the members, or
/// what each GET pattern gives for each.
fn output(window: Vec<Bytes>, gets: &[Bytes], lookup: &mut dyn Lookup) -> Vec<Option<Bytes>> {
    if gets.is_empty() {
        return window.into_iter().map(Some).collect();
    }
    let mut out = Vec::with_capacity(window.len() * gets.len());
    for member in &window {
        for p in gets {
            out.push(match resolve(p, member) {
                Resolved::Member => Some(member.clone()),
                Resolved::Read(t) => lookup.get(&t),
                Resolved::Nil => None,
            });
        }
    }
    out
}

/// The result answered, or stored at `dst` (an empty result deletes it).
fn finish(ks: &mut Keyspace, o: &Options, values: Vec<Option<Bytes>>) -> Frame {
    let Some(dst) = &o.store else {
        return Frame::Array(
            values
                .into_iter()
                .map(|v| v.map_or(Frame::Null, Frame::Bulk))
                .collect(),
        );
    };
    let count = values.len() as i64;
    if values.is_empty() {
        if let Some(old) = ks.remove(dst) {
            crate::store::lazyfree::free_value_if(crate::store::lazyfree::server_del(), old.value);
            ks.notify(GENERIC, "del", dst);
        }
    } else {
        let list: VecDeque<Bytes> = values.into_iter().map(Option::unwrap_or_default).collect();
        ks.set(dst, Value::List(list), None);
        ks.notify(LIST, "sortstore", dst);
    }
    Frame::Integer(count)
}

/// SORT with its source, destination and pattern keys on this shard.
pub fn sort(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    run(ctx, argv, false)
}

/// SORT_RO: SORT without STORE.
pub fn sort_ro(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    run(ctx, argv, true)
}

fn run(ctx: &mut Ctx, argv: &[Bytes], readonly: bool) -> Reply {
    let mut o = parse(argv, readonly)?;
    o.for_script = ctx.shard.in_script;
    let mut ks = ctx.ks();
    let src = read_source(&mut ks, &argv[1])?;
    let work = plan(&o, src);
    let window = order(work, o.desc, o.store.is_some(), &mut ks)?;
    let values = output(window, &o.gets, &mut ks);
    Ok(finish(&mut ks, &o, values))
}

/// SORT over several shards (see the module docs): the source's shard
/// first, then the pattern keys under locks.
pub fn sort_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let readonly = argv[0].eq_ignore_ascii_case(b"sort_ro");
    let o = match parse(argv, readonly) {
        Ok(o) => o,
        Err(e) => return Action::Reply(e),
    };
    let step = Step {
        o,
        src: argv[1].clone(),
        db: session.db,
        n: shard.shared.nshards,
        // Inside EXEC every shard is locked whole (`transaction::lock_plan`)
        // and the locks cannot be given back and taken again.
        in_exec: shard.current_tx.is_some(),
    };
    let src_shard = shard_of(&step.src, step.n);
    let first = step.clone();
    // Need::Whole: it waits while any transaction locks keys on that shard,
    // so finishing there reads no key another transaction is changing.
    let op = Op::store(step.db, move |ctx: &mut Ctx| first.on_source(ctx));
    Action::Job(
        Job::new(vec![(src_shard, op)], move |mut outs| match outs.pop() {
            Some(Out::Entry(Some((value, _)))) => match source_of(value) {
                Some(src) => step.locked(src),
                None => Action::Reply(err::wrongtype()),
            },
            Some(out) => Action::Reply(out.frame()),
            None => Action::Reply(Frame::Null),
        })
        .ordered(),
    )
}

/// A copy of the source travels between shards as a list value.
fn carry(src: Source) -> Value {
    let kind = match src.kind {
        Kind::List => 0,
        Kind::Set => 1,
        Kind::ZSet => 2,
    };
    let mut items: VecDeque<Bytes> = src.members.into();
    items.push_front(Bytes::from_static(&[b"l", b"s", b"z"][kind][..]));
    Value::List(items)
}

fn source_of(value: Value) -> Option<Source> {
    let Value::List(mut items) = value else {
        return None;
    };
    let kind = match items.pop_front()?.as_ref() {
        b"l" => Kind::List,
        b"s" => Kind::Set,
        _ => Kind::ZSet,
    };
    Some(Source {
        kind,
        members: items.into(),
    })
}

/// One SORT over several shards.
#[derive(Clone)]
struct Step {
    o: Options,
    src: Bytes,
    db: usize,
    n: usize,
    in_exec: bool,
}

impl Step {
    /// Step 1, on the source's shard: the whole command when every key it
    /// reaches is here, else a copy of the source.
    fn on_source(&self, ctx: &mut Ctx) -> Out {
        let here = ctx.shard.id;
        // A STORE finished here, outside any lock, would be recorded later
        // on the asking shard (`propagate::custom`), after what another
        // client did to these keys meanwhile: while the feed records, it
        // goes on under the locks of step 2, whose record goes out before
        // they are released.
        let recorded = self.o.store.is_some() && ctx.shard.shared.feed.is_on();
        let mut ks = ctx.ks();
        let src = match read_source(&mut ks, &self.src) {
            Ok(src) => src,
            Err(e) => return Out::Frame(e),
        };
        let work = plan(&self.o, src.clone());
        let local = !recorded
            && targets(&self.o, &work)
                .iter()
                .all(|t| shard_of(&t.key, self.n) == here)
            && self
                .o
                .store
                .as_ref()
                .is_none_or(|d| shard_of(d, self.n) == here);
        if !local {
            return Out::Entry(Some((carry(src), None)));
        }
        let reply = match order(work, self.o.desc, self.o.store.is_some(), &mut ks) {
            Ok(window) => {
                let values = output(window, &self.o.gets, &mut ks);
                finish(&mut ks, &self.o, values)
            }
            Err(e) => e,
        };
        Out::Frame(reply)
    }

    /// The locks for `src`'s pattern keys with the source and destination.
    /// Every other shard is in the plan with nothing to lock, so the
    /// transaction spans them all and may lock again anywhere on a retry.
    fn plan_for(&self, targets: &[Target]) -> LockPlan {
        let keys = std::iter::once(self.src.clone())
            .chain(self.o.store.iter().cloned())
            .chain(targets.iter().map(|t| t.key.clone()));
        let mut plan = lock_plan(self.db, self.n, keys);
        if !self.in_exec {
            for s in 0..self.n {
                plan.entry(s).or_insert(Need::Nothing);
            }
        }
        plan
    }

    /// Step 2: under the locks, the source again and the pattern keys.
    fn locked(self, seen: Source) -> Action {
        let targets = targets(&self.o, &plan(&self.o, seen.clone()));
        let plan = self.plan_for(&targets);
        let in_exec = self.in_exec;
        let job = self.read_all(seen, targets);
        if in_exec {
            return Action::Job(job);
        }
        Action::Job(job.locked(plan))
    }

    /// The ops reading the source and the targets (grouped by shard), and
    /// the continuation that checks the source and goes on.
    fn read_all(self, seen: Source, targets: Vec<Target>) -> Job {
        let mut by_shard: HashMap<usize, Vec<Target>> = HashMap::new();
        for t in targets {
            by_shard
                .entry(shard_of(&t.key, self.n))
                .or_default()
                .push(t);
        }
        let src = self.src.clone();
        let mut ops = vec![(
            shard_of(&src, self.n),
            Op::store(self.db, move |ctx: &mut Ctx| {
                match read_source(&mut ctx.ks(), &src) {
                    Ok(src) => Out::Entry(Some((carry(src), None))),
                    Err(e) => Out::Frame(e),
                }
            }),
        )];
        let mut asked = Vec::new();
        for (shard, ts) in by_shard {
            let wanted = ts.clone();
            asked.push(ts);
            ops.push((
                shard,
                Op::store(self.db, move |ctx: &mut Ctx| {
                    let mut ks = ctx.ks();
                    let values = wanted
                        .iter()
                        .map(|t| read_target(&mut ks, t).map_or(Frame::Null, Frame::Bulk))
                        .collect();
                    Out::Frame(Frame::Array(values))
                }),
            ));
        }
        Job::new(ops, move |outs| {
            let mut outs = outs.into_iter();
            let now = match outs.next() {
                Some(Out::Entry(Some((value, _)))) => source_of(value),
                Some(out) => return Action::Reply(out.frame()),
                None => None,
            };
            let Some(now) = now else {
                return Action::Reply(err::wrongtype());
            };
            let mut found = Found::new();
            for (ts, out) in asked.into_iter().zip(outs) {
                let Out::Frame(Frame::Array(values)) = out else {
                    continue;
                };
                for (t, v) in ts.into_iter().zip(values) {
                    let v = match v {
                        Frame::Bulk(b) => Some(b),
                        _ => None,
                    };
                    found.insert(t, v);
                }
            }
            if now != seen && !self.in_exec {
                return self.retry(now);
            }
            self.complete(now, found)
        })
        .ordered()
    }

    /// The source changed between the steps: give every lock back and
    /// take those its members now name.
    fn retry(self, now: Source) -> Action {
        let give_back = (0..self.n).map(|s| (s, Op::Unlock)).collect();
        Action::Job(Job::new(give_back, move |_| {
            let targets = targets(&self.o, &plan(&self.o, now.clone()));
            let mut plan = self.plan_for(&targets);
            plan.retain(|_, need| !matches!(need, Need::Nothing));
            let body = self.read_all(now, targets);
            Action::Job(Job::acquiring(plan, body))
        }))
    }

    /// Step 3: sort here; answer, or store on the destination's shard.
    fn complete(self, src: Source, mut found: Found) -> Action {
        let work = plan(&self.o, src);
        let values = match order(work, self.o.desc, self.o.store.is_some(), &mut found) {
            Ok(window) => output(window, &self.o.gets, &mut found),
            Err(e) => return Action::Reply(e),
        };
        let Some(dst) = self.o.store.clone() else {
            return Action::Reply(finish_reply(values));
        };
        let o = self.o;
        Action::Job(Job::single(shard_of(&dst, self.n), self.db, move |ctx| {
            Out::Frame(finish(&mut ctx.ks(), &o, values))
        }))
    }
}

fn finish_reply(values: Vec<Option<Bytes>>) -> Frame {
    Frame::Array(
        values
            .into_iter()
            .map(|v| v.map_or(Frame::Null, Frame::Bulk))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &str) -> Vec<Bytes> {
        words
            .split(' ')
            .map(|w| Bytes::copy_from_slice(w.as_bytes()))
            .collect()
    }

    fn target(key: &str, field: Option<&str>) -> Resolved {
        Resolved::Read(Target {
            key: Bytes::copy_from_slice(key.as_bytes()),
            field: field.map(|f| Bytes::copy_from_slice(f.as_bytes())),
        })
    }

    #[test]
    fn patterns_substitute_the_first_star_and_name_hash_fields() {
        assert_eq!(resolve(b"w_*", b"3"), target("w_3", None));
        assert_eq!(resolve(b"w_*->f", b"3"), target("w_3", Some("f")));
        assert_eq!(resolve(b"x:*->", b"a"), target("x:a->", None));
        assert_eq!(resolve(b"a*b*", b"1"), target("a1b*", None));
        assert_eq!(resolve(b"#", b"1"), Resolved::Member);
        assert_eq!(resolve(b"nokey", b"1"), Resolved::Nil);
    }

    #[test]
    fn getkeys_takes_the_source_and_the_last_store() {
        assert_eq!(keys(&argv("sort abc store def")), vec![1, 3]);
        assert_eq!(
            keys(&argv("sort abc store invalid store stillbad store def")),
            vec![1, 7]
        );
        assert_eq!(keys(&argv("sort abc by store get store")), vec![1]);
        assert_eq!(keys(&argv("sort abc")), vec![1]);
    }

    #[test]
    fn options_follow_redis_syntax() {
        assert!(parse(&argv("sort_ro k store x"), true).is_err());
        assert!(parse(&argv("sort k limit 1"), false).is_err());
        let o = parse(
            &argv("sort k by nosort desc limit 0 2 get # store d"),
            false,
        )
        .unwrap();
        assert!(o.dontsort && o.desc && o.limit == Some((0, 2)));
        assert!(reaches_keys(&argv("sort k get w_*")));
        assert!(!reaches_keys(&argv("sort k by nosort get #")));
    }

    fn window(limit: (i64, i64), len: usize) -> (usize, usize) {
        let o = Options {
            limit: Some(limit),
            ..Options::default()
        };
        let members = (0..len).map(|i| Bytes::from(i.to_string())).collect();
        let w = plan(
            &o,
            Source {
                kind: Kind::Set,
                members,
            },
        );
        (w.start, w.end)
    }

    #[test]
    fn limit_is_clamped_as_redis_clamps_it() {
        assert_eq!(window((2, i64::MAX), 3), (2, 3));
        assert_eq!(window((-10, 100), 5), (0, 5));
        assert_eq!(window((5, 10), 5), (4, 4));
        assert_eq!(window((1, 0), 5), (1, 1));
        assert_eq!(window((0, -5), 3), (0, 3));
        assert_eq!(window((0, 1), 0), (0, 0));
    }

    #[test]
    fn scores_follow_strtod() {
        assert_eq!(score(b" 1.5"), Some(1.5));
        assert_eq!(score(b""), Some(0.0));
        assert_eq!(score(b"1e400"), None);
        assert_eq!(score(b"nan"), None);
        assert_eq!(score(b"x"), None);
    }
}
