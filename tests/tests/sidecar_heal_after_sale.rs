//! End-to-end (issue 43): an unplanned failover around transfers, entry
//! scans and resale (resell, unlist, a buyer's hold, cancel, confirm or
//! final claim of a listed ticket, and the `resold` it logs). What `WAIT 1` acknowledged survives as it was answered
//! (the door answers `USED`, the new owner holds the tickets); a lost,
//! unacknowledged transfer or scan MySQL applied is re-applied on the new
//! primary when nothing since touched it, else undone in MySQL (the owner
//! and scan rows kept as history, marked lost) with a `lost_in_failover`
//! conflict; never a quarantine. MySQL == Redis, `reconcile` clean, the
//! strict replica and an AOF reload agree.

#[path = "support/failover.rs"]
mod failover;
#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use failover::{acked, mysql_int, order, Failover};
use msupport::expect_error;
use mysql::prelude::Queryable;

/// MySQL's live owners: (ticket, user, gen) of every live row.
fn owners(db: &str) -> Vec<(i64, String, i64)> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    c.query("SELECT live_ticket, user_id, gen FROM ticket_participation WHERE event_id = 'e' AND live_ticket IS NOT NULL ORDER BY live_ticket")
        .unwrap()
}

/// MySQL's scans not lost: (ticket, gen).
fn scans(db: &str) -> Vec<(i64, i64)> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    c.query("SELECT ticket_number, gen FROM ticket_scan WHERE event_id = 'e' AND lost_in_failover = 0 ORDER BY ticket_number")
        .unwrap()
}

/// How many rows of `table` (`ticket_owner`, `ticket_scan`) a heal
/// marked lost.
fn lost(db: &str, table: &str) -> i64 {
    let sql = format!("SELECT COUNT(*) FROM {table} WHERE event_id = 'e' AND lost_in_failover = 1");
    mysql_int(db, &sql)
}

/// `owners` as expected: (ticket, user, gen).
fn owned(rows: &[(i64, &str, i64)]) -> Vec<(i64, String, i64)> {
    rows.iter()
        .map(|(t, u, g)| (*t, u.to_string(), *g))
        .collect()
}

fn sold(c: &mut redis::Connection, user: &str) -> Vec<i64> {
    match order(c, user) {
        Some((tickets, state)) if state == "sold" => tickets,
        other => panic!("{user}: {other:?}"),
    }
}

#[test]
fn a_failover_right_after_acknowledged_scans_and_transfers_takes_none_back() {
    let mut f = Failover::start(
        "heal_after_acked",
        &["TICKET.INIT", "e", "50", "LIMIT", "4"],
    );
    let mut p = f.conn();
    // (one ticket per order: the failover support compares holders so)
    for user in ["a", "b", "c", "d", "g"] {
        let _: i64 = acked(&mut p, &["TICKET.CLAIM", "e", user], 1);
    }
    // Acknowledged: a's 1 to x, b's 2 to y; 1 and 2 (gen 2) and 3
    // admitted.
    for (from, to) in [("a", "x"), ("b", "y")] {
        let moved: i64 = acked(&mut p, &["TICKET.TRANSFER", "e", from, to], 1);
        assert_eq!(moved, 1);
    }
    for (ticket, gen) in [("1", "2"), ("2", "2"), ("3", "1")] {
        let ok: String = acked(
            &mut p,
            &["TICKET.SCAN", "e", ticket, gen, "GATE", "north"],
            1,
        );
        assert_eq!(ok, "OK");
    }
    // Right after: the replica is cut off, and the primary answers two
    // more the replica never gets (unacknowledged, lost): a scan of d's 4
    // and g's transfer of 5 to w.
    f.cut_off();
    let ok: String = acked(&mut p, &["TICKET.SCAN", "e", "4", "1"], 0);
    assert_eq!(ok, "OK");
    let moved: i64 = acked(&mut p, &["TICKET.TRANSFER", "e", "g", "w"], 0);
    assert_eq!(moved, 1);
    f.promote();
    f.heal();

    assert_eq!(f.conflicts(), vec![], "nothing undone");
    let mut r = f.conn();
    for (ticket, gen) in [("1", "2"), ("2", "2"), ("3", "1"), ("4", "1")] {
        let line = expect_error(&mut r, &["TICKET.SCAN", "e", ticket, gen], "USED");
        assert!(
            line.contains(&format!("ticket {ticket} was scanned")),
            "{line}"
        );
    }
    expect_error(&mut r, &["TICKET.SCAN", "e", "1", "1"], "STALE");
    assert_eq!(sold(&mut r, "x"), [1]);
    assert_eq!(sold(&mut r, "y"), [2]);
    assert_eq!(sold(&mut r, "w"), [5], "the lost transfer re-applied");
    for gone in ["a", "b", "g"] {
        assert_eq!(order(&mut r, gone), None);
    }
    assert_eq!(
        owners(&f.db),
        owned(&[
            (1, "x", 2),
            (2, "y", 2),
            (3, "c", 1),
            (4, "d", 1),
            (5, "w", 2),
        ])
    );
    assert_eq!(scans(&f.db), [(1, 2), (2, 2), (3, 1), (4, 1)]);
    assert_eq!(
        lost(&f.db, "ticket_owner"),
        1,
        "g -> w's first row, history"
    );
    f.consistent();
}

#[test]
fn lost_transfers_and_scans_are_re_applied_or_undone_never_quarantined() {
    let mut f = Failover::start("heal_after_lost", &["TICKET.INIT", "e", "50", "LIMIT", "4"]);
    let mut p = f.conn();
    for user in ["a", "b", "c"] {
        let _: i64 = acked(&mut p, &["TICKET.CLAIM", "e", user], 1);
    }
    f.cut_off();
    // Lost: a's 1 to x, then 1 admitted at gen 2 (both re-applied); b's
    // 2 to y (the new primary gives 2 to z: undone); 3 admitted (the new
    // primary admits 3 itself: this one undone, the new one stands).
    let _: i64 = acked(&mut p, &["TICKET.TRANSFER", "e", "a", "x"], 0);
    let _: String = acked(&mut p, &["TICKET.SCAN", "e", "1", "2", "GATE", "north"], 0);
    let _: i64 = acked(&mut p, &["TICKET.TRANSFER", "e", "b", "y"], 0);
    let _: String = acked(&mut p, &["TICKET.SCAN", "e", "3", "1"], 0);
    f.promote();
    assert_eq!(
        scans(&f.db),
        [(1, 2), (3, 1)],
        "MySQL applied the lost scans"
    );
    let mut r = f.conn();
    let _: i64 = acked(&mut r, &["TICKET.TRANSFER", "e", "b", "z"], 1);
    let _: String = acked(&mut r, &["TICKET.SCAN", "e", "3", "1", "GATE", "south"], 1);
    f.heal();

    let c = f.conflicts();
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!((c[0].0.as_str(), c[0].1), ("b", 2), "{c:?}");
    assert!(
        c[0].3
            .contains("transfer of ticket(s) 2 from user \"b\" to user \"y\""),
        "{c:?}"
    );
    assert_eq!(c[1].1, 3, "{c:?}");
    assert!(c[1].3.contains("scan of ticket 3 at generation 1"), "{c:?}");
    for row in &c {
        assert_eq!(row.2, "lost_in_failover");
    }
    let quarantined =
        "SELECT COUNT(*) FROM ticket_event WHERE event_id = 'e' AND quarantined_at IS NOT NULL";
    assert_eq!(mysql_int(&f.db, quarantined), 0);

    assert_eq!(sold(&mut r, "x"), [1], "re-applied");
    assert_eq!(sold(&mut r, "z"), [2]);
    assert_eq!(order(&mut r, "y"), None);
    expect_error(&mut r, &["TICKET.SCAN", "e", "1", "2"], "USED");
    let line = expect_error(&mut r, &["TICKET.SCAN", "e", "3", "1"], "USED");
    assert!(
        line.contains("south"),
        "the new primary's scan stands: {line}"
    );
    assert_eq!(
        owners(&f.db),
        owned(&[(1, "x", 2), (2, "z", 2), (3, "c", 1)])
    );
    assert_eq!(scans(&f.db), [(1, 2), (3, 1)]);
    let gate = "SELECT COUNT(*) FROM ticket_scan WHERE event_id = 'e' AND ticket_number = 3 AND lost_in_failover = 0 AND gate = 'south'";
    assert_eq!(mysql_int(&f.db, gate), 1);
    // history: a -> x's first row, the undone b -> y; both lost scans
    assert_eq!(lost(&f.db, "ticket_owner"), 2);
    assert_eq!(lost(&f.db, "ticket_scan"), 2);
    f.consistent();

    // The door goes on: z's ticket admits at generation 2, once.
    let _: String = acked(&mut r, &["TICKET.SCAN", "e", "2", "2"], 1);
    f.synced();
    assert_eq!(scans(&f.db), [(1, 2), (2, 2), (3, 1)]);
}

/// MySQL's resale listings: (ticket, seller, buyer) of every live one.
fn listings(db: &str) -> Vec<(i64, String, Option<String>)> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    c.query("SELECT ticket_number, seller, buyer FROM ticket_listing WHERE event_id = 'e' AND state = 'listed' ORDER BY ticket_number")
        .unwrap()
}

fn listed(rows: &[(i64, &str, Option<&str>)]) -> Vec<(i64, String, Option<String>)> {
    rows.iter()
        .map(|(t, s, b)| (*t, s.to_string(), b.map(str::to_owned)))
        .collect()
}

/// The heal's conflicts are `lost_in_failover` rows naming, in order,
/// each `(user, ticket, what)` (`what`: part of the detail).
fn undone_as(f: &Failover, expected: &[(&str, i64, &str)]) {
    let c = f.conflicts();
    assert_eq!(c.len(), expected.len(), "{c:?}");
    for (row, (user, ticket, what)) in c.iter().zip(expected) {
        let got = (row.0.as_str(), row.1, row.2.as_str());
        assert_eq!(got, (*user, *ticket, "lost_in_failover"), "{c:?}");
        assert!(row.3.contains(what), "{c:?}");
    }
}

/// A sold-out event of 4 with holds: a, b, c, d bought 1, 2, 3, 4, then
/// `sellers` listed theirs (all acknowledged).
fn sold_out_with_listings(name: &str, sellers: [&str; 2]) -> (Failover, redis::Connection) {
    let f = Failover::start(
        name,
        &["TICKET.INIT", "e", "4", "HOLD", "600000", "LIMIT", "2"],
    );
    let mut p = f.conn();
    for user in ["a", "b", "c", "d"] {
        let _: redis::Value = acked(&mut p, &["TICKET.CLAIM", "e", user], 1);
        let _: redis::Value = acked(&mut p, &["TICKET.CONFIRM", "e", user], 1);
    }
    for seller in sellers {
        let n: i64 = acked(&mut p, &["TICKET.RESELL", "e", seller], 1);
        assert_eq!(n, 1);
    }
    (f, p)
}

/// Resale around an unplanned failover: a lost resell is re-applied, one
/// the seller retried on the new primary is undone (the retry stands, no
/// collision), a lost unlist of a ticket the new primary let a buyer hold
/// is undone (listed again, that buyer on it), and a buyer's lost hold of
/// a listed ticket is undone: the ticket back on the list in MySQL too.
#[test]
fn lost_resells_unlists_and_holds_of_listed_tickets_heal() {
    let (mut f, mut p) = sold_out_with_listings("heal_resale", ["c", "d"]);
    f.cut_off();
    // Lost: c takes 3 back; u holds 4 (the one listed left); a and b list
    // theirs.
    let n: i64 = acked(&mut p, &["TICKET.UNLIST", "e", "c"], 0);
    assert_eq!(n, 1);
    let _: redis::Value = acked(&mut p, &["TICKET.CLAIM", "e", "u"], 0);
    assert_eq!(order(&mut p, "u").map(|o| o.0), Some(vec![4]));
    for seller in ["a", "b"] {
        let _: i64 = acked(&mut p, &["TICKET.RESELL", "e", seller], 0);
    }
    f.promote();
    assert_eq!(
        listings(&f.db),
        listed(&[(1, "a", None), (2, "b", None), (4, "d", Some("u"))]),
        "MySQL applied the lost writes"
    );
    // The new primary: v holds 3 (c's, listed there); b lists 2 again.
    let mut r = f.conn();
    let _: redis::Value = acked(&mut r, &["TICKET.CLAIM", "e", "v"], 1);
    assert_eq!(order(&mut r, "v").map(|o| o.0), Some(vec![3]));
    let _: i64 = acked(&mut r, &["TICKET.RESELL", "e", "b"], 1);
    f.heal();

    undone_as(
        &f,
        &[
            ("c", 3, "unlist of ticket(s) 3 by user \"c\""),
            ("u", 4, "hold of ticket(s) 4 by user \"u\""),
            (
                "b",
                2,
                "new primary: resell of ticket(s) 2 by user \"b\" at",
            ),
        ],
    );
    assert_eq!(order(&mut r, "u"), None);
    assert_eq!(
        listings(&f.db),
        listed(&[
            (1, "a", None),
            (2, "b", None),
            (3, "c", Some("v")),
            (4, "d", None)
        ])
    );
    let lost = "SELECT COUNT(*) FROM ticket_listing WHERE event_id = 'e' AND lost_in_failover = 1";
    assert_eq!(mysql_int(&f.db, lost), 2, "a's first listing, b's lost one");
    f.consistent();

    // The resale goes on: w buys a's 1, v confirms 3.
    let _: redis::Value = acked(&mut r, &["TICKET.CLAIM", "e", "w"], 1);
    assert_eq!(order(&mut r, "w").map(|o| o.0), Some(vec![1]));
    for buyer in ["w", "v"] {
        let _: redis::Value = acked(&mut r, &["TICKET.CONFIRM", "e", buyer], 1);
    }
    f.synced();
    assert_eq!(
        owners(&f.db),
        owned(&[(1, "w", 2), (2, "b", 1), (3, "v", 2), (4, "d", 1)])
    );
    f.consistent();
}

/// [`sold_out_with_listings`] with a and b listing, then u holds a's 1
/// and v b's 2 (acknowledged); the replica is cut off, `command` of both
/// buyers is lost, and the replica is promoted.
fn buyers_lose(name: &str, command: &str) -> Failover {
    let (mut f, mut p) = sold_out_with_listings(name, ["a", "b"]);
    for buyer in ["u", "v"] {
        let _: redis::Value = acked(&mut p, &["TICKET.CLAIM", "e", buyer], 1);
    }
    f.cut_off();
    for buyer in ["u", "v"] {
        let _: redis::Value = acked(&mut p, &[command, "e", buyer], 0);
    }
    f.promote();
    f
}

/// A buyer's lost confirm of a listed ticket and the `resold` it logged:
/// re-applied together when the new primary still has the buyer's hold
/// (one `ticket_resold` row owed, the lost one kept as history), undone
/// together when the buyer cancelled there: the ticket the seller's again
/// and listed, its `ticket_resold` row marked lost (no refund owed).
#[test]
fn a_lost_resale_is_re_applied_with_its_confirm_or_undone() {
    let mut f = buyers_lose("heal_resold", "TICKET.CONFIRM");
    let resold = "SELECT COUNT(*) FROM ticket_resold WHERE event_id = 'e'";
    assert_eq!(mysql_int(&f.db, resold), 2, "MySQL applied the lost sales");
    let mut r = f.conn();
    let _: redis::Value = acked(&mut r, &["TICKET.CANCEL", "e", "v"], 1);
    f.heal();

    undone_as(
        &f,
        &[
            ("v", 2, "confirm of ticket(s) 2 by user \"v\""),
            (
                "b",
                2,
                "resale of ticket(s) 2 from user \"b\" to user \"v\"",
            ),
        ],
    );
    assert_eq!(sold(&mut r, "u"), [1], "re-applied");
    assert_eq!(sold(&mut r, "b"), [2]);
    for gone in ["a", "v"] {
        assert_eq!(order(&mut r, gone), None);
    }
    assert_eq!(
        owners(&f.db),
        owned(&[(1, "u", 2), (2, "b", 1), (3, "c", 1), (4, "d", 1)])
    );
    assert_eq!(listings(&f.db), listed(&[(2, "b", None)]));
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&f.db).unwrap()).unwrap();
    let refunds: Vec<(i64, String, String, i64)> = my
        .query("SELECT ticket_number, seller, buyer, lost_in_failover FROM ticket_resold WHERE event_id = 'e' ORDER BY id")
        .unwrap();
    let rows = |v: &[(i64, &str, &str, i64)]| {
        v.iter()
            .map(|(t, s, b, l)| (*t, s.to_string(), b.to_string(), *l))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        refunds,
        rows(&[(1, "a", "u", 1), (2, "b", "v", 1), (1, "a", "u", 0)]),
        "one refund owed: a's, for the re-applied sale"
    );
    f.consistent();
}

/// A buyer's lost cancel of a hold of a listed ticket: re-applied (MySQL
/// reverts it and writes it again, the listing free in both), or undone
/// when the buyer confirmed on the new primary: the hold back on the
/// listing in MySQL, and the new primary's confirm resells it.
#[test]
fn a_lost_cancel_of_a_listed_ticket_holds_it_again_when_undone() {
    let mut f = buyers_lose("heal_rehold", "TICKET.CANCEL");
    assert_eq!(listings(&f.db), listed(&[(1, "a", None), (2, "b", None)]));
    let mut r = f.conn();
    let _: redis::Value = acked(&mut r, &["TICKET.CONFIRM", "e", "v"], 1);
    f.heal();

    undone_as(&f, &[("v", 2, "cancel of ticket(s) 2 by user \"v\"")]);
    assert_eq!(order(&mut r, "u"), None, "re-applied");
    assert_eq!(sold(&mut r, "v"), [2]);
    assert_eq!(listings(&f.db), listed(&[(1, "a", None)]));
    assert_eq!(
        owners(&f.db),
        owned(&[(1, "a", 1), (2, "v", 2), (3, "c", 1), (4, "d", 1)])
    );
    f.consistent();
}

/// A buyer's lost final claim of a listed ticket (no holds: the claim
/// logs `resold` at once): never re-applied (the ticket is not free on
/// the new primary), so both are undone: the ticket the seller's and
/// listed in MySQL too, the buyer's `ticket_resold` row marked lost.
#[test]
fn a_lost_final_claim_of_a_listed_ticket_is_undone_with_its_resale() {
    let mut f = Failover::start("heal_claim_listed", &["TICKET.INIT", "e", "2"]);
    let mut p = f.conn();
    for user in ["a", "b"] {
        let _: i64 = acked(&mut p, &["TICKET.CLAIM", "e", user], 1);
    }
    let _: i64 = acked(&mut p, &["TICKET.RESELL", "e", "a"], 1);
    f.cut_off();
    let _: i64 = acked(&mut p, &["TICKET.CLAIM", "e", "u"], 0);
    assert_eq!(order(&mut p, "u"), Some((vec![1], "sold".to_owned())));
    f.promote();
    f.heal();

    undone_as(
        &f,
        &[
            ("u", 1, "claim of ticket(s) 1 by user \"u\""),
            (
                "a",
                1,
                "resale of ticket(s) 1 from user \"a\" to user \"u\"",
            ),
        ],
    );
    let mut r = f.conn();
    assert_eq!(order(&mut r, "u"), None);
    assert_eq!(sold(&mut r, "a"), [1]);
    assert_eq!(listings(&f.db), listed(&[(1, "a", None)]));
    assert_eq!(owners(&f.db), owned(&[(1, "a", 1), (2, "b", 1)]));
    let owed = "SELECT COUNT(*) FROM ticket_resold WHERE event_id = 'e' AND lost_in_failover = 0";
    assert_eq!(mysql_int(&f.db, owed), 0, "no refund owed");
    f.consistent();
}
