//! `TICKET.SCAN`: a sold ticket admitted at the door, once, at its
//! current generation (docs/design.md "After the sale").

use protocol::record::{Op, Record};
use protocol::seats::Seat;

use super::effects::Effects;
use super::model::{Clock, Meta};
use super::rules::{generation, scanned};
use super::settle::prepare;
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.SCAN`: admits `ticket` presented at generation `gen`. Refused,
/// changing nothing: a ticket not sold (`NOTSOLD`), an old (or unknown)
/// generation (`STALE`), a ticket scanned already (`USED`); a ticket
/// listed for resale is not sold (`NOTSOLD`) until its buyer confirms.
pub fn scan<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    (ticket, gen): (i64, i64),
    gate: Option<&str>,
    clock: Clock,
) -> Result<(), TicketError> {
    let meta = prepare(store, out, event, clock)?;
    checked(store, &meta, (ticket, gen))?;
    let op = Op::Scan {
        ticket,
        gen,
        gate: gate.map(Box::from),
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    Ok(())
}

/// Whether `ticket` may be admitted at `gen` (the refusals of [`scan`]);
/// `TICKET.REAPPLY` asks it of a lost scan too.
pub(super) fn checked(
    store: &mut impl Store,
    meta: &Meta,
    (ticket, gen): (i64, i64),
) -> Result<(), TicketError> {
    if let Some(why) = unsold(store, meta, ticket)? {
        return Err(TicketError::NotSold {
            ticket,
            why: why.to_owned(),
        });
    }
    let current = generation(store, ticket)?;
    if gen != current {
        return Err(TicketError::Stale { ticket, current });
    }
    if let Some((at, _, gate)) = scanned(store, ticket)? {
        return Err(TicketError::Used { ticket, at, gate });
    }
    Ok(())
}

/// Why `ticket` is not sold, if it is not: free (in the pool, never
/// minted, an allocation's) or in a held order. A general-admission event
/// keeps no owner per ticket, so a held one is found among the held
/// orders (few once the sale is over: the doors open after it).
fn unsold(
    store: &mut impl Store,
    meta: &Meta,
    ticket: i64,
) -> Result<Option<&'static str>, TicketError> {
    if ticket > meta.total {
        return Ok(Some("is not a ticket of the event"));
    }
    if meta.listed > 0 && super::listing::listing(store, ticket)?.is_some() {
        return Ok(Some("is listed for resale"));
    }
    if meta.seated {
        let seat = store.seating(|_, state| state.state_of(ticket as u32))?;
        return Ok(match seat.flatten() {
            Some(Seat::Sold) => None,
            Some(Seat::Held) => Some("is held, not sold"),
            _ => Some("is free"),
        });
    }
    if ticket > meta.minted || store.is_free(ticket)? {
        return Ok(Some("is free"));
    }
    if meta.allocs.count > 0 {
        let allocations = store.allocations()?;
        if allocations.iter().any(|(_, a)| a.free.contains(&ticket)) {
            return Ok(Some("is free"));
        }
    }
    if meta.held > 0 {
        for (user, _) in store.lowest(Set::Holds, i64::MAX, usize::MAX)? {
            let held = store.holder(&user)?;
            if held.is_some_and(|t| t.as_slice().binary_search(&ticket).is_ok()) {
                return Ok(Some("is held, not sold"));
            }
        }
    }
    Ok(None)
}
