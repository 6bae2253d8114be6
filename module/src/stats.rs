//! Counters reported in the `INFO ticket` section.

use std::sync::atomic::{AtomicU64, Ordering};

use redis_module::{InfoContext, RedisResult};
use redis_module_macros::info_command_handler;

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

/// Counts the outcome of one `TICKET.CLAIM`.
pub fn count_claim(outcome: &Result<Claim, TicketError>) {
    match outcome {
        Ok(Claim::New(_) | Claim::Held(_)) => CLAIMS.bump(),
        Ok(Claim::Repeat(_)) => REPEAT_CLAIMS.bump(),
        Err(TicketError::SoldOut(_)) => SOLDOUT_REPLIES.bump(),
        Err(_) => REJECTED_CLAIMS.bump(),
    }
}

#[info_command_handler]
fn ticket_info(ctx: &InfoContext, _for_crash_report: bool) -> RedisResult<()> {
    let fields = [
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
    ];
    let mut section = ctx.builder().add_section("stats");
    for (name, counter) in fields {
        section = section.field(name, counter.get() as i64)?;
    }
    section.build_section()?.build_info()?;
    Ok(())
}
