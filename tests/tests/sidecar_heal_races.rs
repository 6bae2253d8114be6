//! End-to-end: what the soak's unplanned failovers found the heal's
//! divergence check missing (issue 30; docs/design.md "Healing after an
//! unplanned failover"), each as one scripted failover (see
//! `support/failover.rs`): the replica cut off, writes the sidecar applies
//! to MySQL, the primary killed, the stale replica promoted; then the
//! sidecar heals, MySQL equals Redis, `reconcile` is clean, the strict
//! replica and an AOF reload reach the same `DEBUG DIGEST`.

#[path = "support/failover.rs"]
mod failover;
#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use failover::{acked, order, Failover};
use protocol::record::{Op, Record};
use support::*;

/// Two primaries can log the same record at the same id after different
/// histories: in the soak (seeds 3003, 3004, 13693333185817233285), the
/// old primary and the replica promoted while it still took writes both
/// expired a hold in the same millisecond, and that expiry was the last
/// entry MySQL applied. The new primary then holds the entry at MySQL's
/// offset with the very content MySQL applied, yet lacks writes before it.
/// Here both log `op=open` at one id (an `XADD` of the same fields) after
/// u's claim, which only the old primary has. The heal must find the lost
/// claim (and re-apply it: nothing on the new primary touched u or its
/// ticket), not take the event for intact: that quarantined it
/// (`entries_lost`: MySQL counted more entries than the new primary's log
/// had seen) or, when the new primary had logged more writes of its own,
/// applied its diverged log as ordinary entries (conflicts, Redis != MySQL).
#[test]
fn the_same_entry_at_the_same_id_on_both_primaries_proves_nothing() {
    let mut f = Failover::start("heal_same_id", &["TICKET.INIT", "e", "10"]);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "a"], 1), 1);
    f.cut_off();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 0), 2);
    let open = Record {
        op: Op::<&str>::Open,
        at: msupport::server_ms(&mut p),
    };
    let id = xadd_at(&mut p, "e", "*", &open);
    // MySQL applies u's claim and the open: its offset is `id`.
    f.promote();
    let mut r = f.conn();
    assert_eq!(xadd_at(&mut r, "e", &id, &open), id);
    f.heal();

    let log = f.sidecar.log();
    assert!(!log.contains("QUARANTINED"), "{}", tail(&log, 20));
    assert!(
        log.contains("2 lost applied write(s): 2 re-applied"),
        "u's claim re-applied, the open found on the new primary: {}",
        tail(&log, 20)
    );
    assert_eq!(order(&mut r, "u"), Some((vec![2], "sold".into())));
    assert_eq!(order(&mut r, "a"), Some((vec![1], "sold".into())));
    assert!(f.conflicts().is_empty(), "{:?}", f.conflicts());
    f.consistent();
}

/// The soak's seated event (a lost hold of a seat undone because the new
/// primary sold that seat again) drifted MySQL's category stock: the undo
/// gave the seat back to the event's stock but not to its category's, so
/// the category later refused sales Redis had made (`category_oversell`).
/// Here u's lost claim of the venue's best seat is undone (v took it on
/// the new primary); MySQL's category stock must equal Redis's free seats.
#[test]
fn an_undone_seat_gives_its_category_back() {
    let layout =
        r#"{"sections":[{"name":"A","category":"front","rows":[{"name":"1","seats":4}]}]}"#;
    let init = ["TICKET.INIT", "e", "4", "LIMIT", "2", "SEATS", layout];
    let mut f = Failover::start("heal_seat_category", &init);
    let mut p = f.conn();
    let a: Vec<i64> = acked(&mut p, &["TICKET.CLAIM", "e", "a", "COUNT", "1"], 1);
    f.cut_off();
    let u: Vec<i64> = acked(&mut p, &["TICKET.CLAIM", "e", "u", "COUNT", "1"], 0);
    f.promote();
    let mut r = f.conn();
    let v: Vec<i64> = acked(&mut r, &["TICKET.CLAIM", "e", "v", "COUNT", "1"], 1);
    assert_eq!(v, u, "the new primary sells u's lost seat to v");
    f.heal();

    assert_eq!(order(&mut r, "u"), None);
    assert_eq!(order(&mut r, "a"), Some((a, "sold".into())));
    let mut db = mysql::Conn::new(mysql::Opts::from_url(&f.db).unwrap()).unwrap();
    let remaining: Option<i64> = mysql::prelude::Queryable::exec_first(
        &mut db,
        "SELECT remaining FROM ticket_seat_stock WHERE event_id = 'e' AND category = 'front'",
        (),
    )
    .unwrap();
    assert_eq!(remaining, Some(2), "a and v hold one seat each of 4");
    f.consistent();
}
