//! Checkout: holds confirmed or expired (their numbers go back lowest
//! first), `COUNT` all-or-nothing within `LIMIT`, and the bounded sweep.

use protocol::record::Tickets;

use super::*;

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
