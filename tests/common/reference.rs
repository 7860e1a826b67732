//! The reference server: a real redis-server on a free port, for the tests
//! where ember and Redis must agree (replies, DUMP payloads, the AOF).
//! Where redis-server is not installed the test says so and is skipped
//! (`.ci/run` installs it, so CI always compares).

use std::ffi::OsStr;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::free_port;

/// A redis-server, killed when dropped.
pub struct Redis {
    child: Child,
    pub port: u16,
}

impl Redis {
    /// A redis-server without persistence, plus `extra` arguments (they
    /// come last, so they may turn it back on); None when none is installed
    /// or it does not answer within 10 s.
    pub fn start<S: AsRef<OsStr>>(extra: &[S]) -> Option<Redis> {
        let port = free_port();
        let child = Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let redis = Redis { child, port };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(redis);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// [`Redis::start`] with no extra arguments, saying that `test` is
    /// skipped when there is no redis-server.
    pub fn or_skip(test: &str) -> Option<Redis> {
        let redis = Redis::start::<&str>(&[]);
        if redis.is_none() {
            eprintln!(
                "redis-server is not installed or did not start: {test} skipped (CI installs it)"
            );
        }
        redis
    }

    /// Whether redis-server is installed (for tests that run the program
    /// itself rather than talk to a server).
    pub fn installed() -> bool {
        Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Kills it now (dropping it does too).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}
