//! The summary of a module's timed evaluations: median, nearest-rank p99,
//! mean and spread, in microseconds. `profile` takes medians the same way.

use std::time::Duration;

use serde::Serialize;

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

/// `duration` in nanoseconds (saturating).
pub fn nanos(duration: Duration) -> u64 {
    duration.as_nanos().try_into().unwrap_or(u64::MAX)
}

/// Nearest-rank percentile of sorted, non-empty `samples`: the smallest
/// sample such that at least `p` % of the samples are at or below it.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Median of sorted, non-empty `samples`.
fn median(sorted: &[u64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2] as f64
    } else {
        (sorted[n / 2 - 1] as f64 + sorted[n / 2] as f64) / 2.0
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
}
