//! One module under measurement: loaded as `run` loads it, evaluated once
//! for reference, then once per round, each reply checked against the first.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use crate::cli::RunArgs;
use crate::commands::bench::answer::{Answer, policy_response};
use crate::commands::bench::stats::{Stats, nanos};
use crate::commands::load::{Loaded, load};
use crate::host::policy::Policy;
use crate::host::request::AdmissionRequest;

/// How evaluations get their instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Shape {
    /// A new instance per evaluation (policy-server).
    Fresh,
    /// One instance for every evaluation (`kwctl bench`).
    Warm,
}

/// What every module in one bench run is given.
pub struct Inputs<'a> {
    /// How to host every module (context-aware access, replay session,
    /// field masks).
    pub run: &'a RunArgs,
    /// The settings every module must accept.
    pub settings: &'a Value,
    /// The `validate` payload, serialised once.
    pub payload: &'a [u8],
    /// The request, for the host's handling of each reply.
    pub request: &'a AdmissionRequest,
    /// How evaluations get their instance.
    pub shape: Shape,
}

/// One module's measurement.
#[derive(Debug, Serialize)]
pub struct Measurement {
    /// The module's path.
    pub module: String,
    /// Its timed evaluations.
    pub stats: Stats,
    /// What it answered.
    pub answer: Answer,
    /// On a reused instance: its memory after the first and after the last
    /// evaluation, which must be equal (no growth across evaluations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<MemoryGrowth>,
}

/// A reused instance's linear memory, in bytes.
#[derive(Debug, Serialize)]
pub struct MemoryGrowth {
    /// After the first evaluation.
    pub after_first: usize,
    /// After the last.
    pub after_last: usize,
}

/// One module under measurement: its compiled form, its warm instance (in
/// the warm shape), its first reply and the timings so far.
pub struct Subject {
    /// The module's path.
    pub module: String,
    loaded: Loaded,
    warm: Option<Policy>,
    memory_after_first: Option<usize>,
    first: Vec<u8>,
    /// What its first evaluation answered.
    pub answer: Answer,
    samples: Vec<u64>,
}

impl Subject {
    /// Compiles the module at `path`, has it accept the settings, and makes
    /// the untimed reference evaluation, whose reply every later one must
    /// repeat byte for byte.
    pub fn load(path: &Path, inputs: &Inputs<'_>) -> Result<Subject> {
        let (loaded, settings_instance) = load(path, inputs.run, inputs.settings)?;
        let warm = (inputs.shape == Shape::Warm).then_some(settings_instance);
        let (first, _) = evaluate_once(&loaded, warm.as_ref(), inputs)
            .with_context(|| format!("the first evaluation of {} failed", path.display()))?;
        loaded.warn_denied_lookups();
        let (lookups, unreplayed, failure) = {
            let host = loaded.host();
            let failure = host.replay_failure().map(str::to_owned);
            (host.replayed(), host.unreplayed(), failure)
        };
        if let Some(failure) = failure {
            bail!(
                "the first evaluation of {} made a look-up the replay session does not \
                 answer: {failure}",
                path.display()
            );
        }
        let answer = Answer::new(&first, inputs.request, lookups, unreplayed)?;
        Ok(Subject {
            module: path.display().to_string(),
            loaded,
            memory_after_first: warm.as_ref().map(Policy::memory_bytes),
            warm,
            first,
            answer,
            samples: Vec::new(),
        })
    }

    /// One evaluation; its duration is kept when `keep` (after the warm-up).
    pub fn evaluate(&mut self, inputs: &Inputs<'_>, round: u32, keep: bool) -> Result<()> {
        let (reply, elapsed) = evaluate_once(&self.loaded, self.warm.as_ref(), inputs)
            .with_context(|| format!("evaluation {round} of {} failed", self.module))?;
        if reply != self.first {
            bail!(
                "non-deterministic policy {}: evaluation {round} answered differently from the \
                 first one\nfirst: {}\nnow:   {}",
                self.module,
                String::from_utf8_lossy(&self.first),
                String::from_utf8_lossy(&reply)
            );
        }
        if keep {
            self.samples.push(elapsed);
        }
        Ok(())
    }

    /// The reply every evaluation gave.
    pub fn reply(&self) -> &[u8] {
        &self.first
    }

    /// The measurement, once every round has run.
    pub fn finish(self) -> Measurement {
        let memory_bytes = self.warm.as_ref().zip(self.memory_after_first);
        Measurement {
            module: self.module,
            stats: Stats::from_samples(self.samples),
            answer: self.answer,
            memory_bytes: memory_bytes.map(|(warm, after_first)| MemoryGrowth {
                after_first,
                after_last: warm.memory_bytes(),
            }),
        }
    }
}

/// One evaluation on `warm`, or on a fresh instance of `loaded` when there
/// is none, after rewinding the replay session; returns the guest's reply
/// and the timed duration in nanoseconds.
fn evaluate_once(
    loaded: &Loaded,
    warm: Option<&Policy>,
    inputs: &Inputs<'_>,
) -> Result<(Vec<u8>, u64)> {
    loaded.host().rewind_replay();
    let start = Instant::now();
    let reply = {
        let fresh;
        let instance = match warm {
            Some(instance) => instance,
            None => {
                fresh = loaded.instantiate()?;
                &fresh
            }
        };
        let reply = instance.call_validate(inputs.payload)?;
        // The host's side of every request: decode the reply and, for a
        // mutation, diff the object into a JSONPatch.
        let response = policy_response(&reply)?;
        std::hint::black_box(inputs.request.respond(response));
        reply
        // a fresh instance is dropped here, inside the timed span, as
        // policy-server drops it after each request
    };
    let elapsed = nanos(start.elapsed());
    Ok((reply, elapsed))
}
