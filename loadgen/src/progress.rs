//! Progress display: an `indicatif` line on a terminal, plain lines (one per
//! second, on stderr) otherwise, or nothing.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

pub struct Progress {
    label: String,
    mode: Mode,
    bar: Option<ProgressBar>,
    last_plain: Option<Instant>,
    by_time: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Off,
    Bar,
    Plain,
}

impl Progress {
    /// A display chosen from whether stderr is a terminal.
    pub fn auto(label: &str) -> Progress {
        let mode = if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Plain
        };
        Progress {
            label: label.to_string(),
            mode,
            bar: None,
            last_plain: None,
            by_time: false,
        }
    }

    pub fn off() -> Progress {
        Progress {
            label: String::new(),
            mode: Mode::Off,
            bar: None,
            last_plain: None,
            by_time: false,
        }
    }

    pub fn start(&mut self, total_requests: Option<u64>, duration: Option<Duration>) {
        if self.mode != Mode::Bar {
            return;
        }
        self.by_time = duration.is_some();
        let bar = match (total_requests, duration) {
            (Some(n), None) => ProgressBar::new(n),
            (_, Some(d)) => ProgressBar::new(d.as_secs().max(1)),
            _ => ProgressBar::new_spinner(),
        };
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
        let tmpl = "{prefix} [{elapsed_precise}] {wide_bar} {msg}";
        bar.set_style(
            ProgressStyle::with_template(tmpl).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(self.label.clone());
        self.bar = Some(bar);
    }

    /// `recent_ops` and `recent_p99_us` cover the last second of windows.
    pub fn tick(&mut self, done: u64, elapsed: Duration, recent_ops: u64, recent_p99_us: u64) {
        let msg = format!(
            "{done} ops, {recent_ops} ops/sec, p99 {:.3} ms",
            recent_p99_us as f64 / 1000.0
        );
        match self.mode {
            Mode::Off => {}
            Mode::Bar => {
                if let Some(b) = &self.bar {
                    b.set_position(if self.by_time {
                        elapsed.as_secs()
                    } else {
                        done
                    });
                    b.set_message(msg);
                }
            }
            Mode::Plain => {
                let now = Instant::now();
                if self
                    .last_plain
                    .is_none_or(|t| now - t >= Duration::from_secs(1))
                {
                    self.last_plain = Some(now);
                    eprintln!("[{} {:>6.1}s] {msg}", self.label, elapsed.as_secs_f64());
                }
            }
        }
    }

    /// A free-form status line (callers rate-limit it).
    pub fn note(&mut self, msg: String) {
        match self.mode {
            Mode::Off => {}
            Mode::Bar => {
                if let Some(b) = &self.bar {
                    b.set_message(msg);
                    b.tick();
                }
            }
            Mode::Plain => eprintln!("[{}] {msg}", self.label),
        }
    }

    pub fn finish(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}
