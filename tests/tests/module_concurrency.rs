//! Many connections at once: a 1,000-connection burst on 100 tickets, and
//! claims racing cancels (and close/open) from many connections. Checked
//! after the fact: exact winner counts, distinct numbers, the holders hash,
//! the pool partition, and that replaying the log reproduces the holders.

#[path = "support/module.rs"]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::RedisServer;

/// What one `TICKET.CLAIM` answered: a number or an error code.
type Outcome = Result<i64, String>;

fn try_claim(c: &mut Connection, event: &str, user: &str) -> Outcome {
    match cmd(&["TICKET.CLAIM", event, user]).query::<Value>(c) {
        Ok(Value::Int(n)) => Ok(n),
        Ok(other) => panic!("CLAIM replied {other:?}"),
        Err(e) => Err(error_line(&e)
            .split(' ')
            .next()
            .unwrap_or_default()
            .to_string()),
    }
}

/// Checks one burst: `users[i]` got `outcomes[i]`.
fn check_burst(c: &mut Connection, event: &str, users: &[String], outcomes: &[Outcome]) {
    let mut winners: HashMap<String, i64> = HashMap::new();
    let mut codes: HashMap<String, usize> = HashMap::new();
    for (user, outcome) in users.iter().zip(outcomes) {
        match outcome {
            Ok(n) => {
                assert!(winners.insert(user.clone(), *n).is_none());
            }
            Err(code) => *codes.entry(code.clone()).or_default() += 1,
        }
    }
    assert_eq!(winners.len(), 100, "{event}: winners (errors: {codes:?})");
    assert_eq!(
        codes,
        HashMap::from([("SOLDOUT".to_string(), 900)]),
        "{event}"
    );
    let numbers: BTreeSet<i64> = winners.values().copied().collect();
    assert_eq!(
        numbers,
        (1..=100).collect(),
        "{event}: distinct numbers 1..=100"
    );
    let h = holders(c, event);
    assert_eq!(h, winners, "{event}: holders hash == winners");
    let entries = log(c, event);
    assert_eq!(
        entries.len(),
        101,
        "{event}: init + 100 claims, losers log nothing"
    );
    assert_eq!(replay(&entries), h, "{event}: log replay == holders");
    // Log order is claim order: numbers come out 1, 2, 3, ...
    let in_log: Vec<i64> = entries[1..]
        .iter()
        .map(|e| field(e, "ticket").unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        in_log,
        (1..=100).collect::<Vec<_>>(),
        "{event}: lowest first"
    );
    assert_eq!(status_int(c, event, "remaining"), 0);
    assert_eq!(status_int(c, event, "claimed"), 100);
}

#[test]
fn burst_of_1000_connections_on_100_tickets() {
    const CONNECTIONS: usize = 1000;
    // Our 1,000 sockets and the server's (it inherits the limit).
    raise_fd_limit(4096);
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "burst", "100"]);
    ok(&mut c, &["TICKET.INIT", "burst7", "100"]);

    let users: Vec<String> = (0..CONNECTIONS).map(|i| format!("user-{i:04}")).collect();
    // Phases: 0 = burst (default chunk), 1 = burst7 (chunk 7, minting
    // during the burst), 2 = everybody claims `burst` again.
    let phases = ["burst", "burst7", "burst"];
    let barrier = Arc::new(Barrier::new(CONNECTIONS + 1));
    let client = server.client();
    let handles: Vec<_> = users
        .iter()
        .cloned()
        .map(|user| {
            let barrier = barrier.clone();
            let client = client.clone();
            thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || {
                    // Each thread owns its own connection, opened before the start.
                    let mut conn = client
                        .get_connection_with_timeout(Duration::from_secs(30))
                        .expect("connect");
                    let mut out = Vec::new();
                    for event in phases {
                        barrier.wait();
                        out.push(try_claim(&mut conn, event, &user));
                        barrier.wait();
                    }
                    out
                })
                .expect("spawn a burst thread")
        })
        .collect();

    // Phase 0.
    barrier.wait();
    barrier.wait();
    let connected: i64 = info_field(&mut c, "clients", "connected_clients")
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        connected > CONNECTIONS as i64,
        "{connected} clients connected"
    );
    set_chunk(&mut c, 7);
    // Phase 1.
    barrier.wait();
    barrier.wait();
    let before_repeat = snapshot(&mut c);
    // Phase 2.
    barrier.wait();
    barrier.wait();

    let results: Vec<Vec<Outcome>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (phase, event) in phases.iter().enumerate().take(2) {
        let outcomes: Vec<Outcome> = results.iter().map(|r| r[phase].clone()).collect();
        check_burst(&mut c, event, &users, &outcomes);
    }
    // The second burst on a sold-out event: winners get their own number
    // back, losers SOLDOUT again, nothing at all changes.
    for (user_results, user) in results.iter().zip(&users) {
        assert_eq!(user_results[2], user_results[0], "{user}: repeat claim");
    }
    assert_eq!(snapshot(&mut c), before_repeat);

    // The counters saw exactly this.
    let counter = |c: &mut Connection, name: &str| -> i64 {
        info_field(c, "ticket", &format!("ticket_{name}"))
            .unwrap_or_else(|| panic!("INFO ticket has no ticket_{name}"))
            .parse()
            .unwrap()
    };
    assert_eq!(counter(&mut c, "claims"), 200);
    assert_eq!(counter(&mut c, "repeat_claims"), 100);
    assert_eq!(counter(&mut c, "soldout_replies"), 2700);
}

#[test]
fn claims_racing_cancels_and_close_open_keep_every_invariant() {
    const THREADS: usize = 20;
    const TOTAL: i64 = 50;
    let server = RedisServer::start();
    let mut c = server.conn();
    set_chunk(&mut c, 4);
    ok(&mut c, &["TICKET.INIT", "race", &TOTAL.to_string()]);

    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(THREADS + 2));
    let client = server.client();
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (client, stop, start) = (client.clone(), stop.clone(), start.clone());
            thread::spawn(move || {
                let mut conn = client.get_connection().expect("connect");
                let mut rng = Rng::new(t as u64 + 100);
                let mut counts: HashMap<String, usize> = HashMap::new();
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    // 80 users for 50 tickets, shared by all threads.
                    let user = format!("u{}", rng.below(80));
                    if rng.below(2) == 0 {
                        let outcome = try_claim(&mut conn, "race", &user);
                        match &outcome {
                            Ok(n) => assert!((1..=TOTAL).contains(n), "ticket {n}"),
                            Err(code) => assert!(
                                code == "SOLDOUT" || code == "CLOSED",
                                "unexpected claim error {code}"
                            ),
                        }
                        let key = outcome.map_or_else(|e| e, |_| "ticket".into());
                        *counts.entry(key).or_default() += 1;
                    } else {
                        match cmd(&["TICKET.CANCEL", "race", &user])
                            .query::<Value>(&mut conn)
                            .expect("CANCEL never fails here")
                        {
                            Value::Int(n) => {
                                assert!((1..=TOTAL).contains(&n));
                                *counts.entry("cancel".into()).or_default() += 1;
                            }
                            Value::Nil => *counts.entry("nil".into()).or_default() += 1,
                            other => panic!("CANCEL replied {other:?}"),
                        }
                    }
                }
                counts
            })
        })
        .collect();
    let toggler = {
        let (client, stop, start) = (client.clone(), stop.clone(), start.clone());
        thread::spawn(move || {
            let mut conn = client.get_connection().expect("connect");
            start.wait();
            let mut toggles = 0;
            while !stop.load(Ordering::Relaxed) {
                thread::sleep(Duration::from_millis(150));
                ok(&mut conn, &["TICKET.CLOSE", "race"]);
                thread::sleep(Duration::from_millis(30));
                ok(&mut conn, &["TICKET.OPEN", "race"]);
                toggles += 1;
            }
            toggles
        })
    };
    start.wait();
    let began = Instant::now();
    thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::Relaxed);
    let mut totals: HashMap<String, usize> = HashMap::new();
    for w in workers {
        for (k, v) in w.join().expect("worker panicked") {
            *totals.entry(k).or_default() += v;
        }
    }
    let toggles = toggler.join().expect("toggler panicked");
    assert!(began.elapsed() >= Duration::from_secs(2));
    // The race really raced: many claims, cancels, sold-out and closed replies.
    for what in ["ticket", "cancel", "SOLDOUT", "CLOSED"] {
        assert!(
            totals.get(what).copied().unwrap_or(0) > 0,
            "no {what} outcome at all: {totals:?}"
        );
    }
    assert!(toggles > 0);

    let h = holders(&mut c, "race");
    let held: BTreeSet<i64> = h.values().copied().collect();
    assert_eq!(held.len(), h.len(), "a number is held twice: {h:?}");
    assert!(held.iter().all(|n| (1..=TOTAL).contains(n)), "{held:?}");
    let st = status(&mut c, "race");
    let (remaining, claimed) = match (&st["remaining"], &st["claimed"]) {
        (Value::Int(r), Value::Int(c)) => (*r, *c),
        other => panic!("{other:?}"),
    };
    assert_eq!(remaining + claimed, TOTAL, "{st:?}");
    assert_eq!(claimed, h.len() as i64);
    assert_eq!(st["status"], Value::BulkString(b"open".to_vec()));

    // Held, pooled and never-minted numbers partition 1..=TOTAL.
    let pool: Vec<i64> = redis::cmd("ZRANGE")
        .arg(key("race", "pool"))
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let minted: i64 = redis::cmd("HGET")
        .arg(key("race", "meta"))
        .arg("minted")
        .query(&mut c)
        .unwrap();
    let mut all: Vec<i64> = held.iter().copied().chain(pool.iter().copied()).collect();
    all.extend(minted + 1..=TOTAL);
    all.sort_unstable();
    assert_eq!(
        all,
        (1..=TOTAL).collect::<Vec<_>>(),
        "held {held:?} pool {pool:?} minted {minted}"
    );

    let entries = log(&mut c, "race");
    assert_eq!(replay(&entries), h, "log replay == holders");
    let cancels = entries
        .iter()
        .filter(|e| field(e, "op") == Some("cancel"))
        .count();
    assert_eq!(cancels, totals["cancel"], "one log entry per real cancel");
}
