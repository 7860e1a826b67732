//! A small stderr logger with Redis's level names (debug, verbose, notice,
//! warning), changeable at run time through CONFIG SET loglevel. With
//! `always-show-logo` it writes to standard output instead, where
//! redis-server's log goes (and where Redis's test suite reads it); with
//! `logfile` it appends to that file, opened for each line as Redis opens
//! it (so a rotated file is picked up at the next line).

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

/// The log goes to standard output rather than standard error.
static TO_STDOUT: AtomicBool = AtomicBool::new(false);

/// `logfile`, when one is set (fixed at start-up, as in Redis).
static FILE: OnceLock<std::path::PathBuf> = OnceLock::new();

/// Sends the log to standard output (`true`) or standard error.
pub fn use_stdout(on: bool) {
    TO_STDOUT.store(on, Relaxed);
}

/// Sends the log to the end of `path` from now on.
pub fn use_file(path: &str) {
    let _ = FILE.set(path.into());
}

/// Writes `text` as it is where the log goes (the start-up banner).
pub fn raw(text: &str) {
    if let Some(path) = FILE.get() {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
        if let Ok(mut file) = file {
            let _ = file.write_all(text.as_bytes());
        }
    } else if TO_STDOUT.load(Relaxed) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    } else {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// redis-server's banner under `always-show-logo`: its PID on a line of
/// its own. Printed once the listeners are bound and before the data is
/// loaded, where redis-server prints it: whoever waits for the line (Redis's
/// test suite) may connect at once and is answered, `-LOADING` meanwhile.
pub fn banner(port: u16) {
    if TO_STDOUT.load(Relaxed) {
        raw(&format!(
            "ember {} (Redis 7.0.15 compatible)\n Port: {port}\n PID: {}\n\n",
            env!("CARGO_PKG_VERSION"),
            std::process::id()
        ));
    }
}

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
        let line = format!(
            "{}:{} {}.{:03} {mark} {}\n",
            std::process::id(),
            thread.name().unwrap_or("main"),
            now.as_secs(),
            now.subsec_millis(),
            record.args()
        );
        raw(&line);
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
