//! `TICKET.CLAIM event user [COUNT n] [HOLD ms] [SECTION s] [CATEGORY c]
//! [ACCESSIBLE a] [SPLIT] [FROM name] [KEY secret] [SEATS id [id ...]]` —
//! the hot path.
//!
//! Atomically: expires the event's holds that are past their deadline; if
//! `user` already holds tickets of `event` (held or sold), replies with them
//! (no log entry, also after close, whatever `COUNT` says; a pick of other
//! `SEATS` is `HOLDING`); otherwise takes the `n` lowest free numbers
//! (`COUNT`, default 1; all or nothing) — on a seated event the best `n`
//! seats together by the rule of `protocol::seats::rule` (`SECTION`,
//! `CATEGORY`, `ACCESSIBLE`, `SPLIT`), or exactly the seats of `SEATS` —
//! records the holder and appends a compact `claim` record, or `hold` with
//! its deadline when the claim holds (`HOLD ms`, default the event's
//! `HOLD`; 0 = a final sale): a held order is the user's until
//! `TICKET.CONFIRM` or its deadline. With `FROM name` it takes only the
//! free tickets of that allocation, by the same rules (docs/design.md
//! "Allocations"; `KEY` when it was made with one), and does not queue
//! behind the waiting list; the record carries `from`.
//!
//! Reply: without `COUNT` or `SEATS`, an integer: the user's lowest ticket
//! (`1..=total`); with either, an array of all the user's tickets,
//! ascending.
//! Errors: `NOEVENT` (no such event), `NOTOPEN` (before `opens_at`, or
//! before a draw event's draw), `CLOSED` (closed, or past `closes_at`),
//! `SOLDOUT` (fewer than `n` free, or anyone waits; `FROM`: fewer than
//! `n` free in the allocation), `NOKEY` (`FROM` an allocation without its
//! key), `NOALLOCATION` (`FROM` an allocation that does not exist), `QUEUE` (a draw event
//! whose drawn entrants still wait: it sells through its queue),
//! `LIMIT` (`n` above the event's `LIMIT`), `NOTOGETHER` (no `n` seats
//! together, though enough are free), `TAKEN` (a picked seat is held or
//! sold), `ORPHAN` (the pick would leave a single seat alone), `HOLDING`
//! (a repeat claim picking other seats), `ERR` (invalid event or user id;
//! `COUNT` outside `1..=1000`, `HOLD` outside `0..=604800000` (7 days),
//! an option unknown, repeated or without value; an unknown section or
//! category; a request no state of the layout could seat), `TRYAGAIN`
//! (the event's keys disagree: a cluster slot migration in progress;
//! nothing changed), `WRONGTYPE`/`CORRUPT` (the event's keys were tampered
//! with).

use std::sync::atomic::Ordering;

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::args::claim::Claim;
use crate::host::ffi::Argv;
use crate::pool::Claim::{Held, New, Repeat};
use crate::{args, pool, stats, POOL_CHUNK};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let Claim {
            event,
            user,
            options,
            array,
        } = argv.parse(args::claim::claim)?;
        let chunk = POOL_CHUNK.load(Ordering::Relaxed);
        let outcome = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::claim(store, out, event, user, options, clock, chunk)
        });
        stats::count_claim(&outcome);
        let (New(tickets) | Held(tickets) | Repeat(tickets)) = outcome?;
        Ok(match array {
            false => RedisValue::Integer(tickets.lowest()),
            true => super::ticket_array(&tickets),
        })
    })
}
