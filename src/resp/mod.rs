//! RESP2/RESP3 wire protocol: an incremental request parser and a reply encoder.
//!
//! This module knows nothing about shards, stores or commands: it turns bytes
//! into argument vectors and [`Frame`]s into bytes.

mod encode;
mod frame;
mod parse;

pub use encode::{encode, Sink};
pub use frame::{Frame, Protocol};
pub use parse::{split_args, ParseLimits, Parser, ProtocolError};
