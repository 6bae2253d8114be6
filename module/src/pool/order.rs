//! `TICKET.ORDER` (read-only): a user's tickets, whether they are held or
//! sold, a seated event's seat names and each ticket's generation.

use super::model::{ExpiredFrom, OrderReport};
use super::rules::{generation, live_meta};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.ORDER`: the user's tickets and whether they are held or sold.
pub fn order(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<OrderReport>, TicketError> {
    let meta = live_meta(store, event)?;
    let Some(tickets) = store.holder(user)? else {
        return Ok(None);
    };
    let expires_at = store.score(Set::Holds, user)?;
    if let (Some(until), Some(clock)) = (expires_at, expired_from) {
        if until <= clock.now {
            return Ok(None);
        }
    }
    let seats = match meta.seated {
        true => super::seated::names(store, &tickets)?,
        false => None,
    };
    let gens = tickets
        .as_slice()
        .iter()
        .map(|t| generation(store, *t))
        .collect::<Result<Vec<i64>, _>>()?;
    Ok(Some(OrderReport {
        tickets,
        expires_at,
        seats,
        gens,
    }))
}
