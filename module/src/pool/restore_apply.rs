//! How a replica, the AOF and the primary apply a rebuild's restore
//! steps (`TICKET.RESTORE`, docs/design.md "Rebuild"): the event's state
//! begun empty, its orders, allocations and free numbers, each as the
//! apply of the ops that made them would have written it.

use std::ops::RangeInclusive;

use protocol::keys::alloc_user;
use protocol::restore::{Allocation as Restored, Begin, Order};
use protocol::seats::Seat;

use super::model::{Allocation, Allocs, Meta, Staging, Status};
use super::store::{MetaWrite, Scope, Set, Store};
use super::writes::{add_counts, count, seated, write_allocation};

/// A restore begins: the event's state (not its log) is replaced by an
/// empty one being restored, with the snapshot's settings.
pub fn restore_begin(store: &mut impl Store, begin: &Begin) {
    store.delete(Scope::State);
    let meta = Meta {
        total: begin.total,
        minted: begin.minted,
        status: Status::Restoring,
        opens_at: begin.opens_at,
        closes_at: begin.closes_at,
        hold: begin.checkout.hold,
        limit: begin.checkout.limit,
        held: 0,
        extra: 0,
        offer: begin.checkout.offer,
        waitseq: 0,
        incarnation: Some(begin.incarnation),
        draw: None,
        seated: begin.layout.is_some(),
        allocs: Allocs::default(),
        listed: 0,
    };
    // No creation time: a replica could not know the primary's.
    store.write_meta(MetaWrite::Create {
        meta: &meta,
        created_at: 0,
    });
    store.write_meta(MetaWrite::Staging(&Staging {
        status: begin.status,
        orders: begin.orders,
        from: begin.from,
        sum: 0,
    }));
    // A seated event: its layout, every seat free until its orders come.
    if let Some(layout) = &begin.layout {
        store.create_seating(layout);
    }
}

/// Restored orders: holders, holds, the meta counters and (a seated event)
/// the seat state, as the apply of their claims would have written them.
pub fn restore_orders<U: AsRef<str>>(store: &mut impl Store, orders: &[Order<U>]) {
    let (mut held, mut extra, mut sum) = (0, 0, 0i64);
    let seated = seated(store);
    for order in orders {
        let user = order.user.as_ref();
        store.set_holder(user, Some(&order.tickets));
        let n = count(&order.tickets);
        if seated {
            let seat = if order.until > 0 {
                Seat::Held
            } else {
                Seat::Sold
            };
            store.set_seats(order.tickets.as_slice(), seat);
        }
        if order.until > 0 {
            store.set_score(Set::Holds, user, Some(order.until));
            held += n;
        }
        extra += n - 1;
        sum = order
            .tickets
            .as_slice()
            .iter()
            .fold(sum, |s, t| s.wrapping_add(*t));
    }
    add_counts(store, held, extra);
    store.write_meta(MetaWrite::AddStagedSum(sum));
}

/// A restored allocation, as `op=allocate` and its claims left it: its
/// free tickets out of the pool (a seated event: its seats allocated),
/// its users' orders marked as its, and a key nobody has
/// ([`Allocation::RESTORED_KEY`]: MySQL never stores one).
pub fn restore_allocation<U: AsRef<str>>(store: &mut impl Store, restored: &Restored<U>) {
    let seated = seated(store);
    let mut sum = 0i64;
    for &t in &restored.free {
        sum = sum.wrapping_add(t);
        if !seated {
            store.set_free(t..=t, false);
        }
    }
    if seated {
        store.set_seats(&restored.free, Seat::Allocated);
    }
    for user in &restored.users {
        store.set_alloc_field(&alloc_user(user.as_ref()), Some(restored.name.as_ref()));
    }
    let allocation = Allocation {
        release: restored.release,
        claimed: restored.claimed,
        key: Some(Allocation::RESTORED_KEY),
        free: restored.free.clone(),
    };
    write_allocation(store, restored.name.as_ref(), &allocation);
    store.write_meta(MetaWrite::AddStagedSum(sum));
}

/// Restored free numbers, into the pool.
pub fn restore_free(store: &mut impl Store, free: &[RangeInclusive<i64>]) {
    let mut sum = 0i64;
    for range in free {
        let (a, b) = (*range.start(), *range.end());
        let span = (a as i128 + b as i128) * (b as i128 - a as i128 + 1) / 2;
        sum = sum.wrapping_add(span as i64);
        store.set_free(range.clone(), true);
    }
    store.write_meta(MetaWrite::AddStagedSum(sum));
}
