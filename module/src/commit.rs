//! The commit step: what happens to the effects the pool decided (and
//! already applied to the keys) once a command, or a sweep, is done with
//! the pool. Each effect is replicated as one `TICKET._APPLY`, counted in
//! `INFO ticket`, announced when it offers tickets to the head of a
//! waiting list (`ticket:{E}:offers`), and its hold deadlines are noted in
//! the expiry index. It runs whether the command succeeded or not: what the
//! pool applied before an error (an expiry before a `SOLDOUT`) stays.

use redis_module::Context;

use protocol::effect::Effect;
use protocol::record::Op;

use crate::expiry;
use crate::host::ffi::publish;
use crate::host::store::RedisStore;
use crate::pool::{Decided, Effects};
use crate::stats;

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
        Op::Init { .. } => note_deadlines(store.db(), store.event(), effect),
        _ => {}
    }
}

/// Notes in the expiry index the deadlines of the holds `effect` writes,
/// and when a new draw event opens (then the sweep draws it, with no
/// command at all). A replica does it for each effect it applies, so that
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
            _ => {}
        },
        Effect::RestoreOrders(orders) => orders
            .iter()
            .filter(|order| order.until > 0)
            .for_each(|order| expiry::note(db, event, order.until)),
        _ => {}
    }
}
