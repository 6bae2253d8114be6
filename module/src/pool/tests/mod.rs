//! Unit and property tests of the pool, over [`MemoryStore`]. This file
//! holds the shared helpers: they call the pool as a command does (a fresh
//! [`Effects`], then the commit step) with plain `now` times, so the tests
//! read like the commands. The tests live in one file per topic.

mod after;
mod allocations;
mod checkout;
mod claims;
mod draw;
mod drop;
mod reference;
mod resale;
mod restore;
mod seats;
mod waitlist;

use std::ops::RangeInclusive;

use protocol::effect::Checkout;
use protocol::record::Incarnation;
use protocol::restore::{Begin, Order};
use protocol::StreamId;

use super::effects::Effects;
use super::memory::MemoryStore;
use super::model::*;
use super::store::Store;
use crate::error::TicketError;
use crate::pool::{self as c, self as w, restore as r, settle as st};

/// `TICKET.OPEN` or `TICKET.CLOSE`, as the status to set.
pub fn open_or_close(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    status: Status,
    clock: Clock,
) -> Result<(), TicketError> {
    match status {
        Status::Open => c::open(store, out, event, clock),
        _ => c::close(store, out, event, clock),
    }
}

/// A store that keeps what the commit step is given.
trait Committed: Store {
    fn commit(&mut self, out: &Effects<'_>);
}

impl Committed for MemoryStore {
    fn commit(&mut self, out: &Effects<'_>) {
        MemoryStore::commit(self, out)
    }
}

/// Runs one command's pool call, then its commit step (also on errors).
fn run<'a, S: Committed, T>(s: &mut S, f: impl FnOnce(&mut S, &mut Effects<'a>) -> T) -> T {
    let mut out = Effects::default();
    let result = f(s, &mut out);
    s.commit(&out);
    result
}

fn init<S: Committed>(
    s: &mut S,
    event: &str,
    window: (i64, i64, i64),
    checkout: Checkout,
    incarnation: Incarnation,
    now: i64,
) -> Result<(), TicketError> {
    run(s, |s, out| {
        c::init(s, out, event, window, checkout, incarnation, now)
    })
}

fn claim<S: Committed>(
    s: &mut S,
    event: &str,
    user: &str,
    options: ClaimOptions,
    now: i64,
    chunk: i64,
) -> Result<Claim, TicketError> {
    run(s, |s, out| {
        c::claim(s, out, event, user, options, Clock::at(now), chunk)
    })
}

fn confirm<S: Committed>(s: &mut S, event: &str, user: &str, now: i64) -> Result<i64, TicketError> {
    run(s, |s, out| c::confirm(s, out, event, user, Clock::at(now)))
}

fn cancel<S: Committed>(
    s: &mut S,
    event: &str,
    user: &str,
    now: i64,
) -> Result<Option<i64>, TicketError> {
    run(s, |s, out| c::cancel(s, out, event, user, Clock::at(now)))
}

fn set_status<S: Committed>(
    s: &mut S,
    event: &str,
    status: Status,
    now: i64,
) -> Result<(), TicketError> {
    run(s, |s, out| {
        open_or_close(s, out, event, status, Clock::at(now))
    })
}

fn drop_event<S: Committed>(
    s: &mut S,
    event: &str,
    force: bool,
    now: i64,
) -> Result<i64, TicketError> {
    run(s, |s, out| c::drop_event(s, out, event, force, now))
}

fn order(
    s: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: Option<i64>,
) -> Result<Option<OrderReport>, TicketError> {
    c::order(s, event, user, expired_from.map(Clock::at))
}

fn holder(
    s: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: Option<i64>,
) -> Result<Option<i64>, TicketError> {
    c::holder(s, event, user, expired_from.map(Clock::at))
}

fn report(
    s: &mut impl Store,
    event: &str,
    expired_from: Option<i64>,
) -> Result<Report, TicketError> {
    c::report(s, event, expired_from.map(Clock::at))
}

fn wait<S: Committed>(
    s: &mut S,
    event: &str,
    user: &str,
    count: Option<i64>,
    now: i64,
) -> Result<i64, TicketError> {
    run(s, |s, out| {
        w::wait(s, out, event, user, count, Clock::at(now))
    })
}

fn leave<S: Committed>(s: &mut S, event: &str, user: &str, now: i64) -> Result<bool, TicketError> {
    run(s, |s, out| w::leave(s, out, event, user, Clock::at(now)))
}

fn position(
    s: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: Option<i64>,
) -> Result<Option<i64>, TicketError> {
    w::position(s, event, user, expired_from.map(Clock::at))
}

fn sweep<S: Committed>(s: &mut S, event: &str, now: i64, max: usize) -> Result<usize, TicketError> {
    run(s, |s, out| st::sweep(s, out, event, Clock::at(now), max))
}

fn expire_holds<S: Committed>(s: &mut S, now: i64, max: usize) -> Result<usize, TicketError> {
    run(s, |s, out| st::expire_holds(s, out, now, max))
}

fn restore_begin<S: Committed>(
    s: &mut S,
    event: &str,
    begin: &Begin,
    force: bool,
) -> Result<(), TicketError> {
    run(s, |s, out| r::restore_begin(s, out, event, begin, force))
}

fn restore_orders<S: Committed>(
    s: &mut S,
    event: &str,
    orders: &[Order<&str>],
) -> Result<i64, TicketError> {
    run(s, |s, out| r::restore_orders(s, out, event, orders))
}

fn restore_free<S: Committed>(
    s: &mut S,
    event: &str,
    free: &[RangeInclusive<i64>],
) -> Result<i64, TicketError> {
    run(s, |s, out| r::restore_free(s, out, event, free))
}

fn restore_allocation<S: Committed>(
    s: &mut S,
    event: &str,
    allocation: &protocol::restore::Allocation<&str>,
) -> Result<i64, TicketError> {
    run(s, |s, out| r::restore_allocation(s, out, event, allocation))
}

fn restore_commit<S: Committed>(s: &mut S, event: &str, now: i64) -> Result<StreamId, TicketError> {
    run(s, |s, out| r::restore_commit(s, out, event, now))
}

/// A claim without options by the user, as `TICKET.CLAIM E user`.
fn plain(s: &mut MemoryStore, user: &str, now: i64, chunk: i64) -> Result<Claim, TicketError> {
    claim(s, "e", user, ClaimOptions::default(), now, chunk)
}

fn event(total: i64) -> MemoryStore {
    let mut s = MemoryStore::default();
    init(
        &mut s,
        "e",
        (total, 0, 0),
        Checkout::default(),
        Incarnation(1),
        1,
    )
    .unwrap();
    s
}

fn checkout_event(total: i64, hold: i64, limit: i64) -> MemoryStore {
    let mut s = MemoryStore::default();
    let offer = protocol::effect::default_offer(hold);
    init(
        &mut s,
        "e",
        (total, 0, 0),
        Checkout { hold, limit, offer },
        Incarnation(1),
        1,
    )
    .unwrap();
    s
}

fn with(count: Option<i64>, hold: Option<i64>) -> ClaimOptions {
    ClaimOptions {
        seats: None,
        count,
        hold,
        from: None,
    }
}
