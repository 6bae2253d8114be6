//! End-to-end: the module's waiting-list offers (held, confirmed, expired
//! and passed on) reach MySQL through the sidecar, and MySQL's live rows
//! match Redis's holders afterwards.

#[path = "support/sidecar.rs"]
mod support;

use std::time::Duration;

use support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

fn run(r: &mut redis::Connection, parts: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(parts[0]);
    for p in &parts[1..] {
        cmd.arg(*p);
    }
    cmd.query(r).unwrap()
}

/// The event's holders (one ticket each here).
fn holders(r: &mut redis::Connection) -> Vec<(String, i64)> {
    let map: std::collections::BTreeMap<String, i64> = redis::cmd("HGETALL")
        .arg("ticket:{wl}:holders")
        .query(r)
        .unwrap();
    map.into_iter().collect()
}

#[test]
fn offers_confirms_and_expiries_of_the_waiting_list_reach_mysql() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_waitlist");
    migrate(&db);
    run(&mut r, &["TICKET.INIT", "wl", "4", "OFFER", "1500"]);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    for u in ["c0", "c1", "c2", "c3"] {
        run(&mut r, &["TICKET.CLAIM", "wl", u]);
    }
    for u in ["w0", "w1", "w2"] {
        run(&mut r, &["TICKET.WAIT", "wl", u]);
    }
    run(&mut r, &["TICKET.CANCEL", "wl", "c0"]);
    run(&mut r, &["TICKET.CANCEL", "wl", "c1"]);
    run(&mut r, &["TICKET.CONFIRM", "wl", "w0"]);
    // w1's offer expires and passes on to w2.
    // (The sidecar trims the log, so ask the module.)
    wait_until(Duration::from_secs(20), "w2 is offered", || {
        run(&mut r, &["TICKET.ORDER", "wl", "w2"]) != redis::Value::Nil
    });
    wait_until(Duration::from_secs(30), "MySQL matches Redis", || {
        let live: Vec<(String, i64)> = rows_of(&db, "wl")
            .unwrap()
            .into_iter()
            .filter(|(_, _, s)| s == "active" || s == "held")
            .map(|(u, t, _)| (u, t))
            .collect();
        live == holders(&mut r)
    });
    let rows = rows_of(&db, "wl").unwrap();
    let status_of = |user: &str| {
        rows.iter()
            .filter(|(u, _, _)| u == user)
            .map(|(_, _, s)| s.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(status_of("w0"), ["active"], "{}", sc.log());
    assert_eq!(status_of("w1"), ["expired"]);
    assert_eq!(status_of("w2"), ["held"]);
}
