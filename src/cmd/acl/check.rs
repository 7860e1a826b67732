//! Whether a user may run a command, as Redis 7.0's
//! `ACLCheckAllUserCommandPerm` decides: each selector in turn (the root
//! first) checks the command (its bit, or an allowed first argument),
//! then its keys (found by the metadata's key specs, read or write as the
//! spec's access flags say), then its channels. The first selector that
//! passes lets the command run; otherwise the refusal reported is the
//! most specific one (command < key < channel), at the last position.

use std::cell::RefCell;

use bytes::Bytes;

use super::rules::{sub_id, sub_index};
use crate::acl::user::{Selector, User, READ, WRITE};
use crate::acl::Denial;
use crate::cmd::meta::keys::{command_keys, command_keys_into, FoundKey};
use crate::cmd::meta::{CommandFlags, KeySpecFlags};
use crate::cmd::CommandSpec;

/// A refusal: why, and the argument it is about (0 for the command).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub why: Denial,
    pub pos: usize,
}

impl Refusal {
    /// The NOPERM reply, with 7.0.15's texts.
    pub fn reply_text(&self, spec: &CommandSpec, argv: &[Bytes]) -> String {
        match self.why {
            Denial::Key => {
                "NOPERM this user has no permissions to access one of the keys used as arguments"
                    .into()
            }
            Denial::Channel => "NOPERM this user has no permissions to access one of the channels used as arguments".into(),
            _ => format!(
                "NOPERM this user has no permissions to run the '{}' command",
                full_name(spec, argv)
            ),
        }
    }

    /// The ACL log's `object`: the command's full name, or the argument.
    pub fn object(&self, spec: &CommandSpec, argv: &[Bytes]) -> String {
        match self.why {
            Denial::Key | Denial::Channel => argv
                .get(self.pos)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .unwrap_or_default(),
            _ => full_name(spec, argv),
        }
    }

    /// ACL DRYRUN's answer.
    pub fn dryrun_text(&self, spec: &CommandSpec, argv: &[Bytes]) -> String {
        let object = self.object(spec, argv);
        match self.why {
            Denial::Key => format!("This user has no permissions to access the '{object}' key"),
            Denial::Channel => {
                format!("This user has no permissions to access the '{object}' channel")
            }
            _ => format!("This user has no permissions to run the '{object}' command"),
        }
    }
}

/// `config|get` for a container's known subcommand, else the name.
pub fn full_name(spec: &CommandSpec, argv: &[Bytes]) -> String {
    match argv.get(1).and_then(|sub| sub_index(spec, sub)) {
        Some(i) if spec.container => spec.meta.subcommands[i].name.to_string(),
        _ => spec.name.to_string(),
    }
}

/// The channels a command names: (position, is a pattern). Redis declares
/// these in code, not in key specs; these are ember's Pub/Sub commands
/// that publish or subscribe (unsubscribing is always allowed).
fn channels(spec: &CommandSpec, argv: &[Bytes]) -> Vec<(usize, bool)> {
    match spec.name {
        "publish" | "spublish" => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..argv.len()).map(|p| (p, false)).collect(),
        "psubscribe" => (1..argv.len()).map(|p| (p, true)).collect(),
        _ => Vec::new(),
    }
}

thread_local! {
    /// The keys of the command being checked: one buffer per thread,
    /// reused, so a restricted user's command allocates nothing here.
    static KEYS: RefCell<Vec<FoundKey>> = const { RefCell::new(Vec::new()) };
}

/// Checks `argv` (whose command is `spec`) against `user`'s selectors.
pub fn check(user: &User, spec: &'static CommandSpec, argv: &[Bytes]) -> Result<(), Refusal> {
    let sub = match argv.get(1) {
        Some(sub) if spec.container => sub_index(spec, sub),
        _ => None,
    };
    let (id, meta, first_arg_at) = match sub {
        Some(i) => (sub_id(spec, i), &spec.meta.subcommands[i], 2),
        None => (spec.id(), spec.meta, 1),
    };
    // Every selector may read every key: the bits alone decide.
    let keys_free = user.root.all_keys && user.selectors.iter().all(|s| s.all_keys);
    if !meta.has_keys() || keys_free {
        return check_with(user, spec, id, first_arg_at, argv, &[]);
    }
    KEYS.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut keys) => {
            command_keys_into(meta, argv, &mut keys);
            check_with(user, spec, id, first_arg_at, argv, &keys)
        }
        // Not reentered today; a fresh list if it ever is.
        Err(_) => {
            let keys = command_keys(meta, argv).unwrap_or_default();
            check_with(user, spec, id, first_arg_at, argv, &keys)
        }
    })
}

/// [`check`] once the keys are found.
fn check_with(
    user: &User,
    spec: &'static CommandSpec,
    id: usize,
    first_arg_at: usize,
    argv: &[Bytes],
    keys: &[FoundKey],
) -> Result<(), Refusal> {
    let chans = channels(spec, argv);
    let mut worst = Refusal {
        why: Denial::Command,
        pos: 0,
    };
    for sel in std::iter::once(&user.root).chain(&user.selectors) {
        match check_selector(sel, spec, id, first_arg_at, argv, keys, &chans) {
            Ok(()) => return Ok(()),
            Err(r) => {
                if r.why > worst.why || (r.why == worst.why && r.pos > worst.pos) {
                    worst = r;
                }
            }
        }
    }
    Err(worst)
}

fn check_selector(
    sel: &Selector,
    spec: &CommandSpec,
    id: usize,
    first_arg_at: usize,
    argv: &[Bytes],
    keys: &[(usize, KeySpecFlags)],
    chans: &[(usize, bool)],
) -> Result<(), Refusal> {
    let command = Refusal {
        why: Denial::Command,
        pos: 0,
    };
    // The bits, not `all_commands`: `+@all -get` keeps that flag (for
    // ACL LIST) with GET's bit clear.
    if !spec.flags.contains(CommandFlags::NO_AUTH) && !sel.allows_id(id) {
        let first_ok = argv
            .get(first_arg_at)
            .is_some_and(|arg| sel.allows_first_arg(id, arg));
        if !first_ok {
            return Err(command);
        }
    }
    if !sel.all_keys {
        for &(pos, flags) in keys {
            let mut need = 0;
            if flags.contains(KeySpecFlags::ACCESS) {
                need |= READ;
            }
            if flags.intersects(KeySpecFlags::INSERT | KeySpecFlags::DELETE | KeySpecFlags::UPDATE)
            {
                need |= WRITE;
            }
            if !sel.key_allowed(&argv[pos], need) {
                return Err(Refusal {
                    why: Denial::Key,
                    pos,
                });
            }
        }
    }
    if !sel.all_channels {
        for &(pos, is_pattern) in chans {
            if !sel.channel_allowed(&argv[pos], is_pattern) {
                return Err(Refusal {
                    why: Denial::Channel,
                    pos,
                });
            }
        }
    }
    Ok(())
}

/// SORT's BY (with a `*`) and GET name keys from the data, which no key
/// pattern short of every key can allow: as Redis, they need a selector
/// that runs SORT and may read every key (`~*`, `%R~*`).
pub fn sort_refusal(user: &User, spec: &'static CommandSpec, argv: &[Bytes]) -> Option<String> {
    if !matches!(spec.name, "sort" | "sort_ro") {
        return None;
    }
    let reads_all = std::iter::once(&user.root)
        .chain(&user.selectors)
        .any(|sel| {
            let cmd_ok = spec.flags.contains(CommandFlags::NO_AUTH) || sel.allows_id(spec.id());
            cmd_ok
                && (sel.all_keys
                    || sel
                        .keys
                        .iter()
                        .any(|k| k.pattern.as_ref() == b"*" && k.perms & READ != 0))
        });
    if reads_all {
        return None;
    }
    let mut i = 2;
    while i + 1 < argv.len() {
        let word = &argv[i];
        if word.eq_ignore_ascii_case(b"by") && argv[i + 1].contains(&b'*') {
            return Some(
                "ERR BY option of SORT denied due to insufficient ACL permissions.".into(),
            );
        }
        if word.eq_ignore_ascii_case(b"get") {
            return Some(
                "ERR GET option of SORT denied due to insufficient ACL permissions.".into(),
            );
        }
        i += 1;
    }
    None
}
