//! End-to-end: the sidecar heals an event after an unplanned failover, with
//! no operator (docs/design.md "Healing after an unplanned failover").
//!
//! A primary and a replica; the replica is frozen (SIGSTOP) and its link
//! dropped, the primary takes writes the sidecar applies to MySQL, then it
//! is killed -9 and the stale replica promoted (`REPLICAOF NO ONE`), which
//! takes writes of its own; the sidecar is restarted on it. Every write
//! acknowledged by `WAIT 1` is kept; each lost applied write is re-applied
//! through `TICKET.REAPPLY` (replicated: a strict replica and an AOF reload
//! reach the same `DEBUG DIGEST`) or undone in MySQL with a
//! `lost_in_failover` conflict naming its user; MySQL equals Redis and
//! `reconcile` exits 0.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::HashMap;
use std::time::Duration;

use mysql::prelude::Queryable;
use support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

const LONG: Duration = Duration::from_secs(60);

fn sidecar(redis: &RedisServer, db: &str) -> Sidecar {
    let args = ["--verify-interval", "1", "--metrics-addr", "127.0.0.1:0"];
    Sidecar::start(&redis.url(), db, &args)
}

fn claim_acked(c: &mut redis::Connection, event: &str, user: &str, acks: i64) -> i64 {
    let t: i64 = redis::cmd("TICKET.CLAIM")
        .arg(event)
        .arg(user)
        .query(c)
        .unwrap();
    // Long enough for a replica that is there, short for one cut off.
    let timeout = if acks > 0 { 5000 } else { 300 };
    let got: i64 = redis::cmd("WAIT").arg(1).arg(timeout).query(c).unwrap();
    assert_eq!(got, acks, "WAIT after {user}'s claim");
    t
}

fn cancel(c: &mut redis::Connection, event: &str, user: &str) -> Option<i64> {
    redis::cmd("TICKET.CANCEL")
        .arg(event)
        .arg(user)
        .query(c)
        .unwrap()
}

/// (stream id, user, ticket, detail) of the event's conflicts.
fn conflicts(db: &str, event: &str) -> Vec<(String, String, i64, String, String)> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    c.exec(
        "SELECT stream_id, COALESCE(user_id, ''), COALESCE(ticket_number, 0), reason, detail FROM ticket_conflict WHERE event_id = ? ORDER BY id",
        (event,),
    )
    .unwrap()
}

fn sold(db: &str, event: &str) -> HashMap<String, i64> {
    mysql_view(db, event).unwrap().active
}

#[test]
fn an_unplanned_failover_heals_at_once_and_keeps_every_acknowledged_write() {
    let (mut primary, replica) = msupport::primary_and_aof_replica();
    let db = fresh_database("heal");
    migrate(&db);
    let mut sc = sidecar(&primary, &db);
    let mut p = primary.conn();
    init_event(&mut p, "e", 50);
    for u in 0..5 {
        assert_eq!(claim_acked(&mut p, "e", &format!("kept{u}"), 1), u + 1);
    }
    wait_synced(&mut p, &db, "e", LONG, &|| sc.log());
    // The replica has everything so far, the sidecar's anchor included.
    msupport::replicate_all(&mut p);

    // Cut the replica off; the primary takes writes nobody acknowledges,
    // and the sidecar applies them.
    msupport::cut_off(&replica, &mut p);
    assert_eq!(claim_acked(&mut p, "e", "lost0", 0), 6);
    assert_eq!(claim_acked(&mut p, "e", "lost1", 0), 7);
    assert_eq!(cancel(&mut p, "e", "kept0"), Some(1));
    assert_eq!(claim_acked(&mut p, "e", "lost2", 0), 1);
    wait_synced(&mut p, &db, "e", LONG, &|| sc.log());
    assert_eq!(sold(&db, "e").len(), 7);

    // The primary dies; the stale replica is promoted and sells on.
    drop(p);
    primary.kill();
    sc.kill9();
    msupport::signal(&replica, libc::SIGCONT);
    let mut r = replica.conn();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    let strict = msupport::strict_replica_of(&replica.port().to_string());
    assert_eq!(
        claim_acked(&mut r, "e", "new0", 1),
        6,
        "6 was lost: free again"
    );
    assert_eq!(cancel(&mut r, "e", "kept1"), Some(2));

    // The sidecar, restarted on the new primary, heals by itself.
    let started = std::time::Instant::now();
    let sc = sidecar(&replica, &db);
    wait_until(LONG, "the sidecar heals the event", || {
        sc.log().contains("event e: HEALED")
    });
    wait_synced(&mut r, &db, "e", LONG, &|| sc.log());
    eprintln!(
        "MySQL follows the new primary {:?} after the sidecar started",
        started.elapsed()
    );
    let view = redis_view(&mut r, "e");
    let want: HashMap<String, i64> = [
        ("kept2", 3),
        ("kept3", 4),
        ("kept4", 5),
        ("new0", 6),
        ("lost1", 7),
        ("lost2", 1),
    ]
    .into_iter()
    .map(|(u, t)| (u.to_owned(), t))
    .collect();
    assert_eq!(view.holders, want, "kept, new, and re-applied lost writes");
    assert_eq!(sold(&db, "e"), want);
    // lost0's claim of 6 went to new0 on the new primary: undone, reported.
    let c = conflicts(&db, "e");
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(
        (c[0].1.as_str(), c[0].2, c[0].3.as_str()),
        ("lost0", 6, "lost_in_failover")
    );
    assert!(
        c[0].4.contains("new0"),
        "names what replaced it: {}",
        c[0].4
    );
    let port = sc.metrics_port();
    assert_eq!(
        metric(port, "ticketgate_lost_writes_total{outcome=\"reapplied\"}"),
        3
    );
    assert_eq!(
        metric(port, "ticketgate_lost_writes_total{outcome=\"undone\"}"),
        1
    );
    let (st, out) = sidecar_cmd(&replica.url(), &db, &["reconcile"]);
    assert!(st.success(), "reconcile:\n{out}");

    // The re-applied writes are replicated effects: the strict replica and
    // an AOF reload reach the very same state.
    msupport::wait_replicated(&mut r, 1);
    let mut s = strict.conn();
    assert_eq!(msupport::digest(&mut s), msupport::digest(&mut r));
    let before = msupport::digest(&mut r);
    let _: () = redis::cmd("DEBUG").arg("LOADAOF").query(&mut r).unwrap();
    assert_eq!(msupport::digest(&mut r), before);
    // And the event sells on, drained as usual.
    assert_eq!(claim_acked(&mut r, "e", "after", 1), 2, "kept1 gave 2 back");
    wait_synced(&mut r, &db, "e", LONG, &|| sc.log());
}

/// The masking case of issue 19: a failover loses a rebuild's
/// `op=restore` (the replica was cut off during the repair). The new
/// primary's log is the old one; its anchor places it before the restore
/// MySQL applied, which no heal can redo: the event is quarantined (never
/// mixed), the new primary's writes stay out of MySQL, and a rebuild from
/// the new primary repairs it with a conflict naming each discarded user.
#[test]
fn a_failover_that_loses_a_rebuild_is_caught_not_mixed() {
    let mut primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = msupport::strict_replica_of(&primary.port().to_string());
    let db = fresh_database("heal_rb");
    migrate(&db);
    let mut sc = sidecar(&primary, &db);
    let mut p = primary.conn();
    init_event(&mut p, "e", 20);
    for u in 0..3 {
        assert_eq!(claim_acked(&mut p, "e", &format!("a{u}"), 1), u + 1);
    }
    wait_synced(&mut p, &db, "e", LONG, &|| sc.log());
    msupport::replicate_all(&mut p);

    // The replica is cut off; an operator rebuilds the event on the
    // primary (forced: as after a quarantine), and sales go on there.
    msupport::cut_off(&replica, &mut p);
    let (st, out) = sidecar_cmd(
        &primary.url(),
        &db,
        &["rebuild", "--event", "e", "--apply", "--force"],
    );
    assert!(st.success(), "rebuild:\n{out}");
    assert_eq!(claim_acked(&mut p, "e", "b0", 0), 4);
    wait_synced(&mut p, &db, "e", LONG, &|| sc.log());

    // The primary dies; the replica, which never saw the restore, is
    // promoted and sells on.
    drop(p);
    primary.kill();
    sc.kill9();
    msupport::signal(&replica, libc::SIGCONT);
    let mut r = replica.conn();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    assert_eq!(claim_acked(&mut r, "e", "c0", 0), 4, "the lost b0's number");
    let sc = sidecar(&replica, &db);
    wait_until(LONG, "the sidecar quarantines the event", || {
        sc.log().contains("event e: QUARANTINED")
    });
    assert!(sc.log().contains("op=restore"), "{}", tail(&sc.log(), 20));
    std::thread::sleep(Duration::from_secs(2));
    let mysql = sold(&db, "e");
    assert_eq!(mysql.get("b0"), Some(&4), "MySQL keeps what it applied");
    assert_eq!(mysql.get("c0"), None, "nothing of the new primary mixed in");
    assert!(conflicts(&db, "e").is_empty());
    let (st, out) = sidecar_cmd(&replica.url(), &db, &["reconcile"]);
    assert_eq!(st.code(), Some(1), "reconcile names it:\n{out}");
    assert!(out.contains("e: QUARANTINED ("), "{out}");

    // The documented repair; c0 is reported with its user.
    let (st, out) = sidecar_cmd(
        &replica.url(),
        &db,
        &["rebuild", "--event", "e", "--apply", "--force"],
    );
    assert!(st.success(), "rebuild:\n{out}");
    wait_until(LONG, "the restore is applied", || {
        sc.log().contains("the quarantine is lifted")
    });
    let c = conflicts(&db, "e");
    assert!(
        c.iter()
            .any(|c| c.1 == "c0" && c.3 == "discarded_by_rebuild"),
        "{c:?}"
    );
    wait_synced(&mut r, &db, "e", LONG, &|| sc.log());
    let (st, out) = sidecar_cmd(&replica.url(), &db, &["reconcile"]);
    assert!(st.success(), "reconcile:\n{out}");
}
