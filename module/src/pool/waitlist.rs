//! The waiting list's own commands (docs/design.md "The waiting list"):
//! `TICKET.WAIT`, `TICKET.LEAVE`, `TICKET.POSITION`. Serving the list (the
//! offer step) is part of what every write does first, in `settle`. Before
//! a draw event's draw, `WAIT` enters the draw instead (`pool::draw`).

use std::borrow::Cow;

use protocol::effect::Effect;
use protocol::keys::WANTS_OFFERED;

use super::claim::within_limit;
use super::draw::{enter, join_place, take_off_list, ENTERED};
use super::effects::Effects;
use super::model::{Clock, ExpiredFrom};
use super::settle::{live_meta, offer_waiting, prepare, settle_now};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `POSITION`'s answer for a user holding an offer (as `WAIT`'s when the
/// user is offered at once).
pub const OFFERED: i64 = 0;

/// `TICKET.WAIT`: joins the waiting list for `count` tickets (idempotent:
/// a user already in it keeps the place and count). Returns the 1-based
/// position, or 0 when the user was offered tickets at once, or -1 when the
/// user entered a draw that has not been made yet.
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
    if let Some(draw) = meta.undrawn() {
        return enter(store, out, event, draw, user, count, clock.now);
    }
    if store.score(Set::Waiting, user)?.is_none() {
        let seq = clock.now.max(meta.waitseq + 1);
        let place = join_place(&meta, seq, count);
        let user = Cow::Borrowed(user);
        out.apply(store, Effect::Wait { user, place });
        settle_now(store, out, event, clock)?;
    }
    Ok(store.waiting_rank(user)?.map_or(OFFERED, |rank| rank + 1))
}

/// `TICKET.LEAVE`: takes the user off the waiting list; returns whether the
/// user was on it. The next in line may be served now. A draw's entrant
/// leaves in the log (`op=leave`), before or after the draw.
pub fn leave<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<bool, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let Some(place) = store.score(Set::Waiting, user)? else {
        return Ok(false);
    };
    take_off_list(store, out, &meta, Cow::Borrowed(user), place, clock.now)?;
    // Leaving changes nothing in the meta.
    offer_waiting(store, out, event, meta, clock)?;
    Ok(true)
}

/// `TICKET.POSITION`: the user's 1-based position in the waiting list, -1
/// for an entrant of a draw not made yet, 0 while the user holds an offer
/// of the list or the draw (on a primary: one not past its deadline, as
/// `expired_from` says), else nothing.
pub fn position(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<i64>, TicketError> {
    let meta = live_meta(store, event)?;
    if meta.undrawn().is_some() {
        return Ok(store.score(Set::Waiting, user)?.map(|_| ENTERED));
    }
    if let Some(rank) = store.waiting_rank(user)? {
        return Ok(Some(rank + 1));
    }
    if store.wants(user)? != Some(WANTS_OFFERED) || store.holder(user)?.is_none() {
        return Ok(None);
    }
    let until = store.score(Set::Holds, user)?;
    let lapsed = matches!((until, expired_from), (Some(u), Some(c)) if u <= c.now);
    Ok((until.is_some() && !lapsed).then_some(OFFERED))
}
