//! End-to-end: the sidecar drains claims, repeat claims, cancels and
//! re-claims into MySQL; malformed entries and an oversell land in
//! `ticket_conflict` without stalling the stream; `reconcile` detects drift;
//! SIGTERM stops it cleanly; `/metrics` and `/healthz` answer.

#[path = "support/sidecar.rs"]
mod support;

use std::collections::HashMap;
use std::time::Duration;

use mysql::prelude::Queryable;
use protocol::record::Op;
use support::*;
use ticketgate_tests::{free_port, fresh_database, wait_until, RedisServer};

fn claim(c: &mut redis::Connection, event: &str, user: &str) -> redis::RedisResult<i64> {
    redis::cmd("TICKET.CLAIM").arg(event).arg(user).query(c)
}

fn cancel(c: &mut redis::Connection, event: &str, user: &str) -> Option<i64> {
    redis::cmd("TICKET.CANCEL")
        .arg(event)
        .arg(user)
        .query(c)
        .expect("TICKET.CANCEL")
}

#[test]
fn drains_claims_repeats_cancels_and_reclaims() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_drain");
    migrate(&db);
    // idempotent
    migrate(&db);

    // An event created while no sidecar runs: found by the startup SCAN.
    let _: () = redis::cmd("TICKET.INIT")
        .arg("early")
        .arg(20)
        .query(&mut r)
        .unwrap();
    for i in 0..5 {
        claim(&mut r, "early", &format!("e{i}")).unwrap();
    }

    // No periodic rescan during the test: an event created from now on can
    // only be found through the ticket:events notification.
    let sc = Sidecar::start(
        &redis.url(),
        &db,
        &["--metrics-addr", "127.0.0.1:0", "--rescan-interval", "3600"],
    );
    let mport = sc.metrics_port();
    wait_synced(&mut r, &db, "early", Duration::from_secs(30), &|| sc.log());

    // An event created while it runs: found via the ticket:events channel.
    let _: () = redis::cmd("TICKET.INIT")
        .arg("ev")
        .arg(50)
        .query(&mut r)
        .unwrap();
    let mut held: HashMap<String, i64> = HashMap::new();
    for i in 0..40 {
        let u = format!("u{i}");
        held.insert(u.clone(), claim(&mut r, "ev", &u).unwrap());
    }
    // repeat claims: same ticket, no new log entries
    for i in 0..40 {
        let u = format!("u{i}");
        assert_eq!(claim(&mut r, "ev", &u).unwrap(), held[&u]);
    }
    for i in 0..10 {
        assert_eq!(
            cancel(&mut r, "ev", &format!("u{i}")),
            Some(held[&format!("u{i}")])
        );
    }
    // re-claims after cancel, and new users until sold out
    for i in 0..5 {
        claim(&mut r, "ev", &format!("u{i}")).unwrap();
    }
    let mut sold_out = 0;
    for i in 40..70 {
        match claim(&mut r, "ev", &format!("u{i}")) {
            Ok(_) => {}
            Err(e) => {
                assert!(e.to_string().contains("SOLDOUT"), "{e}");
                sold_out += 1;
            }
        }
    }
    assert!(sold_out > 0);
    wait_synced(&mut r, &db, "ev", Duration::from_secs(30), &|| sc.log());
    let view = mysql_view(&db, "ev").unwrap();
    assert!(view.conflicts.is_empty(), "{:?}", view.conflicts);
    assert_eq!(view.active.len(), 50);
    assert_eq!(view.remaining, Some(0));
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    // History stays: every cancel keeps its row, a re-claim adds a new one.
    let canceled: Vec<String> = my
        .query("SELECT user_id FROM ticket_participation WHERE event_id = 'ev' AND status = 'canceled' ORDER BY user_id")
        .unwrap();
    let want: Vec<String> = (0..10).map(|i| format!("u{i}")).collect();
    assert_eq!(canceled, want);
    let orders: Vec<(String, String)> = my
        .query("SELECT user_id, CAST(status AS CHAR) FROM ticket_order WHERE event_id = 'ev' AND user_id IN ('u0', 'u9') ORDER BY user_id, CAST(status AS CHAR) DESC")
        .unwrap();
    let pair = |u: &str, s: &str| (u.to_string(), s.to_string());
    assert_eq!(
        orders,
        [
            pair("u0", "canceled"),
            pair("u0", "active"),
            pair("u9", "canceled")
        ]
    );
    let offset: String = my
        .exec_first(
            "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = 'ev'",
            (),
        )
        .unwrap()
        .unwrap();
    assert!(offset.contains('-'));

    // metrics and health
    let metrics = http_get(mport, "/metrics");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(
        metrics.contains("ticketgate_applied_records_total{op=\"claim\"}"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ticketgate_applied_records_total{op=\"cancel\"} 10"),
        "{metrics}"
    );
    assert!(
        metrics.contains("ticketgate_batch_duration_seconds_count"),
        "{metrics}"
    );
    assert!(metrics.contains("ticketgate_lag_entries 0"), "{metrics}");
    assert!(http_get(mport, "/healthz").starts_with("HTTP/1.1 200"));

    // reconcile: consistent, then drift after tampering
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile"]);
    assert!(st.success(), "reconcile should be clean: {out}");
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "ev"]);
    assert!(st.success(), "{out}");
    my.query_drop(
        "UPDATE ticket_stock SET remaining_stock = remaining_stock + 1 WHERE event_id = 'ev'",
    )
    .unwrap();
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "ev"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("remaining differs"), "{out}");
    my.query_drop(
        "UPDATE ticket_stock SET remaining_stock = remaining_stock - 1 WHERE event_id = 'ev'",
    )
    .unwrap();
    my.query_drop("UPDATE ticket_participation SET status = 'canceled' WHERE event_id = 'ev' AND user_id = 'u20'")
        .unwrap();
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("\"u20\""), "{out}");
}

#[test]
fn malformed_entry_is_dead_lettered_and_later_entries_apply() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_malformed");
    migrate(&db);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("m")
        .arg(10)
        .query(&mut r)
        .unwrap();
    claim(&mut r, "m", "a").unwrap();
    // (synced once: the sidecar is subscribed to ticket:events from here on)
    wait_synced(&mut r, &db, "m", Duration::from_secs(30), &|| sc.log());
    // A broken record (claim without user), appended behind the module's back.
    let bad: String = redis::cmd("XADD")
        .arg("ticket:{m}:log")
        .arg("*")
        .arg("op")
        .arg("claim")
        .arg("event")
        .arg("m")
        .arg("ticket")
        .arg("9")
        .arg("at")
        .arg("1")
        .query(&mut r)
        .unwrap();
    // A poisoned log key (not a stream), announced like a new event.
    let _: () = redis::cmd("SET")
        .arg("ticket:{bogus}:log")
        .arg("x")
        .query(&mut r)
        .unwrap();
    let receivers: i64 = redis::cmd("PUBLISH")
        .arg("ticket:events")
        .arg("bogus")
        .query(&mut r)
        .unwrap();
    assert_eq!(receivers, 1);
    wait_until(
        Duration::from_secs(10),
        "the sidecar refuses the bogus log",
        || sc.log().contains("is a string, not a stream"),
    );
    claim(&mut r, "m", "b").unwrap();
    claim(&mut r, "m", "c").unwrap();
    wait_synced(&mut r, &db, "m", Duration::from_secs(30), &|| sc.log());
    let view = mysql_view(&db, "m").unwrap();
    assert_eq!(view.conflicts, vec![(bad, "malformed".to_string())]);
    assert_eq!(view.active.len(), 3);
    assert_eq!(view.remaining, Some(7));
}

#[test]
fn oversell_is_refused_by_the_stock_check() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_oversell");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("o")
        .arg(10)
        .query(&mut r)
        .unwrap();
    let mut sc = Sidecar::start(&redis.url(), &db, &[]);
    wait_synced(&mut r, &db, "o", Duration::from_secs(30), &|| sc.log());
    assert_eq!(
        sc.terminate(Duration::from_secs(15)).map(|s| s.code()),
        Some(Some(0))
    );
    // MySQL believes only 2 tickets are left; Redis hands out 5.
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    my.query_drop("UPDATE ticket_stock SET remaining_stock = 2 WHERE event_id = 'o'")
        .unwrap();
    for u in ["a", "b", "c", "d", "e"] {
        claim(&mut r, "o", u).unwrap();
    }
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    wait_until(Duration::from_secs(30), "log drained", || {
        redis_view(&mut r, "o").unsynced == 0
    });
    let view = mysql_view(&db, "o").unwrap();
    assert_eq!(view.remaining, Some(0), "{}", sc.log());
    assert_eq!(view.active.len(), 2);
    let reasons: Vec<&str> = view.conflicts.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(reasons, ["oversell", "oversell", "oversell"]);
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--event", "o"]);
    assert_eq!(st.code(), Some(1), "{out}");
}

#[test]
fn sigterm_finishes_in_flight_work_and_exits_zero() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_sigterm");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("t")
        .arg(100_000)
        .query(&mut r)
        .unwrap();
    let mut sc = Sidecar::start(&redis.url(), &db, &[]);
    let url = redis.url();
    let writer = std::thread::spawn(move || {
        let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
        for chunk in 0..40 {
            let mut p = redis::pipe();
            for i in 0..100 {
                p.cmd("TICKET.CLAIM")
                    .arg("t")
                    .arg(format!("user-{chunk}-{i}"));
            }
            let _: Vec<i64> = p.query(&mut c).unwrap();
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    std::thread::sleep(Duration::from_millis(200));
    let st = sc
        .terminate(Duration::from_secs(15))
        .unwrap_or_else(|| panic!("no exit after SIGTERM\n{}", sc.log()));
    assert_eq!(st.code(), Some(0), "{}", sc.log());
    assert!(sc.log().contains("stopped cleanly"), "{}", sc.log());
    writer.join().unwrap();
    // Whatever was committed is whole: a fresh sidecar finishes exactly.
    let sc2 = Sidecar::start(&redis.url(), &db, &[]);
    wait_synced(&mut r, &db, "t", Duration::from_secs(60), &|| sc2.log());
    // it resumed reading after the offset the first one committed
    let resumed = sc2.log();
    assert!(resumed.contains("now draining event t after "), "{resumed}");
    assert!(
        !resumed.contains("now draining event t after 0-0"),
        "{resumed}"
    );
    let view = mysql_view(&db, "t").unwrap();
    assert!(view.conflicts.is_empty(), "{:?}", view.conflicts);
    assert_eq!(view.active.len(), 4000);
}

#[test]
fn missing_or_unreachable_urls_are_reported_clearly() {
    let (st, out) = std::process::Command::new(sidecar_bin())
        .arg("run")
        .env_remove("TICKETGATE_REDIS_URL")
        .env_remove("TICKETGATE_MYSQL_URL")
        .output()
        .map(|o| (o.status, String::from_utf8_lossy(&o.stderr).into_owned()))
        .unwrap();
    assert_eq!(st.code(), Some(2));
    assert!(out.contains("TICKETGATE_REDIS_URL"), "{out}");
    let port = free_port();
    let (st, out) = sidecar_cmd(
        "redis://127.0.0.1:1/",
        &format!("mysql://root@127.0.0.1:{port}/x"),
        &["--startup-timeout", "1", "migrate"],
    );
    assert_eq!(st.code(), Some(2));
    assert!(out.contains("cannot reach MySQL"), "{out}");
}

#[test]
fn ticket_collision_in_mysql_is_dead_lettered() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_collision");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("col")
        .arg(10)
        .query(&mut r)
        .unwrap();
    claim(&mut r, "col", "a").unwrap(); // ticket 1
    let mut sc = Sidecar::start(&redis.url(), &db, &[]);
    wait_synced(&mut r, &db, "col", Duration::from_secs(30), &|| sc.log());
    assert_eq!(
        sc.terminate(Duration::from_secs(15)).map(|s| s.code()),
        Some(Some(0))
    );
    // Someone hands ticket 2 out in MySQL behind Redis's back.
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    my.query_drop(
        "INSERT INTO ticket_participation (event_id, user_id, ticket_number, status, claimed_at, stream_id) \
         VALUES ('col', 'intruder', 2, 'active', NOW(3), '0-1')",
    )
    .unwrap();
    assert_eq!(claim(&mut r, "col", "b").unwrap(), 2);
    assert_eq!(claim(&mut r, "col", "c").unwrap(), 3);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    wait_until(Duration::from_secs(30), "log drained", || {
        redis_view(&mut r, "col").unsynced == 0
    });
    let view = mysql_view(&db, "col").unwrap();
    let reasons: Vec<&str> = view.conflicts.iter().map(|(_, r)| r.as_str()).collect();
    assert_eq!(reasons, ["collision"], "{}", sc.log());
    assert_eq!(view.active.get("intruder"), Some(&2));
    assert_eq!(view.active.get("c"), Some(&3));
    assert_eq!(view.active.get("b"), None);
    // the refused claim did not take stock: 10 - a - c
    assert_eq!(view.remaining, Some(8));
}

/// A real `TICKET.DROP` after the sale is synced is a drop, not a loss:
/// the module keeps the log with an `op=drop` entry, the sidecar applies it
/// (status `dropped`), raises no alarm, and `reconcile` says `dropped`.
#[test]
fn dropped_event_is_forgotten() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_drop");
    migrate(&db);
    let sc = Sidecar::start(
        &redis.url(),
        &db,
        &[
            "--rescan-interval",
            "1",
            "--verify-interval",
            "1",
            "--metrics-addr",
            "127.0.0.1:0",
        ],
    );
    let port = sc.metrics_port();
    let _: () = redis::cmd("TICKET.INIT")
        .arg("gone")
        .arg(5)
        .query(&mut r)
        .unwrap();
    claim(&mut r, "gone", "a").unwrap();
    wait_synced(&mut r, &db, "gone", Duration::from_secs(30), &|| sc.log());
    let _: i64 = redis::cmd("TICKET.DROP").arg("gone").query(&mut r).unwrap();
    wait_until(Duration::from_secs(30), "the drop is applied", || {
        metric(port, "ticketgate_applied_records_total{op=\"drop\"}") == 1
    });
    let dropped = |c: &mut mysql::Conn| -> (String, bool) {
        c.exec_first(
            "SELECT status, dropped_at IS NOT NULL FROM ticket_event WHERE event_id = 'gone'",
            (),
        )
        .unwrap()
        .unwrap()
    };
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    assert_eq!(dropped(&mut my), ("dropped".to_string(), true));
    // the log stays as the trace (trimmed once applied)
    let exists: i64 = redis::cmd("EXISTS")
        .arg("ticket:{gone}:log")
        .query(&mut r)
        .unwrap();
    assert_eq!(exists, 1);
    // a few verifier rounds (one a second) later: no alarm
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(metric(port, "ticketgate_quarantined_events"), 0);
    assert!(!sc.log().contains("QUARANTINED"), "{}", sc.log());
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile"]);
    assert!(st.success(), "a dropped, synced event is not drift: {out}");
    assert!(out.contains("gone: dropped"), "{out}");
    // MySQL keeps the history
    assert_eq!(mysql_view(&db, "gone").unwrap().active.len(), 1);
}

#[test]
fn large_batches_of_cancels_and_reclaims_take_the_fast_path() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_fast");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("f")
        .arg(5000)
        .query(&mut r)
        .unwrap();
    let pipe_all = |r: &mut redis::Connection, cmd: &str, users: std::ops::Range<usize>| {
        let mut p = redis::pipe();
        for i in users {
            p.cmd(cmd).arg("f").arg(format!("user{i}"));
        }
        let _: Vec<redis::Value> = p.query(r).unwrap();
    };
    pipe_all(&mut r, "TICKET.CLAIM", 0..3000);
    let args = ["--batch-size", "5000", "--metrics-addr", "127.0.0.1:0"];
    let mut sc = Sidecar::start(&redis.url(), &db, &args);
    wait_synced(&mut r, &db, "f", Duration::from_secs(60), &|| sc.log());
    assert_eq!(
        sc.terminate(Duration::from_secs(15)).map(|s| s.code()),
        Some(Some(0))
    );
    // one batch of 1,500 cancels (more than one multi-row statement)
    pipe_all(&mut r, "TICKET.CANCEL", 0..1500);
    let mut sc = Sidecar::start(&redis.url(), &db, &args);
    let port = sc.metrics_port();
    wait_synced(&mut r, &db, "f", Duration::from_secs(60), &|| sc.log());
    assert_eq!(
        metric(port, "ticketgate_applied_records_total{op=\"cancel\"}"),
        1500
    );
    assert_eq!(
        metric(port, "ticketgate_batches_total{path=\"slow\"}"),
        0,
        "{}",
        sc.log()
    );
    assert_eq!(
        sc.terminate(Duration::from_secs(15)).map(|s| s.code()),
        Some(Some(0))
    );
    // one batch of re-claims (their rows exist as 'canceled') and new users
    pipe_all(&mut r, "TICKET.CLAIM", 0..700);
    pipe_all(&mut r, "TICKET.CLAIM", 3000..3300);
    let sc = Sidecar::start(&redis.url(), &db, &args);
    let port = sc.metrics_port();
    wait_synced(&mut r, &db, "f", Duration::from_secs(60), &|| sc.log());
    assert!(
        metric(port, "ticketgate_batches_total{path=\"fast\"}") >= 1,
        "{}",
        sc.log()
    );
    assert_eq!(
        metric(port, "ticketgate_batches_total{path=\"slow\"}"),
        0,
        "{}",
        sc.log()
    );
    assert_eq!(
        metric(port, "ticketgate_applied_records_total{op=\"claim\"}"),
        1000
    );
    let view = mysql_view(&db, "f").unwrap();
    assert!(view.conflicts.is_empty());
    assert_eq!(view.active.len(), 3000 - 1500 + 700 + 300);
}

#[test]
fn run_migrate_flag_and_sigint_stops_cleanly() {
    let redis = RedisServer::start();
    let db = fresh_database("sc_sigint");
    // no `migrate` first: `run --migrate` applies the schema itself
    let mut sc = Sidecar::start(&redis.url(), &db, &["--migrate"]);
    wait_until(Duration::from_secs(10), "sidecar running", || {
        sc.log().contains("draining")
    });
    sc.signal(libc::SIGINT);
    let st = sc.wait_exit(Duration::from_secs(15));
    assert_eq!(st.map(|s| s.code()), Some(Some(0)), "{}", sc.log());
    assert!(
        sc.log().contains("applied migration V1__initial_schema")
            && sc.log().contains("applied migration V2__holds"),
        "{}",
        sc.log()
    );
}

#[test]
fn many_events_at_once_more_than_one_xread_chunk() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_many");
    migrate(&db);
    let events: Vec<String> = (0..300).map(|i| format!("many.{i}")).collect();
    let burst = |r: &mut redis::Connection, evs: &[String]| {
        let mut p = redis::pipe();
        for e in evs {
            p.cmd("TICKET.INIT").arg(e).arg(20).ignore();
            for u in 0..10 {
                p.cmd("TICKET.CLAIM").arg(e).arg(format!("u{u}")).ignore();
            }
            p.cmd("TICKET.CANCEL").arg(e).arg("u0").ignore();
        }
        let _: () = p.query(r).unwrap();
    };
    burst(&mut r, &events[..150]);
    let sc = Sidecar::start(&redis.url(), &db, &["--writers", "3"]);
    burst(&mut r, &events[150..]);
    // reconcile --wait: waits until the sidecar has applied everything
    // (right after the burst there is still a backlog), then compares.
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--wait", "60"]);
    assert!(st.success(), "{}\n{}", tail(&out, 20), tail(&sc.log(), 20));
    assert!(out.contains("300 event(s)"), "{}", tail(&out, 5));
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let (events_n, active, stock): (i64, i64, i64) = my
        .query_first(
            "SELECT (SELECT COUNT(*) FROM ticket_event), \
             (SELECT COUNT(*) FROM ticket_participation WHERE status = 'active'), \
             (SELECT SUM(remaining_stock) FROM ticket_stock)",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        (events_n, active, stock),
        (300, 300 * 9, 300 * 11),
        "{}",
        sc.log()
    );
}

#[test]
fn daemon_runs_with_only_select_insert_update_grants() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_grants");
    migrate(&db);
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let dbname: String = my.query_first("SELECT DATABASE()").unwrap().unwrap();
    let user = format!("tg_{}", std::process::id());
    my.query_drop(format!(
        "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'pw'"
    ))
    .unwrap();
    for t in [
        "ticket_event",
        "ticket_stock",
        "ticket_participation",
        "ticket_sync_offset",
        "ticket_conflict",
        // V4: the heal's journal and its record of heals
        "ticket_journal",
        "ticket_heal",
        // V10, V11: after the sale (reconcile reads generations and scans;
        // each batch asks whether its event has a live listing)
        "ticket_owner",
        "ticket_scan",
        "ticket_listing",
        "ticket_resold",
    ] {
        my.query_drop(format!(
            "GRANT SELECT, INSERT, UPDATE ON `{dbname}`.`{t}` TO '{user}'@'127.0.0.1'"
        ))
        .unwrap();
    }
    let port: u16 = my.query_first("SELECT @@port").unwrap().unwrap();
    let url = format!("mysql://{user}:pw@127.0.0.1:{port}/{dbname}");
    let _: () = redis::cmd("TICKET.INIT")
        .arg("g")
        .arg(10)
        .query(&mut r)
        .unwrap();
    for u in ["a", "b", "c"] {
        claim(&mut r, "g", u).unwrap();
    }
    cancel(&mut r, "g", "b");
    let sc = Sidecar::start(&redis.url(), &url, &[]);
    wait_synced(&mut r, &db, "g", Duration::from_secs(30), &|| sc.log());
    let log = sc.log();
    assert!(
        !log.contains(":pw@") && log.contains(":***@"),
        "password must be redacted: {log}"
    );
    let (st, out) = sidecar_cmd(&redis.url(), &url, &["reconcile"]);
    assert!(st.success(), "{out}");
}

/// An upgrade leaves a log holding records of both forms: the entries an
/// older module wrote (`op claim event E user u ticket n at T`) before the
/// compact ones this module writes (`claim u ticket n`, `at` in the entry
/// id). The real sidecar drains both into MySQL, each with its own time.
#[test]
fn a_log_of_full_and_compact_records_drains_into_mysql() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_formats");
    migrate(&db);
    init_event(&mut r, "up", 20);
    for u in ["a", "b", "c"] {
        claim(&mut r, "up", u).unwrap();
    }
    cancel(&mut r, "up", "b");
    // What the release before wrote: the same entries at the same ids, in
    // the full form.
    let old = xrange_log(&mut r, "up");
    let _: () = redis::cmd("DEL")
        .arg("ticket:{up}:log")
        .query(&mut r)
        .unwrap();
    // The rows MySQL must end with: (user, claimed at, cancelled at).
    let mut want: Vec<(String, i64, Option<i64>)> = Vec::new();
    let mut note = |rec: &protocol::record::Record| match &rec.op {
        Op::Claim { user, .. } => want.push((user.clone(), rec.at, None)),
        Op::Cancel { user, .. } => {
            let row = want
                .iter_mut()
                .rev()
                .find(|r| &r.0 == user)
                .expect("claimed");
            row.2 = Some(rec.at);
        }
        _ => {}
    };
    for (id, fields) in &old {
        let rec = decoded("up", id, fields);
        note(&rec);
        let mut xadd = redis::cmd("XADD");
        xadd.arg("ticket:{up}:log").arg(id);
        for (name, value) in rec.fields("up") {
            xadd.arg(name).arg(value.to_string());
        }
        let _: String = xadd.query(&mut r).unwrap();
    }
    // The module goes on with compact records.
    for u in ["d", "e", "b"] {
        claim(&mut r, "up", u).unwrap();
    }
    cancel(&mut r, "up", "a");
    let log = xrange_log(&mut r, "up");
    let full = |e: &(String, Vec<(String, String)>)| e.1.first().is_some_and(|(k, _)| k == "op");
    assert!(log[..old.len()].iter().all(full), "{log:?}");
    assert!(log[old.len()..].iter().all(|e| !full(e)), "{log:?}");
    for (id, fields) in &log[old.len()..] {
        note(&decoded("up", id, fields));
    }

    let sc = Sidecar::start(&redis.url(), &db, &[]);
    wait_synced(&mut r, &db, "up", Duration::from_secs(30), &|| sc.log());
    let view = mysql_view(&db, "up").unwrap();
    assert_eq!(view.conflicts, vec![]);
    assert_eq!(
        view.active,
        HashMap::from([
            ("c".into(), 3),
            ("d".into(), 2),
            ("e".into(), 4),
            ("b".into(), 5)
        ])
    );
    assert_eq!(view.remaining, Some(16));
    // Every row has its records' times: from `at` in the full form, from
    // the entry id in the compact one.
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let mut rows: Vec<(String, i64, Option<i64>)> = my
        .exec(
            "SELECT user_id, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', claimed_at) DIV 1000, \
             TIMESTAMPDIFF(MICROSECOND, '1970-01-01', canceled_at) DIV 1000 \
             FROM ticket_participation WHERE event_id = ?",
            ("up",),
        )
        .unwrap();
    rows.sort();
    want.sort();
    assert_eq!(rows, want);
}

/// The entries of `event`'s log, fields in order.
fn xrange_log(r: &mut redis::Connection, event: &str) -> Vec<(String, Vec<(String, String)>)> {
    redis::cmd("XRANGE")
        .arg(format!("ticket:{{{event}}}:log"))
        .arg("-")
        .arg("+")
        .query(r)
        .unwrap()
}

/// The record of the log entry `id` of `event`, decoded as the sidecar does.
fn decoded(event: &str, id: &str, fields: &[(String, String)]) -> protocol::record::Record {
    let raw: Vec<(Vec<u8>, Vec<u8>)> = fields
        .iter()
        .map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes()))
        .collect();
    protocol::record::decode_entry(event, protocol::StreamId::parse(id), &raw)
        .unwrap_or_else(|m| panic!("entry {id}: {}", m.reason))
}
