//! Access control as Redis 7.0 has it: the users every shard shares, the
//! ACL log and the denial counters.
//!
//! The registry is read-mostly. A connection holds an `Arc` of its user
//! and the registry's generation when it took it; every change (ACL
//! SETUSER, DELUSER, LOAD, CONFIG SET requirepass) bumps the generation,
//! so a connection sees the change at its next command by comparing one
//! number, and takes its user afresh (or is closed, its user deleted).
//!
//! What a rule means for commands (ids, categories) is the command
//! layer's (`cmd::acl`); this module stores and matches.
//!
//! # Layout
//! - `user`: users and selectors, key and channel matching.
//! - `password`: SHA-256 hashes, ACL GENPASS's random hex.
//! - `log`: the ACL LOG entries.

pub mod log;
pub mod password;
pub mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

pub use user::{KeyPattern, Selector, User};

/// Why a command was refused, as the ACL log and INFO count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Denial {
    Command,
    Key,
    Auth,
    Channel,
}

impl Denial {
    /// The log's `reason`.
    pub fn reason(self) -> &'static str {
        match self {
            Denial::Command => "command",
            Denial::Key => "key",
            Denial::Auth => "auth",
            Denial::Channel => "channel",
        }
    }
}

/// INFO's `acl_access_denied_*`.
#[derive(Default)]
pub struct DeniedCounters {
    pub auth: AtomicU64,
    pub cmd: AtomicU64,
    pub key: AtomicU64,
    pub channel: AtomicU64,
}

impl DeniedCounters {
    pub fn count(&self, why: Denial) {
        let counter = match why {
            Denial::Auth => &self.auth,
            Denial::Command => &self.cmd,
            Denial::Key => &self.key,
            Denial::Channel => &self.channel,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

/// The users, shared by every shard.
pub struct Acl {
    users: RwLock<BTreeMap<String, Arc<User>>>,
    generation: AtomicU64,
    /// The default user's `nopass` and `on`, kept beside the map so the
    /// request path reads two atomics, not the lock.
    default_nopass: AtomicBool,
    default_enabled: AtomicBool,
    pub log: Mutex<log::Log>,
    pub denied: DeniedCounters,
}

/// The `default` user as Redis starts it: on, no password, every key and
/// channel, every command (the command layer sets the commands' bits,
/// `cmd::acl::default_user`, when the server starts).
pub fn default_user() -> User {
    let mut user = User::new("default", true);
    user.enabled = true;
    user.nopass = true;
    user.root.all_commands = true;
    user.root.all_keys = true;
    user
}

impl Default for Acl {
    fn default() -> Acl {
        let mut users = BTreeMap::new();
        users.insert("default".to_string(), Arc::new(default_user()));
        Acl {
            users: RwLock::new(users),
            generation: AtomicU64::new(1),
            default_nopass: AtomicBool::new(true),
            default_enabled: AtomicBool::new(true),
            log: Mutex::new(log::Log::default()),
            denied: DeniedCounters::default(),
        }
    }
}

impl Acl {
    /// Changes whenever any user changes.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn get(&self, name: &str) -> Option<Arc<User>> {
        self.users.read().ok()?.get(name).cloned()
    }

    /// Every user, in name order (ACL LIST, USERS, SAVE).
    pub fn all(&self) -> Vec<Arc<User>> {
        self.users
            .read()
            .map(|u| u.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn default_user(&self) -> Arc<User> {
        self.get("default")
            .unwrap_or_else(|| Arc::new(default_user()))
    }

    /// Puts `user` in place of the one of its name.
    pub fn put(&self, user: User) {
        if let Ok(mut users) = self.users.write() {
            users.insert(user.name.clone(), Arc::new(user));
        }
        self.changed();
    }

    /// Removes the users named; how many there were.
    pub fn delete(&self, names: &[String]) -> usize {
        let removed = match self.users.write() {
            Ok(mut users) => names.iter().filter(|n| users.remove(*n).is_some()).count(),
            Err(_) => 0,
        };
        self.changed();
        removed
    }

    /// Replaces every user at once (ACL LOAD); `default` is kept if the
    /// new set lacks it.
    pub fn replace_all(&self, new: Vec<User>) {
        if let Ok(mut users) = self.users.write() {
            let default = users.get("default").cloned();
            users.clear();
            for user in new {
                users.insert(user.name.clone(), Arc::new(user));
            }
            if let (false, Some(d)) = (users.contains_key("default"), default) {
                users.insert("default".into(), d);
            }
        }
        self.changed();
    }

    /// After a change: the default user's flags read again, then the
    /// generation moved (so a connection that sees the new generation
    /// sees the new flags).
    fn changed(&self) {
        let default = self.default_user();
        self.default_nopass.store(default.nopass, Ordering::Release);
        self.default_enabled
            .store(default.enabled, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether the default user needs no password (protected mode asks).
    pub fn default_nopass(&self) -> bool {
        self.default_nopass.load(Ordering::Acquire)
    }

    /// Whether a connection that has not authenticated must (Redis's
    /// `authRequired`): the default user has a password or is off.
    pub fn auth_required(&self) -> bool {
        !self.default_nopass.load(Ordering::Acquire)
            || !self.default_enabled.load(Ordering::Acquire)
    }

    /// The user `name` if `password` is one of its and it is on.
    pub fn authenticate(&self, name: &[u8], password: &[u8]) -> Option<Arc<User>> {
        let user = self.get(std::str::from_utf8(name).ok()?)?;
        (user.enabled && user.password_ok(password)).then_some(user)
    }
}
