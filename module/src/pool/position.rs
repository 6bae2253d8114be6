//! `TICKET.POSITION` (read-only): a user's place in the waiting list.

use protocol::keys::WANTS_OFFERED;

use super::draw::ENTERED;
use super::model::{ExpiredFrom, OFFERED};
use super::rules::live_meta;
use super::store::{Set, Store};
use crate::error::TicketError;
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
