//! Per-connection state that commands read and change.

use bytes::Bytes;
use indexmap::IndexSet;
use std::sync::Arc;

use crate::acl::User;

use crate::pubsub::Subscriber;
use crate::resp::Protocol;

#[derive(Debug, Clone)]
pub struct Session {
    /// Unique, increasing client id (CLIENT ID).
    pub id: u64,
    pub proto: Protocol,
    pub db: usize,
    pub name: Option<String>,
    pub addr: String,
    pub laddr: String,
    /// Unix ms at connect and at the last command.
    pub created_ms: u64,
    pub last_ms: u64,
    pub last_cmd: &'static str,
    /// The subcommand of the last command when it was a container
    /// (`client|list` in CLIENT LIST); None for plain commands, so the common
    /// case costs no allocation.
    pub last_sub: Option<String>,
    /// Where this connection lives, so the Pub/Sub registry can reach it.
    pub shard: usize,
    pub token: usize,
    /// Subscriptions, in the order they were made (UNSUBSCRIBE without
    /// arguments answers in this order).
    pub channels: IndexSet<Bytes>,
    /// Commands queued since MULTI, if a transaction is open.
    pub multi: Option<super::transaction::Transaction>,
    /// Waiting in a blocking command (CLIENT LIST flag `b`).
    /// CLIENT NO-EVICT ON (`e` in CLIENT LIST): `maxmemory-clients`
    /// never evicts this client, though its memory counts.
    pub no_evict: bool,
    /// The start-up replay of the append-only file (`cmd::aof::is_loader`).
    pub aof_loader: bool,
    pub blocked: bool,
    /// The transaction EXEC is running.
    pub exec: Option<super::transaction::ExecRun>,
    /// Keys under WATCH, with their database.
    pub watched: Vec<(usize, Bytes)>,
    pub patterns: IndexSet<Bytes>,
    /// Shard channels (SSUBSCRIBE), in the order subscribed.
    pub shard_channels: IndexSet<Bytes>,
    /// Who this connection is, for ACL.
    pub auth: Auth,
    /// CLIENT TRACKING's options while it is on (`cmd::tracking`).
    pub tracking: Option<Box<super::tracking::ClientTracking>>,
    /// In MONITOR mode (`cmd::monitor`; CLIENT LIST flag `O`).
    pub monitor: bool,
    /// CLIENT REPLY's state.
    pub reply: ReplyMode,
    /// The EXEC running, as sent, for MONITOR's line once its commands ran.
    pub monitored_exec: Option<Vec<Bytes>>,
    /// What a replica told in REPLCONF before its PSYNC.
    pub hello: super::replication::Hello,
    /// The connection this replica applies its master's stream through:
    /// never refused as read-only, sees expired keys as live.
    pub master: bool,
    /// The master client's transaction so far, in wire form: it joins
    /// the replica's backlog whole at EXEC.
    pub master_tx: Vec<u8>,
    /// The database a SELECT inside that transaction makes it at EXEC.
    pub master_tx_db: Option<usize>,
}

/// CLIENT REPLY: whether this client's replies are sent (pushes always are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplyMode {
    #[default]
    On,
    /// OFF: no reply until CLIENT REPLY ON.
    Off,
    /// SKIP was sent: the next command's reply is not sent.
    SkipNext,
    /// The command running is the one SKIP skips.
    Skipping,
}

impl ReplyMode {
    pub fn silent(self) -> bool {
        matches!(self, ReplyMode::Off | ReplyMode::Skipping)
    }

    /// A command starts: the one after SKIP is skipped.
    pub fn starting(self) -> ReplyMode {
        match self {
            ReplyMode::SkipNext => ReplyMode::Skipping,
            other => other,
        }
    }

    /// A command is over: SKIP skipped it.
    pub fn finished(self) -> ReplyMode {
        match self {
            ReplyMode::Skipping => ReplyMode::On,
            other => other,
        }
    }
}

/// A connection's user, as of the registry generation it was read at.
#[derive(Debug, Clone)]
pub struct Auth {
    pub user: Arc<User>,
    /// `crate::acl::Acl::generation` when `user` was read; 0 before the
    /// first command, so the first one reads it.
    pub generation: u64,
    /// Logged in: by AUTH or HELLO, or at connect while the default user
    /// had no password (as Redis marks a new client).
    pub authenticated: bool,
    /// Nothing to check before a command: authenticated (or no password
    /// needed) and a user that may run anything. Worked out when the
    /// generation changes, so the request path tests one bool.
    pub free: bool,
}

impl Default for Auth {
    fn default() -> Auth {
        Auth {
            user: Arc::new(crate::acl::default_user()),
            generation: 0,
            authenticated: false,
            free: false,
        }
    }
}

impl Session {
    pub fn new(id: u64, addr: String, laddr: String, now_ms: u64) -> Session {
        Session {
            id,
            proto: Protocol::Resp2,
            db: 0,
            name: None,
            addr,
            laddr,
            created_ms: now_ms,
            last_ms: now_ms,
            last_cmd: "NULL",
            last_sub: None,
            shard: 0,
            token: 0,
            channels: IndexSet::new(),
            multi: None,
            no_evict: false,
            aof_loader: false,
            blocked: false,
            exec: None,
            watched: Vec::new(),
            patterns: IndexSet::new(),
            shard_channels: IndexSet::new(),
            auth: Auth::default(),
            tracking: None,
            monitor: false,
            reply: ReplyMode::On,
            monitored_exec: None,
            hello: Default::default(),
            master: false,
            master_tx: Vec::new(),
            master_tx_db: None,
        }
    }

    pub fn subscriber(&self) -> Subscriber {
        Subscriber {
            shard: self.shard,
            token: self.token,
            conn_id: self.id,
        }
    }

    pub fn subscriptions(&self) -> usize {
        self.channels.len() + self.patterns.len() + self.shard_channels.len()
    }

    /// RESP2 subscriber mode: only (un)subscribe, PING, QUIT and RESET allowed.
    pub fn in_subscriber_mode(&self) -> bool {
        self.proto == Protocol::Resp2 && self.subscriptions() > 0
    }
}
