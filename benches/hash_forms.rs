//! Hash lookups and overwrites in the compact (listpack) form against the
//! table form, at sizes up to `hash-max-listpack-entries`: what a linear
//! walk costs next to a hash lookup.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use ember::store::hash::{Hash, ListpackLimits};

/// A hash of `n` fields named like redis-benchmark's (`element:<n>`, 3-byte
/// values), compact or forced into the table form.
fn filled(n: usize, compact: bool) -> Hash {
    let limits = if compact {
        ListpackLimits::DEFAULT
    } else {
        ListpackLimits {
            entries: 0,
            value: 64,
        }
    };
    let mut hash = Hash::default();
    for i in 0..n {
        hash.insert(format!("element:{i:012}").as_bytes(), b"xxx", limits);
    }
    assert_eq!(hash.is_compact(), compact);
    hash
}

fn lookups(c: &mut Criterion) {
    let mut group = c.benchmark_group("hget");
    for n in [8, 128, 512] {
        let names: Vec<String> = (0..n).map(|i| format!("element:{i:012}")).collect();
        for (form, compact) in [("listpack", true), ("table", false)] {
            let hash = filled(n, compact);
            group.bench_with_input(BenchmarkId::new(form, n), &names, |b, names| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 7) % names.len();
                    hash.get(names[i].as_bytes()).map(<[u8]>::len)
                })
            });
        }
    }
    group.finish();
}

fn overwrites(c: &mut Criterion) {
    let mut group = c.benchmark_group("hset_overwrite");
    for n in [8, 128, 512] {
        let names: Vec<String> = (0..n).map(|i| format!("element:{i:012}")).collect();
        for (form, compact) in [("listpack", true), ("table", false)] {
            let mut hash = filled(n, compact);
            let limits = ListpackLimits::DEFAULT;
            group.bench_with_input(BenchmarkId::new(form, n), &names, |b, names| {
                let mut i = 0;
                b.iter(|| {
                    i = (i + 7) % names.len();
                    hash.insert(names[i].as_bytes(), b"yyy", limits)
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, lookups, overwrites);
criterion_main!(benches);
