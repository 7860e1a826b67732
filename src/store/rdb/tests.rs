//! The codec against redis-server's own payloads, round trips across every
//! encoding boundary, the older encodings, and hostile input.

use std::collections::VecDeque;

use bytes::Bytes;
use proptest::prelude::*;

use super::types::*;
use super::writer::{put_len, put_string};
use super::*;
use crate::store::encoding::Encoded;
use crate::store::hash::{Hash, ListpackLimits};
use crate::store::value::Set;
use crate::store::zset::ZSet;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A payload around `body` with a right footer.
fn sealed(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

fn restored(payload: &[u8]) -> Value {
    restore(payload, &Limits::default()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn bad(body: &[u8]) -> BadData {
    match restore(&sealed(body, 10), &Limits::default()) {
        Err(RestoreError::BadData(why)) => why,
        other => panic!("{other:?}"),
    }
}

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn list(items: &[&str]) -> Value {
    Value::List(items.iter().map(|s| b(s)).collect())
}

fn set(items: &[&str]) -> Value {
    Value::Set(Box::new(Encoded::new(
        items.iter().map(|s| b(s)).collect::<Set>(),
    )))
}

fn zset(pairs: &[(&str, f64)]) -> Value {
    let pairs = pairs.iter().map(|(m, s)| (b(m), *s)).collect();
    Value::ZSet(Box::new(Encoded::new(ZSet::from_pairs(pairs))))
}

fn hash(pairs: &[(&str, &str)]) -> Value {
    Value::Hash(
        pairs
            .iter()
            .map(|(f, v)| (f.as_bytes(), v.as_bytes()))
            .collect(),
    )
}

/// DUMPs taken from redis-server 7.0.15, and the values they hold.
fn redis_payloads() -> Vec<(&'static str, Value)> {
    let m65 = "m".repeat(65);
    let v65 = "v".repeat(65);
    vec![
        (
            "000568656c6c6f0a006372df766534200a",
            Value::copy_of(b"hello"),
        ),
        ("00c139300a009d94ea2793fc08b9", Value::copy_of(b"12345")),
        (
            "00c290eefeff0a002875de7b13eb2800",
            Value::copy_of(b"-70000"),
        ),
        (
            "00c3094064016161e057000161610a00e8a3b507b06df271",
            Value::copy_of(&[b'a'; 100]),
        ),
        (
            "1201021c1c000000070081610281620201010201c12c02dffb02f270110104ff0a00de0ee66e09ff6fca",
            list(&["a", "b", "1", "2", "300", "-5", "70000"]),
        ),
        (
            "0b0e02000000030000000100020003000a00a5025ce26d6e4d1b",
            set(&["1", "2", "3"]),
        ),
        ("0202016101620a00fe642125eb033d0d", set(&["a", "b"])),
        (
            "1114140000000400816102010181620283322e3504ff0a00d44c6ea4f644d9d7",
            zset(&[("a", 1.0), ("b", 2.5)]),
        ),
        (
            "0501c3094041016d6de03400016d6d000000000000f83f0a00f782f77e140ddf23",
            zset(&[(&m65, 1.5)]),
        ),
        (
            "1012120000000400816602817602816e020c01ff0a0001369481d35b8974",
            hash(&[("f", "v"), ("n", "12")]),
        ),
        (
            "04010166c3094041017676e034000176760a003d71be523786cf45",
            hash(&[("f", &v65)]),
        ),
    ]
}

#[test]
fn restores_what_redis_server_dumped() {
    for (payload, want) in redis_payloads() {
        let got = restored(&hex(payload));
        assert_eq!(got, want, "{payload}");
        assert_eq!(got.encoding(), want.encoding(), "{payload}");
    }
}

#[test]
fn dumps_as_redis_server_does() {
    // Byte for byte, except where LZF is involved (any valid stream will
    // do, and ember's matcher need not pick Redis's matches).
    for (payload, value) in redis_payloads() {
        let mine = dump(&value);
        if payload.contains("c309") {
            assert_eq!(restored(&mine), value);
        } else {
            assert_eq!(mine, hex(payload), "{value:?}");
        }
    }
}

fn round_trip(value: Value) {
    let payload = dump(&value);
    let back = restored(&payload);
    assert_eq!(back, value);
    assert_eq!(back.encoding(), value.encoding(), "{:?}", value.type_name());
}

#[test]
fn strings_round_trip_across_their_encodings() {
    let mut cases: Vec<Vec<u8>> = [
        "",
        "0",
        "-1",
        "127",
        "-128",
        "128",
        "32767",
        "-32769",
        "2147483647",
        "-2147483648",
        "2147483648",
        "-0",
        "007",
        "+5",
        "1.5",
        "12345678901",
        "123456789012345678901",
        "9223372036854775807",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    cases.push(vec![b'x'; 20]);
    cases.push(vec![b'x'; 21]);
    cases.push(b"abcdefghijklmnopqrstuvwxyz0123456789".to_vec());
    cases.push("compressible ".repeat(100_000).into_bytes());
    cases.push(
        (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect(),
    );
    for s in cases {
        round_trip(Value::string(Bytes::from(s)));
    }
}

#[test]
fn lists_round_trip_across_node_boundaries() {
    let counts = [1usize, 2, 100, 1000, 5000, 100_000];
    for n in counts {
        round_trip(Value::List(
            (0..n).map(|i| Bytes::from(format!("e{i}"))).collect(),
        ));
        round_trip(Value::List(
            (0..n).map(|i| Bytes::from(i.to_string())).collect(),
        ));
    }
    // Elements around a node's size, and larger than one.
    for len in [8000usize, 8185, 8186, 8192, 9000, 70_000] {
        let big = Bytes::from(vec![b'q'; len]);
        let l: VecDeque<Bytes> = [b("a"), big.clone(), big, b("z")].into_iter().collect();
        round_trip(Value::List(l));
    }
    let payload = dump(&Value::List(
        (0..5000).map(|i| Bytes::from(format!("{i:08}x"))).collect(),
    ));
    let mut r = reader::Reader::new(&payload);
    assert_eq!(r.u8(), Ok(LIST_QUICKLIST_2));
    assert!(r.length().unwrap() > 5, "split into 8 KiB nodes");
}

#[test]
fn sets_round_trip_intset_and_table() {
    let ints = |n: i64| {
        Value::Set(Box::new(Encoded::new(
            (0..n)
                .map(|i| Bytes::from((i * 7 - 100).to_string()))
                .collect::<Set>(),
        )))
    };
    for n in [1, 511, 512, 513, 5000] {
        let v = ints(n);
        assert_eq!(v.encoding(), if n <= 512 { "intset" } else { "hashtable" });
        round_trip(v);
    }
    round_trip(set(&["-9223372036854775808", "9223372036854775807", "0"]));
    round_trip(set(&["1", "x"]));
    round_trip(set(&["a"]));
    let mut grown = Encoded::new(["1", "2"].iter().map(|s| b(s)).collect::<Set>());
    grown.insert(b("x"));
    grown.swap_remove(&b("x"));
    let grown = Value::Set(Box::new(grown));
    assert_eq!(grown.encoding(), "hashtable", "outgrown stays so");
    assert_eq!(
        dump(&grown)[0],
        SET,
        "written as Redis writes a hashtable set"
    );
}

#[test]
fn sorted_sets_round_trip_listpack_and_skiplist() {
    let make = |n: usize, len: usize| {
        let pairs: Vec<(Bytes, f64)> = (0..n)
            .map(|i| {
                let mut m = format!("{i:0len$}").into_bytes();
                m.truncate(len.max(1));
                (Bytes::from(m), i as f64 / 3.0 - 10.0)
            })
            .collect();
        Value::ZSet(Box::new(Encoded::new(ZSet::from_pairs(pairs))))
    };
    for (n, len, enc) in [
        (1, 5, "listpack"),
        (128, 5, "listpack"),
        (129, 5, "skiplist"),
        (3, 64, "listpack"),
        (3, 65, "skiplist"),
        (10_000, 8, "skiplist"),
    ] {
        let v = make(n, len);
        assert_eq!(v.encoding(), enc, "{n} {len}");
        round_trip(v);
    }
    let odd = [
        ("inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("zero", -0.0),
        ("tenth", 0.1),
        ("huge", 1e300),
        ("tiny", 5e-324),
        ("int", 4_503_599_627_370_497.0),
        ("neg", -123.0),
    ];
    round_trip(zset(&odd));
    let long = "l".repeat(70);
    let mut with_long: Vec<(&str, f64)> = odd.to_vec();
    with_long.push((&long, 2.0));
    round_trip(zset(&with_long));
}

#[test]
fn hashes_round_trip_listpack_table_and_field_ttls() {
    let make = |n: usize, vlen: usize| {
        let v = "v".repeat(vlen);
        let pairs: Vec<(String, String)> = (0..n)
            .map(|i| (format!("f{i}"), format!("{v}{i}")))
            .collect();
        Value::Hash(
            pairs
                .iter()
                .map(|(f, v)| (f.as_bytes(), v.as_bytes()))
                .collect(),
        )
    };
    for (n, vlen, enc) in [
        (1, 1, "listpack"),
        (512, 1, "listpack"),
        (513, 1, "hashtable"),
        (3, 62, "listpack"),
        (3, 64, "hashtable"),
        (20_000, 3, "hashtable"),
    ] {
        let v = make(n, vlen);
        assert_eq!(v.encoding(), enc, "{n} {vlen}");
        round_trip(v);
    }
    round_trip(hash(&[("1", "2"), ("-5", "100000"), ("", "")]));

    let mut h = Hash::default();
    for i in 0..10 {
        h.insert(format!("f{i}").as_bytes(), b"v", ListpackLimits::DEFAULT);
    }
    h.set_deadline(b"f3", 1_900_000_000_000);
    h.set_deadline(b"f7", 1_800_000_000_123);
    let v = Value::Hash(h);
    let payload = dump(&v);
    assert_eq!(payload[0], HASH_METADATA);
    let n = payload.len();
    assert_eq!(
        &payload[n - 10..n - 8],
        &12u16.to_le_bytes(),
        "RDB version 12"
    );
    let Value::Hash(back) = restored(&payload) else {
        panic!()
    };
    assert_eq!(back.deadline(b"f3"), Some(1_900_000_000_000));
    assert_eq!(back.deadline(b"f7"), Some(1_800_000_000_123));
    assert_eq!(back.deadline(b"f1"), None);
    assert_eq!(Value::Hash(back), v);
}

#[test]
fn compact_forms_follow_the_limits_they_are_decoded_under() {
    let v = hash(&[("a", "1"), ("b", "2"), ("c", "3")]);
    let small = Limits {
        hash: ListpackLimits {
            entries: 2,
            value: 64,
        },
    };
    let back = restore(&dump(&v), &small).unwrap();
    assert_eq!(back.encoding(), "hashtable");
    assert_eq!(back, v);
}

// ---- Older encodings (written by hand, as Redis 2.x-6.2 laid them out) ----

fn blob_value(kind: u8, blob: &[u8]) -> Vec<u8> {
    let mut body = vec![kind];
    put_string(&mut body, blob);
    body
}

#[test]
fn plain_and_ziplist_lists() {
    let mut body = vec![LIST];
    put_len(&mut body, 3);
    for s in ["x", "12", ""] {
        put_string(&mut body, s.as_bytes());
    }
    assert_eq!(restored(&sealed(&body, 6)), list(&["x", "12", ""]));

    let zl = ziplist::tests::build(&[b"a", b"7", b"-300", b"long string here"]);
    assert_eq!(
        restored(&sealed(&blob_value(LIST_ZIPLIST, &zl), 7)),
        list(&["a", "7", "-300", "long string here"])
    );

    // LIST_QUICKLIST: nodes are ziplists (an empty one is skipped).
    let mut body = vec![LIST_QUICKLIST];
    put_len(&mut body, 3);
    put_string(&mut body, &ziplist::tests::build(&[b"a", b"b"]));
    put_string(&mut body, &ziplist::tests::build(&[]));
    put_string(&mut body, &ziplist::tests::build(&[b"9"]));
    assert_eq!(restored(&sealed(&body, 9)), list(&["a", "b", "9"]));
}

#[test]
fn quicklist_2_plain_nodes_and_compressed_nodes() {
    let mut lp = listpack::Writer::default();
    for s in ["same", "same", "same", "same", "same", "same", "same"] {
        lp.push(s.as_bytes());
    }
    let mut body = vec![LIST_QUICKLIST_2];
    put_len(&mut body, 2);
    put_len(&mut body, 1);
    put_string(&mut body, b"plain element");
    put_len(&mut body, 2);
    let blob = lp.finish();
    // A node Redis compressed (`list-compress-depth`) is an LZF string.
    body.push(0xc3);
    let packed = lzf::compress(&blob, usize::MAX).unwrap();
    put_len(&mut body, packed.len() as u64);
    put_len(&mut body, blob.len() as u64);
    body.extend_from_slice(&packed);
    let mut want = vec!["plain element"];
    want.extend(["same"; 7]);
    assert_eq!(restored(&sealed(&body, 10)), list(&want));

    let mut bad_container = vec![LIST_QUICKLIST_2, 1, 3];
    put_string(&mut bad_container, b"x");
    assert_eq!(bad(&bad_container), BadData("quicklist node container"));
}

#[test]
fn ziplist_and_zipmap_hashes_and_zsets() {
    let zl = ziplist::tests::build(&[b"f", b"v", b"n", b"5"]);
    assert_eq!(
        restored(&sealed(&blob_value(HASH_ZIPLIST, &zl), 9)),
        hash(&[("f", "v"), ("n", "5")])
    );
    let zm = b"\x02\x03foo\x03\x02barXX\x01k\x01\x00v\xff";
    assert_eq!(
        restored(&sealed(&blob_value(HASH_ZIPMAP, zm), 3)),
        hash(&[("foo", "bar"), ("k", "v")])
    );
    let zl = ziplist::tests::build(&[b"a", b"1", b"b", b"2.5", b"c", b"-inf"]);
    assert_eq!(
        restored(&sealed(&blob_value(ZSET_ZIPLIST, &zl), 9)),
        zset(&[("a", 1.0), ("b", 2.5), ("c", f64::NEG_INFINITY)])
    );
    // The old ZSET: scores as text behind a one-byte length.
    let mut body = vec![ZSET];
    put_len(&mut body, 3);
    body.extend_from_slice(b"\x01a\x031.5\x01b\xfe\x01c\xff");
    assert_eq!(
        restored(&sealed(&body, 7)),
        zset(&[("a", 1.5), ("b", f64::INFINITY), ("c", f64::NEG_INFINITY)])
    );
}

#[test]
fn listpack_sets_from_redis_7_2() {
    let mut lp = listpack::Writer::default();
    for s in ["a", "5", "b"] {
        lp.push(s.as_bytes());
    }
    assert_eq!(
        restored(&sealed(&blob_value(SET_LISTPACK, &lp.finish()), 11)),
        set(&["a", "5", "b"])
    );
}

#[test]
fn hashes_with_field_ttls_from_redis_7_4() {
    // HASH_LISTPACK_EX: min deadline, then field, value, deadline triples.
    let mut lp = listpack::Writer::default();
    for (f, v, at) in [("a", "1", 0i64), ("b", "2", 1_800_000_000_000)] {
        lp.push(f.as_bytes());
        lp.push(v.as_bytes());
        lp.push_int(at);
    }
    let blob = lp.finish();
    let mut body = vec![HASH_LISTPACK_EX];
    body.extend_from_slice(&1_800_000_000_000u64.to_le_bytes());
    put_string(&mut body, &blob);
    let Value::Hash(h) = restored(&sealed(&body, 12)) else {
        panic!()
    };
    assert_eq!((h.get(b"a"), h.deadline(b"a")), (Some(&b"1"[..]), None));
    assert_eq!(h.deadline(b"b"), Some(1_800_000_000_000));
    // The pre-GA form has no min deadline.
    let mut body = vec![HASH_LISTPACK_EX_PRE_GA];
    put_string(&mut body, &blob);
    let Value::Hash(h) = restored(&sealed(&body, 12)) else {
        panic!()
    };
    assert_eq!(h.deadline(b"b"), Some(1_800_000_000_000));
    // HASH_METADATA_PRE_GA: absolute deadlines, no min.
    let mut body = vec![HASH_METADATA_PRE_GA, 2, 0];
    put_string(&mut body, b"x");
    put_string(&mut body, b"1");
    put_len(&mut body, 1_700_000_000_000);
    put_string(&mut body, b"y");
    put_string(&mut body, b"2");
    let Value::Hash(h) = restored(&sealed(&body, 12)) else {
        panic!()
    };
    assert_eq!(
        (h.deadline(b"x"), h.deadline(b"y")),
        (None, Some(1_700_000_000_000))
    );
}

// ---- What is refused ----

#[test]
fn footer_errors() {
    let good = dump(&Value::copy_of(b"v"));
    assert!(restore(&good, &Limits::default()).is_ok());
    let vc = Err(RestoreError::VersionOrChecksum);
    for cut in 0..10 {
        assert_eq!(restore(&good[..cut], &Limits::default()), vc);
    }
    let mut crc = good.clone();
    *crc.last_mut().unwrap() ^= 1;
    assert_eq!(restore(&crc, &Limits::default()), vc);
    let mut body = good.clone();
    body[1] ^= 0x20;
    assert_eq!(
        restore(&body, &Limits::default()),
        vc,
        "the checksum covers the body"
    );
    assert_eq!(
        restore(&sealed(b"\x00\x01v", 13), &Limits::default()),
        vc,
        "newer version"
    );
    assert!(restore(&sealed(b"\x00\x01v", 12), &Limits::default()).is_ok());
    assert!(
        restore(&sealed(b"\x00\x01v", 0), &Limits::default()).is_ok(),
        "old versions read"
    );
    assert_eq!(
        RestoreError::VersionOrChecksum.message(),
        "ERR DUMP payload version or checksum are wrong"
    );
}

#[test]
fn bodies_redis_refuses_too() {
    assert_eq!(bad(b""), BadData("truncated"));
    assert_eq!(bad(b"\x08"), BadData("unknown object type"));
    assert_eq!(bad(b"\x0f\x00"), BadData("truncated"), "a stream cut short");
    assert_eq!(bad(b"\x07"), BadData("module values are not supported"));
    assert_eq!(bad(b"\x01\x00"), BadData("empty list"));
    assert_eq!(bad(b"\x02\x00"), BadData("empty set"));
    assert_eq!(bad(b"\x05\x00"), BadData("empty sorted set"));
    assert_eq!(bad(b"\x04\x00"), BadData("empty hash"));
    assert_eq!(bad(b"\x02\x02\x01a\x01a"), BadData("duplicate set member"));
    assert_eq!(
        bad(b"\x04\x02\x01a\x01b\x01a\x01c"),
        BadData("duplicate hash field")
    );
    assert_eq!(bad(b"\x03\x01\x01a\xfd"), BadData("NaN score"));
    let mut nan = b"\x05\x01\x01a".to_vec();
    nan.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(bad(&nan), BadData("NaN score"));
    let mut dup = b"\x05\x02\x01a".to_vec();
    dup.extend_from_slice(&1f64.to_le_bytes());
    dup.extend_from_slice(b"\x01a");
    dup.extend_from_slice(&2f64.to_le_bytes());
    assert_eq!(bad(&dup), BadData("duplicate sorted-set member"));
    assert_eq!(
        bad(b"\x01\x81\xff\xff\xff\xff\xff\xff\xff\xff"),
        BadData("more items than bytes left")
    );
    assert_eq!(
        bad(&blob_value(SET_INTSET, &intset::build(&[]))),
        BadData("empty set")
    );
    // A hash listpack with an odd number of entries.
    let mut lp = listpack::Writer::default();
    lp.push(b"f");
    assert_eq!(
        bad(&blob_value(HASH_LISTPACK, &lp.finish())),
        BadData("odd hash blob")
    );
    assert_eq!(
        RestoreError::BadData(BadData("x")).message(),
        "ERR Bad data format"
    );
}

#[test]
fn bytes_after_the_value_are_ignored_as_redis_does() {
    assert_eq!(
        restored(&sealed(b"\x00\x05hello\xff\xff", 10)),
        Value::copy_of(b"hello")
    );
}

/// Every value of the round-trip tests, cut short at every length (the
/// footer made right again): an error, never a panic or a wrong value.
#[test]
fn truncated_bodies_fail_cleanly() {
    let mut values: Vec<Value> = redis_payloads().into_iter().map(|(_, v)| v).collect();
    values.push(list(&["a", "bb", "ccc", "12", "-9999999999"]));
    values.push(Value::Hash({
        let mut h: Hash = [("a", "1"), ("b", "2")]
            .iter()
            .map(|(f, v)| (f.as_bytes(), v.as_bytes()))
            .collect();
        h.set_deadline(b"a", 1_900_000_000_000);
        h
    }));
    for value in values {
        let payload = dump(&value);
        let body = &payload[..payload.len() - 10];
        for cut in 0..body.len() {
            let r = restore(&sealed(&body[..cut], 12), &Limits::default());
            assert!(
                matches!(r, Err(RestoreError::BadData(_))),
                "{value:?} cut at {cut}: {r:?}"
            );
        }
    }
}

// ---- Properties ----

fn any_value() -> impl Strategy<Value = Value> {
    let elem = prop_oneof![
        "[a-c]{0,3}".prop_map(|s| s.into_bytes()),
        any::<i64>().prop_map(|v| v.to_string().into_bytes()),
        (0u16..500).prop_map(|v| v.to_string().into_bytes()),
        proptest::collection::vec(any::<u8>(), 0..100),
        (1usize..9000).prop_map(|n| vec![b'r'; n]),
    ];
    let elems = proptest::collection::vec(elem, 1..300);
    (
        0u8..5,
        elems,
        proptest::collection::vec(any::<f64>(), 300),
        any::<bool>(),
    )
        .prop_map(|(kind, elems, scores, ttl)| {
            let bytes: Vec<Bytes> = elems.into_iter().map(Bytes::from).collect();
            match kind {
                0 => Value::string(bytes[0].clone()),
                1 => Value::List(bytes.into_iter().collect()),
                2 => Value::Set(Box::new(Encoded::new(bytes.into_iter().collect::<Set>()))),
                3 => {
                    let mut z = ZSet::default();
                    for (m, s) in bytes.iter().zip(scores) {
                        z.insert(m, if s.is_nan() { 0.0 } else { s });
                    }
                    Value::ZSet(Box::new(Encoded::new(z)))
                }
                _ => {
                    let mut h = Hash::default();
                    for pair in bytes.chunks(2) {
                        h.insert(
                            &pair[0],
                            pair.get(1).map_or(&b""[..], |v| &v[..]),
                            ListpackLimits::DEFAULT,
                        );
                    }
                    if ttl {
                        let first = h.get_index(0).map(|(f, _)| f.to_vec()).unwrap();
                        h.set_deadline(&first, 1_900_000_000_000);
                    }
                    Value::Hash(h)
                }
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_value_round_trips(value in any_value()) {
        let back = restored(&dump(&value));
        prop_assert_eq!(back.encoding(), value.encoding());
        prop_assert_eq!(back, value);
    }

    /// Valid payloads with bytes changed, inserted or removed, and their
    /// footer made right: the decoder answers (a value or an error) and
    /// never panics; what it accepts dumps and restores to itself.
    #[test]
    fn mutated_payloads_never_panic(
        value in any_value(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..6),
    ) {
        let payload = dump(&value);
        let mut body = payload[..payload.len() - 10].to_vec();
        for (at, byte, how) in edits {
            let i = at.index(body.len() + 1);
            match how {
                0 if i < body.len() => body[i] = byte,
                1 => body.insert(i, byte),
                _ if i < body.len() => { body.remove(i); }
                _ => {}
            }
        }
        if let Ok(v) = restore(&sealed(&body, 12), &Limits::default()) {
            prop_assert_eq!(restored(&dump(&v)), v);
        }
    }

    /// Random bytes after each type byte: hostile lengths, blobs, counts.
    #[test]
    fn random_bodies_never_panic(kind in 0u8..30, body in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut r = reader::Reader::new(&body);
        let _ = decode_value(kind, &mut r, &Limits::default());
    }

    /// A huge count or length in front of a little data fails at once.
    #[test]
    fn huge_lengths_fail_fast(kind in prop::sample::select(vec![LIST, SET, ZSET, HASH, ZSET_2, LIST_QUICKLIST_2, HASH_METADATA, STRING]), n in (1u64 << 20)..u64::MAX) {
        let mut body = Vec::new();
        if kind == HASH_METADATA {
            body.extend_from_slice(&0u64.to_le_bytes());
        }
        put_len(&mut body, n);
        body.extend_from_slice(b"\x01a\x01b\x01c");
        let mut r = reader::Reader::new(&body);
        prop_assert!(decode_value(kind, &mut r, &Limits::default()).is_err());
    }
}
