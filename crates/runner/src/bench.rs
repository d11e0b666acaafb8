//! `policy-runner bench`: how long one `validate` takes, like `kwctl bench`.
//!
//! The module is compiled and instantiated once and its settings are
//! validated once ([`run::load`]), as a policy-server does for a warm
//! instance. The same request is then evaluated `warmup` times untimed and
//! `iterations` times timed on that one instance. Before every evaluation
//! the replay session is rewound, so each one makes the same look-ups and
//! gets the same answers.
//!
//! Only the waPC `validate` call is timed, host callbacks included: the
//! payload is serialised once beforehand, and the reply is checked after the
//! clock stops. Every reply must be byte-identical to the first; a policy
//! whose answer drifts fails the benchmark.
//!
//! With `--floor`, a minimal module that only decodes the request and accepts
//! is measured the same way, in the same process, and the report gives the
//! ratio of the medians: what the policy costs beyond JSON in and out. The
//! two modules take turns, one evaluation each, so a burst of load on the
//! machine slows both alike instead of skewing the ratio.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde_json::Value;

use crate::cli::{BenchArgs, OutputFormat};
use crate::policy;
use crate::response::PolicyResponse;
use crate::run::{self, Loaded};

/// Runs `args` and prints the report on stdout.
pub fn bench(args: &BenchArgs) -> Result<()> {
    let request = run::read_request(&args.run.request_path)?;
    let settings = run::read_settings(&args.run.settings.source())?;
    let payload = policy::validate_payload(&request, &settings);

    let inputs = Inputs {
        allow_context_aware: args.run.allow_context_aware,
        // Same session for the floor; it is expected to leave it unused.
        replay: args.run.replay_host_capabilities_interactions.as_deref(),
        settings: &settings,
        payload: &payload,
    };
    let mut modules = vec![Subject::load(&args.run.policy, &inputs)?];
    if let Some(floor) = &args.floor {
        modules.push(Subject::load(floor, &inputs)?);
    }
    if modules[0].answer.unreplayed > 0 {
        eprintln!(
            "WARN policy-runner: {} of the recorded exchanges have not been replayed",
            modules[0].answer.unreplayed
        );
    }
    for round in 1..=args.warmup + args.iterations {
        for module in &mut modules {
            module.evaluate(&payload, round, round > args.warmup)?;
        }
    }
    let mut measured = modules.into_iter().map(Subject::finish);
    let policy = measured.next().expect("the policy is always measured");
    let floor = measured.next();

    let report = Report {
        request: args.run.request_path.display().to_string(),
        warmup: args.warmup,
        iterations: args.iterations,
        payload_bytes: payload.len(),
        ratio: floor
            .as_ref()
            .map(|floor| policy.stats.median_us / floor.stats.median_us),
        policy,
        floor,
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

/// What every module in one bench run is given.
struct Inputs<'a> {
    allow_context_aware: bool,
    replay: Option<&'a Path>,
    settings: &'a Value,
    payload: &'a [u8],
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
    warnings: usize,
    audit_annotations: usize,
    /// Look-ups answered from the replay session per evaluation.
    lookups: usize,
    /// Recorded exchanges an evaluation left unused.
    unreplayed: usize,
    reply_bytes: usize,
}

impl Answer {
    fn new(reply: &[u8], lookups: usize, unreplayed: usize) -> Result<Answer> {
        let response: PolicyResponse = serde_json::from_slice(reply).with_context(|| {
            format!(
                "invalid response from policy: {}",
                String::from_utf8_lossy(reply)
            )
        })?;
        Ok(Answer {
            accepted: response.accepted,
            code: response.code,
            mutated: response.mutated_object.is_some(),
            warnings: response.warnings.map_or(0, |w| w.len()),
            audit_annotations: response.audit_annotations.map_or(0, |a| a.len()),
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
            parts.push("mutated".to_owned());
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

/// One module under measurement: a warm instance, its first reply and the
/// timings so far.
struct Subject {
    module: String,
    loaded: Loaded,
    first: Vec<u8>,
    answer: Answer,
    samples: Vec<u64>,
}

impl Subject {
    /// Loads the module at `path` and makes the untimed reference
    /// evaluation, whose reply every later one must repeat byte for byte.
    fn load(path: &Path, inputs: &Inputs<'_>) -> Result<Subject> {
        let loaded = run::load(
            path,
            inputs.allow_context_aware,
            inputs.replay,
            inputs.settings,
        )?;
        rewind(&loaded);
        let first = loaded
            .policy
            .call_validate(inputs.payload)
            .with_context(|| format!("the first evaluation of {} failed", path.display()))?;
        let lookups = loaded.host.lock().map_or(0, |host| host.replayed());
        let answer = Answer::new(&first, lookups, loaded.unreplayed())?;
        Ok(Subject {
            module: path.display().to_string(),
            loaded,
            first,
            answer,
            samples: Vec::new(),
        })
    }

    /// One evaluation, timed around the `validate` call alone; its duration
    /// is kept when `keep` (after the warm-up).
    fn evaluate(&mut self, payload: &[u8], round: u32, keep: bool) -> Result<()> {
        rewind(&self.loaded);
        let start = Instant::now();
        let reply = self.loaded.policy.call_validate(payload);
        let elapsed = start.elapsed();
        let reply =
            reply.with_context(|| format!("evaluation {round} of {} failed", self.module))?;
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
            self.samples
                .push(elapsed.as_nanos().try_into().unwrap_or(u64::MAX));
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

fn rewind(loaded: &Loaded) {
    let mut host = loaded
        .host
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    host.rewind_replay();
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
    /// Sequential evaluations per second on the one instance: 1 / mean.
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
    warmup: u32,
    iterations: u32,
    payload_bytes: usize,
    policy: Measurement,
    floor: Option<Measurement>,
    /// Median policy / median floor.
    ratio: Option<f64>,
}

impl Report {
    fn text(&self) -> String {
        let mut out = format!(
            "{}: {} timed evaluations after {} warm-up, {} payload bytes\n",
            self.request, self.iterations, self.warmup, self.payload_bytes
        );
        for (role, measurement) in [
            ("policy", Some(&self.policy)),
            ("floor", self.floor.as_ref()),
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
        if let Some(ratio) = self.ratio {
            out.push_str(&format!("ratio policy / floor (medians): {ratio:.2}\n"));
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
        let reply = br#"{"accepted":true,"message":null,"code":null,"mutated_object":{"a":1},"audit_annotations":{"node-labels":""},"warnings":["w1","w2"]}"#;

        let answer = Answer::new(reply, 1, 0).unwrap();

        assert_eq!(
            answer.summary(),
            format!(
                "accepted, mutated, 2 warnings, 1 audit annotation, 1 look-up, {} reply bytes",
                reply.len()
            )
        );
    }
}
