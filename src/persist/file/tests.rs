//! Round trips of whole files, and every truncation and many random
//! corruptions of one refused without a panic.

use super::*;
use crate::store::Store;

const NOW: u64 = 1_700_000_000_000;

fn opts() -> LoadOptions {
    LoadOptions {
        databases: 16,
        now_ms: NOW,
        master: true,
        limits: Limits::default(),
    }
}

fn sample_store() -> Store {
    let mut store = Store::new(16);
    let db = &mut store.dbs[0];
    db.insert_raw(b"s", Value::copy_of(b"hello"), None, NOW);
    db.insert_raw(b"n", Value::copy_of(b"12345"), Some(NOW + 5_000), NOW);
    db.insert_raw(b"long", Value::copy_of(&b"ab".repeat(500)), None, NOW);
    db.insert_raw(b"gone", Value::copy_of(b"x"), Some(NOW - 1), NOW);
    let list = Value::List(
        (0..300)
            .map(|i| bytes::Bytes::from(format!("e{i}")))
            .collect(),
    );
    store.dbs[3].insert_raw(b"list", list, Some(NOW + 123), NOW);
    store
}

fn file_of(store: &Store, compress: bool, checksum: bool) -> Vec<u8> {
    let part = crate::persist::snapshot::serialize(store, NOW, compress);
    let (dbs, version) = crate::persist::merge(&[part], 16);
    let aux = Aux {
        ctime_s: NOW / 1000,
        used_mem: 1 << 20,
        aof_base: false,
        repl: None,
    };
    build(&dbs, &[], &aux, checksum, version)
}

type Keys = Vec<(usize, Vec<u8>, Value, Option<u64>)>;

fn keys_of(file: &[u8]) -> Result<(Loaded, Keys), LoadError> {
    let mut keys = Vec::new();
    let loaded = load(file, &opts(), |db, k, v, at| {
        keys.push((db, k.to_vec(), v, at))
    })?;
    keys.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    Ok((loaded, keys))
}

#[test]
fn a_file_reads_back_without_its_expired_keys() {
    let store = sample_store();
    for (compress, checksum) in [(true, true), (false, true), (true, false)] {
        let file = file_of(&store, compress, checksum);
        assert_eq!(&file[..9], b"REDIS0010");
        let (loaded, keys) = keys_of(&file).unwrap();
        assert_eq!(loaded.keys_loaded, 4);
        assert_eq!(loaded.aux("redis-ver"), Some("7.0.15"));
        let names: Vec<(usize, &[u8])> = keys.iter().map(|k| (k.0, &k.1[..])).collect();
        assert_eq!(
            names,
            vec![(0, &b"long"[..]), (0, b"n"), (0, b"s"), (3, b"list")]
        );
        assert_eq!(keys[1].3, Some(NOW + 5_000));
        assert_eq!(keys[1].2, Value::copy_of(b"12345"));
        assert_eq!(keys[3].3, Some(NOW + 123));
        let raw = file_of(&store, false, checksum).len();
        if compress {
            assert!(file.len() + 900 < raw, "the long string is compressed");
        }
    }
}

#[test]
fn an_expired_key_in_the_file_is_skipped_by_a_master_and_kept_by_a_replica() {
    let mut out = Vec::new();
    put_header(
        &mut out,
        10,
        &Aux {
            ctime_s: 0,
            used_mem: 0,
            aof_base: false,
            repl: None,
        },
    );
    put_db_start(&mut out, 0, 2, 1);
    put_key(&mut out, b"old", &Value::copy_of(b"v"), Some(NOW - 10));
    put_key(&mut out, b"new", &Value::copy_of(b"v"), None);
    let crc = crc64::crc64(0, &out);
    put_eof(&mut out, crc, true);
    let (loaded, keys) = keys_of(&out).unwrap();
    assert_eq!((loaded.keys_loaded, loaded.keys_expired), (1, 1));
    assert_eq!(keys.len(), 1);
    let replica = LoadOptions {
        master: false,
        ..opts()
    };
    let mut n = 0;
    load(&out, &replica, |_, _, _, _| n += 1).unwrap();
    assert_eq!(n, 2);
}

#[test]
fn versions_past_12_and_bad_signatures_are_refused() {
    let file = file_of(&sample_store(), true, true);
    let mut v0 = file.clone();
    v0[5..9].copy_from_slice(b"0000");
    assert_eq!(keys_of(&v0).unwrap_err(), LoadError::Version(0));
    let mut v4 = file.clone();
    v4[5..9].copy_from_slice(b"0004");
    assert!(
        keys_of(&v4).is_ok(),
        "before version 5 the footer is not read"
    );
    let mut v13 = file.clone();
    v13[5..9].copy_from_slice(b"0013");
    assert_eq!(keys_of(&v13).unwrap_err(), LoadError::Version(13));
    let mut v9 = file.clone();
    v9[5..9].copy_from_slice(b"0009");
    // The checksum covers the header: a changed version is a wrong sum.
    assert!(matches!(keys_of(&v9), Err(LoadError::Checksum { .. })));
    assert_eq!(keys_of(b"RODIS0010").unwrap_err(), LoadError::Signature);
    assert_eq!(keys_of(b"").unwrap_err(), LoadError::Signature);
}

#[test]
fn every_truncation_is_refused() {
    let file = file_of(&sample_store(), true, true);
    for len in 0..file.len() {
        assert!(
            keys_of(&file[..len]).is_err(),
            "cut at {len} of {}",
            file.len()
        );
    }
}

#[test]
fn random_corruptions_never_panic_and_are_caught_by_the_checksum() {
    use rand_xoshiro::rand_core::{RngCore, SeedableRng};
    let file = file_of(&sample_store(), true, true);
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(23);
    for _ in 0..3000 {
        let mut bad = file.clone();
        let flips = 1 + rng.next_u32() % 4;
        for _ in 0..flips {
            let at = (rng.next_u64() % bad.len() as u64) as usize;
            bad[at] ^= 1 << (rng.next_u32() % 8);
        }
        // A flip may only change the CRC's own bytes, or land in the
        // checksum; either way the load must say no.
        assert!(keys_of(&bad).is_err());
    }
    // Without a checksum the decoder alone meets the damage: it may
    // accept a changed value, but never panics.
    let plain = file_of(&sample_store(), true, false);
    for _ in 0..3000 {
        let mut bad = plain.clone();
        let at = (rng.next_u64() % bad.len() as u64) as usize;
        bad[at] = rng.next_u32() as u8;
        let _ = keys_of(&bad);
    }
}

#[test]
fn a_database_past_the_configured_count_is_refused() {
    let mut out = Vec::new();
    put_header(
        &mut out,
        10,
        &Aux {
            ctime_s: 0,
            used_mem: 0,
            aof_base: false,
            repl: None,
        },
    );
    put_db_start(&mut out, 20, 1, 0);
    put_key(&mut out, b"k", &Value::copy_of(b"v"), None);
    put_eof(&mut out, 0, false);
    assert_eq!(keys_of(&out).unwrap_err(), LoadError::Databases(16));
}

#[test]
fn function_libraries_come_before_the_databases_and_read_back() {
    let part = crate::persist::snapshot::serialize(&sample_store(), NOW, true);
    let (dbs, version) = crate::persist::merge(&[part], 16);
    let aux = Aux {
        ctime_s: NOW / 1000,
        used_mem: 1 << 20,
        aof_base: false,
        repl: None,
    };
    let a = b"#!lua name=a\nredis.register_function('fa', function() return 1 end)";
    let b = format!("#!lua name=b\n{}", "-- long\n".repeat(50));
    let file = build(&dbs, &[&a[..], b.as_bytes()], &aux, true, version);
    let at = file
        .iter()
        .position(|&x| x == crate::store::rdb::functions::OPCODE_FUNCTION2)
        .unwrap();
    let select = file.iter().position(|&x| x == op::SELECTDB).unwrap();
    assert!(at < select);
    let (loaded, keys) = keys_of(&file).unwrap();
    assert_eq!(loaded.libraries, vec![a.to_vec(), b.into_bytes()]);
    assert_eq!(keys.len(), 4);
}
