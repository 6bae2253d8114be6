//! `TICKET.STATUS` (read-only): an event's counters, status, window and
//! incarnation; on a primary, holds past their deadline count as free.

use super::model::{DrawReport, ExpiredFrom, Report, Status};
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
    let lapsed = lapsed_seats.len() as i64;
    Ok(Report {
        total: meta.total,
        remaining: free_count(store, &meta)? + lapsed,
        claimed: store.len(Part::Holders)? + meta.extra - lapsed,
        held: meta.held - lapsed,
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
    })
}
