//! `TICKET.CANCEL event user` — gives a user's tickets back.
//!
//! Removes the user from the holders, returns all the user's tickets, held
//! or sold, to the pool (the lowest free are handed out first) and appends
//! `op=cancel`. Holds past their deadline are expired first.
//! Allowed after close too (a refund), so the returned number is free again
//! if the event reopens.
//!
//! Reply: integer, the lowest returned ticket number; nil if the user held
//! none.
//! Errors: `LISTED` (the user listed a ticket for resale: unlist it
//! first), `NOEVENT`, `ERR` (invalid event or user id), `TRYAGAIN` (the
//! event's keys disagree, see `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult};

use super::{guarded, integer_or_nil, write};
use crate::host::ffi::Argv;
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let returned = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::cancel(store, out, event, user, clock)
        })?;
        if returned.is_some() {
            stats::CANCELS.bump();
        }
        Ok(integer_or_nil(returned))
    })
}
