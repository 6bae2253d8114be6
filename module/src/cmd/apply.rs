//! `TICKET._APPLY version event op ...` — a replicated state change.
//!
//! Not for clients: the primary propagates one of these per state change
//! (see `protocol::effect` for the arguments), and a replica or the AOF
//! loader runs it through the same apply code the primary used, at the
//! primary's stream id, then propagates it verbatim to its own AOF and
//! sub-replicas. Refused unless it arrives over the replication link or
//! from the AOF (context flags `REPLICATED`/`LOADING`), so a client can never
//! forge state with it; on Redis 8+ it is also flagged `internal`.
//!
//! Reply: `OK`.
//! Errors: `NOPERM` (sent by a client), `ERR` (arguments no primary sends,
//! e.g. an effect version newer than this module: upgrade replicas first).

use redis_module::{Context, RedisResult, RedisValue};

use super::guarded;
use super::note_deadlines;
use crate::error::{CommandError, TicketError};
use crate::host::ffi::Argv;
use crate::host::ffi::{from_primary_or_aof, replicate_verbatim};
use crate::host::store::{Access, RedisStore};
use crate::pool::effects;
use crate::stats;

/// A replica runs one of these per claim: it reads Redis's argv in place.
pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        if !from_primary_or_aof(ctx) {
            return Err(TicketError::NoPerm(
                "TICKET._APPLY only runs replicated effects from a primary or the AOF".into(),
            )
            .into());
        }
        crate::fault::point(crate::fault::Point::Apply);
        let args: Vec<&[u8]> = argv.from(1).collect();
        let (event, effect) = protocol::effect::decode(&args)
            .map_err(|e| TicketError::Invalid(format!("TICKET._APPLY: {e}")))?;
        // The user id is one of the arguments, decoded in place: the store
        // reuses that argument's string.
        let user = effect.user().and_then(|user| {
            let at = args
                .iter()
                .position(|a| std::ptr::eq(*a, user.as_bytes()))?;
            argv.user(at + 1, user)
        });
        let mut store = RedisStore::open(ctx, event, Access::Write, user);
        effects::apply(&mut store, &effect);
        note_deadlines(store.db(), event, &effect);
        drop(store);
        replicate_verbatim(ctx);
        stats::APPLIED.bump();
        Ok::<_, CommandError>(RedisValue::SimpleStringStatic("OK"))
    })
}
