//! Redis Cluster: the event argument routes every command (its slot is the
//! slot of all four keys), a node that does not own the event answers MOVED,
//! and the owner runs the command with all keys in one slot.

#[path = "support/module.rs"]
mod support;

use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

fn cluster_node() -> RedisServer {
    RedisServer::start_with(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        "--cluster-node-timeout",
        "5000",
    ])
}

fn keyslot(c: &mut Connection, k: &str) -> i64 {
    cmd(&["CLUSTER", "KEYSLOT", k]).query(c).unwrap()
}

fn cluster_info(c: &mut Connection, field: &str) -> Option<String> {
    let text: String = cmd(&["CLUSTER", "INFO"]).query(c).unwrap();
    text.lines().find_map(|l| {
        l.strip_prefix(field)
            .and_then(|r| r.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    })
}

#[test]
fn commands_route_by_the_event_and_keys_share_its_slot() {
    let a = cluster_node();
    let b = cluster_node();
    let mut ca = a.conn();
    let mut cb = b.conn();
    let _: Value = cmd(&["CLUSTER", "ADDSLOTSRANGE", "0", "8191"])
        .query(&mut ca)
        .unwrap();
    let _: Value = cmd(&["CLUSTER", "ADDSLOTSRANGE", "8192", "16383"])
        .query(&mut cb)
        .unwrap();
    let _: Value = cmd(&["CLUSTER", "MEET", "127.0.0.1", &b.port().to_string()])
        .query(&mut ca)
        .unwrap();
    wait_until(
        Duration::from_secs(30),
        "both nodes see a healthy cluster",
        || {
            [&mut ca, &mut cb].into_iter().all(|c| {
                cluster_info(c, "cluster_state").as_deref() == Some("ok")
                    && cluster_info(c, "cluster_known_nodes").as_deref() == Some("2")
            })
        },
    );

    // One event on each node; the event's slot is the slot of its keys.
    let mut on_a = None;
    let mut on_b = None;
    for i in 0.. {
        let event = format!("show-{i}");
        let slot = keyslot(&mut ca, &event);
        for part in ["meta", "pool", "holders", "log"] {
            assert_eq!(keyslot(&mut ca, &key(&event, part)), slot, "{event} {part}");
        }
        if slot < 8192 {
            on_a.get_or_insert((event, slot));
        } else {
            on_b.get_or_insert((event, slot));
        }
        if on_a.is_some() && on_b.is_some() {
            break;
        }
    }
    let (ea, _) = on_a.unwrap();
    let (eb, slot_b) = on_b.unwrap();

    ok(&mut ca, &["TICKET.INIT", &ea, "5"]);
    assert_eq!(claim(&mut ca, &ea, "u"), 1);
    ok(&mut cb, &["TICKET.INIT", &eb, "5"]);
    assert_eq!(claim(&mut cb, &eb, "u"), 1);
    assert_eq!(claim(&mut cb, &eb, "v"), 2);

    // The wrong node redirects every command to the owner of the event.
    let owner_b = format!("{slot_b} 127.0.0.1:{}", b.port());
    for parts in [
        vec!["TICKET.INIT", eb.as_str(), "5"],
        vec!["TICKET.CLAIM", &eb, "w"],
        vec!["TICKET.CANCEL", &eb, "u"],
        vec!["TICKET.HOLDER", &eb, "u"],
        vec!["TICKET.STATUS", &eb],
        vec!["TICKET.OPEN", &eb],
        vec!["TICKET.CLOSE", &eb],
        vec!["TICKET.DROP", &eb, "FORCE"],
    ] {
        let err = cmd(&parts)
            .query::<Value>(&mut ca)
            .expect_err("the wrong node must redirect");
        assert_eq!(err.code(), Some("MOVED"), "{parts:?}: {err}");
        assert_eq!(error_line(&err), format!("MOVED {owner_b}"), "{parts:?}");
    }

    // All of the event's keys live in its slot on its node.
    let in_slot: i64 = cmd(&["CLUSTER", "COUNTKEYSINSLOT", &slot_b.to_string()])
        .query(&mut cb)
        .unwrap();
    let keys: Vec<String> = cmd(&["KEYS", &format!("ticket:{{{eb}}}:*")])
        .query(&mut cb)
        .unwrap();
    assert!(keys.len() >= 3, "{keys:?}");
    assert_eq!(in_slot, keys.len() as i64);
    let on_a_keys: Vec<String> = cmd(&["KEYS", "*"]).query(&mut ca).unwrap();
    assert!(on_a_keys.iter().all(|k| k.contains(&format!("{{{ea}}}"))));
    assert_eq!(replay(&log(&mut cb, &eb)), holders(&mut cb, &eb));
}
