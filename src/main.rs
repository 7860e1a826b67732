//! The `ember` binary: command line to config to server; no logic here.

use clap::Parser;

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let flags = ember::config::Flags::parse();
    let config = match ember::config::Config::load(&flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    ember::logging::init(&config.loglevel);
    // Return freed memory to the OS from jemalloc's own thread, as Redis does
    // (`jemalloc-bg-thread yes`): purging inside a shard thread stalls its
    // clients for milliseconds after a storm frees gigabytes.
    if let Err(e) = tikv_jemalloc_ctl::background_thread::write(true) {
        log::warn!("could not start jemalloc's background thread: {e}");
    }
    if let Err(e) = ember::run(config) {
        log::error!("{e}");
        eprintln!("{e}");
        std::process::exit(1);
    }
}
