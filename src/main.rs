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
    ember::logging::init(config.loglevel());
    if let Err(e) = ember::run(config) {
        log::error!("{e}");
        eprintln!("{e}");
        std::process::exit(1);
    }
}
