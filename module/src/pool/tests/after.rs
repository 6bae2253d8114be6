//! `TICKET.REAPPLY` of a lost transfer, scan, resell or unlist
//! (`pool::reapply_after`):
//! written again only when the command's own checks still pass.

use std::borrow::Cow;

use protocol::record::{Op, Record, Tickets};

use super::*;

/// An event of 10 with a LIMIT of 2; `a` bought 1 and 2, `b` 3.
fn sold() -> MemoryStore {
    let mut s = checkout_event(10, 0, 2);
    for (user, count) in [("a", 2), ("b", 1)] {
        let options = ClaimOptions {
            count: Some(count),
            ..ClaimOptions::default()
        };
        claim(&mut s, "e", user, options, 10, 4).unwrap();
    }
    s
}

fn again(s: &mut MemoryStore, op: Op<&'static str>) -> Result<StreamId, TicketError> {
    let record = Record {
        op: op.map_user(|u| Cow::Borrowed(*u)),
        at: 20,
    };
    run(s, |s, out| c::reapply(s, out, "e", (record, None), 30))
}

fn transfer(from: &'static str, to: &str, tickets: Vec<i64>) -> Op<&'static str> {
    Op::Transfer {
        user: from,
        to: Box::from(to),
        tickets: Tickets::from_sorted(tickets),
    }
}

fn scan(ticket: i64, gen: i64) -> Op<&'static str> {
    Op::Scan {
        ticket,
        gen,
        gate: Some("north".into()),
    }
}

fn resale(unlist: bool, seller: &'static str, tickets: Vec<i64>) -> Op<&'static str> {
    let tickets = Tickets::from_sorted(tickets);
    match unlist {
        false => Op::Resell {
            user: seller,
            tickets,
        },
        true => Op::Unlist {
            user: seller,
            tickets,
        },
    }
}

fn listed_by(s: &mut MemoryStore, ticket: i64) -> Option<String> {
    let listing = crate::pool::listing::listing(s, ticket).unwrap();
    listing.map(|l| l.seller)
}

#[test]
fn a_lost_resell_or_unlist_comes_back_under_the_commands_checks() {
    let mut s = sold();
    for (op, code) in [
        (resale(false, "b", vec![1]), "NOTSOLD"),
        (resale(false, "x", vec![1]), "NOHOLD"),
        (resale(true, "a", vec![1]), "NOTLISTED"),
    ] {
        let e = again(&mut s, op).unwrap_err();
        assert_eq!(e.code(), "CHANGED");
        assert!(e.to_string().contains(code), "{e}");
    }
    let log = s.log.len();
    again(&mut s, resale(false, "a", vec![1])).unwrap();
    assert_eq!(s.log.len(), log + 1, "the entry alone, no offer");
    assert_eq!(listed_by(&mut s, 1).as_deref(), Some("a"));
    let cancel = Op::Cancel {
        from: None,
        user: "a",
        tickets: Tickets::from_sorted(vec![1, 2]),
    };
    let listed = again(&mut s, cancel).unwrap_err();
    assert!(listed.to_string().contains("LISTED"), "{listed}");
    let twice = again(&mut s, resale(false, "a", vec![1])).unwrap_err();
    assert!(twice.to_string().contains("LISTED"), "{twice}");
    let theirs = again(&mut s, resale(true, "b", vec![1])).unwrap_err();
    assert!(theirs.to_string().contains("NOTLISTED"), "{theirs}");
    again(&mut s, resale(true, "a", vec![1])).unwrap();
    assert_eq!(listed_by(&mut s, 1), None);
    assert_eq!(s.meta.as_ref().map(|m| m.listed), Some(0));
    again(&mut s, scan(2, 1)).unwrap();
    let used = again(&mut s, resale(false, "a", vec![2])).unwrap_err();
    assert!(used.to_string().contains("USED"), "{used}");
}

#[test]
fn a_lost_scan_comes_back_once_at_its_generation() {
    let mut s = sold();
    let stale = again(&mut s, scan(1, 2)).unwrap_err();
    assert!(stale.to_string().contains("STALE"), "{stale}");
    assert_eq!(again(&mut s, scan(7, 1)).unwrap_err().code(), "CHANGED");
    let log = s.log.len();
    again(&mut s, scan(1, 1)).unwrap();
    assert_eq!(s.log.len(), log + 1);
    let last = &s.log.last().unwrap().1.op;
    assert_eq!(*last, scan(1, 1).map_user(|u| u.to_string()));
    let used = again(&mut s, scan(1, 1)).unwrap_err();
    assert!(used.to_string().contains("USED"), "{used}");
}

#[test]
fn a_lost_transfer_comes_back_when_the_giver_still_can_give() {
    let mut s = sold();
    for (op, code) in [
        (transfer("a", "c", vec![3]), "NOTSOLD"),
        (transfer("b", "a", vec![3]), "LIMIT"),
        (transfer("x", "c", vec![1]), "NOHOLD"),
    ] {
        let e = again(&mut s, op).unwrap_err();
        assert_eq!(e.code(), "CHANGED");
        assert!(e.to_string().contains(code), "{e}");
    }
    again(&mut s, scan(2, 1)).unwrap();
    let used = again(&mut s, transfer("a", "c", vec![1, 2])).unwrap_err();
    assert!(used.to_string().contains("USED"), "{used}");
    again(&mut s, transfer("a", "c", vec![1])).unwrap();
    assert_eq!(s.holders.get("c"), Some(&Tickets::One(1)));
    assert_eq!(s.holders.get("a"), Some(&Tickets::One(2)));
    // the new owner's credential is generation 2
    again(&mut s, scan(1, 2)).unwrap();
}

/// A transferred order from an allocation leaves it: the moved tickets
/// are not counted claimed any more, a giver left with nothing loses its
/// mark, a receiver's own allocation order (now mixed) is not its either;
/// later cancels count nothing off.
#[test]
fn a_transfer_takes_its_tickets_out_of_the_allocations_count() {
    use super::allocations::{allocate, from};
    let mut s = checkout_event(20, 0, 4);
    allocate(&mut s, "fan", 3, None, None, 1).unwrap();
    allocate(&mut s, "vip", 1, None, None, 1).unwrap();
    claim(&mut s, "e", "g", from("fan", None, Some(3), None), 2, 1).unwrap();
    claim(&mut s, "e", "v", from("vip", None, None, None), 2, 1).unwrap();
    let claimed = |s: &mut MemoryStore, name: &str| s.allocation(name).unwrap().unwrap().claimed;
    let give = |s: &mut MemoryStore, users: (&'static str, &'static str), t: Vec<i64>| {
        run(s, |s, out| {
            c::transfer(s, out, "e", users, Some(&t), Clock::at(3))
        })
    };
    give(&mut s, ("g", "x"), vec![1]).unwrap();
    assert_eq!(claimed(&mut s, "fan"), 2);
    give(&mut s, ("g", "v"), vec![2]).unwrap();
    assert_eq!((claimed(&mut s, "fan"), claimed(&mut s, "vip")), (1, 0));
    give(&mut s, ("g", "x"), vec![3]).unwrap();
    assert_eq!(claimed(&mut s, "fan"), 0);
    assert_eq!(s.alloc_field("u:g").unwrap(), None, "g holds nothing");
    assert_eq!(s.alloc_field("u:v").unwrap(), None, "v's order is mixed");
    for user in ["x", "v"] {
        cancel(&mut s, "e", user, 4).unwrap();
    }
    assert_eq!((claimed(&mut s, "fan"), claimed(&mut s, "vip")), (0, 0));
}
