//! What the pool's other steps do about allocations (docs/design.md
//! "Allocations"): the tickets a claim `FROM` one gets, the allocation a
//! held order goes back to when it ends, and the release of allocations
//! whose time came (the settle step runs it, as it expires holds).

use std::borrow::Cow;

use protocol::keys::alloc_user;
use protocol::record::{Op, Pick, Record, Tickets};

use super::effects::Effects;
use super::model::{Allocation, ClaimOptions, FromAsk, Meta};
use super::rules::not_seated;
use super::store::Store;
use crate::error::TicketError;

/// The allocation `name` of `event`, or `NOALLOCATION`.
pub(super) fn existing(
    store: &mut impl Store,
    event: &str,
    name: &str,
) -> Result<Allocation, TicketError> {
    store
        .allocation(name)?
        .ok_or_else(|| TicketError::NoAllocation {
            event: event.to_owned(),
            name: name.to_owned(),
        })
}

/// Whether `key` opens `allocation` (one made without a key needs none);
/// `NOKEY` if not.
pub(super) fn check_key(
    event: &str,
    name: &str,
    allocation: &Allocation,
    key: Option<&[u8]>,
) -> Result<(), TicketError> {
    let given = key.map(protocol::draw::commitment_bytes);
    match allocation.key {
        Some(hash) if given != Some(hash) => Err(TicketError::NoKey {
            event: event.to_owned(),
            name: name.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// The tickets a claim of `count` from the allocation `from` gets, by the
/// rules of a public claim over the allocation's free tickets only (a
/// seated event: its best seats, or the ones picked), and how seats were
/// chosen.
pub(super) fn tickets_from(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    options: &ClaimOptions,
    from: &FromAsk,
) -> Result<(Tickets, Option<Box<Pick>>), TicketError> {
    let allocation = existing(store, event, &from.name)?;
    check_key(event, &from.name, &allocation, from.key.as_deref())?;
    let sold_out = || TicketError::AllocationSoldOut {
        event: event.to_owned(),
        name: from.name.clone(),
    };
    if allocation.free.is_empty() {
        return Err(sold_out());
    }
    if meta.seated {
        let ask = options.seats.as_deref().cloned().unwrap_or_default();
        let only = Some(allocation.free.as_slice());
        let chosen = super::seated::choose(store, event, meta, count, &ask, only);
        let (tickets, pick) = chosen.map_err(|e| match e {
            TicketError::SoldOut(_) => sold_out(),
            e => e,
        })?;
        return Ok((tickets, Some(Box::new(pick))));
    }
    if options.seats.is_some() {
        return Err(not_seated(event));
    }
    match allocation.free.get(..count as usize) {
        Some(lowest) => Ok((Tickets::from_sorted(lowest.to_vec()), None)),
        None => Err(sold_out()),
    }
}

/// The allocation `user`'s held order goes back to when it ends: the one
/// it came from, while that exists (events with allocations only).
pub(super) fn back_to(
    store: &mut impl Store,
    meta: &Meta,
    user: &str,
    held: bool,
) -> Result<Option<Box<str>>, TicketError> {
    if meta.allocs.count == 0 || !held {
        return Ok(None);
    }
    let Some(name) = store.alloc_field(&alloc_user(user))? else {
        return Ok(None);
    };
    Ok(store.allocation(&name)?.map(|_| name.into()))
}

/// Releases every allocation whose time came by `now` (all its free
/// tickets back in public sale, one `op=release` each, which ends it);
/// whether any did.
pub(super) fn release_due(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    meta: &Meta,
    now: i64,
) -> Result<bool, TicketError> {
    if !meta.allocs.release_due(now) {
        return Ok(false);
    }
    let due: Vec<(String, Allocation)> = store
        .allocations()?
        .into_iter()
        .filter(|(_, a)| a.release.is_some_and(|at| at <= now))
        .collect();
    for (name, allocation) in &due {
        out.append(store, release_all(name, allocation, now), None, None);
    }
    Ok(!due.is_empty())
}

/// The `op=release` of every free ticket of `allocation` at `at`.
pub(super) fn release_all<'a>(
    name: &str,
    allocation: &Allocation,
    at: i64,
) -> Record<Cow<'a, str>> {
    let tickets =
        (!allocation.free.is_empty()).then(|| Tickets::from_sorted(allocation.free.clone()));
    Record {
        op: Op::Release {
            name: name.to_owned(),
            tickets,
        },
        at,
    }
}
