//! The waiting list: returned tickets go to its head in order, a head that
//! waited a full offer period gets what is free, a closed event offers
//! nothing, and a holder found in the list is dropped from it.

use protocol::effect::{Effect, WAIT_COUNT_SPAN};
use protocol::record::Tickets;

use super::*;

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
    assert_eq!(position(&mut s, "e", "w2", None), Ok(Some(2)));
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
    assert_eq!(position(&mut s, "e", "w1", Some(7)), Ok(Some(0)), "offered");
    assert_eq!(s.wants.get("w1"), Some(&0));
    assert_eq!(
        plain(&mut s, "w1", 8, 1),
        Ok(Claim::Repeat(Tickets::Many(vec![1, 2]))),
        "an offer is claimed back"
    );
    // The offer expires (10 min, HOLD is 0): w2 is next.
    let lapsed = 7 + 600_000;
    assert_eq!(position(&mut s, "e", "w1", None), Ok(Some(0)), "a replica");
    assert_eq!(position(&mut s, "e", "w1", Some(lapsed)), Ok(None), "due");
    assert_eq!(sweep(&mut s, "e", lapsed, 10), Ok(1));
    assert_eq!(s.offered, ["w1", "w2"]);
    assert_eq!(position(&mut s, "e", "w1", None), Ok(None), "expired");
    assert_eq!(position(&mut s, "e", "w2", Some(lapsed)), Ok(Some(0)));
    assert_eq!(
        order(&mut s, "e", "w2", None).unwrap().map(|o| o.tickets),
        Some(Tickets::One(1))
    );
    assert_eq!(leave(&mut s, "e", "w2", 7 + 600_000), Ok(false));
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops[5..], ["offer", "expire", "offer"]);
    confirm(&mut s, "e", "w2", lapsed).unwrap();
    assert_eq!(position(&mut s, "e", "w2", None), Ok(None), "bought");
    assert!(s.wants.is_empty());
}

#[test]
fn a_cancelled_offer_is_no_longer_offered() {
    let mut s = checkout_event(1, 0, 1);
    plain(&mut s, "a", 2, 1).unwrap();
    assert_eq!(wait(&mut s, "e", "w", None, 3), Ok(1));
    cancel(&mut s, "e", "a", 4).unwrap();
    assert_eq!(position(&mut s, "e", "w", Some(4)), Ok(Some(0)));
    assert_eq!(cancel(&mut s, "e", "w", 5).map(|t| t.is_some()), Ok(true));
    assert_eq!(position(&mut s, "e", "w", Some(5)), Ok(None));
    assert!(s.wants.is_empty());
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

#[test]
fn a_plain_list_gets_at_most_the_bound_of_offers_per_command_and_the_sweep_goes_on() {
    let mut s = checkout_event(3, 0, 3);
    claim(&mut s, "e", "a", with(Some(3), None), 2, 1).unwrap();
    for w in ["w1", "w2", "w3"] {
        wait(&mut s, "e", w, None, 3).unwrap();
    }
    let bounded = Clock {
        now: 4,
        maybe_due: true,
        offers: 1,
    };
    let mut out = Effects::default();
    super::c::cancel(&mut s, &mut out, "e", "a", bounded).unwrap();
    assert_eq!(out.offered(), 1);
    assert_eq!(out.again(), Some(4), "the sweep is told to come back now");
    s.commit(&out);
    assert_eq!(s.offered, ["w1"]);
    let mut out = Effects::default();
    let later = Clock { now: 5, ..bounded };
    super::st::sweep(&mut s, &mut out, "e", later, 10).unwrap();
    s.commit(&out);
    assert_eq!(s.offered, ["w1", "w2"]);
    sweep(&mut s, "e", 6, 10).unwrap();
    assert_eq!(s.offered, ["w1", "w2", "w3"]);
}
