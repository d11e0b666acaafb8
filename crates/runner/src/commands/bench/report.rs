//! The bench report: every module's measurement and the ratios of the
//! policy's median to its floors', as text or JSON (scripts/bench.sh reads
//! the JSON).

use serde::Serialize;

use crate::commands::bench::subject::{Measurement, Shape};

/// The whole report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The request file.
    pub request: String,
    /// How evaluations got their instance.
    pub instance: Shape,
    /// Untimed evaluations per module.
    pub warmup: u32,
    /// Timed evaluations per module.
    pub iterations: u32,
    /// Size of the `validate` payload.
    pub payload_bytes: usize,
    /// Whether the policy returns a mutated object.
    pub mutates: bool,
    /// The policy.
    pub policy: Measurement,
    /// `--accept-floor`.
    pub accept_floor: Option<Measurement>,
    /// `--echo-floor`.
    pub echo_floor: Option<Measurement>,
    /// Left out unless `--lookup-floor` was given, as is `lookup_ratio`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup_floor: Option<Measurement>,
    /// Left out unless `--result-floor` was given, as is `result_ratio`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_floor: Option<Measurement>,
    /// Median policy / median of the floor named by `ratio_to`.
    pub ratio: Option<f64>,
    /// `echo floor` when the policy mutates, `accept floor` otherwise.
    pub ratio_to: Option<&'static str>,
    /// Median policy / median look-up floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookup_ratio: Option<f64>,
    /// Median policy / median result floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result_ratio: Option<f64>,
}

impl Report {
    /// The report for people.
    pub fn text(&self) -> String {
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
            ("look-up floor", self.lookup_floor.as_ref()),
            ("result floor", self.result_floor.as_ref()),
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
        if let Some(ratio) = self.lookup_ratio {
            out.push_str(&format!(
                "ratio policy / look-up floor (medians): {ratio:.2}\n"
            ));
        }
        if let Some(ratio) = self.result_ratio {
            out.push_str(&format!(
                "ratio policy / result floor (medians): {ratio:.2}\n"
            ));
        }
        out
    }
}
