//! Per-connection state that commands read and change.

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
        }
    }
}
