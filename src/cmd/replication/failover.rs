//! FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], as Redis 7.0
//! does it: a master hands its role to one of its replicas without losing
//! a write.
//!
//! # The handoff
//!
//! 1. FAILOVER pauses writes on every shard (`exec::pause`, as CLIENT
//!    PAUSE WRITE, which CLIENT UNPAUSE does not end) and starts a driver
//!    thread; the master's offset stops moving (no PING to the replicas
//!    either).
//! 2. The driver looks every [`STEP`] for the target (`TO host port`, or
//!    any replica) acknowledging the master's whole offset
//!    (`exec::failover::step`). Past `TIMEOUT` it aborts, or with FORCE
//!    goes on anyway.
//! 3. It makes this server a replica of the target (REPLICAOF's link),
//!    whose PSYNC carries a third argument: `PSYNC <replid> <offset+1>
//!    FAILOVER`. The target, seeing its own replication ID, becomes a
//!    master (REPLICAOF NO ONE: the old ID becomes its second) and answers
//!    `+CONTINUE <new id>`; a different ID gets `-ERR PSYNC FAILOVER replid
//!    must match my replid.`
//! 4. `+CONTINUE` (or `+FULLRESYNC`) ends the failover: writes resume
//!    here, and are refused as a replica's. Any other answer aborts it:
//!    this server is a master again, under a new ID, and its replicas
//!    reconnect and continue.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::super::args::{err, int_arg};
use super::super::{Session, ShardData};
use crate::exec::failover::{step, Candidate, Failover, Phase, Step};
use crate::exec::{Action, Shared};
use crate::resp::Frame;

/// How often the driver looks at the replicas' offsets (they acknowledge
/// every second; the master asks for no ACK while writes are paused).
const STEP: Duration = Duration::from_millis(10);

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms].
pub fn failover(shard: &mut ShardData, _: &mut Session, argv: &[Bytes]) -> Action {
    let shared = Arc::clone(&shard.shared);
    if argv.len() == 2 && argv[1].eq_ignore_ascii_case(b"abort") {
        if shared.repl.failover().phase == Phase::None {
            return err::frame("ERR No failover in progress.").into();
        }
        abort(&shared, "Failover manually aborted");
        return Frame::OK.into();
    }
    let (mut timeout_ms, mut force, mut target) = (0i64, false, None::<(String, i64)>);
    let mut j = 1;
    while j < argv.len() {
        let word = &argv[j];
        if word.eq_ignore_ascii_case(b"timeout") && j + 1 < argv.len() && timeout_ms == 0 {
            timeout_ms = match int_arg(&argv[j + 1]) {
                Ok(t) => t,
                Err(e) => return e.into(),
            };
            if timeout_ms <= 0 {
                return err::frame("ERR FAILOVER timeout must be greater than 0").into();
            }
            j += 2;
        } else if word.eq_ignore_ascii_case(b"to") && j + 2 < argv.len() && target.is_none() {
            let port = match int_arg(&argv[j + 2]) {
                Ok(p) => p,
                Err(e) => return e.into(),
            };
            target = Some((String::from_utf8_lossy(&argv[j + 1]).into_owned(), port));
            j += 3;
        } else if word.eq_ignore_ascii_case(b"force") && !force {
            force = true;
            j += 1;
        } else {
            return err::syntax().into();
        }
    }
    let mut state = shared.repl.failover();
    if state.phase != Phase::None {
        return err::frame("ERR FAILOVER already in progress.").into();
    }
    if shared.repl.is_replica() {
        return err::frame("ERR FAILOVER is not valid when server is a replica.").into();
    }
    let replicas = shared.repl.list();
    if replicas.is_empty() {
        return err::frame("ERR FAILOVER requires connected replicas.").into();
    }
    if force && (timeout_ms == 0 || target.is_none()) {
        return err::frame(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        )
        .into();
    }
    let target = match target {
        Some((host, port)) => {
            let found = replicas
                .iter()
                .find(|r| r.ip.eq_ignore_ascii_case(&host) && i64::from(r.port) == port);
            let Some(replica) = found else {
                return err::frame("ERR FAILOVER target HOST and PORT is not a replica.").into();
            };
            if replica.state() != "online" {
                return err::frame("ERR FAILOVER target replica is not online.").into();
            }
            log::info!("FAILOVER requested to {host}:{port}.");
            Some((host, replica.port))
        }
        None => {
            log::info!("FAILOVER requested to any replica.");
            None
        }
    };
    let end_ms = if timeout_ms > 0 {
        shard.now_ms.saturating_add(timeout_ms as u64)
    } else {
        0
    };
    *state = Failover {
        phase: Phase::WaitForSync,
        target,
        end_ms,
        force,
    };
    shared.pause.set_failover(true);
    shard.store.stats.expiry_paused = true;
    drop(state);
    let driver = {
        let shared = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("ember-failover".into())
            .spawn(move || drive(&shared))
    };
    if driver.is_err() {
        clear(&shared, &mut shared.repl.failover());
        return err::frame("ERR FAILOVER cannot start its thread").into();
    }
    Frame::OK.into()
}

/// The driver: waits for the target to catch up (or the timeout), then
/// makes this server its replica with the handoff PSYNC.
fn drive(shared: &Arc<Shared>) {
    loop {
        std::thread::sleep(STEP);
        let mut state = shared.repl.failover();
        if state.phase != Phase::WaitForSync {
            return;
        }
        let offset = shared.repl.backlog().end;
        let replicas: Vec<Candidate> = shared
            .repl
            .list()
            .iter()
            .map(|r| Candidate {
                host: r.ip.clone(),
                port: r.port,
                ack: r.ack.load(std::sync::atomic::Ordering::Relaxed),
            })
            .collect();
        match step(&state, super::super::save::now_ms(), offset, &replicas) {
            Step::Wait => continue,
            Step::Abort(reason) => {
                drop(state);
                abort(shared, reason);
                return;
            }
            Step::Go { host, port, forced } => {
                if forced {
                    log::info!("FAILOVER to {host}:{port} time out exceeded, failing over.");
                } else {
                    log::info!("Failover target {host}:{port} is synced, failing over.");
                }
                state.phase = Phase::InProgress;
                state.target = Some((host.clone(), port));
                // Under the state's lock, so an ABORT comes after the link
                // exists and takes it down.
                super::set_master(shared, host, port);
                return;
            }
        }
    }
}

/// Ends a failover that did not complete; one in progress makes this
/// server a master again (under a new ID: its replicas continue).
pub fn abort(shared: &Shared, reason: &str) {
    let mut state = shared.repl.failover();
    if state.phase == Phase::None {
        return;
    }
    match &state.target {
        Some((host, port)) => log::info!("FAILOVER to {host}:{port} aborted: {reason}"),
        None => log::info!("FAILOVER to any replica aborted: {reason}"),
    }
    if state.phase == Phase::InProgress && super::unset_master(shared) {
        log::info!("MASTER MODE enabled (failover aborted)");
    }
    clear(shared, &mut state);
}

/// No failover any more: writes go on on every shard at once.
fn clear(shared: &Shared, state: &mut Failover) {
    *state = Failover::default();
    shared.pause.set_failover(false);
    // Each shard runs what the pause held back on its next pass.
    for peer in shared.peers() {
        let _ = peer.waker.wake();
    }
}

/// The link's PSYNC carries `FAILOVER` while this server hands over.
pub fn handing_over(shared: &Shared) -> bool {
    shared.repl.failover().phase == Phase::InProgress
}

/// The target answered the handoff PSYNC: accepted (`+CONTINUE`, or a
/// `+FULLRESYNC` Redis also takes), the failover is over; refused, it is
/// aborted.
pub fn handover_answered(shared: &Shared, accepted: bool) {
    if shared.repl.failover().phase != Phase::InProgress {
        return;
    }
    if accepted {
        clear(shared, &mut shared.repl.failover());
    } else {
        abort(shared, "Failover target rejected psync request");
    }
}

/// On the target, PSYNC's `FAILOVER` argument: with this server's own ID
/// it becomes a master, before the PSYNC is answered (which then
/// continues the old master's history). Also refuses any sync while this
/// server fails over itself. None: the PSYNC goes on.
pub fn psync_refusal(shard: &ShardData, session: &Session, argv: &[Bytes]) -> Option<Frame> {
    let shared = &shard.shared;
    if argv.len() > 3 && argv[3].eq_ignore_ascii_case(b"failover") {
        let asked = String::from_utf8_lossy(&argv[1]);
        log::warn!("Failover request received for replid {asked}.");
        if asked != shared.repl.replid() {
            return Some(err::frame(
                "ERR PSYNC FAILOVER replid must match my replid.",
            ));
        }
        if super::unset_master(shared) {
            log::info!(
                "MASTER MODE enabled (failover request from 'id={} addr={}')",
                session.id,
                session.addr
            );
        }
    }
    sync_refusal(shared)
}

/// Replicas do not sync with a server failing over.
pub fn sync_refusal(shared: &Shared) -> Option<Frame> {
    (shared.repl.failover().phase != Phase::None)
        .then(|| err::frame("NOMASTERLINK Can't SYNC while failing over"))
}

/// INFO's `master_failover_state`.
pub fn state_name(shared: &Shared) -> &'static str {
    shared.repl.failover().phase.name()
}
