//! The replay against sales made with the rules themselves: an honest
//! history passes, each kind of tampering is named.

use super::*;
use proptest::prelude::*;

/// Row 1 (rank 0) and row 2 (rank 1) of 10 seats; seat 10 of row 2
/// (id 20) is a wheelchair space; section B, category box: 6 seats.
const VENUE: &str = r#"{"sections":[
  {"name":"A","rows":[{"name":"1","seats":10},{"name":"2","seats":10,"accessible":[10]}]},
  {"name":"B","category":"box","rows":[{"name":"1","seats":6}]}]}"#;

/// A pick without filters.
fn plain(how: How) -> Pick {
    Pick {
        how,
        section: None,
        category: None,
        accessible: None,
    }
}

/// A sale made by the rules, as MySQL would hold it.
struct Sim {
    layout: Layout,
    state: SeatState,
    orders: Vec<Order>,
    clock: u64,
}

impl Sim {
    fn new(json: &str) -> Sim {
        let layout = Layout::parse(json).unwrap();
        let state = SeatState::new(&layout);
        Sim {
            layout,
            state,
            orders: Vec::new(),
            clock: 0,
        }
    }

    fn next(&mut self) -> StreamId {
        self.clock += 1;
        StreamId::new(1_000 + self.clock / 3, self.clock % 3)
    }

    fn push(&mut self, user: &str, seats: Vec<u32>, how: How) -> usize {
        self.state.set(&self.layout, &seats, Seat::Held);
        let id = self.next();
        self.orders.push(Order {
            id,
            user: user.into(),
            seats,
            pick: Some(plain(how)),
            reapplied: false,
            released: None,
            from: None,
        });
        self.orders.len() - 1
    }

    /// A best-available claim; None when the rule gives nothing.
    fn claim(&mut self, user: &str, count: u32, split: bool) -> Option<usize> {
        let request = Request {
            count,
            split,
            ..Request::default()
        };
        let chosen = best(&self.layout, &self.state, &request).ok()?;
        let how = if chosen.split { How::Split } else { How::Best };
        Some(self.push(user, chosen.ids, how))
    }

    fn pick(&mut self, user: &str, seats: &[u32]) -> Option<usize> {
        check_pick(&self.layout, &self.state, seats).ok()?;
        Some(self.push(user, seats.to_vec(), How::Seats))
    }

    fn cancel(&mut self, order: usize) {
        let at = self.next();
        let seats = self.orders[order].seats.clone();
        self.state.set(&self.layout, &seats, Seat::Free);
        self.orders[order].released = Some(at);
    }

    fn audit(&self) -> Result<Summary, String> {
        replay(&self.layout, &self.orders).map_err(|v| describe(&self.layout, &self.orders, &v))
    }
}

/// Parties of 4, 3 and 2, a cancel, a split, a pick: all by the rules.
fn honest() -> Sim {
    let mut s = Sim::new(VENUE);
    s.claim("ann", 4, false).unwrap();
    s.claim("bob", 3, false).unwrap();
    let cy = s.claim("cy", 2, false).unwrap();
    s.cancel(cy);
    s.pick("dee", &[21, 22]).unwrap();
    s.claim("eve", 2, false).unwrap();
    s
}

#[test]
fn an_honest_sale_passes_with_its_counts() {
    let s = honest();
    let sum = s.audit().unwrap();
    assert_eq!(
        (sum.orders, sum.best, sum.picked, sum.released, sum.seats),
        (5, 4, 1, 1, 13)
    );
    // ann got the middle of row 1: positions 4..7 (center 5.5)
    assert_eq!(s.orders[0].seats, [4, 5, 6, 7]);
}

#[test]
fn a_party_moved_to_worse_seats_is_named() {
    let mut s = honest();
    s.orders[0].seats = vec![11, 12, 13, 14];
    let why = s.audit().unwrap_err();
    assert!(
        why.starts_with("entry 1000-1: user \"ann\" took A-2-1, A-2-2, A-2-3, A-2-4; the rule gives A-1-4, A-1-5, A-1-6, A-1-7"),
        "{why}"
    );
}

#[test]
fn a_seat_held_twice_is_named_with_its_holder() {
    let mut s = honest();
    // cy's order (cancelled after bob's) is made to overlap bob's seats
    // while both held them: the unique index cannot see this, history can.
    let bob = s.orders[1].seats.clone();
    s.orders[2].seats = vec![bob[0], 20];
    s.orders[2].seats.sort_unstable();
    let why = s.audit().unwrap_err();
    assert!(why.contains("user \"cy\""), "{why}");
    assert!(
        why.contains("was held twice (user \"bob\" held it since entry 1000-2)"),
        "{why}"
    );
}

#[test]
fn a_split_where_seats_together_existed_fails() {
    let mut s = Sim::new(VENUE);
    s.claim("ann", 2, false).unwrap();
    s.orders[0].pick = Some(plain(How::Split));
    let why = s.audit().unwrap_err();
    assert!(why.contains("the rule gives A-1-5, A-1-6"), "{why}");
}

#[test]
fn a_pick_that_leaves_a_lone_seat_fails_the_orphan_rule() {
    let mut s = Sim::new(VENUE);
    s.orders.push(Order {
        id: StreamId::new(7, 0),
        user: "zed".into(),
        seats: vec![2, 3],
        pick: Some(plain(How::Seats)),
        reapplied: false,
        released: None,
        from: None,
    });
    let why = s.audit().unwrap_err();
    assert!(
        why.contains("leaves A-1-1 alone, and A-1-5..A-1-6 would leave none"),
        "{why}"
    );
}

#[test]
fn filters_replay_and_unknown_ones_are_named() {
    let mut s = Sim::new(VENUE);
    let chosen = best(
        &s.layout,
        &s.state,
        &Request {
            count: 2,
            category: s.layout.category_index("box"),
            ..Request::default()
        },
    )
    .unwrap();
    let i = s.push("ann", chosen.ids, How::Best);
    let filtered = |c: Option<&str>| Pick {
        category: c.map(String::from),
        ..plain(How::Best)
    };
    s.orders[i].pick = Some(filtered(Some("box")));
    s.audit().unwrap();
    assert_eq!(s.orders[i].seats, [23, 24]);
    s.orders[i].pick = Some(filtered(Some("boxx")));
    assert!(s
        .audit()
        .unwrap_err()
        .contains("its category \"boxx\" is not in the layout"));
    s.orders[i].pick = Some(filtered(None));
    assert!(s
        .audit()
        .unwrap_err()
        .contains("the rule gives A-1-5, A-1-6"));
}

#[test]
fn reapplied_orders_are_checked_for_seats_twice_only() {
    let mut s = honest();
    s.orders[4].reapplied = true;
    s.orders[4].seats = vec![9, 10];
    let sum = s.audit().unwrap();
    assert_eq!((sum.reapplied, sum.best), (1, 3));
    s.orders[4].seats = vec![7, 8];
    assert!(s.audit().unwrap_err().contains("was held twice"));
}

#[test]
fn no_pick_and_unknown_seats_are_violations() {
    let mut s = honest();
    s.orders[1].pick = None;
    assert!(s.audit().unwrap_err().contains("no seat_pick"));
    let mut s = honest();
    s.orders[1].seats = vec![1, 99];
    assert!(s.audit().unwrap_err().contains("seat id 99 is no seat"));
}

proptest! {
    /// Any sale the rules make passes; moving one seat of one order to
    /// another seat makes it fail.
    #[test]
    fn rule_made_sales_pass_and_a_moved_seat_fails(
        ops in proptest::collection::vec((1u32..=5, 0u8..10, any::<u16>()), 1..40),
        tamper in any::<(u16, u16, u16)>(),
    ) {
        let mut s = Sim::new(VENUE);
        for (k, (count, what, pick)) in ops.into_iter().enumerate() {
            let user = format!("u{k}");
            let live: Vec<usize> =
                (0..s.orders.len()).filter(|i| s.orders[*i].released.is_none()).collect();
            match what {
                0 | 1 if !live.is_empty() => s.cancel(live[pick as usize % live.len()]),
                2 => {
                    let first = u32::from(pick) % 26 + 1;
                    let seats: Vec<u32> = (first..first + count).filter(|id| *id <= 26).collect();
                    s.pick(&user, &seats);
                }
                3 => { s.claim(&user, count, true); }
                _ => { s.claim(&user, count, false); }
            }
        }
        prop_assert!(s.audit().is_ok(), "{:?}", s.audit());
        if s.orders.is_empty() {
            return Ok(());
        }
        let o = tamper.0 as usize % s.orders.len();
        let k = tamper.1 as usize % s.orders[o].seats.len();
        let to = u32::from(tamper.2) % 26 + 1;
        prop_assume!(!s.orders[o].seats.contains(&to));
        s.orders[o].seats[k] = to;
        s.orders[o].seats.sort_unstable();
        let verdict = s.audit();
        // A pick moved to another pickable seat is still a legal pick.
        if s.orders[o].pick.as_ref().map(|p| p.how) != Some(How::Seats) {
            prop_assert!(verdict.is_err(), "moved seat {} of order {} to {}", k, o, to);
        }
    }
}

/// An allocation of the middle of row 1, a partner's best claim from it
/// (the rule over its seats alone), a public claim around it, a partner's
/// hold given back into it, a release: all by the rules; a public order on
/// an allocated seat and a partner's order outside its allocation are
/// named.
#[test]
fn orders_from_allocations_take_only_their_seats() {
    let mut s = Sim::new(VENUE);
    let house: Vec<u32> = vec![4, 5, 6, 7];
    let mv = |s: &mut Sim, into: bool, seats: &[u32]| Move {
        id: s.next(),
        name: "house".into(),
        into,
        seats: seats.to_vec(),
    };
    let mut moves = vec![mv(&mut s, true, &house)];
    s.state.set(&s.layout, &house, Seat::Allocated);
    // the public's best party of 2 sits beside the allocation
    let public = s.claim("pub", 2, false).unwrap();
    assert!(s.orders[public].seats.iter().all(|x| !house.contains(x)));
    // the partner's best 2 within the allocation: its middle
    let only = SeatState::only(&s.layout, &house);
    let chosen = best(
        &s.layout,
        &only,
        &Request {
            count: 2,
            ..Request::default()
        },
    )
    .unwrap();
    let partner = s.push("partner", chosen.ids.clone(), How::Best);
    s.orders[partner].from = Some("house".into());
    // a partner's hold of the other two, expired back into the allocation
    let rest: Vec<u32> = house
        .iter()
        .copied()
        .filter(|x| !chosen.ids.contains(x))
        .collect();
    let held = s.push("p2", rest.clone(), How::Seats);
    s.orders[held].from = Some("house".into());
    s.cancel(held);
    let back = Move {
        id: s.orders[held].released.unwrap(),
        ..mv(&mut s, true, &rest)
    };
    moves.push(back);
    s.state.set(&s.layout, &rest, Seat::Allocated);
    moves.push(mv(&mut s, false, &rest));
    s.state.set(&s.layout, &rest, Seat::Free);
    let sum = replay_allocated(&s.layout, &s.orders, &moves).unwrap();
    assert_eq!((sum.orders, sum.allocated, sum.released), (3, 2, 1));
    // without the moves the public claim would have had the middle
    assert!(replay(&s.layout, &s.orders).is_err());
    // order `i` moved to `seats`: the audit's words
    let tampered = |i: usize, seats: Vec<u32>| {
        let mut bad = s.orders.clone();
        bad[i].seats = seats;
        let v = replay_allocated(&s.layout, &bad, &moves).unwrap_err();
        describe(&s.layout, &bad, &v)
    };
    // a public order on a seat still in the allocation
    let why = tampered(public, vec![7, 8]);
    assert!(
        why.contains("in public sale, but seat A-1-7 was free in allocation \"house\""),
        "{why}"
    );
    // the partner's order outside its allocation
    let why = tampered(partner, vec![1, 2]);
    assert!(
        why.contains("from allocation \"house\", but seat A-1-1 was in no allocation"),
        "{why}"
    );
}

/// audit-draw's timeline sees allocated seats as no offer's: a party of 7
/// fits before rows A-1 and A-2 are allocated, not after (B has 6), and
/// again once they are released.
#[test]
fn the_timeline_keeps_offers_off_allocated_seats() {
    let layout = Layout::parse(VENUE).unwrap();
    let at = |ms| StreamId::new(ms, 0);
    let mv = |ms, into| Move {
        id: at(ms),
        name: "house".into(),
        into,
        seats: (1..=20).collect(),
    };
    let moves = [mv(10, true), mv(20, false)];
    let mut t = Timeline::new(&layout, &[], &moves);
    assert!(t.fits(at(5), 7));
    assert!(!t.fits(at(15), 7));
    assert!(t.fits(at(25), 7));
}
