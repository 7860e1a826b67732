//! Small pure helpers shared by commands: glob matching, key slots, number
//! parsing and formatting as Redis does them, longest common subsequence,
//! allocation sizes, the process's memory and CPU figures (`memory`),
//! keeping housekeeping threads off the shards' cores (`priority`) and
//! jemalloc's purging off them during storms (`purge`), the
//! thread CPU clock (`clock`), Redis's geohash arithmetic (`geohash`), cheap timestamps for timing commands
//! (`stamp`), C's `long double` for INCRBYFLOAT (`longdouble`) and bytes
//! quoted as Redis quotes them in logs and MONITOR (`repr`).

pub mod clock;
pub mod geohash;
pub mod glob;
pub mod lcs;
pub mod longdouble;
pub mod memory;
pub mod num;
pub mod pidfile;
pub mod priority;
pub mod purge;
pub mod repr;
pub mod slot;
pub mod stamp;

/// Unit tests' command lines: `argv(&["SET", "k", "v"])`.
#[cfg(test)]
pub fn test_argv(words: &[&str]) -> Vec<bytes::Bytes> {
    words
        .iter()
        .map(|w| bytes::Bytes::copy_from_slice(w.as_bytes()))
        .collect()
}

/// The bytes jemalloc (the global allocator) hands out for a request of
/// `len` bytes: its size classes are 8, then multiples of 16 up to 128,
/// then four per doubling (160, 192, 224, 256, 320, ...). For memory
/// estimates that should match what INFO reports.
pub fn alloc_size(len: usize) -> usize {
    match len {
        0 => 0,
        1..=8 => 8,
        9..=128 => len.next_multiple_of(16),
        _ => len.next_multiple_of(len.next_power_of_two() / 8),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn alloc_sizes_follow_jemalloc_classes() {
        let cases = [
            (0, 0),
            (1, 8),
            (9, 16),
            (17, 32),
            (80, 80),
            (129, 160),
            (257, 320),
            (1600, 1792),
            (2048, 2048),
            (70_000, 81_920),
        ];
        for (len, class) in cases {
            assert_eq!(super::alloc_size(len), class, "{len}");
        }
    }
}
