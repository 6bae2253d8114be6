//! Allocations over the in-memory store (docs/design.md "Allocations"):
//! ALLOCATE takes free public stock only, public claims never see it,
//! claims FROM an allocation take only its stock (its key checked), held
//! tickets go back to it, RELEASE (by hand or at its time) returns it to
//! the public, offered first to the waiting list. Random sequences keep
//! free + allocated + held + sold = total and replay on a replica.

use proptest::prelude::*;
use protocol::record::{Op, Tickets};

use super::*;
use crate::pool::{effects, AllocateAsk, ReleaseAsk};

pub(super) fn allocate<S: Committed>(
    s: &mut S,
    name: &str,
    count: i64,
    key: Option<&str>,
    release: Option<i64>,
    now: i64,
) -> Result<Tickets, TicketError> {
    let ask = AllocateAsk {
        name: name.into(),
        count,
        ask: SeatAsk::default(),
        key: key.map(|k| k.as_bytes().to_vec()),
        release,
    };
    run(s, |s, out| c::allocate(s, out, "e", &ask, Clock::at(now)))
}

fn release<S: Committed>(
    s: &mut S,
    name: &str,
    ask: ReleaseAsk,
    now: i64,
) -> Result<i64, TicketError> {
    run(s, |s, out| {
        c::release(s, out, "e", name, &ask, Clock::at(now))
    })
}

pub(super) fn from(
    name: &str,
    key: Option<&str>,
    count: Option<i64>,
    hold: Option<i64>,
) -> ClaimOptions {
    ClaimOptions {
        from: Some(Box::new(FromAsk {
            name: name.into(),
            key: key.map(|k| k.as_bytes().to_vec()),
        })),
        ..with(count, hold)
    }
}

fn allocation(s: &mut MemoryStore, name: &str) -> Option<Allocation> {
    s.allocation(name).unwrap()
}

/// free + allocated + held + sold = total, and the meta's summary is the
/// allocations' own.
fn check_invariant(s: &mut MemoryStore) {
    let r = report(s, "e", None).unwrap();
    let all = c::allocations(s, "e").unwrap();
    let free: i64 = all.iter().map(|(_, a)| a.free.len() as i64).sum();
    assert_eq!(r.allocated, free);
    assert_eq!(r.remaining + r.allocated + r.claimed, r.total, "{r:?}");
    assert_eq!(
        usize::from(s.meta.as_ref().unwrap().allocs.count),
        all.len()
    );
}

#[test]
fn general_admission_allocations() {
    let mut s = checkout_event(10, 0, 4);
    assert_eq!(plain(&mut s, "a", 2, 1), Ok(Claim::New(Tickets::One(1))));
    let taken = allocate(&mut s, "promoter", 3, Some("pw"), None, 3).unwrap();
    assert_eq!(taken, Tickets::Many(vec![2, 3, 4]));
    check_invariant(&mut s);
    // Public claims go around the allocation.
    let got = claim(&mut s, "e", "b", with(Some(2), None), 4, 1).unwrap();
    assert_eq!(got, Claim::New(Tickets::Many(vec![5, 6])));
    // A partner claims from it, with its key.
    let err = claim(&mut s, "e", "p1", from("promoter", None, None, None), 5, 1);
    assert_eq!(err.unwrap_err().code(), "NOKEY");
    let err = claim(
        &mut s,
        "e",
        "p1",
        from("promoter", Some("x"), None, None),
        5,
        1,
    );
    assert_eq!(err.unwrap_err().code(), "NOKEY");
    let err = claim(&mut s, "e", "p1", from("nobody", None, None, None), 5, 1);
    assert!(err.unwrap_err().to_string().contains("'nobody'"));
    let got = claim(
        &mut s,
        "e",
        "p1",
        from("promoter", Some("pw"), Some(2), None),
        5,
        1,
    );
    assert_eq!(got, Ok(Claim::New(Tickets::Many(vec![2, 3]))));
    assert_eq!(allocation(&mut s, "promoter").unwrap().claimed, 2);
    let last = claim(
        &mut s,
        "e",
        "p2",
        from("promoter", Some("pw"), Some(2), None),
        6,
        1,
    );
    assert_eq!(last.unwrap_err().code(), "SOLDOUT");
    check_invariant(&mut s);
    // Allocating again adds, with the same key only; more than is free is SHORT.
    assert_eq!(
        allocate(&mut s, "promoter", 1, None, None, 7)
            .unwrap_err()
            .code(),
        "NOKEY"
    );
    let short = allocate(&mut s, "promoter", 9, Some("pw"), None, 7).unwrap_err();
    assert_eq!(short.to_string(), "SHORT event 'e' has 4 free");
    assert_eq!(
        allocate(&mut s, "promoter", 1, Some("pw"), None, 7),
        Ok(Tickets::One(7))
    );
    // Releasing gives the free ones back; asking more than it has is SHORT.
    let err = release(&mut s, "promoter", ReleaseAsk::Count(3), 8).unwrap_err();
    assert_eq!(err.to_string(), "SHORT allocation 'promoter' has 2 free");
    assert_eq!(release(&mut s, "promoter", ReleaseAsk::Count(1), 8), Ok(1));
    assert_eq!(allocation(&mut s, "promoter").unwrap().free, [7]);
    check_invariant(&mut s);
    assert_eq!(plain(&mut s, "c", 9, 1), Ok(Claim::New(Tickets::One(4))));
    assert_eq!(release(&mut s, "promoter", ReleaseAsk::All, 9), Ok(1));
    assert_eq!(
        allocation(&mut s, "promoter"),
        None,
        "released in full, it ends"
    );
    check_invariant(&mut s);
}

#[test]
fn held_tickets_go_back_to_their_allocation() {
    let mut s = checkout_event(6, 1_000, 2);
    allocate(&mut s, "house", 2, None, None, 2).unwrap();
    let got = claim(&mut s, "e", "h", from("house", None, Some(2), None), 3, 1);
    assert_eq!(got, Ok(Claim::Held(Tickets::Many(vec![1, 2]))));
    // The hold expires: back in the allocation, not public.
    assert_eq!(sweep(&mut s, "e", 2_000, 10), Ok(1));
    assert_eq!(allocation(&mut s, "house").unwrap().free, [1, 2]);
    let expired = s
        .log
        .iter()
        .rev()
        .find(|(_, r)| matches!(r.op, Op::Expire { .. }));
    assert_eq!(expired.unwrap().1.op.from(), Some("house"));
    assert_eq!(plain(&mut s, "p", 2_001, 1).unwrap().ticket(), 3);
    // A cancelled hold too; a confirmed (sold) one cancelled goes public.
    claim(
        &mut s,
        "e",
        "h",
        from("house", None, Some(1), None),
        2_002,
        1,
    )
    .unwrap();
    assert_eq!(cancel(&mut s, "e", "h", 2_003), Ok(Some(1)));
    assert_eq!(allocation(&mut s, "house").unwrap().free, [1, 2]);
    claim(
        &mut s,
        "e",
        "h",
        from("house", None, Some(1), None),
        2_004,
        1,
    )
    .unwrap();
    confirm(&mut s, "e", "h", 2_005).unwrap();
    assert_eq!(cancel(&mut s, "e", "h", 2_006), Ok(Some(1)));
    let house = allocation(&mut s, "house").unwrap();
    assert_eq!((house.free, house.claimed), (vec![2], 0));
    assert_eq!(plain(&mut s, "q", 2_007, 1).unwrap().ticket(), 1);
    check_invariant(&mut s);
}

#[test]
fn a_timed_release_offers_the_waiting_list_first_once() {
    let mut s = checkout_event(4, 0, 2);
    allocate(&mut s, "kill", 2, None, Some(5_000), 2).unwrap();
    plain(&mut s, "a", 3, 1).unwrap();
    plain(&mut s, "b", 3, 1).unwrap();
    assert_eq!(plain(&mut s, "c", 4, 1).unwrap_err().code(), "SOLDOUT");
    assert_eq!(wait(&mut s, "e", "w", Some(2), 4), Ok(1));
    // Nothing before its time; at it, the sweep releases and offers.
    assert_eq!(sweep(&mut s, "e", 4_999, 10), Ok(0));
    assert!(allocation(&mut s, "kill").is_some());
    sweep(&mut s, "e", 5_000, 10).unwrap();
    assert_eq!(allocation(&mut s, "kill"), None);
    assert_eq!(s.offered, ["w"]);
    assert_eq!(s.holders.get("w"), Some(&Tickets::Many(vec![1, 2])));
    let releases = s
        .log
        .iter()
        .filter(|(_, r)| matches!(r.op, Op::Release { .. }));
    assert_eq!(releases.count(), 1);
    sweep(&mut s, "e", 9_000, 10).unwrap();
    let releases = s
        .log
        .iter()
        .filter(|(_, r)| matches!(r.op, Op::Release { .. }));
    assert_eq!(releases.count(), 1, "released once");
    assert_eq!(s.meta.as_ref().unwrap().allocs, Allocs::default());
    check_invariant(&mut s);
}

#[test]
fn errors_change_nothing() {
    let mut s = checkout_event(5, 0, 5);
    allocate(&mut s, "p", 2, Some("k"), None, 2).unwrap();
    let before = (s.pool.clone(), s.alloc.clone(), s.meta.clone(), s.log.len());
    let errors = [
        allocate(&mut s, "p", 1, Some("other"), None, 3).unwrap_err(),
        allocate(&mut s, "q", 4, None, None, 3).unwrap_err(),
        release(&mut s, "p", ReleaseAsk::Count(3), 3).unwrap_err(),
        release(&mut s, "p", ReleaseAsk::Tickets(vec![5]), 3).unwrap_err(),
        release(&mut s, "zz", ReleaseAsk::All, 3).unwrap_err(),
        claim(&mut s, "e", "u", from("p", None, None, None), 3, 1).unwrap_err(),
        claim(&mut s, "e", "u", from("p", Some("k"), Some(3), None), 3, 1).unwrap_err(),
    ];
    let codes: Vec<&str> = errors.iter().map(TicketError::code).collect();
    assert_eq!(
        codes,
        [
            "NOKEY",
            "SHORT",
            "SHORT",
            "ERR",
            "NOALLOCATION",
            "NOKEY",
            "SOLDOUT"
        ]
    );
    assert_eq!(
        before,
        (s.pool.clone(), s.alloc.clone(), s.meta.clone(), s.log.len())
    );
    for n in 0..62 {
        let name = format!("n{n}");
        if n < 3 {
            allocate(&mut s, &name, 1, None, None, 4).unwrap();
        } else {
            s.meta.as_mut().unwrap().allocs.count = 64;
            let err = allocate(&mut s, &name, 1, None, None, 4).unwrap_err();
            assert!(err.to_string().contains("64 allocations"), "{err}");
            break;
        }
    }
}

/// The seated event of the seat tests (two rows of 6, a wheelchair
/// space at 6), final sales.
fn seated_event(limit: i64) -> MemoryStore {
    super::seats::seated(0, limit)
}

#[test]
fn seated_allocations() {
    let mut s = seated_event(4);
    // Seats 3, 4 (the middle of the front row): picked.
    let ask = AllocateAsk {
        name: "camera".into(),
        count: 0,
        ask: SeatAsk {
            ids: Some(vec![4, 3]),
            ..SeatAsk::default()
        },
        key: None,
        release: None,
    };
    let got = run(&mut s, |s, out| {
        c::allocate(s, out, "e", &ask, Clock::at(2))
    });
    assert_eq!(got, Ok(Tickets::Many(vec![3, 4])));
    assert_eq!(c::seat_map(&mut s, "e").unwrap().unwrap(), b"..aa........");
    let again = run(&mut s, |s, out| {
        c::allocate(s, out, "e", &ask, Clock::at(2))
    });
    assert_eq!(again.unwrap_err().code(), "TAKEN");
    // COUNT: free non-accessible seats in SPLIT order.
    let got = allocate(&mut s, "band", 3, None, None, 3).unwrap();
    assert_eq!(got.as_slice().len(), 3);
    assert!(!got.as_slice().contains(&6), "never the wheelchair space");
    // A public claim of 2 never sits on allocated seats.
    let public = claim(&mut s, "e", "a", with(Some(2), None), 4, 1).unwrap();
    let band = allocation(&mut s, "band").unwrap().free;
    for t in public.tickets().as_slice() {
        assert!(![3, 4].contains(t) && !band.contains(t), "{t}");
    }
    // Best available within the allocation.
    let got = claim(&mut s, "e", "c", from("camera", None, Some(2), None), 5, 1).unwrap();
    assert_eq!(got.tickets().as_slice(), [3, 4]);
    let picked = ClaimOptions {
        seats: Some(Box::new(SeatAsk {
            ids: Some(vec![band[0]]),
            ..SeatAsk::default()
        })),
        ..from("camera", None, None, None)
    };
    let err = claim(&mut s, "e", "d", picked, 6, 1).unwrap_err();
    assert_eq!(err.code(), "SOLDOUT", "camera is sold out");
    check_invariant(&mut s);
    assert_eq!(release(&mut s, "band", ReleaseAsk::All, 7), Ok(3));
    assert!(!c::seat_map(&mut s, "e").unwrap().unwrap().contains(&b'a'));
    check_invariant(&mut s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Any sequence of public claims, allocations, claims from them,
    /// cancels, releases and time passing: public claims never hold an
    /// allocated ticket, a partner never more than its allocation gave,
    /// the counts add up, and a replica replaying the effects agrees.
    #[test]
    fn random_sales_with_allocations(
        seated in any::<bool>(),
        steps in proptest::collection::vec((0..7u8, 0..4usize, 1..4i64), 1..60),
    ) {
        let mut s = match seated {
            true => seated_event(3),
            false => checkout_event(12, 500, 3),
        };
        let names = ["p0", "p1", "p2", "p3"];
        let mut now = 10;
        for (i, (step, who, n)) in steps.into_iter().enumerate() {
            now += 97;
            let name = names[who];
            let user = format!("u{i}");
            match step {
                0 => { let _ = claim(&mut s, "e", &user, with(Some(n), None), now, 1); }
                1 => { let _ = allocate(&mut s, name, n, None, Some(now + 400 * n), now); }
                2 | 3 => {
                    let _ = claim(&mut s, "e", &user, from(name, None, Some(n), None), now, 1);
                }
                4 => {
                    let holders: Vec<String> = s.holders.keys().cloned().collect();
                    if let Some(u) = holders.get(who) { let _ = cancel(&mut s, "e", u, now); }
                }
                5 => { let _ = release(&mut s, name, ReleaseAsk::Count(n), now); }
                _ => { let _ = sweep(&mut s, "e", now + 300, 100); }
            }
            check_invariant(&mut s);
            let allocated: Vec<i64> = c::allocations(&mut s, "e").unwrap()
                .into_iter().flat_map(|(_, a)| a.free).collect();
            for (u, tickets) in &s.holders {
                for t in tickets.as_slice() {
                    prop_assert!(!allocated.contains(t), "{u} holds allocated {t}");
                }
            }
        }
        // Each claim from an allocation took tickets given to that name.
        let mut given: std::collections::HashMap<String, Vec<i64>> = Default::default();
        for (_, r) in &s.log {
            match &r.op {
                Op::Allocate { name, tickets, .. } => given.entry(name.clone()).or_default().extend(tickets.as_slice()),
                Op::Claim { from: Some(name), tickets, .. } | Op::Hold { from: Some(name), tickets, .. } => {
                    let had = given.get(name.as_ref()).cloned().unwrap_or_default();
                    for t in tickets.as_slice() {
                        prop_assert!(had.contains(t), "{name} never had {t}");
                    }
                }
                _ => {}
            }
        }
        let mut replica = MemoryStore::default();
        for effect in &s.effects {
            effects::apply(&mut replica, &effect.borrowed());
        }
        prop_assert_eq!(&replica.holders, &s.holders);
        prop_assert_eq!(&replica.pool, &s.pool);
        prop_assert_eq!(&replica.alloc, &s.alloc);
        prop_assert_eq!(&replica.meta, &s.meta);
        prop_assert_eq!(replica.seating.as_ref().map(|x| &x.2), s.seating.as_ref().map(|x| &x.2));
    }
}
