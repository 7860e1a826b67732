//! The GEO commands: GEOADD, GEODIST, GEOHASH, GEOPOS, GEOSEARCH,
//! GEOSEARCHSTORE, GEORADIUS, GEORADIUSBYMEMBER and their `_RO` forms.
//!
//! A geo set is a sorted set whose scores are 52-bit geohashes
//! (`util::geohash`): GEOADD is ZADD with computed scores (and is recorded
//! as that ZADD, as Redis rewrites it), and every ZSET command works on a
//! geo set. A search scans the score ranges of up to nine cells and keeps
//! the members within the shape; replies follow redis-server 7.0: distances
//! with four decimals, coordinates with seventeen.

use std::collections::HashSet;

use bytes::Bytes;

use super::args::{err, Reply};
use super::zset::range::compute_then_store;
use super::zset::{store_result, zadd};
use super::{shard_of, Ctx, Session, ShardData};
use crate::exec::Action;
use crate::resp::Frame;
use crate::store::zset::{ScoreBound, ScoreRange, ZSet};
use crate::store::{Entry, Value};
use crate::util::geohash::{self, Extent, Shape};
use crate::util::num::{parse_f64, parse_i64};

const BAD_MEMBER: &str = "ERR could not decode requested zset member";
const BAD_UNIT: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";

fn as_zset(entry: &Entry) -> Result<&ZSet, Frame> {
    match &entry.value {
        Value::ZSet(z) => Ok(z),
        _ => Err(err::wrongtype()),
    }
}

/// Metres per unit.
fn unit(arg: &[u8]) -> Result<f64, Frame> {
    match arg.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err(err::frame(BAD_UNIT)),
    }
}

/// A double argument; `what` names it in the error (Redis's custom
/// messages such as "need numeric radius"), or the generic float error.
fn double(arg: &[u8], what: Option<&str>) -> Result<f64, Frame> {
    parse_f64(arg).ok_or_else(|| match what {
        Some(w) => err::frame(&format!("ERR {w}")),
        None => err::frame(err::NOT_FLOAT),
    })
}

/// A longitude and latitude within the limits GEOADD accepts.
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), Frame> {
    let (lon, lat) = (double(lon, None)?, double(lat, None)?);
    if !geohash::valid(lon, lat) {
        return Err(err::frame(&format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok((lon, lat))
}

/// A distance and its unit: (value, metres per unit).
fn radius(value: &[u8], unit_arg: &[u8]) -> Result<(f64, f64), Frame> {
    let r = double(value, Some("need numeric radius"))?;
    if r < 0.0 {
        return Err(err::frame("ERR radius cannot be negative"));
    }
    Ok((r, unit(unit_arg)?))
}

/// A box's width, height and unit.
fn box_size(width: &[u8], height: &[u8], unit_arg: &[u8]) -> Result<(f64, f64, f64), Frame> {
    let w = double(width, Some("need numeric width"))?;
    let h = double(height, Some("need numeric height"))?;
    if h < 0.0 || w < 0.0 {
        return Err(err::frame("ERR height or width cannot be negative"));
    }
    Ok((w, h, unit(unit_arg)?))
}

/// A distance as Redis prints it (`%.4f`, a bulk string in both protocols).
fn distance_frame(d: f64) -> Frame {
    Frame::Bulk(Bytes::from(format!("{d:.4}")))
}

/// A coordinate pair as Redis prints it: each to 17 decimals with the
/// trailing zeros trimmed (its "human" long double format).
fn coords_frame(lon: f64, lat: f64) -> Frame {
    Frame::Array(vec![human_double(lon), human_double(lat)])
}

fn human_double(v: f64) -> Frame {
    let mut text = format!("{v:.17}");
    if text.contains('.') {
        let kept = text.trim_end_matches('0').trim_end_matches('.').len();
        text.truncate(kept);
    }
    if text == "-0" {
        text = "0".to_string();
    }
    Frame::DoubleText(Bytes::from(text))
}

/// GEOADD key [NX|XX] [CH] longitude latitude member [...]: ZADD with the
/// points' geohashes as scores, recorded as that ZADD.
pub fn geoadd(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let mut first = 2;
    let (mut nx, mut xx) = (false, false);
    while first < argv.len() {
        match argv[first].to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"ch" => {}
            _ => break,
        }
        first += 1;
    }
    let triples = &argv[first..];
    if !triples.len().is_multiple_of(3) || (nx && xx) {
        return Err(err::syntax());
    }
    // Every point is checked before anything is added.
    let mut zargv: Vec<Bytes> = Vec::with_capacity(first + triples.len() / 3 * 2);
    zargv.push(Bytes::from_static(b"zadd"));
    zargv.extend_from_slice(&argv[1..first]);
    for t in triples.chunks_exact(3) {
        let (lon, lat) = lon_lat(&t[0], &t[1])?;
        let score = geohash::score_of(lon, lat).expect("checked point");
        zargv.push(Bytes::from(score.to_string()));
        zargv.push(t[2].clone());
    }
    let dirty = ctx.shard.store.stats.notify.dirty;
    let reply = zadd(ctx, &zargv);
    if ctx.recording() && ctx.shard.store.stats.notify.dirty != dirty {
        ctx.propagate_as(zargv);
    }
    reply
}

/// Reads the set at `key` (None when missing) and applies `f`.
fn with_geo<T>(ctx: &mut Ctx, key: &[u8], f: impl FnOnce(&ZSet) -> T) -> Result<Option<T>, Frame> {
    match ctx.ks().read(key) {
        Some(entry) => as_zset(entry).map(|z| Some(f(z))),
        None => Ok(None),
    }
}

/// GEODIST key member1 member2 [unit]
pub fn geodist(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let to_m = match argv.len() {
        5 => unit(&argv[4])?,
        n if n > 5 => return Err(err::syntax()),
        _ => 1.0,
    };
    let found = with_geo(ctx, &argv[1], |z| {
        Some((z.score(&argv[2])?, z.score(&argv[3])?))
    })?;
    Ok(match found.flatten() {
        Some((a, b)) => {
            let ((lon1, lat1), (lon2, lat2)) = (geohash::point_of(a), geohash::point_of(b));
            distance_frame(geohash::distance(lon1, lat1, lon2, lat2) / to_m)
        }
        None => Frame::Null,
    })
}

/// GEOHASH key [member ...]
pub fn geohash(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let members = &argv[2..];
    let hashes = with_geo(ctx, &argv[1], |z| {
        members
            .iter()
            .map(|m| match z.score(m) {
                Some(s) => Frame::Bulk(Bytes::from(geohash::geohash_string(s))),
                None => Frame::Null,
            })
            .collect()
    })?;
    Ok(Frame::Array(
        hashes.unwrap_or_else(|| vec![Frame::Null; members.len()]),
    ))
}

/// GEOPOS key [member ...]
pub fn geopos(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let members = &argv[2..];
    let points = with_geo(ctx, &argv[1], |z| {
        members
            .iter()
            .map(|m| match z.score(m) {
                Some(s) => {
                    let (lon, lat) = geohash::point_of(s);
                    coords_frame(lon, lat)
                }
                None => Frame::NullArray,
            })
            .collect()
    })?;
    Ok(Frame::Array(
        points.unwrap_or_else(|| vec![Frame::NullArray; members.len()]),
    ))
}

/// The search commands, as Redis's flags tell them apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// GEORADIUS[_RO] key lon lat radius unit ...
    Radius { store_ok: bool },
    /// GEORADIUSBYMEMBER[_RO] key member radius unit ...
    ByMember { store_ok: bool },
    /// GEOSEARCH key ...
    Search,
    /// GEOSEARCHSTORE dst src ...
    SearchStore,
}

impl Kind {
    fn of(name: &[u8]) -> Kind {
        match name.to_ascii_lowercase().as_slice() {
            b"georadius" => Kind::Radius { store_ok: true },
            b"georadius_ro" => Kind::Radius { store_ok: false },
            b"georadiusbymember" => Kind::ByMember { store_ok: true },
            b"georadiusbymember_ro" => Kind::ByMember { store_ok: false },
            b"geosearchstore" => Kind::SearchStore,
            _ => Kind::Search,
        }
    }

    fn src(self) -> usize {
        if self == Kind::SearchStore {
            2
        } else {
            1
        }
    }

    /// Where the options start.
    fn options(self) -> usize {
        match self {
            Kind::Radius { .. } => 6,
            Kind::ByMember { .. } => 5,
            Kind::Search => 2,
            Kind::SearchStore => 3,
        }
    }

    fn is_search(self) -> bool {
        matches!(self, Kind::Search | Kind::SearchStore)
    }

    fn store_event(self) -> &'static str {
        if self.is_search() {
            "geosearchstore"
        } else {
            "georadiusstore"
        }
    }
}

/// Position of the key a search stores into, if any: GEOSEARCHSTORE's
/// first key, or the last STORE/STOREDIST of GEORADIUS[BYMEMBER] (the one
/// the command honours), found skipping COUNT's argument as it does.
fn store_position(kind: Kind, argv: &[Bytes]) -> Option<usize> {
    let store_ok = match kind {
        Kind::SearchStore => return Some(1),
        Kind::Search => return None,
        Kind::Radius { store_ok } | Kind::ByMember { store_ok } => store_ok,
    };
    let mut found = None;
    let mut i = kind.options();
    while i < argv.len() {
        let word = argv[i].to_ascii_lowercase();
        let has_arg = i + 1 < argv.len();
        if word == b"count" && has_arg {
            i += 1;
        } else if store_ok && (word == b"store" || word == b"storedist") && has_arg {
            found = Some(i + 1);
            i += 1;
        }
        i += 1;
    }
    found
}

/// Key positions of GEORADIUS and GEORADIUSBYMEMBER: the source, then the
/// STORE key when there is one.
pub fn radius_keys(argv: &[Bytes]) -> Vec<usize> {
    let kind = Kind::of(&argv[0]);
    let mut keys = vec![1];
    keys.extend(store_position(kind, argv).filter(|&p| p < argv.len()));
    keys
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    None,
    Asc,
    Desc,
}

/// A parsed search.
struct Query {
    shape: Shape,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    any: bool,
    /// 0: no limit.
    count: usize,
    sort: Sort,
    /// The destination and whether it gets distances (STOREDIST).
    store: Option<(Bytes, bool)>,
}

/// A member the search found.
struct Found {
    member: Bytes,
    dist_m: f64,
    score: f64,
    lon: f64,
    lat: f64,
}

/// The member's position, for FROMMEMBER and GEORADIUSBYMEMBER.
fn member_point(zset: &ZSet, member: &[u8]) -> Result<(f64, f64), Frame> {
    zset.score(member)
        .map(geohash::point_of)
        .ok_or_else(|| err::frame(BAD_MEMBER))
}

/// Parses a search command as Redis's `georadiusGeneric` does, in its
/// order (a missing source skips the member lookups but still parses).
fn parse(kind: Kind, argv: &[Bytes], zset: Option<&ZSet>) -> Result<Query, Frame> {
    let mut shape = Shape {
        lon: 0.0,
        lat: 0.0,
        extent: Extent::Radius(0.0),
        to_m: 0.0,
    };
    let store_ok = match kind {
        Kind::Radius { store_ok } | Kind::ByMember { store_ok } => store_ok,
        _ => false,
    };
    match kind {
        Kind::Radius { .. } => {
            (shape.lon, shape.lat) = lon_lat(&argv[2], &argv[3])?;
            let (r, to_m) = radius(&argv[4], &argv[5])?;
            (shape.extent, shape.to_m) = (Extent::Radius(r), to_m);
        }
        Kind::ByMember { .. } => {
            if let Some(z) = zset {
                (shape.lon, shape.lat) = member_point(z, &argv[2])?;
                let (r, to_m) = radius(&argv[3], &argv[4])?;
                (shape.extent, shape.to_m) = (Extent::Radius(r), to_m);
            }
        }
        Kind::Search | Kind::SearchStore => {}
    }
    let mut q = Query {
        shape,
        with_dist: false,
        with_hash: false,
        with_coord: false,
        any: false,
        count: 0,
        sort: Sort::None,
        store: (kind == Kind::SearchStore).then(|| (argv[1].clone(), false)),
    };
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) =
        (false, false, false, false);
    let search = kind.is_search();
    let mut i = kind.options();
    while i < argv.len() {
        let word = argv[i].to_ascii_lowercase();
        let left = argv.len() - i - 1;
        match word.as_slice() {
            b"withdist" => q.with_dist = true,
            b"withhash" => q.with_hash = true,
            b"withcoord" => q.with_coord = true,
            b"any" => q.any = true,
            b"asc" => q.sort = Sort::Asc,
            b"desc" => q.sort = Sort::Desc,
            b"count" if left >= 1 => {
                let n = parse_i64(&argv[i + 1]).ok_or_else(err::not_integer)?;
                if n <= 0 {
                    return Err(err::frame("ERR COUNT must be > 0"));
                }
                q.count = n as usize;
                i += 1;
            }
            b"store" | b"storedist" if left >= 1 && store_ok => {
                q.store = Some((argv[i + 1].clone(), word == b"storedist"));
                i += 1;
            }
            b"storedist" if kind == Kind::SearchStore => {
                q.store = Some((argv[1].clone(), true));
            }
            b"frommember" if left >= 1 && search && !from_lonlat => {
                if let Some(z) = zset {
                    (q.shape.lon, q.shape.lat) = member_point(z, &argv[i + 1])?;
                }
                from_member = true;
                i += 1;
            }
            b"fromlonlat" if left >= 2 && search && !from_member => {
                (q.shape.lon, q.shape.lat) = lon_lat(&argv[i + 1], &argv[i + 2])?;
                from_lonlat = true;
                i += 2;
            }
            b"byradius" if left >= 2 && search && !by_box => {
                let (r, to_m) = radius(&argv[i + 1], &argv[i + 2])?;
                (q.shape.extent, q.shape.to_m) = (Extent::Radius(r), to_m);
                by_radius = true;
                i += 2;
            }
            b"bybox" if left >= 3 && search && !by_radius => {
                let (width, height, to_m) = box_size(&argv[i + 1], &argv[i + 2], &argv[i + 3])?;
                (q.shape.extent, q.shape.to_m) = (Extent::Box { width, height }, to_m);
                by_box = true;
                i += 3;
            }
            _ => return Err(err::syntax()),
        }
        i += 1;
    }
    if q.store.is_some() && (q.with_dist || q.with_hash || q.with_coord) {
        let what = match kind {
            Kind::SearchStore => "GEOSEARCHSTORE",
            _ => "STORE option in GEORADIUS",
        };
        return Err(err::frame(&format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    let name = String::from_utf8_lossy(&argv[0]);
    if search && !(from_member || from_lonlat) {
        return Err(err::frame(&format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        )));
    }
    if search && !(by_radius || by_box) {
        return Err(err::frame(&format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        )));
    }
    if q.any && q.count == 0 {
        return Err(err::frame("ERR the ANY argument requires COUNT argument"));
    }
    // COUNT alone means the nearest COUNT.
    if q.count != 0 && q.sort == Sort::None && !q.any {
        q.sort = Sort::Asc;
    }
    Ok(q)
}

/// The members within the shape, cell by cell in score order; with a
/// `limit` (COUNT ANY) it stops once it has that many.
fn find(zset: &ZSet, shape: &Shape, limit: usize) -> Vec<Found> {
    let mut found = Vec::new();
    for (lo, end) in shape.score_ranges() {
        if limit > 0 && found.len() >= limit {
            break;
        }
        let range = ScoreRange {
            min: ScoreBound {
                value: lo as f64,
                exclusive: false,
            },
            max: ScoreBound {
                value: end as f64,
                exclusive: true,
            },
        };
        let Some((first, last)) = zset.ranks_in(&range) else {
            continue;
        };
        for (member, score) in zset.between(first, last, false) {
            let (lon, lat) = geohash::point_of(score);
            if let Some(dist_m) = shape.contains(lon, lat) {
                found.push(Found {
                    member: member.clone(),
                    dist_m,
                    score,
                    lon,
                    lat,
                });
                if limit > 0 && found.len() >= limit {
                    break;
                }
            }
        }
    }
    found
}

/// What a search does: reply, or write a set (the destination, its
/// members and scores, the event to fire).
enum Outcome {
    Reply(Frame),
    Store(Bytes, Vec<(Bytes, f64)>),
}

/// Parses and runs a search on the source set (`zset`, None when missing).
fn search(kind: Kind, argv: &[Bytes], zset: Option<&ZSet>) -> Result<Outcome, Frame> {
    let q = parse(kind, argv, zset)?;
    let Some(zset) = zset else {
        return Ok(match q.store {
            Some((dst, _)) => Outcome::Store(dst, Vec::new()),
            None => Outcome::Reply(Frame::Array(Vec::new())),
        });
    };
    let mut found = find(zset, &q.shape, if q.any { q.count } else { 0 });
    // Stable, as the C library's sort Redis calls is for these sizes, so
    // equal distances keep the scan's order.
    match q.sort {
        Sort::Asc => found.sort_by(|a, b| a.dist_m.total_cmp(&b.dist_m)),
        Sort::Desc => found.sort_by(|a, b| b.dist_m.total_cmp(&a.dist_m)),
        Sort::None => {}
    }
    if q.count > 0 {
        found.truncate(q.count);
    }
    let to_m = q.shape.to_m;
    if let Some((dst, dist)) = q.store {
        let mut seen = HashSet::new();
        let items = found
            .into_iter()
            .filter(|f| seen.insert(f.member.clone()))
            .map(|f| {
                let score = if dist { f.dist_m / to_m } else { f.score };
                (f.member, score)
            })
            .collect();
        return Ok(Outcome::Store(dst, items));
    }
    let plain = !(q.with_dist || q.with_hash || q.with_coord);
    let items = found
        .into_iter()
        .map(|f| {
            if plain {
                return Frame::Bulk(f.member);
            }
            let mut item = vec![Frame::Bulk(f.member)];
            if q.with_dist {
                item.push(distance_frame(f.dist_m / to_m));
            }
            if q.with_hash {
                item.push(Frame::Integer(f.score as i64));
            }
            if q.with_coord {
                item.push(coords_frame(f.lon, f.lat));
            }
            Frame::Array(item)
        })
        .collect();
    Ok(Outcome::Reply(Frame::Array(items)))
}

/// Runs a search on this shard's copy of the source.
fn search_here(ctx: &mut Ctx, kind: Kind, argv: &[Bytes]) -> Result<Outcome, Frame> {
    match ctx.ks().read(&argv[kind.src()]) {
        Some(entry) => search(kind, argv, Some(as_zset(entry)?)),
        None => search(kind, argv, None),
    }
}

/// GEORADIUS, GEORADIUSBYMEMBER (and `_RO`), GEOSEARCH, GEOSEARCHSTORE
/// with every key on this shard.
pub fn geosearch(ctx: &mut Ctx, argv: &[Bytes]) -> Reply {
    let kind = Kind::of(&argv[0]);
    match search_here(ctx, kind, argv)? {
        Outcome::Reply(frame) => Ok(frame),
        Outcome::Store(dst, items) => Ok(store_result(
            &mut ctx.ks(),
            &dst,
            ZSet::from_pairs(items),
            kind.store_event(),
        )),
    }
}

/// A storing search whose destination is on another shard: search on the
/// source's shard, then write on the destination's.
pub fn geosearch_job(shard: &mut ShardData, session: &Session, argv: &[Bytes]) -> Action {
    let kind = Kind::of(&argv[0]);
    let n = shard.shared.nshards;
    let db = session.db;
    let from = shard_of(&argv[kind.src()], n);
    // The keys span shards only when there is a destination.
    let Some(dst) = store_position(kind, argv).map(|p| argv[p].clone()) else {
        return Action::Reply(err::syntax());
    };
    let to = shard_of(&dst, n);
    let argv = argv.to_vec();
    compute_then_store(
        db,
        from,
        to,
        dst,
        kind.store_event(),
        move |ctx| match search_here(ctx, kind, &argv) {
            Ok(Outcome::Store(_, items)) => Ok(ZSet::from_pairs(items)),
            Ok(Outcome::Reply(frame)) | Err(frame) => Err(frame),
        },
    )
}
