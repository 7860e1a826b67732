//! Throughput of the request parser and reply encoder on pipelined traffic,
//! the two per-byte costs every command pays.

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ember::resp::{encode, Frame, ParseLimits, Parser, Protocol};

const COMMANDS: usize = 1000;

/// 1000 pipelined `SET key:NNN <32-byte value>` requests in one buffer.
fn pipelined_sets() -> Vec<u8> {
    let value = [b'v'; 32];
    let mut wire = Vec::new();
    for i in 0..COMMANDS {
        let key = format!("key:{i:03}");
        wire.extend_from_slice(
            format!("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n$32\r\n", key.len(), key).as_bytes(),
        );
        wire.extend_from_slice(&value);
        wire.extend_from_slice(b"\r\n");
    }
    wire
}

fn parse(c: &mut Criterion) {
    let wire = pipelined_sets();
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(COMMANDS as u64));
    group.bench_function("pipelined_set_1000", |b| {
        b.iter_batched(
            || BytesMut::from(&wire[..]),
            |mut buf| {
                let mut parser = Parser::new(ParseLimits::default());
                let mut n = 0;
                while let Some(args) = parser.next_command(&mut buf).expect("valid input") {
                    n += args.len();
                }
                assert_eq!(n, COMMANDS * 3);
            },
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn encode_bulks(c: &mut Criterion) {
    let frames: Vec<Frame> = (0..COMMANDS)
        .map(|i| Frame::Bulk(Bytes::from(format!("value-{i:026}"))))
        .collect();
    let mut group = c.benchmark_group("encode");
    group.throughput(Throughput::Elements(COMMANDS as u64));
    let mut out = Vec::with_capacity(64 * COMMANDS);
    group.bench_function("bulk_reply_1000", |b| {
        b.iter(|| {
            out.clear();
            for f in &frames {
                encode(f, Protocol::Resp2, &mut out);
            }
            std::hint::black_box(out.len())
        })
    });
    group.finish();
}

criterion_group!(benches, parse, encode_bulks);
criterion_main!(benches);
