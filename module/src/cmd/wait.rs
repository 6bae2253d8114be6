//! `TICKET.WAIT event user [COUNT n]` — joins the event's waiting list
//! (docs/design.md "The waiting list").
//!
//! Joins the FIFO list for `n` tickets (default 1; idempotent: a user
//! already waiting keeps the place and count), then runs the offer step: if
//! tickets are free the head is offered its `n` lowest free numbers as a
//! held order (`op=offer`, until now + the event's `OFFER`; `TICKET.CONFIRM`
//! buys them, expiry passes them on) and its user id is published on
//! `ticket:{E}:offers`. Strict FIFO: nobody behind the head is served first;
//! a head wanting more than are free waits until enough are free, or until
//! it has waited a full offer period, from when it is offered what is free.
//! Offers are made only while the event accepts claims. Joining is
//! replicated but not logged. While anyone waits, a `CLAIM` by a user
//! without tickets is `SOLDOUT`. Before a draw event's draw (docs/design.md
//! "The draw") `WAIT` enters the draw (`op=enter`, logged; the place is the
//! entrant's rank, revealed by the draw); after it newcomers queue behind
//! every entrant.
//!
//! Reply: integer, the 1-based position, or 0 when the user was offered
//! tickets at once, or -1 when the user entered a draw not made yet.
//! Errors: `NOEVENT`, `HOLDING` (the user holds tickets), `LIMIT` (`COUNT`
//! above the event's `LIMIT`), `ERR` (invalid event or user id, `COUNT`
//! outside `1..=1000`, an unknown or repeated option), `TRYAGAIN` (see
//! `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user, count) = argv.parse(args::wait)?;
        let position = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::wait(store, out, event, user, count, clock)
        })?;
        Ok(RedisValue::Integer(position))
    })
}
