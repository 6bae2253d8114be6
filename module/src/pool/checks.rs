//! The checks every command of an event starts with: the event exists
//! (and is not being restored), its keys agree with each other and have
//! their types, and a party's size is within the event's `LIMIT`. The
//! bottom of the pool's commands: every other file may use them.

use super::model::{Meta, Status};
use super::store::{Part, Set, Store};
use super::tickets::free_count;
use crate::error::TicketError;

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
    let accounted = store.len(Part::Holders)? + meta.extra + free + meta.allocs.free;
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

/// `ERR`: seat options on an event that is not seated.
pub(super) fn not_seated(event: &str) -> TicketError {
    TicketError::Invalid(format!(
        "event {} is not seated: SECTION, CATEGORY, ACCESSIBLE, SPLIT and SEATS need TICKET.INIT ... SEATS",
        crate::error::quote(event.as_bytes())
    ))
}
