//! The GEO commands: a geo set is a sorted set of 52-bit geohash scores.
//! Fixed cases with replies taken from redis-server 7.0.15, cross-shard
//! STORE, and a differential run against a real redis-server with random
//! points and queries, replies compared exactly.

mod common;

use common::reference::Redis;
use common::{bulks, int, keys_on_shard, Raw, Reply, Rng, Server};

fn b(s: &str) -> Reply {
    Reply::bulk(s)
}

fn err(s: &str) -> Reply {
    Reply::Error(s.into())
}

fn arr(items: Vec<Reply>) -> Reply {
    Reply::Array(items)
}

fn sicily(c: &mut Raw, key: &str) {
    let added = c.cmd(&[
        "GEOADD",
        key,
        "13.361389",
        "38.115556",
        "Palermo",
        "15.087269",
        "37.502669",
        "Catania",
    ]);
    assert_eq!(added, int(2));
}

#[test]
fn scores_positions_hashes_and_distances_are_redis_values() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    sicily(&mut c, "Sicily");
    assert_eq!(
        c.cmd(&["ZRANGE", "Sicily", "0", "-1", "WITHSCORES"]),
        bulks(&["Palermo", "3479099956230698", "Catania", "3479447370796909"])
    );
    assert_eq!(
        c.cmd(&["GEOPOS", "Sicily", "Palermo", "nope"]),
        arr(vec![
            bulks(&["13.36138933897018433", "38.11555639549629859"]),
            Reply::Nil
        ])
    );
    assert_eq!(
        c.cmd(&["GEOHASH", "Sicily", "Palermo", "nope"]),
        arr(vec![b("sqc8b49rny0"), Reply::Nil])
    );
    assert_eq!(
        c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania"]),
        b("166274.1516")
    );
    assert_eq!(
        c.cmd(&["GEODIST", "Sicily", "Palermo", "Catania", "KM"]),
        b("166.2742")
    );
    assert_eq!(c.cmd(&["GEODIST", "Sicily", "Palermo", "x"]), Reply::Nil);
    assert_eq!(c.cmd(&["GEODIST", "none", "a", "b"]), Reply::Nil);
    assert_eq!(
        c.cmd(&[
            "GEORADIUS",
            "Sicily",
            "15",
            "37",
            "200",
            "km",
            "WITHDIST",
            "WITHHASH",
            "WITHCOORD",
            "DESC"
        ]),
        arr(vec![
            arr(vec![
                b("Palermo"),
                b("190.4424"),
                int(3479099956230698),
                bulks(&["13.36138933897018433", "38.11555639549629859"]),
            ]),
            arr(vec![
                b("Catania"),
                b("56.4413"),
                int(3479447370796909),
                bulks(&["15.08726745843887329", "37.50266842333162032"]),
            ]),
        ])
    );
    // Wikipedia's example geohash.
    c.cmd(&["GEOADD", "points", "-5.6", "42.6", "test"]);
    assert_eq!(
        c.cmd(&["GEOHASH", "points", "test"]),
        arr(vec![b("ezs42e44yx0")])
    );
}

#[test]
fn resp3_coordinates_are_doubles() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    sicily(&mut c, "s");
    c.cmd(&["HELLO", "3"]);
    assert_eq!(
        c.cmd(&["GEOPOS", "s", "Palermo", "x"]),
        arr(vec![
            arr(vec![
                Reply::Double("13.36138933897018433".into()),
                Reply::Double("38.11555639549629859".into())
            ]),
            Reply::Nil
        ])
    );
}

#[test]
fn geoadd_options_and_errors() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "-73.9454966", "40.747533", "lic"]),
        int(1)
    );
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "-73.9454966", "40.747533", "lic"]),
        int(0)
    );
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "CH", "40.747533", "-73.9454966", "lic"]),
        int(1)
    );
    assert_eq!(c.cmd(&["GEOADD", "nyc", "NX", "1", "2", "lic"]), int(0));
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "CH", "XX", "1", "2", "lic"]),
        int(1)
    );
    assert_eq!(c.cmd(&["GEOADD", "nyc", "XX", "1", "2", "new"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "fresh"]), int(0));
    assert_eq!(c.cmd(&["GEOADD", "fresh", "XX", "1", "2", "new"]), int(0));
    assert_eq!(c.cmd(&["EXISTS", "fresh"]), int(0));
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "xx", "nx", "1", "2", "a"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "ch", "xx", "foo", "1", "2", "a"]),
        err("ERR syntax error")
    );
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "1", "2", "a", "foo", "bar", "b"]),
        err("ERR value is not a valid float")
    );
    assert_eq!(
        c.cmd(&["GEOADD", "nyc", "1", "2", "a", "200", "100", "b"]),
        err("ERR invalid longitude,latitude pair 200.000000,100.000000")
    );
    // Nothing of a failed GEOADD was added.
    assert_eq!(c.cmd(&["ZSCORE", "nyc", "a"]), Reply::Nil);
    c.cmd(&["SET", "str", "x"]);
    assert_eq!(
        c.cmd(&["GEOADD", "str", "1", "2", "a"]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

#[test]
fn search_option_errors_match_redis() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    sicily(&mut c, "s");
    let cases: &[(&[&str], &str)] = &[
        (&["GEOSEARCH", "s", "bybox", "3", "3", "km", "asc"], "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for GEOSEARCH"),
        (&["geosearch", "s", "fromlonlat", "15", "37", "asc", "desc"], "ERR exactly one of BYRADIUS and BYBOX can be specified for geosearch"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "frommember", "x", "byradius", "1", "km"], "ERR syntax error"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "byradius", "1", "km", "bybox", "1", "1", "km"], "ERR syntax error"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "byradius", "1", "km", "storedist"], "ERR syntax error"),
        (&["GEOSEARCH", "s", "frommember", "nope", "byradius", "1", "km"], "ERR could not decode requested zset member"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "bybox", "-1", "1", "km"], "ERR height or width cannot be negative"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "bybox", "x", "1", "km"], "ERR need numeric width"),
        (&["GEOSEARCH", "s", "fromlonlat", "15", "37", "bybox", "1", "x", "km"], "ERR need numeric height"),
        (&["GEORADIUS", "s", "15", "37", "x", "km"], "ERR need numeric radius"),
        (&["GEORADIUS", "s", "15", "37", "-1", "km"], "ERR radius cannot be negative"),
        (&["GEORADIUS", "s", "15", "37", "1", "yd"], "ERR unsupported unit provided. please use M, KM, FT, MI"),
        (&["GEORADIUS", "s", "15", "37", "1", "km", "ANY"], "ERR the ANY argument requires COUNT argument"),
        (&["GEORADIUS", "s", "15", "37", "1", "km", "COUNT"], "ERR syntax error"),
        (&["GEORADIUS", "s", "15", "37", "1", "km", "COUNT", "0"], "ERR COUNT must be > 0"),
        (&["GEORADIUS", "s", "15", "37", "1", "km", "STORE"], "ERR syntax error"),
        (&["GEORADIUS", "s", "15", "37", "1", "km", "STORE", "d", "WITHDIST"], "ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (&["GEORADIUS_RO", "s", "15", "37", "1", "km", "STORE", "d"], "ERR syntax error"),
        (&["GEORADIUSBYMEMBER", "s", "nope", "1", "km"], "ERR could not decode requested zset member"),
        (&["GEOSEARCHSTORE", "d", "s", "fromlonlat", "15", "37", "byradius", "1", "km", "WITHHASH"], "ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options"),
        (&["GEOSEARCHSTORE", "d", "s", "fromlonlat", "15", "37", "byradius", "1", "km", "store", "d"], "ERR syntax error"),
        (&["GEODIST", "s", "a", "b", "km", "x"], "ERR syntax error"),
        (&["GEODIST", "s", "a", "b", "yd"], "ERR unsupported unit provided. please use M, KM, FT, MI"),
    ];
    for (argv, want) in cases {
        assert_eq!(c.cmd(argv), err(want), "{argv:?}");
    }
}

#[test]
fn missing_sources_and_empty_results() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    c.cmd(&["ZADD", "d", "1", "x"]);
    assert_eq!(
        c.cmd(&["GEORADIUS", "none", "1", "1", "1", "km"]),
        arr(vec![])
    );
    assert_eq!(
        c.cmd(&["GEORADIUSBYMEMBER", "none", "m", "1", "km"]),
        arr(vec![])
    );
    assert_eq!(
        c.cmd(&["GEORADIUS", "none", "1", "1", "1", "km", "STORE", "d"]),
        int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    sicily(&mut c, "s");
    assert_eq!(
        c.cmd(&[
            "GEOSEARCH",
            "s",
            "fromlonlat",
            "0",
            "0",
            "byradius",
            "1",
            "km"
        ]),
        arr(vec![])
    );
    c.cmd(&["ZADD", "d", "1", "x"]);
    assert_eq!(
        c.cmd(&[
            "GEOSEARCHSTORE",
            "d",
            "s",
            "fromlonlat",
            "0",
            "0",
            "byradius",
            "1",
            "km"
        ]),
        int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", "d"]), int(0));
    assert_eq!(c.cmd(&["GEOHASH", "none", "a"]), arr(vec![Reply::Nil]));
    assert_eq!(c.cmd(&["GEOPOS", "none", "a"]), arr(vec![Reply::Nil]));
}

#[test]
fn store_and_storedist_write_sorted_sets() {
    let server = Server::start(1, &[]);
    let mut c = server.raw();
    sicily(&mut c, "s");
    c.cmd(&["SET", "d", "old"]);
    c.cmd(&["EXPIRE", "d", "100"]);
    assert_eq!(
        c.cmd(&[
            "GEORADIUS",
            "s",
            "13.361389",
            "38.115556",
            "500",
            "km",
            "STORE",
            "d"
        ]),
        int(2)
    );
    assert_eq!(c.cmd(&["TTL", "d"]), int(-1));
    assert_eq!(
        c.cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]),
        bulks(&["Palermo", "3479099956230698", "Catania", "3479447370796909"])
    );
    assert_eq!(
        c.cmd(&[
            "GEORADIUSBYMEMBER",
            "s",
            "Catania",
            "500",
            "km",
            "STOREDIST",
            "d",
            "DESC",
            "COUNT",
            "1"
        ]),
        int(1)
    );
    assert_eq!(c.cmd(&["ZRANGE", "d", "0", "-1"]), bulks(&["Palermo"]));
    assert_eq!(
        c.cmd(&[
            "GEOSEARCHSTORE",
            "d",
            "s",
            "frommember",
            "Palermo",
            "bybox",
            "400",
            "400",
            "km",
            "STOREDIST"
        ]),
        int(2)
    );
    assert_eq!(c.cmd(&["ZSCORE", "d", "Palermo"]), b("0"));
}

/// STORE destinations on another shard than the source: a job under the
/// keys' locks, on every form that stores.
#[test]
fn store_across_shards() {
    let server = Server::start(3, &[]);
    let mut c = server.raw();
    let src = &keys_on_shard("src", 0, 3, 1)[0];
    let dst = &keys_on_shard("dst", 2, 3, 1)[0];
    sicily(&mut c, src);
    let forms: [Vec<&str>; 3] = [
        vec!["GEORADIUS", src, "15", "37", "200", "km", "STORE", dst],
        vec![
            "GEORADIUSBYMEMBER",
            src,
            "Palermo",
            "500",
            "km",
            "STOREDIST",
            dst,
        ],
        vec![
            "GEOSEARCHSTORE",
            dst,
            src,
            "fromlonlat",
            "15",
            "37",
            "bybox",
            "500",
            "500",
            "km",
        ],
    ];
    for argv in &forms {
        c.cmd(&["DEL", dst]);
        assert_eq!(c.cmd(argv), int(2), "{argv:?}");
        assert_eq!(c.cmd(&["ZCARD", dst]), int(2), "{argv:?}");
    }
    // A missing source deletes the destination.
    assert_eq!(
        c.cmd(&[
            "GEORADIUS",
            "nosuch{a}",
            "15",
            "37",
            "200",
            "km",
            "STORE",
            dst
        ]),
        int(0)
    );
    assert_eq!(c.cmd(&["EXISTS", dst]), int(0));
    // Errors come back from the source's shard.
    c.cmd(&["SET", src, "string"]);
    assert_eq!(
        c.cmd(&["GEORADIUS", src, "15", "37", "200", "km", "STORE", dst]),
        err("WRONGTYPE Operation against a key holding the wrong kind of value")
    );
}

/// A random coordinate in `-span..=span`, with six decimals.
fn coord(rng: &mut Rng, span: f64) -> String {
    let unit = (rng.next() % 2_000_001) as f64 / 1_000_000.0 - 1.0;
    format!("{:.6}", unit * span)
}

/// Random points and queries on ember (3 shards) and redis-server: every
/// reply must be byte-for-byte the same.
#[test]
fn differential_against_redis() {
    let Some(redis) = Redis::or_skip("geo differential_against_redis") else {
        return;
    };
    let server = Server::start(3, &[]);
    let mut ours = server.raw();
    let mut theirs = Raw::connect(redis.port);
    let mut rng = Rng(0x9e0_5eed_c0ff_ee11);
    let units = ["m", "km", "mi", "ft"];
    let mut found = 0;
    for round in 0..40 {
        let key = format!("pts{{t}}{round}");
        // A cluster of points around a centre, some far away.
        let (clon, clat) = (coord(&mut rng, 179.0), coord(&mut rng, 80.0));
        let (clon_f, clat_f): (f64, f64) = (clon.parse().unwrap(), clat.parse().unwrap());
        let mut argv: Vec<String> = vec!["GEOADD".into(), key.clone()];
        let n = 5 + rng.below(200);
        for i in 0..n {
            let (lon, lat) = if rng.chance(5) {
                (coord(&mut rng, 180.0), coord(&mut rng, 85.0))
            } else {
                let dlon: f64 = coord(&mut rng, 3.0).parse().unwrap();
                let dlat: f64 = coord(&mut rng, 3.0).parse().unwrap();
                (
                    format!("{:.6}", (clon_f + dlon).clamp(-180.0, 180.0)),
                    format!("{:.6}", (clat_f + dlat).clamp(-85.0, 85.0)),
                )
            };
            argv.extend([lon, lat, format!("m{i}")]);
        }
        let mut queries: Vec<Vec<String>> = vec![argv];
        for _ in 0..12 {
            let unit = units[rng.below(units.len())];
            let size = |rng: &mut Rng| (1 + rng.below(400_000)).to_string();
            let scale = match unit {
                "m" | "ft" => 1000,
                _ => 1,
            };
            let dist = (1 + rng.below(400) * scale).to_string();
            let member = format!("m{}", rng.below(n + 2));
            let mut q: Vec<String> = match rng.below(5) {
                0 => vec![
                    "GEORADIUS".into(),
                    key.clone(),
                    clon.clone(),
                    clat.clone(),
                    dist,
                    unit.into(),
                ],
                1 => vec![
                    "GEORADIUSBYMEMBER_RO".into(),
                    key.clone(),
                    member,
                    dist,
                    unit.into(),
                ],
                2 => vec![
                    "GEOSEARCH".into(),
                    key.clone(),
                    "FROMMEMBER".into(),
                    member,
                    "BYBOX".into(),
                    size(&mut rng),
                    size(&mut rng),
                    "m".into(),
                ],
                3 => vec![
                    "GEOSEARCH".into(),
                    key.clone(),
                    "FROMLONLAT".into(),
                    clon.clone(),
                    clat.clone(),
                    "BYRADIUS".into(),
                    dist,
                    unit.into(),
                ],
                _ => vec![
                    "GEORADIUS_RO".into(),
                    key.clone(),
                    coord(&mut rng, 180.0),
                    coord(&mut rng, 85.0),
                    (rng.below(5000) + 1).to_string(),
                    "km".into(),
                ],
            };
            for opt in ["WITHDIST", "WITHHASH", "WITHCOORD", "ASC", "DESC"] {
                if rng.chance(3) {
                    q.push(opt.into());
                }
            }
            if rng.chance(3) {
                q.push("COUNT".into());
                q.push((1 + rng.below(10)).to_string());
                if rng.chance(3) {
                    q.push("ANY".into());
                }
            }
            queries.push(q);
        }
        // A store across hash tags (shards) and one within.
        let dst = format!("dst{round}");
        queries.push(vec![
            "GEORADIUS".into(),
            key.clone(),
            clon.clone(),
            clat.clone(),
            "300".into(),
            "km".into(),
            "STORE".into(),
            dst.clone(),
        ]);
        queries.push(vec![
            "ZRANGE".into(),
            dst.clone(),
            "0".into(),
            "-1".into(),
            "WITHSCORES".into(),
        ]);
        queries.push(vec![
            "GEOSEARCHSTORE".into(),
            "d{t}".into(),
            key.clone(),
            "FROMLONLAT".into(),
            clon.clone(),
            clat.clone(),
            "BYBOX".into(),
            "500".into(),
            "300".into(),
            "km".into(),
            "STOREDIST".into(),
        ]);
        queries.push(vec![
            "ZRANGE".into(),
            "d{t}".into(),
            "0".into(),
            "-1".into(),
        ]);
        let members: Vec<String> = (0..6).map(|_| format!("m{}", rng.below(n + 2))).collect();
        for cmd in ["GEOPOS", "GEOHASH"] {
            let mut q = vec![cmd.to_string(), key.clone()];
            q.extend(members.iter().cloned());
            queries.push(q);
        }
        queries.push(vec![
            "GEODIST".into(),
            key.clone(),
            members[0].clone(),
            members[1].clone(),
            "mi".into(),
        ]);
        for q in &queries {
            let q: Vec<&str> = q.iter().map(String::as_str).collect();
            let reply = ours.cmd(&q);
            if matches!(&reply, Reply::Array(items) if items.len() > 1) {
                found += 1;
            }
            assert_eq!(reply, theirs.cmd(&q), "{q:?}");
        }
    }
    // The queries found things (the comparison is not of empty replies).
    assert!(found > 100, "{found}");
}
