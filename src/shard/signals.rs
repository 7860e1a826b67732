//! SIGTERM and SIGINT: the shutdown `shutdown-on-sigterm` /
//! `shutdown-on-sigint` describe, as redis-server does it. A thread of
//! its own waits for them (signal-hook runs nothing but a wake-up in the
//! handler) and asks this server for `SHUTDOWN <flags>` over loopback, as
//! the save rules ask for BGSAVE: the shutdown then saves (when the flags
//! or the `save` rules say so) and exits through the same code as the
//! command. When the save fails and `force` is not among the flags the
//! server keeps running, as Redis's does.

use std::sync::Arc;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::config::shutdown::ShutdownFlags;
use crate::exec::Shared;

/// Starts the thread. Before the shards start, so a signal during the
/// start-up load finds it.
pub fn start(shared: Arc<Shared>) {
    let mut signals = match Signals::new([SIGTERM, SIGINT]) {
        Ok(s) => s,
        Err(e) => {
            log::warn!("could not handle SIGTERM and SIGINT: {e}");
            return;
        }
    };
    let spawned = std::thread::Builder::new()
        .name("ember-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let (name, flags) = if signal == SIGINT {
                    ("SIGINT", shared.config.shutdown_on_sigint())
                } else {
                    ("SIGTERM", shared.config.shutdown_on_sigterm())
                };
                log::warn!("Received {name} scheduling shutdown...");
                shut_down(&shared, flags);
            }
        });
    if let Err(e) = spawned {
        log::warn!("could not start the signal thread: {e}");
    }
}

/// Asks for SHUTDOWN with `flags`; exits at once when this server cannot
/// be asked (no TCP port, still loading its data, a default user that may
/// not run it).
fn shut_down(shared: &Shared, flags: ShutdownFlags) {
    // The flags' words are SHUTDOWN's own (`default` stands for none).
    let mut command = vec!["SHUTDOWN"];
    command.extend(flags.words().into_iter().filter(|&w| w != "default"));
    let own = super::loopback(&shared.config);
    let password = shared.config.requirepass();
    // No answer: the server is exiting (it answers only when it stays up).
    let answer = match super::persist::ask(&own, &password, &command, None) {
        Some(answer) if answer.is_empty() => return,
        answer => answer,
    };
    match answer {
        // The shutdown's own failure (the final save): the server stays
        // up, as Redis's does.
        Some(answer) if answer.starts_with("-ERR") => {
            log::warn!("SHUTDOWN on a signal failed: {}", answer.trim_end());
        }
        // Not asked: not reachable, still loading, or refused to the
        // default user. Exit as the signal asks, without the final save.
        _ => {
            log::warn!(
                "Exiting without the final save: this server could not be asked for SHUTDOWN."
            );
            crate::cmd::aof::flush_for_exit(shared);
            crate::cmd::save::exit_now();
        }
    }
}
