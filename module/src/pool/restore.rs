//! Restoring an event from a snapshot (`TICKET.RESTORE`, docs/design.md
//! "Incarnations and data loss"): `BEGIN` replaces the event's state by an
//! empty one being restored, `ORDERS` and `FREE` fill it in checked steps,
//! `COMMIT` checks that every number is accounted for once and starts a new
//! log with `op=restore`. `ALLOCATION` puts an allocation back as
//! `TICKET.ALLOCATE` and its claims left it (its free tickets out of the
//! pool or its seats allocated, its users' orders marked as its), locked:
//! MySQL never has its key, so no `FROM` claim opens it until a
//! `TICKET.ALLOCATE E name [KEY k]` sets one. A seated event (`BEGIN ...
//! SEATS`) gets its layout at `BEGIN`, every seat free; its orders' seat
//! ids are held or sold as they are restored, so its seat state derives
//! from them and it takes no `FREE`. Every step is validated in full
//! before its first write, so a refused step changes nothing. `AFTER`
//! puts back generations, scans and the transfer deadline.

use std::borrow::Cow;
use std::collections::HashSet;
use std::ops::RangeInclusive;

use protocol::effect::Effect;
use protocol::keys::{alloc_user, MAX_ALLOCATIONS};
use protocol::record::{Op, Record};
use protocol::restore::{Allocation, Begin, Order};
use protocol::StreamId;

use super::effects::Effects;
use super::model::{Meta, Staging, Status};
use super::rules::type_check_all;
use super::store::{After, Part, Set, Store};
use crate::error::TicketError;

/// The meta and staging fields of an event being restored (`NOTRESTORING`
/// otherwise).
fn restoring(store: &mut impl Store, event: &str) -> Result<(Meta, Staging), TicketError> {
    let not = || TicketError::NotRestoring(event.to_owned());
    let meta = store.meta()?.ok_or_else(not)?;
    if meta.status != Status::Restoring {
        return Err(not());
    }
    let staging = store.staging()?.ok_or_else(|| {
        TicketError::Corrupt(format!(
            "the meta hash of event '{event}' says restoring but has no restore fields"
        ))
    })?;
    Ok((meta, staging))
}

/// `TICKET.RESTORE E BEGIN`: replaces the event's state (not its log) by an
/// empty one being restored. Refuses an event that exists and is not being
/// restored, unless `force`; restarts a restore in progress.
pub fn restore_begin(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    begin: &Begin,
    force: bool,
) -> Result<(), TicketError> {
    type_check_all(store)?;
    let restarting = match store.meta() {
        Ok(Some(meta)) => meta.status == Status::Restoring,
        Ok(None) => true,
        // A corrupt meta hash is replaced only when forced.
        Err(e) if !force => return Err(e),
        Err(_) => false,
    };
    if !restarting && !force {
        return Err(TicketError::Exists(event.to_owned()));
    }
    out.apply(store, Effect::RestoreBegin(begin.clone()));
    Ok(())
}

/// `TICKET.RESTORE E ORDERS`: restores orders; returns how many are
/// restored so far. Refused, with nothing changed, for a user restored
/// already (or twice in the call), a ticket above `minted`, free, or in two
/// orders of the call, or more orders than `BEGIN` announced.
pub fn restore_orders<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    orders: &[Order<&'a str>],
) -> Result<i64, TicketError> {
    let (meta, staging) = restoring(store, event)?;
    store.lowest(Set::Holds, 0, 1)?;
    store.len(Part::Pool)?;
    let so_far = store.len(Part::Holders)?;
    let invalid = |why: String| TicketError::Invalid(format!("TICKET.RESTORE ORDERS: {why}"));
    if so_far + orders.len() as i64 > staging.orders {
        return Err(invalid(format!(
            "{} orders restored already, {} more would exceed the {} that BEGIN announced",
            so_far,
            orders.len(),
            staging.orders
        )));
    }
    let mut users = HashSet::with_capacity(orders.len());
    let mut tickets = HashSet::new();
    for (i, order) in orders.iter().enumerate() {
        let named = || {
            format!(
                "order {} (user {})",
                i + 1,
                crate::error::quote(order.user.as_bytes())
            )
        };
        if !users.insert(order.user) || store.holder(order.user)?.is_some() {
            return Err(invalid(format!(
                "{}: the user is restored already",
                named()
            )));
        }
        for &t in order.tickets.as_slice() {
            let problem = match meta.seated {
                true => seat_problem(store, &meta, &mut tickets, t)?,
                false => number_problem(store, &meta, &mut tickets, t)?,
            };
            if let Some(problem) = problem {
                return Err(invalid(format!("{}: {problem}", named())));
            }
        }
    }
    let orders = orders.iter().map(|order| Order {
        user: Cow::Borrowed(order.user),
        tickets: order.tickets.clone(),
        until: order.until,
    });
    out.apply(store, Effect::RestoreOrders(orders.collect()));
    store.len(Part::Holders)
}

/// What is wrong with restoring number `t` in an order (`seen`: the
/// numbers of the call so far).
fn number_problem(
    store: &mut impl Store,
    meta: &Meta,
    seen: &mut HashSet<i64>,
    t: i64,
) -> Result<Option<String>, TicketError> {
    Ok(if t > meta.minted {
        Some(format!("ticket {t} is above minted ({})", meta.minted))
    } else if !seen.insert(t) {
        Some(format!("ticket {t} is in two orders"))
    } else if store.is_free(t)? {
        Some(format!("ticket {t} is restored as free already"))
    } else {
        None
    })
}

/// What is wrong with restoring seat `t` in an order: a seat id outside
/// the layout, or a seat in two orders (of this call, or restored already:
/// every seat starts free, so a taken one is in an earlier order).
fn seat_problem(
    store: &mut impl Store,
    meta: &Meta,
    seen: &mut HashSet<i64>,
    t: i64,
) -> Result<Option<String>, TicketError> {
    Ok(if !(1..=meta.total).contains(&t) {
        Some(format!(
            "seat {t} is not a seat of the layout (1..={})",
            meta.total
        ))
    } else if !seen.insert(t) || !store.is_free(t)? {
        Some(format!("seat {t} is in two orders"))
    } else {
        None
    })
}

/// `TICKET.RESTORE E FREE`: puts numbers into the pool; returns how many
/// are in it. Refused, with nothing changed, for a number above `minted`,
/// in the pool already, or given twice.
pub fn restore_free(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    free: &[RangeInclusive<i64>],
) -> Result<i64, TicketError> {
    let (meta, _) = restoring(store, event)?;
    store.len(Part::Pool)?;
    let invalid = |why: String| TicketError::Invalid(format!("TICKET.RESTORE FREE: {why}"));
    if meta.seated {
        return Err(invalid(
            "a seated event's free seats are the seats in no order: it takes no FREE".into(),
        ));
    }
    let mut sorted = free.to_vec();
    sorted.sort_by_key(|r| *r.start());
    for pair in sorted.windows(2) {
        if pair[1].start() <= pair[0].end() {
            return Err(invalid(format!(
                "{} is given twice",
                pair[1].start().max(pair[0].start())
            )));
        }
    }
    for range in &sorted {
        if *range.end() > meta.minted {
            return Err(invalid(format!(
                "{} is above minted ({})",
                range.end(),
                meta.minted
            )));
        }
        for n in range.clone() {
            if store.is_free(n)? {
                return Err(invalid(format!("{n} is in the pool already")));
            }
        }
    }
    out.apply(store, Effect::RestoreFree(free.to_vec()));
    store.len(Part::Pool)
}

/// `TICKET.RESTORE E AFTER`: restores generations, scans and the transfer
/// deadline; returns how many tickets it carried. Refused, with nothing
/// changed, for a ticket above `total` (the hashes' other checks are the
/// decoder's; which tickets are sold is the snapshot's business, as
/// MySQL's live rows say).
pub fn restore_after(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    after: &protocol::restore_after::AfterSale,
) -> Result<i64, TicketError> {
    let (meta, _) = restoring(store, event)?;
    if let Some(s) = after.tickets.iter().find(|s| s.ticket > meta.total) {
        return Err(TicketError::Invalid(format!(
            "TICKET.RESTORE AFTER: ticket {} is above total ({})",
            s.ticket, meta.total
        )));
    }
    // Both hashes read first: a key of another type refuses it unchanged.
    for hash in [After::Gens, After::Scans] {
        store.after_field(hash, 1)?;
    }
    out.apply(store, Effect::RestoreAfter(after.clone()));
    Ok(after.tickets.len() as i64)
}

/// `TICKET.RESTORE E ALLOCATION`: restores one allocation; returns how
/// many are restored so far. Refused, with nothing changed, for a name
/// restored already, more than 64, a free ticket above `minted` (a seat
/// outside the layout), not free (a seat: held, sold or allocated; a
/// number: in the pool or another allocation), a user not restored yet,
/// in another allocation or given twice, or a `claimed` other than the
/// tickets of the users' orders.
pub fn restore_allocation<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    allocation: &Allocation<&'a str>,
) -> Result<i64, TicketError> {
    let (meta, _) = restoring(store, event)?;
    let name = allocation.name;
    let invalid = |why: String| {
        TicketError::Invalid(format!(
            "TICKET.RESTORE ALLOCATION {}: {why}",
            crate::error::quote(name.as_bytes())
        ))
    };
    let restored = store.allocations()?;
    if restored.iter().any(|(n, _)| n == name) {
        return Err(invalid("restored already".into()));
    }
    if restored.len() >= MAX_ALLOCATIONS {
        return Err(invalid(format!(
            "an event has at most {MAX_ALLOCATIONS} allocations"
        )));
    }
    for &t in &allocation.free {
        let problem = if !(1..=meta.minted).contains(&t) {
            Some(format!("ticket {t} is above minted ({})", meta.minted))
        } else if meta.seated && !store.is_free(t)? {
            Some(format!("seat {t} is not free (in an order or allocation)"))
        } else if !meta.seated && store.is_free(t)? {
            Some(format!("ticket {t} is restored as free already"))
        } else if restored
            .iter()
            .any(|(_, a)| a.free.binary_search(&t).is_ok())
        {
            Some(format!("ticket {t} is in another allocation"))
        } else {
            None
        };
        if let Some(problem) = problem {
            return Err(invalid(problem));
        }
    }
    let mut users = HashSet::with_capacity(allocation.users.len());
    let mut claimed = 0;
    for &user in &allocation.users {
        let quoted = || crate::error::quote(user.as_bytes());
        let Some(tickets) = store.holder(user)? else {
            return Err(invalid(format!(
                "user {} has no restored order (restore ORDERS first)",
                quoted()
            )));
        };
        if !users.insert(user) || store.alloc_field(&alloc_user(user))?.is_some() {
            return Err(invalid(format!(
                "user {} is in an allocation already",
                quoted()
            )));
        }
        claimed += tickets.as_slice().len() as i64;
    }
    if claimed != allocation.claimed {
        return Err(invalid(format!(
            "claimed is {} but its users' orders hold {claimed} tickets",
            allocation.claimed
        )));
    }
    let restored = restored.len() as i64 + 1;
    let allocation = Allocation {
        name: Cow::Borrowed(name),
        free: allocation.free.clone(),
        claimed,
        release: allocation.release,
        users: allocation.users.iter().map(|u| Cow::Borrowed(*u)).collect(),
    };
    out.apply(store, Effect::RestoreAllocation(allocation));
    Ok(restored)
}

/// `TICKET.RESTORE E COMMIT`: once every order and every free number is
/// restored, replaces the log by one whose first entry is `op=restore` at
/// `max(now-0, next(from), next(the old log's last id))` and gives the event
/// its status; returns that id.
pub fn restore_commit(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    now: i64,
) -> Result<StreamId, TicketError> {
    let (meta, staging) = restoring(store, event)?;
    let (holders, free) = (store.len(Part::Holders)?, store.len(Part::Pool)?);
    let accounted = holders + meta.extra + free + i64::from(meta.allocs.free);
    let sum = meta.minted * (meta.minted + 1) / 2;
    let detail = if holders != staging.orders {
        Some(format!("{holders} of {} orders restored", staging.orders))
    } else if meta.seated {
        // Every seat in no order is free: nothing else to account for.
        None
    } else if accounted != meta.minted {
        Some(format!(
            "{accounted} of the {} numbers up to minted restored (held, sold, free or allocated)",
            meta.minted
        ))
    } else if staging.sum != sum {
        Some(
            "the numbers restored are not 1 to minted once each: some number is both held and free (or allocated)"
                .to_owned(),
        )
    } else {
        None
    };
    if let Some(detail) = detail {
        return Err(TicketError::Incomplete {
            event: event.to_owned(),
            detail,
        });
    }
    let incarnation = meta.incarnation.ok_or_else(|| {
        TicketError::Corrupt(format!(
            "the meta hash of event '{event}' has no incarnation"
        ))
    })?;
    let after = |id: Option<StreamId>| id.and_then(StreamId::next).unwrap_or_default();
    let id = StreamId::new(now.max(0) as u64, 0)
        .max(after(Some(staging.from)))
        .max(after(store.last_log_id()?));
    let op = Op::Restore {
        incarnation,
        status: staging.status,
        from: staging.from,
    };
    out.append(store, Record { op, at: now }, None, Some(id));
    Ok(id)
}
