//! End-to-end (issue 42): an unplanned failover that loses allocation
//! moves MySQL applied — an allocate, a claim `FROM` an allocation, a
//! release, the cancel of a held order that gave it back, a public claim
//! of a released ticket — is healed, not quarantined: each is undone in
//! MySQL with a `lost_in_failover` conflict, the stock back where it came
//! from (public sale or its allocation), the allocation's row as it was
//! before; then the new primary's own allocation moves are written. MySQL's
//! accounting (public + allocated + live = total) holds, `reconcile` is
//! clean, the strict replica and an AOF reload agree.

#[path = "support/failover.rs"]
mod failover;
#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use failover::{acked, conflict_of, mysql_int, Failover};

#[test]
fn lost_allocation_moves_are_undone_and_the_stock_put_back() {
    let mut f = Failover::start("heal_alloc", &["TICKET.INIT", "e", "50"]);
    let mut p = f.conn();
    let p_tickets: Vec<i64> = acked(
        &mut p,
        &["TICKET.ALLOCATE", "e", "p", "COUNT", "5", "KEY", "k"],
        1,
    );
    assert_eq!(p_tickets, vec![1, 2, 3, 4, 5]);
    let kept: i64 = acked(&mut p, &["TICKET.CLAIM", "e", "kept"], 1);
    assert_eq!(kept, 6);
    let held: i64 = acked(
        &mut p,
        &[
            "TICKET.CLAIM",
            "e",
            "h",
            "HOLD",
            "600000",
            "FROM",
            "p",
            "KEY",
            "k",
        ],
        1,
    );
    assert_eq!(held, 1);

    // Cut off: every allocation move the primary makes now is lost.
    f.cut_off();
    let q: Vec<i64> = acked(&mut p, &["TICKET.ALLOCATE", "e", "q", "COUNT", "3"], 0);
    assert_eq!(q, vec![7, 8, 9]);
    let pl: i64 = acked(
        &mut p,
        &["TICKET.CLAIM", "e", "pl", "FROM", "p", "KEY", "k"],
        0,
    );
    assert_eq!(pl, 2);
    let released: i64 = acked(&mut p, &["TICKET.RELEASE", "e", "p", "COUNT", "1"], 0);
    assert_eq!(released, 1, "3 back to public");
    let cancelled: Option<i64> = acked(&mut p, &["TICKET.CANCEL", "e", "h"], 0);
    assert_eq!(cancelled, Some(1), "1 back to p");
    // a public claim of the released ticket: it follows the lost release
    let public: i64 = acked(&mut p, &["TICKET.CLAIM", "e", "pub"], 0);
    assert_eq!(public, 3);
    f.promote();
    let live_q = "SELECT COUNT(*) FROM ticket_allocation WHERE event_id = 'e' AND name = 'q' AND released_at IS NULL";
    assert_eq!(
        mysql_int(&f.db, live_q),
        1,
        "MySQL applied the lost allocate"
    );

    // The new primary moves stock of its own: 7 and 8, which the lost
    // allocate of q had taken.
    let mut r = f.conn();
    let rr: Vec<i64> = acked(&mut r, &["TICKET.ALLOCATE", "e", "r", "COUNT", "2"], 1);
    assert_eq!(rr, vec![7, 8]);
    f.heal();

    let c = f.conflicts();
    assert_eq!(c.len(), 5, "{c:?}");
    let (allocate, release) = (&c[0].3, &c[2].3);
    assert!(
        allocate.contains("allocate of ticket(s) 7,8,9 to allocation \"q\""),
        "{allocate}"
    );
    assert!(
        release.contains("release of ticket(s) 3 of allocation \"p\""),
        "{release}"
    );
    for user in ["pl", "h", "pub"] {
        conflict_of(&c, user);
    }
    assert_eq!(mysql_int(&f.db, live_q), 0, "q is gone again");
    let undone =
        "SELECT COUNT(*) FROM ticket_allocation_step WHERE event_id = 'e' AND lost_in_failover = 1";
    assert_eq!(
        mysql_int(&f.db, undone),
        3,
        "allocate q, release p, return to p"
    );
    let accounting = "SELECT (SELECT remaining_stock FROM ticket_stock WHERE event_id = 'e') + (SELECT COALESCE(SUM(remaining_stock), 0) FROM ticket_allocation WHERE event_id = 'e' AND released_at IS NULL) + (SELECT COUNT(*) FROM ticket_participation WHERE event_id = 'e' AND live_ticket IS NOT NULL)";
    assert_eq!(
        mysql_int(&f.db, accounting),
        50,
        "public + allocated + live"
    );
    let p_free =
        "SELECT remaining_stock FROM ticket_allocation WHERE event_id = 'e' AND name = 'p'";
    assert_eq!(
        mysql_int(&f.db, p_free),
        4,
        "2-5 free in p again, 1 held by h"
    );
    f.consistent();

    // And the partner sells on from what the new primary kept.
    let next: i64 = acked(
        &mut r,
        &["TICKET.CLAIM", "e", "p2", "FROM", "p", "KEY", "k"],
        1,
    );
    assert_eq!(next, 2);
    f.synced();
    f.consistent();
}
