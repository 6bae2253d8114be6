//! `TICKET.REAPPLY event [SINCE <id>] <field> <value> [<field> <value> ...]`
//! — re-applies a write an unplanned failover lost (operator/sidecar only:
//! the heal of `ticketgate-sidecar` sends it).
//!
//! The fields are those of the lost log entry as MySQL's journal has them
//! (`op`, `event`, `user`, `ticket`/`tickets`, `until`, `count`, `seed`,
//! `at`; the `event`
//! field must name the event). `SINCE`: the last log entry the caller read;
//! an entry logged after it that touches the record's user or tickets
//! refuses it. The condition of each op (see `pool::reapply`), and that the
//! new primary answered nothing about the user or tickets without logging
//! it (`pool::note`), are checked atomically; if they hold the record is
//! appended unchanged (same fields, a new id) and replicated as one
//! effect.
//!
//! Reply: the new entry's id (bulk string).
//! Errors (nothing changed): `CHANGED` (the condition no longer holds, with
//! the reason), `ERR` (odd field count, a field the log format refuses, an
//! `init`/`drop`/`restore`, an `allocate`/`release`, a `resold`),
//! `NOEVENT`, `TRYAGAIN` (the event is being restored, or its keys
//! disagree), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, since, record) = argv.parse(args::reapply)?;
        let id = write(ctx, event, None, |store, out, clock| {
            pool::reapply(store, out, event, (record, since), clock.now)
        })?;
        Ok(RedisValue::BulkString(id.to_string()))
    })
}
