//! INFO replication, with redis-server 7.0's fields in its order.

use std::sync::atomic::Ordering::Relaxed;

use crate::exec::Shared;

/// The section's lines, as (field, value).
pub fn lines(shared: &Shared) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |k: &str, v: String| out.push((k.to_string(), v));
    let now = super::super::save::now_ms();
    let backlog_end = shared.repl.backlog().end;
    match shared.repl.current_link() {
        None => put("role", "master".into()),
        Some(link) => {
            put("role", "slave".into());
            put("master_host", link.host.clone());
            put("master_port", link.port.to_string());
            let up = link.is_up();
            put("master_link_status", if up { "up" } else { "down" }.into());
            let last_io = link.last_io_ms.load(Relaxed);
            let ago = if up && last_io > 0 {
                (now.saturating_sub(last_io) / 1000) as i64
            } else {
                -1
            };
            put("master_last_io_seconds_ago", ago.to_string());
            let syncing = link.state() == "sync";
            put("master_sync_in_progress", u8::from(syncing).to_string());
            put(
                "slave_read_repl_offset",
                link.read_offset.load(Relaxed).max(backlog_end).to_string(),
            );
            put("slave_repl_offset", backlog_end.to_string());
            if syncing {
                let total = link.sync_total.load(Relaxed) as i64;
                let read = link.sync_read.load(Relaxed) as i64;
                put("master_sync_total_bytes", total.to_string());
                put("master_sync_read_bytes", read.to_string());
                put("master_sync_left_bytes", (total - read).to_string());
                let perc = if total > 0 {
                    read as f64 * 100.0 / total as f64
                } else {
                    0.0
                };
                put("master_sync_perc", format!("{perc:.2}"));
                put("master_sync_last_io_seconds_ago", "0".into());
            }
            if !up {
                let since = link.down_since_ms.load(Relaxed);
                let secs = if since == 0 {
                    -1
                } else {
                    (now.saturating_sub(since) / 1000) as i64
                };
                put("master_link_down_since_seconds", secs.to_string());
            }
            put("slave_priority", "100".into());
            put(
                "slave_read_only",
                u8::from(shared.config.replica_read_only()).to_string(),
            );
            put("replica_announced", "1".into());
        }
    }
    let replicas = shared.repl.list();
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
    put(
        "master_failover_state",
        super::failover::state_name(shared).into(),
    );
    let ids = shared.repl.ids();
    put("master_replid", ids.replid);
    put("master_replid2", ids.replid2);
    let backlog = shared.repl.backlog();
    let active = backlog.history;
    put("master_repl_offset", backlog.end.to_string());
    put("second_repl_offset", ids.second_offset.to_string());
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
