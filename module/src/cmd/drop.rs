//! `TICKET.DROP event [FORCE]` — deletes an event's keys, leaving a trace.
//!
//! Deletes the meta hash, the pool, the holders, the holds and the waiting
//! list, but keeps the log and appends `op=drop` to it: the sidecar applies
//! the drop (the event's rows become `dropped`) and so tells it from Redis
//! losing the event. A later `TICKET.INIT` of the same id continues that log.
//! Refuses while the log still holds entries the sidecar has not drained
//! (and trimmed), unless `FORCE` is given: dropping an undrained log would
//! lose winners on their way to MySQL. An event being restored can be
//! dropped (that abandons the restore).
//!
//! Reply: integer, the number of keys deleted, the log not counted (0 if
//! the event had no key but its log: a drop is logged again; 0 and nothing
//! logged if the event had no key at all).
//! Errors: `UNSYNCED` (log not drained, no FORCE), `ERR` (invalid event id,
//! unknown option), `WRONGTYPE`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, force) = argv.parse(args::drop)?;
        let deleted = write(ctx, event, None, |store, out, clock| {
            pool::drop_event(store, out, event, force, clock.now)
        })?;
        Ok(RedisValue::Integer(deleted))
    })
}
