//! Unit and property tests of the pool, over [`MemoryStore`]. The helpers
//! at the top call the pool as a command does (a fresh [`Effects`], then the
//! commit step) with plain `now` times, so the tests read like the commands.

use std::collections::{BTreeSet, HashMap};
use std::ops::RangeInclusive;

use proptest::prelude::*;
use protocol::effect::{Checkout, Effect, WAIT_COUNT_SPAN};
use protocol::record::{Incarnation, Op, Record, Tickets};
use protocol::restore::{Begin, Order};
use protocol::StreamId;

use super::effects::Effects;
use super::memory::MemoryStore;
use super::model::*;
use super::store::{MetaWrite, Part, Scope, Set, Store};
use super::{apply, claim as c, restore as r, settle as st, waitlist as w};
use crate::error::TicketError;

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
        c::set_status(s, out, event, status, Clock::at(now))
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

fn position(s: &mut impl Store, event: &str, user: &str) -> Result<Option<i64>, TicketError> {
    w::position(s, event, user)
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

#[test]
fn claims_hand_out_lowest_first_and_sell_out() {
    let mut s = event(3);
    let got: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|u| plain(&mut s, u, 2, 2).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            Claim::New(Tickets::One(1)),
            Claim::New(Tickets::One(2)),
            Claim::New(Tickets::One(3))
        ]
    );
    assert_eq!(
        plain(&mut s, "d", 2, 2),
        Err(TicketError::SoldOut("e".into()))
    );
    assert_eq!(plain(&mut s, "b", 2, 2), Ok(Claim::Repeat(Tickets::One(2))));
    assert_eq!(
        s.log.len(),
        4,
        "init + 3 claims; loser and repeat log nothing"
    );
}

#[test]
fn cancelled_numbers_are_reissued_first() {
    let mut s = event(10);
    for u in ["a", "b", "c"] {
        plain(&mut s, u, 2, 4).unwrap();
    }
    assert_eq!(cancel(&mut s, "e", "b", 3), Ok(Some(2)));
    assert_eq!(cancel(&mut s, "e", "b", 3), Ok(None));
    assert_eq!(plain(&mut s, "d", 4, 4), Ok(Claim::New(Tickets::One(2))));
    assert_eq!(plain(&mut s, "b", 4, 4), Ok(Claim::New(Tickets::One(4))));
}

#[test]
fn the_pool_only_holds_one_chunk() {
    let mut s = event(10_000_000);
    assert!(s.pool.is_empty());
    plain(&mut s, "a", 2, 1024).unwrap();
    assert_eq!(s.pool.len(), 1023);
    assert_eq!(s.meta.as_ref().unwrap().minted, 1024);
    assert_eq!(report(&mut s, "e", None).unwrap().remaining, 9_999_999);
}

#[test]
fn windows_and_status_gate_new_claims_but_not_repeats() {
    let mut s = MemoryStore::default();
    init(
        &mut s,
        "e",
        (5, 100, 200),
        Checkout::default(),
        Incarnation(1),
        1,
    )
    .unwrap();
    assert!(matches!(
        plain(&mut s, "a", 99, 8),
        Err(TicketError::NotOpen { opens_at: 100, .. })
    ));
    assert_eq!(plain(&mut s, "a", 100, 8), Ok(Claim::New(Tickets::One(1))));
    assert_eq!(
        plain(&mut s, "b", 200, 8),
        Err(TicketError::Closed("e".into()))
    );
    assert_eq!(
        plain(&mut s, "a", 300, 8),
        Ok(Claim::Repeat(Tickets::One(1)))
    );
    let mut s = event(5);
    set_status(&mut s, "e", Status::Closed, 2).unwrap();
    set_status(&mut s, "e", Status::Closed, 2).unwrap();
    assert_eq!(
        plain(&mut s, "a", 3, 8),
        Err(TicketError::Closed("e".into()))
    );
    set_status(&mut s, "e", Status::Open, 4).unwrap();
    assert_eq!(plain(&mut s, "a", 5, 8), Ok(Claim::New(Tickets::One(1))));
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops, ["init", "close", "open", "claim"]);
}

#[test]
fn errors_change_nothing() {
    let mut s = event(1);
    plain(&mut s, "a", 2, 8).unwrap();
    let before = format!("{s:?}");
    assert!(plain(&mut s, "b", 2, 8).is_err());
    assert!(init(
        &mut s,
        "e",
        (5, 0, 0),
        Checkout::default(),
        Incarnation(2),
        3
    )
    .is_err());
    assert!(drop_event(&mut s, "e", false, 3).is_err());
    assert_eq!(before, format!("{s:?}"));
}

#[test]
fn keys_that_disagree_refuse_writes_and_change_nothing() {
    let mut s = event(10);
    for u in ["a", "b", "c"] {
        plain(&mut s, u, 2, 1).unwrap();
    }
    // As if a slot migration had moved the meta hash but not the holders.
    s.holders.remove("b");
    let before = format!("{s:?}");
    let again = TicketError::TryAgain("e".into());
    assert_eq!(plain(&mut s, "d", 3, 1), Err(again.clone()));
    assert_eq!(cancel(&mut s, "e", "a", 3), Err(again.clone()));
    assert_eq!(confirm(&mut s, "e", "a", 3), Err(again));
    assert_eq!(before, format!("{s:?}"));
}

#[test]
fn unknown_event() {
    let mut s = MemoryStore::default();
    let no = TicketError::NoEvent("e".into());
    assert_eq!(plain(&mut s, "a", 1, 8), Err(no.clone()));
    assert_eq!(cancel(&mut s, "e", "a", 1), Err(no.clone()));
    assert_eq!(confirm(&mut s, "e", "a", 1), Err(no.clone()));
    assert_eq!(holder(&mut s, "e", "a", None), Err(no.clone()));
    assert_eq!(order(&mut s, "e", "a", None), Err(no.clone()));
    assert_eq!(set_status(&mut s, "e", Status::Open, 1), Err(no));
    assert_eq!(drop_event(&mut s, "e", false, 1), Ok(0));
    assert!(
        s.log.is_empty() && !s.log_key,
        "no key at all: nothing logged"
    );
}

#[test]
fn drop_waits_for_the_log_unless_forced() {
    let mut s = event(5);
    assert_eq!(
        drop_event(&mut s, "e", false, 2),
        Err(TicketError::Unsynced {
            event: "e".into(),
            entries: 1
        })
    );
    s.log.clear();
    assert_eq!(drop_event(&mut s, "e", false, 2), Ok(1));
    let mut s = event(5);
    plain(&mut s, "a", 2, 8).unwrap();
    assert_eq!(
        drop_event(&mut s, "e", true, 3),
        Ok(3),
        "meta, pool, holders"
    );
    assert!(s.meta.is_none());
}

#[test]
fn a_drop_keeps_the_log_as_its_trace_and_a_new_init_continues_it() {
    let mut s = event(5);
    plain(&mut s, "a", 2, 8).unwrap();
    assert_eq!(drop_event(&mut s, "e", true, 3), Ok(3));
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops, ["init", "claim", "drop"]);
    let (id, _) = s.log[2];
    assert!(matches!(
        s.effects.last(),
        Some(Effect::Append { record: Record { op: Op::Drop, at: 3 }, id: i, .. }) if *i == id
    ));
    // Trimmed by the sidecar: only the (empty) log is left.
    s.log.clear();
    assert_eq!(drop_event(&mut s, "e", false, 4), Ok(0));
    assert_eq!(s.log.len(), 1, "dropped again: logged again");
    s.log.clear();
    init(
        &mut s,
        "e",
        (5, 0, 0),
        Checkout::default(),
        Incarnation(9),
        5,
    )
    .unwrap();
    let (new, _) = s.log[0];
    assert!(new > id, "the ids keep growing: {new} > {id}");
    assert_eq!(plain(&mut s, "b", 6, 8), Ok(Claim::New(Tickets::One(1))));
}

/// A [`MemoryStore`] whose pool or holders key holds the wrong type.
struct Clobbered {
    inner: MemoryStore,
    pool: bool,
}

impl Clobbered {
    fn wrong(&self) -> TicketError {
        let part = if self.pool { "pool" } else { "holders" };
        TicketError::WrongType {
            key: format!("ticket:{{e}}:{part}"),
            expected: if self.pool { "zset" } else { "hash" },
        }
    }

    /// Whether reading `part` fails.
    fn clobbered(&self, part: Part) -> bool {
        matches!(
            (part, self.pool),
            (Part::Pool, true) | (Part::Holders, false)
        )
    }
}

impl Committed for Clobbered {
    fn commit(&mut self, out: &Effects<'_>) {
        self.inner.commit(out)
    }
}

impl Store for Clobbered {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        self.inner.meta()
    }
    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        self.inner.staging()
    }
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        match self.clobbered(Part::Holders) {
            false => self.inner.holder(user),
            true => Err(self.wrong()),
        }
    }
    fn score(&mut self, set: Set, user: &str) -> Result<Option<i64>, TicketError> {
        self.inner.score(set, user)
    }
    fn lowest(
        &mut self,
        set: Set,
        highest: i64,
        max: usize,
    ) -> Result<Vec<(String, i64)>, TicketError> {
        self.inner.lowest(set, highest, max)
    }
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.inner.waiting_rank(user)
    }
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        match self.clobbered(Part::Pool) {
            true => Err(self.wrong()),
            false => self.inner.lowest_free(),
        }
    }
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        match self.clobbered(Part::Pool) {
            true => Err(self.wrong()),
            false => self.inner.lowest_free_n(n),
        }
    }
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        self.inner.is_free(ticket)
    }
    fn len(&mut self, part: Part) -> Result<i64, TicketError> {
        match self.clobbered(part) {
            true => Err(self.wrong()),
            false => self.inner.len(part),
        }
    }
    fn exists(&mut self, part: Part) -> Result<bool, TicketError> {
        match self.clobbered(part) {
            true => Err(self.wrong()),
            false => self.inner.exists(part),
        }
    }
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        self.inner.last_log_id()
    }
    fn write_meta(&mut self, write: MetaWrite<'_>) {
        self.inner.write_meta(write)
    }
    fn set_holder(&mut self, user: &str, tickets: Option<&Tickets>) {
        self.inner.set_holder(user, tickets)
    }
    fn set_score(&mut self, set: Set, user: &str, score: Option<i64>) -> bool {
        self.inner.set_score(set, user, score)
    }
    fn set_free(&mut self, numbers: RangeInclusive<i64>, free: bool) {
        self.inner.set_free(numbers, free)
    }
    fn append<U: AsRef<str>>(&mut self, record: &Record<U>, id: Option<StreamId>) -> StreamId {
        self.inner.append(record, id)
    }
    fn delete(&mut self, scope: Scope) -> i64 {
        self.inner.delete(scope)
    }
}

#[test]
fn drop_type_checks_pool_and_holders_even_when_meta_exists() {
    for pool in [true, false] {
        let mut inner = event(5);
        plain(&mut inner, "a", 2, 8).unwrap();
        let mut s = Clobbered { inner, pool };
        for force in [false, true] {
            assert!(
                matches!(
                    drop_event(&mut s, "e", force, 3),
                    Err(TicketError::WrongType { .. })
                ),
                "pool={pool} force={force}"
            );
            assert!(s.inner.meta.is_some(), "nothing may be deleted");
        }
    }
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
    ClaimOptions { count, hold }
}

#[test]
fn a_hold_is_confirmed_or_expires_and_its_numbers_go_back_lowest_first() {
    let mut s = checkout_event(10, 1000, 4);
    let got = claim(&mut s, "e", "a", with(Some(3), None), 10, 1);
    assert_eq!(got, Ok(Claim::Held(Tickets::Many(vec![1, 2, 3]))));
    assert_eq!(
        claim(&mut s, "e", "a", with(Some(2), None), 20, 1),
        Ok(Claim::Repeat(Tickets::Many(vec![1, 2, 3]))),
        "a holder gets the same tickets back, whatever COUNT says"
    );
    assert_eq!(plain(&mut s, "b", 20, 1), Ok(Claim::Held(Tickets::One(4))));
    assert_eq!(confirm(&mut s, "e", "b", 30), Ok(1));
    assert_eq!(confirm(&mut s, "e", "b", 31), Ok(1), "a repeat is a no-op");
    let r = report(&mut s, "e", Some(500)).unwrap();
    assert_eq!((r.remaining, r.held, r.claimed), (6, 3, 4));
    // From its deadline on, a's hold is free: before any sweep.
    let r = report(&mut s, "e", Some(1010)).unwrap();
    assert_eq!((r.remaining, r.held, r.claimed), (9, 0, 1));
    assert_eq!(order(&mut s, "e", "a", Some(1010)), Ok(None));
    assert!(
        order(&mut s, "e", "a", None).unwrap().is_some(),
        "a replica waits"
    );
    assert_eq!(
        claim(&mut s, "e", "c", with(Some(2), Some(0)), 1010, 1),
        Ok(Claim::New(Tickets::Many(vec![1, 2])))
    );
    assert_eq!(
        confirm(&mut s, "e", "a", 1011),
        Err(TicketError::NoHold {
            event: "e".into(),
            user: "a".into()
        })
    );
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops, ["init", "hold", "hold", "confirm", "expire", "claim"]);
    assert_eq!(cancel(&mut s, "e", "c", 1012), Ok(Some(1)));
    assert_eq!(
        s.pool.iter().take(3).copied().collect::<Vec<_>>(),
        [1, 2, 3]
    );
}

#[test]
fn count_is_all_or_nothing_and_bounded_by_limit() {
    let mut s = checkout_event(3, 0, 2);
    assert_eq!(
        claim(&mut s, "e", "a", with(Some(3), None), 2, 1),
        Err(TicketError::Limit {
            event: "e".into(),
            limit: 2,
            asked: 3
        })
    );
    claim(&mut s, "e", "a", with(Some(2), None), 2, 1).unwrap();
    assert_eq!(
        claim(&mut s, "e", "a", with(Some(3), None), 2, 1),
        Ok(Claim::Repeat(Tickets::Many(vec![1, 2]))),
        "a holder gets the tickets back, whatever COUNT says"
    );
    let before = format!("{s:?}");
    assert_eq!(
        claim(&mut s, "e", "b", with(Some(2), None), 2, 1),
        Err(TicketError::SoldOut("e".into()))
    );
    assert_eq!(before, format!("{s:?}"), "a refused claim takes nothing");
    assert_eq!(plain(&mut s, "b", 2, 1), Ok(Claim::New(Tickets::One(3))));
}

#[test]
fn the_sweep_is_bounded_and_resumes() {
    let mut s = checkout_event(100, 50, 1);
    for u in 0..10 {
        plain(&mut s, &format!("u{u}"), 5, 1).unwrap();
    }
    assert_eq!(expire_holds(&mut s, 54, 3), Ok(0));
    assert_eq!(expire_holds(&mut s, 55, 3), Ok(3));
    assert_eq!(expire_holds(&mut s, 55, 30), Ok(7));
    assert_eq!(expire_holds(&mut s, 56, 30), Ok(0));
    assert_eq!(s.meta.as_ref().map(|m| m.held), Some(0));
}

#[test]
fn returned_tickets_go_to_the_head_of_the_list_in_order() {
    let mut s = checkout_event(2, 0, 3);
    plain(&mut s, "a", 2, 1).unwrap();
    plain(&mut s, "b", 2, 1).unwrap();
    assert_eq!(wait(&mut s, "e", "w1", Some(2), 3), Ok(1));
    assert_eq!(wait(&mut s, "e", "w2", None, 3), Ok(2));
    assert_eq!(wait(&mut s, "e", "w1", None, 4), Ok(1), "idempotent");
    assert_eq!(
        wait(&mut s, "e", "a", None, 4),
        Err(TicketError::Holding {
            event: "e".into(),
            user: "a".into()
        })
    );
    assert_eq!(position(&mut s, "e", "w2"), Ok(Some(2)));
    // One ticket back: w1 wants two, so nobody is served (strict FIFO)
    // and nobody may claim it past the list.
    cancel(&mut s, "e", "a", 5).unwrap();
    assert!(s.offered.is_empty());
    assert_eq!(
        plain(&mut s, "x", 6, 1),
        Err(TicketError::SoldOut("e".into()))
    );
    cancel(&mut s, "e", "b", 7).unwrap();
    assert_eq!(s.offered, ["w1"]);
    assert_eq!(position(&mut s, "e", "w1"), Ok(None));
    assert_eq!(
        plain(&mut s, "w1", 8, 1),
        Ok(Claim::Repeat(Tickets::Many(vec![1, 2]))),
        "an offer is claimed back"
    );
    // The offer expires (10 min, HOLD is 0): w2 is next.
    assert_eq!(sweep(&mut s, "e", 7 + 600_000, 10), Ok(1));
    assert_eq!(s.offered, ["w1", "w2"]);
    assert_eq!(
        order(&mut s, "e", "w2", None).unwrap().map(|o| o.tickets),
        Some(Tickets::One(1))
    );
    assert_eq!(leave(&mut s, "e", "w2", 7 + 600_000), Ok(false));
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops[5..], ["offer", "expire", "offer"]);
}

#[test]
fn a_head_that_waited_a_full_offer_period_gets_what_is_free() {
    let mut s = checkout_event(2, 100, 3);
    plain(&mut s, "a", 2, 1).unwrap();
    plain(&mut s, "b", 2, 1).unwrap();
    confirm(&mut s, "e", "a", 2).unwrap();
    confirm(&mut s, "e", "b", 2).unwrap();
    wait(&mut s, "e", "w1", Some(3), 10).unwrap();
    wait(&mut s, "e", "w2", None, 10).unwrap();
    cancel(&mut s, "e", "a", 50).unwrap();
    assert!(s.offered.is_empty(), "w1 asked for 3");
    assert_eq!(leave(&mut s, "e", "nobody", 110), Ok(false));
    assert_eq!(s.offered, ["w1"], "after 100 ms w1 gets the one free");
    assert_eq!(s.holders.get("w1"), Some(&Tickets::One(1)));
}

#[test]
fn a_closed_event_offers_nothing_until_it_opens() {
    let mut s = checkout_event(1, 0, 1);
    plain(&mut s, "a", 2, 1).unwrap();
    set_status(&mut s, "e", Status::Closed, 3).unwrap();
    assert_eq!(wait(&mut s, "e", "w", None, 4), Ok(1));
    cancel(&mut s, "e", "a", 5).unwrap();
    assert!(s.offered.is_empty(), "closed: the list waits");
    set_status(&mut s, "e", Status::Open, 6).unwrap();
    assert_eq!(s.offered, ["w"]);
    assert_eq!(report(&mut s, "e", Some(6)).map(|r| r.waiting), Ok(0));
}

#[test]
fn a_holder_found_in_the_list_is_dropped_from_it_not_offered() {
    let mut s = checkout_event(2, 0, 1);
    plain(&mut s, "a", 2, 1).unwrap();
    plain(&mut s, "b", 2, 1).unwrap();
    wait(&mut s, "e", "w", None, 3).unwrap();
    // As if edited by hand: a holder put at the head of the list.
    s.waiting.insert("a".into(), WAIT_COUNT_SPAN + 1);
    cancel(&mut s, "e", "b", 4).unwrap();
    assert_eq!(s.offered, ["w"], "a is skipped, w is served");
    assert!(s.waiting.is_empty());
    assert!(s.effects.contains(&Effect::Leave { user: "a".into() }));
}

#[derive(Debug, Clone)]
enum Action {
    Claim {
        user: u8,
        count: Option<i64>,
        hold: Option<i64>,
    },
    Confirm(u8),
    Cancel(u8),
    Close,
    Open,
    /// Advance the clock by this many ms.
    Wait(i64),
    /// Sweep at most this many holds.
    Sweep(usize),
    /// `TICKET.WAIT` with an optional `COUNT`.
    Join(u8, Option<i64>),
    Leave(u8),
}

fn action() -> impl Strategy<Value = Action> {
    let claim = (
        0u8..30,
        proptest::option::of(1i64..5),
        proptest::option::of(prop_oneof![Just(0i64), 1i64..40]),
    )
        .prop_map(|(user, count, hold)| Action::Claim { user, count, hold });
    prop_oneof![
        8 => claim,
        2 => (0u8..30).prop_map(Action::Confirm),
        2 => (0u8..30).prop_map(Action::Cancel),
        1 => Just(Action::Close),
        1 => Just(Action::Open),
        3 => (0i64..25).prop_map(Action::Wait),
        2 => (1usize..4).prop_map(Action::Sweep),
        4 => (0u8..30, proptest::option::of(1i64..4)).prop_map(|(u, n)| Action::Join(u, n)),
        1 => (0u8..30).prop_map(Action::Leave),
    ]
}

/// The simple model: free numbers, each user's order (tickets and, while
/// held, its deadline), and the clock. Holds past their deadline count
/// as free wherever the model looks.
#[derive(Default)]
struct Model {
    free: BTreeSet<i64>,
    orders: HashMap<String, (Vec<i64>, Option<i64>)>,
    open: bool,
    now: i64,
    hold: i64,
    limit: i64,
    offer: i64,
    /// The waiting list in order: user, seq, count.
    waiting: Vec<(String, i64, i64)>,
    waitseq: i64,
    /// Users offered tickets, in order.
    offered: Vec<String>,
}

impl Model {
    /// The offer step (after the lapse of due holds).
    fn offer_step(&mut self) {
        self.lapse();
        while self.open {
            let Some((user, seq, wanted)) = self.waiting.first().cloned() else {
                break;
            };
            let free = self.free.len() as i64;
            let n = if free >= wanted {
                wanted
            } else if free > 0 && self.now >= seq + self.offer {
                free
            } else {
                break;
            };
            let tickets: Vec<i64> = (0..n).filter_map(|_| self.free.pop_first()).collect();
            let until = Some(self.now + self.offer);
            self.orders.insert(user.clone(), (tickets, until));
            self.waiting.remove(0);
            self.offered.push(user);
        }
    }

    fn within_limit(&self, n: i64) -> Result<(), TicketError> {
        match n > self.limit {
            true => Err(TicketError::Limit {
                event: "e".into(),
                limit: self.limit,
                asked: n,
            }),
            false => Ok(()),
        }
    }

    fn position(&self, user: &str) -> Option<i64> {
        let rank = self.waiting.iter().position(|(u, _, _)| u == user)?;
        Some(rank as i64 + 1)
    }

    fn wait(&mut self, user: &str, count: Option<i64>) -> Result<i64, TicketError> {
        self.offer_step();
        if self.orders.contains_key(user) {
            return Err(TicketError::Holding {
                event: "e".into(),
                user: user.into(),
            });
        }
        let n = count.unwrap_or(1);
        self.within_limit(n)?;
        if self.position(user).is_none() {
            self.waitseq = self.now.max(self.waitseq + 1);
            self.waiting.push((user.to_owned(), self.waitseq, n));
            self.offer_step();
        }
        Ok(self.position(user).unwrap_or(0))
    }

    fn leave(&mut self, user: &str) -> bool {
        self.offer_step();
        let before = self.waiting.len();
        self.waiting.retain(|(u, _, _)| u != user);
        let left = self.waiting.len() < before;
        if left {
            self.offer_step();
        }
        left
    }

    /// After the offer step: nobody waits who could be served.
    fn nobody_servable_waits(&self) -> bool {
        match self.waiting.first() {
            Some((_, seq, wanted)) if self.open => {
                let free = self.free.len() as i64;
                free < *wanted && (free == 0 || self.now < seq + self.offer)
            }
            _ => true,
        }
    }

    /// Frees every hold due at `now` (what commands see first).
    fn lapse(&mut self) {
        let now = self.now;
        let due: Vec<String> = self
            .orders
            .iter()
            .filter(|(_, (_, until))| until.is_some_and(|u| u <= now))
            .map(|(u, _)| u.clone())
            .collect();
        for user in due {
            if let Some((tickets, _)) = self.orders.remove(&user) {
                self.free.extend(tickets);
            }
        }
    }

    fn claim(
        &mut self,
        user: &str,
        count: Option<i64>,
        hold: Option<i64>,
    ) -> Result<Claim, TicketError> {
        self.offer_step();
        if let Some((tickets, _)) = self.orders.get(user) {
            return Ok(Claim::Repeat(Tickets::from_sorted(tickets.clone())));
        }
        let n = count.unwrap_or(1);
        self.within_limit(n)?;
        if !self.open {
            return Err(TicketError::Closed("e".into()));
        }
        if !self.waiting.is_empty() || (self.free.len() as i64) < n {
            return Err(TicketError::SoldOut("e".into()));
        }
        let tickets: Vec<i64> = (0..n).filter_map(|_| self.free.pop_first()).collect();
        let hold = hold.unwrap_or(self.hold);
        let until = (hold > 0).then_some(self.now + hold);
        self.orders
            .insert(user.to_owned(), (tickets.clone(), until));
        let tickets = Tickets::from_sorted(tickets);
        Ok(if until.is_some() {
            Claim::Held(tickets)
        } else {
            Claim::New(tickets)
        })
    }

    fn confirm(&mut self, user: &str) -> Result<i64, TicketError> {
        self.offer_step();
        match self.orders.get_mut(user) {
            Some((tickets, until)) => {
                *until = None;
                Ok(tickets.len() as i64)
            }
            None => Err(TicketError::NoHold {
                event: "e".into(),
                user: user.into(),
            }),
        }
    }

    fn cancel(&mut self, user: &str) -> Option<i64> {
        self.offer_step();
        let (tickets, _) = self.orders.remove(user)?;
        self.free.extend(&tickets);
        self.offer_step();
        tickets.first().copied()
    }
}

/// The invariants of docs/design.md "Holds and expiry" at one instant.
fn check_invariants(s: &mut MemoryStore, m: &Model, total: i64) -> Result<(), TestCaseError> {
    let mut seen = BTreeSet::new();
    for tickets in s.holders.values() {
        prop_assert!(tickets.as_slice().len() as i64 <= m.limit, "above LIMIT");
        for t in tickets.as_slice() {
            prop_assert!(seen.insert(*t), "number {} held twice", t);
            prop_assert!((1..=total).contains(t));
        }
    }
    prop_assert!(seen.is_disjoint(&s.pool), "a number both held and free");
    let r = report(s, "e", Some(m.now)).unwrap();
    let held: i64 = m
        .orders
        .values()
        .filter(|(_, u)| u.is_some_and(|u| u > m.now))
        .map(|(t, _)| t.len() as i64)
        .sum();
    let sold: i64 = m
        .orders
        .values()
        .filter(|(_, u)| u.is_none())
        .map(|(t, _)| t.len() as i64)
        .sum();
    prop_assert_eq!((r.held, r.claimed - r.held), (held, sold));
    prop_assert_eq!(r.remaining + r.claimed, total, "free + held + sold = total");
    Ok(())
}

proptest! {
    #[test]
    fn pool_matches_the_model(
        total in 1i64..30,
        chunk in 1i64..8,
        hold in prop_oneof![Just(0i64), 1i64..30],
        limit in 1i64..4,
        actions in proptest::collection::vec(action(), 0..150),
    ) {
        let mut s = checkout_event(total, hold, limit);
        let offer = protocol::effect::default_offer(hold);
        let mut m = Model { free: (1..=total).collect(), open: true, now: 1, hold, limit, offer, ..Model::default() };
        for a in actions {
            let settles = !matches!(a, Action::Wait(_) | Action::Close | Action::Sweep(_) | Action::Open);
            match a {
                Action::Claim { user, count, hold } => {
                    let user = format!("u{user}");
                    let got = claim(&mut s, "e", &user, with(count, hold), m.now, chunk);
                    prop_assert_eq!(got, m.claim(&user, count, hold));
                }
                Action::Confirm(u) => {
                    let user = format!("u{u}");
                    prop_assert_eq!(confirm(&mut s, "e", &user, m.now), m.confirm(&user));
                }
                Action::Cancel(u) => {
                    let user = format!("u{u}");
                    prop_assert_eq!(cancel(&mut s, "e", &user, m.now), Ok(m.cancel(&user)));
                }
                Action::Close => { set_status(&mut s, "e", Status::Closed, m.now).unwrap(); m.open = false; }
                Action::Open => {
                    set_status(&mut s, "e", Status::Open, m.now).unwrap();
                    if !m.open && m.waitseq > 0 {
                        m.open = true;
                        m.offer_step();
                    }
                    m.open = true;
                }
                Action::Wait(ms) => m.now += ms,
                Action::Sweep(max) => {
                    // The sweep only ever expires what is due.
                    let due = s.holds.values().filter(|u| **u <= m.now).count();
                    prop_assert_eq!(sweep(&mut s, "e", m.now, max), Ok(due.min(max)));
                    if due > 0 {
                        m.offer_step();
                    }
                }
                Action::Join(u, count) => {
                    let user = format!("u{u}");
                    prop_assert_eq!(wait(&mut s, "e", &user, count, m.now), m.wait(&user, count));
                    prop_assert_eq!(position(&mut s, "e", &user), Ok(m.position(&user)));
                }
                Action::Leave(u) => {
                    let user = format!("u{u}");
                    prop_assert_eq!(leave(&mut s, "e", &user, m.now), Ok(m.leave(&user)));
                }
            }
            // The list is the model's, in order; offers went in list order.
            let list: Vec<String> = s.waiting_order().into_iter().map(|(u, _)| u).collect();
            let model_list: Vec<String> = m.waiting.iter().map(|(u, _, _)| u.clone()).collect();
            prop_assert_eq!(list, model_list);
            prop_assert_eq!(&s.offered, &m.offered);
            prop_assert_eq!(report(&mut s, "e", Some(m.now)).unwrap().waiting, m.waiting.len() as i64);
            for user in s.waiting.keys() {
                prop_assert!(!s.holders.contains_key(user), "{} holds and waits", user);
            }
            if settles {
                prop_assert!(m.nobody_servable_waits(), "a servable head waits");
            }
            // A live hold is never handed out: its numbers are its user's.
            for (user, (tickets, until)) in &m.orders {
                if until.is_none_or(|u| u > m.now) {
                    prop_assert_eq!(s.holders.get(user).map(|t| t.as_slice().to_vec()), Some(tickets.clone()));
                }
            }
            check_invariants(&mut s, &m, total)?;
            prop_assert!(s.pool.len() as i64 <= chunk.max(1) + 40, "the pool stays near one chunk");
        }
        // The log replays to the holders.
        let mut replay: HashMap<String, Tickets> = HashMap::new();
        for (_, r) in &s.log {
            match &r.op {
                Op::Claim { user, tickets } | Op::Hold { user, tickets, .. } | Op::Offer { user, tickets, .. } => { prop_assert!(replay.insert(user.clone(), tickets.clone()).is_none()); }
                Op::Cancel { user, tickets } | Op::Expire { user, tickets } => { let removed = replay.remove(user); prop_assert_eq!(removed.as_ref(), Some(tickets)); }
                Op::Confirm { user, tickets } => { prop_assert_eq!(replay.get(user), Some(tickets)); }
                _ => {}
            }
        }
        prop_assert_eq!(&replay, &s.holders);
        // A replica that applies the effects reaches the same state.
        let mut replica = MemoryStore::default();
        for effect in &s.effects {
            apply::apply(&mut replica, &effect.borrowed());
        }
        prop_assert_eq!(format!("{:?}", (&replica.meta, &replica.pool, &replica.log)), format!("{:?}", (&s.meta, &s.pool, &s.log)));
        prop_assert_eq!(&replica.holders, &s.holders);
        prop_assert_eq!(&replica.holds, &s.holds);
        prop_assert_eq!(&replica.waiting, &s.waiting);
    }
}

/// What MySQL would say about `s` (as `rebuild` reads it): its live
/// orders, `minted` = the highest live number, the other numbers up to
/// it free.
fn snapshot_of(s: &MemoryStore, from: StreamId) -> (Begin, Vec<Order>, Vec<RangeInclusive<i64>>) {
    let meta = s.meta.clone().unwrap();
    let mut orders: Vec<Order> = s
        .holders
        .iter()
        .map(|(user, tickets)| Order {
            user: user.clone(),
            tickets: tickets.clone(),
            until: s.holds.get(user).copied().unwrap_or(0),
        })
        .collect();
    orders.sort_by(|a, b| a.user.cmp(&b.user));
    let mut live: Vec<i64> = orders
        .iter()
        .flat_map(|o| o.tickets.as_slice().to_vec())
        .collect();
    live.sort_unstable();
    let minted = live.last().copied().unwrap_or(0);
    let begin = Begin {
        incarnation: meta.incarnation.unwrap_or(Incarnation(7)),
        total: meta.total,
        minted,
        status: protocol::record::Status::Open,
        opens_at: meta.opens_at,
        closes_at: meta.closes_at,
        checkout: Checkout {
            hold: meta.hold,
            limit: meta.limit,
            offer: meta.offer,
        },
        orders: orders.len() as i64,
        from,
    };
    (begin, orders, protocol::restore::free_spans(minted, &live))
}

/// Restores a snapshot into `s` through the pool's own steps, in chunks
/// of `chunk` tickets; returns the commit's id.
fn restore_into(
    s: &mut MemoryStore,
    (begin, orders, free): &(Begin, Vec<Order>, Vec<RangeInclusive<i64>>),
    chunk: usize,
    now: i64,
) -> Result<StreamId, TicketError> {
    let steps = protocol::restore::steps(begin.clone(), true, orders, free, chunk);
    let mut id = Err(TicketError::Internal("no commit".into()));
    for step in steps {
        match step {
            protocol::restore::Step::Begin { begin, force } => {
                restore_begin(s, "e", &begin, force)?
            }
            protocol::restore::Step::Orders(orders) => {
                let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
                restore_orders(s, "e", &orders)?;
            }
            protocol::restore::Step::Free(free) => {
                restore_free(s, "e", &free)?;
            }
            protocol::restore::Step::Commit => id = restore_commit(s, "e", now),
        }
    }
    id
}

/// An event with sold orders, a multi-ticket order, a live hold, a
/// past-deadline hold and a cancelled number (a hole below minted).
fn sold_and_held() -> MemoryStore {
    let mut s = checkout_event(20, 0, 3);
    for (user, count, hold) in [
        ("sold1", 1, None),
        ("multi", 3, None),
        ("gone", 1, None),
        ("held", 2, Some(1_000)),
        ("late", 1, Some(10)),
        ("sold2", 1, None),
    ] {
        claim(&mut s, "e", user, with(Some(count), hold), 2, 1).unwrap();
    }
    cancel(&mut s, "e", "gone", 3).unwrap();
    s
}

#[test]
fn a_restore_installs_the_snapshot_and_claims_never_hand_out_a_restored_number() {
    let original = sold_and_held();
    let snapshot = snapshot_of(&original, StreamId::new(1, 5));
    assert_eq!(snapshot.0.minted, 9);
    assert_eq!(snapshot.2, [5..=5]);
    let mut s = MemoryStore::default();
    let id = restore_into(&mut s, &snapshot, 2, 100).unwrap();
    assert_eq!(id, StreamId::new(100, 0));
    assert_eq!(s.log.len(), 1);
    assert!(matches!(s.log[0].1.op, Op::Restore { from, .. } if from == StreamId::new(1, 5)));
    for user in ["sold1", "multi", "held", "late", "sold2"] {
        assert_eq!(s.holders.get(user), original.holders.get(user), "{user}");
        assert_eq!(s.holds.get(user), original.holds.get(user), "{user}");
    }
    let meta = s.meta.clone().unwrap();
    assert_eq!((meta.status, meta.held, meta.extra), (Status::Open, 3, 3));
    assert!(s.staging.is_none());
    // At 20 the hold of `late` (until 12) is past: claims take 5, then
    // late's 8, then 10, 11, ... above minted; never a restored number.
    let r = report(&mut s, "e", Some(20)).unwrap();
    assert_eq!((r.remaining, r.claimed, r.held), (13, 7, 2));
    let got: Vec<i64> = (0..12)
        .map(|i| plain(&mut s, &format!("n{i}"), 20, 1).unwrap().ticket())
        .collect();
    assert_eq!(got, [5, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    assert_eq!(plain(&mut s, "n12", 20, 1).unwrap().ticket(), 20);
    assert_eq!(
        plain(&mut s, "n13", 20, 1),
        Err(TicketError::SoldOut("e".into()))
    );
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(
        ops[..2],
        ["restore", "expire"],
        "the past hold expires first"
    );
}

#[test]
fn while_restoring_the_event_answers_tryagain_and_expires_nothing() {
    let original = sold_and_held();
    let (begin, orders, _) = snapshot_of(&original, StreamId::ZERO);
    let mut s = original.clone();
    let before = format!("{s:?}");
    assert_eq!(
        restore_begin(&mut s, "e", &begin, false),
        Err(TicketError::Exists("e".into()))
    );
    assert_eq!(before, format!("{s:?}"), "EXISTS changes nothing");
    restore_begin(&mut s, "e", &begin, true).unwrap();
    assert_eq!(s.log.len(), original.log.len(), "BEGIN keeps the log");
    let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
    restore_orders(&mut s, "e", &orders).unwrap();
    let again = TicketError::Restoring("e".into());
    let snapshot = format!("{s:?}");
    assert_eq!(plain(&mut s, "x", 50, 1), Err(again.clone()));
    assert_eq!(cancel(&mut s, "e", "sold1", 50), Err(again.clone()));
    assert_eq!(confirm(&mut s, "e", "held", 50), Err(again.clone()));
    assert_eq!(holder(&mut s, "e", "sold1", Some(50)), Err(again.clone()));
    assert_eq!(order(&mut s, "e", "sold1", Some(50)), Err(again.clone()));
    assert_eq!(wait(&mut s, "e", "x", None, 50), Err(again.clone()));
    assert_eq!(leave(&mut s, "e", "x", 50), Err(again.clone()));
    assert_eq!(position(&mut s, "e", "x"), Err(again.clone()));
    assert_eq!(
        set_status(&mut s, "e", Status::Closed, 50),
        Err(again.clone())
    );
    assert_eq!(sweep(&mut s, "e", 5_000, 10), Ok(0), "the sweep skips it");
    let r = report(&mut s, "e", Some(5_000)).unwrap();
    assert_eq!((r.status, r.held), (Status::Restoring, 3), "nothing lapses");
    assert_eq!(snapshot, format!("{s:?}"));
    // Incomplete: the free number 5 is missing.
    assert!(matches!(
        restore_commit(&mut s, "e", 60),
        Err(TicketError::Incomplete { .. })
    ));
    assert_eq!(snapshot, format!("{s:?}"));
    // BEGIN again restarts it without FORCE; DROP abandons it.
    restore_begin(&mut s, "e", &begin, false).unwrap();
    assert!(s.holders.is_empty());
    assert_eq!(drop_event(&mut s, "e", true, 70), Ok(1));
    for e in [
        restore_orders(&mut s, "e", &orders).unwrap_err(),
        restore_free(&mut s, "e", &[5..=5]).unwrap_err(),
        restore_commit(&mut s, "e", 80).unwrap_err(),
    ] {
        assert_eq!(e, TicketError::NotRestoring("e".into()));
    }
}

#[test]
fn bad_restore_steps_are_refused_and_change_nothing() {
    let original = sold_and_held();
    let (begin, orders, _) = snapshot_of(&original, StreamId::ZERO);
    let mut s = MemoryStore::default();
    restore_begin(&mut s, "e", &begin, false).unwrap();
    let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
    restore_orders(&mut s, "e", &orders[..2]).unwrap();
    restore_free(&mut s, "e", &[5..=5]).unwrap();
    let before = format!("{s:?}");
    let order = |user: &'static str, tickets: Vec<i64>| Order {
        user,
        tickets: Tickets::from_sorted(tickets),
        until: 0,
    };
    let cases: Vec<(Result<i64, TicketError>, &str)> = vec![
        (
            restore_orders(&mut s, "e", &orders[..1]),
            "restored already",
        ),
        (
            restore_orders(&mut s, "e", &[order("x", vec![10])]),
            "ticket 10 is above minted (9)",
        ),
        (
            restore_orders(&mut s, "e", &[order("x", vec![5])]),
            "ticket 5 is restored as free",
        ),
        (
            restore_orders(&mut s, "e", &[order("x", vec![6]), order("y", vec![6])]),
            "ticket 6 is in two orders",
        ),
        (
            restore_orders(&mut s, "e", &[order("x", vec![6]), order("x", vec![7])]),
            "order 2 (user 'x'): the user is restored already",
        ),
        (
            restore_orders(
                &mut s,
                "e",
                &[
                    order("x", vec![6]),
                    order("y", vec![7]),
                    order("z", vec![8]),
                    order("w", vec![9]),
                ],
            ),
            "would exceed the 5",
        ),
        (
            restore_free(&mut s, "e", &[5..=5]),
            "5 is in the pool already",
        ),
        (
            restore_free(&mut s, "e", &[6..=7, 7..=7]),
            "7 is given twice",
        ),
        (restore_free(&mut s, "e", &[9..=10]), "10 is above minted"),
    ];
    for (got, want) in cases {
        let e = got.unwrap_err().to_string();
        assert!(e.starts_with("ERR ") && e.contains(want), "{want}: {e}");
    }
    assert_eq!(before, format!("{s:?}"));
    // Numbers held and free at once, another missing: the counts add up
    // but the sum does not.
    restore_orders(&mut s, "e", &orders[2..]).unwrap();
    let mut t = s.clone();
    t.pool.clear();
    t.pool.insert(1);
    t.staging.as_mut().unwrap().sum += 1 - 5;
    assert!(
        matches!(restore_commit(&mut t, "e", 9), Err(TicketError::Incomplete { detail, .. }) if detail.contains("both held and free"))
    );
    assert!(restore_commit(&mut s, "e", 9).is_ok());
}

proptest! {
    #[test]
    fn restored_state_and_claims_never_hand_out_a_number_twice(
        total in 1i64..40,
        limit in 1i64..4,
        actions in proptest::collection::vec((0u8..6, 0u8..12, 1i64..4, 0i64..3), 0..60),
        chunk in 1usize..6,
        later in 0i64..40,
    ) {
        let mut s = checkout_event(total, 0, limit);
        let mut now = 1;
        for (kind, user, count, hold) in actions {
            let user = format!("u{user}");
            now += 1;
            let hold = (hold > 0).then_some(hold * 10);
            let _ = match kind {
                0..=2 => claim(&mut s, "e", &user, with(Some(count.min(limit)), hold), now, 2).map(|_| ()),
                3 => cancel(&mut s, "e", &user, now).map(|_| ()),
                4 => confirm(&mut s, "e", &user, now).map(|_| ()),
                _ => sweep(&mut s, "e", now, 3).map(|_| ()),
            };
        }
        let last = s.log.last().map(|(id, _)| *id).unwrap_or_default();
        let snapshot = snapshot_of(&s, last);
        let mut r = s.clone();
        let id = restore_into(&mut r, &snapshot, chunk, now).unwrap();
        prop_assert!(id > last);
        // The restored orders are the original's.
        prop_assert_eq!(&r.holders, &s.holders);
        prop_assert_eq!(&r.holds, &s.holds);
        // A replica applying the effects of the restore reaches the same state.
        let mut replica = s.clone();
        let from = s.effects.len();
        for effect in &r.effects[from..] {
            apply::apply(&mut replica, &effect.borrowed());
        }
        prop_assert_eq!(format!("{:?}", (&replica.meta, &replica.pool, &replica.log, &replica.holds)),
            format!("{:?}", (&r.meta, &r.pool, &r.log, &r.holds)));
        prop_assert_eq!(&replica.holders, &r.holders);
        // Claims until sold out: every number once, none a restored one
        // (unless its hold lapsed), the free ones first.
        let now = now + later;
        let live: BTreeSet<i64> = r.holders.iter()
            .filter(|(u, _)| r.holds.get(*u).is_none_or(|until| *until > now))
            .flat_map(|(_, t)| t.as_slice().to_vec())
            .collect();
        let mut taken = BTreeSet::new();
        for i in 0.. {
            match plain(&mut r, &format!("new{i}"), now, 1) {
                Ok(c) => {
                    let t = c.ticket();
                    prop_assert!(!live.contains(&t), "restored number {} handed out", t);
                    prop_assert!(taken.insert(t), "number {} handed out twice", t);
                    prop_assert!((1..=total).contains(&t));
                }
                Err(TicketError::SoldOut(_)) => break,
                Err(e) => prop_assert!(false, "{}", e),
            }
        }
        prop_assert_eq!(taken.len() + live.len(), total as usize, "every number is held or handed out");
    }
}
