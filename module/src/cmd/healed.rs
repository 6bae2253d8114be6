//! `TICKET.HEALED event` — the sidecar's heal of the event is done, or the
//! sidecar found nothing to heal (operator/sidecar only: the sidecar's
//! verifier sends it after each check of the event).
//!
//! A primary promoted by a role change notes the users (and their tickets)
//! it answered about without logging anything, so that `TICKET.REAPPLY`
//! never takes such an answer back (`pool::note`). This ends that: the note
//! is replaced by one field closing it for this primary's term (answers of
//! the same term note nothing more), or deleted on a node never promoted.
//! One replicated effect, or nothing when there is nothing to change.
//!
//! Reply: integer, 1 if the note changed, 0 if not.
//! Errors (nothing changed): `ERR` (invalid event id), `WRONGTYPE` (the
//! note key holds another type).

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        let term = stats::term().unwrap_or(0);
        let changed = write(ctx, event, None, |store, out, _| {
            pool::note::healed(store, out, term)
        })?;
        Ok(RedisValue::Integer(i64::from(changed)))
    })
}
