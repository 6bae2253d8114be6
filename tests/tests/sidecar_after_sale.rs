//! After the sale, end to end (issue 43): 20 scanners at 4 gates present
//! each of 10,000 sold tickets 1-3 times (every 10th transferred first,
//! also shown at its old generation) while the sidecar drains: each is
//! admitted exactly once, every repeat is `USED`, every old generation
//! `STALE`, and MySQL then equals Redis: the owners (live rows and their
//! generations, one `ticket_owner` row per transfer) and the scans.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use msupport::{key, ok, outcome, sell};
use mysql::prelude::Queryable;
use support::*;
use ticketgate_tests::{fresh_database, RedisServer};

#[test]
fn twenty_scanners_admit_each_ticket_once() {
    const SOLD: usize = 10_000;
    let server = RedisServer::start();
    let db = fresh_database("sc_after_sale");
    migrate(&db);
    let c = &mut server.conn();
    let sc = Sidecar::start(&server.url(), &db, &["--verify-interval", "3600"]);
    ok(c, &["TICKET.INIT", "gig", &SOLD.to_string()]);
    sell(c, "gig", SOLD);
    // Every 10th ticket changes hands: its generation 1 is stale.
    let mut pipe = redis::pipe();
    for i in (10..=SOLD).step_by(10) {
        pipe.cmd("TICKET.TRANSFER")
            .arg("gig")
            .arg(format!("u{i}"))
            .arg(format!("v{i}"));
    }
    let moved: Vec<i64> = pipe.query(c).expect("transfers");
    assert!(moved.iter().all(|n| *n == 1));

    // Each ticket presented 1-3 times at its generation, a transferred one
    // once more at generation 1; shuffled by a fixed permutation.
    let mut shown: Vec<(usize, i64)> = Vec::new();
    for t in 1..=SOLD {
        let current = if t % 10 == 0 { 2 } else { 1 };
        for _ in 0..1 + t % 3 {
            shown.push((t, current));
        }
        if current == 2 {
            shown.push((t, 1));
        }
    }
    let n = shown.len();
    let order: Vec<(usize, i64)> = (0..n).map(|i| shown[(i * 7919) % n]).collect();
    assert!(!n.is_multiple_of(7919), "a permutation");
    let order = Arc::new(order);
    let port = server.port();
    let scanners: Vec<_> = (0..20)
        .map(|s| {
            let order = Arc::clone(&order);
            thread::spawn(move || {
                let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
                let mut c = client.get_connection().unwrap();
                let gate = format!("gate{}", s % 4);
                let mut seen = Vec::new();
                for (t, gen) in order.iter().skip(s).step_by(20) {
                    let (t, gen) = (t.to_string(), gen.to_string());
                    let got = outcome(&mut c, &["TICKET.SCAN", "gig", &t, &gen, "GATE", &gate]);
                    seen.push((
                        t.parse::<usize>().unwrap(),
                        gen.parse::<i64>().unwrap(),
                        got,
                    ));
                }
                seen
            })
        })
        .collect();
    let mut admitted: BTreeMap<usize, usize> = BTreeMap::new();
    let mut tally: BTreeMap<String, usize> = BTreeMap::new();
    for scanner in scanners {
        for (t, gen, got) in scanner.join().expect("a scanner") {
            let current = if t % 10 == 0 { 2 } else { 1 };
            match got.as_str() {
                "OK" => *admitted.entry(t).or_default() += 1,
                "STALE" => assert_ne!(gen, current, "ticket {t} at its generation was STALE"),
                "USED" => assert_eq!(gen, current, "ticket {t} at an old generation was USED"),
                other => panic!("ticket {t} gen {gen}: {other}"),
            }
            *tally.entry(got).or_default() += 1;
        }
    }
    assert_eq!(admitted.len(), SOLD, "every ticket admitted");
    assert!(
        admitted.values().all(|n| *n == 1),
        "a ticket admitted twice"
    );
    assert_eq!(tally.get("STALE").copied(), Some(SOLD / 10));
    assert_eq!(
        tally.get("USED").copied().unwrap_or(0),
        n - SOLD - SOLD / 10,
        "every repeat USED"
    );
    let scans: i64 = redis::cmd("HLEN")
        .arg(key("gig", "scans"))
        .query(c)
        .unwrap();
    assert_eq!(scans, SOLD as i64);

    // MySQL equals Redis once drained: owners (the holders: every 10th
    // ticket v<i>'s at generation 2, with a ticket_owner row), scans.
    wait_synced(c, &db, "gig", Duration::from_secs(180), &|| sc.log());
    let my = &mut mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let gens: Vec<(i64, i64)> = my
        .exec(
            "SELECT gen, COUNT(*) FROM ticket_participation WHERE event_id = 'gig' AND status = 'active' GROUP BY gen ORDER BY gen",
            (),
        )
        .unwrap();
    assert_eq!(
        gens,
        [(1, (SOLD - SOLD / 10) as i64), (2, (SOLD / 10) as i64)]
    );
    let owners: Vec<(i64, String, i64, String)> = my
        .exec(
            "SELECT ticket_number, user_id, gen, from_user FROM ticket_owner WHERE event_id = 'gig' ORDER BY ticket_number",
            (),
        )
        .unwrap();
    assert_eq!(owners.len(), SOLD / 10);
    for (t, user, gen, from) in owners {
        assert_eq!((user, gen, from), (format!("v{t}"), 2, format!("u{t}")));
    }
    let mine: Vec<(i64, i64)> = my
        .exec(
            "SELECT COUNT(*), COUNT(DISTINCT participation_id) FROM ticket_scan WHERE event_id = 'gig'",
            (),
        )
        .unwrap();
    assert_eq!(mine, [(SOLD as i64, SOLD as i64)]);
    let stale: Option<i64> = my
        .exec_first(
            "SELECT COUNT(*) FROM ticket_scan s JOIN ticket_participation p ON p.id = s.participation_id WHERE s.event_id = 'gig' AND s.gen <> p.gen",
            (),
        )
        .unwrap();
    assert_eq!(stale, Some(0), "a scan row at an old generation");
    let conflicts: Option<i64> = my
        .exec_first("SELECT COUNT(*) FROM ticket_conflict", ())
        .unwrap();
    assert_eq!(conflicts, Some(0), "{}", tail(&sc.log(), 40));
}

/// `reconcile` compares each sold ticket's generation and scan: clean
/// after transfers and scans, then a drift on either side is named per
/// ticket (exit 1).
#[test]
fn reconcile_names_each_ticket_whose_generation_or_scan_drifted() {
    let server = RedisServer::start();
    let db = fresh_database("sc_after_drift");
    migrate(&db);
    let c = &mut server.conn();
    let sc = Sidecar::start(&server.url(), &db, &["--verify-interval", "3600"]);
    ok(c, &["TICKET.INIT", "gig", "10"]);
    sell(c, "gig", 4);
    let moved: i64 = redis::cmd("TICKET.TRANSFER")
        .arg(&["gig", "u1", "v1"])
        .query(c)
        .unwrap();
    assert_eq!(moved, 1);
    for (ticket, gen) in [("1", "2"), ("2", "1")] {
        ok(c, &["TICKET.SCAN", "gig", ticket, gen, "GATE", "north"]);
    }
    wait_synced(c, &db, "gig", Duration::from_secs(60), &|| sc.log());
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile"]);
    assert!(st.success(), "{out}");

    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    my.query_drop(
        "UPDATE ticket_participation SET gen = 3 WHERE event_id = 'gig' AND live_ticket = 1",
    )
    .unwrap();
    my.query_drop(
        "UPDATE ticket_scan SET lost_in_failover = 1 WHERE event_id = 'gig' AND ticket_number = 2",
    )
    .unwrap();
    let _: i64 = redis::cmd("HSET")
        .arg(key("gig", "scans"))
        .arg(3)
        .arg("5 1 -")
        .query(c)
        .unwrap();
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile"]);
    assert_eq!(st.code(), Some(1), "{out}");
    for line in [
        "gig: ticket 1 is generation 2 in Redis but 3 in MySQL",
        "gig: ticket 1 is scanned at generation 2 in Redis but not scanned in MySQL",
        "gig: ticket 2 is scanned at generation 1 in Redis but not scanned in MySQL",
        "gig: ticket 3 is scanned at generation 1 in Redis but not scanned in MySQL",
    ] {
        assert!(out.contains(line), "{line}\n{out}");
    }
    assert!(out.contains("DRIFT: 4 difference(s)"), "{out}");
}
