//! Face-value resale against real redis-servers (docs/design.md "After
//! the sale"): RESELL and UNLIST with every refusal (each leaving `DEBUG
//! DIGEST` and every key as they were), a claim that takes a listed
//! ticket only after the free ones, the buyer's confirm (`op=resold`, a
//! generation up) and a buyer's cancel (back on the list), with a strict
//! replica reaching the primary's digest; and a sold-out seated hall
//! whose 200 listings go to 400 waiting parties that confirm or let their
//! short offers expire: each listed seat is resold at most once, to one
//! buyer, and the stock never moves.

#[path = "support/module.rs"]
mod support;

use std::collections::BTreeMap;

use redis::Connection;
use support::*;
use ticketgate_tests::RedisServer;

/// The values of the log's entries of op `op`, as field -> value maps.
fn records(c: &mut Connection, event: &str, op: &str) -> Vec<BTreeMap<String, String>> {
    log(c, event)
        .into_iter()
        .filter(|(_, fields)| {
            fields.first().map(|(k, v)| (k.as_str(), v.as_str())) == Some(("op", op))
        })
        .map(|(_, fields)| fields.into_iter().collect())
        .collect()
}

/// A record's tickets: `ticket` (one) or comma-separated `tickets`.
fn numbers(record: &BTreeMap<String, String>) -> Vec<i64> {
    let text = record.get("tickets").or(record.get("ticket"));
    let text = text.expect("a record with tickets");
    text.split(',')
        .map(|t| t.parse().expect("a ticket"))
        .collect()
}

#[test]
fn resale_refuses_without_a_trace_sells_once_and_replicates() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let c = &mut primary.conn();
    ok(
        c,
        &["TICKET.INIT", "e", "6", "LIMIT", "4", "HOLD", "600000"],
    );
    let sold = |c: &mut Connection, user: &str, n: &str| {
        let ask = ["TICKET.CLAIM", "e", user, "COUNT", n, "HOLD", "0"];
        int_array(c, &ask)
    };
    assert_eq!(sold(c, "alice", "2"), [1, 2]);
    assert_eq!(sold(c, "bob", "2"), [3, 4]);
    assert_eq!(int(c, &["TICKET.CLAIM", "e", "held"]), 5);
    ok(c, &["TICKET.SCAN", "e", "3", "1"]);

    expect_error(c, &["TICKET.RESELL", "e", "nobody"], "NOHOLD");
    expect_error(c, &["TICKET.RESELL", "e", "held"], "NOTSOLD");
    let line = expect_error(
        c,
        &["TICKET.RESELL", "e", "alice", "TICKETS", "3"],
        "NOTSOLD",
    );
    assert_eq!(line, "NOTSOLD ticket 3 is not the seller's");
    expect_error(c, &["TICKET.RESELL", "e", "bob"], "USED");
    expect_error(c, &["TICKET.RESELL", "e", "alice", "TICKETS"], "ERR");
    expect_error(c, &["TICKET.RESELL", "e", "alice", "COUNT", "1"], "ERR");
    expect_error(c, &["TICKET.RESELL", "nope", "alice"], "NOEVENT");
    expect_error(
        c,
        &["TICKET.UNLIST", "e", "alice", "TICKETS", "1"],
        "NOTLISTED",
    );

    let listed = ["TICKET.RESELL", "e", "alice", "TICKETS", "2"];
    assert_eq!(int(c, &listed), 1);
    let line = expect_error(c, &listed, "LISTED");
    assert_eq!(line, "LISTED ticket 2 is listed already");
    expect_error(c, &["TICKET.TRANSFER", "e", "alice", "zoe"], "LISTED");
    expect_error(c, &["TICKET.CANCEL", "e", "alice"], "LISTED");
    let line = expect_error(c, &["TICKET.SCAN", "e", "2", "1"], "NOTSOLD");
    assert_eq!(line, "NOTSOLD ticket 2 is listed for resale");
    expect_error(
        c,
        &["TICKET.UNLIST", "e", "bob", "TICKETS", "2"],
        "NOTLISTED",
    );
    assert_eq!(status_int(c, "e", "resale"), 1);
    assert_eq!(status_int(c, "e", "remaining"), 1);
    assert_eq!(value(c, &["TICKET.SEATMAP", "e"]), redis::Value::Nil);

    // The house's ticket 6 goes first; then alice's listed ticket 2.
    assert_eq!(int(c, &["TICKET.CLAIM", "e", "carl"]), 6);
    assert_eq!(int(c, &["TICKET.CLAIM", "e", "dora"]), 2);
    expect_error(
        c,
        &["TICKET.UNLIST", "e", "alice", "TICKETS", "2"],
        "NOTLISTED",
    );
    assert_eq!(int(c, &["TICKET.UNLIST", "e", "alice"]), 0);
    expect_error(c, &["TICKET.CLAIM", "e", "eve"], "SOLDOUT");
    // dora cancels: back on alice's list, not free.
    assert_eq!(int_or_nil(c, &["TICKET.CANCEL", "e", "dora"]), Some(2));
    assert_eq!(
        (
            status_int(c, "e", "remaining"),
            status_int(c, "e", "resale")
        ),
        (0, 1)
    );
    assert_eq!(int(c, &["TICKET.CLAIM", "e", "dora"]), 2);
    assert_eq!(int(c, &["TICKET.CONFIRM", "e", "dora"]), 1);
    assert_eq!(order(c, "e", "alice").map(|o| o.0), Some(vec![1]));
    assert_eq!(order(c, "e", "dora").map(|o| o.0), Some(vec![2]));
    expect_error(c, &["TICKET.SCAN", "e", "2", "1"], "STALE");
    ok(c, &["TICKET.SCAN", "e", "2", "2"]);
    let resold = records(c, "e", "resold");
    assert_eq!(resold.len(), 1);
    let r = &resold[0];
    let seen = (r["from"].as_str(), r["to"].as_str(), numbers(r));
    assert_eq!(seen, ("alice", "dora", vec![2]));
    assert_eq!(status_int(c, "e", "total"), 6);
    assert_eq!(status_int(c, "e", "remaining"), 0);
    assert_eq!(status_int(c, "e", "claimed"), 6);

    // UNLIST takes back what nobody holds; resale leaves STATUS with it.
    assert_eq!(int(c, &["TICKET.RESELL", "e", "alice"]), 1);
    assert_eq!(int(c, &["TICKET.UNLIST", "e", "alice"]), 1);
    assert!(!status(c, "e").contains_key("resale"));
    assert_eq!(records(c, "e", "unlist").len(), 1);

    wait_replicated(c, 1);
    assert_eq!(
        digest(c),
        digest(&mut replica.conn()),
        "the replica differs"
    );
}

#[test]
fn a_sold_out_hall_resells_each_listed_seat_at_most_once() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let c = &mut primary.conn();
    let listed = resale_hall(c, "h", 43);

    // Each resold seat was listed by its seller, and resold once.
    let mut resold = BTreeMap::new();
    for r in records(c, "h", "resold") {
        for seat in numbers(&r) {
            assert_eq!(listed.get(&seat), Some(&r["from"]), "seat {seat}");
            assert!(
                resold.insert(seat, r["to"].clone()).is_none(),
                "{seat} twice"
            );
        }
    }
    assert!(!resold.is_empty(), "nobody bought");
    let expired = log(c, "h")
        .iter()
        .filter(|e| field(e, "op") == Some("expire"))
        .count();
    assert!(expired > 0, "no offer of a listed seat expired");
    // Every seat has exactly one owner, the buyer's when resold.
    let mut owners = BTreeMap::new();
    for (user, _) in holders_text(c, "h") {
        for seat in order(c, "h", &user).expect("an order").0 {
            assert!(owners.insert(seat, user.clone()).is_none(), "{seat} twice");
        }
    }
    assert_eq!(owners.len(), 400);
    for (seat, buyer) in &resold {
        assert_eq!(owners.get(seat), Some(buyer));
    }
    let still = listed.len() - resold.len();
    let reported = status(c, "h").get("resale").map_or(0, |v| match v {
        redis::Value::Int(n) => *n as usize,
        other => panic!("resale {other:?}"),
    });
    assert_eq!(reported, still);
    let map = match value(c, &["TICKET.SEATMAP", "h"]) {
        redis::Value::BulkString(b) => b,
        other => panic!("SEATMAP {other:?}"),
    };
    assert_eq!(map.iter().filter(|b| **b == b'r').count(), still);
    assert!(map.iter().all(|b| matches!(b, b's' | b'r')), "no free seat");
    assert_eq!(status_int(c, "h", "claimed"), 400);

    wait_replicated(c, 1);
    assert_eq!(
        digest(c),
        digest(&mut replica.conn()),
        "the replica differs"
    );
}

/// The holders hash's users (their values are ticket lists).
fn holders_text(c: &mut Connection, event: &str) -> BTreeMap<String, String> {
    redis::cmd("HGETALL")
        .arg(key(event, "holders"))
        .query(c)
        .expect("HGETALL holders")
}
