//! The `ember` binary: command line to config to server; no logic here.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

use ember::config::{Flags, Live, Startup};

fn main() {
    // A background save's process (`persist::child`) is this binary too.
    if std::env::args().nth(1).as_deref() == Some(ember::persist::child::FLAG) {
        std::process::exit(ember::persist::child::run(&mut std::io::stdin().lock()));
    }
    let flags = match Flags::parse(std::env::args()) {
        Startup::Run(flags) => flags,
        Startup::Print(text) => {
            println!("{text}");
            return;
        }
    };
    let config = match Live::load(&flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if config.daemonize() && std::env::var_os(DAEMONIZED).is_none() {
        daemonize();
    }
    ember::logging::init(config.loglevel());
    if let Err(e) = ember::run(config) {
        log::error!("{e}");
        eprintln!("{e}");
        std::process::exit(1);
    }
}

/// Set in the environment of the copy `daemonize` starts, so it runs.
const DAEMONIZED: &str = "EMBER_DAEMONIZED";

/// `daemonize yes`: starts this program again with the same arguments,
/// detached (no terminal: its standard streams go nowhere, and its own
/// process group, so the terminal's signals miss it), and exits. This is
/// redis-server's fork and setsid done without forking a process that is
/// about to start threads; the copy writes the pid file, so a supervisor
/// reads the right pid.
fn daemonize() -> ! {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let mut args = std::env::args_os();
    let program = std::env::current_exe()
        .ok()
        .or_else(|| args.next().map(Into::into))
        .expect("the program's path");
    let started = Command::new(program)
        .args(std::env::args_os().skip(1))
        .env(DAEMONIZED, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        Ok(_) => std::process::exit(0),
        Err(e) => {
            eprintln!("Failed to daemonize: {e}");
            std::process::exit(1);
        }
    }
}
