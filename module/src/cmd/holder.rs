//! `TICKET.HOLDER event user` — read-only: which ticket a user holds.
//!
//! Reply: integer, the user's lowest ticket number (held or sold); nil if
//! the user holds none (on a primary, a hold past its deadline is none).
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
        let lowest = pool::holder(&mut store, event, user, expired_from)?;
        Ok(integer_or_nil(lowest))
    })
}
