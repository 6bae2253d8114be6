//! `TICKET.CLAIM event user` — the hot path.
//!
//! Atomically: if `user` already holds a ticket of `event`, replies with it
//! (no log entry, also after close); otherwise pops the lowest free number
//! (minting the next chunk of the lazy pool when it is empty), records the
//! holder, appends `op=claim` to the log and replies with the number.
//!
//! Reply: integer, the ticket number (`1..=total`).
//! Errors: `NOEVENT` (no such event), `NOTOPEN` (before `opens_at`),
//! `CLOSED` (closed, or past `closes_at`), `SOLDOUT`, `ERR` (invalid event or
//! user id), `TRYAGAIN` (the event's keys disagree: a cluster slot migration
//! in progress; nothing changed), `WRONGTYPE`/`CORRUPT` (the event's keys
//! were tampered with).

use std::sync::atomic::Ordering;

use redis_module::raw::RedisModuleString;
use redis_module::{Context, RedisResult, RedisValue};

use super::{exactly_raw, guarded, now_ms};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool, stats, POOL_CHUNK};

/// Takes Redis's argv as is (registered by hand in `lib.rs`, so the hot path
/// skips the crate's copy of every argument into a `Vec<RedisString>`).
pub fn command(ctx: &Context, argv: &[*mut RedisModuleString]) -> RedisResult {
    guarded(|| {
        let [event, user] = exactly_raw(argv)?;
        let (event, user) = (args::event_id(event)?, args::user_id(user)?);
        let mut store = RedisStore::open(ctx, event, Access::Write, Some((user, argv[2])));
        let chunk = POOL_CHUNK.load(Ordering::Relaxed);
        let outcome = pool::claim(&mut store, event, user, now_ms(), chunk);
        stats::count_claim(&outcome);
        Ok(RedisValue::Integer(outcome?.ticket()))
    })
}
