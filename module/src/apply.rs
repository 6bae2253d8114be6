//! The writes of one state change, shared by the primary and its replicas.
//!
//! The primary's commands decide a change (in `pool`) and call [`append`]
//! with no stream id: the store appends the log entry at an id it picks.
//! `TICKET._APPLY` on a replica or at AOF load decodes the replicated
//! [`Effect`] and calls [`apply`], which runs the very same writes at the
//! primary's id. Nothing here decides: every value is in the record (the
//! meta counters `held` and `extra` are adjusted by what the record says,
//! and the only thing read, whether a cancelled order was held, is the same
//! on both sides), so the two sides cannot diverge.

use std::ops::RangeInclusive;

use protocol::effect::Effect;
use protocol::record::{Op, Record, Tickets};
use protocol::restore::{Begin, Order};
use protocol::StreamId;

use crate::pool::{Meta, Staging, Status, Store};

/// Performs a replicated effect.
pub fn apply(store: &mut impl Store, effect: &Effect<&str>) {
    match effect {
        Effect::Append { id, record, minted } => {
            append(store, record, *minted, Some(*id));
        }
        Effect::DropAll => {
            store.delete_state();
            store.delete_log();
        }
        Effect::RestoreBegin(begin) => restore_begin(store, begin),
        Effect::RestoreOrders(orders) => restore_orders(store, orders),
        Effect::RestoreFree(free) => restore_free(store, free),
        Effect::Wait { user, place } => store.add_waiting(user, *place),
        Effect::Leave { user } => {
            store.remove_waiting(user);
        }
    }
}

/// Writes the state change `record` describes and appends it to the log (at
/// `id`, or at an id the store picks); returns the id used. `minted` is the
/// event's new `minted` when a claim minted numbers: the claimed tickets
/// above the old `minted` are new, and the numbers above the highest claimed
/// one up to `minted` go into the pool.
pub fn append(
    store: &mut impl Store,
    record: &Record<&str>,
    minted: Option<i64>,
    id: Option<StreamId>,
) -> StreamId {
    match &record.op {
        Op::Init {
            total,
            opens_at,
            closes_at,
            checkout,
            incarnation,
        } => {
            let meta = Meta {
                total: *total,
                minted: 0,
                status: Status::Open,
                opens_at: *opens_at,
                closes_at: *closes_at,
                hold: checkout.hold,
                limit: checkout.limit,
                held: 0,
                extra: 0,
                offer: checkout.offer,
                waitseq: 0,
                incarnation: *incarnation,
            };
            store.create_meta(&meta, record.at);
        }
        Op::Claim { user, tickets } => take(store, user, tickets, minted),
        Op::Hold {
            user,
            tickets,
            until,
        } => hold(store, user, tickets, minted, *until),
        // An offer is a hold the waiting list decided for its head, who
        // leaves the list with it.
        Op::Offer {
            user,
            tickets,
            until,
        } => {
            store.remove_waiting(user);
            hold(store, user, tickets, minted, *until);
        }
        Op::Confirm { user, tickets } => {
            store.remove_hold(user);
            store.add_counts(-count(tickets), 0);
        }
        Op::Expire { user, tickets } | Op::Cancel { user, tickets } => {
            let held = store.remove_hold(user);
            give_back(store, user, tickets, held);
        }
        Op::Open => store.set_status(Status::Open),
        Op::Close => store.set_status(Status::Closed),
        // The log stays: it is the trace of the drop.
        Op::Drop => {
            store.delete_state();
        }
        // The snapshot replaces every earlier entry.
        Op::Restore { status, .. } => {
            store.delete_log();
            store.set_status(Status::from(*status));
            store.clear_staging();
        }
    }
    store.append(record, id)
}

fn hold(store: &mut impl Store, user: &str, tickets: &Tickets, minted: Option<i64>, until: i64) {
    take(store, user, tickets, minted);
    store.set_hold(user, until);
    store.add_counts(count(tickets), 0);
}

fn count(tickets: &Tickets) -> i64 {
    tickets.as_slice().len() as i64
}

/// Gives `tickets` to `user`, taking them from the pool or from the
/// numbers just minted.
fn take(store: &mut impl Store, user: &str, tickets: &Tickets, minted: Option<i64>) {
    match (tickets, minted) {
        // The hot path: a single freshly minted ticket was never pooled.
        (Tickets::One(_), Some(_)) => {}
        // Removing a number the pool does not have (a minted one) is a no-op.
        _ => tickets.as_slice().iter().for_each(|t| store.take_free(*t)),
    }
    if let Some(minted) = minted {
        let highest = tickets.as_slice().last().copied().unwrap_or(minted);
        if minted > highest {
            store.add_free(highest + 1..=minted);
        }
        store.set_minted(minted);
    }
    store.set_holder(user, tickets);
    if tickets.as_slice().len() > 1 {
        store.add_counts(0, count(tickets) - 1);
    }
}

/// Returns `user`'s `tickets` to the pool (`held`: they were a held order).
fn give_back(store: &mut impl Store, user: &str, tickets: &Tickets, held: bool) {
    store.remove_holder(user);
    for ticket in tickets.as_slice() {
        store.add_free(*ticket..=*ticket);
    }
    let held = if held { count(tickets) } else { 0 };
    let extra = count(tickets) - 1;
    if held != 0 || extra != 0 {
        store.add_counts(-held, -extra);
    }
}

/// A restore begins: the event's state (not its log) is replaced by an
/// empty one being restored, with the snapshot's settings.
pub fn restore_begin(store: &mut impl Store, begin: &Begin) {
    store.delete_state();
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
    };
    // No creation time: a replica could not know the primary's.
    store.create_meta(&meta, 0);
    store.set_staging(&Staging {
        status: begin.status,
        orders: begin.orders,
        from: begin.from,
        sum: 0,
    });
}

/// Restored orders: holders, holds and the meta counters, as the apply of
/// their claims would have written them.
pub fn restore_orders(store: &mut impl Store, orders: &[Order<&str>]) {
    let (mut held, mut extra, mut sum) = (0, 0, 0i64);
    for order in orders {
        store.set_holder(order.user, &order.tickets);
        let n = count(&order.tickets);
        if order.until > 0 {
            store.set_hold(order.user, order.until);
            held += n;
        }
        extra += n - 1;
        sum = order
            .tickets
            .as_slice()
            .iter()
            .fold(sum, |s, t| s.wrapping_add(*t));
    }
    store.add_counts(held, extra);
    store.add_staged_sum(sum);
}

/// Restored free numbers, into the pool.
pub fn restore_free(store: &mut impl Store, free: &[RangeInclusive<i64>]) {
    let mut sum = 0i64;
    for range in free {
        let (a, b) = (*range.start(), *range.end());
        let span = (a as i128 + b as i128) * (b as i128 - a as i128 + 1) / 2;
        sum = sum.wrapping_add(span as i64);
        store.add_free(range.clone());
    }
    store.add_staged_sum(sum);
}
