//! The waiting list under replication, failover and cluster, exactly as for
//! holds (issue 10): a replica cut off from its primary keeps showing an
//! offer past its deadline and the list unchanged (replicas never expire or
//! offer by themselves) until it is promoted, whose sweep then expires the
//! offer and offers the tickets to the next in line; in a cluster every
//! master offers its own events' tickets to its own lists, whose keys all
//! live on the event's master; and a manual cluster failover keeps the list,
//! the new master going on offering.
//!
//! Time-based effects are waited for by polling with generous upper bounds;
//! nothing asserts a tight duration.

#[path = "support/module.rs"]
mod support;

use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::wait_until;
use ticketgate_tests::RedisServer;

/// How long an offer may take to be swept and passed on once due.
const SWEPT_WITHIN: Duration = Duration::from_secs(20);

/// The users of the event's `op=offer` log entries, in log order.
fn offered_in_log(c: &mut Connection, event: &str) -> Vec<String> {
    users_of_op(c, event, "offer")
}

fn state(c: &mut Connection, event: &str, user: &str) -> Option<String> {
    order(c, event, user).map(|o| o.1)
}

fn position(c: &mut Connection, event: &str, user: &str) -> Option<i64> {
    int_or_nil(c, &["TICKET.POSITION", event, user])
}

/// Sells out `event` (`total` tickets to `c0..`) and lines up `waiters`.
fn sold_out_with_waiters(c: &mut Connection, event: &str, total: usize, offer_ms: &str) {
    ok(
        c,
        &["TICKET.INIT", event, &total.to_string(), "OFFER", offer_ms],
    );
    for i in 0..total {
        assert_eq!(claim(c, event, &format!("c{i}")), i as i64 + 1);
    }
    for (i, w) in ["w0", "w1", "w2"].iter().enumerate() {
        assert_eq!(int(c, &["TICKET.WAIT", event, w]), i as i64 + 1);
    }
    expect_error(c, &["TICKET.CLAIM", event, "x"], "SOLDOUT");
}

#[test]
fn a_cut_off_replica_keeps_the_offer_and_the_list_until_promoted() {
    let mut primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    // Long enough that the primary cannot expire the offer before it dies.
    sold_out_with_waiters(&mut p, "e", 2, "5000");
    int_or_nil(&mut p, &["TICKET.CANCEL", "e", "c0"]);
    assert_eq!(offered_in_log(&mut p, "e"), ["w0"]);
    assert_eq!(state(&mut p, "e", "w0").as_deref(), Some("held"));
    wait_replicated(&mut p, 1);
    drop(p);
    primary.kill();

    let offers = subscribe_offers(&replica, "e");
    let mut r = replica.conn();
    let (tickets, st, until) = order(&mut r, "e", "w0").expect("the replica shows the offer");
    assert_eq!((tickets, st.as_str()), (vec![1], "held"));
    wait_until(
        Duration::from_secs(15),
        "the offer's deadline passed",
        || server_ms(&mut r) > until + 300,
    );
    // Past the deadline, several sweep intervals gone by: the replica
    // neither expires the offer nor offers the tickets to the next in line.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(state(&mut r, "e", "w0").as_deref(), Some("held"));
    assert_eq!(position(&mut r, "e", "w0"), Some(0), "still offered here");
    assert_eq!(position(&mut r, "e", "w1"), Some(1));
    assert_eq!(position(&mut r, "e", "w2"), Some(2));
    assert_eq!(state(&mut r, "e", "w1"), None);
    assert_eq!(status_int(&mut r, "e", "waiting"), 2);
    assert_eq!(offered_in_log(&mut r, "e"), ["w0"]);
    assert!(users_of_op(&mut r, "e", "expire").is_empty());
    assert!(offers.try_recv().is_err(), "a replica publishes no offer");

    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    wait_until(SWEPT_WITHIN, "the new primary offers to w1", || {
        offered_in_log(&mut r, "e").len() == 2
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(offered_in_log(&mut r, "e"), ["w0", "w1"], "offered once");
    assert_eq!(
        offers.recv_timeout(Duration::from_secs(10)).as_deref(),
        Ok("w1")
    );
    assert!(offers.recv_timeout(Duration::from_millis(300)).is_err());
    assert_eq!(users_of_op(&mut r, "e", "expire"), ["w0"]);
    assert_eq!(state(&mut r, "e", "w0"), None);
    let (tickets, st, until) = order(&mut r, "e", "w1").expect("w1 is offered");
    assert_eq!((tickets, st.as_str()), (vec![1], "held"));
    assert!(until > server_ms(&mut r), "a fresh offer period");
    assert_eq!(position(&mut r, "e", "w1"), Some(0), "offered");
    assert_eq!(position(&mut r, "e", "w0"), None, "expired");
    assert_eq!(position(&mut r, "e", "w2"), Some(1));
    assert_eq!(status_int(&mut r, "e", "waiting"), 1);
    assert_eq!(int(&mut r, &["TICKET.CONFIRM", "e", "w1"]), 1);
    assert_eq!(state(&mut r, "e", "w1").as_deref(), Some("sold"));
}

#[test]
fn every_cluster_master_offers_its_own_events_to_its_own_lists() {
    let cluster = Cluster::start(3, 0);
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3);
    // One event per master, each in a distinct slot.
    let mut events: Vec<(String, usize)> = Vec::new();
    for i in 0.. {
        let event = format!("show-{i}");
        let owner = cluster.owner_of_event(&event);
        if events.iter().all(|(_, o)| *o != owner) {
            events.push((event, owner));
        }
        if events.len() == 3 {
            break;
        }
    }
    for (event, owner) in &events {
        let mut c = cluster.conn(*owner);
        sold_out_with_waiters(&mut c, event, 2, "60000");
    }
    for (event, owner) in &events {
        let mut c = cluster.conn(*owner);
        int_or_nil(&mut c, &["TICKET.CANCEL", event, "c1"]);
        assert_eq!(offered_in_log(&mut c, event), ["w0"], "{event}");
        let (tickets, st, _) = order(&mut c, event, "w0").expect("w0 is offered");
        assert_eq!((tickets, st.as_str()), (vec![2], "held"), "{event}");
        assert_eq!(position(&mut c, event, "w1"), Some(1), "{event}");
        // An offer given back goes to the next in line, on the same master.
        int_or_nil(&mut c, &["TICKET.CANCEL", event, "w0"]);
        assert_eq!(offered_in_log(&mut c, event), ["w0", "w1"], "{event}");
        assert_eq!(state(&mut c, event, "w1").as_deref(), Some("held"));
        assert_eq!(position(&mut c, event, "w2"), Some(1), "{event}");
        assert_eq!(status_int(&mut c, event, "waiting"), 1, "{event}");
    }
    // Every key of an event, its waiting list included, is in the event's
    // slot on the event's master, and on no other node.
    for (event, owner) in &events {
        let slot = cluster.event_slot(event);
        let waiting = key(event, "waiting");
        assert_eq!(cluster.keyslot(&waiting), slot, "{waiting}");
        let pattern = format!("ticket:{{{event}}}:*");
        for m in &masters {
            let mut c = cluster.conn(*m);
            let keys: Vec<String> = cmd(&["KEYS", &pattern]).query(&mut c).unwrap();
            if m == owner {
                assert!(keys.contains(&waiting), "{event} on {m}: {keys:?}");
                for k in &keys {
                    assert_eq!(cluster.keyslot(k), slot, "{k}");
                }
                let in_slot: i64 = cmd(&["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()])
                    .query(&mut c)
                    .unwrap();
                assert_eq!(in_slot, keys.len() as i64, "{event}");
            } else {
                assert!(keys.is_empty(), "{event}'s keys on node {m}: {keys:?}");
                let err = cmd(&["TICKET.POSITION", event, "w2"])
                    .query::<Value>(&mut c)
                    .expect_err("the wrong master must redirect");
                assert_eq!(err.code(), Some("MOVED"), "{event} on {m}: {err}");
            }
        }
    }
    // The cluster client routes the list's commands by the event.
    let mut cc = cluster.cluster_conn();
    for (event, _) in &events {
        let pos: Option<i64> = redis::cmd("TICKET.POSITION")
            .arg(event)
            .arg("w2")
            .query(&mut cc)
            .unwrap();
        assert_eq!(pos, Some(1), "{event}");
    }
}

#[test]
fn a_cluster_failover_keeps_the_list_and_the_new_master_goes_on_offering() {
    let cluster = Cluster::start(3, 1);
    let event = "failover-show";
    let master = cluster.owner_of_event(event);
    // An event on the same master whose offer falls due around the failover.
    let short = (0..)
        .map(|i| format!("failover-short-{i}"))
        .find(|e| cluster.owner_of_event(e) == master)
        .unwrap();
    let mut c = cluster.conn(master);
    sold_out_with_waiters(&mut c, event, 1, "60000");
    int_or_nil(&mut c, &["TICKET.CANCEL", event, "c0"]);
    assert_eq!(offered_in_log(&mut c, event), ["w0"]);
    sold_out_with_waiters(&mut c, &short, 1, "3000");
    int_or_nil(&mut c, &["TICKET.CANCEL", &short, "c0"]);
    assert_eq!(offered_in_log(&mut c, &short), ["w0"]);
    wait_replicated(&mut c, 1);
    let replica = cluster.replicas_of(master)[0];
    cluster.failover(replica, Duration::from_secs(60));

    let mut n = cluster.conn(replica);
    assert_eq!(state(&mut n, event, "w0").as_deref(), Some("held"));
    assert_eq!(position(&mut n, event, "w1"), Some(1));
    assert_eq!(position(&mut n, event, "w2"), Some(2));
    assert_eq!(status_int(&mut n, event, "waiting"), 2);
    // The new master serves the list: a returned offer goes to the head.
    int_or_nil(&mut n, &["TICKET.CANCEL", event, "w0"]);
    assert_eq!(offered_in_log(&mut n, event), ["w0", "w1"]);
    assert_eq!(state(&mut n, event, "w1").as_deref(), Some("held"));
    assert_eq!(position(&mut n, event, "w2"), Some(1));
    assert_eq!(int(&mut n, &["TICKET.WAIT", event, "w3"]), 2);
    // The short offer expires (before or after the failover) and is passed
    // on exactly once: one master swept it, the other only applied it.
    wait_until(SWEPT_WITHIN, "the short offer is passed on", || {
        offered_in_log(&mut n, &short).len() == 2
    });
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(offered_in_log(&mut n, &short), ["w0", "w1"]);
    assert_eq!(users_of_op(&mut n, &short, "expire"), ["w0"]);
    assert_eq!(state(&mut n, &short, "w1").as_deref(), Some("held"));
    assert_eq!(position(&mut n, &short, "w2"), Some(1));
    // The old master, now its replica, follows.
    wait_replicated(&mut n, 1);
    let mut old = cluster.conn(master);
    ok(&mut old, &["READONLY"]);
    wait_until(SWEPT_WITHIN, "the old master applied the offer", || {
        offered_in_log(&mut old, event).len() == 2
    });
    assert_eq!(position(&mut old, event, "w3"), Some(2));
    assert_eq!(offered_in_log(&mut old, &short), ["w0", "w1"]);
    assert_eq!(digest(&mut old), digest(&mut n));
}
