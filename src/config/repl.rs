//! The replication parameters that take effect (the rest of Redis's
//! replication knobs stay `Kind::Fixed` rows, accepted and shown):
//! `masterauth` and `masteruser` are plain text, kept here; the numbers
//! and switches are ordinary rows of `params.rs` with slots in `Live`.

use super::kind::{Custom, Value};

pub(super) static MASTERAUTH: Custom = Custom {
    default: "",
    parse: |_, text| Ok(Value::Text(text.to_string())),
    read: |live| Value::Text(live.masterauth()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.masterauth.write()) {
            *slot = text;
        }
    },
};

pub(super) static MASTERUSER: Custom = Custom {
    default: "",
    parse: |_, text| Ok(Value::Text(text.to_string())),
    read: |live| Value::Text(live.masteruser()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.masteruser.write()) {
            *slot = text;
        }
    },
};

/// `replicaof <host> <port>` (a config file line or `--replicaof host
/// port`): the server starts as that master's replica.
pub(super) static REPLICAOF: Custom = Custom {
    default: "",
    parse: |_, text| {
        let words: Vec<&str> = text.split_whitespace().collect();
        // Redis's checks: two words, then a port (or `no one`: none).
        match words.as_slice() {
            [] => Ok(Value::Text(String::new())),
            [no, one] if no.eq_ignore_ascii_case("no") && one.eq_ignore_ascii_case("one") => {
                Ok(Value::Text(String::new()))
            }
            [_, port] if port.parse::<u16>().is_ok() => Ok(Value::Text(words.join(" "))),
            [_, _] => Err("Invalid master port".into()),
            _ => Err("wrong number of arguments".into()),
        }
    },
    read: |live| Value::Text(live.replicaof()),
    store: |live, value| {
        if let (Value::Text(text), Ok(mut slot)) = (value, live.v.replicaof.write()) {
            *slot = text;
        }
    },
};
