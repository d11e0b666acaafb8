//! How far a `--fix` run is, on stderr: a bar redrawn in place on a
//! terminal (objects done of total, in line, left to do, time left), one
//! plain line per object otherwise (a CI log, a pipe).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use super::fix::{Done, Left};

pub(super) struct Progress {
    total: usize,
    done: usize,
    in_line: usize,
    left: usize,
    started: Instant,
    terminal: bool,
}

impl Progress {
    pub(super) fn new(total: usize) -> Progress {
        Progress {
            total,
            done: 0,
            in_line: 0,
            left: 0,
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
        }
    }

    /// `more` objects to write: children of `parent` that deviate from
    /// what admission just wrote on it, said on a line of their own so the
    /// total that grows is explained.
    pub(super) fn grow(&mut self, parent: &str, more: usize) {
        if more == 0 {
            return;
        }
        self.total += more;
        let mut err = std::io::stderr().lock();
        if self.terminal {
            let _ = write!(err, "\r\x1b[2K");
        }
        let _ = writeln!(
            err,
            "fix: {more} more to write: {} of {parent} deviate from it as admission wrote it",
            if more == 1 { "a child" } else { "children" }
        );
    }

    pub(super) fn record(&mut self, done: &Done) {
        self.done += 1;
        match done.outcome.left() {
            Left::Nothing => self.in_line += 1,
            Left::Person | Left::RunAgain => self.left += 1,
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
            "[{}{}] {}/{} in line {}, left {}, about {} s left",
            "#".repeat(filled),
            ".".repeat(WIDTH - filled),
            self.done,
            self.total,
            self.in_line,
            self.left,
            left.as_secs()
        )
    }
}

/// How far the listing is, on stderr: per kind, the objects listed and
/// judged and the time so far, redrawn in place on a terminal; one plain
/// line per kind listed otherwise.
pub(super) struct Listing {
    started: Instant,
    terminal: bool,
    listed: usize,
    judged: usize,
}

impl Listing {
    pub(super) fn new() -> Listing {
        Listing {
            started: Instant::now(),
            terminal: std::io::stderr().is_terminal(),
            listed: 0,
            judged: 0,
        }
    }

    /// A page of `kind` arrived: `listed` objects, `judged` of them judged
    /// by at least one policy.
    pub(super) fn page(&mut self, kind: &str, listed: usize, judged: usize) {
        self.listed += listed;
        self.judged += judged;
        if self.terminal {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{}", self.line(kind));
            let _ = err.flush();
        }
    }

    /// `kind` is listed to its end.
    pub(super) fn kind_done(&mut self, kind: &str) {
        let mut err = std::io::stderr().lock();
        let _ = match self.terminal {
            true => write!(err, "\r\x1b[2K"),
            false => writeln!(err, "{}", self.line(kind)),
        };
        let _ = err.flush();
    }

    fn line(&self, kind: &str) -> String {
        format!(
            "audit: {kind}: {} listed, {} judged in all, {} s",
            self.listed,
            self.judged,
            self.started.elapsed().as_secs()
        )
    }
}
