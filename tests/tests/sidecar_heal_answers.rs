//! End-to-end (issue 30): the heal never takes back an answer the new
//! primary gave (docs/design.md "Healing after an unplanned failover").
//!
//! Each test scripts one history: a primary and a replica, the replica cut
//! off (frozen, its link dropped), unacknowledged writes the sidecar
//! applies to MySQL, then the sidecar stopped, the primary killed, the
//! stale replica promoted and given a new (strict) replica; the new
//! primary answers a user with a reply `WAIT 1` acknowledges but that
//! logs nothing; then the sidecar starts and heals. That answer stands:
//! the lost writes it contradicts are undone in MySQL and reported,
//! Redis equals MySQL, `reconcile` is clean, the strict replica and an AOF
//! reload reach the same `DEBUG DIGEST`, and the new primary's note of
//! answers is closed.

#[path = "support/failover.rs"]
mod failover;
#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use failover::{acked, conflict_of, order, Failover, LONG};
use redis::Connection;
use support::*;
use ticketgate_tests::wait_until;

/// The history of the issue: u's lost cancel of 1, v's lost claim of it,
/// u's repeat claim answered 1 by the new primary: u keeps 1.
#[test]
fn a_repeat_claim_answered_by_the_new_primary_keeps_its_ticket() {
    let mut f = Failover::start("heal_ans_claim", &["TICKET.INIT", "e", "10"]);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "u"], 0),
        Some(1)
    );
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "v"], 0), 1);
    f.promote();
    let mut r = f.conn();
    let told: i64 = acked(&mut r, &["TICKET.CLAIM", "e", "u"], 1);
    assert_eq!(told, 1, "the new primary tells u: your ticket is 1");
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(order(&mut r, "v"), None);
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    assert_eq!(all.len(), 2, "{all:?}");
    let u = conflict_of(&all, "u");
    assert!(
        u.3.starts_with("cancel of ticket(s) 1 by user \"u\""),
        "{u:?}"
    );
    assert!(u.3.contains("answered user \"u\""), "{u:?}");
    let v = conflict_of(&all, "v");
    assert!(
        v.3.starts_with("claim of ticket(s) 1 by user \"v\""),
        "{v:?}"
    );
    f.consistent();
}

/// u holds ticket 1, sold (acknowledged); then the replica is cut off and
/// u's cancel of it is answered but never replicated: a lost write.
fn sold_then_lost_cancel(name: &str) -> (Failover, Connection) {
    let init = ["TICKET.INIT", "e", "10", "HOLD", "600000"];
    let mut f = Failover::start(name, &init);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 1), 1);
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "u"], 0),
        Some(1)
    );
    (f, p)
}

/// u's order was sold; its lost cancel is undone because the new primary
/// answered u's confirm (of the sold order: nothing logged).
#[test]
fn a_confirm_answered_by_the_new_primary_undoes_a_lost_cancel() {
    let (mut f, _p) = sold_then_lost_cancel("heal_ans_confirm");
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(conflict_of(&all, "u").3.contains("answered user \"u\""));
    f.consistent();
}

/// A lost cancel, a lost short hold of the same ticket and its lost
/// expiry; the new primary answers u's confirm of the sold order. The
/// expiry must not win: u keeps 1, sold.
#[test]
fn an_expiry_lost_after_an_acknowledged_confirm_does_not_win() {
    let (mut f, mut p) = sold_then_lost_cancel("heal_ans_expiry");
    let short = ["TICKET.CLAIM", "e", "u", "HOLD", "300"];
    assert_eq!(acked::<i64>(&mut p, &short, 0), 1);
    wait_until(LONG, "the old primary expires the short hold", || {
        msupport::status_int(&mut p, "e", "held") == 0
    });
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    // the cancel and the hold are u's writes; the expiry is the module's
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().all(|c| c.0 == "u" && c.2 == "lost_in_failover"));
    assert!(f.sidecar.log().contains("lost expiry"), "the expiry undone");
    f.consistent();
}

/// h's lost cancel offered the ticket to w, the head of the waiting list;
/// the new primary answered w's leave. The offer must not come back.
#[test]
fn an_offer_lost_after_an_acknowledged_leave_does_not_come_back() {
    let init = ["TICKET.INIT", "e", "1", "HOLD", "600000", "OFFER", "600000"];
    let mut f = Failover::start("heal_ans_offer", &init);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "h"], 1), 1);
    assert_eq!(acked::<i64>(&mut p, &["TICKET.WAIT", "e", "w"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "h"], 0),
        Some(1)
    );
    assert_eq!(
        order(&mut p, "w"),
        Some((vec![1], "held".into())),
        "offered"
    );
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.LEAVE", "e", "w"], 1), 1);
    f.heal();

    // h's cancel (nobody answered h since) is re-applied; w's offer is not.
    assert_eq!(order(&mut r, "w"), None);
    assert_eq!(order(&mut r, "h"), None);
    assert_eq!(
        msupport::int_or_nil(&mut r, &["TICKET.POSITION", "e", "w"]),
        None
    );
    assert!(f.rows().is_empty(), "{:?}", f.rows());
    assert!(
        f.conflicts().is_empty(),
        "an offer is the module's decision"
    );
    let log = f.sidecar.log();
    assert!(log.contains("lost offer"), "{}", tail(&log, 20));
    assert!(log.contains("answered user \"w\""), "{}", tail(&log, 20));
    f.consistent();
}
