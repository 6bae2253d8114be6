//! `TICKET.HOLDER` (read-only): a user's lowest ticket.

use super::model::ExpiredFrom;
use super::order::order;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.HOLDER`: the user's lowest ticket, if any.
pub fn holder(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<i64>, TicketError> {
    Ok(order(store, event, user, expired_from)?.map(|o| o.tickets.lowest()))
}
