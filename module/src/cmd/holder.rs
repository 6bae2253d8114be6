//! `TICKET.HOLDER event user` — read-only: which ticket a user holds.
//!
//! Reply: integer, the user's lowest ticket number (held or sold); nil if
//! the user holds none (on a primary, a hold past its deadline is none).
//! Errors: `NOEVENT`, `ERR` (invalid event or user id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisString};

use super::{exactly, expired_from, guarded, integer_or_nil};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let [event, user] = exactly(&argv)?;
        let (event, user) = (args::event_id(event)?, args::user_id(user)?);
        let mut store = RedisStore::open(ctx, event, Access::Read, Some((user, argv[2].inner)));
        Ok(integer_or_nil(pool::holder(
            &mut store,
            event,
            user,
            expired_from(ctx),
        )?))
    })
}
