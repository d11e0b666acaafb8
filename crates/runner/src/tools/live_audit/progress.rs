//! How far a `--fix` run is, on stderr: a bar redrawn in place on a
//! terminal (objects done of total, fixed, failed, time left), one plain
//! line per object otherwise (a CI log, a pipe).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::fix::Done;

pub(super) struct Progress {
    total: usize,
    done: usize,
    fixed: usize,
    failed: usize,
    started: Instant,
    terminal: bool,
}

impl Progress {
    pub(super) fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            fixed: 0,
            failed: 0,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// One more object to write (a child that deviates once its parent
    /// is written).
    pub(super) fn grow(&mut self) {
        self.total += 1;
    }

    pub(super) fn record(&mut self, done: &Done) {
        self.done += 1;
        if done.outcome.succeeded() {
            self.fixed += 1;
        } else {
            self.failed += 1;
        }
        let mut err = std::io::stderr().lock();
        let _ = if self.terminal {
            write!(err, "\r\x1b[2K{}", self.bar())
        } else {
            writeln!(
                err,
                "fix {}/{}: {} {}",
                self.done, self.total, done.outcome, done.id
            )
        };
        let _ = err.flush();
    }

    /// Ends the bar's line.
    pub(super) fn finish(&self) {
        if self.terminal && self.done > 0 {
            eprintln!();
        }
    }

    fn bar(&self) -> String {
        const WIDTH: usize = 30;
        let filled = WIDTH * self.done / self.total.max(1);
        let left = match self.done {
            0 => Duration::ZERO,
            done => self.started.elapsed() / done as u32 * (self.total - done) as u32,
        };
        format!(
            "[{}{}] {}/{} fixed {} failed {}, about {} s left",
            "#".repeat(filled),
            ".".repeat(WIDTH - filled),
            self.done,
            self.total,
            self.fixed,
            self.failed,
            left.as_secs()
        )
    }
}
