//! `TICKET.STATUS` (read-only): an event's counters, status, window and
//! incarnation; on a primary, holds past their deadline count as free (a
//! listed ticket's: as listed).

use super::model::{DrawReport, ExpiredFrom, Meta, Report, Status};
use super::rules::existing_meta;
use super::rules::free_count;
use super::store::{Part, Set, Store};
use crate::error::TicketError;

/// `TICKET.STATUS`; holds past their deadline count as free on the primary.
pub fn report(
    store: &mut impl Store,
    event: &str,
    expired_from: ExpiredFrom,
) -> Result<Report, TicketError> {
    let meta = existing_meta(store, event)?;
    let mut lapsed_seats = Vec::new();
    // A restore in progress expires nothing, not even in what it reports.
    let expired_from = expired_from.filter(|_| meta.status != Status::Restoring);
    if let Some(clock) = expired_from.filter(|clock| clock.maybe_due) {
        for (user, _) in store.lowest(Set::Holds, clock.now, usize::MAX)? {
            if let Some(t) = store.holder(&user)? {
                lapsed_seats.extend_from_slice(t.as_slice());
            }
        }
    }
    // Every lapsed ticket leaves its buyer's order; the listed ones go
    // back on the list, the others into free stock.
    let out = store.len(Part::Holders)? + meta.extra - lapsed_seats.len() as i64;
    let held = meta.held - lapsed_seats.len() as i64;
    let (resale, twice) = match meta.listed {
        0 => (0, 0),
        _ => resale_counts(store, &meta, &mut lapsed_seats)?,
    };
    let lapsed = lapsed_seats.len() as i64;
    Ok(Report {
        total: meta.total,
        remaining: free_count(store, &meta)? + lapsed,
        claimed: out - twice,
        held,
        status: meta.status,
        opens_at: meta.opens_at,
        closes_at: meta.closes_at,
        unsynced: store.len(Part::Log)?,
        waiting: store.len(Part::Waiting)?,
        incarnation: meta.incarnation,
        draw: meta.draw.map(|d| DrawReport {
            commitment: d.commitment,
            seed: d.seed.filter(|_| d.drawn_at.is_some()),
            admit: d.admit,
        }),
        seats: match meta.seated {
            true => super::seated::free_by_category(store, &lapsed_seats)?,
            false => None,
        },
        allocated: i64::from(meta.allocs.free),
        resale,
    })
}

/// The listed tickets nobody holds (those in holds past their deadline
/// too, which leave `lapsed`: they go back on the list, not into free
/// stock), and how many listed tickets are counted in two orders.
fn resale_counts(
    store: &mut impl Store,
    meta: &Meta,
    lapsed: &mut Vec<i64>,
) -> Result<(i64, i64), TicketError> {
    let listings = super::listing::listings(store, meta)?;
    let (mut resale, mut twice) = (0, 0);
    for (ticket, listing) in listings {
        if listing.buyer.is_none() {
            resale += 1;
        } else if let Some(at) = lapsed.iter().position(|t| *t == ticket) {
            lapsed.swap_remove(at);
            resale += 1;
        } else {
            twice += 1;
        }
    }
    Ok((resale, twice))
}
