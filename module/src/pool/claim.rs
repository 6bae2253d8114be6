//! `TICKET.CLAIM`: a user's tickets, the lowest free numbers or a seated
//! event's best seats, sold at once or held until a deadline
//! (docs/design.md "The lazy pool", "Holds and expiry").
//!
//! Time enters only as the command's [`Clock`]: a claim first expires the
//! event's holds due at `now` (the settle step, the same the sweep runs),
//! so a hold is free from its deadline on. While anyone waits, a claim by a
//! user without tickets is `SOLDOUT` (a draw event's: `QUEUE`).

use std::borrow::Cow;

use protocol::record::{Op, Pick, Record, Tickets};

use super::allocation::tickets_from;
use super::draw::entrants_wait;
use super::effects::Effects;
use super::forsale::{choose_listed, with_listed};
use super::model::{Claim, ClaimOptions, Clock, Meta, Status};
use super::rules::lowest_free;
use super::rules::{not_seated, within_limit};
use super::settle::prepare;
use super::store::{Part, Store};
use crate::error::TicketError;

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
    // A claim from an allocation does not queue behind the public.
    selling(store, event, &meta, now, options.from.is_none())?;
    // check_consistent has type-checked every key, so no write fails.
    let (tickets, minted, pick) = match &options.from {
        None => tickets_for(store, event, &meta, count, &options, chunk)?,
        Some(ask) => {
            let (tickets, pick) = tickets_from(store, event, &meta, count, &options, ask)?;
            (tickets, None, pick)
        }
    };
    let from = options.from.as_ref().map(|ask| ask.name.as_str().into());
    let hold = options.hold.unwrap_or(meta.hold);
    let user_id = user;
    let user = Cow::Borrowed(user);
    let op = match hold {
        0 => Op::Claim {
            from,
            pick,
            user,
            tickets: tickets.clone(),
        },
        _ => Op::Hold {
            from,
            pick,
            user,
            tickets: tickets.clone(),
            until: now.saturating_add(hold),
        },
    };
    out.append(store, Record { op, at: now }, minted, None);
    if hold == 0 {
        super::resale::sell_listed(store, out, user_id, tickets.as_slice(), now)?;
    }
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
/// step), open, inside its window, and (a `public` claim) nobody waiting
/// ahead (no queue jumping: the offer step has served whoever it could).
fn selling(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    now: i64,
    public: bool,
) -> Result<(), TicketError> {
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
    if public && meta.waitseq > 0 && store.len(Part::Waiting)? > 0 {
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
#[inline]
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
        let (tickets, pick) = match super::seated::choose(store, event, meta, count, &ask, None) {
            Err(refused) if meta.listed > 0 => {
                choose_listed(store, event, meta, (count, &ask), refused)?
            }
            chosen => chosen?,
        };
        return Ok((tickets, None, Some(Box::new(pick))));
    }
    if options.seats.is_some() {
        return Err(not_seated(event));
    }
    let (tickets, minted) = match lowest_free(store, event, meta, count, chunk) {
        Err(TicketError::SoldOut(_)) if meta.listed > 0 => with_listed(store, event, meta, count)?,
        taken => taken?,
    };
    Ok((tickets, minted, None))
}
