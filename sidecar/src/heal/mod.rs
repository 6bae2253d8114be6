//! Heal after an unplanned failover (README, "The sidecar and lost
//! writes: the heal").
//!
//! * [`content`]: an entry's canonical content and digest (pure);
//! * [`planner`]: where the new primary's log meets MySQL's journal, what
//!   to re-apply and what to undo (pure, property-tested);
//! * [`journal`]: MySQL's journal of applied entries and the anchor kept
//!   with the offset, written in the batch's transaction; the writer's
//!   anchor check (I/O);
//! * [`executor`]: the heal itself, run by the verifier under the event's
//!   offset lock (I/O).
//!
//! The writer refuses a batch whose anchor is missing or different and
//! asks the verifier for a round at once ([`request`]): a process-wide
//! flag, so the hook in the writer stays one line.

pub mod content;
pub mod executor;
pub mod journal;
pub mod planner;

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks the verifier for a round now (a writer saw a divergence).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Takes a pending request (the verifier's loop).
pub fn take_request() -> bool {
    REQUESTED.swap(false, Ordering::SeqCst)
}
