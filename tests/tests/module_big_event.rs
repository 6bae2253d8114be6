//! The lazy pool: a 10,000,000-ticket event costs almost nothing, numbers are
//! handed out lowest first across chunk boundaries and returns, and the
//! `ticket.pool-chunk` config decides how many numbers a claim mints.

#[path = "support/module.rs"]
mod support;

use std::collections::BTreeSet;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::RedisServer;

/// `MEMORY USAGE key SAMPLES 0` (exact), 0 when the key does not exist.
fn memory_usage(c: &mut Connection, key: &str) -> i64 {
    match redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query::<Value>(c)
        .expect("MEMORY USAGE")
    {
        Value::Int(n) => n,
        Value::Nil => 0,
        other => panic!("MEMORY USAGE {key}: {other:?}"),
    }
}

fn zcard(c: &mut Connection, event: &str) -> i64 {
    redis::cmd("ZCARD")
        .arg(key(event, "pool"))
        .query(c)
        .expect("ZCARD")
}

fn minted(c: &mut Connection, event: &str) -> i64 {
    redis::cmd("HGET")
        .arg(key(event, "meta"))
        .arg("minted")
        .query(c)
        .expect("HGET minted")
}

fn chunk(c: &mut Connection) -> i64 {
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("ticket.pool-chunk")
        .query(c)
        .expect("CONFIG GET ticket.pool-chunk");
    assert_eq!(pair.len(), 2, "{pair:?}");
    assert_eq!(pair[0], "ticket.pool-chunk");
    pair[1].parse().expect("numeric pool-chunk")
}

fn set_chunk(c: &mut Connection, n: &str) -> redis::RedisResult<()> {
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("ticket.pool-chunk")
        .arg(n)
        .query(c)
}

#[test]
fn ten_million_tickets_cost_almost_nothing() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let default_chunk = chunk(&mut c);
    assert!((1..=1_000_000).contains(&default_chunk), "{default_chunk}");

    // Whatever the chunk (the default, and the DESIGN's 1024), the pool stays
    // small: no O(N) structure at init or at the first claim.
    for (event, chunk_size) in [("big", default_chunk), ("big1024", 1024)] {
        set_chunk(&mut c, &chunk_size.to_string()).unwrap();
        ok(&mut c, &["TICKET.INIT", event, "10000000"]);
        assert_eq!(memory_usage(&mut c, &key(event, "pool")), 0, "pool at init");
        let meta = memory_usage(&mut c, &key(event, "meta"));
        assert!(meta > 0 && meta < 512, "meta hash of {meta} bytes");

        assert_eq!(claim(&mut c, event, "u1"), 1);
        let pool = memory_usage(&mut c, &key(event, "pool"));
        assert!(
            pool < 100 * 1024,
            "pool of {event} (chunk {chunk_size}) uses {pool} bytes"
        );
        assert_eq!(zcard(&mut c, event), chunk_size - 1);
        assert!(memory_usage(&mut c, &key(event, "meta")) < 512);
        let st = status(&mut c, event);
        assert_eq!(st["total"], Value::Int(10_000_000));
        assert_eq!(st["remaining"], Value::Int(9_999_999));
        assert_eq!(st["claimed"], Value::Int(1));

        for i in 2..=2500 {
            assert_eq!(claim(&mut c, event, &format!("u{i}")), i, "{event}");
        }
        assert_eq!(status_int(&mut c, event, "remaining"), 9_997_500);
        assert_eq!(status_int(&mut c, event, "claimed"), 2500);
        let pool = memory_usage(&mut c, &key(event, "pool"));
        assert!(
            pool < 100 * 1024,
            "pool uses {pool} bytes after 2500 claims"
        );
        // A returned number is the next one out, before any unminted one.
        assert_eq!(
            int_or_nil(&mut c, &["TICKET.CANCEL", event, "u1234"]),
            Some(1234)
        );
        assert_eq!(claim(&mut c, event, "late"), 1234);
        assert_eq!(claim(&mut c, event, "later"), 2501);
    }

    // The whole dataset is small: two 10M events and 5,000 holders.
    let used: i64 = info_field(&mut c, "memory", "used_memory")
        .expect("used_memory")
        .parse()
        .unwrap();
    assert!(used < 64 * 1024 * 1024, "used_memory {used}");
}

#[test]
fn pool_chunk_config_decides_how_much_is_minted() {
    let server = RedisServer::start();
    let mut c = server.conn();

    set_chunk(&mut c, "100").unwrap();
    assert_eq!(chunk(&mut c), 100);
    ok(&mut c, &["TICKET.INIT", "c", "1000"]);
    assert_eq!(claim(&mut c, "c", "u1"), 1);
    assert_eq!(zcard(&mut c, "c"), 99);
    assert_eq!(minted(&mut c, "c"), 100);
    for i in 2..=100 {
        assert_eq!(claim(&mut c, "c", &format!("u{i}")), i);
    }
    assert_eq!(
        zcard(&mut c, "c"),
        0,
        "the pool emptied (and its key went away)"
    );
    assert_eq!(claim(&mut c, "c", "u101"), 101);
    assert_eq!(zcard(&mut c, "c"), 99);
    assert_eq!(minted(&mut c, "c"), 200);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "c", "u50"]), Some(50));
    assert_eq!(zcard(&mut c, "c"), 100);
    assert_eq!(claim(&mut c, "c", "x"), 50);

    // Changing the chunk mid-event applies to the next mint.
    set_chunk(&mut c, "7").unwrap();
    for i in 102..=200 {
        assert_eq!(claim(&mut c, "c", &format!("u{i}")), i);
    }
    assert_eq!(claim(&mut c, "c", "u201"), 201);
    assert_eq!(zcard(&mut c, "c"), 6);
    assert_eq!(minted(&mut c, "c"), 207);

    // A chunk larger than the event mints only up to total.
    set_chunk(&mut c, "1000").unwrap();
    ok(&mut c, &["TICKET.INIT", "small", "10"]);
    assert_eq!(claim(&mut c, "small", "a"), 1);
    assert_eq!(zcard(&mut c, "small"), 9);
    assert_eq!(minted(&mut c, "small"), 10);

    // Chunk 1: the pool holds only returned tickets.
    set_chunk(&mut c, "1").unwrap();
    ok(&mut c, &["TICKET.INIT", "one", "10"]);
    for i in 1..=3 {
        assert_eq!(claim(&mut c, "one", &format!("u{i}")), i);
        assert_eq!(zcard(&mut c, "one"), 0);
        assert_eq!(minted(&mut c, "one"), i);
    }

    // Out-of-range and malformed values are refused and change nothing.
    for bad in ["0", "-1", "1000001", "abc", ""] {
        assert!(
            set_chunk(&mut c, bad).is_err(),
            "CONFIG SET {bad:?} accepted"
        );
        assert_eq!(chunk(&mut c), 1);
    }
    set_chunk(&mut c, "1000000").unwrap();
    assert_eq!(chunk(&mut c), 1_000_000);
}

#[test]
fn lowest_free_first_across_chunks_and_returns_matches_a_model() {
    let server = RedisServer::start();
    let mut c = server.conn();
    for (chunk_size, seed) in [(1, 1), (3, 2), (16, 3)] {
        set_chunk(&mut c, &chunk_size.to_string()).unwrap();
        let event = format!("m{chunk_size}");
        let total = 40;
        ok(&mut c, &["TICKET.INIT", &event, &total.to_string()]);
        let mut free: BTreeSet<i64> = (1..=total).collect();
        let mut held: std::collections::HashMap<String, i64> = Default::default();
        let mut rng = Rng::new(seed);
        for step in 0..400 {
            let user = format!("u{}", rng.below(60));
            if rng.below(3) < 2 {
                let want = held.get(&user).copied().or_else(|| free.first().copied());
                match want {
                    Some(t) => {
                        assert_eq!(claim(&mut c, &event, &user), t, "step {step}");
                        free.remove(&t);
                        held.insert(user, t);
                    }
                    None => {
                        expect_error(&mut c, &["TICKET.CLAIM", &event, &user], "SOLDOUT");
                    }
                }
            } else {
                let want = held.remove(&user);
                if let Some(t) = want {
                    free.insert(t);
                }
                assert_eq!(
                    int_or_nil(&mut c, &["TICKET.CANCEL", &event, &user]),
                    want,
                    "step {step}"
                );
            }
            let st = status(&mut c, &event);
            assert_eq!(
                st["remaining"],
                Value::Int(free.len() as i64),
                "step {step}"
            );
            assert_eq!(st["claimed"], Value::Int(held.len() as i64), "step {step}");
        }
        let h = holders(&mut c, &event);
        assert_eq!(h, held);
        assert_eq!(replay(&log(&mut c, &event)), h);
    }
}

#[test]
fn pool_chunk_can_be_set_at_startup() {
    let server = RedisServer::start_with(&["--ticket.pool-chunk", "5"]);
    let mut c = server.conn();
    assert_eq!(chunk(&mut c), 5);
    ok(&mut c, &["TICKET.INIT", "e", "100"]);
    assert_eq!(claim(&mut c, "e", "a"), 1);
    assert_eq!(zcard(&mut c, "e"), 4);
    assert_eq!(minted(&mut c, "e"), 5);
}
