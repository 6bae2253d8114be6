//! Face-value resale over the in-memory store: listed tickets are sold
//! only after the free ones, stay the seller's until the buyer confirms
//! (then `op=resold`, a generation up), go back on the list when a
//! buyer's hold ends, and never change the stock; every refusal changes
//! nothing; random sales with resale keep the counts and replay on a
//! replica to the same state.

use proptest::prelude::*;
use protocol::record::{Op, Record, Tickets};

use super::seats::seated;
use super::*;
use crate::pool::effects;
use crate::pool::store::After;

fn resell(
    s: &mut MemoryStore,
    user: &str,
    ids: Option<&[i64]>,
    now: i64,
) -> Result<i64, TicketError> {
    run(s, |s, out| {
        c::resell(s, out, "e", user, ids, Clock::at(now))
    })
}

fn unlist(
    s: &mut MemoryStore,
    user: &str,
    ids: Option<&[i64]>,
    now: i64,
) -> Result<i64, TicketError> {
    run(s, |s, out| {
        c::unlist(s, out, "e", user, ids, Clock::at(now))
    })
}

fn transfer(s: &mut MemoryStore, from: &str, to: &str, now: i64) -> Result<i64, TicketError> {
    run(s, |s, out| {
        c::transfer(s, out, "e", (from, to), None, Clock::at(now))
    })
}

fn scan(s: &mut MemoryStore, ticket: i64, gen: i64, now: i64) -> Result<(), TicketError> {
    run(s, |s, out| {
        c::scan(s, out, "e", (ticket, gen), None, Clock::at(now))
    })
}

fn tickets(s: &MemoryStore, user: &str) -> Vec<i64> {
    s.holders
        .get(user)
        .map_or_else(Vec::new, |t| t.as_slice().to_vec())
}

/// The state a refusal must leave as it was.
type State = (
    Option<Meta>,
    std::collections::BTreeSet<i64>,
    Vec<(String, Tickets)>,
    std::collections::BTreeMap<(After, i64), String>,
    usize,
);

fn state(s: &MemoryStore) -> State {
    let mut holders: Vec<(String, Tickets)> = s
        .holders
        .iter()
        .map(|(u, t)| (u.clone(), t.clone()))
        .collect();
    holders.sort_by(|a, b| a.0.cmp(&b.0));
    (
        s.meta.clone(),
        s.pool.clone(),
        holders,
        s.after.clone(),
        s.log.len(),
    )
}

fn ops(s: &MemoryStore) -> Vec<&'static str> {
    s.log.iter().map(|(_, r)| r.op.name()).collect()
}

/// Five tickets, holds of 100 ms, four per user: `a` bought 1-2, `b` 3-4.
fn sold_out_but_one() -> MemoryStore {
    let mut s = checkout_event(5, 100, 4);
    claim(&mut s, "e", "a", with(Some(2), Some(0)), 10, 1).unwrap();
    claim(&mut s, "e", "b", with(Some(2), Some(0)), 10, 1).unwrap();
    s
}

#[test]
fn a_claim_takes_free_stock_first_then_a_listed_ticket_sold_on_confirm() {
    let mut s = sold_out_but_one();
    assert_eq!(resell(&mut s, "a", Some(&[2]), 20), Ok(1));
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.claimed, r.resale), (1, 4, 1));
    // The house's own ticket first.
    assert_eq!(plain(&mut s, "c", 30, 1), Ok(Claim::Held(Tickets::One(5))));
    assert_eq!(plain(&mut s, "d", 31, 1), Ok(Claim::Held(Tickets::One(2))));
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.claimed, r.held, r.resale), (0, 5, 2, 0));
    assert_eq!(tickets(&s, "a"), [1, 2], "the seller's until confirmed");
    assert_eq!(confirm(&mut s, "e", "d", 40), Ok(1));
    assert_eq!(tickets(&s, "a"), [1]);
    assert_eq!(tickets(&s, "d"), [2]);
    let gens = order(&mut s, "e", "d", None).unwrap().unwrap().gens;
    assert_eq!(gens, [2]);
    let resold = s.log.last().map(|(_, r)| r.op.clone());
    assert_eq!(
        resold,
        Some(Op::Resold {
            user: "a".into(),
            to: "d".into(),
            tickets: Tickets::One(2),
        })
    );
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.total, r.remaining, r.claimed, r.resale), (5, 0, 5, 0));
    assert_eq!(s.meta.as_ref().map(|m| m.listed), Some(0));
    // The old credential is stale at the door, the new one admits.
    assert_eq!(scan(&mut s, 2, 1, 50).map_err(|e| e.code()), Err("STALE"));
    assert_eq!(scan(&mut s, 2, 2, 50), Ok(()));
}

#[test]
fn a_buyers_hold_that_ends_puts_the_ticket_back_on_the_list() {
    let mut s = sold_out_but_one();
    claim(&mut s, "e", "c", with(Some(1), Some(0)), 15, 1).unwrap();
    resell(&mut s, "b", None, 20).unwrap();
    assert_eq!(
        claim(&mut s, "e", "d", with(Some(2), None), 30, 1),
        Ok(Claim::Held(Tickets::from_sorted(vec![3, 4])))
    );
    // Expired at 130: back on the list, not free.
    let r = report(&mut s, "e", Some(131)).unwrap();
    assert_eq!((r.remaining, r.claimed, r.held, r.resale), (0, 5, 0, 2));
    sweep(&mut s, "e", 131, 10).unwrap();
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.claimed, r.held, r.resale), (0, 5, 0, 2));
    assert!(s.pool.is_empty());
    // A cancelled hold too.
    plain(&mut s, "f", 140, 1).unwrap();
    assert_eq!(cancel(&mut s, "e", "f", 141), Ok(Some(3)));
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.resale), (0, 2));
    assert_eq!(unlist(&mut s, "b", None, 150), Ok(2));
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.claimed, r.resale), (0, 5, 0));
    assert_eq!(
        plain(&mut s, "g", 160, 1).map_err(|e| e.code()),
        Err("SOLDOUT")
    );
}

#[test]
fn listing_offers_the_waiting_list_at_once() {
    let mut s = checkout_event(2, 100, 4);
    claim(&mut s, "e", "a", with(Some(2), Some(0)), 10, 1).unwrap();
    wait(&mut s, "e", "w", Some(2), 11).unwrap();
    assert_eq!(resell(&mut s, "a", None, 20), Ok(2));
    assert!(s.holds.contains_key("w"), "offered in the same command");
    assert_eq!(tickets(&s, "w"), [1, 2]);
    confirm(&mut s, "e", "w", 30).unwrap();
    assert_eq!(s.holders.get("a"), None, "the seller holds nothing now");
    assert_eq!(ops(&s).last(), Some(&"resold"));
}

#[test]
fn every_refusal_changes_nothing() {
    let mut s = sold_out_but_one();
    plain(&mut s, "h", 12, 1).unwrap(); // a held order of ticket 5
    resell(&mut s, "a", Some(&[1]), 13).unwrap();
    scan(&mut s, 3, 1, 14).unwrap();
    let before = state(&s);
    let refusals: Vec<(&str, Result<i64, TicketError>)> = vec![
        ("NOHOLD", resell(&mut s, "nobody", None, 20)),
        ("NOTSOLD", resell(&mut s, "h", None, 20)),
        ("NOTSOLD", resell(&mut s, "a", Some(&[3]), 20)),
        ("LISTED", resell(&mut s, "a", Some(&[1]), 20)),
        ("USED", resell(&mut s, "b", None, 20)),
        ("LISTED", transfer(&mut s, "a", "z", 20)),
        ("LISTED", cancel(&mut s, "e", "a", 20).map(|_| 0)),
        ("NOTLISTED", unlist(&mut s, "a", Some(&[2]), 20)),
        ("NOTLISTED", unlist(&mut s, "b", Some(&[1]), 20)),
        ("NOTSOLD", scan(&mut s, 1, 1, 20).map(|_| 0)),
    ];
    for (code, outcome) in refusals {
        assert_eq!(outcome.map_err(|e| e.code()), Err(code));
        assert_eq!(state(&s), before, "{code} changed something");
    }
    // A buyer's hold is not the seller's to take back.
    confirm(&mut s, "e", "h", 20).unwrap();
    plain(&mut s, "k", 21, 1).unwrap();
    let before = state(&s);
    let taken = unlist(&mut s, "a", Some(&[1]), 22);
    assert_eq!(taken.map_err(|e| e.code()), Err("NOTLISTED"));
    assert_eq!(state(&s), before);
    assert_eq!(unlist(&mut s, "a", None, 22), Ok(0), "none unheld");
}

#[test]
fn a_final_claim_of_a_listed_ticket_is_resold_at_once() {
    let mut s = event(1);
    plain(&mut s, "a", 10, 1).unwrap();
    resell(&mut s, "a", None, 11).unwrap();
    assert_eq!(plain(&mut s, "b", 12, 1), Ok(Claim::New(Tickets::One(1))));
    assert_eq!(ops(&s)[ops(&s).len() - 2..], ["claim", "resold"]);
    assert_eq!(s.holders.get("a"), None);
    assert_eq!(tickets(&s, "b"), [1]);
    let r = report(&mut s, "e", None).unwrap();
    assert_eq!((r.remaining, r.claimed, r.held, r.resale), (0, 1, 0, 0));
    assert_eq!(order(&mut s, "e", "b", None).unwrap().unwrap().gens, [2]);
}

#[test]
fn resale_closes_with_transfers() {
    let mut s = MemoryStore::default();
    let op = Op::Init {
        transfer_until: Some(50),
        total: 2,
        opens_at: 0,
        closes_at: 0,
        checkout: protocol::record::Checkout {
            hold: 0,
            limit: 2,
            offer: 1_000,
        },
        incarnation: Some(protocol::record::Incarnation(1)),
        draw: None,
        layout: None,
    };
    run(&mut s, |s, out| c::create(s, out, "e", op, 1)).unwrap();
    plain(&mut s, "a", 10, 1).unwrap();
    assert_eq!(
        resell(&mut s, "a", None, 50).map_err(|e| e.code()),
        Err("CLOSED")
    );
    assert_eq!(resell(&mut s, "a", None, 49), Ok(1));
}

#[test]
fn a_seated_claim_takes_listed_seats_only_when_no_free_ones_fit() {
    let mut s = seated(100, 6);
    claim(&mut s, "e", "a", with(Some(6), Some(0)), 10, 1).unwrap();
    claim(&mut s, "e", "b", with(Some(4), Some(0)), 10, 1).unwrap();
    let free_before = report(&mut s, "e", None).unwrap().remaining;
    resell(&mut s, "a", None, 20).unwrap();
    let map = c::seat_map(&mut s, "e").unwrap().unwrap();
    assert_eq!(map.iter().filter(|b| **b == b'r').count(), 6);
    // One free seat fits: the house's stock goes first.
    let Ok(Claim::Held(one)) = claim(&mut s, "e", "c", with(Some(1), None), 30, 1) else {
        panic!("a free seat");
    };
    assert!(!tickets(&s, "a").contains(&one.lowest()));
    // Sold out but for the listing: a party of three gets listed seats.
    let Ok(Claim::Held(three)) = claim(&mut s, "e", "d", with(Some(3), None), 31, 1) else {
        panic!("three listed seats");
    };
    assert!(three
        .as_slice()
        .iter()
        .all(|t| tickets(&s, "a").contains(t)));
    let map = c::seat_map(&mut s, "e").unwrap().unwrap();
    assert_eq!(map.iter().filter(|b| **b == b'r').count(), 3);
    // d's hold expires: the seats are listed again, sold in the map.
    sweep(&mut s, "e", 200, 10).unwrap();
    let map = c::seat_map(&mut s, "e").unwrap().unwrap();
    assert_eq!(map.iter().filter(|b| **b == b'r').count(), 6);
    assert_eq!(report(&mut s, "e", None).unwrap().remaining, free_before);
    let mut replica = MemoryStore::default();
    for effect in &s.effects {
        effects::apply(&mut replica, &effect.borrowed());
    }
    assert_eq!(replica.holders, s.holders);
    assert_eq!(replica.after, s.after);
    assert_eq!(replica.seating.map(|x| x.2), s.seating.map(|x| x.2));
}

proptest! {
    #[test]
    fn random_resales_keep_the_stock_and_replay(
        steps in proptest::collection::vec((0u8..8, 0u8..6, 1i64..3), 1..60),
    ) {
        let mut s = checkout_event(8, 30, 3);
        let mut now = 10;
        for (what, u, count) in steps {
            let user = format!("u{u}");
            now += 7;
            let outcome = match what {
                0 | 1 => claim(&mut s, "e", &user, with(Some(count), None), now, 1).map(|_| 0),
                2 => confirm(&mut s, "e", &user, now),
                3 => cancel(&mut s, "e", &user, now).map(|_| 0),
                4 | 5 => resell(&mut s, &user, None, now),
                6 => unlist(&mut s, &user, None, now),
                _ => sweep(&mut s, "e", now, 10).map(|_| 0),
            };
            if let Err(e) = outcome {
                let known = ["SOLDOUT", "NOHOLD", "NOTSOLD", "LISTED", "NOTLISTED", "LIMIT"];
                prop_assert!(known.contains(&e.code()), "{}", e);
            }
            let r = report(&mut s, "e", None).unwrap();
            prop_assert_eq!(r.remaining + r.claimed, 8, "stock {:?}", r);
            // A listed ticket is in its seller's order, once.
            for ((hash, ticket), value) in &s.after {
                if *hash == After::Resale && *ticket > 0 {
                    let seller = value.split('\n').next().unwrap_or_default();
                    prop_assert!(tickets(&s, seller).contains(ticket));
                }
            }
        }
        let mut replica = MemoryStore::default();
        for effect in &s.effects {
            effects::apply(&mut replica, &effect.borrowed());
        }
        prop_assert_eq!(&replica.holders, &s.holders);
        prop_assert_eq!(&replica.after, &s.after);
        prop_assert_eq!(&replica.log, &s.log);
    }
}

/// `TICKET.REAPPLY` of a lost confirm of a buyer's hold of a listed
/// ticket sells it as `TICKET.CONFIRM` does: the same records (`confirm`,
/// then `resold` at the confirm's time), the same state.
#[test]
fn a_reapplied_confirm_sells_its_listed_tickets_as_the_command_does() {
    use std::borrow::Cow;

    let mut s = sold_out_but_one();
    resell(&mut s, "a", Some(&[2]), 20).unwrap();
    plain(&mut s, "c", 30, 1).unwrap(); // 5, free
    plain(&mut s, "d", 31, 1).unwrap(); // 2, a's
    let mut by_command = s.clone();
    confirm(&mut by_command, "e", "d", 40).unwrap();
    let lost = Record {
        op: Op::Confirm {
            user: Cow::Borrowed("d"),
            tickets: Tickets::One(2),
        },
        at: 40,
    };
    let log = s.log.len();
    run(&mut s, |s, out| c::reapply(s, out, "e", (lost, None), 41)).unwrap();
    let records = |s: &MemoryStore| {
        s.log[log..]
            .iter()
            .map(|(_, r)| r.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ops(&s)[log..], ["confirm", "resold"]);
    assert_eq!(records(&s), records(&by_command));
    assert_eq!(state(&s).0, state(&by_command).0);
    assert_eq!(state(&s).2, state(&by_command).2);
    assert_eq!(state(&s).3, state(&by_command).3);
    assert_eq!(tickets(&s, "d"), [2]);
    // The resold alone is never re-applied.
    let resold = s
        .log
        .last()
        .map(|(_, r)| r.op.map_user(|u| Cow::Owned(u.clone())));
    let again = Record {
        op: resold.unwrap(),
        at: 40,
    };
    let e = run(&mut s, |s, out| c::reapply(s, out, "e", (again, None), 42)).unwrap_err();
    assert_eq!(e.code(), "ERR");
}
