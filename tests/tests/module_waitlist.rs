//! The waiting list against a real redis-server: returned tickets go to the
//! head of the FIFO list as held offers inside the command that freed them
//! (a cancel) or the sweep that expired them; nobody claims past the list;
//! every offered user is published once on `ticket:{E}:offers`; a strict
//! replica and an AOF reload reach the primary's digest; one command makes
//! at most `ticket.sweep-max` offers and the sweep the rest; and a list of a
//! million users works (its memory per waiting user is printed).

#[path = "support/module.rs"]
mod support;

use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

/// Sends one command per user in one pipeline; returns the integer replies.
fn pipelined(c: &mut Connection, command: &[&str], users: &[String]) -> Vec<i64> {
    let mut pipe = redis::pipe();
    for user in users {
        let (head, tail) = command.split_at(2);
        pipe.cmd(head[0]).arg(head[1]).arg(user).arg(tail);
    }
    pipe.query(c).unwrap()
}

fn users(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{prefix}{i}")).collect()
}

/// A primary with an AOF written at every command (so a restart reloads
/// it) and a strict replica of it, in sync.
fn aof_primary_with_replica() -> (RedisServer, RedisServer) {
    let primary = RedisServer::start_with(&[
        "--repl-diskless-sync-delay",
        "0",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
    ]);
    let replica = strict_replica_of(&primary.port().to_string());
    (primary, replica)
}

/// The users of the event's `op=offer` log entries, in log order.
fn offered_in_log(c: &mut Connection, event: &str) -> Vec<String> {
    users_of_op(c, event, "offer")
}

#[test]
fn returns_go_to_the_list_in_order_and_replicas_and_aof_agree() {
    let (mut primary, replica) = aof_primary_with_replica();
    let offers = subscribe_offers(&primary, "e");
    let mut p = primary.conn();
    ok(&mut p, &["TICKET.INIT", "e", "100", "OFFER", "3000"]);
    let buyers = users("c", 0..100);
    assert_eq!(
        pipelined(&mut p, &["TICKET.CLAIM", "e"], &buyers).len(),
        100
    );
    let waiters = users("w", 0..500);
    let positions = pipelined(&mut p, &["TICKET.WAIT", "e"], &waiters);
    assert_eq!(positions, (1..=500).collect::<Vec<i64>>());
    assert_eq!(int(&mut p, &["TICKET.WAIT", "e", "w7"]), 8, "idempotent");
    expect_error(&mut p, &["TICKET.WAIT", "e", "c1"], "HOLDING");
    expect_error(&mut p, &["TICKET.WAIT", "e", "x", "COUNT", "2"], "LIMIT");
    assert_eq!(status_int(&mut p, "e", "waiting"), 500);

    pipelined(&mut p, &["TICKET.CANCEL", "e"], &buyers[..50]);
    assert_eq!(offered_in_log(&mut p, "e"), waiters[..50]);
    for w in &waiters[..50] {
        let position = int_or_nil(&mut p, &["TICKET.POSITION", "e", w]);
        assert_eq!(position, Some(0), "{w} holds an offer");
    }
    assert_eq!(int_or_nil(&mut p, &["TICKET.POSITION", "e", "c99"]), None);
    assert_eq!(int(&mut p, &["TICKET.POSITION", "e", "w50"]), 1);
    expect_error(&mut p, &["TICKET.CLAIM", "e", "x"], "SOLDOUT");
    expect_error(&mut p, &["TICKET.CLAIM", "e", "w60"], "SOLDOUT");
    assert_eq!(claim(&mut p, "e", "w0"), 1, "an offer is claimed back");
    assert_eq!(status_int(&mut p, "e", "held"), 50);

    // Half confirm, half let the offer expire: the next 25 are offered.
    pipelined(&mut p, &["TICKET.CONFIRM", "e"], &waiters[..25]);
    wait_until(Duration::from_secs(20), "the next 25 are offered", || {
        offered_in_log(&mut p, "e").len() == 75
    });
    assert_eq!(offered_in_log(&mut p, "e"), waiters[..75]);
    assert_eq!(status_int(&mut p, "e", "waiting"), 425);
    let offered = |c: &mut Connection| -> Vec<Option<i64>> {
        let positions = waiters[..76].iter();
        positions
            .map(|w| int_or_nil(c, &["TICKET.POSITION", "e", w]))
            .collect()
    };
    // Bought (25) and expired (25): nothing; offered now (25): 0; then 1.
    let mut want_positions = vec![None; 50];
    want_positions.extend([Some(0); 25]);
    want_positions.push(Some(1));
    assert_eq!(offered(&mut p), want_positions);
    assert_eq!(int(&mut p, &["TICKET.LEAVE", "e", "w499"]), 1);
    assert_eq!(int(&mut p, &["TICKET.LEAVE", "e", "w499"]), 0);

    let published: Vec<String> = (0..75)
        .map(|_| offers.recv_timeout(Duration::from_secs(10)).unwrap())
        .collect();
    assert_eq!(published, waiters[..75]);
    assert!(offers.recv_timeout(Duration::from_millis(300)).is_err());

    wait_replicated(&mut p, 1);
    let want = digest(&mut p);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r), want, "the replica differs");
    assert_eq!(int(&mut r, &["TICKET.POSITION", "e", "w75"]), 1);
    assert_eq!(offered(&mut r), want_positions, "the replica's positions");
    drop(p);
    primary.stop();
    primary.start_again();
    let mut p = primary.conn();
    assert_eq!(digest(&mut p), want, "the AOF reload differs");
    assert_eq!(offered(&mut p), want_positions, "positions after reload");
}

/// One row of six seats (ids 1-6, center 3.5).
const ROW: &str = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":6}]}]}"#;

/// A seated event's waiting list: a returned block goes to the first party
/// that fits together (a party of 4 keeps its place at 1, the party of 2
/// behind it is offered), and the offered party's `POSITION` is 0 — on the
/// primary, a strict replica and after an AOF reload (digests equal) —
/// until it buys, when it is nil and the offer's mark is gone.
#[test]
fn a_seated_party_offer_answers_position_0_everywhere() {
    let (mut primary, replica) = aof_primary_with_replica();
    let mut p = primary.conn();
    ok(
        &mut p,
        &["TICKET.INIT", "s", "6", "LIMIT", "4", "SEATS", ROW],
    );
    let taken = value(&mut p, &["TICKET.CLAIM", "s", "a", "COUNT", "3"]);
    assert_eq!(taken, int_array(&[1, 2, 3]));
    value(&mut p, &["TICKET.CLAIM", "s", "b", "COUNT", "3"]);
    assert_eq!(int(&mut p, &["TICKET.WAIT", "s", "four", "COUNT", "4"]), 1);
    assert_eq!(int(&mut p, &["TICKET.WAIT", "s", "two", "COUNT", "2"]), 2);
    assert_eq!(int_or_nil(&mut p, &["TICKET.CANCEL", "s", "a"]), Some(1));
    assert_eq!(offered_in_log(&mut p, "s"), ["two"]);
    // The pair together, held: seat 1 stays free (the rule's orphan).
    let map = value(&mut p, &["TICKET.SEATMAP", "s"]);
    assert_eq!(map, Value::BulkString(b".hhsss".to_vec()));
    let positions = |c: &mut Connection| {
        ["two", "four", "a"].map(|u| int_or_nil(c, &["TICKET.POSITION", "s", u]))
    };
    assert_eq!(positions(&mut p), [Some(0), Some(1), None]);
    expect_error(&mut p, &["TICKET.WAIT", "s", "two"], "HOLDING");

    wait_replicated(&mut p, 1);
    let offered_digest = digest(&mut p);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r), offered_digest, "the replica differs");
    assert_eq!(positions(&mut r), [Some(0), Some(1), None]);
    drop(p);
    primary.stop();
    primary.start_again();
    let mut p = primary.conn();
    assert_eq!(digest(&mut p), offered_digest, "the AOF reload differs");
    assert_eq!(positions(&mut p), [Some(0), Some(1), None]);

    assert_eq!(int(&mut p, &["TICKET.CONFIRM", "s", "two"]), 2);
    assert_eq!(positions(&mut p), [None, Some(1), None]);
    assert!(
        !exists(&mut p, &key("s", "wants")),
        "the offer's mark is gone"
    );
    wait_for_link(&replica);
    wait_replicated(&mut p, 1);
    assert_eq!(digest(&mut r), digest(&mut p), "the replica differs");
    assert_eq!(positions(&mut r), [None, Some(1), None]);
}

fn int_array(values: &[i64]) -> Value {
    Value::Array(values.iter().map(|v| Value::Int(*v)).collect())
}

#[test]
fn a_million_waiting_users() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "big", "1"]);
    claim(&mut c, "big", "buyer");
    const N: usize = 1_000_000;
    for batch in 0..100 {
        let chunk = users("user:", batch * N / 100..(batch + 1) * N / 100);
        let positions = pipelined(&mut c, &["TICKET.WAIT", "big"], &chunk);
        assert_eq!(
            positions.last().copied(),
            Some(((batch + 1) * N / 100) as i64)
        );
    }
    assert_eq!(status_int(&mut c, "big", "waiting"), N as i64);
    assert_eq!(
        int(&mut c, &["TICKET.POSITION", "big", "user:500000"]),
        500_001
    );
    let bytes: i64 = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key("big", "waiting"))
        .arg("SAMPLES")
        .arg("0")
        .query(&mut c)
        .unwrap();
    println!(
        "waiting list of {N}: {bytes} bytes, {:.1} bytes per waiting user",
        bytes as f64 / N as f64
    );
    int_or_nil(&mut c, &["TICKET.CANCEL", "big", "buyer"]);
    let offered = value(&mut c, &["TICKET.ORDER", "big", "user:0"]);
    assert!(matches!(offered, Value::Array(_)), "the head is offered");
    assert_eq!(int(&mut c, &["TICKET.POSITION", "big", "user:1"]), 1);
}

/// A plain waiting list, too: one command makes at most `ticket.sweep-max`
/// offers (counted inside the same `MULTI` as the `OPEN`, so no sweep can
/// have run in between), and the sweep carries on with the rest, in order.
#[test]
fn an_open_makes_at_most_sweep_max_offers_and_the_sweep_the_rest() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "10", "OFFER", "60000"]);
    ok(&mut c, &["TICKET.CLOSE", "e"]);
    let waiting = users("w", 0..10);
    let places = pipelined(&mut c, &["TICKET.WAIT", "e"], &waiting);
    assert_eq!(places, (1..=10).collect::<Vec<i64>>());
    ok(&mut c, &["CONFIG", "SET", "ticket.sweep-max", "3"]);
    let (_, log): (Value, redis::streams::StreamRangeReply) = redis::pipe()
        .atomic()
        .cmd("TICKET.OPEN")
        .arg("e")
        .cmd("XRANGE")
        .arg("ticket:{e}:log")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    let by_open = log
        .ids
        .iter()
        .filter(|entry| entry.contains_key("offer") && !entry.contains_key("op"))
        .count();
    assert_eq!(by_open, 3, "OPEN itself made sweep-max offers");
    wait_until(Duration::from_secs(20), "the sweep offers the rest", || {
        offered_in_log(&mut c, "e").len() == 10
    });
    assert_eq!(offered_in_log(&mut c, "e"), waiting);
}
