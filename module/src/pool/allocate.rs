//! `TICKET.ALLOCATE`, `TICKET.RELEASE` and `TICKET.ALLOCATIONS`: free stock
//! set aside in named allocations (kills, house seats, partner channels)
//! and given back to public sale, by hand or at a set time
//! (docs/design.md "Allocations"). Public claims, best available, the
//! waiting list and the draw never see allocated stock: it is out of the
//! pool (a seated event: its seats are `Allocated`), counted in the meta
//! hash's `allocated`.

use std::borrow::Cow;

use protocol::effect::Effect;
use protocol::keys::MAX_ALLOCATIONS;
use protocol::record::{Op, Record, Tickets, MAX_TICKETS};

use super::allocation::{existing, release_all};
use super::effects::Effects;
use super::model::{Allocation, Clock, SeatAsk};
use super::rules::{free_count, live_meta, lowest_free, not_seated};
use super::settle::{prepare, settle_now};
use super::store::Store;
use crate::error::TicketError;

/// What `TICKET.ALLOCATE` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocateAsk {
    pub name: String,
    /// `COUNT n` (with `ask`'s section and category), or `ask.ids`.
    pub count: i64,
    pub ask: SeatAsk,
    pub key: Option<Vec<u8>>,
    /// `RELEASE unix-ms`.
    pub release: Option<i64>,
}

/// What `TICKET.RELEASE` gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseAsk {
    /// Every free ticket (the default).
    All,
    /// The `n` lowest free tickets.
    Count(i64),
    /// Exactly these (free in the allocation).
    Tickets(Vec<i64>),
}

/// `TICKET.ALLOCATE`: free tickets into the allocation (made when new,
/// added to when not); replies with them.
pub fn allocate(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    ask: &AllocateAsk,
    clock: Clock,
) -> Result<Tickets, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let key = ask.key.as_deref().map(protocol::draw::commitment_bytes);
    let before = store.allocation(&ask.name)?;
    match &before {
        // A restored allocation takes the key of its first allocate.
        Some(a) if a.key != key && a.key != Some(Allocation::RESTORED_KEY) => {
            return Err(TicketError::NoKey {
                event: event.to_owned(),
                name: ask.name.clone(),
            })
        }
        None if usize::from(meta.allocs.count) >= MAX_ALLOCATIONS => {
            return Err(TicketError::Invalid(format!(
                "event {} has {MAX_ALLOCATIONS} allocations, the most it may have",
                crate::error::quote(event.as_bytes())
            )))
        }
        _ => {}
    }
    let count = ask
        .ask
        .ids
        .as_ref()
        .map_or(ask.count, |ids| ids.len() as i64);
    if count < 1 {
        return set_restored_key(out, store, event, ask, before.as_ref(), key);
    }
    let had = before
        .as_ref()
        .map_or(0, |a| a.free.len() as i64 + a.claimed);
    if had + count > MAX_TICKETS as i64 {
        return Err(TicketError::Invalid(format!(
            "an allocation holds at most {MAX_TICKETS} tickets; {} has {had}",
            crate::error::quote(ask.name.as_bytes())
        )));
    }
    let (tickets, minted) = match meta.seated {
        true => (
            super::seated::to_allocate(store, event, count, &ask.ask)?,
            None,
        ),
        false if ask.ask != SeatAsk::default() => return Err(not_seated(event)),
        false => {
            let free = free_count(store, &meta)?;
            if free < count {
                return Err(TicketError::short_of_event(event, free));
            }
            lowest_free(store, event, &meta, count, 1)?
        }
    };
    let op = Op::Allocate {
        name: ask.name.clone(),
        tickets: tickets.clone(),
        release: ask.release,
        key,
    };
    out.append(store, Record { op, at: clock.now }, minted, None);
    Ok(tickets)
}

/// `TICKET.ALLOCATE` without `COUNT` or `SEATS`: sets the key of an
/// allocation restored by `TICKET.RESTORE` (locked until then), to `key`
/// (a hash) or none; replies with no tickets. Any other is an `ERR`.
fn set_restored_key(
    out: &mut Effects<'_>,
    store: &mut impl Store,
    event: &str,
    ask: &AllocateAsk,
    before: Option<&Allocation>,
    key: Option<[u8; 32]>,
) -> Result<Tickets, TicketError> {
    let restored = before.is_some_and(|a| a.key == Some(Allocation::RESTORED_KEY));
    if !restored || ask.release.is_some() {
        return Err(TicketError::Invalid(format!(
            "ALLOCATE needs COUNT or SEATS (without, it only sets the key of an allocation a rebuild restored, in event {})",
            crate::error::quote(event.as_bytes())
        )));
    }
    let name = Cow::Owned(ask.name.clone());
    out.apply(store, Effect::AllocationKey { name, key });
    Ok(Tickets::Many(Vec::new()))
}

/// `TICKET.RELEASE`: the allocation's free tickets asked for back in
/// public sale, offered first to the waiting list; replies with how many.
pub fn release(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    name: &str,
    ask: &ReleaseAsk,
    clock: Clock,
) -> Result<i64, TicketError> {
    prepare(store, out, event, clock)?;
    let allocation = existing(store, event, name)?;
    let free = allocation.free.len() as i64;
    let record = match ask {
        ReleaseAsk::All => release_all(name, &allocation, clock.now),
        ReleaseAsk::Count(n) if *n < 1 => {
            return Err(TicketError::Invalid("COUNT must be at least 1".into()))
        }
        ReleaseAsk::Count(n) if *n > free => {
            return Err(TicketError::short_of_allocation(name, free))
        }
        ReleaseAsk::Count(n) => some(name, allocation.free[..*n as usize].to_vec(), clock.now),
        ReleaseAsk::Tickets(ids) => {
            let mut ids = ids.clone();
            ids.sort_unstable();
            ids.dedup();
            if let Some(id) = ids
                .iter()
                .find(|id| allocation.free.binary_search(id).is_err())
            {
                return Err(TicketError::Invalid(format!(
                    "ticket {id} is not free in allocation {}",
                    crate::error::quote(name.as_bytes())
                )));
            }
            some(name, ids, clock.now)
        }
    };
    let released = match &record.op {
        Op::Release { tickets, .. } => tickets.as_ref().map_or(0, |t| t.as_slice().len() as i64),
        _ => 0,
    };
    out.append(store, record, None, None);
    settle_now(store, out, event, clock)?;
    Ok(released)
}

/// The `op=release` of `tickets` (at least one) of the allocation `name`.
fn some<'a>(name: &str, tickets: Vec<i64>, at: i64) -> Record<Cow<'a, str>> {
    Record {
        op: Op::Release {
            name: name.to_owned(),
            tickets: Some(Tickets::from_sorted(tickets)),
        },
        at,
    }
}

/// `TICKET.ALLOCATIONS` (read-only): every allocation of the event, in
/// name order.
pub fn allocations(
    store: &mut impl Store,
    event: &str,
) -> Result<Vec<(String, Allocation)>, TicketError> {
    let meta = live_meta(store, event)?;
    match meta.allocs.count {
        0 => Ok(Vec::new()),
        _ => store.allocations(),
    }
}
