//! The expiry-storm scenario.
use crate::config::StormArgs;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn main(_a: &StormArgs, _stop: Arc<AtomicBool>) -> Result<u8, String> {
    Err("not yet".into())
}
