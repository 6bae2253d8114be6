//! Allocations against real redis-servers (issue 42, docs/design.md
//! "Allocations"): ALLOCATE, CLAIM ... FROM, RELEASE and ALLOCATIONS on a
//! general-admission and a seated event with every error (each leaving
//! `DEBUG DIGEST` and every key as they were); a timed release with no
//! traffic, and after an AOF restart; a release time passing while the
//! primary is dead: the promoted replica releases exactly once and the
//! waiting list is offered first; and a burst of public parties beside
//! three partners claiming from their allocations with their keys.
//!
//! Time-based effects are waited for by polling with generous upper
//! bounds; nothing asserts a tight duration.

#[path = "support/module.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

/// How long a due release may take to be swept (many cron ticks).
const SWEPT_WITHIN: Duration = Duration::from_secs(20);

/// `TICKET.ALLOCATE`'s tickets.
fn allocate(c: &mut Connection, args: &[&str]) -> Vec<i64> {
    let mut parts = vec!["TICKET.ALLOCATE"];
    parts.extend_from_slice(args);
    int_array(c, &parts)
}

/// `TICKET.ALLOCATIONS` as name -> (free, claimed, release).
fn allocations(c: &mut Connection, event: &str) -> BTreeMap<String, (i64, i64, Option<i64>)> {
    let Value::Array(rows) = value(c, &["TICKET.ALLOCATIONS", event]) else {
        panic!("ALLOCATIONS is an array");
    };
    rows.into_iter()
        .map(|row| match row {
            Value::Array(r) => match &r[..] {
                [Value::BulkString(name), Value::Int(free), Value::Int(claimed), release] => {
                    let release = match release {
                        Value::Int(at) => Some(*at),
                        Value::Nil => None,
                        other => panic!("release {other:?}"),
                    };
                    (
                        String::from_utf8_lossy(name).into_owned(),
                        (*free, *claimed, release),
                    )
                }
                other => panic!("an allocation row: {other:?}"),
            },
            other => panic!("an allocation row: {other:?}"),
        })
        .collect()
}

fn ops_of(c: &mut Connection, event: &str, op: &str) -> usize {
    log(c, event)
        .iter()
        .filter(|e| field(e, "op") == Some(op))
        .count()
}

fn seatmap(c: &mut Connection, event: &str) -> String {
    match value(c, &["TICKET.SEATMAP", event]) {
        Value::BulkString(b) => String::from_utf8(b).unwrap(),
        other => panic!("SEATMAP {other:?}"),
    }
}

#[test]
fn general_admission_allocate_claim_from_release_and_every_error() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "ga", "10", "LIMIT", "4"]);
    let status_before = value(&mut c, &["TICKET.STATUS", "ga"]);
    assert_eq!(
        allocate(&mut c, &["ga", "promoter", "COUNT", "3", "KEY", "pw"]),
        [1, 2, 3]
    );
    assert_eq!(status_int(&mut c, "ga", "remaining"), 7);
    assert_eq!(status_int(&mut c, "ga", "allocated"), 3);
    let Value::Array(fields) = status_before else {
        panic!()
    };
    assert!(
        !fields
            .iter()
            .any(|f| matches!(f, Value::BulkString(b) if b == b"allocated")),
        "STATUS without allocations is as it was"
    );
    // Public claims go around it.
    assert_eq!(
        int_array(&mut c, &["TICKET.CLAIM", "ga", "a", "COUNT", "2"]),
        [4, 5]
    );
    // Every error changes nothing (expect_error compares DEBUG DIGEST).
    let e = expect_error(
        &mut c,
        &["TICKET.CLAIM", "ga", "p", "FROM", "promoter"],
        "NOKEY",
    );
    assert!(e.contains("'promoter'"), "{e}");
    expect_error(
        &mut c,
        &["TICKET.CLAIM", "ga", "p", "FROM", "promoter", "KEY", "no"],
        "NOKEY",
    );
    let e = expect_error(
        &mut c,
        &["TICKET.CLAIM", "ga", "p", "FROM", "nope"],
        "NOALLOCATION",
    );
    assert!(e.contains("'nope'"), "{e}");
    let errors: [(&[&str], &str, &str); 12] = [
        (
            &["TICKET.CLAIM", "ga", "p", "KEY", "pw"],
            "ERR",
            "KEY goes with FROM",
        ),
        (&["TICKET.CLAIM", "ga", "p", "FROM", "a:b"], "ERR", "'a:b'"),
        (
            &["TICKET.ALLOCATE", "ga", "x", "COUNT", "6"],
            "SHORT",
            "SHORT event 'ga' has 5 free",
        ),
        (
            &["TICKET.ALLOCATE", "ga", "promoter", "COUNT", "1"],
            "NOKEY",
            "'promoter'",
        ),
        (
            &["TICKET.ALLOCATE", "ga", "x", "SEATS", "6"],
            "ERR",
            "not seated",
        ),
        (&["TICKET.ALLOCATE", "ga", "x"], "ERR", "COUNT"),
        (
            &["TICKET.ALLOCATE", "nope", "x", "COUNT", "1"],
            "NOEVENT",
            "'nope'",
        ),
        (&["TICKET.RELEASE", "ga", "nope"], "NOALLOCATION", "'nope'"),
        (
            &["TICKET.RELEASE", "ga", "promoter", "COUNT", "4"],
            "SHORT",
            "SHORT allocation 'promoter' has 3 free",
        ),
        (
            &["TICKET.RELEASE", "ga", "promoter", "SEATS", "9"],
            "ERR",
            "ticket 9",
        ),
        (&["TICKET.ALLOCATIONS", "nope"], "NOEVENT", "'nope'"),
        (&["TICKET.ALLOCATIONS", "ga", "x"], "ERR", "wrong number"),
    ];
    for (args, code, says) in errors {
        let e = expect_error(&mut c, args, code);
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // A partner claims from it, sold or held; over what it has: SOLDOUT.
    assert_eq!(
        int_array(
            &mut c,
            &[
                "TICKET.CLAIM",
                "ga",
                "p1",
                "FROM",
                "promoter",
                "KEY",
                "pw",
                "COUNT",
                "2"
            ]
        ),
        [1, 2]
    );
    let e = expect_error(
        &mut c,
        &[
            "TICKET.CLAIM",
            "ga",
            "p2",
            "COUNT",
            "2",
            "KEY",
            "pw",
            "FROM",
            "promoter",
        ],
        "SOLDOUT",
    );
    assert!(e.contains("allocation 'promoter'"), "{e}");
    let hold = &[
        "TICKET.CLAIM",
        "ga",
        "p3",
        "FROM",
        "promoter",
        "HOLD",
        "60000",
        "KEY",
        "pw",
    ];
    assert_eq!(int(&mut c, hold), 3);
    assert_eq!(
        allocations(&mut c, "ga"),
        BTreeMap::from([("promoter".into(), (0, 3, None))])
    );
    // A held ticket cancelled goes back to its allocation.
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "ga", "p3"]), Some(3));
    assert_eq!(allocations(&mut c, "ga")["promoter"], (1, 2, None));
    let cancel = log(&mut c, "ga").pop().unwrap();
    assert_eq!(field(&cancel, "from"), Some("promoter"));
    // The claim's compact record carries `from` last.
    let claims: Vec<Entry> = log(&mut c, "ga")
        .into_iter()
        .filter(|e| field(e, "user") == Some("p1"))
        .collect();
    assert_eq!(field_names(&claims[0]), ["claim", "tickets", "from"]);
    // Release: to the public, which claims it next.
    assert_eq!(int(&mut c, &["TICKET.RELEASE", "ga", "promoter"]), 1);
    assert!(
        allocations(&mut c, "ga").is_empty(),
        "released in full, it ends"
    );
    assert_eq!(claim(&mut c, "ga", "b"), 3);
    assert_eq!(ops_of(&mut c, "ga", "allocate"), 1);
    assert_eq!(ops_of(&mut c, "ga", "release"), 1);
    assert_eq!(status_int(&mut c, "ga", "remaining"), 5);
}

/// Two rows of 8; a wheelchair space at the end of the first.
const HALL: &str = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":8,"accessible":[8]},{"name":"2","seats":8}]}]}"#;

#[test]
fn seated_allocations_show_in_the_seat_map_and_keep_public_claims_off() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &["TICKET.INIT", "s", "16", "LIMIT", "4", "SEATS", HALL],
    );
    assert_eq!(
        allocate(&mut c, &["s", "camera", "SEATS", "4", "5", "KEY", "k"]),
        [4, 5]
    );
    expect_error(
        &mut c,
        &["TICKET.ALLOCATE", "s", "x", "SEATS", "5"],
        "TAKEN",
    );
    expect_error(&mut c, &["TICKET.ALLOCATE", "s", "x", "SEATS", "99"], "ERR");
    expect_error(
        &mut c,
        &["TICKET.ALLOCATE", "s", "x", "COUNT", "1", "SECTION", "Z"],
        "ERR",
    );
    let house = allocate(&mut c, &["s", "house", "COUNT", "3", "SECTION", "A"]);
    assert_eq!(house.len(), 3);
    assert!(!house.contains(&8), "never the wheelchair space");
    let map = seatmap(&mut c, "s");
    assert_eq!(map.bytes().filter(|b| *b == b'a').count(), 5, "{map}");
    // Public best available never sits on allocated seats.
    let public = int_array(&mut c, &["TICKET.CLAIM", "s", "u", "COUNT", "3", "SPLIT"]);
    for t in &public {
        assert!(![4, 5].contains(t) && !house.contains(t), "{public:?}");
    }
    // Best available within the allocation, or a pick of its seats.
    expect_error(
        &mut c,
        &["TICKET.CLAIM", "s", "c1", "FROM", "camera", "SEATS", "5"],
        "NOKEY",
    );
    let camera = ["TICKET.CLAIM", "s", "c1", "FROM", "camera", "KEY", "k"];
    let pick = house[0].to_string();
    expect_error(&mut c, &[&camera[..], &["SEATS", &pick]].concat(), "TAKEN");
    let got = int_array(&mut c, &[&camera[..], &["COUNT", "2"]].concat());
    assert_eq!(got, [4, 5]);
    assert_eq!(seatmap(&mut c, "s").as_bytes()[3..5], *b"ss");
    assert_eq!(status_int(&mut c, "s", "allocated"), 3);
    assert_eq!(
        int(&mut c, &["TICKET.RELEASE", "s", "house", "COUNT", "1"]),
        1
    );
    assert_eq!(allocations(&mut c, "s")["house"].0, 2);
    assert_eq!(int(&mut c, &["TICKET.RELEASE", "s", "house"]), 2);
    assert!(!seatmap(&mut c, "s").contains('a'));
}

#[test]
fn a_timed_release_with_no_traffic_then_after_an_aof_restart() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "t", "4", "LIMIT", "2"]);
    let soon = (server_ms(&mut c) + 1_500).to_string();
    allocate(&mut c, &["t", "early", "COUNT", "1", "RELEASE", &soon]);
    wait_until(SWEPT_WITHIN, "the release with no traffic", || {
        ops_of(&mut c, "t", "release") == 1
    });
    assert!(allocations(&mut c, "t").is_empty());
    assert_eq!(status_int(&mut c, "t", "remaining"), 4);
    // A release time that passes while the server is down.
    let later = (server_ms(&mut c) + 2_000).to_string();
    allocate(&mut c, &["t", "late", "COUNT", "2", "RELEASE", &later]);
    let digest_before = digest(&mut c);
    drop(c);
    server.start_again();
    let mut c = server.conn();
    assert_eq!(
        digest(&mut c),
        digest_before,
        "the AOF reloads the allocation"
    );
    wait_until(SWEPT_WITHIN, "the release after the restart", || {
        ops_of(&mut c, "t", "release") == 2
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(ops_of(&mut c, "t", "release"), 2, "released once");
    assert_eq!(status_int(&mut c, "t", "remaining"), 4);
}

#[test]
fn the_promoted_replica_releases_once_and_offers_the_waiting_list_first() {
    let mut primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    ok(
        &mut p,
        &["TICKET.INIT", "f", "6", "LIMIT", "2", "OFFER", "60000"],
    );
    // Far enough ahead that the primary is dead before it comes.
    let at = server_ms(&mut p) + 4_000;
    allocate(
        &mut p,
        &["f", "kill", "COUNT", "2", "RELEASE", &at.to_string()],
    );
    for u in ["c0", "c1", "c2", "c3"] {
        claim(&mut p, "f", u);
    }
    assert_eq!(int(&mut p, &["TICKET.WAIT", "f", "w0", "COUNT", "2"]), 1);
    assert_eq!(int(&mut p, &["TICKET.WAIT", "f", "w1"]), 2);
    wait_replicated(&mut p, 1);
    // The kill lands here: before the release time, which the test checks.
    assert!(
        server_ms(&mut p) < at - 1_000,
        "the kill comes before the release"
    );
    assert_eq!(ops_of(&mut p, "f", "release"), 0);
    drop(p);
    primary.kill();

    let mut r = replica.conn();
    wait_until(Duration::from_secs(15), "the release time passed", || {
        server_ms(&mut r) > at + 500
    });
    // A cut-off replica releases nothing by itself.
    assert_eq!(allocations(&mut r, "f")["kill"].0, 2);
    assert_eq!(ops_of(&mut r, "f", "release"), 0);
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    wait_until(SWEPT_WITHIN, "the promoted replica releases", || {
        ops_of(&mut r, "f", "release") == 1
    });
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(ops_of(&mut r, "f", "release"), 1, "released once");
    assert!(allocations(&mut r, "f").is_empty());
    // The party of two at the head was offered both released tickets.
    assert_eq!(users_of_op(&mut r, "f", "offer"), ["w0"]);
    let (tickets, state, _) = order(&mut r, "f", "w0").expect("w0 is offered");
    assert_eq!((tickets, state.as_str()), (vec![1, 2], "held"));
    assert_eq!(int_or_nil(&mut r, &["TICKET.POSITION", "f", "w1"]), Some(1));
}

#[test]
fn public_parties_and_three_partners_in_a_burst() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let rows: Vec<String> = (1..=30)
        .map(|r| format!(r#"{{"name":"{r}","seats":80}}"#))
        .collect();
    let layout = format!(
        r#"{{"sections":[{{"name":"A","rows":[{}]}}]}}"#,
        rows.join(",")
    );
    ok(
        &mut c,
        &["TICKET.INIT", "b", "2400", "LIMIT", "4", "SEATS", &layout],
    );
    let mut given: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for (i, name) in ["p0", "p1", "p2"].iter().enumerate() {
        let key = format!("key{i}");
        let seats = allocate(&mut c, &["b", name, "COUNT", "150", "KEY", &key]);
        assert_eq!(seats.len(), 150);
        given.insert((*name).to_owned(), seats.into_iter().collect());
    }
    let allocated: BTreeSet<i64> = given.values().flatten().copied().collect();
    assert_eq!(allocated.len(), 450, "no seat in two allocations");
    let url = server.url();
    let mut threads = Vec::new();
    // 2,000 public parties of 1 or 2, on 8 connections.
    for t in 0..8 {
        let url = url.clone();
        threads.push(std::thread::spawn(move || {
            let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
            let mut got = Vec::new();
            for i in (t..2000).step_by(8) {
                let user = format!("u{i}");
                let count = (1 + i % 2).to_string();
                let claim = cmd(&["TICKET.CLAIM", "b", &user, "COUNT", &count]);
                if let Ok(seats) = claim.query::<Vec<i64>>(&mut c) {
                    got.push((None, user, seats));
                }
            }
            got
        }));
    }
    // Three partners, each with its key, until their allocation is gone.
    for (i, name) in ["p0", "p1", "p2"].into_iter().enumerate() {
        let url = url.clone();
        threads.push(std::thread::spawn(move || {
            let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
            let key = format!("key{i}");
            let mut got = Vec::new();
            for n in 0.. {
                let user = format!("{name}-{n}");
                let count = (1 + n % 3).to_string();
                let args = [
                    "TICKET.CLAIM",
                    "b",
                    &user,
                    "FROM",
                    name,
                    "KEY",
                    &key,
                    "COUNT",
                    &count,
                ];
                match cmd(&args).query::<Vec<i64>>(&mut c) {
                    Ok(seats) => got.push((Some(name.to_owned()), user, seats)),
                    Err(e) if error_line(&e).starts_with("SOLDOUT") => {
                        if count == "1" {
                            break;
                        }
                    }
                    Err(e) => panic!("{user}: {}", error_line(&e)),
                }
            }
            got
        }));
    }
    let mut seen = BTreeSet::new();
    let mut per_partner: BTreeMap<String, usize> = BTreeMap::new();
    for t in threads {
        for (partner, user, seats) in t.join().unwrap() {
            for s in &seats {
                assert!(seen.insert(*s), "seat {s} sold twice ({user})");
            }
            match partner {
                None => {
                    for s in &seats {
                        assert!(
                            !allocated.contains(s),
                            "public {user} got allocated seat {s}"
                        );
                    }
                }
                Some(p) => {
                    for s in &seats {
                        assert!(
                            given[&p].contains(s),
                            "{user} of {p} got seat {s}, not its own"
                        );
                    }
                    *per_partner.entry(p).or_default() += seats.len();
                }
            }
        }
    }
    for (p, n) in &per_partner {
        assert!(*n <= 150, "{p} got {n} seats");
    }
    assert_eq!(
        per_partner.values().sum::<usize>(),
        450,
        "partners sold out"
    );
    let all = allocations(&mut c, "b");
    for (p, (free, claimed, _)) in &all {
        assert_eq!((*free, *claimed), (0, per_partner[p] as i64), "{p}");
    }
}
