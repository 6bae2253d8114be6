//! `TICKET.INIT event total [OPENS unix-ms] [CLOSES unix-ms] [HOLD ms] [LIMIT n] [OFFER ms]`
//! — creates an event.
//!
//! Writes the meta hash (`status` = `open`, `minted` = 0: the pool is minted
//! lazily by the first claim, so any size inits in O(1); `incarnation` = a
//! random non-zero 64-bit number, 16 hex digits, that tells this event apart
//! from any earlier or later one of the same id), appends `op=init`
//! to the log and publishes the event id on the `ticket:events` channel so a
//! running sidecar starts draining it at once. Claims are accepted from
//! `OPENS` (if given) until `CLOSES` (if given); `0` means no bound.
//! `HOLD` is the default hold of a claim (0, the default: a claim is a
//! final sale; at most 7 days); `LIMIT` the most tickets one user may hold
//! (1..=1000, default 1); `OFFER` how long an offer of the waiting list is
//! held (1 ms to 7 days; default `HOLD`, or 10 minutes when `HOLD` is 0).
//!
//! Reply: `OK`.
//! Errors: `EXISTS` (the event already exists), `ERR` (invalid event id,
//! total outside `1..=2147483647`, unknown or repeated option, negative time,
//! `CLOSES` not after `OPENS`, `HOLD`, `LIMIT` or `OFFER` out of range), `WRONGTYPE`.

use redis_module::{Context, RedisResult, RedisValue};

use protocol::record::{Checkout, Incarnation};

use super::{arguments, guarded, write};
use crate::host::argv::Argv;
use crate::host::ffi::{publish, random_u64};
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let init = args::init_args(&arguments(argv, 2, 12)?)?;
        let checkout = Checkout {
            hold: init.hold,
            limit: init.limit,
            offer: init.offer,
        };
        let window = (init.total, init.opens_at, init.closes_at);
        write(ctx, init.event, None, |store, out, clock| {
            let incarnation = draw_incarnation();
            pool::init(
                store,
                out,
                init.event,
                window,
                checkout,
                incarnation,
                clock.now,
            )
        })?;
        stats::INITS.bump();
        announce(ctx, init.event);
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}

/// Publishes `event` on `ticket:events` (after `TICKET.INIT` and a
/// restore's `COMMIT`), so a running sidecar drains its log at once.
pub fn announce(ctx: &Context, event: &str) {
    let channel = protocol::keys::EVENTS_CHANNEL.as_bytes();
    publish(ctx, channel, event.as_bytes());
}

/// A random non-zero incarnation, from Redis's own random source.
fn draw_incarnation() -> Incarnation {
    loop {
        match random_u64() {
            0 => continue,
            n => return Incarnation(n),
        }
    }
}
