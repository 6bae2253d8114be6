//! One file per `TICKET.*` command (each opens with its syntax, replies and
//! errors) and the command table ([`table`]) that registration and
//! `COMMAND DOCS` both come from (the load step hands it to the host). This
//! file holds what the commands share: the panic guard at the command
//! boundary, reply helpers, and [`write`], which runs a pool call on the
//! event's keys and commits what it decided ([`crate::commit`]).

pub mod apply;
pub mod cancel;
pub mod claim;
pub mod confirm;
pub mod drop;
pub mod healed;
pub mod holder;
pub mod init;
pub mod layout;
pub mod open_close;
pub mod order;
pub mod reapply;
pub mod restore;
pub mod seatmap;
pub mod status;
pub mod table;
pub mod waitlist;

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use redis_module::{Context, RedisError, RedisResult, RedisValue};

use protocol::record::Tickets;

use crate::commit::commit;
use crate::error::{CommandError, TicketError};
use crate::expiry;
use crate::host::argv::UserArg;
use crate::host::ffi::{is_primary, now_ms};
use crate::host::note;
use crate::host::store::{Access, RedisStore};
use crate::pool::{self, Clock, Effects, ExpiredFrom};

/// Runs a command body, turning a [`TicketError`] into its error reply
/// (a panic is caught by the command's entry point, `host::register`).
pub fn guarded(body: impl FnOnce() -> Result<RedisValue, CommandError>) -> RedisResult {
    match body() {
        Ok(value) => Ok(value),
        Err(CommandError::Arity) => Err(RedisError::WrongArity),
        Err(CommandError::Ticket(e)) => Err(RedisError::String(e.to_string())),
    }
}

/// Opens `event`'s keys for writing, runs `decide` (a pool call) at the
/// command's [`Clock`] and commits the effects it decided, whether it
/// succeeded or not. On a promoted primary, an answer to `user` that logged
/// nothing is noted first (`pool::note`).
pub fn write<'a, T>(
    ctx: &Context,
    event: &'a str,
    user: Option<UserArg<'a>>,
    decide: impl FnOnce(&mut RedisStore<'a>, &mut Effects<'a>, Clock) -> Result<T, TicketError>,
) -> Result<T, TicketError> {
    let mut store = RedisStore::open(ctx, event, Access::Write, user);
    let clock = clock(store.db(), event);
    let mut effects = Effects::default();
    let decided = catch_unwind(AssertUnwindSafe(|| {
        crate::fault::point(crate::fault::Point::Command);
        decide(&mut store, &mut effects, clock)
    }));
    let mut outcome = match decided {
        Ok(outcome) => outcome,
        Err(panic) => {
            // What the pool applied before the panic (expiries due anyway)
            // is replicated like any change, so replicas and the AOF stay
            // identical; the entry point reports the panic.
            commit(ctx, &mut store, &effects);
            resume_unwind(panic)
        }
    };
    if let (Some(term), Some((user, _))) = (note::term(), user) {
        if pool::note::tells(&outcome) {
            // A note that cannot be written (a key of the wrong type) must
            // not leave an answer the heal could take back.
            if let Err(e) = pool::note::answered(&mut store, &mut effects, user, term) {
                outcome = Err(e);
            }
        }
    }
    commit(ctx, &mut store, &effects);
    outcome
}

/// Now, whether the expiry index says a hold of the event may be due, and
/// the most offers the command may make.
fn clock(db: i32, event: &str) -> Clock {
    let now = now_ms();
    Clock {
        now,
        maybe_due: expiry::maybe_due(db, event, now),
        offers: expiry::sweep_max(),
    }
}

/// An integer reply, or nil.
pub fn integer_or_nil(value: Option<i64>) -> RedisValue {
    value.map_or(RedisValue::Null, RedisValue::Integer)
}

/// Ticket numbers as an array reply.
pub fn ticket_array(tickets: &Tickets) -> RedisValue {
    RedisValue::Array(
        tickets
            .as_slice()
            .iter()
            .map(|t| RedisValue::Integer(*t))
            .collect(),
    )
}

/// From when reads count holds past their deadline as free: now on a
/// primary; never on a replica, which shows a hold until its primary's
/// `op=expire` arrives (or it is promoted and sweeps it itself).
pub fn expired_from(ctx: &Context, store: &RedisStore<'_>) -> ExpiredFrom {
    is_primary(ctx).then(|| clock(store.db(), store.event()))
}
