//! Small pure helpers shared by commands: glob matching, key slots, number
//! parsing and formatting as Redis does them, longest common subsequence,
//! allocation sizes, freeing large values and structures off the shard
//! threads (`lazyfree`),
//! keeping housekeeping threads off the shards' cores (`priority`) and
//! jemalloc's purging off them during storms (`purge`), the
//! thread CPU clock (`clock`), cheap timestamps for timing commands
//! (`stamp`) and C's `long double` for INCRBYFLOAT (`longdouble`).

pub mod clock;
pub mod glob;
pub mod lazyfree;
pub mod lcs;
pub mod longdouble;
pub mod num;
pub mod priority;
pub mod purge;
pub mod slot;
pub mod stamp;

/// Frees a large structure on the lazy-free thread so the shard keeps
/// serving (`lazyfree`), counted in no INFO figure.
pub fn drop_off_thread<T: Send + 'static>(value: T) {
    lazyfree::free_quietly(value);
}

/// Buffers of at least this many bytes are freed by [`free_buffer`] off the
/// calling thread: jemalloc hands allocations of 8 MiB and more straight back
/// to the OS when freed, which held a shard for milliseconds.
pub const OFF_THREAD_FREE_BYTES: usize = 4 << 20;

/// Frees `buffer`, on a helper thread when it is large (see
/// [`OFF_THREAD_FREE_BYTES`]); shard threads free big buffers through this.
pub fn free_buffer<T: Send + 'static>(buffer: Vec<T>) {
    if buffer.capacity() * std::mem::size_of::<T>() >= OFF_THREAD_FREE_BYTES {
        drop_off_thread(buffer);
    }
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
