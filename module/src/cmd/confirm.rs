//! `TICKET.CONFIRM event user` — a held order becomes sold (the payment
//! completed).
//!
//! Expires the event's holds past their deadline first, so a hold confirmed
//! after its deadline is refused even if no sweep has reached it yet.
//! Confirming a sold order changes nothing (a retried payment callback is
//! harmless); allowed after close. A real change appends `op=confirm`.
//!
//! Reply: integer, the number of tickets the user now holds (sold).
//! Errors: `NOHOLD` (the user holds nothing: never claimed, cancelled, or
//! the hold expired), `NOEVENT`, `ERR` (invalid event or user id),
//! `TRYAGAIN` (the event's keys disagree, see `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let sold = write(ctx, event, argv.user(2, user), |store, out, clock| {
            pool::confirm(store, out, event, user, clock)
        })?;
        Ok(RedisValue::Integer(sold))
    })
}
