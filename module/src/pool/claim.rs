//! Claims and checkout: what `TICKET.INIT`, `CLAIM`, `CONFIRM`, `CANCEL`,
//! `OPEN`/`CLOSE`, `DROP` and the reads (`ORDER`, `HOLDER`, `STATUS`) do to
//! an event (docs/design.md "The lazy pool", "Holds and expiry").
//!
//! A user's order is one or more tickets, sold, or held until a deadline.
//! Time enters only as the command's [`Clock`]: a claim, confirm or cancel
//! first expires the event's holds due at `now` (the same function the
//! sweep runs), so a hold is free from its deadline on; reads take an
//! [`ExpiredFrom`] that says whether to count due holds as free (a primary)
//! or as held (a replica, which waits for its primary). While anyone waits,
//! a claim by a user without tickets is `SOLDOUT`.

use std::borrow::Cow;

use protocol::effect::Checkout;
use protocol::record::{Incarnation, Op, Pick, Record, Tickets};

use super::draw::entrants_wait;
use super::effects::Effects;
use super::model::{
    Claim, ClaimOptions, Clock, DrawReport, ExpiredFrom, Meta, OrderReport, Report, Status,
};
use super::settle::{
    any_state, check_consistent, existing_meta, live_meta, prepare, settle_now, type_check_all,
};
use super::store::{Part, Set, Store};
use super::tickets::{free_count, lowest_free};
use crate::error::TicketError;

/// `TICKET.INIT`: creates the meta hash (the pool stays empty until the first
/// claim mints a chunk, so any size inits in O(1)) of incarnation
/// `incarnation` (drawn by the command: this stays pure).
pub fn init(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    window: (i64, i64, i64),
    checkout: Checkout,
    incarnation: Incarnation,
    now: i64,
) -> Result<(), TicketError> {
    let (total, opens_at, closes_at) = window;
    let op = Op::Init {
        layout: None,
        total,
        opens_at,
        closes_at,
        checkout,
        incarnation: Some(incarnation),
        draw: None,
    };
    create(store, out, event, op, now)
}

/// `TICKET.INIT` of the event `init` (an `Op::Init`, a draw event's terms
/// and secret seed included, drawn by the command: this stays pure).
pub fn create<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    init: Op<Cow<'a, str>>,
    now: i64,
) -> Result<(), TicketError> {
    if store.meta()?.is_some() || any_state(store)? {
        return Err(TicketError::Exists(event.to_owned()));
    }
    // Type-check the log before the first write.
    store.len(Part::Log)?;
    out.append(store, Record { op: init, at: now }, None, None);
    Ok(())
}

/// `TICKET.CLAIM`: the user's existing tickets, or the `count` lowest free
/// ones, sold at once or held.
pub fn claim<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    options: ClaimOptions,
    clock: Clock,
    chunk: i64,
) -> Result<Claim, TicketError> {
    let now = clock.now;
    let meta = prepare(store, out, event, clock)?;
    if let Some(tickets) = store.holder(user)? {
        return repeat(store, user, tickets, &options);
    }
    let count = within_limit(event, &meta, options.count)?;
    selling(store, event, &meta, now)?;
    // check_consistent has type-checked every key, so no write fails.
    let (tickets, minted, pick) = tickets_for(store, event, &meta, count, &options, chunk)?;
    let hold = options.hold.unwrap_or(meta.hold);
    let user = Cow::Borrowed(user);
    let op = match hold {
        0 => Op::Claim {
            pick,
            user,
            tickets: tickets.clone(),
        },
        _ => Op::Hold {
            pick,
            user,
            tickets: tickets.clone(),
            until: now.saturating_add(hold),
        },
    };
    out.append(store, Record { op, at: now }, minted, None);
    Ok(match hold {
        0 => Claim::New(tickets),
        _ => Claim::Held(tickets),
    })
}

/// A claim by a user who holds `tickets`: they are the answer, whatever
/// `COUNT` says, but a pick of other `SEATS` is refused (`HOLDING`) rather
/// than quietly answered with the seats held before.
fn repeat(
    store: &mut impl Store,
    user: &str,
    tickets: Tickets,
    options: &ClaimOptions,
) -> Result<Claim, TicketError> {
    let picked = options.seats.as_ref().and_then(|ask| ask.ids.as_ref());
    let Some(picked) = picked else {
        return Ok(Claim::Repeat(tickets));
    };
    let mut picked = picked.clone();
    picked.sort_unstable();
    if picked == tickets.as_slice() {
        return Ok(Claim::Repeat(tickets));
    }
    let seats = super::seated::names(store, &tickets)?.unwrap_or_default();
    Err(TicketError::HoldsOthers {
        user: user.to_owned(),
        seats,
    })
}

/// Whether the event sells to a new claim now: drawn (a draw event sells
/// nothing before its draw, made as it first accepts claims by the settle
/// step), open, inside its window, and nobody waiting ahead (no queue
/// jumping: the offer step has served whoever it could).
fn selling(store: &mut impl Store, event: &str, meta: &Meta, now: i64) -> Result<(), TicketError> {
    let not_open = || TicketError::NotOpen {
        event: event.to_owned(),
        opens_at: meta.opens_at,
    };
    if meta.undrawn().is_some() {
        return Err(not_open());
    }
    if meta.status == Status::Closed || (meta.closes_at > 0 && now >= meta.closes_at) {
        return Err(TicketError::Closed(event.to_owned()));
    }
    if now < meta.opens_at {
        return Err(not_open());
    }
    if meta.waitseq > 0 && store.len(Part::Waiting)? > 0 {
        return Err(match entrants_wait(store, meta)? {
            true => TicketError::Queue(event.to_owned()),
            false => TicketError::SoldOut(event.to_owned()),
        });
    }
    Ok(())
}

/// A claim's tickets, the new `minted` when it minted, how seats were chosen.
type Taken = (Tickets, Option<i64>, Option<Box<Pick>>);

/// The tickets a claim of `count` gets: the lowest free numbers (and the
/// new `minted`), or a seated event's seats and how they were chosen.
fn tickets_for(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    options: &ClaimOptions,
    chunk: i64,
) -> Result<Taken, TicketError> {
    if meta.seated {
        let ask = options.seats.as_deref().cloned().unwrap_or_default();
        let (tickets, pick) = super::seated::choose(store, event, meta, count, &ask)?;
        return Ok((tickets, None, Some(Box::new(pick))));
    }
    if options.seats.is_some() {
        return Err(TicketError::Invalid(format!(
            "event {} is not seated: SECTION, CATEGORY, ACCESSIBLE, SPLIT and SEATS need TICKET.INIT ... SEATS",
            crate::error::quote(event.as_bytes())
        )));
    }
    let (tickets, minted) = lowest_free(store, event, meta, count, chunk)?;
    Ok((tickets, minted, None))
}

/// `count` (default 1), or `LIMIT` when it is above the event's limit.
pub(super) fn within_limit(
    event: &str,
    meta: &Meta,
    count: Option<i64>,
) -> Result<i64, TicketError> {
    let count = count.unwrap_or(1);
    if count > meta.limit {
        return Err(TicketError::Limit {
            event: event.to_owned(),
            limit: meta.limit,
            asked: count,
        });
    }
    Ok(count)
}

/// `TICKET.CONFIRM`: the user's held order becomes sold; returns how many
/// tickets the user holds. A sold order is confirmed already (no change).
pub fn confirm<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<i64, TicketError> {
    prepare(store, out, event, clock)?;
    let Some(tickets) = store.holder(user)? else {
        return Err(TicketError::NoHold {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    };
    let count = tickets.as_slice().len() as i64;
    if store.score(Set::Holds, user)?.is_some() {
        let op = Op::Confirm {
            user: Cow::Borrowed(user),
            tickets,
        };
        out.append(store, Record { op, at: clock.now }, None, None);
    }
    Ok(count)
}

/// `TICKET.CANCEL`: returns all the user's tickets (held or sold) to the
/// pool; replies with the lowest.
pub fn cancel<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<Option<i64>, TicketError> {
    prepare(store, out, event, clock)?;
    let Some(tickets) = store.holder(user)? else {
        return Ok(None);
    };
    let lowest = tickets.lowest();
    // check_consistent has type-checked every key, so no write fails.
    let op = Op::Cancel {
        user: Cow::Borrowed(user),
        tickets,
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    settle_now(store, out, event, clock)?;
    Ok(Some(lowest))
}

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
    Ok(Some(OrderReport {
        tickets,
        expires_at,
        seats,
    }))
}

/// `TICKET.HOLDER`: the user's lowest ticket, if any.
pub fn holder(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<i64>, TicketError> {
    Ok(order(store, event, user, expired_from)?.map(|o| o.tickets.lowest()))
}

/// `TICKET.OPEN` / `TICKET.CLOSE`: sets the status; logs only a real change.
pub fn set_status(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    status: Status,
    clock: Clock,
) -> Result<(), TicketError> {
    let meta = live_meta(store, event)?;
    if meta.status == status {
        return Ok(());
    }
    store.len(Part::Log)?;
    // Opening serves the waiting list (and draws a draw event), which
    // writes tickets: check first.
    let serve = status == Status::Open && (meta.waitseq > 0 || meta.undrawn().is_some());
    if serve {
        check_consistent(store, event, &meta)?;
    }
    let op = match status {
        Status::Open => Op::Open,
        Status::Closed | Status::Restoring => Op::Close,
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    if serve {
        settle_now(store, out, event, clock)?;
    }
    Ok(())
}

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
    })
}

/// `TICKET.DROP`: deletes the event's keys but its log, and appends
/// `op=drop` to the log (the trace that tells the sidecar a drop from a
/// loss); refuses while the log is not drained unless `force`. Returns how
/// many keys were deleted (the log not counted); an event without any key
/// is left alone (0, nothing logged).
pub fn drop_event(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    force: bool,
    now: i64,
) -> Result<i64, TicketError> {
    let entries = type_check_all(store)?;
    if entries > 0 && !force {
        return Err(TicketError::Unsynced {
            event: event.to_owned(),
            entries,
        });
    }
    let deleted = store.delete(super::store::Scope::State);
    if deleted > 0 || store.exists(Part::Log)? {
        let record = Record {
            op: Op::Drop,
            at: now,
        };
        out.append(store, record, None, None);
    }
    Ok(deleted)
}
