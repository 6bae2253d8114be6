//! `TICKET.LEAVE event user` — leaves the event's waiting list.
//!
//! An entrant's leave before or after a draw is logged (`op=leave`); any
//! other leave is replicated but not logged. Leaving may serve the next in
//! line (the offer step runs).
//!
//! Reply: 1 if the user left the list, else 0.
//! Errors: `NOEVENT`, `ERR` (invalid event or user id), `TRYAGAIN` (see
//! `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let left = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::leave(store, out, event, user, clock)
        })?;
        Ok(RedisValue::Integer(left.into()))
    })
}
