//! `TICKET.POSITION event user` — read-only: a user's place in the waiting
//! list.
//!
//! Reply: the 1-based position, -1 for an entrant before the draw, 0 while
//! the user holds an offer of the list or the draw (until it is confirmed,
//! cancelled or expires; a primary counts an offer past its deadline as
//! expired, like `ORDER`), or nil.
//! Errors: `NOEVENT`, `ERR` (invalid event or user id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult};

use super::{expired_from, guarded, integer_or_nil};
use crate::host::ffi::Argv;
use crate::host::store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
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
