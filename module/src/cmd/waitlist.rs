//! `TICKET.WAIT event user [COUNT n]`, `TICKET.LEAVE event user` and
//! `TICKET.POSITION event user` — the event's waiting list
//! (docs/design.md "The waiting list").
//!
//! `WAIT` joins the FIFO list for `n` tickets (default 1; idempotent: a user
//! already waiting keeps the place and count), then runs the offer step: if
//! tickets are free the head is offered its `n` lowest free numbers as a
//! held order (`op=offer`, until now + the event's `OFFER`; `TICKET.CONFIRM`
//! buys them, expiry passes them on) and its user id is published on
//! `ticket:{E}:offers`. Strict FIFO: nobody behind the head is served first;
//! a head wanting more than are free waits until enough are free, or until
//! it has waited a full offer period, from when it is offered what is free.
//! Offers are made only while the event accepts claims. Joining and leaving
//! are replicated but not logged. While anyone waits, a `CLAIM` by a user
//! without tickets is `SOLDOUT`. A draw event (docs/design.md "The draw") differs: before its draw `WAIT` enters the draw (`op=enter`,
//! logged; the place is the entrant's rank, revealed by the draw), and an
//! entrant's `LEAVE` is logged (`op=leave`); after the draw newcomers queue
//! behind every entrant, and while entrants wait a claim is `QUEUE`.
//!
//! Replies: `WAIT`: integer, the 1-based position, or 0 when the user was
//! offered tickets at once, or -1 when the user entered a draw not made
//! yet. `LEAVE`: 1 if the user left the list, else 0 (leaving may serve the
//! next in line). `POSITION` (read-only): the 1-based position, -1 for an
//! entrant before the draw, 0 while the user holds an offer of the list or
//! the draw (until it is confirmed, cancelled or expires; a primary counts
//! an offer past its deadline as expired, like `ORDER`), or nil.
//! Errors: `NOEVENT`, `HOLDING` (`WAIT` by a user who holds tickets),
//! `LIMIT` (`COUNT` above the event's `LIMIT`), `ERR` (invalid event or user
//! id, `COUNT` outside `1..=1000`, an unknown or repeated option),
//! `TRYAGAIN` (see `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{expired_from, guarded, integer_or_nil, write};
use crate::host::argv::Argv;
use crate::host::store::{Access, RedisStore};
use crate::{args, pool};

pub fn wait(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user, count) = argv.parse(args::wait)?;
        let position = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::wait(store, out, event, user, count, clock)
        })?;
        Ok(RedisValue::Integer(position))
    })
}

pub fn leave(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let left = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::leave(store, out, event, user, clock)
        })?;
        Ok(RedisValue::Integer(left.into()))
    })
}

pub fn position(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let mut store = RedisStore::open(ctx, event, Access::Read, argv.user(2, user));
        let expired_from = expired_from(ctx, &store);
        Ok(integer_or_nil(pool::position(
            &mut store,
            event,
            user,
            expired_from,
        )?))
    })
}
