//! INFO replication, with redis-server 7.0's fields in its order.

use std::sync::atomic::Ordering::Relaxed;

use crate::exec::Shared;

/// The section's lines, as (field, value).
pub fn lines(shared: &Shared) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| out.push((k.to_string(), v));
    put("role", "master".into());
    let replicas = shared.repl.list();
    let now = super::super::save::now_ms();
    put("connected_slaves", replicas.len().to_string());
    for (i, r) in replicas.iter().enumerate() {
        let lag = now.saturating_sub(r.ack_ms.load(Relaxed)) / 1000;
        put(
            &format!("slave{i}"),
            format!(
                "ip={},port={},state={},offset={},lag={lag}",
                r.ip,
                r.port,
                r.state(),
                r.ack.load(Relaxed)
            ),
        );
    }
    put("master_failover_state", "no-failover".into());
    put("master_replid", shared.replid.clone());
    put("master_replid2", "0".repeat(40));
    let backlog = shared.repl.backlog();
    let active = backlog.sink.is_some();
    put("master_repl_offset", backlog.end.to_string());
    put("second_repl_offset", "-1".into());
    put("repl_backlog_active", u8::from(active).to_string());
    put(
        "repl_backlog_size",
        shared.config.repl_backlog_size().to_string(),
    );
    let (first, histlen) = if active {
        (backlog.first(), backlog.histlen())
    } else {
        (0, 0)
    };
    put("repl_backlog_first_byte_offset", first.to_string());
    put("repl_backlog_histlen", histlen.to_string());
    out
}
