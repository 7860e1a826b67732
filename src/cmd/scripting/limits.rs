//! The time limit of a running script (`busy-reply-threshold`, alias
//! `lua-time-limit`), SCRIPT KILL and FUNCTION KILL.
//!
//! A Lua count hook runs every [`CHECK_EVERY`] VM instructions. Once the
//! script has run past the threshold it counts itself busy in the server's
//! script state (`exec::scripts`): from then on, clients on the other
//! shards get `BUSY` for anything but the commands Redis allows a busy
//! server (SCRIPT KILL, SHUTDOWN NOSAVE, ...), and SCRIPT KILL (FUNCTION
//! KILL for a function) may stop it. At each check past the threshold the
//! hook also lets its own shard's loop make one busy pass
//! (`exec::busy`): the clients of the script's own shard get the same
//! answers, so with `--shards 1` a client can still kill it. The hook
//! raises the kill as an error in the script, unless the script already
//! wrote (then the kill answers UNKILLABLE and it runs on).

use std::cell::{Cell, RefCell};
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
/// BUSY while the busy script is a function (Redis's `slowscripterr`).
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// A running script's watch: counted busy once past the threshold.
///
/// The count hook is installed once per VM ([`install`]) and finds the
/// running script's watch in a thread local: mlua keeps each hook it is
/// given in a Lua userdata with a finalizer, so a hook set per run cost a
/// userdata for the collector to finalize on every run.
pub struct Watch;

/// What the hook knows of the script running on this thread.
struct Running {
    shared: Arc<Shared>,
    started: Instant,
    wrote: Rc<Cell<bool>>,
    /// Counted busy in the server's script state.
    busy: bool,
    /// Said once it turns busy (taken then).
    script: Option<Script>,
    /// SCRIPT KILL (or `widen`) stopped it: an every-line hook raising the
    /// error is set in place of the VM's own.
    killed: bool,
}

thread_local! {
    static RUNNING: RefCell<Option<Running>> = const { RefCell::new(None) };
}

/// What the watch says of its script once it is busy (FUNCTION STATS).
pub struct Script {
    /// FCALL's function (not EVAL's script).
    pub function: bool,
    pub name: String,
    pub command: Vec<bytes::Bytes>,
}

/// Installs the VM's count hook (at creation, and again after anything
/// that replaced it: FUNCTION LOAD's own, a kill's every-line one).
pub fn install(lua: &Lua) {
    let _ = lua.set_hook(
        HookTriggers::new().every_nth_instruction(CHECK_EVERY),
        |lua, _| {
            RUNNING.with(|cell| match cell.try_borrow_mut() {
                Ok(mut running) => match running.as_mut() {
                    Some(running) => check(lua, running),
                    None => Ok(VmState::Continue),
                },
                Err(_) => Ok(VmState::Continue),
            })
        },
    );
}

/// The hook's check of `running`, every [`CHECK_EVERY`] instructions.
fn check(lua: &Lua, running: &mut Running) -> mlua::Result<VmState> {
    let shared = Arc::clone(&running.shared);
    let scripts = &shared.scripts;
    if !running.busy {
        let limit = shared.config.busy_reply_threshold_ms();
        if running.started.elapsed().as_millis() < limit as u128 {
            return Ok(VmState::Continue);
        }
        running.busy = true;
        if let Some(script) = running.script.take() {
            turn_busy(&shared, script, running.started);
        }
    }
    let wrote = running.wrote.get();
    if wrote {
        scripts.busy_wrote.store(true, Ordering::Release);
    }
    // This shard's clients: BUSY, or SCRIPT KILL and the like.
    crate::exec::busy::pass(&shared);
    if !wrote && scripts.kill.load(Ordering::Acquire) {
        // As Redis: from now on the error is raised at every line, so a
        // pcall in the script cannot swallow it for good (the line outside
        // the pcall raises it too).
        log::warn!("Lua script killed by user with SCRIPT KILL.");
        running.killed = true;
        set_line_hook(lua, KILLED.to_string());
        return Err(super::vm::raise(KILLED.to_string()));
    }
    Ok(VmState::Continue)
}

fn set_line_hook(lua: &Lua, text: String) {
    let _ = lua.set_hook(HookTriggers::EVERY_LINE, move |_, _| {
        Err(super::vm::raise(text.clone()))
    });
}

/// Raises `text` in the running script at every line from now on (so a
/// pcall cannot swallow it for good); the VM's own hook comes back when
/// the script ends.
pub fn raise_at_every_line(lua: &Lua, text: String) {
    RUNNING.with(|cell| {
        if let Ok(mut running) = cell.try_borrow_mut() {
            if let Some(running) = running.as_mut() {
                running.killed = true;
            }
        }
    });
    set_line_hook(lua, text);
}

impl Watch {
    /// Watches `script` from now on; `wrote` says whether it has written
    /// yet.
    pub fn start(shared: &Arc<Shared>, wrote: Rc<Cell<bool>>, script: Script) -> Watch {
        RUNNING.with(|cell| {
            if let Ok(mut running) = cell.try_borrow_mut() {
                *running = Some(Running {
                    shared: Arc::clone(shared),
                    started: Instant::now(),
                    wrote,
                    busy: false,
                    script: Some(script),
                    killed: false,
                });
            }
        });
        Watch
    }

    /// The script ended: it stops counting busy, and a kill's hook gives
    /// way to the VM's own again.
    pub fn stop(self, lua: &Lua) {
        let running = RUNNING.with(|cell| cell.try_borrow_mut().ok().and_then(|mut r| r.take()));
        let Some(running) = running else {
            return;
        };
        if running.killed {
            install(lua);
        }
        if running.busy {
            let scripts = &running.shared.scripts;
            if scripts.busy.fetch_sub(1, Ordering::AcqRel) == 1 {
                scripts.kill.store(false, Ordering::Release);
                scripts.busy_wrote.store(false, Ordering::Release);
                if let Ok(mut running) = scripts.running.lock() {
                    *running = None;
                }
            }
        }
    }
}

/// The script has run past the threshold: it counts busy, and says what
/// it is (for FUNCTION STATS and the BUSY texts), as Redis logs it.
fn turn_busy(shared: &Shared, script: Script, started: Instant) {
    let scripts = &shared.scripts;
    log::warn!(
        "Slow script detected: still in execution after {} milliseconds. You can try killing the script using the {} command. Script name is: {}.",
        started.elapsed().as_millis(),
        if script.function { "FUNCTION KILL" } else { "SCRIPT KILL" },
        script.name
    );
    if let Ok(mut running) = scripts.running.lock() {
        *running = Some(crate::exec::scripts::Running {
            name: script.name,
            command: script.command,
            started,
        });
    }
    scripts
        .busy_function
        .store(script.function, Ordering::Release);
    scripts.busy.fetch_add(1, Ordering::AcqRel);
}

/// The BUSY reply for the script running now (EVAL's or FCALL's text).
pub fn busy_text(shared: &Shared) -> &'static str {
    if shared.scripts.busy_function.load(Ordering::Acquire) {
        BUSY_FUNCTION
    } else {
        BUSY
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

/// SCRIPT KILL (`eval`) or FUNCTION KILL: asks the busy script to stop,
/// with Redis's refusals in Redis's order (a script that wrote, then a
/// function for SCRIPT KILL or a script for FUNCTION KILL).
pub fn kill(shared: &Shared, eval: bool) -> &'static str {
    let scripts = &shared.scripts;
    if scripts.busy.load(Ordering::Acquire) == 0 {
        return NOTBUSY;
    }
    if scripts.busy_wrote.load(Ordering::Acquire) {
        return UNKILLABLE;
    }
    let function = scripts.busy_function.load(Ordering::Acquire);
    if eval && function {
        return BUSY_FUNCTION;
    }
    if !eval && !function {
        return BUSY;
    }
    scripts.kill.store(true, Ordering::Release);
    "OK"
}
