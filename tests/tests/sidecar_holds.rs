//! End-to-end: the sidecar applies holds, offers, confirms, expiries and
//! cancels of one or several tickets exactly once, on the fast path and on
//! the record-by-record path alike, turns anomalies into `ticket_conflict`
//! rows without stalling, migrates a V1 database in place, and follows the
//! module's own checkouts (a burst with expiring holds; reconcile's sold and
//! held comparison).
//!
//! Where a test needs exact control over the log (anomalies the module never
//! writes, offers, a given interleaving), it appends records with `XADD` by
//! [`support::xadd`], which encodes them with the protocol crate's
//! `Record::fields` — the format the module writes.

#[path = "support/sidecar.rs"]
mod support;

use std::time::Duration;

use mysql::prelude::Queryable;
use protocol::record::Op;
use support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

fn init(r: &mut redis::Connection, event: &str, total: i64) {
    let () = redis::cmd("TICKET.INIT")
        .arg(event)
        .arg(total)
        .query(r)
        .expect("TICKET.INIT");
}

fn xlen(r: &mut redis::Connection, event: &str) -> i64 {
    redis::cmd("XLEN")
        .arg(format!("ticket:{{{event}}}:log"))
        .query(r)
        .expect("XLEN")
}

const UNTIL: i64 = 1_900_000_000_000;

/// A valid checkout story: holds of one and two tickets, a confirm, an
/// expiry whose ticket is held again and canceled, a claim of two, an
/// offer, and a user ordering again after its hold expired.
fn story(r: &mut redis::Connection, event: &str) {
    let hold = |user, t: &[i64]| Op::Hold {
        from: None,
        pick: None,
        user,
        tickets: tickets(t),
        until: UNTIL,
    };
    for op in [
        hold("u1", &[1, 2]),
        hold("u2", &[3]),
        Op::Confirm {
            user: "u1",
            tickets: tickets(&[1, 2]),
        },
        Op::Expire {
            from: None,
            user: "u2",
            tickets: tickets(&[3]),
        },
        hold("u3", &[3]),
        Op::Cancel {
            from: None,
            user: "u3",
            tickets: tickets(&[3]),
        },
        Op::Claim {
            from: None,
            pick: None,
            user: "u4",
            tickets: tickets(&[4, 5]),
        },
        Op::Offer {
            pick: None,
            user: "u5",
            tickets: tickets(&[6]),
            until: UNTIL,
        },
        hold("u2", &[7]),
    ] {
        xadd(r, event, op);
    }
}

fn row(u: &str, t: i64, s: &str) -> (String, i64, String) {
    (u.to_string(), t, s.to_string())
}

/// Orders of `event` without ids and times that differ between events.
fn orders(db: &str, event: &str) -> Vec<(String, String, i64, bool, bool, bool, bool)> {
    let mut my = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    my.exec(
        "SELECT user_id, CAST(status AS CHAR), tickets, held_until IS NOT NULL, confirmed_at IS NOT NULL, \
         canceled_at IS NOT NULL, expired_at IS NOT NULL FROM ticket_order WHERE event_id = ? \
         ORDER BY user_id, created_at, CAST(status AS CHAR)",
        (event,),
    )
    .unwrap()
}

#[test]
fn holds_confirms_expiries_and_cancels_apply_the_same_on_both_paths() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_holds");
    migrate(&db);
    init(&mut r, "h", 10);
    init(&mut r, "hs", 10);
    story(&mut r, "h");
    // A malformed entry first sends all of "hs"'s batch down the slow path.
    let _: String = redis::cmd("XADD")
        .arg("ticket:{hs}:log")
        .arg("*")
        .arg("op")
        .arg("hold")
        .arg("event")
        .arg("hs")
        .arg("at")
        .arg(1)
        .query(&mut r)
        .unwrap();
    story(&mut r, "hs");
    let sc = Sidecar::start(&redis.url(), &db, &["--metrics-addr", "127.0.0.1:0"]);
    let port = sc.metrics_port();
    wait_until(Duration::from_secs(30), "both logs drained", || {
        xlen(&mut r, "h") == 0 && xlen(&mut r, "hs") == 0
    });
    let want = vec![
        row("u1", 1, "active"),
        row("u1", 2, "active"),
        row("u2", 3, "expired"),
        row("u2", 7, "held"),
        row("u3", 3, "canceled"),
        row("u4", 4, "active"),
        row("u4", 5, "active"),
        row("u5", 6, "held"),
    ];
    assert_eq!(rows_of(&db, "h").unwrap(), want, "{}", sc.log());
    assert_eq!(rows_of(&db, "hs").unwrap(), want);
    assert_eq!(orders(&db, "h"), orders(&db, "hs"));
    assert_eq!(orders(&db, "h").len(), 6);
    for e in ["h", "hs"] {
        // 10 - u1's 2 - u4's 2 - u5's 1 - u2's 1
        assert_eq!(mysql_view(&db, e).unwrap().remaining, Some(4));
    }
    assert!(mysql_view(&db, "h").unwrap().conflicts.is_empty());
    let reasons: Vec<String> = mysql_view(&db, "hs")
        .unwrap()
        .conflicts
        .into_iter()
        .map(|c| c.1)
        .collect();
    assert_eq!(reasons, ["malformed"]);
    assert!(
        metric(port, "ticketgate_batches_total{path=\"fast\"}") >= 1,
        "{}",
        sc.log()
    );
    assert!(metric(port, "ticketgate_batches_total{path=\"slow\"}") >= 1);
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let held: Vec<(String, i64)> = my
        .query("SELECT user_id, ticket_number FROM ticket_participation WHERE event_id = 'h' AND held_until = '2030-03-17 17:46:40.000' AND status = 'held' ORDER BY user_id")
        .unwrap();
    assert_eq!(held, [("u2".to_string(), 7), ("u5".to_string(), 6)]);
    anomalies(&mut r, &db, &sc);
}

/// Continues on "h": every kind of anomaly becomes a conflict, the valid
/// entries between them apply.
fn anomalies(r: &mut redis::Connection, db: &str, sc: &Sidecar) {
    let mut my = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    my.query_drop("UPDATE ticket_stock SET remaining_stock = 0 WHERE event_id = 'h'")
        .unwrap();
    for op in [
        Op::Confirm {
            user: "u2",
            tickets: tickets(&[3]),
        }, // u2 holds 7, not 3
        Op::Expire {
            from: None,
            user: "u1",
            tickets: tickets(&[1, 2]),
        }, // u1's order is sold
        Op::Cancel {
            from: None,
            user: "nobody",
            tickets: tickets(&[9]),
        },
        Op::Hold {
            from: None,
            pick: None,
            user: "u1",
            tickets: tickets(&[8]),
            until: UNTIL,
        }, // u1 has a live order
        Op::Hold {
            from: None,
            pick: None,
            user: "u6",
            tickets: tickets(&[6]),
            until: UNTIL,
        }, // u5 holds 6
        Op::Claim {
            from: None,
            pick: None,
            user: "u7",
            tickets: tickets(&[9]),
        }, // stock is 0
        Op::Confirm {
            user: "u5",
            tickets: tickets(&[6]),
        },
        Op::Cancel {
            from: None,
            user: "u4",
            tickets: tickets(&[4, 5]),
        },
    ] {
        xadd(r, "h", op);
    }
    wait_until(Duration::from_secs(30), "log drained", || xlen(r, "h") == 0);
    let view = mysql_view(db, "h").unwrap();
    let reasons: Vec<&str> = view.conflicts.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "confirm_mismatch",
            "expire_mismatch",
            "cancel_mismatch",
            "duplicate_order",
            "collision",
            "oversell"
        ],
        "{}",
        sc.log()
    );
    assert_eq!(view.remaining, Some(2), "the cancel gave 2 back");
    let rows = rows_of(db, "h").unwrap();
    assert!(rows.contains(&row("u5", 6, "active")));
    assert!(rows.contains(&row("u4", 4, "canceled")) && rows.contains(&row("u4", 5, "canceled")));
    assert!(!rows.iter().any(|r| r.0 == "u6" || r.0 == "u7"));
}

mod v1 {
    refinery::embed_migrations!("../migrations");
}

/// Applies `entries` (claims and cancels of one ticket, decoded from the
/// log) with the statements of the V1 sidecar's record-by-record path, and
/// commits the offset: a V1 database exactly as release 0.1 left it.
fn drain_like_v1(my: &mut mysql::Conn, event: &str, entries: &[(String, Vec<(String, String)>)]) {
    let mut tx = my.start_transaction(mysql::TxOpts::default()).unwrap();
    for (id, fields) in entries {
        let f = |k: &str| {
            fields
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .unwrap()
        };
        // A compact record opens with `<op> <user>`.
        let (op, user) = match fields.iter().find(|(n, _)| n == "op") {
            Some((_, op)) => (
                op.clone(),
                fields
                    .iter()
                    .find(|(n, _)| n == "user")
                    .map(|(_, v)| v.clone()),
            ),
            None => (fields[0].0.clone(), Some(fields[0].1.clone())),
        };
        match (op.as_str(), user) {
            ("init", _) => tx.exec_drop(
                "INSERT INTO ticket_event (event_id, total, status, created_at, updated_at) VALUES (?, ?, 'open', NOW(3), NOW(3))",
                (event, f("total")),
            ).and_then(|()| tx.exec_drop("INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?)", (event, f("total")))),
            ("claim", Some(u)) => {
                let old: Option<String> = tx.exec_first("SELECT status FROM ticket_participation WHERE event_id = ? AND user_id = ?", (event, &u)).unwrap();
                let sql = match old {
                    Some(_) => "UPDATE ticket_participation SET status = 'active', ticket_number = ?, claimed_at = NOW(3), canceled_at = NULL, stream_id = ? WHERE event_id = ? AND user_id = ?",
                    None => "INSERT INTO ticket_participation (ticket_number, stream_id, event_id, user_id, status, claimed_at) VALUES (?, ?, ?, ?, 'active', NOW(3))",
                };
                tx.exec_drop(sql, (f("ticket"), id, event, &u))
                    .and_then(|()| tx.exec_drop("UPDATE ticket_stock SET remaining_stock = remaining_stock - 1 WHERE event_id = ? AND remaining_stock >= 1", (event,)))
            }
            ("cancel", Some(u)) => tx.exec_drop(
                "UPDATE ticket_participation SET status = 'canceled', canceled_at = NOW(3), stream_id = ? WHERE event_id = ? AND user_id = ? AND status = 'active' AND ticket_number = ?",
                (id, event, &u, f("ticket")),
            ).and_then(|()| tx.exec_drop("UPDATE ticket_stock SET remaining_stock = remaining_stock + 1 WHERE event_id = ?", (event,))),
            other => panic!("not a V1 entry: {other:?}"),
        }
        .unwrap();
    }
    let last = &entries.last().unwrap().0;
    tx.exec_drop(
        "INSERT INTO ticket_sync_offset (event_id, last_stream_id, updated_at) VALUES (?, ?, NOW(3))",
        (event, last),
    )
    .unwrap();
    tx.commit().unwrap();
}

#[test]
fn a_v1_database_with_claims_and_cancels_migrates_in_place_and_keeps_draining() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_v1");
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let report = v1::migrations::runner()
        .set_target(refinery::Target::Version(1))
        .run(&mut my)
        .unwrap();
    assert_eq!(report.applied_migrations().len(), 1);
    init(&mut r, "v", 20);
    for u in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        let _: i64 = redis::cmd("TICKET.CLAIM")
            .arg("v")
            .arg(u)
            .query(&mut r)
            .unwrap();
    }
    for u in ["c", "f"] {
        let _: Option<i64> = redis::cmd("TICKET.CANCEL")
            .arg("v")
            .arg(u)
            .query(&mut r)
            .unwrap();
    }
    let _: i64 = redis::cmd("TICKET.CLAIM")
        .arg("v")
        .arg("c")
        .query(&mut r)
        .unwrap();
    let log: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE")
        .arg("ticket:{v}:log")
        .arg("-")
        .arg("+")
        .query(&mut r)
        .unwrap();
    drain_like_v1(&mut my, "v", &log);
    let () = redis::cmd("XTRIM")
        .arg("ticket:{v}:log")
        .arg("MAXLEN")
        .arg(0)
        .query(&mut r)
        .unwrap();

    // V2 in place: every V1 row becomes a one-ticket order, stock unchanged.
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["migrate"]);
    assert!(st.success() && out.contains("V2__holds"), "{out}");
    let orders: Vec<(String, String, String, i64)> = my
        .query("SELECT o.user_id, CAST(o.status AS CHAR), CAST(p.status AS CHAR), p.live_ticket IS NOT NULL \
                FROM ticket_order o JOIN ticket_participation p ON p.event_id = o.event_id AND p.order_id = o.order_id \
                WHERE o.event_id = 'v' AND o.tickets = 1 ORDER BY o.user_id")
        .unwrap();
    let want: Vec<(String, String, String, i64)> = ["a", "b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .map(|u| {
            let s = if *u == "f" { "canceled" } else { "active" };
            (
                u.to_string(),
                s.to_string(),
                s.to_string(),
                (*u != "f") as i64,
            )
        })
        .collect();
    assert_eq!(orders, want);
    assert_eq!(mysql_view(&db, "v").unwrap().remaining, Some(13));

    // Draining goes on: a cancel of a migrated order, a re-claim after a V1
    // cancel, new users.
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let _: Option<i64> = redis::cmd("TICKET.CANCEL")
        .arg("v")
        .arg("a")
        .query(&mut r)
        .unwrap();
    for u in ["f", "i", "j"] {
        let _: i64 = redis::cmd("TICKET.CLAIM")
            .arg("v")
            .arg(u)
            .query(&mut r)
            .unwrap();
    }
    wait_synced(&mut r, &db, "v", Duration::from_secs(30), &|| sc.log());
    let view = mysql_view(&db, "v").unwrap();
    assert!(view.conflicts.is_empty(), "{:?}", view.conflicts);
    assert_eq!(view.active.len(), 9);
    let f_rows = rows_of(&db, "v")
        .unwrap()
        .into_iter()
        .filter(|r| r.0 == "f")
        .count();
    assert_eq!(f_rows, 2, "f's V1 history row stays beside its new order");
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "v"]);
    assert!(st.success(), "{out}");
}

#[test]
fn reconcile_compares_sold_and_held_tickets_with_deadlines() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_rec");
    migrate(&db);
    // The module's own checkout: a sold ticket and a held order of two.
    let () = redis::cmd("TICKET.INIT")
        .arg("rc")
        .arg(10)
        .arg("LIMIT")
        .arg(2)
        .query(&mut r)
        .unwrap();
    let _: i64 = redis::cmd("TICKET.CLAIM")
        .arg("rc")
        .arg("a")
        .query(&mut r)
        .unwrap();
    let held: Vec<i64> = redis::cmd("TICKET.CLAIM")
        .arg("rc")
        .arg("b")
        .arg("COUNT")
        .arg(2)
        .arg("HOLD")
        .arg(3_600_000)
        .query(&mut r)
        .unwrap();
    assert_eq!(held, [2, 3]);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let (st, out) = sidecar_cmd(
        &redis.url(),
        &db,
        &["reconcile", "--wait", "30", "--event", "rc"],
    );
    assert!(st.success(), "{out}\n{}", sc.log());
    assert!(
        out.contains("rc: ok (2 holders: 1 tickets sold, 2 held; remaining 7)"),
        "{out}"
    );
    let rows = rows_of(&db, "rc").unwrap();
    assert_eq!(
        rows,
        [
            row("a", 1, "active"),
            row("b", 2, "held"),
            row("b", 3, "held")
        ]
    );
    // Tamper with MySQL; reconcile names the difference and exits 1.
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let mut drift = |set: &str, want: &str| {
        my.query_drop(format!(
            "UPDATE ticket_participation SET {set} WHERE event_id = 'rc' AND user_id = 'b'"
        ))
        .unwrap();
        let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "rc"]);
        assert_eq!(st.code(), Some(1), "{out}");
        assert!(out.contains(want), "{out}");
    };
    drift(
        "held_until = held_until + INTERVAL 1 SECOND",
        "user \"b\" has held tickets 2,3 until ",
    );
    drift(
        "status = 'active', held_until = NULL",
        "in Redis but sold tickets 2,3 in MySQL",
    );
    assert!(
        sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "rc"])
            .1
            .contains("held differs: Redis 2 MySQL 0"),
        "STATUS's held count is compared too"
    );
}

fn sweep_interval(r: &mut redis::Connection, ms: i64) {
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("ticket.sweep-interval")
        .arg(ms)
        .query(r)
        .expect("CONFIG SET ticket.sweep-interval");
}

/// A hold past its deadline that the sweep has not expired yet: STATUS
/// counts it free at once, MySQL holds it until the expiry is logged and
/// applied. A single comparison at that moment sees the difference;
/// `--wait` compares again until the expiry lands and finds no drift.
#[test]
fn reconcile_waits_out_a_due_hold_the_sweep_has_not_expired() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_rec_due");
    migrate(&db);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    // No sweep for a minute: the hold stays in the keys past its deadline.
    sweep_interval(&mut r, 60_000);
    init(&mut r, "due", 10);
    let held: i64 = redis::cmd("TICKET.CLAIM")
        .arg("due")
        .arg("u")
        .arg("HOLD")
        .arg(1000)
        .query(&mut r)
        .unwrap();
    assert_eq!(held, 1);
    wait_until(Duration::from_secs(30), "the hold in MySQL", || {
        rows_of(&db, "due").unwrap() == [row("u", 1, "held")]
    });
    std::thread::sleep(Duration::from_millis(1500));

    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "due"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("held differs: Redis 0 MySQL 1"), "{out}");

    let (url, mysql_url) = (redis.url(), db.clone());
    let waiting = std::thread::spawn(move || {
        sidecar_cmd(
            &url,
            &mysql_url,
            &["reconcile", "--wait", "60", "--event", "due"],
        )
    });
    // Let it compare while the hold is still due, then let the sweep run.
    std::thread::sleep(Duration::from_secs(2));
    sweep_interval(&mut r, 100);
    let (st, out) = waiting.join().unwrap();
    assert!(st.success(), "{out}\n{}", sc.log());
    assert!(out.contains("due: ok (0 holders"), "{out}");
    assert_eq!(rows_of(&db, "due").unwrap(), [row("u", 1, "expired")]);
}

/// A checkout backlog (holds, confirms, expiries, cancels, freed tickets
/// held again) drains on the fast path alone, in batches of every size.
#[test]
fn a_checkout_backlog_drains_on_the_fast_path() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_ckfast");
    migrate(&db);
    init(&mut r, "ck", 5000);
    let mut ck = Checkout::new("ck", 5000);
    for round in 0..60 {
        ck.round(&mut r, round, 40);
    }
    let sc = Sidecar::start(
        &redis.url(),
        &db,
        &["--metrics-addr", "127.0.0.1:0", "--batch-size", "37"],
    );
    let port = sc.metrics_port();
    wait_checkout(&mut r, &db, &ck, Duration::from_secs(60), &|| sc.log());
    assert!(metric(port, "ticketgate_batches_total{path=\"fast\"}") > 10);
    assert_eq!(
        metric(port, "ticketgate_batches_total{path=\"slow\"}"),
        0,
        "{}",
        sc.log()
    );
    for op in ["hold", "confirm", "expire", "cancel"] {
        let series = format!("ticketgate_applied_records_total{{op=\"{op}\"}}");
        assert_eq!(metric(port, &series), ck.written[op], "{op}");
    }
}

/// Counts of `event`'s rows by status.
fn by_status(db: &str, event: &str) -> Vec<(String, i64)> {
    let mut my = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    my.exec(
        "SELECT CAST(status AS CHAR), COUNT(*) FROM ticket_participation WHERE event_id = ? GROUP BY 1 ORDER BY 1",
        (event,),
    )
    .unwrap()
}

/// The module's own checkout burst (issue 9): 1,000 users on 100 tickets,
/// holds of 2 s, 30 of the 100 winners never confirm; their holds expire and
/// the tickets are sold again. MySQL ends equal to Redis, reconcile is clean.
#[test]
fn a_checkout_burst_through_the_module_ends_with_exactly_100_sold() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_burst");
    migrate(&db);
    let () = redis::cmd("TICKET.INIT")
        .arg("b")
        .arg(100)
        .arg("HOLD")
        .arg(2000)
        .query(&mut r)
        .unwrap();
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let claim_all = |r: &mut redis::Connection, users: &[String]| -> Vec<String> {
        let won = |u: &&String| {
            let reply: redis::RedisResult<i64> =
                redis::cmd("TICKET.CLAIM").arg("b").arg(*u).query(r);
            reply.is_ok()
        };
        users.iter().filter(won).cloned().collect()
    };
    let confirm_all = |r: &mut redis::Connection, users: &[String]| {
        let mut p = redis::pipe();
        for u in users {
            p.cmd("TICKET.CONFIRM").arg("b").arg(u).ignore();
        }
        let () = p.query(r).unwrap();
    };
    let users: Vec<String> = (0..1000).map(|i| format!("user{i}")).collect();
    let winners = claim_all(&mut r, &users);
    assert_eq!(winners.len(), 100);
    confirm_all(&mut r, &winners[30..]);
    // The 30 abandoned holds expire by themselves (the module's sweep)...
    wait_until(Duration::from_secs(20), "30 holds expired in MySQL", || {
        by_status(&db, "b").contains(&("expired".to_string(), 30))
    });
    // ...and their tickets go to the next buyers, who pay.
    let again = claim_all(&mut r, &users[100..]);
    assert_eq!(again.len(), 30);
    confirm_all(&mut r, &again);
    wait_synced(&mut r, &db, "b", Duration::from_secs(30), &|| sc.log());
    let want = vec![("active".to_string(), 100), ("expired".to_string(), 30)];
    assert_eq!(by_status(&db, "b"), want);
    let view = mysql_view(&db, "b").unwrap();
    assert_eq!((view.remaining, view.conflicts.len()), (Some(0), 0));
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "b"]);
    assert!(
        st.success() && out.contains("100 tickets sold, 0 held"),
        "{out}"
    );
}
