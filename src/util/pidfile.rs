//! `pidfile`: the process id written at start-up and removed at shutdown,
//! as redis-server does (supervisors and init scripts read it).

use std::sync::OnceLock;

/// The file written, once it is.
static WRITTEN: OnceLock<String> = OnceLock::new();

/// Writes this process's id and a newline to `path`; a failure is logged
/// and start-up goes on, as in Redis.
pub fn write(path: &str) {
    match std::fs::write(path, format!("{}\n", std::process::id())) {
        Ok(()) => {
            let _ = WRITTEN.set(path.to_string());
        }
        Err(e) => log::warn!("Failed to write PID file: {e}"),
    }
}

/// Removes the file written at start-up, if any (before exiting).
pub fn remove() {
    if let Some(path) = WRITTEN.get() {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_then_removed() {
        let path = std::env::temp_dir().join(format!("ember-pid-{}", std::process::id()));
        let path = path.display().to_string();
        write(&path);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
        remove();
        assert!(std::fs::metadata(&path).is_err());
    }
}
