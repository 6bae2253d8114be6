//! Claims without checkout: numbers handed out lowest first and
//! reissued after a cancel, the pool holding one chunk, windows and status,
//! and errors (unknown event, keys that disagree) that change nothing.

use protocol::record::Tickets;

use super::*;

#[test]
fn claims_hand_out_lowest_first_and_sell_out() {
    let mut s = event(3);
    let got: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|u| plain(&mut s, u, 2, 2).unwrap())
        .collect();
    assert_eq!(
        got,
        [
            Claim::New(Tickets::One(1)),
            Claim::New(Tickets::One(2)),
            Claim::New(Tickets::One(3))
        ]
    );
    assert_eq!(
        plain(&mut s, "d", 2, 2),
        Err(TicketError::SoldOut("e".into()))
    );
    assert_eq!(plain(&mut s, "b", 2, 2), Ok(Claim::Repeat(Tickets::One(2))));
    assert_eq!(
        s.log.len(),
        4,
        "init + 3 claims; loser and repeat log nothing"
    );
}

#[test]
fn cancelled_numbers_are_reissued_first() {
    let mut s = event(10);
    for u in ["a", "b", "c"] {
        plain(&mut s, u, 2, 4).unwrap();
    }
    assert_eq!(cancel(&mut s, "e", "b", 3), Ok(Some(2)));
    assert_eq!(cancel(&mut s, "e", "b", 3), Ok(None));
    assert_eq!(plain(&mut s, "d", 4, 4), Ok(Claim::New(Tickets::One(2))));
    assert_eq!(plain(&mut s, "b", 4, 4), Ok(Claim::New(Tickets::One(4))));
}

#[test]
fn the_pool_only_holds_one_chunk() {
    let mut s = event(10_000_000);
    assert!(s.pool.is_empty());
    plain(&mut s, "a", 2, 1024).unwrap();
    assert_eq!(s.pool.len(), 1023);
    assert_eq!(s.meta.as_ref().unwrap().minted, 1024);
    assert_eq!(report(&mut s, "e", None).unwrap().remaining, 9_999_999);
}

#[test]
fn windows_and_status_gate_new_claims_but_not_repeats() {
    let mut s = MemoryStore::default();
    init(
        &mut s,
        "e",
        (5, 100, 200),
        Checkout::default(),
        Incarnation(1),
        1,
    )
    .unwrap();
    assert!(matches!(
        plain(&mut s, "a", 99, 8),
        Err(TicketError::NotOpen { opens_at: 100, .. })
    ));
    assert_eq!(plain(&mut s, "a", 100, 8), Ok(Claim::New(Tickets::One(1))));
    assert_eq!(
        plain(&mut s, "b", 200, 8),
        Err(TicketError::Closed("e".into()))
    );
    assert_eq!(
        plain(&mut s, "a", 300, 8),
        Ok(Claim::Repeat(Tickets::One(1)))
    );
    let mut s = event(5);
    set_status(&mut s, "e", Status::Closed, 2).unwrap();
    set_status(&mut s, "e", Status::Closed, 2).unwrap();
    assert_eq!(
        plain(&mut s, "a", 3, 8),
        Err(TicketError::Closed("e".into()))
    );
    set_status(&mut s, "e", Status::Open, 4).unwrap();
    assert_eq!(plain(&mut s, "a", 5, 8), Ok(Claim::New(Tickets::One(1))));
    let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
    assert_eq!(ops, ["init", "close", "open", "claim"]);
}

#[test]
fn errors_change_nothing() {
    let mut s = event(1);
    plain(&mut s, "a", 2, 8).unwrap();
    let before = format!("{s:?}");
    assert!(plain(&mut s, "b", 2, 8).is_err());
    assert!(init(
        &mut s,
        "e",
        (5, 0, 0),
        Checkout::default(),
        Incarnation(2),
        3
    )
    .is_err());
    assert!(drop_event(&mut s, "e", false, 3).is_err());
    assert_eq!(before, format!("{s:?}"));
}

#[test]
fn keys_that_disagree_refuse_writes_and_change_nothing() {
    let mut s = event(10);
    for u in ["a", "b", "c"] {
        plain(&mut s, u, 2, 1).unwrap();
    }
    // As if a slot migration had moved the meta hash but not the holders.
    s.holders.remove("b");
    let before = format!("{s:?}");
    let again = TicketError::TryAgain("e".into());
    assert_eq!(plain(&mut s, "d", 3, 1), Err(again.clone()));
    assert_eq!(cancel(&mut s, "e", "a", 3), Err(again.clone()));
    assert_eq!(confirm(&mut s, "e", "a", 3), Err(again));
    assert_eq!(before, format!("{s:?}"));
}

#[test]
fn unknown_event() {
    let mut s = MemoryStore::default();
    let no = TicketError::NoEvent("e".into());
    assert_eq!(plain(&mut s, "a", 1, 8), Err(no.clone()));
    assert_eq!(cancel(&mut s, "e", "a", 1), Err(no.clone()));
    assert_eq!(confirm(&mut s, "e", "a", 1), Err(no.clone()));
    assert_eq!(holder(&mut s, "e", "a", None), Err(no.clone()));
    assert_eq!(order(&mut s, "e", "a", None), Err(no.clone()));
    assert_eq!(set_status(&mut s, "e", Status::Open, 1), Err(no));
    assert_eq!(drop_event(&mut s, "e", false, 1), Ok(0));
    assert!(
        s.log.is_empty() && !s.log_key,
        "no key at all: nothing logged"
    );
}
