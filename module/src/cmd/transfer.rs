//! `TICKET.TRANSFER event from to [TICKETS id ...]` — moves sold tickets
//! of `from` (all by default) to `to` in one step (docs/design.md "After
//! the sale"): the stock is unchanged, each moved ticket's generation goes
//! up by one (its old credential is `STALE` at the door), `to`'s `LIMIT`
//! counts them. Expires the event's holds past their deadline first.
//! Appends one `op=transfer` naming the tickets.
//!
//! Reply: integer, the number of tickets moved.
//! Errors: `NOTSOLD` (`from`'s order is held, a named ticket is not
//! `from`'s, or `to` holds a held order), `USED` (a ticket was scanned),
//! `LISTED` (a ticket is listed for resale), `LIMIT` (`to` would hold
//! more than the event's `LIMIT`), `CLOSED`
//! (after the event's `TRANSFER_UNTIL`), `NOHOLD` (`from` holds nothing),
//! `NOEVENT`, `ERR` (invalid ids, `from` = `to`), `TRYAGAIN`,
//! `WRONGTYPE`/`CORRUPT`. A refusal changes nothing.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, from, to, tickets) = argv.parse(args::after::transfer)?;
        let moved = write(ctx, event, None, |store, out, clock| {
            pool::transfer(store, out, event, (from, to), tickets.as_deref(), clock)
        })?;
        Ok(RedisValue::Integer(moved))
    })
}
