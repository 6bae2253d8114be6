//! A seated event's part of the pool (docs/design.md "Reserved seating"):
//! which seats a claim gets (best available, or the ones picked), which
//! seats an offer of the waiting list holds, and the seat figures `STATUS`
//! and `ORDER` add. The rules themselves are `protocol::seats::rule`,
//! run over the store's in-memory layout and seat state.

use protocol::record::{Pick, PickHow, Tickets};
use protocol::seats::{rule, Chosen, Impossible, Layout, NoFit, PickError, Request, SeatState};

use super::model::{Meta, SeatAsk, SeatReport};
use super::store::Store;
use crate::error::TicketError;

/// The seats a claim of `count` with `ask` gets, and how they were chosen;
/// `only`: a claim from an allocation, whose free seats these are (the
/// rules see every other seat taken).
pub(super) fn choose(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    ask: &SeatAsk,
    only: Option<&[i64]>,
) -> Result<(Tickets, Pick), TicketError> {
    let only: Option<Vec<u32>> = only.map(|ids| ids.iter().map(|id| seat_id(*id)).collect());
    let view = |l: &Layout| only.as_ref().map(|ids| SeatState::only(l, ids));
    let pick = |how| Pick {
        how,
        section: ask.section.clone(),
        category: ask.category.clone(),
        accessible: ask.accessible,
    };
    if let Some(ids) = &ask.ids {
        check_limit(event, meta, ids.len() as i64)?;
        let seats: Vec<u32> = ids.iter().map(|id| seat_id(*id)).collect();
        let verdict = seating(store, |l, s| {
            let view = view(l);
            let s = view.as_ref().unwrap_or(s);
            rule::check_pick(l, s, &seats).map_err(|e| pick_error(event, l, e))
        })?;
        verdict?;
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        return Ok((Tickets::from_sorted(sorted), pick(PickHow::Seats)));
    }
    let chosen = seating(store, |l, s| {
        let request = request(event, l, count, ask)?;
        let view = view(l);
        let s = view.as_ref().unwrap_or(s);
        rule::best(l, s, &request).map_err(|e| match rule::impossible(l, &request) {
            Some(why) => impossible(ask, count, why),
            None => no_fit(event, count, e),
        })
    })??;
    let how = if chosen.split {
        PickHow::Split
    } else {
        PickHow::Best
    };
    Ok((tickets(&chosen), pick(how)))
}

/// A seat id as the rules take it (0, no seat, when out of range).
fn seat_id(id: i64) -> u32 {
    u32::try_from(id).unwrap_or(0)
}

/// The seats an `ALLOCATE` of `count` takes (free non-accessible ones in
/// `SPLIT` order, within `SECTION`/`CATEGORY`), or exactly `ids` (each
/// free); `SHORT` when fewer are free, `TAKEN` for a picked seat that is
/// not.
pub(super) fn to_allocate(
    store: &mut impl Store,
    event: &str,
    count: i64,
    ask: &SeatAsk,
) -> Result<Tickets, TicketError> {
    if let Some(ids) = &ask.ids {
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        let verdict = seating(store, |l, s| {
            for pair in sorted.windows(2) {
                if pair[0] == pair[1] {
                    return Err(pick_error(event, l, PickError::Twice(seat_id(pair[0]))));
                }
            }
            for id in &sorted {
                let id = seat_id(*id);
                if id == 0 || id > l.total {
                    return Err(pick_error(event, l, PickError::Unknown(id)));
                }
                if !s.is_free(id) {
                    return Err(pick_error(event, l, PickError::Taken(id)));
                }
            }
            Ok(())
        })?;
        verdict?;
        return Ok(Tickets::from_sorted(sorted));
    }
    let ids = seating(store, |l, s| {
        let request = request(event, l, count, ask)?;
        rule::split_seats(l, s, &request)
            .map_err(|free| TicketError::short_of_event(event, i64::from(free)))
    })??;
    Ok(Tickets::from_sorted(
        ids.into_iter().map(i64::from).collect(),
    ))
}

/// The seats best available for a party of `count` with no filters (what
/// an offer of the waiting list holds), among `only` when given (free and
/// listed seats); `None` when none sit together.
pub(super) fn for_party(
    store: &mut impl Store,
    count: i64,
    only: Option<&[i64]>,
) -> Result<Option<Tickets>, TicketError> {
    let request = Request {
        count: u32::try_from(count).unwrap_or(u32::MAX),
        ..Request::default()
    };
    let only: Option<Vec<u32>> = only.map(|ids| ids.iter().map(|id| seat_id(*id)).collect());
    let chosen = seating(store, |l, s| {
        let view = only.as_ref().map(|ids| SeatState::only(l, ids));
        rule::best(l, view.as_ref().unwrap_or(s), &request).ok()
    })?;
    Ok(chosen.map(|c| tickets(&c)))
}

/// How many seats of each category are free (every category listed, in
/// layout order), and how many free seats are accessible; `extra` are
/// seats to count as free too (holds past their deadline, on a primary).
pub(super) fn free_by_category(
    store: &mut impl Store,
    extra: &[i64],
) -> Result<Option<SeatReport>, TicketError> {
    store.seating(|l, s| {
        let mut free = vec![0i64; l.categories.len()];
        let mut accessible = 0;
        for (r, row) in l.rows.iter().enumerate() {
            let summary = s.row(r as u32);
            free[row.category as usize] += i64::from(summary.free);
            accessible += i64::from(summary.free_accessible);
        }
        for &id in extra {
            let id = u32::try_from(id).unwrap_or(0);
            if let Some(row) = l.row_of(id) {
                free[row.category as usize] += 1;
                accessible += i64::from(l.is_accessible(id));
            }
        }
        let names = l.categories.iter().cloned().zip(free).collect();
        (names, accessible)
    })
}

/// The names of `tickets` (`A-2-103`), for a seated event.
pub(super) fn names(
    store: &mut impl Store,
    tickets: &Tickets,
) -> Result<Option<Vec<String>>, TicketError> {
    store.seating(|l, _| {
        tickets
            .as_slice()
            .iter()
            .map(|id| l.seat_name(u32::try_from(*id).unwrap_or(0)))
            .collect()
    })
}

/// Runs `f` on the event's seating (an event whose meta says seated has
/// one: else its keys were tampered with).
fn seating<T>(
    store: &mut impl Store,
    f: impl FnOnce(&Layout, &SeatState) -> T,
) -> Result<T, TicketError> {
    store
        .seating(f)?
        .ok_or_else(|| TicketError::Corrupt("a seated event without its seats".into()))
}

fn tickets(chosen: &Chosen) -> Tickets {
    Tickets::from_sorted(chosen.ids.iter().map(|id| i64::from(*id)).collect())
}

fn check_limit(event: &str, meta: &Meta, asked: i64) -> Result<(), TicketError> {
    if asked > meta.limit {
        return Err(TicketError::Limit {
            event: event.to_owned(),
            limit: meta.limit,
            asked,
        });
    }
    Ok(())
}

/// The rule's request: the section and category by name (unknown: `ERR`).
fn request(event: &str, l: &Layout, count: i64, ask: &SeatAsk) -> Result<Request, TicketError> {
    let unknown = |what: &str, name: &str| {
        TicketError::Invalid(format!(
            "event {} has no {what} {}",
            crate::error::quote(event.as_bytes()),
            crate::error::quote(name.as_bytes())
        ))
    };
    let section = match &ask.section {
        Some(name) => Some(
            l.section_index(name)
                .ok_or_else(|| unknown("section", name))?,
        ),
        None => None,
    };
    let category = match &ask.category {
        Some(name) => Some(
            l.category_index(name)
                .ok_or_else(|| unknown("category", name))?,
        ),
        None => None,
    };
    Ok(Request {
        count: count as u32,
        section,
        category,
        accessible: ask.accessible.map(|a| a as u32),
        split: ask.split,
    })
}

fn no_fit(event: &str, count: i64, e: NoFit) -> TicketError {
    match e {
        NoFit::SoldOut => TicketError::SoldOut(event.to_owned()),
        NoFit::NotTogether { free } => TicketError::NotTogether {
            event: event.to_owned(),
            count,
            free: i64::from(free),
        },
    }
}

/// The `ERR` for a request the layout could never seat, saying what to
/// change.
fn impossible(ask: &SeatAsk, count: i64, why: Impossible) -> TicketError {
    let q = |name: &str| crate::error::quote(name.as_bytes());
    let rows = match (&ask.section, &ask.category) {
        (Some(s), Some(c)) => format!("the rows of section {} in category {}", q(s), q(c)),
        (Some(s), None) => format!("the rows of section {}", q(s)),
        (None, Some(c)) => format!("the rows in category {}", q(c)),
        (None, None) => "the venue's rows".to_owned(),
    };
    let a = ask.accessible.unwrap_or(0);
    TicketError::Invalid(match why {
        Impossible::NoRow => format!("{rows}: there are none; ask another SECTION or CATEGORY"),
        Impossible::Accessible { have } => format!(
            "ACCESSIBLE {a}: {rows} have {have} wheelchair spaces in all; ask for fewer"
        ),
        Impossible::AccessibleApart => format!(
            "ACCESSIBLE {a}: no {count} adjacent seats of {rows} hold {a} wheelchair spaces; ask for fewer"
        ),
        Impossible::NotTogether { longest } => format!(
            "COUNT {count}: no {count} seats of {rows} are side by side (at most {longest}); ask for fewer or add SPLIT"
        ),
        Impossible::Capacity { have } => format!(
            "COUNT {count}: {rows} have only {have} seats a claim may take"
        ),
    })
}

fn pick_error(event: &str, l: &Layout, e: PickError) -> TicketError {
    match e {
        PickError::Unknown(id) => TicketError::Invalid(format!(
            "seat {id} is not a seat of event {} (1..={})",
            crate::error::quote(event.as_bytes()),
            l.total
        )),
        PickError::Twice(id) => TicketError::Invalid(format!("seat {id} is given twice")),
        PickError::Taken(id) => TicketError::Taken(l.seat_name(id)),
        PickError::Orphan { lone, from, to } => TicketError::Orphan {
            lone: l.seat_name(lone),
            from: l.seat_name(from),
            to: l.seat_name(to),
        },
    }
}
