//! The time limit of a running script (`busy-reply-threshold`, alias
//! `lua-time-limit`) and SCRIPT KILL.
//!
//! A Lua count hook runs every [`CHECK_EVERY`] VM instructions. Once the
//! script has run past the threshold it counts itself busy in the server's
//! script state (`exec::scripts`): from then on, clients on the other
//! shards get `BUSY` for anything but the commands Redis allows a busy
//! server (SCRIPT KILL, SHUTDOWN NOSAVE, ...), and SCRIPT KILL may stop it.
//! The hook raises the kill as an error in the script, unless the script
//! already wrote (then SCRIPT KILL answers UNKILLABLE and it runs on).
//!
//! The shard running the script cannot read its own sockets meanwhile: its
//! clients wait, as every client of a single-threaded Redis waits, but they
//! get no BUSY reply and cannot send SCRIPT KILL through that shard (with
//! `--shards 1`, no client can); a connection on another shard can.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use mlua::{HookTriggers, Lua, VmState};

use crate::cmd::CommandSpec;
use crate::exec::Shared;

/// VM instructions between two checks: a check is a clock read, and
/// 100k instructions take well under a millisecond.
pub const CHECK_EVERY: u32 = 100_000;

pub const BUSY: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// A running script's watch: counted busy once past the threshold.
pub struct Watch {
    shared: Arc<Shared>,
    busy: Rc<Cell<bool>>,
}

impl Watch {
    /// Installs the hook for a script starting now; `wrote` says whether
    /// it has written yet.
    pub fn start(lua: &Lua, shared: &Arc<Shared>, wrote: Rc<Cell<bool>>) -> Watch {
        let busy = Rc::new(Cell::new(false));
        let started = Instant::now();
        let hook_shared = Arc::clone(shared);
        let hook_busy = Rc::clone(&busy);
        let _ = lua.set_hook(
            HookTriggers::new().every_nth_instruction(CHECK_EVERY),
            move |_, _| {
                let scripts = &hook_shared.scripts;
                if !hook_busy.get() {
                    let limit = hook_shared.config.busy_reply_threshold_ms();
                    if started.elapsed().as_millis() < limit as u128 {
                        return Ok(VmState::Continue);
                    }
                    hook_busy.set(true);
                    scripts.busy.fetch_add(1, Ordering::AcqRel);
                }
                if wrote.get() {
                    scripts.busy_wrote.store(true, Ordering::Release);
                } else if scripts.kill.load(Ordering::Acquire) {
                    // Raised again at every check, so a pcall in the
                    // script cannot swallow it for good.
                    return Err(super::vm::raise(KILLED.to_string()));
                }
                Ok(VmState::Continue)
            },
        );
        Watch {
            shared: Arc::clone(shared),
            busy,
        }
    }

    /// The script ended: the hook goes, and it stops counting busy.
    pub fn stop(self, lua: &Lua) {
        lua.remove_hook();
        if self.busy.get() {
            let scripts = &self.shared.scripts;
            if scripts.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
                scripts.kill.store(false, Ordering::Release);
                scripts.busy_wrote.store(false, Ordering::Release);
            }
        }
    }
}

/// Whether `argv` may run while a script is busy: the commands Redis flags
/// `allow_busy` (for a container, its subcommand's flag).
pub fn allowed_when_busy(spec: &CommandSpec, argv: &[bytes::Bytes]) -> bool {
    use crate::cmd::CommandFlags;
    let flags = match argv.get(1).filter(|_| spec.container) {
        Some(sub) => spec.meta.subcommand(sub).map_or(spec.flags, |m| m.flags),
        None => spec.flags,
    };
    flags.contains(CommandFlags::ALLOW_BUSY)
}

/// SCRIPT KILL: asks the busy script to stop.
pub fn kill(shared: &Shared) -> &'static str {
    let scripts = &shared.scripts;
    if scripts.busy.load(Ordering::Acquire) == 0 {
        return NOTBUSY;
    }
    if scripts.busy_wrote.load(Ordering::Acquire) {
        return UNKILLABLE;
    }
    scripts.kill.store(true, Ordering::Release);
    "OK"
}
