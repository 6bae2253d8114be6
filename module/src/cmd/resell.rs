//! `TICKET.RESELL event user [TICKETS id ...]` — lists sold tickets of
//! `user` (every one not listed yet by default) for resale at face value
//! (docs/design.md "After the sale"): a claim or a waiting-list offer
//! takes a listed ticket once no free one fits, and the listing is offered
//! to the waiting list at once. The ticket stays `user`'s until a buyer
//! confirms it (`op=resold`, a generation up); a buyer's hold that ends
//! puts it back on the list. Expires the event's holds past their
//! deadline first. Appends one `op=resell` naming the tickets.
//!
//! Reply: integer, the number of tickets listed.
//! Errors: `LISTED` (a ticket is listed already, or all are), `NOTSOLD`
//! (`user`'s order is held, or a named ticket is not `user`'s), `USED` (a
//! ticket was scanned), `CLOSED` (after the event's `TRANSFER_UNTIL`),
//! `NOHOLD` (`user` holds nothing), `NOEVENT`, `ERR` (invalid ids),
//! `TRYAGAIN`, `WRONGTYPE`/`CORRUPT`. A refusal changes nothing.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, seller, tickets) = argv.parse(args::after::resale)?;
        let listed = write(ctx, event, None, |store, out, clock| {
            pool::resell(store, out, event, seller, tickets.as_deref(), clock)
        })?;
        Ok(RedisValue::Integer(listed))
    })
}
