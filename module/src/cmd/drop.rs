//! `TICKET.DROP event [FORCE]` — deletes an event's keys.
//!
//! Refuses while the log still holds entries the sidecar has not drained
//! (and trimmed), unless `FORCE` is given: dropping an undrained log would
//! lose winners on their way to MySQL.
//!
//! Reply: integer, the number of keys deleted (0 if the event did not exist).
//! Errors: `UNSYNCED` (log not drained, no FORCE), `ERR` (invalid event id,
//! unknown option), `WRONGTYPE`.

use redis_module::{Context, RedisResult, RedisString, RedisValue};

use super::{arguments, guarded};
use crate::redis_store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let given = arguments(&argv, 1, 2)?;
        let event = args::event_id(given[0])?;
        let force = args::force_flag(given.get(1).copied())?;
        let mut store = RedisStore::open(ctx, event, Access::Write, None);
        Ok(RedisValue::Integer(pool::drop_event(
            &mut store, event, force,
        )?))
    })
}
