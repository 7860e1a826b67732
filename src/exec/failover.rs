//! FAILOVER's state as data, and the one decision its driver makes at
//! each step (Redis 7.0's `updateFailoverStatus`), kept pure so it is
//! tested without servers.
//!
//! # The states
//!
//! ```text
//!   no-failover --FAILOVER--> waiting-for-sync --target caught up--> failover-in-progress
//!        ^                        |    (or the timeout passed with FORCE)      |
//!        |                        | timeout (no FORCE), FAILOVER ABORT         | the target answered
//!        +------------------------+--------------------------------------------+ the handoff PSYNC
//! ```
//!
//! While the state is not `no-failover` every shard holds writes back as
//! CLIENT PAUSE WRITE does (`exec::pause`), so the master's offset stops
//! moving and a replica can reach it.

/// Where a failover stands (INFO's `master_failover_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    #[default]
    None,
    /// Writes paused; waiting for the target (or any replica) to
    /// acknowledge the master's whole stream.
    WaitForSync,
    /// This server became a replica of the target and sends it the
    /// handoff `PSYNC <replid> <offset> FAILOVER`.
    InProgress,
}

impl Phase {
    /// INFO's words.
    pub fn name(self) -> &'static str {
        match self {
            Phase::None => "no-failover",
            Phase::WaitForSync => "waiting-for-sync",
            Phase::InProgress => "failover-in-progress",
        }
    }
}

/// A failover's settings and state.
#[derive(Clone, Debug, Default)]
pub struct Failover {
    pub phase: Phase,
    /// `TO host port`; for a failover to any replica, the one chosen once
    /// it caught up.
    pub target: Option<(String, u16)>,
    /// Unix ms the `TIMEOUT` ends at (0: none).
    pub end_ms: u64,
    /// `FORCE`: at the timeout, fail over anyway.
    pub force: bool,
}

/// A connected replica as the decision sees it.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub host: String,
    pub port: u16,
    /// The offset it acknowledged.
    pub ack: u64,
}

/// What the driver does next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing yet: look again shortly.
    Wait,
    /// Hand over to this replica; `forced`: it had not caught up, the
    /// timeout passed with FORCE.
    Go {
        host: String,
        port: u16,
        forced: bool,
    },
    /// Give up, for this reason (logged as Redis logs it).
    Abort(&'static str),
}

/// One step of a failover waiting for its target, at `now_ms`, with the
/// master's offset `offset` and the replicas connected now. Requires:
/// `f.phase` is `WaitForSync`.
pub fn step(f: &Failover, now_ms: u64, offset: u64, replicas: &[Candidate]) -> Step {
    if f.end_ms != 0 && f.end_ms <= now_ms {
        return match (&f.target, f.force) {
            (Some((host, port)), true) => Step::Go {
                host: host.clone(),
                port: *port,
                forced: true,
            },
            _ => Step::Abort("Replica never caught up before timeout"),
        };
    }
    let caught_up = |r: &&Candidate| r.ack == offset;
    let found = match &f.target {
        Some((host, port)) => replicas
            .iter()
            .filter(|r| r.host.eq_ignore_ascii_case(host) && r.port == *port)
            .find(caught_up),
        None => replicas.iter().find(caught_up),
    };
    match found {
        Some(r) => Step::Go {
            host: r.host.clone(),
            port: r.port,
            forced: false,
        },
        None => Step::Wait,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replica(host: &str, port: u16, ack: u64) -> Candidate {
        Candidate {
            host: host.into(),
            port,
            ack,
        }
    }

    fn waiting(target: Option<(&str, u16)>, end_ms: u64, force: bool) -> Failover {
        Failover {
            phase: Phase::WaitForSync,
            target: target.map(|(h, p)| (h.to_string(), p)),
            end_ms,
            force,
        }
    }

    #[test]
    fn the_named_target_goes_once_it_caught_up() {
        let f = waiting(Some(("127.0.0.1", 7001)), 0, false);
        let behind = [
            replica("127.0.0.1", 7001, 90),
            replica("127.0.0.1", 7002, 100),
        ];
        assert_eq!(
            step(&f, 5, 100, &behind),
            Step::Wait,
            "another replica does not count"
        );
        let caught = [replica("127.0.0.1", 7001, 100)];
        assert_eq!(
            step(&f, 5, 100, &caught),
            Step::Go {
                host: "127.0.0.1".into(),
                port: 7001,
                forced: false
            }
        );
    }

    #[test]
    fn any_replica_means_the_first_that_caught_up() {
        let f = waiting(None, 0, false);
        let rs = [replica("10.0.0.1", 1, 50), replica("10.0.0.2", 2, 100)];
        assert_eq!(
            step(&f, 0, 100, &rs),
            Step::Go {
                host: "10.0.0.2".into(),
                port: 2,
                forced: false
            }
        );
        assert_eq!(step(&f, 0, 101, &rs), Step::Wait);
    }

    #[test]
    fn the_timeout_aborts_unless_forced() {
        let rs = [replica("h", 1, 10)];
        let f = waiting(Some(("h", 1)), 100, false);
        assert_eq!(step(&f, 99, 20, &rs), Step::Wait);
        assert_eq!(
            step(&f, 100, 20, &rs),
            Step::Abort("Replica never caught up before timeout")
        );
        let forced = waiting(Some(("h", 1)), 100, true);
        assert_eq!(
            step(&forced, 100, 20, &rs),
            Step::Go {
                host: "h".into(),
                port: 1,
                forced: true
            }
        );
    }
}
