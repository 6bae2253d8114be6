//! Checkout against a real redis-server: holds that expire by themselves
//! (the sweep, with no traffic at all, bounded per tick), the lazy path (a
//! hold is free from its deadline on, swept or not), a cut-off replica that
//! keeps showing a hold until it is promoted, sweeping that resumes after an
//! AOF reload, a restart and a failover, replicas and the AOF reaching the
//! primary's digest, a cluster whose every master sweeps its own events, and
//! a cluster failover after which the new master sweeps the old one's holds.
//!
//! Time-based effects are waited for by polling with generous upper bounds;
//! nothing asserts a tight duration.

#[path = "support/module.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::{wait_until, RedisServer};

/// How long a hold may take to be swept once due (many cron ticks).
const SWEPT_WITHIN: Duration = Duration::from_secs(20);

fn ops(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .filter_map(|e| field(e, "op").map(str::to_owned))
        .collect()
}

/// How many entries of the event's log are `op=expire` for `user`.
fn expiries_of(c: &mut Connection, event: &str, user: &str) -> usize {
    log(c, event)
        .iter()
        .filter(|e| field(e, "op") == Some("expire") && field(e, "user") == Some(user))
        .count()
}

fn wait_expired(c: &mut Connection, event: &str, user: &str) {
    wait_until(
        SWEPT_WITHIN,
        &format!("{user}'s hold on {event} expired"),
        || expiries_of(c, event, user) > 0,
    );
}

fn config_set(c: &mut Connection, name: &str, value: &str) {
    ok(c, &["CONFIG", "SET", name, value]);
}

#[test]
fn holds_expire_with_no_traffic_and_are_logged_once() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &["TICKET.INIT", "e", "10", "HOLD", "1500", "LIMIT", "3"],
    );
    let got = value(&mut c, &["TICKET.CLAIM", "e", "a", "COUNT", "2"]);
    assert_eq!(got, Value::Array(vec![Value::Int(1), Value::Int(2)]));
    assert_eq!(claim(&mut c, "e", "b"), 3);
    assert_eq!(int(&mut c, &["TICKET.CONFIRM", "e", "b"]), 1);
    let (tickets, state, until) = order(&mut c, "e", "a").expect("a holds");
    assert_eq!((tickets, state.as_str()), (vec![1, 2], "held"));
    assert!(until > server_ms(&mut c) - 1000);
    assert_eq!(order(&mut c, "e", "b"), Some((vec![3], "sold".into(), 0)));
    assert_eq!(status_int(&mut c, "e", "held"), 2);
    assert_eq!(status_int(&mut c, "e", "claimed"), 3);

    // No command touches the event: the sweep alone expires the hold.
    wait_expired(&mut c, "e", "a");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(expiries_of(&mut c, "e", "a"), 1, "logged exactly once");
    assert_eq!(
        ops(&log(&mut c, "e")),
        ["init", "hold", "hold", "confirm", "expire"]
    );
    let expire = log(&mut c, "e").pop().unwrap();
    assert_eq!(field(&expire, "tickets"), Some("1,2"));
    assert_eq!(order(&mut c, "e", "a"), None);
    assert_eq!(status_int(&mut c, "e", "held"), 0);
    assert_eq!(status_int(&mut c, "e", "remaining"), 9);
    assert!(info_int(&mut c, "ticket_expired") >= 1);
    expect_error(&mut c, &["TICKET.CONFIRM", "e", "a"], "NOHOLD");
    // The expired numbers are the lowest free again.
    assert_eq!(claim(&mut c, "e", "c"), 1);
}

#[test]
fn a_claim_right_after_a_deadline_takes_the_expired_numbers() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // No sweep for a minute: only the lazy path can free the holds.
    config_set(&mut c, "ticket.sweep-interval", "60000");
    ok(&mut c, &["TICKET.INIT", "e", "3", "HOLD", "1500"]);
    for (user, ticket) in [("a", 1), ("b", 2), ("c", 3)] {
        assert_eq!(claim(&mut c, "e", user), ticket);
    }
    expect_error(&mut c, &["TICKET.CLAIM", "e", "d"], "SOLDOUT");
    let (_, _, until) = order(&mut c, "e", "a").expect("a holds");
    wait_until(Duration::from_secs(10), "the deadline passed", || {
        server_ms(&mut c) > until + 5
    });
    // Free for every command from the deadline on, before any sweep.
    assert!(!ops(&log(&mut c, "e")).contains(&"expire".to_string()));
    assert_eq!(status_int(&mut c, "e", "remaining"), 3);
    assert_eq!(status_int(&mut c, "e", "held"), 0);
    assert_eq!(order(&mut c, "e", "b"), None);
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e", "b"]), None);
    assert_eq!(claim(&mut c, "e", "d"), 1, "the lowest expired number");
    assert_eq!(
        ops(&log(&mut c, "e")),
        ["init", "hold", "hold", "hold", "expire", "expire", "expire", "hold"]
    );
    // d's live hold is never handed out: the next claims get the others.
    assert_eq!(claim(&mut c, "e", "x"), 2);
    assert_eq!(claim(&mut c, "e", "y"), 3);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "SOLDOUT");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z", "COUNT", "2"], "LIMIT");
}

#[test]
fn ten_thousand_due_holds_are_swept_in_bounded_ticks() {
    let server = RedisServer::start();
    let mut c = server.conn();
    config_set(&mut c, "ticket.sweep-interval", "60000");
    // Each claim expires the holds due at its time: the holds must outlast
    // the whole pipeline, or its later claims sweep the earlier ones (a
    // loaded machine takes seconds for 10,000 claims).
    ok(&mut c, &["TICKET.INIT", "big", "20000", "HOLD", "5000"]);
    let mut pipe = redis::pipe();
    for i in 0..10_000 {
        pipe.cmd("TICKET.CLAIM")
            .arg("big")
            .arg(format!("u{i}"))
            .ignore();
    }
    let () = pipe.query(&mut c).unwrap();
    let first_until = order(&mut c, "big", "u0").expect("held").2;
    assert!(
        server_ms(&mut c) < first_until,
        "the 10,000 claims took longer than their 5 s holds: no state with every hold due at once"
    );
    let last_until = order(&mut c, "big", "u9999").expect("held").2;
    wait_until(Duration::from_secs(10), "every hold is due", || {
        server_ms(&mut c) > last_until
    });
    assert_eq!(info_int(&mut c, "ticket_expired"), 0, "nothing swept yet");

    // All 10,000 are due at once; 500 per tick take 20 ticks.
    config_set(&mut c, "ticket.sweep-max", "500");
    config_set(&mut c, "ticket.sweep-interval", "100");
    let mut seen = Vec::new();
    let mut slowest_ping = Duration::ZERO;
    let started = Instant::now();
    while info_int(&mut c, "ticket_expired") < 10_000 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "swept {seen:?}"
        );
        let t = Instant::now();
        let pong: String = redis::cmd("PING").query(&mut c).unwrap();
        assert_eq!(pong, "PONG");
        slowest_ping = slowest_ping.max(t.elapsed());
        seen.push(info_int(&mut c, "ticket_expired"));
        std::thread::sleep(Duration::from_millis(10));
    }
    // Each tick logs its expiries at its own time, so the log shows every
    // tick's share, whatever this client saw between two of its looks (which
    // depends on the machine's load).
    let per_tick = expiries_per_ms(&mut c, "big");
    assert!(
        per_tick.len() >= 20 && per_tick.values().all(|n| *n <= 500),
        "the sweep went in bounded steps: {per_tick:?} (seen {seen:?})"
    );
    assert!(
        slowest_ping < Duration::from_secs(2),
        "PING took {slowest_ping:?}"
    );
    assert_eq!(status_int(&mut c, "big", "held"), 0);
    assert_eq!(status_int(&mut c, "big", "remaining"), 20_000);
    assert_eq!(log_len(&mut c, "big"), 1 + 10_000 + 10_000);
}

/// How many `expire` entries `event`'s log holds per entry-id millisecond.
fn expiries_per_ms(c: &mut Connection, event: &str) -> BTreeMap<u64, usize> {
    let entries: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg(format!("ticket:{{{event}}}:log"))
        .arg("-")
        .arg("+")
        .query(c)
        .unwrap();
    let mut per_ms = BTreeMap::new();
    for (id, fields) in entries {
        if fields.first().map(String::as_str) == Some("expire") {
            let ms = id.split('-').next().and_then(|ms| ms.parse().ok()).unwrap();
            *per_ms.entry(ms).or_insert(0) += 1;
        }
    }
    per_ms
}

#[test]
fn a_cut_off_replica_shows_the_hold_until_promoted_then_sweeps_it() {
    let mut primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let port = primary.port().to_string();
    let replica = strict_replica_of(&port);
    let mut p = primary.conn();
    // Long enough that the primary cannot expire it before it is killed.
    ok(&mut p, &["TICKET.INIT", "e", "5", "HOLD", "5000"]);
    assert_eq!(claim(&mut p, "e", "a"), 1);
    wait_replicated(&mut p, 1);
    drop(p);
    primary.kill();

    let mut r = replica.conn();
    let (_, state, until) = order(&mut r, "e", "a").expect("the replica shows the hold");
    assert_eq!(state, "held");
    wait_until(Duration::from_secs(10), "the deadline passed", || {
        server_ms(&mut r) > until + 300
    });
    // Past the deadline, with several sweep intervals gone by: a replica
    // never expires anything itself.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(order(&mut r, "e", "a").map(|o| o.1), Some("held".into()));
    assert_eq!(status_int(&mut r, "e", "held"), 1);
    assert_eq!(expiries_of(&mut r, "e", "a"), 0);

    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    wait_expired(&mut r, "e", "a");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(expiries_of(&mut r, "e", "a"), 1);
    assert_eq!(order(&mut r, "e", "a"), None);
    assert_eq!(claim(&mut r, "e", "b"), 1);
}

#[test]
fn aof_reload_and_restart_resume_sweeping() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "10", "HOLD", "2000"]);
    assert_eq!(claim(&mut c, "e", "a"), 1);
    let _: Value = redis::cmd("DEBUG").arg("LOADAOF").query(&mut c).unwrap();
    assert_eq!(order(&mut c, "e", "a").map(|o| o.1), Some("held".into()));
    wait_expired(&mut c, "e", "a");

    // Outlives the restart as a live hold.
    let b = value(&mut c, &["TICKET.CLAIM", "e", "b", "HOLD", "5000"]);
    assert_eq!(b, Value::Int(1));
    drop(c);
    server.stop();
    server.start_again();
    let mut c = server.conn();
    assert_eq!(order(&mut c, "e", "b").map(|o| o.0), Some(vec![1]));
    wait_expired(&mut c, "e", "b");
    assert_eq!(expiries_of(&mut c, "e", "a"), 1);
    assert_eq!(status_int(&mut c, "e", "remaining"), 10);
}

/// Holds, confirmations, cancels, several tickets, lazy and swept expiries.
fn checkout_workload(c: &mut Connection) {
    ok(
        c,
        &["TICKET.INIT", "shop", "50", "HOLD", "2000", "LIMIT", "4"],
    );
    ok(c, &["TICKET.INIT", "plain", "5"]);
    let mut pipe = redis::pipe();
    for i in 0..10 {
        pipe.cmd("TICKET.CLAIM")
            .arg("shop")
            .arg(format!("u{i}"))
            .arg("COUNT")
            .arg(1 + i % 3)
            .ignore();
    }
    let () = pipe.query(c).unwrap();
    for i in [0, 3, 6] {
        int(c, &["TICKET.CONFIRM", "shop", &format!("u{i}")]);
    }
    int_or_nil(c, &["TICKET.CANCEL", "shop", "u1"]);
    int_or_nil(c, &["TICKET.CANCEL", "shop", "u3"]);
    value(
        c,
        &["TICKET.CLAIM", "shop", "final", "COUNT", "2", "HOLD", "0"],
    );
    value(c, &["TICKET.CLAIM", "shop", "long", "HOLD", "600000"]);
    claim(c, "plain", "p");
    // Swept with no traffic.
    wait_expired(c, "shop", "u2");
    // Lazy: right after a deadline, before any sweep could run.
    config_set(c, "ticket.sweep-interval", "60000");
    claim(c, "shop", "late");
    let until = order(c, "shop", "late").expect("late holds").2;
    wait_until(Duration::from_secs(10), "late's deadline passed", || {
        server_ms(c) > until
    });
    claim(c, "shop", "later");
    config_set(c, "ticket.sweep-interval", "100");
}

#[test]
fn replica_and_aof_reach_the_primarys_digest_after_holds() {
    let mut primary = RedisServer::start_with(&[
        "--repl-diskless-sync-delay",
        "0",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
    ]);
    let port = primary.port().to_string();
    let replica = strict_replica_of(&port);
    let mut p = primary.conn();
    checkout_workload(&mut p);
    wait_expired(&mut p, "shop", "later");
    wait_replicated(&mut p, 1);
    let mut r = replica.conn();
    let want = digest(&mut p);
    assert_eq!(digest(&mut r), want, "the replica differs");
    assert_eq!(log(&mut r, "shop"), log(&mut p, "shop"));
    assert!(ops(&log(&mut p, "shop")).contains(&"confirm".to_string()));
    assert_eq!(
        order(&mut r, "shop", "long").map(|o| o.1),
        Some("held".into())
    );
    drop(p);
    primary.stop();
    primary.start_again();
    let mut p = primary.conn();
    assert_eq!(digest(&mut p), want, "the AOF reload differs");
}

#[test]
fn every_master_of_a_cluster_sweeps_its_own_events() {
    let cluster = Cluster::start(3, 0);
    let mut events: Vec<(String, usize)> = Vec::new();
    for i in 0.. {
        let event = format!("gig-{i}");
        let owner = cluster.owner_of_event(&event);
        if events.iter().filter(|(_, o)| *o == owner).count() < 2 {
            events.push((event, owner));
        }
        if events.len() == 6 {
            break;
        }
    }
    for (event, owner) in &events {
        let mut c = cluster.conn(*owner);
        ok(&mut c, &["TICKET.INIT", event, "5", "HOLD", "300"]);
        assert_eq!(claim(&mut c, event, "a"), 1);
    }
    for (event, owner) in &events {
        let mut c = cluster.conn(*owner);
        wait_expired(&mut c, event, "a");
        assert_eq!(status_int(&mut c, event, "held"), 0);
    }
}

#[test]
fn a_cluster_failover_hands_the_sweep_to_the_new_master() {
    let cluster = Cluster::start(3, 1);
    let event = "failover-gig";
    let master = cluster.owner_of_event(event);
    let mut c = cluster.conn(master);
    // Long enough to outlive the failover as a live hold.
    ok(&mut c, &["TICKET.INIT", event, "5", "HOLD", "4000"]);
    assert_eq!(claim(&mut c, event, "a"), 1);
    let until = order(&mut c, event, "a").expect("a holds").2;
    wait_replicated(&mut c, 1);
    let replica = cluster.replicas_of(master)[0];
    cluster.failover(replica, Duration::from_secs(60));
    let mut n = cluster.conn(replica);
    if server_ms(&mut n) < until {
        assert_eq!(order(&mut n, event, "a").map(|o| o.1), Some("held".into()));
    }
    wait_expired(&mut n, event, "a");
    assert_eq!(expiries_of(&mut n, event, "a"), 1);
    // The old master, now a replica, got the expiry from the new one.
    let mut old = cluster.conn(master);
    ok(&mut old, &["READONLY"]);
    wait_until(SWEPT_WITHIN, "the old master applied the expiry", || {
        expiries_of(&mut old, event, "a") == 1
    });
}
