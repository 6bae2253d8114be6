//! The rules every command of an event keeps, the bottom of the pool's
//! commands (every other file may use them):
//!
//! - the checks it starts with: the event exists (and is not being
//!   restored), its keys agree with each other and have their types, a
//!   party's size is within the event's `LIMIT`, whether it sells now
//!   (its window; a draw event's draw);
//! - handing out numbers from the lazy pool (docs/design.md "The lazy
//!   pool"), the heart of "no oversell": the pool holds only the lowest
//!   free numbers; `minted` is the highest number ever put into it, and
//!   every unminted number is greater than every pooled one, so the lowest
//!   free number is always the pool's minimum (or `minted + 1` when it is
//!   empty).

use protocol::record::Tickets;

use super::model::{Draw, Meta, Status};
use super::store::{Part, Set, Store};
use crate::error::TicketError;

impl Meta {
    /// Whether the event accepts claims (and so offers, and draws) at `now`.
    pub fn accepts_claims(&self, now: i64) -> bool {
        self.status == Status::Open
            && (self.closes_at == 0 || now < self.closes_at)
            && now >= self.opens_at
    }

    /// The draw state of a draw event that has not drawn yet.
    pub fn undrawn(&self) -> Option<&Draw> {
        self.draw.as_deref().filter(|d| d.drawn_at.is_none())
    }
}

pub(super) fn existing_meta(store: &mut impl Store, event: &str) -> Result<Meta, TicketError> {
    store
        .meta()?
        .ok_or_else(|| TicketError::NoEvent(event.to_owned()))
}

/// The meta of an event that is not being restored (`TRYAGAIN` while it is).
pub(super) fn live_meta(store: &mut impl Store, event: &str) -> Result<Meta, TicketError> {
    let meta = existing_meta(store, event)?;
    match meta.status {
        Status::Restoring => Err(TicketError::Restoring(event.to_owned())),
        _ => Ok(meta),
    }
}

/// Every number up to `minted` is either held or in the pool, and the log
/// exists. Reading the three also type-checks every key of the event. The
/// keys disagree only while a cluster slot migration has moved some of an
/// event's keys and not yet the others (the command is redirected to the
/// importing node by its event argument, which is not itself a key), or
/// after hand edits. Writing then could hand out a number twice, so the
/// command answers `TRYAGAIN` (cluster clients retry it) and changes nothing.
pub(super) fn check_consistent(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
) -> Result<(), TicketError> {
    // Free tickets at or below `minted` (a seated event: its free seats).
    let free = free_count(store, meta)? - (meta.total - meta.minted);
    // A listed ticket a buyer holds is in two orders, counted once.
    let twice = super::listing::held_by_buyers(store, meta)?;
    let accounted =
        store.len(Part::Holders)? + meta.extra - twice + free + i64::from(meta.allocs.free);
    if accounted != meta.minted || !store.exists(Part::Log)? {
        return Err(TicketError::TryAgain(event.to_owned()));
    }
    Ok(())
}

/// Reads every key of the event, so that a wrong type is an error before
/// anything is deleted (checking the meta, pool and holders stops at the
/// first that exists, so the pool and holders are read on their own);
/// returns the log's length.
pub(super) fn type_check_all(store: &mut impl Store) -> Result<i64, TicketError> {
    any_state(store)?;
    store.len(Part::Pool)?;
    store.len(Part::Holders)?;
    store.lowest(Set::Holds, 0, 1)?;
    store.len(Part::Waiting)?;
    store.len(Part::Wants)?;
    store.len(Part::Log)
}

/// Whether any of the event's meta, pool and holders keys exists.
pub(super) fn any_state(store: &mut impl Store) -> Result<bool, TicketError> {
    Ok(store.exists(Part::Meta)? || store.exists(Part::Pool)? || store.exists(Part::Holders)?)
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

/// The meta of an event whose status is not `to` yet (its log
/// type-checked: the change appends to it); `None` when it is already:
/// `OPEN` and `CLOSE` log only a real change.
pub(super) fn status_changes(
    store: &mut impl Store,
    event: &str,
    to: Status,
) -> Result<Option<Meta>, TicketError> {
    let meta = live_meta(store, event)?;
    if meta.status == to {
        return Ok(None);
    }
    store.len(Part::Log)?;
    Ok(Some(meta))
}

/// The `count` lowest free numbers and the event's new `minted` when some
/// had to be minted, or `SOLDOUT` when fewer are free.
pub(super) fn lowest_free(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    chunk: i64,
) -> Result<(Tickets, Option<i64>), TicketError> {
    let sold_out = || TicketError::SoldOut(event.to_owned());
    if count == 1 {
        // The hot path: one number, no allocation.
        return match store.lowest_free()? {
            Some(ticket) => Ok((Tickets::One(ticket), None)),
            None if meta.minted < meta.total => {
                let (ticket, minted) = mint(meta.total, meta.minted, 1, chunk);
                Ok((Tickets::One(ticket), minted))
            }
            None => Err(sold_out()),
        };
    }
    let mut numbers = store.lowest_free_n(count as usize)?;
    let missing = count - numbers.len() as i64;
    if missing == 0 {
        return Ok((Tickets::from_sorted(numbers), None));
    }
    if meta.total - meta.minted < missing {
        return Err(sold_out());
    }
    let (first, minted) = mint(meta.total, meta.minted, missing, chunk);
    numbers.extend(first..first + missing);
    Ok((Tickets::from_sorted(numbers), minted))
}

/// How many tickets are free: the pool's and the unminted ones, or a
/// seated event's free seats.
pub(super) fn free_count(store: &mut impl Store, meta: &Meta) -> Result<i64, TicketError> {
    if meta.seated {
        return Ok(store.seating(|_, s| i64::from(s.free()))?.unwrap_or(0));
    }
    Ok(store.len(super::store::Part::Pool)? + meta.total - meta.minted)
}

/// Mints the next chunk of numbers, at least `count`: the first `count`
/// go to the claimant directly (they would be popped right away, so they
/// never enter the pool). Returns the first new ticket and the new `minted`.
fn mint(total: i64, minted: i64, count: i64, chunk: i64) -> (i64, Option<i64>) {
    let last = minted
        .saturating_add(chunk.max(1))
        .max(minted + count)
        .min(total);
    (minted + 1, Some(last))
}

/// `ERR`: seat options on an event that is not seated.
pub(super) fn not_seated(event: &str) -> TicketError {
    TicketError::Invalid(format!(
        "event {} is not seated: SECTION, CATEGORY, ACCESSIBLE, SPLIT and SEATS need TICKET.INIT ... SEATS",
        crate::error::quote(event.as_bytes())
    ))
}

/// `CLOSED` once the event's transfers (and resales) stopped: at its
/// `TRANSFER_UNTIL`, else its `closes_at` (0: never).
pub(super) fn transfers_open(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    now: i64,
) -> Result<(), TicketError> {
    let field = super::effects::TRANSFER_UNTIL_FIELD;
    let until = match store.after_field(super::store::After::Gens, field)? {
        None => meta.closes_at,
        Some(text) => text
            .parse::<i64>()
            .map_err(|_| TicketError::Corrupt(format!("the event's transfer_until is {text:?}")))?,
    };
    match until > 0 && now >= until {
        true => Err(TicketError::Closed(event.to_owned())),
        false => Ok(()),
    }
}

/// A sold ticket's generation (docs/design.md "After the sale"): 1 unless
/// the generations hash says more (only transfers write it).
pub(super) fn generation(store: &mut impl Store, ticket: i64) -> Result<i64, TicketError> {
    match store.after_field(super::store::After::Gens, ticket)? {
        None => Ok(1),
        Some(text) => text.parse::<i64>().ok().filter(|g| *g > 1).ok_or_else(|| {
            TicketError::Corrupt(format!("ticket {ticket}'s generation is {text:?}"))
        }),
    }
}

/// A ticket's admitting scan: when (unix ms), its generation, its gate
/// (the scans hash's `<at> <gen> <gate or ->`).
pub(super) fn scanned(
    store: &mut impl Store,
    ticket: i64,
) -> Result<Option<(i64, i64, Option<String>)>, TicketError> {
    let Some(text) = store.after_field(super::store::After::Scans, ticket)? else {
        return Ok(None);
    };
    let mut parts = text.splitn(3, ' ');
    let (at, gen, gate) = (parts.next(), parts.next(), parts.next());
    let number = |t: Option<&str>| t.and_then(|t| t.parse::<i64>().ok());
    match (number(at), number(gen), gate) {
        (Some(at), Some(gen), Some(gate)) => {
            Ok(Some((at, gen, (gate != "-").then(|| gate.to_owned()))))
        }
        _ => Err(TicketError::Corrupt(format!(
            "ticket {ticket}'s scan is {text:?}"
        ))),
    }
}
