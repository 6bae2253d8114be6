//! A draw event's part of the pool (docs/design.md "The draw"): entering before the draw (the rank is
//! the waiting score from entry on, so the draw itself is O(1)), the draw
//! step every write and sweep runs first, what the head of a drawn list
//! asks for, and the admission bucket that paces the offers.

use std::borrow::Cow;

use protocol::draw::{rank, AFTER_DRAW};
use protocol::effect::{Effect, WAIT_COUNT_SPAN};
use protocol::record::{Op, Record};

use super::effects::Effects;
use super::model::{Draw, Meta};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `POSITION` and `WAIT` of an entrant before the draw: entered, no place yet.
pub const ENTERED: i64 = -1;

fn no_seed(event: &str) -> TicketError {
    TicketError::Corrupt(format!("event '{event}' is a draw event without its seed"))
}

/// `TICKET.WAIT` before the draw: enters `user` for `count` tickets at
/// their rank (`op=enter`), unless entered already (nothing changes).
pub(super) fn enter<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    draw: &Draw,
    user: &'a str,
    count: i64,
    now: i64,
) -> Result<i64, TicketError> {
    // Type-checks the wants hash before the first write.
    store.wants(user)?;
    if store.score(Set::Waiting, user)?.is_none() {
        let seed = draw.seed.ok_or_else(|| no_seed(event))?;
        let op = Op::Enter {
            user: Cow::Borrowed(user),
            count,
            rank: Some(rank(&seed, user.as_bytes())),
        };
        out.append(store, Record { op, at: now }, None, None);
    }
    Ok(ENTERED)
}

/// The draw, exactly once: when a draw event that has not drawn accepts
/// claims at `now`, reveals its seed (`op=draw`; the apply starts the
/// admission bucket). Only a primary runs it (replicas apply its effect).
/// Returns whether it drew.
pub(super) fn draw_if_due(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    meta: &Meta,
    now: i64,
) -> Result<bool, TicketError> {
    let Some(draw) = meta.undrawn() else {
        return Ok(false);
    };
    if !meta.accepts_claims(now) {
        return Ok(false);
    }
    let seed = draw.seed.ok_or_else(|| no_seed(event))?;
    let op = Op::Draw { seed };
    out.append(store, Record { op, at: now }, None, None);
    Ok(true)
}

/// Whether `place` is a drawn entrant's (a rank), not a later joiner's.
fn is_entrant(meta: &Meta, place: i64) -> bool {
    meta.draw.is_some() && place < AFTER_DRAW as i64
}

/// Takes `user`, at `place`, off the waiting list: a draw's entrant leaves
/// in the log (`op=leave`, which the audit replays), anyone else with an
/// unlogged `leave` effect.
pub(super) fn take_off_list<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    meta: &Meta,
    user: Cow<'a, str>,
    place: i64,
    now: i64,
) -> Result<(), TicketError> {
    if is_entrant(meta, place) {
        // Type-checks the wants hash before the first write.
        store.wants(&user)?;
        let op = Op::Leave { user };
        out.append(store, Record { op, at: now }, None, None);
    } else {
        out.apply(store, Effect::Leave { user });
    }
    Ok(())
}

/// The place of someone joining now with `seq`: FIFO, and in a draw event
/// behind every entrant.
pub(super) fn join_place(meta: &Meta, seq: i64, count: i64) -> i64 {
    let place = seq.saturating_mul(WAIT_COUNT_SPAN).saturating_add(count);
    match meta.draw {
        Some(_) => place.saturating_add(AFTER_DRAW as i64),
        None => place,
    }
}

/// What the head at `place` asks for: `(seq, count)`, `seq` being when it
/// started waiting for the partial-offer rule (an entrant: the draw).
pub(super) fn head_wants(
    store: &mut impl Store,
    meta: &Meta,
    user: &str,
    place: i64,
) -> Result<(i64, i64), TicketError> {
    if let Some(draw) = meta.draw.as_deref().filter(|_| is_entrant(meta, place)) {
        let wanted = store.wants(user)?.unwrap_or(1).max(1);
        return Ok((draw.drawn_at.unwrap_or(0), wanted));
    }
    let seq = super::effects::seq_of(place, meta.draw.is_some());
    Ok((seq, (place % WAIT_COUNT_SPAN).max(1)))
}

/// When the admission bucket allows no offer at `now`, the time it next
/// does; `None` when an offer may be made (or the event has no `ADMIT`).
pub(super) fn paced_until(meta: &Meta, now: i64) -> Option<i64> {
    let bucket = meta.draw.as_deref()?.admission()?;
    (bucket.available(now) == 0).then(|| bucket.next_at(now))
}

/// Whether a drawn entrant still waits: then a claim by a user without an
/// offer is `QUEUE` (the event sells through its queue).
pub(super) fn entrants_wait(store: &mut impl Store, meta: &Meta) -> Result<bool, TicketError> {
    if meta.draw.as_deref().is_none_or(|d| d.drawn_at.is_none()) {
        return Ok(false);
    }
    Ok(!store
        .lowest(Set::Waiting, AFTER_DRAW as i64 - 1, 1)?
        .is_empty())
}

/// When the sweep must visit an event it has not been told about (after a
/// load or a role change): a draw event's `opens_at` while it has not
/// drawn, or `now` while anyone waits (offers a command left to the sweep).
pub fn next_visit(store: &mut impl Store, now: i64) -> Result<Option<i64>, TicketError> {
    let Some(meta) = store.meta()? else {
        return Ok(None);
    };
    if meta.undrawn().is_some() {
        return Ok((meta.opens_at > 0).then_some(meta.opens_at));
    }
    if meta.waitseq > 0 && store.len(super::store::Part::Waiting)? > 0 {
        return Ok(Some(now));
    }
    Ok(None)
}
