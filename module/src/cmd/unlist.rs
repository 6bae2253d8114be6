//! `TICKET.UNLIST event user [TICKETS id ...]` — takes back tickets
//! `user` listed for resale that no buyer holds (all of them by default;
//! docs/design.md "After the sale"). Expires the event's holds past their
//! deadline first (an expired buyer's ticket is back on the list). Appends
//! one `op=unlist` naming the tickets, none when there are none.
//!
//! Reply: integer, the number of tickets taken back (0: none listed).
//! Errors: `NOTLISTED` (a named ticket is not listed by `user`, or a buyer
//! holds it), `NOEVENT`, `ERR` (invalid ids), `TRYAGAIN`,
//! `WRONGTYPE`/`CORRUPT`. A refusal changes nothing.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, seller, tickets) = argv.parse(args::after::resale)?;
        let taken = write(ctx, event, None, |store, out, clock| {
            pool::unlist(store, out, event, seller, tickets.as_deref(), clock)
        })?;
        Ok(RedisValue::Integer(taken))
    })
}
