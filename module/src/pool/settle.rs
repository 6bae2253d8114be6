//! What every write command does before its own change: check that the
//! event's keys agree, expire the holds due at `now` (docs/design.md "Holds
//! and expiry"), and serve the waiting list (docs/design.md "The waiting
//! list"). The sweep runs the same steps for events nobody writes to.
//!
//! The offer step: after every change that may free tickets (a cancel, an
//! expiry, an open, a wait or a leave) [`offer_waiting`] offers the head of
//! the FIFO list its `count` lowest free numbers as a held order
//! (`op=offer`). Strict FIFO: while the head cannot be served, nobody behind
//! it is. A head that wants more than are free gets nothing until enough
//! are free — or until it has waited a full offer period since it joined,
//! from when it is offered what is free (at least one ticket).
//!
//! A draw event first draws (`pool::draw`), once, when it first accepts
//! claims; its list is then in rank order. One command or sweep run makes
//! at most `Clock::offers` offers (and a draw event with `ADMIT` no more
//! than its bucket allows): the rest is left to the sweep, told when to
//! come back through the effects.

use std::borrow::Cow;

use protocol::record::{Op, Pick, PickHow, Record};

use super::allocation::{back_to, release_due};
use super::draw::{draw_if_due, head_wants, paced_until, take_off_list};
use super::effects::Effects;
use super::forsale::{lowest_or_listed, offerable, seats_or_listed};
use super::model::{Clock, Meta, Status};
use super::rules::free_count;
use super::rules::{check_consistent, existing_meta, live_meta};
use super::store::{Set, Store};
use crate::error::TicketError;

/// Expires up to `max` holds of the event whose deadline is at or before
/// `now`, each logged as one `op=expire`; returns how many. Claims,
/// confirms and cancels run this first (with no bound), so from its
/// deadline on a hold is free for whatever the command does; the sweep
/// runs it for events nobody writes to.
pub fn expire_holds(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    now: i64,
    max: usize,
) -> Result<usize, TicketError> {
    // Read everything before the first write, so an error changes nothing.
    let mut due = Vec::new();
    let lapsed = store.lowest(Set::Holds, now, max)?;
    let meta = match lapsed.is_empty() {
        true => None,
        false => store.meta()?,
    };
    for (user, _) in lapsed {
        let tickets = store.holder(&user)?;
        let from = match &meta {
            Some(meta) => back_to(store, meta, &user, true)?,
            None => None,
        };
        due.push((user, tickets, from));
    }
    let expired = due.len();
    for (user, tickets, from) in due {
        match tickets {
            Some(tickets) => {
                let op = Op::Expire {
                    from,
                    user: Cow::Owned(user),
                    tickets,
                };
                out.append(store, Record { op, at: now }, None, None);
            }
            // A hold without tickets (hand edits): drop the stray mark.
            None => {
                store.set_score(Set::Holds, &user, None);
            }
        }
    }
    Ok(expired)
}

/// [`expire_holds`] with no bound, then the meta as it is afterwards.
fn expire_due(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    meta: Meta,
    clock: Clock,
) -> Result<Meta, TicketError> {
    if !clock.maybe_due {
        return Ok(meta);
    }
    match expire_holds(store, out, clock.now, usize::MAX)? {
        0 => Ok(meta),
        _ => existing_meta(store, event),
    }
}

/// What every write command does first: the meta, after checking the keys
/// agree, expiring due holds and serving the waiting list.
pub(super) fn prepare(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    clock: Clock,
) -> Result<Meta, TicketError> {
    let meta = live_meta(store, event)?;
    check_consistent(store, event, &meta)?;
    settle(store, out, event, meta, clock)
}

/// [`expire_due`], the draw when due, then the offer step when anyone may
/// be waiting.
fn settle(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    meta: Meta,
    clock: Clock,
) -> Result<Meta, TicketError> {
    let mut meta = expire_due(store, out, event, meta, clock)?;
    // Only an event with an allocation due releases (one comparison).
    if meta.allocs.release_due(clock.now) && release_due(store, out, &meta, clock.now)? {
        meta = existing_meta(store, event)?;
    }
    // Only a draw event ever draws (a plain claim does not look further).
    if meta.draw.is_some() && draw_if_due(store, out, event, &meta, clock.now)? {
        meta = existing_meta(store, event)?;
    }
    match meta.waitseq {
        0 => Ok(meta),
        _ => offer_waiting(store, out, event, meta, clock),
    }
}

/// [`settle`] with the meta as it is now.
pub(super) fn settle_now(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    clock: Clock,
) -> Result<(), TicketError> {
    let meta = existing_meta(store, event)?;
    settle(store, out, event, meta, clock).map(|_| ())
}

/// The sweep of one event: expires up to `max` of its due holds, unless
/// the event is gone or its keys disagree (a slot migration in progress),
/// then settles at `clock` (whose hint the caller takes after the sweep
/// took the event's due entries: the holds still due past `max` wait for
/// the next sweep) — which draws a draw event whose `opens_at` came, and
/// carries on with offers a command left to the sweep.
pub fn sweep(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    clock: Clock,
    max: usize,
) -> Result<usize, TicketError> {
    let Some(meta) = store.meta()? else {
        return Ok(0);
    };
    if meta.status == Status::Restoring {
        return Ok(0);
    }
    check_consistent(store, event, &meta)?;
    let expired = expire_holds(store, out, clock.now, max)?;
    let releases = meta.allocs.release_due(clock.now);
    if expired > 0 || meta.waitseq > 0 || meta.undrawn().is_some() || releases {
        settle_now(store, out, event, clock)?;
    }
    Ok(expired)
}

/// The offer step: while the event accepts claims and its list's head can
/// be served, offers the head its lowest free numbers as a held order until
/// `now + offer` (`op=offer`, which also takes the head off the list), at
/// most `clock.offers` in the command and as the admission bucket allows.
/// Returns the meta as it is afterwards.
pub fn offer_waiting(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    mut meta: Meta,
    clock: Clock,
) -> Result<Meta, TicketError> {
    let now = clock.now;
    while meta.waitseq > 0 && meta.accepts_claims(now) && meta.undrawn().is_none() {
        let Some((user, place)) = store.lowest(Set::Waiting, i64::MAX, 1)?.pop() else {
            break;
        };
        if let Some(at) = paced(out, &meta, clock) {
            out.visit_again(at);
            break;
        }
        if store.holder(&user)?.is_some() {
            // Only hand edits get here (WAIT refuses holders): drop the place.
            take_off_list(store, out, &meta, Cow::Owned(user), place, now)?;
            continue;
        }
        if meta.seated {
            if !offer_seats(store, out, &meta, now)? {
                break;
            }
            meta = existing_meta(store, event)?;
            continue;
        }
        let free = match meta.listed {
            0 => free_count(store, &meta)?,
            _ => offerable(store, &meta)?,
        };
        let (seq, wanted) = head_wants(store, &meta, &user, place)?;
        let Some(count) = offer_size(&meta, seq, wanted, free, now) else {
            break;
        };
        // Minting only what the offer takes keeps the pool as it was.
        let (tickets, minted) = lowest_or_listed(store, event, &meta, count, 1)?;
        let until = now.saturating_add(meta.offer);
        let op = Op::Offer {
            pick: None,
            user: Cow::Owned(user),
            tickets,
            until,
        };
        offer(store, out, Record { op, at: now }, minted)?;
        meta = existing_meta(store, event)?;
    }
    Ok(meta)
}

/// Most waiting parties a seated event's offer step looks at for one
/// offer (those further back wait for the next change); one definition,
/// which `audit-draw` replays.
pub use protocol::draw::SEATED_LOOKAHEAD;

/// A seated event's offer: the first waiting party (of the first
/// [`SEATED_LOOKAHEAD`]) for whom a candidate of their count exists by the
/// rule (no filters) is offered those seats; a party that cannot sit
/// together keeps its place. Whether an offer was made (or a stray place
/// dropped).
fn offer_seats(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    meta: &Meta,
    now: i64,
) -> Result<bool, TicketError> {
    let waiting = store.lowest(Set::Waiting, i64::MAX, SEATED_LOOKAHEAD)?;
    let mut no_fit = Vec::new();
    for (user, place) in waiting {
        if store.holder(&user)?.is_some() {
            // Only hand edits get here (WAIT refuses holders): drop the place.
            take_off_list(store, out, meta, Cow::Owned(user), place, now)?;
            return Ok(true);
        }
        let (_, wanted) = head_wants(store, meta, &user, place)?;
        if no_fit.contains(&wanted) {
            continue;
        }
        let Some(tickets) = party_seats(store, meta, wanted)? else {
            no_fit.push(wanted);
            continue;
        };
        let op = Op::Offer {
            pick: Some(Box::new(Pick {
                how: PickHow::Best,
                section: None,
                category: None,
                accessible: None,
            })),
            user: Cow::Owned(user),
            tickets,
            until: now.saturating_add(meta.offer),
        };
        offer(store, out, Record { op, at: now }, None)?;
        return Ok(true);
    }
    Ok(false)
}

/// The best seats for a waiting party of `count`: free ones, or once none
/// fit, free and listed ones (the house sells its own stock first).
fn party_seats(
    store: &mut impl Store,
    meta: &Meta,
    count: i64,
) -> Result<Option<protocol::record::Tickets>, TicketError> {
    if let Some(tickets) = super::seated::for_party(store, count, None)? {
        return Ok(Some(tickets));
    }
    match meta.listed {
        0 => Ok(None),
        _ => match seats_or_listed(store, meta)? {
            Some(among) => super::seated::for_party(store, count, Some(&among)),
            None => Ok(None),
        },
    }
}

/// Makes one offer (`record` is its `op=offer`). Its apply marks the user
/// offered in the wants hash, read first so that a key of the wrong type
/// is an error before anything is written.
fn offer<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    record: Record<Cow<'a, str>>,
    minted: Option<i64>,
) -> Result<(), TicketError> {
    if let Op::Offer { user, .. } = &record.op {
        store.wants(user)?;
    }
    out.append(store, record, minted, None);
    out.count_offer();
    Ok(())
}

/// When the command may make no more offers now: the time to come back
/// (now, when it made its share; the bucket's next second with `ADMIT`).
fn paced(out: &Effects<'_>, meta: &Meta, clock: Clock) -> Option<i64> {
    if out.offered() >= clock.offers {
        return Some(clock.now);
    }
    paced_until(meta, clock.now)
}

/// How many tickets the head that waits since `seq` for `wanted` is
/// offered when `free` are free: all it asked for, or what is free once it
/// has waited a full offer period; `None` when it must wait on.
fn offer_size(meta: &Meta, seq: i64, wanted: i64, free: i64, now: i64) -> Option<i64> {
    if free >= wanted {
        Some(wanted)
    } else if free > 0 && now >= seq.saturating_add(meta.offer) {
        Some(free)
    } else {
        None
    }
}
