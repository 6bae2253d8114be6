//! One file per `TICKET.*` command (each opens with its syntax, replies and
//! errors) and the command table ([`table`]) that registration and
//! `COMMAND DOCS` both come from (the load step hands it to the host). This
//! file holds what the commands share: turning an error into its reply,
//! reply helpers, [`write()`], which runs a pool call on the event's keys, and
//! [`commit`], the step that follows every write (and every sweep): each
//! effect the pool decided (and already applied to the keys) is replicated
//! as one `TICKET._APPLY`, counted in `INFO ticket`, announced when it
//! offers tickets to the head of a waiting list (`ticket:{E}:offers`), and
//! its hold deadlines are noted in the expiry index. It runs whether the
//! command succeeded or not: what the pool applied before an error (an
//! expiry before a `SOLDOUT`) stays.

pub mod allocate;
pub mod allocations;
pub mod apply;
pub mod cancel;
#[cfg(test)]
mod checklist;
pub mod claim;
pub mod close;
pub mod confirm;
pub mod drop;
pub mod healed;
pub mod holder;
pub mod init;
pub mod layout;
pub mod leave;
pub mod open;
pub mod order;
pub mod position;
pub mod reapply;
pub mod release;
pub mod resell;
pub mod restore;
pub mod scan;
pub mod seatmap;
pub mod status;
pub mod table;
pub mod transfer;
pub mod unlist;
pub mod wait;

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use redis_module::{Context, RedisError, RedisResult, RedisValue};

use protocol::effect::Effect;
use protocol::record::{Op, Tickets};

use crate::error::{CommandError, TicketError};
use crate::expiry;
use crate::host::ffi::UserArg;
use crate::host::ffi::{is_primary, now_ms, publish};
use crate::host::store::{Access, RedisStore};
use crate::pool::{self, Clock, Decided, Effects, ExpiredFrom};
use crate::stats;

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
    if let (Some(term), Some((user, _))) = (stats::term(), user) {
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

/// Replicates, counts, announces and notes the deadlines of `effects`, and
/// tells the sweep when the pool wants the event visited again (offers left
/// to it).
pub fn commit(ctx: &Context, store: &mut RedisStore<'_>, effects: &Effects<'_>) {
    effects.for_each(|effect| commit_one(ctx, store, effect));
    if let Some(at) = effects.again() {
        expiry::note(store.db(), store.event(), at);
    }
}

/// The commit step of one effect (one look at what it is: this runs once
/// per claim).
fn commit_one(ctx: &Context, store: &mut RedisStore<'_>, effect: &Decided<'_>) {
    store.replicate(effect);
    let Effect::Append { record, .. } = effect else {
        note_deadlines(store.db(), store.event(), effect);
        return;
    };
    match &record.op {
        Op::Hold { until, .. } => {
            stats::HOLDS.bump();
            expiry::note(store.db(), store.event(), *until);
        }
        Op::Offer { user, until, .. } => {
            expiry::note(store.db(), store.event(), *until);
            let channel = protocol::keys::offers_channel(store.event());
            publish(ctx, channel.as_bytes(), user.as_bytes());
        }
        Op::Confirm { .. } => stats::CONFIRMS.bump(),
        Op::Expire { .. } => stats::EXPIRED.bump(),
        Op::Init { .. } | Op::Allocate { .. } => note_deadlines(store.db(), store.event(), effect),
        _ => {}
    }
}

/// Notes in the expiry index the deadlines of the holds `effect` writes,
/// when a new draw event opens (then the sweep draws it, with no command
/// at all) and when an allocation releases itself. A replica does it for each effect it applies, so that
/// once promoted it expires them.
pub fn note_deadlines<U: AsRef<str>>(db: i32, event: &str, effect: &Effect<U>) {
    match effect {
        Effect::Append { record, .. } => match &record.op {
            Op::Hold { until, .. } | Op::Offer { until, .. } => expiry::note(db, event, *until),
            Op::Init {
                opens_at,
                draw: Some(_),
                ..
            } if *opens_at > 0 => expiry::note(db, event, *opens_at),
            // An allocation releases itself then (the sweep releases it).
            Op::Allocate {
                release: Some(at), ..
            } => expiry::note(db, event, *at),
            _ => {}
        },
        Effect::RestoreOrders(orders) => orders
            .iter()
            .filter(|order| order.until > 0)
            .for_each(|order| expiry::note(db, event, order.until)),
        Effect::RestoreAllocation(allocation) => {
            if let Some(at) = allocation.release {
                expiry::note(db, event, at);
            }
        }
        _ => {}
    }
}
