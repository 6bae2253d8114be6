//! Exponential backoff with full jitter for retrying MySQL and Redis.
//!
//! Attempt `n` (0-based) waits a random duration in `[base/2, cap_n]` where
//! `cap_n = min(max, base * 2^n)`: growing waits so a restarting server is not
//! hammered, randomised so several writers do not retry in lock-step.
//! [`sleep_unless`] is the wait every retry loop uses: cut short by a stop,
//! and by a master switch the sentinels announce (so a reconnect follows a
//! failover at once, not after the longest backoff).

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// Backoff state for one retry loop.
#[derive(Debug, Clone)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    attempt: u32,
}

impl Backoff {
    /// A backoff starting near `base`, never waiting longer than `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        Backoff {
            base,
            max,
            attempt: 0,
        }
    }

    /// Defaults used by the daemon: 100 ms .. 5 s.
    pub fn standard() -> Self {
        Backoff::new(Duration::from_millis(100), Duration::from_secs(5))
    }

    /// The ceiling of the next wait (before jitter).
    pub fn ceiling(&self) -> Duration {
        let factor = 1u32.checked_shl(self.attempt.min(20)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.max)
    }

    /// The next wait, given a random fraction `r` in `[0, 1)`; advances.
    pub fn next_with(&mut self, r: f64) -> Duration {
        let ceil = self.ceiling();
        let floor = (self.base / 2).min(ceil);
        let span = ceil.saturating_sub(floor);
        self.attempt = self.attempt.saturating_add(1);
        floor + span.mul_f64(r.clamp(0.0, 1.0))
    }

    /// The next wait with random jitter; advances.
    pub fn next_delay(&mut self) -> Duration {
        self.next_with(rand::random::<f64>())
    }

    /// Back to the first, shortest wait (after a success).
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}

/// Sleeps `d` in small slices; returns early (true) once `stop` is set,
/// and early (false) when the sentinels switch the master meanwhile.
pub fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    let switches = conn::sentinel::switches();
    while Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        if conn::sentinel::switches() != switches {
            return false;
        }
        thread::sleep(Duration::from_millis(20).min(end.saturating_duration_since(Instant::now())));
    }
    stop.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn grows_then_caps() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_secs(5));
        let ceilings: Vec<_> = (0..10)
            .map(|_| {
                let c = b.ceiling();
                b.next_with(1.0);
                c.as_millis()
            })
            .collect();
        assert_eq!(
            ceilings,
            [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000]
        );
        b.reset();
        assert_eq!(b.ceiling(), Duration::from_millis(100));
    }

    proptest! {
        #[test]
        fn within_bounds(n in 0u32..200, r in 0.0f64..1.0) {
            let mut b = Backoff::standard();
            for _ in 0..n { b.next_with(0.5); }
            let d = b.next_with(r);
            prop_assert!(d >= Duration::from_millis(50));
            prop_assert!(d <= Duration::from_secs(5));
        }
    }
}
