//! The model-based property test: random claims, confirms, cancels,
//! status changes, clock steps, sweeps and waiting-list moves run against
//! the pool and against [`Model`], a simple reference; after each step
//! their answers, the list and the invariants must agree, and at the end
//! the log replays to the holders and a replica reaches the same state.

use std::collections::{BTreeSet, HashMap, HashSet};

use proptest::prelude::*;
use protocol::record::{Op, Tickets};

use super::*;
use crate::pool::effects;

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
    /// Users whose order is an offer not yet confirmed, cancelled or lapsed.
    offers: HashSet<String>,
}

/// Found by the property test: a head that wants more than the event has
/// gets a partial offer from the sweep once its wait ran out.
#[test]
fn the_sweep_serves_a_partial_offer() -> Result<(), TestCaseError> {
    let (total, chunk, hold, limit) = (1, 1, 1, 2);
    let mut s = checkout_event(total, hold, limit);
    let mut m = Model::fresh(total, hold, limit);
    for a in [Action::Join(0, Some(2)), Action::Wait(1), Action::Sweep(1)] {
        step(&mut s, &mut m, a, chunk)?;
        check_after_step(&mut s, &m, total, chunk, false)?;
    }
    prop_assert_eq!(&s.offered, &vec!["u0".to_owned()]);
    Ok(())
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
            self.offers.insert(user.clone());
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

    /// The list's 1-based place, or 0 while the user holds an offer.
    fn position(&self, user: &str) -> Option<i64> {
        match self.waiting.iter().position(|(u, _, _)| u == user) {
            Some(rank) => Some(rank as i64 + 1),
            None => self.offers.contains(user).then_some(0),
        }
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
            self.offers.remove(&user);
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
                self.offers.remove(user);
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
        self.offers.remove(user);
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
        let mut m = Model::fresh(total, hold, limit);
        for a in actions {
            let settles = !matches!(a, Action::Wait(_) | Action::Close | Action::Sweep(_) | Action::Open);
            step(&mut s, &mut m, a, chunk)?;
            check_after_step(&mut s, &m, total, chunk, settles)?;
        }
        check_log_replays_to_the_holders(&s)?;
        check_a_replica_reaches_the_same_state(&s)?;
    }
}

impl Model {
    /// The model of a fresh event as `checkout_event` makes it, at time 1.
    fn fresh(total: i64, hold: i64, limit: i64) -> Model {
        let offer = protocol::effect::default_offer(hold);
        Model {
            free: (1..=total).collect(),
            open: true,
            now: 1,
            hold,
            limit,
            offer,
            ..Model::default()
        }
    }
}

/// Runs one action on the pool and on the model; their answers must agree.
fn step(s: &mut MemoryStore, m: &mut Model, a: Action, chunk: i64) -> Result<(), TestCaseError> {
    match a {
        Action::Claim { user, count, hold } => {
            let user = format!("u{user}");
            let got = claim(s, "e", &user, with(count, hold), m.now, chunk);
            prop_assert_eq!(got, m.claim(&user, count, hold));
        }
        Action::Confirm(u) => {
            let user = format!("u{u}");
            prop_assert_eq!(confirm(s, "e", &user, m.now), m.confirm(&user));
        }
        Action::Cancel(u) => {
            let user = format!("u{u}");
            prop_assert_eq!(cancel(s, "e", &user, m.now), Ok(m.cancel(&user)));
        }
        Action::Close => {
            set_status(s, "e", Status::Closed, m.now).unwrap();
            m.open = false;
        }
        Action::Open => {
            set_status(s, "e", Status::Open, m.now).unwrap();
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
            prop_assert_eq!(sweep(s, "e", m.now, max), Ok(due.min(max)));
            // The sweep serves the list of any event that ever had one
            // (an offer's wait for a partial one may end with no command).
            if due > 0 || m.waitseq > 0 {
                m.offer_step();
            }
        }
        Action::Join(u, count) => {
            let user = format!("u{u}");
            prop_assert_eq!(wait(s, "e", &user, count, m.now), m.wait(&user, count));
            prop_assert_eq!(position(s, "e", &user, Some(m.now)), Ok(m.position(&user)));
        }
        Action::Leave(u) => {
            let user = format!("u{u}");
            prop_assert_eq!(leave(s, "e", &user, m.now), Ok(m.leave(&user)));
        }
    }
    Ok(())
}

/// What must hold after every step (`settles`: the step ran the offer step).
fn check_after_step(
    s: &mut MemoryStore,
    m: &Model,
    total: i64,
    chunk: i64,
    settles: bool,
) -> Result<(), TestCaseError> {
    // The list is the model's, in order; offers went in list order.
    let list: Vec<String> = s.waiting_order().into_iter().map(|(u, _)| u).collect();
    let model_list: Vec<String> = m.waiting.iter().map(|(u, _, _)| u.clone()).collect();
    prop_assert_eq!(list, model_list);
    prop_assert_eq!(&s.offered, &m.offered);
    prop_assert_eq!(
        report(s, "e", Some(m.now)).unwrap().waiting,
        m.waiting.len() as i64
    );
    for user in s.waiting.keys() {
        prop_assert!(!s.holders.contains_key(user), "{} holds and waits", user);
    }
    if settles {
        prop_assert!(m.nobody_servable_waits(), "a servable head waits");
    }
    // A live hold is never handed out: its numbers are its user's.
    for (user, (tickets, until)) in &m.orders {
        if until.is_none_or(|u| u > m.now) {
            prop_assert_eq!(
                s.holders.get(user).map(|t| t.as_slice().to_vec()),
                Some(tickets.clone())
            );
        }
    }
    check_invariants(s, m, total)?;
    prop_assert!(
        s.pool.len() as i64 <= chunk.max(1) + 40,
        "the pool stays near one chunk"
    );
    Ok(())
}

/// The log replays to the holders.
fn check_log_replays_to_the_holders(s: &MemoryStore) -> Result<(), TestCaseError> {
    let mut replay: HashMap<String, Tickets> = HashMap::new();
    for (_, r) in &s.log {
        match &r.op {
            Op::Claim { user, tickets, .. }
            | Op::Hold { user, tickets, .. }
            | Op::Offer { user, tickets, .. } => {
                prop_assert!(replay.insert(user.clone(), tickets.clone()).is_none());
            }
            Op::Cancel { user, tickets, .. } | Op::Expire { user, tickets, .. } => {
                let removed = replay.remove(user);
                prop_assert_eq!(removed.as_ref(), Some(tickets));
            }
            Op::Confirm { user, tickets } => {
                prop_assert_eq!(replay.get(user), Some(tickets));
            }
            _ => {}
        }
    }
    prop_assert_eq!(&replay, &s.holders);
    Ok(())
}

/// A replica that applies the effects reaches the same state.
pub(super) fn check_a_replica_reaches_the_same_state(s: &MemoryStore) -> Result<(), TestCaseError> {
    let mut replica = MemoryStore::default();
    for effect in &s.effects {
        effects::apply(&mut replica, &effect.borrowed());
    }
    prop_assert_eq!(
        format!("{:?}", (&replica.meta, &replica.pool, &replica.log)),
        format!("{:?}", (&s.meta, &s.pool, &s.log))
    );
    prop_assert_eq!(&replica.holders, &s.holders);
    prop_assert_eq!(&replica.holds, &s.holds);
    prop_assert_eq!(&replica.waiting, &s.waiting);
    prop_assert_eq!(&replica.wants, &s.wants);
    Ok(())
}
