//! The TLS parameters that take effect (`net::tls` builds the server's
//! TLS set-up from them at start): the files, as paths kept as given.

use super::kind::{Custom, Value};
use super::live::Live;
use std::sync::RwLock;

/// `tls-auth-clients`' options, in Redis's spelling.
pub const AUTH_CLIENTS: &[&str] = &["no", "yes", "optional"];

fn text(slot: &RwLock<String>) -> String {
    slot.read().map_or_else(|_| String::new(), |t| t.clone())
}

fn put(slot: &RwLock<String>, value: Value) {
    if let (Value::Text(text), Ok(mut held)) = (value, slot.write()) {
        *held = text;
    }
}

fn any_text(_: &Live, text: &str) -> Result<Value, String> {
    Ok(Value::Text(text.to_string()))
}

pub(super) static CERT_FILE: Custom = Custom {
    default: "",
    parse: any_text,
    read: |live| Value::Text(text(&live.v.tls_cert_file)),
    store: |live, value| put(&live.v.tls_cert_file, value),
};

pub(super) static KEY_FILE: Custom = Custom {
    default: "",
    parse: any_text,
    read: |live| Value::Text(text(&live.v.tls_key_file)),
    store: |live, value| put(&live.v.tls_key_file, value),
};

pub(super) static CA_CERT_FILE: Custom = Custom {
    default: "",
    parse: any_text,
    read: |live| Value::Text(text(&live.v.tls_ca_cert_file)),
    store: |live, value| put(&live.v.tls_ca_cert_file, value),
};

pub(super) static CA_CERT_DIR: Custom = Custom {
    default: "",
    parse: any_text,
    read: |live| Value::Text(text(&live.v.tls_ca_cert_dir)),
    store: |live, value| put(&live.v.tls_ca_cert_dir, value),
};

/// What `net::tls` reads.
pub struct TlsFiles {
    pub cert_file: String,
    pub key_file: String,
    pub ca_cert_file: String,
    pub ca_cert_dir: String,
    /// 0 no, 1 yes, 2 optional ([`AUTH_CLIENTS`]).
    pub auth_clients: u8,
}

impl Live {
    pub fn tls_port(&self) -> u16 {
        self.v.tls_port.load(std::sync::atomic::Ordering::Relaxed) as u16
    }

    pub fn tls_files(&self) -> TlsFiles {
        TlsFiles {
            cert_file: text(&self.v.tls_cert_file),
            key_file: text(&self.v.tls_key_file),
            ca_cert_file: text(&self.v.tls_ca_cert_file),
            ca_cert_dir: text(&self.v.tls_ca_cert_dir),
            auth_clients: self
                .v
                .tls_auth_clients
                .load(std::sync::atomic::Ordering::Relaxed),
        }
    }
}
