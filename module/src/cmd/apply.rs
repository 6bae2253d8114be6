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

use std::os::raw::c_int;

use redis_module::raw::RedisModuleString;
use redis_module::{raw, Context, RedisResult, RedisValue};

use super::{bytes_of, guarded, CommandError};
use crate::error::TicketError;
use crate::redis_store::{Access, RedisStore};
use crate::{apply, stats};

/// Where the user id sits in `TICKET._APPLY 1 E <op> id at user ...` for
/// every op about a user's tickets.
const USER_ARG: usize = 6;

/// Takes Redis's argv as is (registered by hand in `lib.rs`: a replica runs
/// one of these per claim).
pub fn command(ctx: &Context, argv: &[*mut RedisModuleString]) -> RedisResult {
    guarded(|| {
        if !from_primary_or_aof(ctx) {
            return Err(TicketError::NoPerm(
                "TICKET._APPLY only runs replicated effects from a primary or the AOF".into(),
            )
            .into());
        }
        let args: Vec<&[u8]> = argv.iter().skip(1).map(|a| bytes_of(*a)).collect();
        let (event, effect) = protocol::effect::decode(&args)
            .map_err(|e| TicketError::Invalid(format!("TICKET._APPLY: {e}")))?;
        let user = argv
            .get(USER_ARG)
            .and_then(|s| Some((std::str::from_utf8(bytes_of(*s)).ok()?, *s)));
        let mut store = RedisStore::open(ctx, event, Access::Write, user);
        apply::apply(&mut store, &effect);
        drop(store);
        // SAFETY: the live command context.
        unsafe { raw::RedisModule_ReplicateVerbatim.unwrap()(ctx.ctx) };
        stats::APPLIED.bump();
        Ok::<_, CommandError>(RedisValue::SimpleStringStatic("OK"))
    })
}

/// Whether this call comes over the replication link or from the AOF.
fn from_primary_or_aof(ctx: &Context) -> bool {
    // SAFETY: a plain getter on the live context.
    let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx.ctx) };
    let allowed =
        (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) as c_int;
    flags & allowed != 0
}
