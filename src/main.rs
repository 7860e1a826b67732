//! The `ember` binary: command line to config to server; no logic here.

#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let flags = ember::config::Flags::parse_redis_style(std::env::args());
    let config = match ember::config::Config::load(&flags) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    ember::logging::init(&config.loglevel);
    if let Err(e) = ember::run(config) {
        log::error!("{e}");
        eprintln!("{e}");
        std::process::exit(1);
    }
}
