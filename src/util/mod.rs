//! Small pure helpers shared by commands: glob matching, key slots, number
//! parsing and formatting as Redis does them, longest common subsequence.

pub mod glob;
pub mod lcs;
pub mod num;
pub mod slot;
