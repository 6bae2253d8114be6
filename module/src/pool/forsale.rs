//! The stock a claim or a waiting-list offer takes from once a listed
//! ticket may be among it (docs/design.md "After the sale"): free tickets
//! first (the house sells its own stock first), then tickets listed for
//! resale that no buyer holds, when no free ones fit.

use protocol::record::Tickets;

use super::listing::for_sale;
use super::model::{Meta, SeatAsk};
use super::rules::{free_count, lowest_free};
use super::store::Store;
use crate::error::TicketError;

/// The `count` lowest free numbers ([`lowest_free`]); when fewer are free
/// and tickets are listed, [`with_listed`].
pub(super) fn lowest_or_listed(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    chunk: i64,
) -> Result<(Tickets, Option<i64>), TicketError> {
    match lowest_free(store, event, meta, count, chunk) {
        Err(TicketError::SoldOut(_)) if meta.listed > 0 => with_listed(store, event, meta, count),
        taken => taken,
    }
}

/// Every free number and the lowest listed tickets nobody holds, `count`
/// in all (`SOLDOUT` when there are fewer), and the new `minted`.
pub(super) fn with_listed(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
) -> Result<(Tickets, Option<i64>), TicketError> {
    let free = free_count(store, meta)?;
    let listed = for_sale(store, meta)?;
    if free + (listed.len() as i64) < count {
        return Err(TicketError::SoldOut(event.to_owned()));
    }
    // Every free number: the new ones above every sold (listed) one.
    let (mut tickets, minted) = match free {
        0 => (Vec::new(), None),
        n => {
            let (free, minted) = lowest_free(store, event, meta, n, 1)?;
            (free.as_slice().to_vec(), minted)
        }
    };
    tickets.extend(listed.iter().take((count - free) as usize));
    tickets.sort_unstable();
    Ok((Tickets::from_sorted(tickets), minted))
}

/// How many tickets a waiting head may be offered: the free ones and the
/// listed ones nobody holds.
pub(super) fn offerable(store: &mut impl Store, meta: &Meta) -> Result<i64, TicketError> {
    let free = free_count(store, meta)?;
    Ok(free + for_sale(store, meta)?.len() as i64)
}

/// A seated event's seats free or listed (nobody holding them), for a
/// claim or an offer that found no free seats fit; `None` when nothing is
/// listed.
pub(super) fn seats_or_listed(
    store: &mut impl Store,
    meta: &Meta,
) -> Result<Option<Vec<i64>>, TicketError> {
    let listed = for_sale(store, meta)?;
    if listed.is_empty() {
        return Ok(None);
    }
    let free = store
        .seating(|l, s| {
            (1..=l.total)
                .filter(|id| s.is_free(*id))
                .map(i64::from)
                .collect::<Vec<i64>>()
        })?
        .unwrap_or_default();
    let mut both = [free, listed].concat();
    both.sort_unstable();
    Ok(Some(both))
}

/// A seated claim's seats among the free and listed ones, after none of
/// the free ones fit (`refused`: that answer, kept when these do not fit
/// either).
pub(super) fn choose_listed(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    (count, ask): (i64, &SeatAsk),
    refused: TicketError,
) -> Result<(Tickets, protocol::record::Pick), TicketError> {
    let Some(among) = seats_or_listed(store, meta)? else {
        return Err(refused);
    };
    super::seated::choose(store, event, meta, count, ask, Some(&among)).map_err(|_| refused)
}
