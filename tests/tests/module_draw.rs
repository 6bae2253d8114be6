//! The fair draw at open against a real redis-server (docs/design.md "The
//! draw"): entrants join before the draw (logged, `-1`), `TICKET.OPEN` (or `OPENS`, with no command at
//! all) reveals the seed whose SHA-256 INIT published, and the offers
//! follow the order this test recomputes from the revealed seed with its
//! own HMAC-SHA256 (not the module's code); `ADMIT` spreads them over
//! seconds; expired offers pass on in rank order; a strict replica and an
//! AOF reload reach the primary's digest; a failover before the draw draws
//! with the same seed on the new primary, after it the order carries on
//! with no second draw; an OPEN before 100,000 entrants never stalls Redis;
//! bad input changes nothing.
//!
//! Time-based effects are waited for by polling with generous bounds.

#[path = "support/module.rs"]
mod support;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use hmac::{Hmac, Mac};
use redis::Connection;
use sha2::{Digest, Sha256};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

/// An entrant's rank, written here from the definition: the first 6 bytes,
/// big-endian, of HMAC-SHA256(key = seed, message = user id).
fn rank(seed: &[u8], user: &str) -> u64 {
    let mut mac = Hmac::<Sha256>::new_from_slice(seed).expect("any key length");
    mac.update(user.as_bytes());
    let tag = mac.finalize().into_bytes();
    tag[..6].iter().fold(0, |acc, b| (acc << 8) | u64::from(*b))
}

/// `users` in drawn order: by rank, ties by user id bytes.
fn drawn_order(seed: &[u8], users: &[String]) -> Vec<String> {
    let mut ranked: Vec<(u64, &String)> = users.iter().map(|u| (rank(seed, u), u)).collect();
    ranked.sort();
    ranked.into_iter().map(|(_, u)| u.clone()).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn users(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Sends `TICKET.WAIT event user` for each user in one pipeline.
fn enter_all(c: &mut Connection, event: &str, users: &[String]) -> Vec<i64> {
    let mut pipe = redis::pipe();
    for user in users {
        pipe.cmd("TICKET.WAIT").arg(event).arg(user);
    }
    pipe.query(c).expect("WAIT pipeline")
}

/// The log's entries with `op`.
fn entries_of(c: &mut Connection, event: &str, op: &str) -> Vec<Entry> {
    log(c, event)
        .into_iter()
        .filter(|e| field(e, "op") == Some(op))
        .collect()
}

fn offered(c: &mut Connection, event: &str) -> Vec<String> {
    users_of_op(c, event, "offer")
}

/// The seed revealed by the event's one `op=draw`, checked against the
/// commitment INIT logged and STATUS shows.
fn revealed_seed(c: &mut Connection, event: &str) -> Vec<u8> {
    let draws = entries_of(c, event, "draw");
    assert_eq!(draws.len(), 1, "exactly one draw: {draws:?}");
    let seed = field(&draws[0], "seed")
        .expect("the draw's seed")
        .to_owned();
    let init = entries_of(c, event, "init");
    let commitment = field(&init[0], "draw").expect("init's draw").to_owned();
    assert_eq!(sha256_hex(&unhex(&seed)), commitment, "SHA-256(seed)");
    assert_eq!(status_text(c, event, "draw"), Some(commitment));
    assert_eq!(status_text(c, event, "seed"), Some(seed.clone()));
    unhex(&seed)
}

fn wait_for_draw(c: &mut Connection, event: &str) {
    wait_until(Duration::from_secs(20), "the draw", || {
        !entries_of(c, event, "draw").is_empty()
    });
}

#[test]
fn offers_follow_the_recomputed_rank_and_replicas_and_aof_agree() {
    let mut primary = RedisServer::start_with(&[
        "--repl-diskless-sync-delay",
        "0",
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
    ]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    let init = [
        "TICKET.INIT",
        "d",
        "100",
        "HOLD",
        "60000",
        "OFFER",
        "3000",
        "LIMIT",
        "2",
        "DRAW",
    ];
    ok(&mut p, &init);
    assert_eq!(
        status_text(&mut p, "d", "status").as_deref(),
        Some("closed")
    );
    let commitment = status_text(&mut p, "d", "draw").expect("the commitment");
    assert_eq!(commitment.len(), 64);
    assert_eq!(status_text(&mut p, "d", "seed"), None, "secret until drawn");
    let init_entry = &entries_of(&mut p, "d", "init")[0];
    assert_eq!(field(init_entry, "draw"), Some(commitment.as_str()));
    assert!(!log(&mut p, "d")
        .iter()
        .any(|e| e.1.iter().any(|(_, v)| v.len() == 64 && *v != commitment)));

    let entrants = users("u", 2000);
    assert!(enter_all(&mut p, "d", &entrants).iter().all(|r| *r == -1));
    assert_eq!(int(&mut p, &["TICKET.WAIT", "d", "u5"]), -1, "twice: -1");
    assert_eq!(int(&mut p, &["TICKET.WAIT", "d", "pair", "COUNT", "2"]), -1);
    assert_eq!(int(&mut p, &["TICKET.POSITION", "d", "u5"]), -1);
    assert_eq!(
        int_or_nil(&mut p, &["TICKET.POSITION", "d", "nobody"]),
        None
    );
    assert_eq!(entries_of(&mut p, "d", "enter").len(), 2001);
    expect_error(&mut p, &["TICKET.CLAIM", "d", "x"], "NOTOPEN");
    let leavers: Vec<String> = users("u", 10).into_iter().skip(5).collect();
    for u in &leavers {
        assert_eq!(int(&mut p, &["TICKET.LEAVE", "d", u]), 1);
    }
    assert_eq!(users_of_op(&mut p, "d", "leave"), leavers);

    ok(&mut p, &["TICKET.OPEN", "d"]);
    let seed = revealed_seed(&mut p, "d");
    let mut everyone: Vec<String> = entrants
        .iter()
        .filter(|u| !leavers.contains(u))
        .cloned()
        .collect();
    everyone.push("pair".into());
    let expected = drawn_order(&seed, &everyone);
    let first = offered(&mut p, "d");
    assert!(!first.is_empty() && first.len() <= 100);
    assert_eq!(first, expected[..first.len()], "offers in rank order");
    expect_error(&mut p, &["TICKET.CLAIM", "d", "x"], "QUEUE");
    let line = expect_error(
        &mut p,
        &["TICKET.CLAIM", "d", &expected[first.len()]],
        "QUEUE",
    );
    assert!(
        line.contains("sells through its queue: TICKET.WAIT"),
        "{line}"
    );
    assert!(order(&mut p, "d", &first[0]).is_some(), "the offer is held");
    assert_eq!(
        int(&mut p, &["TICKET.POSITION", "d", &expected[first.len()]]),
        1
    );
    let waiting = status_int(&mut p, "d", "waiting");
    assert_eq!(int(&mut p, &["TICKET.WAIT", "d", "late"]), waiting + 1);

    // Half confirm, the rest expire: their tickets go on down the rank.
    for u in &first[..first.len() / 2] {
        int(&mut p, &["TICKET.CONFIRM", "d", u]);
    }
    wait_until(Duration::from_secs(20), "expired offers pass on", || {
        offered(&mut p, "d").len() > first.len() + first.len() / 4
    });
    let now = offered(&mut p, "d");
    assert_eq!(now, expected[..now.len()], "passed on in rank order");

    wait_replicated(&mut p, 1);
    let want = digest(&mut p);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r), want, "the replica differs");
    drop(p);
    primary.stop();
    primary.start_again();
    let mut p = primary.conn();
    assert_eq!(digest(&mut p), want, "the AOF reload differs");
    assert_eq!(revealed_seed(&mut p, "d"), seed);
}

/// Offers of each second counted from the draw's `at`.
fn offers_per_second(c: &mut Connection, event: &str) -> BTreeMap<i64, usize> {
    let drawn_at: i64 = field(&entries_of(c, event, "draw")[0], "at")
        .and_then(|a| a.parse().ok())
        .expect("the draw's at");
    let mut seconds = BTreeMap::new();
    for e in entries_of(c, event, "offer") {
        let at: i64 = field(&e, "at").and_then(|a| a.parse().ok()).expect("at");
        *seconds.entry((at - drawn_at) / 1000).or_insert(0) += 1;
    }
    seconds
}

#[test]
fn admit_spreads_the_offers_over_seconds() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let init = [
        "TICKET.INIT",
        "a",
        "1500",
        "HOLD",
        "60000",
        "DRAW",
        "ADMIT",
        "500",
    ];
    ok(&mut c, &init);
    assert_eq!(status_int_or(&mut c, "a", "admit"), Some(500));
    let entrants = users("u", 1500);
    enter_all(&mut c, "a", &entrants);
    ok(&mut c, &["TICKET.OPEN", "a"]);
    let seed = revealed_seed(&mut c, "a");
    wait_until(Duration::from_secs(30), "every entrant offered", || {
        offered(&mut c, "a").len() == 1500
    });
    assert_eq!(offered(&mut c, "a"), drawn_order(&seed, &entrants));
    let seconds = offers_per_second(&mut c, "a");
    println!("offers per second from the draw: {seconds:?}");
    assert!(seconds.values().all(|n| *n <= 500), "{seconds:?}");
    assert!(seconds.len() >= 3, "spread over 3 seconds: {seconds:?}");
}

fn status_int_or(c: &mut Connection, event: &str, name: &str) -> Option<i64> {
    match status(c, event).remove(name)? {
        redis::Value::Int(n) => Some(n),
        other => panic!("STATUS {name}: {other:?}"),
    }
}

#[test]
fn opens_at_draws_with_no_command() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let opens = (server_ms(&mut c) + 1500).to_string();
    let init = [
        "TICKET.INIT",
        "o",
        "10",
        "HOLD",
        "60000",
        "DRAW",
        "OPENS",
        &opens,
    ];
    ok(&mut c, &init);
    assert_eq!(status_text(&mut c, "o", "status").as_deref(), Some("open"));
    let entrants = users("u", 30);
    enter_all(&mut c, "o", &entrants);
    wait_for_draw(&mut c, "o");
    let seed = revealed_seed(&mut c, "o");
    wait_until(Duration::from_secs(20), "the sweep offers", || {
        offered(&mut c, "o").len() == 10
    });
    assert_eq!(offered(&mut c, "o"), drawn_order(&seed, &entrants)[..10]);
}

#[test]
fn a_failover_before_the_draw_draws_the_committed_seed() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    ok(&mut p, &["TICKET.INIT", "f", "5", "HOLD", "60000", "DRAW"]);
    let entrants = users("u", 50);
    enter_all(&mut p, "f", &entrants);
    let commitment = status_text(&mut p, "f", "draw");
    wait_replicated(&mut p, 1);
    let mut r = replica.conn();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    assert_eq!(status_text(&mut r, "f", "draw"), commitment);
    ok(&mut r, &["TICKET.OPEN", "f"]);
    let seed = revealed_seed(&mut r, "f");
    assert_eq!(offered(&mut r, "f"), drawn_order(&seed, &entrants)[..5]);
}

#[test]
fn a_failover_after_the_draw_carries_on_without_a_second_draw() {
    let mut primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    let init = [
        "TICKET.INIT",
        "g",
        "100",
        "HOLD",
        "60000",
        "DRAW",
        "ADMIT",
        "20",
    ];
    ok(&mut p, &init);
    let entrants = users("u", 100);
    enter_all(&mut p, "g", &entrants);
    ok(&mut p, &["TICKET.OPEN", "g"]);
    let seed = revealed_seed(&mut p, "g");
    wait_until(Duration::from_secs(20), "some offers", || {
        offered(&mut p, "g").len() >= 20
    });
    wait_replicated(&mut p, 1);
    drop(p);
    primary.kill();
    let mut r = replica.conn();
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    wait_until(Duration::from_secs(30), "the new primary offers on", || {
        offered(&mut r, "g").len() == 100
    });
    assert_eq!(revealed_seed(&mut r, "g"), seed, "one draw, the same seed");
    let all = offered(&mut r, "g");
    assert_eq!(all, drawn_order(&seed, &entrants));
    assert_eq!(all.iter().collect::<HashSet<_>>().len(), 100);
}

#[test]
fn an_open_before_100000_entrants_never_stalls_redis() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &["TICKET.INIT", "big", "100000", "HOLD", "600000", "DRAW"],
    );
    let entrants = users("user:", 100_000);
    let entering = Instant::now();
    for chunk in entrants.chunks(10_000) {
        assert!(enter_all(&mut c, "big", chunk).iter().all(|r| *r == -1));
    }
    let enter_ms = entering.elapsed().as_millis().max(1);
    // The same joins on a plain, sold-out event's waiting list, for scale.
    ok(&mut c, &["TICKET.INIT", "plain", "1"]);
    claim(&mut c, "plain", "buyer");
    let joining = Instant::now();
    for chunk in entrants.chunks(10_000) {
        assert!(enter_all(&mut c, "plain", chunk).iter().all(|r| *r > 0));
    }
    let plain_ms = joining.elapsed().as_millis().max(1);
    println!(
        "100000 joins, pipelined: entering the draw {enter_ms} ms ({}/s), plain WAIT {plain_ms} ms ({}/s)",
        100_000 * 1000 / enter_ms,
        100_000 * 1000 / plain_ms
    );
    let _: () = redis::cmd("SLOWLOG").arg("RESET").query(&mut c).unwrap();
    let mut ping = server.conn();
    let started = Instant::now();
    ok(&mut c, &["TICKET.OPEN", "big"]);
    let open_ms = started.elapsed().as_millis();
    let mut longest_ping = Duration::ZERO;
    while status_int(&mut c, "big", "waiting") > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "offers stalled"
        );
        let sent = Instant::now();
        let _: String = redis::cmd("PING").query(&mut ping).unwrap();
        longest_ping = longest_ping.max(sent.elapsed());
        std::thread::sleep(Duration::from_millis(5));
    }
    let all_ms = started.elapsed().as_millis();
    let slowlog: Vec<redis::Value> = redis::cmd("SLOWLOG")
        .arg("GET")
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let longest_us = slowlog
        .iter()
        .filter_map(|e| match e {
            redis::Value::Array(items) => match items.get(2) {
                Some(redis::Value::Int(us)) => Some(*us),
                _ => None,
            },
            _ => None,
        })
        .max()
        .unwrap_or(0);
    println!(
        "OPEN before 100000 entrants: OPEN {open_ms} ms, all offered in {all_ms} ms, \
         longest command {longest_us} us, longest PING {longest_ping:?}"
    );
    assert!(longest_us < 250_000, "a command took {longest_us} us");
    assert!(
        longest_ping < Duration::from_millis(250),
        "{longest_ping:?}"
    );
    assert_eq!(log_len_of_op(&mut c, "big", "offer"), 100_000);
}

fn log_len_of_op(c: &mut Connection, event: &str, op: &str) -> usize {
    entries_of(c, event, op).len()
}

#[test]
fn bad_input_changes_nothing() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "plain", "10"]);
    ok(&mut c, &["TICKET.INIT", "d", "10", "HOLD", "1000", "DRAW"]);
    let before = digest(&mut c);
    for (bad, why) in [
        (
            &["TICKET.INIT", "x", "10", "DRAW"][..],
            "DRAW needs HOLD > 0 or OFFER",
        ),
        (
            &["TICKET.INIT", "x", "10", "HOLD", "0", "DRAW"],
            "DRAW needs HOLD",
        ),
        (
            &["TICKET.INIT", "x", "10", "HOLD", "9", "DRAW", "ADMIT", "0"],
            "ADMIT must be between 1 and 1000000",
        ),
        (
            &[
                "TICKET.INIT",
                "x",
                "10",
                "HOLD",
                "9",
                "DRAW",
                "ADMIT",
                "1000001",
            ],
            "ADMIT must be between 1 and 1000000",
        ),
        (
            &["TICKET.INIT", "x", "10", "HOLD", "9", "ADMIT", "5"],
            "ADMIT needs DRAW",
        ),
        (
            &["TICKET.INIT", "x", "10", "HOLD", "9", "DRAW", "DRAW"],
            "given twice",
        ),
        (
            &["TICKET.INIT", "d", "10", "HOLD", "9", "DRAW"],
            "already exists",
        ),
        (
            &["TICKET.WAIT", "d", "u", "COUNT", "2"],
            "at most 1 tickets",
        ),
        (&["TICKET.WAIT", "d", "u", "DRAW"], "unknown option"),
        (&["TICKET.WAIT", "plain", "u", "DRAW"], "unknown option"),
        (
            &["TICKET.CLAIM", "d", "u"],
            "NOTOPEN event 'd' is not open yet",
        ),
    ] {
        let line = expect_any_error(&mut c, bad);
        assert!(line.contains(why), "{bad:?}: {line}");
        assert_eq!(digest(&mut c), before, "{bad:?} changed something");
    }
    assert_eq!(status_text(&mut c, "plain", "draw"), None);
    // A wants key of another type is refused before anything is written.
    let _: () = redis::cmd("SET")
        .arg(key("d", "wants"))
        .arg("x")
        .query(&mut c)
        .unwrap();
    let before = digest(&mut c);
    expect_error(&mut c, &["TICKET.WAIT", "d", "u"], "WRONGTYPE");
    expect_error(&mut c, &["TICKET.DROP", "d", "FORCE"], "WRONGTYPE");
    assert_eq!(digest(&mut c), before, "a wrong type changed something");
}

/// The error line of a command that must fail.
fn expect_any_error(c: &mut Connection, parts: &[&str]) -> String {
    match cmd(parts).query::<redis::Value>(c) {
        Ok(v) => panic!("{parts:?} succeeded: {v:?}"),
        Err(e) => error_line(&e),
    }
}

#[test]
fn reapply_brings_back_a_lost_entry_and_refuses_a_foreign_seed() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "h", "5", "HOLD", "60000", "DRAW"]);
    let lost = [
        "op", "enter", "event", "h", "user", "lost", "count", "1", "at", "7",
    ];
    let reapply = |c: &mut Connection, fields: &[&str]| {
        let mut parts = vec!["TICKET.REAPPLY", "h"];
        parts.extend_from_slice(fields);
        cmd(&parts).query::<String>(c)
    };
    reapply(&mut c, &lost).expect("the lost entry comes back");
    assert_eq!(int(&mut c, &["TICKET.POSITION", "h", "lost"]), -1);
    let before = digest(&mut c);
    let again = reapply(&mut c, &lost).unwrap_err();
    assert!(error_line(&again).starts_with("CHANGED"), "{again}");
    let foreign = "00".repeat(32);
    let draw = ["op", "draw", "event", "h", "seed", &foreign, "at", "8"];
    let refused = reapply(&mut c, &draw).unwrap_err();
    assert!(
        error_line(&refused).contains("the seed is not the event's"),
        "{refused}"
    );
    assert_eq!(digest(&mut c), before, "nothing changed");
    ok(&mut c, &["TICKET.OPEN", "h"]);
    let seed = revealed_seed(&mut c, "h");
    assert_eq!(offered(&mut c, "h"), ["lost"]);
    assert!(rank(&seed, "lost") < 1 << 48, "a 48-bit rank");
}
