//! SIGINT and SIGTERM. A Job's pod gets SIGTERM at its deadline, on an
//! eviction or a node drain, and a CI job on its timeout; a person presses
//! Ctrl-C. The first signal stops the run after the request in flight
//! (never inside a write: a request is answered, then nothing more is
//! sent), and the report is printed, with the exit code that says to run
//! again. A second one ends the run at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use anyhow::{Context, Result};
use tokio::runtime::Runtime;
use tokio::signal::unix::{SignalKind, signal};

/// The signal received first, if any.
#[derive(Default)]
pub(super) struct Stop {
    /// 0: none; else the signal's number.
    signal: AtomicU8,
}

const SIGINT: u8 = 2;
const SIGTERM: u8 = 15;

impl Stop {
    /// Watches both signals on `runtime` from now on; `exit_code` ends the
    /// run when a second one comes.
    pub(super) fn watch(runtime: &Runtime, exit_code: u8) -> Result<Arc<Stop>> {
        let stop = Arc::new(Stop::default());
        let (mut terminate, mut interrupt) = runtime.block_on(async {
            let terminate = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
            let interrupt = signal(SignalKind::interrupt()).context("cannot watch SIGINT")?;
            anyhow::Ok((terminate, interrupt))
        })?;
        let watching = Arc::clone(&stop);
        runtime.spawn(async move {
            loop {
                let number = tokio::select! {
                    _ = terminate.recv() => SIGTERM,
                    _ = interrupt.recv() => SIGINT,
                };
                let first = watching
                    .signal
                    .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok();
                if first {
                    eprintln!(
                        "\ninterrupted ({}): stopping after the request in flight, then printing \
                         the report; a second signal stops at once",
                        name(number)
                    );
                } else {
                    eprintln!(
                        "\ninterrupted again ({}): stopping at once, without the report; no write \
                         was in flight or it is as the API server answered it",
                        name(number)
                    );
                    std::process::exit(i32::from(exit_code));
                }
            }
        });
        Ok(stop)
    }

    /// The signal that asked the run to stop, if one did.
    pub(super) fn requested(&self) -> Option<&'static str> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            number => Some(name(number)),
        }
    }
}

fn name(number: u8) -> &'static str {
    match number {
        SIGTERM => "SIGTERM",
        _ => "SIGINT",
    }
}
