//! End-to-end: `ticketgate-live` given one node of a private Redis Cluster
//! (three masters, a replica each) detects cluster mode, routes each
//! event's `TICKET.STATUS` by the event id to a replica of its own shard,
//! and pushes claims of events living on different masters; Redis reads
//! stay one per event per tick, and the masters serve none of them.

#[path = "support/live.rs"]
mod support;

use std::collections::HashSet;
use std::time::Duration;

use support::*;
use ticketgate_tests::cluster::{info_fields, Cluster};
use ticketgate_tests::wait_until;

const SOON: Duration = Duration::from_secs(15);

fn status_calls(c: &mut redis::Connection) -> u64 {
    let text: String = redis::cmd("INFO").arg("commandstats").query(c).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("cmdstat_ticket.status:calls="))
        .and_then(|rest| rest.split(',').next()?.parse().ok())
        .unwrap_or(0)
}

/// Distinct node ports in a `CLUSTER SLOTS` reply.
fn listed_nodes(v: &redis::Value) -> usize {
    let mut ports = HashSet::new();
    if let redis::Value::Array(ranges) = v {
        for r in ranges {
            if let redis::Value::Array(parts) = r {
                for node in parts.iter().skip(2) {
                    if let redis::Value::Array(n) = node {
                        if let Some(redis::Value::Int(p)) = n.get(1) {
                            ports.insert(*p);
                        }
                    }
                }
            }
        }
    }
    ports.len()
}

#[test]
fn any_node_of_a_cluster_serves_every_event() {
    let cluster = Cluster::start(3, 1);
    let mut cc = cluster.cluster_conn();
    // Events on at least two different masters.
    let events: Vec<String> = (0..12).map(|i| format!("gig{i}")).collect();
    let owners: HashSet<usize> = events.iter().map(|e| cluster.owner_of_event(e)).collect();
    assert!(owners.len() >= 2, "events all on one master");
    for e in &events {
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(4)
            .query(&mut cc)
            .unwrap();
    }
    // Point live at a replica that is not a replica of gig0's master.
    let owner0 = cluster.owner_of_event(&events[0]);
    let entry = cluster
        .replicas()
        .into_iter()
        .find(|r| !cluster.replicas_of(owner0).contains(r))
        .expect("a replica of another master");
    // Redis lists a replica in CLUSTER SLOTS only once gossip has told the
    // node the replica's replication offset; the client maps what it lists.
    wait_until(SOON, "CLUSTER SLOTS lists every replica", || {
        let v: redis::Value = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query(&mut cluster.conn(entry))
            .unwrap();
        listed_nodes(&v) == cluster.len()
    });
    let live = Live::start(&cluster.node(entry).url(), &[]);
    let streams: Vec<SseStream> = events.iter().map(|e| live.subscribe(e, None)).collect();
    for s in &streams {
        assert_eq!(s.stock(SOON).int("remaining"), 4);
    }
    for e in &events {
        let _: i64 = redis::cmd("TICKET.CLAIM")
            .arg(e)
            .arg("fan")
            .query(&mut cc)
            .unwrap();
    }
    for (s, e) in streams.iter().zip(&events) {
        let m = s.until(SOON, "remaining 3", |m| {
            m.event == "stock" && m.int("remaining") == 3
        });
        assert_eq!(m.json()["event"], e.as_str());
    }
    // One read per event per tick (10/s), each on a replica of the event's
    // shard: the masters that take the claims serve none.
    let calls = || -> Vec<u64> {
        (0..cluster.len())
            .map(|i| status_calls(&mut cluster.conn(i)))
            .collect()
    };
    let more: Vec<SseStream> = events.iter().map(|e| live.subscribe(e, None)).collect();
    let before = calls();
    std::thread::sleep(Duration::from_secs(2));
    let delta: Vec<u64> = calls().iter().zip(&before).map(|(a, b)| a - b).collect();
    for m in cluster.masters() {
        assert_eq!(delta[m], 0, "master {m} served STATUS reads: {delta:?}");
    }
    let n = events.len() as u64;
    let total: u64 = delta.iter().sum();
    assert!(
        (2 * n..=30 * n).contains(&total),
        "{delta:?} STATUS reads in 2 s"
    );
    drop(more);
    let mut c = cluster.conn(entry);
    let info: String = redis::cmd("INFO").arg("cluster").query(&mut c).unwrap();
    assert_eq!(info_fields(&info)["cluster_enabled"], "1");
}
