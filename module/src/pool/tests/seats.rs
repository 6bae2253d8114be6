//! Seated events over the in-memory store: random sales (best available,
//! picks, holds, confirms, cancels, expiries) keep the seat state exactly
//! the holders' seats, never hand a seat out twice, and replay on a
//! replica to the same state; the waiting list offers the first party
//! that sits together, and a party that cannot keeps its place.

use proptest::prelude::*;
use protocol::record::{Checkout, Incarnation, Op};
use protocol::seats::{Layout, Seat};

use super::*;
use crate::pool::effects;

/// Two rows of 6 (the first with a wheelchair space at 6), 12 seats.
const ROWS: &str = r#"{"sections":[{"name":"A","rows":[
    {"name":"1","seats":6,"accessible":[6]},{"name":"2","seats":6}]}]}"#;

pub(super) fn seated(hold: i64, limit: i64) -> MemoryStore {
    let mut s = MemoryStore::default();
    let layout = Layout::parse(ROWS).unwrap().to_json();
    let op = Op::Init {
        transfer_until: None,
        total: 12,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout {
            hold,
            limit,
            offer: 1_000,
        },
        incarnation: Some(Incarnation(3)),
        draw: None,
        layout: Some(layout),
    };
    run(&mut s, |s, out| c::create(s, out, "e", op, 1)).unwrap();
    s
}

fn seats(count: Option<i64>, ids: Option<Vec<i64>>) -> ClaimOptions {
    ClaimOptions {
        count: count.filter(|_| ids.is_none()),
        hold: None,
        seats: ids.map(|ids| {
            Box::new(SeatAsk {
                ids: Some(ids),
                ..SeatAsk::default()
            })
        }),
        from: None,
    }
}

/// The seat state is exactly the holders' seats: held ones `Held`, sold
/// ones `Sold`, every other seat free; no seat belongs to two holders.
fn check_seats(s: &MemoryStore) -> Result<(), TestCaseError> {
    let (_, layout, state) = s.seating.as_ref().unwrap();
    let mut owner = vec![None; layout.total as usize + 1];
    for (user, tickets) in &s.holders {
        let want = match s.holds.contains_key(user) {
            true => Seat::Held,
            false => Seat::Sold,
        };
        for &t in tickets.as_slice() {
            prop_assert!(owner[t as usize].is_none(), "seat {} twice", t);
            owner[t as usize] = Some(user.clone());
            prop_assert_eq!(state.get(t as u32), want, "seat {}", t);
        }
    }
    for id in 1..=layout.total {
        if owner[id as usize].is_none() {
            prop_assert_eq!(state.get(id), Seat::Free, "seat {}", id);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn random_seated_sales_keep_the_seats_and_replay(
        steps in proptest::collection::vec((0u8..6, 0u8..8, 1i64..5, proptest::collection::vec(1i64..=12, 1..3)), 1..40),
    ) {
        let mut s = seated(50, 4);
        let mut now = 10;
        for (what, u, count, ids) in steps {
            let user = format!("u{u}");
            now += 7;
            let outcome = match what {
                0 | 1 => claim(&mut s, "e", &user, seats(Some(count), None), now, 1).map(|_| ()),
                2 => claim(&mut s, "e", &user, seats(None, Some(ids)), now, 1).map(|_| ()),
                3 => confirm(&mut s, "e", &user, now).map(|_| ()),
                4 => cancel(&mut s, "e", &user, now).map(|_| ()),
                _ => sweep(&mut s, "e", now, 10).map(|_| ()),
            };
            if let Err(e) = outcome {
                let known = ["SOLDOUT", "NOTOGETHER", "TAKEN", "ORPHAN", "NOHOLD", "HOLDING", "ERR"];
                prop_assert!(known.contains(&e.code()), "{}", e);
            }
            check_seats(&s)?;
        }
        let mut replica = MemoryStore::default();
        for effect in &s.effects {
            effects::apply(&mut replica, &effect.borrowed());
        }
        prop_assert_eq!(&replica.holders, &s.holders);
        prop_assert_eq!(&replica.log, &s.log);
        prop_assert_eq!(
            replica.seating.as_ref().map(|x| &x.2),
            s.seating.as_ref().map(|x| &x.2)
        );
    }
}

/// Row 1: four single seats between blocked positions (ids 1-4); row 2:
/// three together (ids 5-7).
const SINGLES: &str = r#"{"sections":[{"name":"A","rows":[
    {"name":"1","seats":7,"blocked":[2,4,6]},{"name":"2","seats":3}]}]}"#;

#[test]
fn a_party_that_cannot_sit_together_keeps_its_place() {
    let mut s = MemoryStore::default();
    let op = Op::Init {
        transfer_until: None,
        total: 7,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout {
            hold: 0,
            limit: 4,
            offer: 1_000,
        },
        incarnation: Some(Incarnation(3)),
        draw: None,
        layout: Some(Layout::parse(SINGLES).unwrap().to_json()),
    };
    run(&mut s, |s, out| c::create(s, out, "e", op, 1)).unwrap();
    claim(&mut s, "e", "row", seats(None, Some(vec![5, 6, 7])), 10, 1).unwrap();
    claim(&mut s, "e", "x", seats(None, Some(vec![1, 2, 3, 4])), 10, 1).unwrap();
    assert_eq!(wait(&mut s, "e", "three", Some(3), 11), Ok(1));
    assert_eq!(wait(&mut s, "e", "one", Some(1), 12), Ok(2));
    // Four single seats come back: the party of 3 cannot sit together and
    // keeps its place; the party of 1 behind it is offered a seat.
    cancel(&mut s, "e", "x", 13).unwrap();
    assert_eq!(s.offered, ["one"]);
    assert_eq!(position(&mut s, "e", "three", None), Ok(Some(1)));
    // Three together come back: the party of 3 gets exactly those.
    cancel(&mut s, "e", "row", 14).unwrap();
    assert_eq!(s.offered, ["one", "three"]);
    assert_eq!(
        s.holders.get("three").map(|t| t.as_slice().to_vec()),
        Some(vec![5, 6, 7])
    );
    let offer = s
        .log
        .iter()
        .rev()
        .find(|(_, r)| matches!(r.op, Op::Offer { .. }));
    assert_eq!(
        offer.and_then(|(_, r)| r.op.pick().map(|p| p.how.as_str())),
        Some("best")
    );
    check_seats(&s).unwrap();
}
