//! Verification rounds, by number: the reader asks for one at every Redis
//! connect and waits for it before reading; the verifier (in the `loss`
//! layer) serves them, and a batch that lacks its anchor asks for one now.
//! Here, below all three, so neither the reader nor the batch imports the
//! layer above it.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::io::backoff::sleep_unless;

/// Rounds the reader asked for and rounds the verifier finished, by number.
#[derive(Debug, Default)]
pub struct Rounds {
    asked: AtomicU64,
    done: AtomicU64,
}

impl Rounds {
    /// Asks for a round; its number.
    pub fn ask(&self) -> u64 {
        self.asked.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Waits until round `n` is done (true), `limit` passed or `stop` is set.
    pub fn wait(&self, n: u64, limit: Duration, stop: &AtomicBool) -> bool {
        let end = Instant::now() + limit;
        while self.done.load(Ordering::SeqCst) < n {
            if Instant::now() >= end || sleep_unless(stop, Duration::from_millis(20)) {
                return false;
            }
        }
        true
    }

    /// The newest round asked for.
    pub fn asked(&self) -> u64 {
        self.asked.load(Ordering::SeqCst)
    }

    /// Every round up to `n` is done.
    pub fn finished(&self, n: u64) {
        self.done.fetch_max(n, Ordering::SeqCst);
    }
}

/// A writer saw a divergence (a batch without its offset's anchor): the
/// verifier runs a round at once instead of at its interval.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the verifier for a round now (a writer saw a divergence).
pub fn request_now() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Takes a pending request (the verifier's loop).
pub fn take_request() -> bool {
    REQUESTED.swap(false, Ordering::SeqCst)
}
