//! `TICKET.LEAVE`: leaves the waiting list (an entrant's leave is logged);
//! leaving may serve the next in line.

use std::borrow::Cow;

use super::draw::take_off_list;
use super::effects::Effects;
use super::model::Clock;
use super::settle::{offer_waiting, prepare};
use super::store::{Set, Store};
use crate::error::TicketError;
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
