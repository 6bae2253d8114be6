//! Counters reported in the `INFO ticket` section (written out by
//! `host::info`), and this node's *term*: a random number drawn when the
//! node becomes a primary through a replication role change
//! (`host::note`), zero while it is a replica or was never promoted.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use crate::error::TicketError;
use crate::pool::Claim;

/// A monotonically increasing counter.
pub struct Counter(AtomicU64);

impl Counter {
    const fn new() -> Counter {
        Counter(AtomicU64::new(0))
    }

    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

pub static CLAIMS: Counter = Counter::new();
pub static REPEAT_CLAIMS: Counter = Counter::new();
pub static SOLDOUT_REPLIES: Counter = Counter::new();
pub static REJECTED_CLAIMS: Counter = Counter::new();
pub static CANCELS: Counter = Counter::new();
pub static INITS: Counter = Counter::new();
pub static META_CACHE_MISSES: Counter = Counter::new();
/// Claims that made a held order (decided here, as a primary).
pub static HOLDS: Counter = Counter::new();
/// Held orders confirmed (decided here).
pub static CONFIRMS: Counter = Counter::new();
/// Held orders expired (decided here: by a command or the sweep).
pub static EXPIRED: Counter = Counter::new();
/// `TICKET._APPLY` effects applied (on a replica, or at AOF load).
pub static APPLIED: Counter = Counter::new();
/// Panics caught at an entry point from Redis (a bug: each is logged).
pub static PANICS: Counter = Counter::new();

/// Every counter with its `INFO ticket` field name, in the order shown.
pub const FIELDS: [(&str, &Counter); 12] = [
    ("claims", &CLAIMS),
    ("repeat_claims", &REPEAT_CLAIMS),
    ("soldout_replies", &SOLDOUT_REPLIES),
    ("rejected_claims", &REJECTED_CLAIMS),
    ("cancels", &CANCELS),
    ("holds", &HOLDS),
    ("confirms", &CONFIRMS),
    ("expired", &EXPIRED),
    ("events_created", &INITS),
    ("meta_cache_misses", &META_CACHE_MISSES),
    ("applied_effects", &APPLIED),
    ("panics", &PANICS),
];

/// Counts the outcome of one `TICKET.CLAIM`.
pub fn count_claim(outcome: &Result<Claim, TicketError>) {
    match outcome {
        Ok(Claim::New(_) | Claim::Held(_)) => CLAIMS.bump(),
        Ok(Claim::Repeat(_)) => REPEAT_CLAIMS.bump(),
        Err(TicketError::SoldOut(_)) => SOLDOUT_REPLIES.bump(),
        Err(_) => REJECTED_CLAIMS.bump(),
    }
}

/// This node's term as a primary promoted by a role change (0: none).
static TERM: AtomicI64 = AtomicI64::new(0);

/// The term, when this node became a primary through a role change (one
/// atomic load: this is on every write command's path).
#[inline]
pub fn term() -> Option<i64> {
    match TERM.load(Ordering::Relaxed) {
        0 => None,
        t => Some(t),
    }
}

/// Sets the term: positive after a promotion, 0 as a replica.
pub fn set_term(term: i64) {
    TERM.store(term, Ordering::Relaxed);
}
