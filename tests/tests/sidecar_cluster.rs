//! End-to-end: the sidecar pointed at one node of a three-master Redis
//! Cluster drains the events of every master (found by SCAN on each master
//! and by the cluster-wide `ticket:events` channel), and follows a slot
//! migration of an event to another master while claims continue.

#[path = "support/sidecar.rs"]
mod support;

use std::time::Duration;

use support::*;
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::fresh_database;

fn claims(c: &mut redis::Connection, event: &str, prefix: &str, n: usize) {
    let mut p = redis::pipe();
    for i in 0..n {
        p.cmd("TICKET.CLAIM").arg(event).arg(format!("{prefix}{i}"));
    }
    let _: Vec<i64> = p.query(c).unwrap();
}

#[test]
fn drains_every_master_and_follows_a_slot_migration() {
    let cluster = Cluster::start(3, 0);
    let nodes = cluster.nodes();
    let db = fresh_database("sc_cluster");
    migrate(&db);
    let events: Vec<String> = (0..6).map(|i| format!("c{i}")).collect();
    let owners: Vec<usize> = events.iter().map(|e| cluster.owner_of_event(e)).collect();
    let mut distinct = owners.clone();
    distinct.sort();
    distinct.dedup();
    assert!(
        distinct.len() >= 2,
        "events should span masters: {owners:?}"
    );

    // half the events exist before the sidecar starts (SCAN of every master)
    for (e, &o) in events.iter().zip(&owners).take(3) {
        let mut c = nodes[o].conn();
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(1000)
            .query(&mut c)
            .unwrap();
        claims(&mut c, e, "early", 30);
    }
    let sc = Sidecar::start(&nodes[0].url(), &db, &[]);
    // the other half while it runs (ticket:events is cluster-wide)
    for (e, &o) in events.iter().zip(&owners).skip(3) {
        let mut c = nodes[o].conn();
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(1000)
            .query(&mut c)
            .unwrap();
        claims(&mut c, e, "late", 40);
        let _: Option<i64> = redis::cmd("TICKET.CANCEL")
            .arg(e)
            .arg("late3")
            .query(&mut c)
            .unwrap();
    }
    for (e, &o) in events.iter().zip(&owners) {
        let mut c = nodes[o].conn();
        wait_synced(&mut c, &db, e, Duration::from_secs(60), &|| sc.log());
        assert!(mysql_view(&db, e).unwrap().conflicts.is_empty());
    }
    let (st, out) = sidecar_cmd(&nodes[1].url(), &db, &["reconcile"]);
    assert!(st.success(), "{out}");
    assert!(out.contains("6 event(s)"), "{out}");

    // move event c0's slot to another master, then keep claiming there
    let e = &events[0];
    let src = owners[0];
    let dst = (src + 1) % 3;
    let mut s = nodes[src].conn();
    let mut d = nodes[dst].conn();
    let slot: u16 = redis::cmd("CLUSTER")
        .arg("KEYSLOT")
        .arg(format!("ticket:{{{e}}}:log"))
        .query(&mut s)
        .unwrap();
    let src_id: String = redis::cmd("CLUSTER").arg("MYID").query(&mut s).unwrap();
    let dst_id: String = redis::cmd("CLUSTER").arg("MYID").query(&mut d).unwrap();
    let _: () = redis::cmd("CLUSTER")
        .arg("SETSLOT")
        .arg(slot)
        .arg("IMPORTING")
        .arg(&src_id)
        .query(&mut d)
        .unwrap();
    let _: () = redis::cmd("CLUSTER")
        .arg("SETSLOT")
        .arg(slot)
        .arg("MIGRATING")
        .arg(&dst_id)
        .query(&mut s)
        .unwrap();
    let keys: Vec<String> = redis::cmd("CLUSTER")
        .arg("GETKEYSINSLOT")
        .arg(slot)
        .arg(100)
        .query(&mut s)
        .unwrap();
    assert!(keys.len() >= 3, "{keys:?}");
    let _: () = redis::cmd("MIGRATE")
        .arg("127.0.0.1")
        .arg(nodes[dst].port())
        .arg("")
        .arg(0)
        .arg(10_000)
        .arg("KEYS")
        .arg(&keys)
        .query(&mut s)
        .unwrap();
    for n in nodes {
        let mut c = n.conn();
        let _: () = redis::cmd("CLUSTER")
            .arg("SETSLOT")
            .arg(slot)
            .arg("NODE")
            .arg(&dst_id)
            .query(&mut c)
            .unwrap();
    }
    assert_eq!(cluster.owner_of_event(e), dst);
    claims(&mut d, e, "moved", 25);
    wait_synced(&mut d, &db, e, Duration::from_secs(60), &|| sc.log());
    let view = mysql_view(&db, e).unwrap();
    assert!(view.conflicts.is_empty(), "{:?}", view.conflicts);
    assert_eq!(view.active.len(), 55);
}
