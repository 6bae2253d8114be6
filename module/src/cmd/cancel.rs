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
//! Errors: `NOEVENT`, `ERR` (invalid event or user id), `TRYAGAIN` (the
//! event's keys disagree, see `claim`), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisString};

use super::{exactly, guarded, integer_or_nil, now_ms};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let [event, user] = exactly(&argv)?;
        let (event, user) = (args::event_id(event)?, args::user_id(user)?);
        let mut store = RedisStore::open(ctx, event, Access::Write, Some((user, argv[2].inner)));
        let returned = pool::cancel(&mut store, event, user, now_ms())?;
        if returned.is_some() {
            stats::CANCELS.bump();
        }
        Ok(integer_or_nil(returned))
    })
}
