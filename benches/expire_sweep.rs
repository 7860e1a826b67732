//! Active expiry throughput: how many expired keys one shard's sweep removes
//! per millisecond of sweep time, with all keys expired and with a mixed
//! keyspace where most volatile keys are still live (100k keys, which fit
//! the CPU caches), and for the storm scenario's 2M keys among 1M without
//! TTL, where every table probe misses the caches as it does in a server;
//! that storm again after 1% of its keys went early, at random (sampled by
//! a cycle that ran between the deadline and the end of its window), which
//! leaves the dict's slots out of the order the window hands keys back in.

use std::time::Instant;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ember::store::{ActiveExpire, ExpireParams, SliceOutcome, Store, Value};

fn filled(expired: usize, live: usize) -> Store {
    filled_after(0, expired, live)
}

/// `persistent` keys without TTL, then `expired`, then `live` volatile keys.
fn filled_after(persistent: usize, expired: usize, live: usize) -> Store {
    let mut store = Store::new(1);
    let value = Value::string(Bytes::from_static(b"0123456789abcdef0123456789abcdef"));
    for i in 0..persistent {
        store.dbs[0].insert_raw(format!("bg:{i}").as_bytes(), value.clone(), None, 0);
    }
    for i in 0..expired {
        store.dbs[0].insert_raw(
            format!("dead:{i}").as_bytes(),
            value.clone(),
            Some(1_000),
            0,
        );
    }
    for i in 0..live {
        store.dbs[0].insert_raw(
            format!("live:{i}").as_bytes(),
            value.clone(),
            Some(u64::MAX / 2),
            0,
        );
    }
    store
}

/// Runs whole cycles until `target` keys are gone or the cycles find nothing.
fn sweep(store: &mut Store, target: u64) {
    let params = ExpireParams::new(10, 1, 1_000, 50);
    let mut sweep = ActiveExpire::new(1);
    let origin = Instant::now();
    while store.stats.expired_keys < target {
        sweep.start_cycle(&params, store, 10_000, None);
        let before = store.stats.expired_keys;
        while sweep.run_slice(store, 10_000, &params, || {
            origin.elapsed().as_micros() as u64
        }) == SliceOutcome::More
        {}
        if store.stats.expired_keys == before {
            break;
        }
    }
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("expire_sweep");
    group.sample_size(10);
    const N: usize = 100_000;
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("all_expired_100k", |b| {
        b.iter_batched(
            || filled(N, 0),
            |mut s| sweep(&mut s, N as u64),
            BatchSize::LargeInput,
        )
    });
    group.bench_function("expired_100k_among_100k_live", |b| {
        b.iter_batched(
            || filled(N, N),
            |mut s| sweep(&mut s, N as u64 * 99 / 100),
            BatchSize::LargeInput,
        )
    });
    const STORM: usize = 2_000_000;
    group.throughput(Throughput::Elements(STORM as u64));
    group.bench_function("storm_2m_among_1m_persistent", |b| {
        b.iter_batched(
            || filled_after(1_000_000, STORM, 0),
            |mut s| sweep(&mut s, STORM as u64),
            BatchSize::LargeInput,
        )
    });
    const EARLY: usize = STORM / 100;
    group.bench_function("storm_2m_after_1pct_early_removals", |b| {
        b.iter_batched(
            || {
                let mut s = filled_after(1_000_000, STORM, 0);
                // Distinct pseudo-random keys: 7919 is prime, so i * 7919
                // mod STORM never repeats for i < STORM.
                for i in 0..EARLY {
                    let key = format!("dead:{}", i * 7919 % STORM);
                    s.dbs[0].remove_raw(key.as_bytes());
                }
                s
            },
            |mut s| sweep(&mut s, (STORM - EARLY) as u64),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
