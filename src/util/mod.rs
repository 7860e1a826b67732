//! Small pure helpers shared by commands: glob matching, key slots, number
//! parsing and formatting as Redis does them, longest common subsequence, and
//! freeing large structures off the shard threads.

pub mod glob;
pub mod lcs;
pub mod num;
pub mod slot;

/// Frees a large structure on a helper thread so the shard keeps serving.
pub fn drop_off_thread<T: Send + 'static>(value: T) {
    let spawned = std::thread::Builder::new()
        .name("ember-free".into())
        .spawn(move || drop(value));
    if let Err(e) = spawned {
        log::warn!("could not free off-thread: {e}");
    }
}
