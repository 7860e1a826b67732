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
