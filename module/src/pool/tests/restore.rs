//! Restore from a snapshot (`TICKET.RESTORE`): the snapshot is installed,
//! the event answers TRYAGAIN while restoring, bad steps are refused, and
//! (property test) claims after a restore never hand out a number twice.

use std::collections::BTreeSet;

use proptest::prelude::*;
use protocol::record::{Op, Tickets};

use super::allocations::{allocate, from};
use super::*;
use crate::pool::effects;
use protocol::restore::Allocation as Restored;

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
        layout: None,
    };
    (begin, orders, protocol::restore::free_spans(minted, &live))
}

/// The allocations of `s` as `rebuild` restores them: free tickets,
/// claimed, release, and the users whose orders are theirs.
fn allocations_of(s: &mut MemoryStore) -> Vec<Restored> {
    let marks: Vec<(String, String)> = s.alloc_fields().unwrap();
    let all = s.allocations().unwrap();
    all.into_iter()
        .map(|(name, a)| Restored {
            users: marks
                .iter()
                .filter(|(f, v)| f.starts_with("u:") && *v == name)
                .map(|(f, _)| f[2..].to_owned())
                .collect(),
            name,
            free: a.free,
            claimed: a.claimed,
            release: a.release,
        })
        .collect()
}

/// Restores a snapshot into `s` through the pool's own steps, in chunks
/// of `chunk` tickets; returns the commit's id.
fn restore_into(
    s: &mut MemoryStore,
    (begin, orders, free): &(Begin, Vec<Order>, Vec<RangeInclusive<i64>>),
    chunk: usize,
    now: i64,
) -> Result<StreamId, TicketError> {
    restore_with(s, (begin, orders, &[], free), chunk, now)
}

/// [`restore_into`] with allocations.
fn restore_with(
    s: &mut MemoryStore,
    (begin, orders, allocations, free): (&Begin, &[Order], &[Restored], &[RangeInclusive<i64>]),
    chunk: usize,
    now: i64,
) -> Result<StreamId, TicketError> {
    let steps = protocol::restore::steps(begin.clone(), true, orders, allocations, free, chunk);
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
            protocol::restore::Step::Allocation(a) => {
                restore_allocation(s, "e", &a.borrowed())?;
            }
            protocol::restore::Step::Free(free) => {
                restore_free(s, "e", &free)?;
            }
            protocol::restore::Step::Commit => id = restore_commit(s, "e", now),
            // (`steps` makes none: rebuild adds them)
            protocol::restore::Step::After(_) => {}
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
    assert_eq!(position(&mut s, "e", "x", None), Err(again.clone()));
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

/// Restore steps that must be refused, run on `s` (where `restored` is
/// restored already and 5 is free), each with what its error must say.
fn bad_steps(
    s: &mut MemoryStore,
    restored: &[Order<&str>],
) -> Vec<(Result<i64, TicketError>, &'static str)> {
    let order = |user: &'static str, tickets: Vec<i64>| Order {
        user,
        tickets: Tickets::from_sorted(tickets),
        until: 0,
    };
    vec![
        (restore_orders(s, "e", restored), "restored already"),
        (
            restore_orders(s, "e", &[order("x", vec![10])]),
            "ticket 10 is above minted (9)",
        ),
        (
            restore_orders(s, "e", &[order("x", vec![5])]),
            "ticket 5 is restored as free",
        ),
        (
            restore_orders(s, "e", &[order("x", vec![6]), order("y", vec![6])]),
            "ticket 6 is in two orders",
        ),
        (
            restore_orders(s, "e", &[order("x", vec![6]), order("x", vec![7])]),
            "order 2 (user 'x'): the user is restored already",
        ),
        (
            restore_orders(
                s,
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
        (restore_free(s, "e", &[5..=5]), "5 is in the pool already"),
        (restore_free(s, "e", &[6..=7, 7..=7]), "7 is given twice"),
        (restore_free(s, "e", &[9..=10]), "10 is above minted"),
    ]
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
    for (got, want) in bad_steps(&mut s, &orders[..1]) {
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
            effects::apply(&mut replica, &effect.borrowed());
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

/// An event with a keyed allocation (a sold and a held order from it) and
/// a timed one is restored: the allocations as they were, locked until an
/// ALLOCATE sets the key, the held order back to its allocation when it
/// expires, the timed release at its time, public claims around them.
#[test]
fn allocations_are_restored_locked_with_their_orders_and_release() {
    let mut s = checkout_event(20, 0, 4);
    plain(&mut s, "pub1", 1, 1).unwrap();
    allocate(&mut s, "fan", 4, Some("pw"), None, 2).unwrap();
    allocate(&mut s, "timed", 2, None, Some(500), 2).unwrap();
    claim(
        &mut s,
        "e",
        "f1",
        from("fan", Some("pw"), Some(1), None),
        3,
        1,
    )
    .unwrap();
    claim(
        &mut s,
        "e",
        "f2",
        from("fan", Some("pw"), Some(2), Some(100)),
        3,
        1,
    )
    .unwrap();
    plain(&mut s, "pub2", 4, 1).unwrap();
    let (mut begin, orders, _) = snapshot_of(&s, StreamId::new(1, 1));
    let allocations = allocations_of(&mut s);
    // MySQL's minted is the highest live or allocated number; the rest free.
    let mut taken: Vec<i64> = orders
        .iter()
        .flat_map(|o| o.tickets.as_slice().to_vec())
        .collect();
    taken.extend(allocations.iter().flat_map(|a| a.free.clone()));
    taken.sort_unstable();
    begin.minted = *taken.last().unwrap();
    let free = protocol::restore::free_spans(begin.minted, &taken);
    let mut r = MemoryStore::default();
    restore_with(&mut r, (&begin, &orders, &allocations, &free), 3, 10).unwrap();
    let before = c::allocations(&mut s, "e").unwrap();
    let after = c::allocations(&mut r, "e").unwrap();
    let unkeyed = |all: &[(String, Allocation)]| -> Vec<(String, Vec<i64>, i64, Option<i64>)> {
        all.iter()
            .map(|(n, a)| (n.clone(), a.free.clone(), a.claimed, a.release))
            .collect()
    };
    assert_eq!(unkeyed(&after), unkeyed(&before));
    assert!(after
        .iter()
        .all(|(_, a)| a.key == Some(Allocation::RESTORED_KEY)));
    assert_eq!(
        r.meta.as_ref().unwrap().allocs,
        s.meta.as_ref().unwrap().allocs
    );
    let (a, b) = (
        report(&mut r, "e", Some(20)).unwrap(),
        report(&mut s, "e", Some(20)).unwrap(),
    );
    assert_eq!(
        (a.remaining, a.allocated, a.claimed),
        (b.remaining, b.allocated, b.claimed)
    );
    // Locked: no key opens it, none given neither.
    for key in [None, Some("pw"), Some("")] {
        let e = claim(&mut r, "e", "x", from("fan", key, Some(1), None), 20, 1);
        assert_eq!(e.unwrap_err().code(), "NOKEY");
    }
    // f2's hold expires back into "fan".
    sweep(&mut r, "e", 200, 10).unwrap();
    let fan = r.allocation("fan").unwrap().unwrap();
    assert_eq!((fan.free.len(), fan.claimed), (3, 1));
    // The first ALLOCATE sets the key; then FROM claims with it work.
    // Without COUNT it only sets a restored allocation's key, once.
    assert_eq!(
        allocate(&mut r, "fan", 0, Some("new"), None, 210),
        Ok(Tickets::Many(vec![]))
    );
    let again = allocate(&mut r, "fan", 0, Some("new"), None, 210).unwrap_err();
    assert!(
        again.to_string().contains("ALLOCATE needs COUNT or SEATS"),
        "{again}"
    );
    allocate(&mut r, "fan", 1, Some("new"), None, 210).unwrap();
    assert_eq!(
        allocate(&mut r, "fan", 1, Some("pw"), None, 211)
            .unwrap_err()
            .code(),
        "NOKEY"
    );
    claim(
        &mut r,
        "e",
        "f3",
        from("fan", Some("new"), Some(1), None),
        212,
        1,
    )
    .unwrap();
    // The timed allocation releases itself at 500.
    sweep(&mut r, "e", 600, 10).unwrap();
    assert!(r.allocation("timed").unwrap().is_none());
    // Public claims never take allocated numbers.
    let fan: Vec<i64> = r.allocation("fan").unwrap().unwrap().free;
    for i in 0.. {
        let Ok(c) = plain(&mut r, &format!("p{i}"), 700, 1) else {
            break;
        };
        assert!(!fan.contains(&c.ticket()));
    }
    assert_eq!(r.allocation("fan").unwrap().unwrap().free, fan);
    // A replica applying the restore's effects reaches the same state.
    let mut replica = MemoryStore::default();
    let mut again = MemoryStore::default();
    restore_with(&mut again, (&begin, &orders, &allocations, &free), 3, 10).unwrap();
    for effect in &again.effects {
        effects::apply(&mut replica, &effect.borrowed());
    }
    assert_eq!(
        format!("{:?}", (&replica.meta, &replica.pool, &replica.alloc)),
        format!("{:?}", (&again.meta, &again.pool, &again.alloc))
    );
    assert_eq!(replica.holders, again.holders);
}

#[test]
fn bad_allocation_steps_are_refused_and_change_nothing() {
    let mut s = checkout_event(20, 0, 4);
    allocate(&mut s, "fan", 3, None, None, 2).unwrap();
    claim(&mut s, "e", "f1", from("fan", None, Some(1), None), 3, 1).unwrap();
    plain(&mut s, "pub", 4, 1).unwrap();
    let (mut begin, orders, _) = snapshot_of(&s, StreamId::ZERO);
    begin.minted = 4;
    let mut r = MemoryStore::default();
    restore_begin(&mut r, "e", &begin, false).unwrap();
    let a = |name: &'static str, free: Vec<i64>, claimed: i64, users: Vec<&'static str>| Restored {
        name,
        free,
        claimed,
        release: None,
        users,
    };
    // Before its users' orders: refused.
    let early = restore_allocation(&mut r, "e", &a("fan", vec![2, 3], 1, vec!["f1"]));
    assert!(early.unwrap_err().to_string().contains("no restored order"));
    let borrowed: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
    restore_orders(&mut r, "e", &borrowed).unwrap();
    restore_allocation(&mut r, "e", &a("fan", vec![2, 3], 1, vec!["f1"])).unwrap();
    restore_free(&mut r, "e", &[5..=5]).unwrap_err();
    let before = format!("{r:?}");
    for (step, want) in [
        (a("fan", vec![], 0, vec![]), "restored already"),
        (a("x", vec![9], 0, vec![]), "ticket 9 is above minted (4)"),
        (
            a("x", vec![3], 0, vec![]),
            "ticket 3 is in another allocation",
        ),
        (
            a("x", vec![], 0, vec!["f1"]),
            "user 'f1' is in an allocation already",
        ),
        (
            a("x", vec![], 0, vec!["nobody"]),
            "user 'nobody' has no restored order",
        ),
        (
            a("x", vec![], 2, vec!["pub"]),
            "claimed is 2 but its users' orders hold 1",
        ),
        (
            a("x", vec![], 2, vec!["pub", "pub"]),
            "user 'pub' is in an allocation already",
        ),
    ] {
        let e = restore_allocation(&mut r, "e", &step)
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("ERR ") && e.contains(want), "{want}: {e}");
    }
    assert_eq!(before, format!("{r:?}"));
    // Every number accounted for: held 1 and 4, allocated 2 and 3.
    restore_commit(&mut r, "e", 9).unwrap();
    assert_eq!(report(&mut r, "e", Some(9)).unwrap().allocated, 2);
}

/// `AFTER` puts back the transfer deadline, generations above 1 and scans
/// as the commands write them; a ticket above `total` is refused unchanged.
#[test]
fn after_restores_generations_scans_and_the_deadline() {
    use super::super::store::After;
    use protocol::restore_after::{AfterSale, Sold};
    let old = sold_and_held();
    let (begin, orders, free) = snapshot_of(&old, StreamId::new(1, 0));
    let sold = orders
        .iter()
        .find(|o| o.until == 0)
        .unwrap()
        .tickets
        .lowest();
    let mut s = MemoryStore::default();
    restore_begin(&mut s, "e", &begin, true).unwrap();
    let borrowed: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
    restore_orders(&mut s, "e", &borrowed).unwrap();
    restore_free(&mut s, "e", &free).unwrap();
    let mut after = AfterSale {
        transfer_until: Some(77),
        tickets: vec![Sold {
            ticket: 40,
            gen: 2,
            scan: None,
        }],
    };
    let bad = run(&mut s, |s, out| r::restore_after(s, out, "e", &after));
    assert!(bad.unwrap_err().to_string().contains("above total"));
    assert_eq!(s.after_field(After::Gens, 0).unwrap(), None, "unchanged");
    after.tickets = vec![Sold {
        ticket: sold,
        gen: 3,
        scan: Some((9, Some("north".into()))),
    }];
    let n = run(&mut s, |s, out| r::restore_after(s, out, "e", &after));
    assert_eq!(n.unwrap(), 1);
    restore_commit(&mut s, "e", 100).unwrap();
    let mut field = |hash, t| s.after_field(hash, t).unwrap();
    assert_eq!(field(After::Gens, 0).as_deref(), Some("77"));
    assert_eq!(field(After::Gens, sold).as_deref(), Some("3"));
    assert_eq!(field(After::Scans, sold).as_deref(), Some("9 3 north"));
}
