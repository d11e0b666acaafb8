//! `policy-runner bench`: what one admission request costs the host.
//!
//! Two shapes (shared/reference/kubewarden.md §8):
//!
//! - **fresh** (the default): every evaluation gets a new instance of the
//!   once-compiled module, as policy-server's `rehydrate` does per request.
//!   Timed: instantiation and `wapc_init`, the `validate` call with its host
//!   callbacks, the host's handling of the reply (decode, and the
//!   `json_patch::diff` of a mutated object against the request's), and
//!   dropping the instance. Nothing the guest keeps in memory survives.
//! - **warm** (`--reuse-instance`): every evaluation runs on the one instance
//!   that validated the settings, as `kwctl bench` does. Timed: the
//!   `validate` call and the host's handling of the reply.
//!
//! The settings are validated once, on the first instance, as policy-server
//! does when it loads a policy. The same request is evaluated `warmup` times
//! untimed and `iterations` times timed. Before every evaluation the replay
//! session is rewound, so each one makes the same look-ups and gets the same
//! answers; a look-up the session does not answer fails the benchmark. The
//! payload is serialised once beforehand. Every reply must be
//! byte-identical to the first; a policy whose answer drifts fails the
//! benchmark.
//!
//! Two floors can be measured in the same run and shape
//! (`--accept-floor`, `--echo-floor`): modules that decode the payload and
//! accept, or return the request's object unchanged as `mutated_object`.
//! The modules take turns, one evaluation each, so a burst of load on the
//! machine slows them alike. The report's ratio is the policy's median over
//! the echo floor's when the policy mutates, over the accept floor's
//! otherwise.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{BenchArgs, OutputFormat, RunArgs};
use crate::input::AdmissionRequest;
use crate::policy::{self, Policy};
use crate::response::{AdmissionResponse, PolicyResponse};
use crate::run::{self, Loaded};

/// Runs `args` and prints the report on stdout.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let request = run::read_request(&args.run.request_path)?;
    let settings = run::read_settings(&args.run.settings.source())?;
    let payload = policy::validate_payload(&request, &settings);
    let shape = if args.run.reuse_instance {
        Shape::Warm
    } else {
        Shape::Fresh
    };

    let inputs = Inputs {
        // Same hosting and session for the floors; they leave it unused.
        run: &args.run,
        settings: &settings,
        payload: &payload,
        request: &request,
        shape,
    };
    let mut subjects = vec![Subject::load(&args.run.policy, &inputs)?];
    for floor in [&args.accept_floor, &args.echo_floor].into_iter().flatten() {
        subjects.push(Subject::load(floor, &inputs)?);
    }
    if subjects[0].answer.unreplayed > 0 {
        eprintln!(
            "WARN policy-runner: {} of the recorded exchanges have not been replayed",
            subjects[0].answer.unreplayed
        );
    }
    for round in 1..=args.warmup + args.iterations {
        for subject in &mut subjects {
            subject.evaluate(&inputs, round, round > args.warmup)?;
        }
    }
    let mut measured = subjects.into_iter().map(Subject::finish);
    let policy = measured.next().expect("the policy is always measured");
    let accept_floor = args.accept_floor.as_ref().and_then(|_| measured.next());
    let echo_floor = args.echo_floor.as_ref().and_then(|_| measured.next());

    let mutates = policy.answer.mutated;
    let reference = if mutates { &echo_floor } else { &accept_floor };
    let report = Report {
        request: args.run.request_path.display().to_string(),
        instance: shape,
        warmup: args.warmup,
        iterations: args.iterations,
        payload_bytes: payload.len(),
        mutates,
        ratio: reference
            .as_ref()
            .map(|floor| policy.stats.median_us / floor.stats.median_us),
        ratio_to: reference.as_ref().map(|_| {
            if mutates {
                "echo floor"
            } else {
                "accept floor"
            }
        }),
        policy,
        accept_floor,
        echo_floor,
    };
    match args.output {
        OutputFormat::Text => print!("{}", report.text()),
        OutputFormat::Json => println!(
            "{}",
            serde_json::to_string(&report).expect("reports always serialise")
        ),
    }
    Ok(())
}

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
struct Inputs<'a> {
    run: &'a RunArgs,
    settings: &'a Value,
    payload: &'a [u8],
    request: &'a AdmissionRequest,
    shape: Shape,
}

/// One module's measurement.
#[derive(Debug, Serialize)]
struct Measurement {
    module: String,
    stats: Stats,
    answer: Answer,
}

/// What the module answered (identical on every evaluation).
#[derive(Debug, Serialize)]
struct Answer {
    accepted: bool,
    code: Option<u16>,
    mutated: bool,
    /// Operations in the JSONPatch the host built from the mutated object.
    patch_operations: usize,
    warnings: usize,
    audit_annotations: usize,
    /// Look-ups answered from the replay session per evaluation.
    lookups: usize,
    /// Recorded exchanges an evaluation left unused.
    unreplayed: usize,
    reply_bytes: usize,
}

impl Answer {
    /// The answer in `reply` to `request`, after `lookups` replayed
    /// exchanges with `unreplayed` left over.
    fn new(
        reply: &[u8],
        request: &AdmissionRequest,
        lookups: usize,
        unreplayed: usize,
    ) -> Result<Answer> {
        let response = policy_response(reply)?;
        let mutated = response.mutated_object.is_some();
        let admission = AdmissionResponse::from_policy(request.uid(), request.object(), response);
        let patch_operations = match &admission.patch {
            None => 0,
            Some(patch) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD.decode(patch)?;
                serde_json::from_slice::<Vec<Value>>(&bytes)?.len()
            }
        };
        Ok(Answer {
            accepted: admission.allowed,
            code: admission.status.and_then(|s| s.code),
            mutated,
            patch_operations,
            warnings: admission.warnings.map_or(0, |w| w.len()),
            audit_annotations: admission.audit_annotations.map_or(0, |a| a.len()),
            lookups,
            unreplayed,
            reply_bytes: reply.len(),
        })
    }

    fn summary(&self) -> String {
        let mut parts = vec![
            if self.accepted {
                "accepted"
            } else {
                "rejected"
            }
            .to_owned(),
        ];
        if let Some(code) = self.code {
            parts.push(format!("code {code}"));
        }
        if self.mutated {
            parts.push(format!(
                "mutated ({})",
                plural(self.patch_operations, "patch operation")
            ));
        }
        parts.push(plural(self.warnings, "warning"));
        parts.push(plural(self.audit_annotations, "audit annotation"));
        parts.push(plural(self.lookups, "look-up"));
        parts.push(format!("{} reply bytes", self.reply_bytes));
        parts.join(", ")
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

fn policy_response(reply: &[u8]) -> Result<PolicyResponse> {
    serde_json::from_slice(reply).with_context(|| {
        format!(
            "invalid response from policy: {}",
            String::from_utf8_lossy(reply)
        )
    })
}

/// One module under measurement: its compiled form, its warm instance (in
/// the warm shape), its first reply and the timings so far.
struct Subject {
    module: String,
    loaded: Loaded,
    warm: Option<Policy>,
    first: Vec<u8>,
    answer: Answer,
    samples: Vec<u64>,
}

impl Subject {
    /// Compiles the module at `path`, has it accept the settings, and makes
    /// the untimed reference evaluation, whose reply every later one must
    /// repeat byte for byte.
    fn load(path: &Path, inputs: &Inputs<'_>) -> Result<Subject> {
        let (loaded, settings_instance) = run::load(path, inputs.run, inputs.settings)?;
        let warm = (inputs.shape == Shape::Warm).then_some(settings_instance);
        let (first, _) = evaluate_once(&loaded, warm.as_ref(), inputs)
            .with_context(|| format!("the first evaluation of {} failed", path.display()))?;
        let (lookups, unreplayed, failure) = {
            let host = loaded.host.lock().unwrap_or_else(|p| p.into_inner());
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
            warm,
            first,
            answer,
            samples: Vec::new(),
        })
    }

    /// One evaluation; its duration is kept when `keep` (after the warm-up).
    fn evaluate(&mut self, inputs: &Inputs<'_>, round: u32, keep: bool) -> Result<()> {
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

    fn finish(self) -> Measurement {
        Measurement {
            module: self.module,
            stats: Stats::from_samples(self.samples),
            answer: self.answer,
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
    loaded
        .host
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .rewind_replay();
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
        std::hint::black_box(AdmissionResponse::from_policy(
            inputs.request.uid(),
            inputs.request.object(),
            response,
        ));
        reply
        // a fresh instance is dropped here, inside the timed span, as
        // policy-server drops it after each request
    };
    let elapsed = start.elapsed().as_nanos().try_into().unwrap_or(u64::MAX);
    Ok((reply, elapsed))
}

/// Summary of the timed evaluations, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Timed evaluations.
    pub samples: usize,
    /// Fastest.
    pub min_us: f64,
    /// Median (mean of the two middle samples for an even count).
    pub median_us: f64,
    /// 99th percentile (nearest rank).
    pub p99_us: f64,
    /// Arithmetic mean.
    pub mean_us: f64,
    /// Slowest.
    pub max_us: f64,
    /// Sequential evaluations per second: 1 / mean.
    pub evals_per_second: f64,
}

impl Stats {
    /// Summarises durations in nanoseconds; `samples` must not be empty.
    pub fn from_samples(mut samples: Vec<u64>) -> Stats {
        assert!(!samples.is_empty(), "no samples to summarise");
        samples.sort_unstable();
        let n = samples.len();
        let us = |ns: f64| ns / 1_000.0;
        let total: f64 = samples.iter().map(|&ns| ns as f64).sum();
        let mean = total / n as f64;
        Stats {
            samples: n,
            min_us: us(samples[0] as f64),
            median_us: us(median(&samples)),
            p99_us: us(percentile(&samples, 99.0) as f64),
            mean_us: us(mean),
            max_us: us(samples[n - 1] as f64),
            evals_per_second: if mean > 0.0 {
                1e9 / mean
            } else {
                f64::INFINITY
            },
        }
    }
}

/// Nearest-rank percentile of sorted, non-empty `samples`: the smallest
/// sample such that at least `p` % of the samples are at or below it.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median of sorted, non-empty `samples`.
pub fn median(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
    }
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    request: String,
    instance: Shape,
    warmup: u32,
    iterations: u32,
    payload_bytes: usize,
    /// Whether the policy returns a mutated object.
    mutates: bool,
    policy: Measurement,
    accept_floor: Option<Measurement>,
    echo_floor: Option<Measurement>,
    /// Median policy / median of the floor named by `ratio_to`.
    ratio: Option<f64>,
    /// `echo floor` when the policy mutates, `accept floor` otherwise.
    ratio_to: Option<&'static str>,
}

impl Report {
    fn text(&self) -> String {
        let shape = match self.instance {
            Shape::Fresh => "a fresh instance per evaluation",
            Shape::Warm => "one warm instance",
        };
        let mut out = format!(
            "{}: {} timed evaluations after {} warm-up on {shape}, {} payload bytes\n",
            self.request, self.iterations, self.warmup, self.payload_bytes
        );
        for (role, measurement) in [
            ("policy", Some(&self.policy)),
            ("accept floor", self.accept_floor.as_ref()),
            ("echo floor", self.echo_floor.as_ref()),
        ] {
            let Some(m) = measurement else { continue };
            let s = &m.stats;
            out.push_str(&format!(
                "{role} {}\n  answer: {}\n  min {:.1} µs, median {:.1} µs, p99 {:.1} µs, \
                 mean {:.1} µs, max {:.1} µs, {:.0} evaluations/s\n",
                m.module,
                m.answer.summary(),
                s.min_us,
                s.median_us,
                s.p99_us,
                s.mean_us,
                s.max_us,
                s.evals_per_second
            ));
        }
        if let (Some(ratio), Some(to)) = (self.ratio, self.ratio_to) {
            out.push_str(&format!("ratio policy / {to} (medians): {ratio:.2}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_is_nearest_rank() {
        let samples: Vec<u64> = (1..=100).collect();

        assert_eq!(percentile(&samples, 99.0), 99);
        assert_eq!(percentile(&samples, 50.0), 50);
        assert_eq!(percentile(&samples, 100.0), 100);
        assert_eq!(percentile(&samples, 0.0), 1);
        assert_eq!(percentile(&samples, 0.5), 1);
    }

    #[test]
    fn percentile_of_few_samples_is_the_largest_above_rank() {
        // 99 % of 10 samples is rank 9.9 → the 10th
        let samples: Vec<u64> = (1..=10).map(|x| x * 10).collect();
        assert_eq!(percentile(&samples, 99.0), 100);
        assert_eq!(percentile(&samples, 90.0), 90);
        assert_eq!(percentile(&[7], 99.0), 7);
    }

    #[test]
    fn median_averages_the_middle_pair_of_an_even_count() {
        assert_eq!(median(&[1, 2, 3, 4]), 2.5);
        assert_eq!(median(&[1, 2, 3]), 2.0);
        assert_eq!(median(&[5]), 5.0);
    }

    #[test]
    fn stats_sort_the_samples_and_convert_to_microseconds() {
        let stats = Stats::from_samples(vec![4_000, 1_000, 3_000, 2_000]);

        assert_eq!(
            stats,
            Stats {
                samples: 4,
                min_us: 1.0,
                median_us: 2.5,
                p99_us: 4.0,
                mean_us: 2.5,
                max_us: 4.0,
                evals_per_second: 400_000.0,
            }
        );
    }

    #[test]
    fn stats_p99_ignores_a_single_outlier_in_a_thousand() {
        let mut samples = vec![10_000_u64; 999];
        samples.push(1_000_000);

        let stats = Stats::from_samples(samples);

        assert_eq!(stats.p99_us, 10.0);
        assert_eq!(stats.max_us, 1_000.0);
        assert_eq!(stats.median_us, 10.0);
    }

    #[test]
    fn answer_summarises_the_guest_reply() {
        let reply = br#"{"accepted":true,"message":null,"code":null,"mutated_object":{"a":1,"b":2},"audit_annotations":{"node-labels":""},"warnings":["w1","w2"]}"#;
        let request = AdmissionRequest::from_document(serde_json::json!({
            "uid": "u", "kind": {}, "resource": {}, "operation": "UPDATE", "userInfo": {},
            "object": {"a": 1}}))
        .unwrap();

        let answer = Answer::new(reply, &request, 1, 0).unwrap();

        assert_eq!(
            answer.summary(),
            format!(
                "accepted, mutated (1 patch operation), 2 warnings, 1 audit annotation, \
                 1 look-up, {} reply bytes",
                reply.len()
            )
        );
    }
}
