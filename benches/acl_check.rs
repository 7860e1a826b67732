//! What the ACL check costs one command, in isolation from the network
//! and the machine's noise: `cmd::acl::check::check` for the user of
//! `benches/acl_bench.sh` (`on >pw ~key:* +@all`: the command bit, the key
//! specs, the pattern match) against the default user (every key: the bit
//! alone), for SET and GET of a `key:<n>` key. Divided by the CPU a request
//! takes end to end (acl_bench.sh's "no ACL us" column), it is the check's
//! share of a request.

use bytes::Bytes;
use criterion::{black_box, criterion_group, criterion_main, Criterion};
use ember::acl::user::User;
use ember::cmd::acl::check::check;
use ember::cmd::acl::rules::apply_rule;
use ember::cmd::table::lookup;

fn user(rules: &[&str]) -> User {
    let mut user = User::new("bench", false);
    for rule in rules {
        apply_rule(&mut user, rule.as_bytes(), false).expect("a valid rule");
    }
    user
}

fn checks(c: &mut Criterion) {
    let restricted = user(&["on", ">benchpw", "~key:*", "+@all"]);
    let default = user(&["on", "nopass", "~*", "&*", "+@all"]);
    let argvs = [
        (
            "set",
            vec![
                Bytes::from_static(b"SET"),
                Bytes::from_static(b"key:000000012345"),
                Bytes::from_static(b"xxx"),
            ],
        ),
        (
            "get",
            vec![
                Bytes::from_static(b"GET"),
                Bytes::from_static(b"key:000000012345"),
            ],
        ),
    ];
    let mut group = c.benchmark_group("acl_check");
    for (name, argv) in &argvs {
        let spec = lookup(name.as_bytes()).expect("a known command");
        assert!(check(&restricted, spec, argv).is_ok());
        group.bench_function(format!("{name}/key_pattern"), |b| {
            b.iter(|| check(black_box(&restricted), spec, black_box(argv)))
        });
        group.bench_function(format!("{name}/all_keys"), |b| {
            b.iter(|| check(black_box(&default), spec, black_box(argv)))
        });
    }
    group.finish();
}

criterion_group!(benches, checks);
criterion_main!(benches);
