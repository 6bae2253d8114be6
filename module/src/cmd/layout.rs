//! `TICKET.LAYOUT event` — read-only: a seated event's layout.
//!
//! Reply: the layout as stored (JSON: every default filled in, each row's
//! `first_id` added; docs/design.md "Reserved seating"), or nil for an
//! event that is not seated.
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
        Ok(match pool::layout(&mut store, event)? {
            Some(json) => RedisValue::BulkString(json),
            None => RedisValue::Null,
        })
    })
}
