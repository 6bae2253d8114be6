//! Verification rounds, by number: the reader asks for one at every Redis
//! connect and waits for it before reading; the verifier (in the `loss`
//! layer) serves them, and a batch that lacks its anchor asks for one now.
//! Here, below all three, so neither the reader nor the batch imports the
//! layer above it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How often a waiter looks at the stop flag.
const STOP_CHECK: Duration = Duration::from_millis(20);

/// Rounds the reader asked for and rounds the verifier finished, by
/// number. Waiters are woken as soon as the number they wait for moves
/// (a condition variable, not a poll: the reader's first read waits for
/// the verifier's first round, and a drain's clock runs meanwhile).
#[derive(Debug, Default)]
pub struct Rounds {
    state: Mutex<Counts>,
    moved: Condvar,
}

/// The numbers behind [`Rounds`].
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    asked: u64,
    done: u64,
}

impl Rounds {
    /// The counts, even after a panic elsewhere (they stay consistent:
    /// each change is one assignment).
    fn counts(&self) -> MutexGuard<'_, Counts> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for a round; its number.
    pub fn ask(&self) -> u64 {
        let mut c = self.counts();
        c.asked += 1;
        self.moved.notify_all();
        c.asked
    }

    /// Waits until round `n` is done (true), `limit` passed or `stop` is set.
    pub fn wait(&self, n: u64, limit: Duration, stop: &AtomicBool) -> bool {
        self.wait_for(limit, Some(stop), |c| c.done >= n)
    }

    /// Waits up to `limit` for a round asked after `served` (the
    /// verifier, between rounds); true when one was.
    pub fn wait_asked(&self, served: u64, limit: Duration) -> bool {
        self.wait_for(limit, None, |c| c.asked > served)
    }

    /// Waits until `ready` holds (true), `limit` passed or `stop` is set.
    fn wait_for(
        &self,
        limit: Duration,
        stop: Option<&AtomicBool>,
        ready: impl Fn(&Counts) -> bool,
    ) -> bool {
        let end = Instant::now() + limit;
        let mut c = self.counts();
        loop {
            if ready(&c) {
                return true;
            }
            let now = Instant::now();
            if now >= end || stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return false;
            }
            let slice = (end - now).min(STOP_CHECK);
            c = match self.moved.wait_timeout(c, slice) {
                Ok((c, _)) => c,
                Err(e) => e.into_inner().0,
            };
        }
    }

    /// The newest round asked for.
    pub fn asked(&self) -> u64 {
        self.counts().asked
    }

    /// Every round up to `n` is done.
    pub fn finished(&self, n: u64) {
        let mut c = self.counts();
        c.done = c.done.max(n);
        self.moved.notify_all();
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
