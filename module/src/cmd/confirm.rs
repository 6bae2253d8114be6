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

use redis_module::{Context, RedisResult, RedisString, RedisValue};

use super::{exactly, guarded, now_ms};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let [event, user] = exactly(&argv)?;
        let (event, user) = (args::event_id(event)?, args::user_id(user)?);
        let mut store = RedisStore::open(ctx, event, Access::Write, Some((user, argv[2].inner)));
        let sold = pool::confirm(&mut store, event, user, now_ms())?;
        Ok(RedisValue::Integer(sold))
    })
}
