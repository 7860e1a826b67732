use super::*;

fn fv(n: u64) -> Vec<Bytes> {
    vec![Bytes::from_static(b"f"), Bytes::from(n.to_string())]
}

fn filled(n: u64, limits: NodeLimits) -> Stream {
    let mut s = Stream::default();
    for i in 1..=n {
        s.append(StreamId::new(i, 0), fv(i), limits);
    }
    s
}

const TEN: NodeLimits = NodeLimits {
    bytes: 0,
    entries: 10,
};

#[test]
fn nodes_fill_to_the_entry_limit() {
    let s = filled(25, TEN);
    assert_eq!(s.node_count(), 3);
    assert_eq!(s.len(), 25);
    s.check_invariants().unwrap();
}

#[test]
fn nodes_fill_to_the_byte_limit() {
    let limits = NodeLimits {
        bytes: 100,
        entries: 0,
    };
    let s = filled(50, limits);
    assert!(s.node_count() > 1);
    assert!(s.nodes().all(|(_, n)| n.bytes < 100 + 20));
    s.check_invariants().unwrap();
}

#[test]
fn approximate_trims_remove_whole_nodes() {
    let mut s = filled(100, TEN);
    let spec = TrimSpec {
        rule: Trim::MaxLen(55),
        approx: true,
        limit: 0,
    };
    assert_eq!(s.trim(spec), 40);
    assert_eq!(s.len(), 60);
    s.check_invariants().unwrap();
}

#[test]
fn a_limit_stops_before_a_node_that_passes_it() {
    let mut s = filled(101, TEN);
    let spec = TrimSpec {
        rule: Trim::MaxLen(55),
        approx: true,
        limit: 30,
    };
    assert_eq!(s.trim(spec), 30);
    assert_eq!(s.len(), 71);
}

#[test]
fn exact_trims_reach_the_length() {
    let mut s = filled(100, TEN);
    let spec = TrimSpec {
        rule: Trim::MaxLen(55),
        approx: false,
        limit: 0,
    };
    assert_eq!(s.trim(spec), 45);
    assert_eq!(s.len(), 55);
    assert_eq!(s.first_id(), StreamId::new(46, 0));
    s.check_invariants().unwrap();
    let spec = TrimSpec {
        rule: Trim::MinId(StreamId::new(90, 0)),
        approx: false,
        limit: 0,
    };
    assert_eq!(s.trim(spec), 44);
    assert_eq!(s.first_id(), StreamId::new(90, 0));
    s.check_invariants().unwrap();
}

#[test]
fn deleting_a_nodes_last_entry_drops_the_node() {
    let mut s = filled(20, TEN);
    for i in 1..=10 {
        assert!(s.delete(StreamId::new(i, 0)));
    }
    assert!(!s.delete(StreamId::new(1, 0)));
    assert_eq!(s.node_count(), 1);
    assert_eq!(s.max_deleted, StreamId::new(10, 0));
    s.check_invariants().unwrap();
}

#[test]
fn lag_follows_reads_and_tombstones() {
    let mut s = filled(5, TEN);
    let mut g = Group::new(StreamId::MIN, Some(0));
    assert_eq!(s.lag(&g), Some(5));
    s.advance_group(&mut g, StreamId::new(1, 0));
    assert_eq!(g.entries_read, Some(1));
    assert_eq!(s.lag(&g), Some(4));
    s.delete(StreamId::new(3, 0));
    assert_eq!(s.lag(&g), None);
}
