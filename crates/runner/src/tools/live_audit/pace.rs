//! A token bucket: at most `burst` requests at once, then `qps` a second,
//! as client-go's default rate limiter (`flowcontrol.NewTokenBucketRateLimiter`)
//! paces kubectl. Every request of a live audit waits here, reads and
//! writes alike.

use std::time::{Duration, Instant};

/// The bucket.
#[derive(Debug)]
pub(super) struct Pace {
    qps: f64,
    burst: f64,
    tokens: f64,
    last: Instant,
}

impl Pace {
    /// A full bucket of `burst` tokens refilled at `qps` a second.
    pub(super) fn new(qps: f64, burst: u32) -> Pace {
        Pace {
            qps,
            burst: f64::from(burst),
            tokens: f64::from(burst),
            last: Instant::now(),
        }
    }

    /// Takes a token at `now`: how long to wait before the request may go.
    fn take(&mut self, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.qps).min(self.burst);
        self.last = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            return Duration::ZERO;
        }
        // The debt is paid by the refill during the wait.
        Duration::from_secs_f64(-self.tokens / self.qps)
    }

    /// How long the next request waits before it may go (its turn taken
    /// now).
    pub(super) fn turn(&mut self) -> Duration {
        self.take(Instant::now())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_goes_at_once_then_one_request_per_interval() {
        let start = Instant::now();
        let mut pace = Pace::new(5.0, 3);
        pace.last = start;
        let waits: Vec<Duration> = (0..6).map(|_| pace.take(start)).collect();
        assert_eq!(&waits[..3], &[Duration::ZERO; 3]);
        // Three more at the same instant owe 1, 2 and 3 tokens: 0.2 s each.
        let ms: Vec<u128> = waits[3..].iter().map(Duration::as_millis).collect();
        assert_eq!(ms, vec![200, 400, 600]);
    }

    #[test]
    fn the_bucket_refills_at_qps_and_never_above_burst() {
        let start = Instant::now();
        let mut pace = Pace::new(2.0, 2);
        pace.last = start;
        assert!(pace.take(start).is_zero());
        assert!(pace.take(start).is_zero());
        // An hour idle refills two tokens, not 7,200.
        let later = start + Duration::from_secs(3600);
        assert!(pace.take(later).is_zero());
        assert!(pace.take(later).is_zero());
        assert_eq!(pace.take(later).as_millis(), 500);
    }
}
