//! `TICKET.ALLOCATIONS event` — read-only: the event's allocations
//! (docs/design.md "Allocations").
//!
//! Reply: an array with one entry per allocation, in name order, each an
//! array `[name, free, claimed, release]`: its free tickets, the tickets
//! claimed from it (held or sold), and when it releases itself (unix ms;
//! nil for never). Never its key. Empty for an event without any.
//! Errors: `NOEVENT`, `TRYAGAIN` (being restored), `ERR` (invalid event
//! id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, integer_or_nil};
use crate::host::ffi::Argv;
use crate::host::store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        let mut store = RedisStore::open(ctx, event, Access::Read, None);
        let all = pool::allocations(&mut store, event)?;
        Ok(RedisValue::Array(
            all.into_iter()
                .map(|(name, a)| {
                    RedisValue::Array(vec![
                        RedisValue::BulkString(name),
                        RedisValue::Integer(a.free.len() as i64),
                        RedisValue::Integer(a.claimed),
                        integer_or_nil(a.release),
                    ])
                })
                .collect(),
        ))
    })
}
