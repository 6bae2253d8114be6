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

use redis_module::{raw, Context, RedisResult, RedisString, RedisValue};

use protocol::record::{Checkout, Incarnation};

use super::{arguments, guarded, now_ms};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let init = args::init_args(&arguments(&argv, 2, 12)?)?;
        let mut store = RedisStore::open(ctx, init.event, Access::Write, None);
        pool::init(
            &mut store,
            init.event,
            (init.total, init.opens_at, init.closes_at),
            Checkout {
                hold: init.hold,
                limit: init.limit,
                offer: init.offer,
            },
            draw_incarnation(),
            now_ms(),
        )?;
        stats::INITS.bump();
        super::announce(ctx, init.event);
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}

/// A random non-zero incarnation, from Redis's own random source.
fn draw_incarnation() -> Incarnation {
    loop {
        let mut bytes = [0u8; 8];
        // SAFETY: fills exactly the 8 bytes it is given.
        unsafe { raw::RedisModule_GetRandomBytes.unwrap()(bytes.as_mut_ptr(), bytes.len()) };
        match u64::from_le_bytes(bytes) {
            0 => continue,
            n => return Incarnation(n),
        }
    }
}
