//! Configuration: every parameter declared once, as a row of
//! [`params::PARAMS`]; the config file, `--name value` flags, CONFIG GET /
//! SET, `--help` and the values the shards read all come from the rows.
//!
//! # Layout
//!
//! - [`params`]: the rows: name, aliases, type with default and bounds,
//!   whether CONFIG SET may change it, the hook that applies a change.
//! - [`kind`]: the types (yes/no, bounded integers, memory sizes, enums,
//!   values with a syntax of their own, compatibility values ember keeps
//!   nothing of), parsed and printed with Redis's rules and error texts.
//! - [`live`]: [`Live`], the current value of every parameter; the request
//!   path reads it with relaxed atomic loads. `Shared` holds one.
//! - [`access`]: CONFIG GET (globs) and CONFIG SET (several pairs, all or
//!   nothing, Redis's order of checks), and start-up directives.
//! - [`parse`]: the command line and redis.conf syntax, the order they
//!   apply in, `--help`.
//! - [`rewrite`]: CONFIG REWRITE, the config file brought up to date.
//! - [`events`], [`obuf`]: the two values with a syntax of their own,
//!   `notify-keyspace-events` and `client-output-buffer-limit`.
//!
//! # Life of a value
//!
//! ```text
//!   row default --> Live::new --> file lines --> --flags --> Shared::new: every hook once
//!                                                               |
//!   CONFIG SET: check names, parse values, store all, run the changed rows' hooks
//!                                                               |
//!   shards: live.maxclients(), live.hz(), ... (one relaxed load each)
//! ```
//!
//! This module sits below `store` and `shard`: it imports neither (the
//! types the store is configured with, such as [`ListpackLimits`] and the
//! keyspace event bits, are defined here).

pub mod access;
pub mod compat;
pub mod events;
pub mod kind;
pub mod live;
pub mod obuf;
pub mod params;
pub mod parse;
pub mod persist;
pub mod repl;
pub mod rewrite;
pub mod shutdown;
pub mod tls;
mod tls_key;

use std::path::PathBuf;

pub use live::{
    AppendFsync, DebugCommand, Encodings, Eviction, ListpackLimits, Live, Policy, StreamNodeLimits,
    CLIENTS_PERCENT, ENCODINGS, EVICTION, LAZYFREE,
};
pub use obuf::{ObufClass, ObufLimit};
pub use params::{find_param, Param, Set, PARAMS};
pub use parse::{Flags, Startup};

/// Start-up could not use its configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "\n*** FATAL CONFIG FILE ERROR (ember {version}) ***\nReading the configuration file, at line {line}\n>>> '{text}'\n{reason}"
    )]
    Directive {
        version: &'static str,
        line: usize,
        text: String,
        reason: String,
    },
}

impl ConfigError {
    /// A directive that could not be applied: which line, its text, why.
    fn directive(line: usize, text: String, reason: String) -> ConfigError {
        ConfigError::Directive {
            version: env!("CARGO_PKG_VERSION"),
            line,
            text,
            reason,
        }
    }
}
