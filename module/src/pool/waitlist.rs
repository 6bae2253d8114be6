//! The waiting list's own commands (docs/design.md "The waiting list"):
//! `TICKET.WAIT`, `TICKET.LEAVE`, `TICKET.POSITION`. Serving the list (the
//! offer step) is part of what every write does first, in `settle`.

use std::borrow::Cow;

use protocol::effect::{Effect, WAIT_COUNT_SPAN};

use super::claim::within_limit;
use super::effects::Effects;
use super::model::Clock;
use super::settle::{live_meta, offer_waiting, prepare, settle_now};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.WAIT`: joins the waiting list for `count` tickets (idempotent:
/// a user already in it keeps the place and count). Returns the 1-based
/// position, or 0 when the user was offered tickets at once.
pub fn wait<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    count: Option<i64>,
    clock: Clock,
) -> Result<i64, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    if store.holder(user)?.is_some() {
        return Err(TicketError::Holding {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    }
    let count = within_limit(event, &meta, count)?;
    if store.score(Set::Waiting, user)?.is_none() {
        let seq = clock.now.max(meta.waitseq + 1);
        let place = seq.saturating_mul(WAIT_COUNT_SPAN).saturating_add(count);
        let user = Cow::Borrowed(user);
        out.apply(store, Effect::Wait { user, place });
        settle_now(store, out, event, clock)?;
    }
    Ok(store.waiting_rank(user)?.map_or(0, |rank| rank + 1))
}

/// `TICKET.LEAVE`: takes the user off the waiting list; returns whether the
/// user was on it. The next in line may be served now.
pub fn leave<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<bool, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    if store.score(Set::Waiting, user)?.is_none() {
        return Ok(false);
    }
    out.apply(
        store,
        Effect::Leave {
            user: Cow::Borrowed(user),
        },
    );
    offer_waiting(store, out, event, meta, clock.now)?;
    Ok(true)
}

/// `TICKET.POSITION`: the user's 1-based position in the waiting list.
pub fn position(
    store: &mut impl Store,
    event: &str,
    user: &str,
) -> Result<Option<i64>, TicketError> {
    live_meta(store, event)?;
    Ok(store.waiting_rank(user)?.map(|rank| rank + 1))
}
