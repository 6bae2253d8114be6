//! `TICKET.SEATMAP event` — read-only: a seated event's seat states.
//!
//! Reply: a bulk string with one byte per seat id, in id order: `.` free,
//! `h` held, `s` sold, `a` free in an allocation, `r` listed for resale
//! and not held (a hold past its deadline shows `h` until it is expired); nil for an event that is not seated. On a replica it is the
//! primary's state as replicated.
//! Errors: `NOEVENT`, `TRYAGAIN` (being restored), `ERR` (invalid event
//! id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::guarded;
use crate::host::ffi::Argv;
use crate::host::store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        let mut store = RedisStore::open(ctx, event, Access::Read, None);
        Ok(match pool::seat_map(&mut store, event)? {
            Some(map) => RedisValue::StringBuffer(map),
            None => RedisValue::Null,
        })
    })
}
