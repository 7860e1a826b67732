//! ember: a Redis-compatible cache server.
pub mod resp;
pub mod util;
