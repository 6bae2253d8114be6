//! A draw event: entrants enter before the draw (logged, -1), the draw is
//! made exactly once when the event first accepts claims, offers go down
//! the drawn order (checked with the audit a buyer runs over the log), at
//! most `ADMIT` in any second and `Clock::offers` per command, nobody both
//! waits and holds, claims past the queue are `QUEUE`, the lost writes of a
//! heal come back only when nothing since makes them wrong, and a replica
//! applying the effects reaches the same state.

use std::borrow::Cow;
use std::collections::BTreeMap;

use proptest::prelude::*;
use protocol::draw::{audit, commitment, rank, Step, AFTER_DRAW};
use protocol::model::DrawTerms;
use protocol::record::{Op, Record, Tickets};

use super::*;
use crate::pool::reapply;

const SEED: [u8; 32] = [42; 32];

/// A draw event of `total` tickets, offers held 1 s, `LIMIT 2`.
fn draw_event(total: i64, admit: Option<i64>, opens_at: i64) -> MemoryStore {
    let mut s = MemoryStore::default();
    let op = Op::Init {
        transfer_until: None,
        layout: None,
        total,
        opens_at,
        closes_at: 0,
        checkout: Checkout {
            hold: 1000,
            limit: 2,
            offer: 1000,
        },
        incarnation: Some(Incarnation(3)),
        draw: Some(DrawTerms {
            commitment: protocol::draw::commitment_bytes(&SEED),
            admit,
            seed: Some(SEED),
        }),
    };
    run(&mut s, |s, out| c::create(s, out, "e", op, 1)).unwrap();
    s
}

/// A command's pool call at `now` making at most `offers` offers, then its
/// commit step; checks the bound.
fn bounded<'a, T>(
    s: &mut MemoryStore,
    offers: usize,
    f: impl FnOnce(&mut MemoryStore, &mut Effects<'a>) -> T,
) -> T {
    let mut out = Effects::default();
    let result = f(s, &mut out);
    assert!(
        out.offered() <= offers,
        "{} offers > {offers}",
        out.offered()
    );
    s.commit(&out);
    result
}

fn clock(now: i64, offers: usize) -> Clock {
    Clock {
        now,
        maybe_due: true,
        offers,
    }
}

/// The steps of the log a buyer's audit replays.
fn steps(s: &MemoryStore) -> Vec<Step> {
    s.log
        .iter()
        .filter_map(|(_, r)| match &r.op {
            Op::Enter { user, count, .. } => Some(Step::Enter {
                user: user.clone(),
                count: *count as u32,
            }),
            Op::Leave { user } => Some(Step::Leave { user: user.clone() }),
            Op::Draw { seed } => Some(Step::Draw {
                seed: seed.to_vec(),
            }),
            Op::Offer { user, .. } => Some(Step::Offer { user: user.clone() }),
            _ => None,
        })
        .collect()
}

#[test]
fn entrants_are_offered_in_rank_order_after_one_draw() {
    let mut s = draw_event(3, None, 0);
    assert_eq!(s.meta.as_ref().unwrap().status, Status::Closed);
    let users = ["ann", "bob", "cy", "dee", "eve"];
    for u in users {
        assert_eq!(wait(&mut s, "e", u, None, 5), Ok(-1));
    }
    assert_eq!(
        wait(&mut s, "e", "ann", Some(2), 6),
        Ok(-1),
        "twice: no change"
    );
    assert_eq!(position(&mut s, "e", "bob", None), Ok(Some(-1)));
    assert!(matches!(
        plain(&mut s, "x", 7, 1),
        Err(TicketError::NotOpen { opens_at: 0, .. })
    ));
    assert_eq!(leave(&mut s, "e", "cy", 8), Ok(true));
    let entries = s.log.len();
    set_status(&mut s, "e", Status::Open, 10).unwrap();
    let draws = s.log[entries..]
        .iter()
        .filter(|(_, r)| matches!(r.op, Op::Draw { .. }))
        .count();
    assert_eq!(draws, 1);
    let mut order: Vec<&str> = users.iter().copied().filter(|u| *u != "cy").collect();
    order.sort_by_key(|u| (rank(&SEED, u.as_bytes()), u.to_string()));
    assert_eq!(s.offered, order[..3]);
    assert_eq!(
        plain(&mut s, "x", 11, 1),
        Err(TicketError::Queue("e".into()))
    );
    assert_eq!(position(&mut s, "e", order[3], None), Ok(Some(1)));
    // A later joiner queues behind every entrant.
    assert_eq!(wait(&mut s, "e", "late", None, 12), Ok(2));
    assert!(s.waiting["late"] >= AFTER_DRAW as i64);
    // Expiry passes the offers on, down the rank, then to the joiner.
    sweep(&mut s, "e", 2000, 10).unwrap();
    assert_eq!(s.offered[3..], [order[3], "late"]);
    let summary = audit(&commitment(&SEED), &steps(&s)).expect("a fair draw");
    assert_eq!(
        (summary.entrants, summary.left, summary.later_offers),
        (4, 1, 1)
    );
    // No entrant's count is left; the two open offers are marked.
    let marked: Vec<(&str, i64)> = s.wants.iter().map(|(u, w)| (u.as_str(), *w)).collect();
    let mut open = [(order[3], 0), ("late", 0)];
    open.sort();
    assert_eq!(marked, open);
}

#[test]
fn an_entrant_found_holding_leaves_the_list_in_the_log() {
    let mut s = draw_event(2, None, 0);
    for u in ["ann", "bob", "cy"] {
        assert_eq!(wait(&mut s, "e", u, None, 5), Ok(-1));
    }
    // As if edited by hand: the first in drawn order already holds tickets.
    let mut order = ["ann", "bob", "cy"];
    order.sort_by_key(|u| (rank(&SEED, u.as_bytes()), u.to_string()));
    s.holders.insert(order[0].into(), Tickets::One(2));
    s.meta.as_mut().unwrap().minted = 2;
    s.pool.insert(1);
    set_status(&mut s, "e", Status::Open, 10).unwrap();
    assert_eq!(s.offered, order[1..2], "the holder is skipped, not offered");
    assert!(!s.waiting.contains_key(order[0]));
    let left = s
        .log
        .iter()
        .any(|(_, r)| matches!(&r.op, Op::Leave { user } if user == order[0]));
    assert!(
        left,
        "the entrant's leave is logged, so the audit can replay it"
    );
    audit(&commitment(&SEED), &steps(&s)).expect("the audit passes");
}

#[test]
fn opens_at_draws_at_the_first_settle_after_it_and_only_once() {
    let mut s = draw_event(5, None, 100);
    assert_eq!(s.meta.as_ref().unwrap().status, Status::Open);
    assert_eq!(wait(&mut s, "e", "a", Some(2), 50), Ok(-1));
    assert_eq!(s.wants.get("a"), Some(&2));
    sweep(&mut s, "e", 99, 10).unwrap();
    assert!(
        s.meta.as_ref().unwrap().undrawn().is_some(),
        "not before OPENS"
    );
    sweep(&mut s, "e", 100, 10).unwrap();
    sweep(&mut s, "e", 101, 10).unwrap();
    let draws: Vec<i64> = s
        .log
        .iter()
        .filter(|(_, r)| matches!(r.op, Op::Draw { .. }))
        .map(|(_, r)| r.at)
        .collect();
    assert_eq!(draws, [100]);
    assert_eq!(s.offered, ["a"]);
    assert_eq!(s.holders["a"].as_slice().len(), 2, "wants 2, offered 2");
    assert_eq!(
        s.wants.get("a"),
        Some(&0),
        "the count became the offer's mark"
    );
    assert_eq!(position(&mut s, "e", "a", Some(101)), Ok(Some(0)));
}

#[test]
fn a_drop_takes_the_entrants_and_their_wants_with_it() {
    let mut s = draw_event(5, None, 0);
    assert_eq!(wait(&mut s, "e", "a", Some(2), 5), Ok(-1));
    assert_eq!(s.wants.len(), 1);
    assert!(drop_event(&mut s, "e", true, 6).unwrap() >= 2);
    assert!(s.wants.is_empty() && s.waiting.is_empty() && s.meta.is_none());
}

#[test]
fn offers_are_bounded_per_command_and_paced_by_admit() {
    let mut s = draw_event(20, Some(3), 0);
    for i in 0..10 {
        wait(&mut s, "e", &format!("u{i}"), None, 5).unwrap();
    }
    // OPEN may make 2 offers; ADMIT allows 3 in the draw's first second.
    bounded(&mut s, 2, |s, out| {
        open_or_close(s, out, "e", Status::Open, clock(1000, 2))
    })
    .unwrap();
    assert_eq!(s.offered.len(), 2);
    bounded(&mut s, 5, |s, out| {
        st::sweep(s, out, "e", clock(1500, 5), 5)
    })
    .unwrap();
    assert_eq!(s.offered.len(), 3, "the bucket is empty until 2000");
    let mut out = Effects::default();
    st::sweep(&mut s, &mut out, "e", clock(1600, 5), 5).unwrap();
    assert_eq!(out.again(), Some(2000), "the sweep comes back at 2000");
    s.commit(&out);
    bounded(&mut s, 5, |s, out| {
        st::sweep(s, out, "e", clock(2000, 5), 5)
    })
    .unwrap();
    assert_eq!(s.offered.len(), 6);
}

#[test]
fn reapply_of_enter_leave_and_draw_checks_the_state() {
    let mut s = draw_event(5, None, 0);
    let rec = |op: Op<Cow<'static, str>>| Record { op, at: 7 };
    let enter = || {
        rec(Op::Enter {
            user: Cow::Borrowed("u"),
            count: 1,
            rank: None,
        })
    };
    let again = |s: &mut MemoryStore, r| run(s, |s, out| reapply(s, out, "e", (r, None), 9));
    again(&mut s, enter()).unwrap();
    assert_eq!(
        s.waiting["u"],
        rank(&SEED, b"u") as i64,
        "the rank recomputed"
    );
    assert_eq!(again(&mut s, enter()).unwrap_err().code(), "CHANGED");
    let leave_u = || {
        rec(Op::Leave {
            user: Cow::Borrowed("u"),
        })
    };
    again(&mut s, leave_u()).unwrap();
    assert!(s.waiting.is_empty());
    assert_eq!(again(&mut s, leave_u()).unwrap_err().code(), "CHANGED");
    let wrong = rec(Op::Draw { seed: [1; 32] });
    assert_eq!(again(&mut s, wrong).unwrap_err().code(), "CHANGED");
    again(&mut s, rec(Op::Draw { seed: SEED })).unwrap();
    assert_eq!(
        s.meta.as_ref().unwrap().draw.as_ref().unwrap().drawn_at,
        Some(7)
    );
    let twice = again(&mut s, rec(Op::Draw { seed: SEED })).unwrap_err();
    assert!(twice.to_string().contains("the draw was made"), "{twice}");
    assert_eq!(again(&mut s, enter()).unwrap_err().code(), "CHANGED");
    let mut plain_event = event(3);
    let not_draw = again(&mut plain_event, enter()).unwrap_err();
    assert!(
        not_draw.to_string().contains("not a draw event"),
        "{not_draw}"
    );
}

#[derive(Debug, Clone)]
enum Action {
    Enter(u8, Option<i64>),
    Leave(u8),
    Open,
    Claim(u8),
    Confirm(u8),
    Cancel(u8),
    /// Advance the clock by this many ms.
    Wait(i64),
    Sweep,
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        6 => (0u8..40, proptest::option::of(1i64..3)).prop_map(|(u, n)| Action::Enter(u, n)),
        1 => (0u8..40).prop_map(Action::Leave),
        1 => Just(Action::Open),
        2 => (0u8..40).prop_map(Action::Claim),
        2 => (0u8..40).prop_map(Action::Confirm),
        1 => (0u8..40).prop_map(Action::Cancel),
        3 => (0i64..700).prop_map(Action::Wait),
        2 => Just(Action::Sweep),
    ]
}

/// Runs one action at `now` with at most `bound` offers per command.
fn step(s: &mut MemoryStore, a: &Action, now: i64, bound: usize) {
    let at = clock(now, bound);
    let name = match a {
        Action::Enter(u, _)
        | Action::Leave(u)
        | Action::Claim(u)
        | Action::Confirm(u)
        | Action::Cancel(u) => format!("u{u}"),
        _ => String::new(),
    };
    let user = |_: &u8| name.as_str();
    let _ = match a {
        Action::Enter(u, n) => bounded(s, bound, |s, out| {
            w::wait(s, out, "e", user(u), *n, at).map(|_| ())
        }),
        Action::Leave(u) => bounded(s, bound, |s, out| {
            w::leave(s, out, "e", user(u), at).map(|_| ())
        }),
        Action::Open => bounded(s, bound, |s, out| {
            open_or_close(s, out, "e", Status::Open, at)
        }),
        Action::Claim(u) => bounded(s, bound, |s, out| {
            let options = ClaimOptions::default();
            c::claim(s, out, "e", user(u), options, at, 2).map(|_| ())
        }),
        Action::Confirm(u) => bounded(s, bound, |s, out| {
            c::confirm(s, out, "e", user(u), at).map(|_| ())
        }),
        Action::Cancel(u) => bounded(s, bound, |s, out| {
            c::cancel(s, out, "e", user(u), at).map(|_| ())
        }),
        Action::Sweep => bounded(s, bound, |s, out| {
            st::sweep(s, out, "e", at, 10).map(|_| ())
        }),
        Action::Wait(_) => Ok(()),
    };
}

/// Offers per second counted from the draw.
fn offers_per_second(s: &MemoryStore) -> BTreeMap<i64, u64> {
    let drawn_at = s.log.iter().find_map(|(_, r)| match r.op {
        Op::Draw { .. } => Some(r.at),
        _ => None,
    });
    let mut seconds = BTreeMap::new();
    for (_, r) in &s.log {
        if let (Op::Offer { .. }, Some(d)) = (&r.op, drawn_at) {
            *seconds.entry((r.at - d) / 1000).or_insert(0) += 1;
        }
    }
    seconds
}

proptest! {
    #[test]
    fn a_draw_event_keeps_its_promises(
        total in 1i64..25,
        admit in proptest::option::of(1i64..4),
        bound in 1usize..4,
        actions in proptest::collection::vec(action(), 0..120),
    ) {
        let mut s = draw_event(total, admit, 0);
        let mut now = 10;
        let mut opened = false;
        for a in &actions {
            match a {
                Action::Wait(ms) => now += ms,
                Action::Open => opened = true,
                _ => {}
            }
            step(&mut s, a, now, bound);
            for user in s.waiting.keys() {
                prop_assert!(!s.holders.contains_key(user), "{} waits and holds", user);
            }
            let draws = s.log.iter().filter(|(_, r)| matches!(r.op, Op::Draw { .. })).count();
            prop_assert_eq!(draws, usize::from(opened), "the draw exactly once");
        }
        if opened {
            // The sweep alone serves everyone, offers expiring and passing
            // on, until every ticket is sold.
            for _ in 0..60 {
                now += 2000;
                step(&mut s, &Action::Sweep, now, bound);
            }
            let sold_out = s.holds.is_empty() && s.pool.is_empty()
                && s.meta.as_ref().is_some_and(|m| m.minted == m.total);
            prop_assert!(s.waiting.is_empty() || sold_out, "{:?} still wait", s.waiting);
            let summary = audit(&commitment(&SEED), &steps(&s));
            prop_assert!(summary.is_ok(), "{:?}", summary);
        }
        if let Some(rate) = admit {
            let seconds = offers_per_second(&s);
            prop_assert!(seconds.values().all(|n| *n <= rate as u64), "{:?}", seconds);
        }
        super::reference::check_a_replica_reaches_the_same_state(&s)?;
    }
}
