//! A small stderr logger with Redis's level names (debug, verbose, notice,
//! warning), changeable at run time through CONFIG SET loglevel.

use std::io::Write;

use log::{Level, LevelFilter, Log, Metadata, Record};

struct StderrLogger;

static LOGGER: StderrLogger = StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &Record) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let mark = match record.level() {
            Level::Error | Level::Warn => '#',
            Level::Info => '*',
            Level::Debug => '-',
            Level::Trace => '.',
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let thread = std::thread::current();
        let _ = writeln!(
            std::io::stderr().lock(),
            "{}:{} {}.{:03} {mark} {}",
            std::process::id(),
            thread.name().unwrap_or("main"),
            now.as_secs(),
            now.subsec_millis(),
            record.args()
        );
    }

    fn flush(&self) {}
}

/// Installs the logger (once) at `level`.
pub fn init(level: &str) {
    let _ = log::set_logger(&LOGGER);
    set_level(level);
}

/// Maps Redis's level names onto `log`'s filter.
pub fn set_level(level: &str) {
    log::set_max_level(match level {
        "debug" => LevelFilter::Debug,
        "verbose" | "notice" => LevelFilter::Info,
        _ => LevelFilter::Warn,
    });
}
