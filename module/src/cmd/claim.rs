//! `TICKET.CLAIM event user [COUNT n] [HOLD ms]` — the hot path.
//!
//! Atomically: expires the event's holds that are past their deadline; if
//! `user` already holds tickets of `event` (held or sold), replies with them
//! (no log entry, also after close, whatever `COUNT` says); otherwise takes
//! the `n` lowest free numbers (`COUNT`, default 1; all or nothing), minting
//! the next chunk of the lazy pool when needed, records the holder and
//! appends `op=claim` — or `op=hold` with its deadline when the claim holds
//! (`HOLD ms`, default the event's `HOLD`; 0 = a final sale): a held order
//! is the user's until `TICKET.CONFIRM` or its deadline.
//!
//! Reply: without `COUNT`, an integer: the user's lowest ticket
//! (`1..=total`); with `COUNT`, an array of all the user's tickets, ascending.
//! Errors: `NOEVENT` (no such event), `NOTOPEN` (before `opens_at`),
//! `CLOSED` (closed, or past `closes_at`), `SOLDOUT` (fewer than `n` free),
//! `LIMIT` (`n` above the event's `LIMIT`), `ERR` (invalid event or user id;
//! `COUNT` outside `1..=1000`, `HOLD` outside `0..=604800000` (7 days),
//! an option unknown, repeated or without value), `TRYAGAIN` (the event's
//! keys disagree: a cluster slot migration in progress; nothing changed),
//! `WRONGTYPE`/`CORRUPT` (the event's keys were tampered with).

use std::sync::atomic::Ordering;

use redis_module::raw::RedisModuleString;
use redis_module::{Context, RedisResult, RedisValue};

use super::{bytes_of, exactly_raw, guarded, now_ms, CommandError};
use crate::pool::ClaimOptions;
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool, stats, POOL_CHUNK};

/// Takes Redis's argv as is (registered by hand in `lib.rs`, so the hot path
/// skips the crate's copy of every argument into a `Vec<RedisString>`).
pub fn command(ctx: &Context, argv: &[*mut RedisModuleString]) -> RedisResult {
    guarded(|| {
        // Options are parsed only when there are any: the plain claim stays
        // as cheap as it was before they existed.
        let (event, user, options) = match argv.len() {
            3 => {
                let [event, user] = exactly_raw(argv)?;
                (event, user, ClaimOptions::default())
            }
            n if n > 3 && n % 2 == 1 => {
                let given: Vec<&[u8]> = argv[3..].iter().map(|s| bytes_of(*s)).collect();
                (
                    bytes_of(argv[1]),
                    bytes_of(argv[2]),
                    args::claim_options(&given)?,
                )
            }
            _ => return Err(CommandError::Arity),
        };
        let (event, user) = (args::event_id(event)?, args::user_id(user)?);
        let mut store = RedisStore::open(ctx, event, Access::Write, Some((user, argv[2])));
        let chunk = POOL_CHUNK.load(Ordering::Relaxed);
        let outcome = pool::claim(&mut store, event, user, options, now_ms(), chunk);
        stats::count_claim(&outcome);
        let claim = outcome?;
        Ok(match options.count {
            None => RedisValue::Integer(claim.ticket()),
            Some(_) => super::ticket_array(claim.tickets()),
        })
    })
}
