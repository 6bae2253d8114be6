//! The module keeps per-event copies (key names, the meta hash, whether the
//! pool key is absent) between commands; these tests change an event's keys behind its back with
//! ordinary Redis commands, scripts, transactions, expiry, database
//! switches and reloads, and check that every `TICKET.*` command sees the
//! change at once. Also many more events than any cache holds.

#[path = "support/module.rs"]
mod support;

use std::thread::sleep;
use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::RedisServer;

fn run(c: &mut Connection, parts: &[&str]) -> Value {
    value(c, parts)
}

/// The error code of a command that must fail (without the no-change
/// check: the expiry of a key is a change the module did not make).
fn err_code(c: &mut Connection, parts: &[&str]) -> String {
    match cmd(parts).query::<Value>(c) {
        Ok(v) => panic!("{parts:?}: expected an error, got {v:?}"),
        Err(e) => error_line(&e).split(' ').next().unwrap().to_string(),
    }
}

fn status_text(c: &mut Connection, event: &str) -> String {
    match status(c, event).remove("status") {
        Some(Value::BulkString(b)) => String::from_utf8(b).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// An event `e` of 10 with one claim, its meta cached by a few commands.
fn warm(c: &mut Connection, event: &str, total: i64) {
    ok(c, &["TICKET.INIT", event, &total.to_string()]);
    assert_eq!(claim(c, event, "a"), 1);
    assert_eq!(status_int(c, event, "total"), total);
    assert_eq!(int_or_nil(c, &["TICKET.HOLDER", event, "a"]), Some(1));
}

#[test]
fn plain_hash_writes_to_meta_are_seen() {
    let server = RedisServer::start();
    let mut c = server.conn();
    warm(&mut c, "e", 10);
    let mk = key("e", "meta");

    run(&mut c, &["HSET", &mk, "status", "closed"]);
    assert_eq!(status_text(&mut c, "e"), "closed");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "b"], "CLOSED");
    run(&mut c, &["HSET", &mk, "status", "open"]);
    assert_eq!(claim(&mut c, "e", "b"), 2);

    run(&mut c, &["HSET", &mk, "total", "2"]);
    assert_eq!(status_int(&mut c, "e", "total"), 2);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "c"], "SOLDOUT");
    run(&mut c, &["HINCRBY", &mk, "total", "1"]);
    assert_eq!(claim(&mut c, "e", "c"), 3);

    let far = (server_ms(&mut c) + 3_600_000).to_string();
    run(&mut c, &["HSET", &mk, "opens_at", &far, "total", "10"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "d"], "NOTOPEN");
    assert_eq!(status_int(&mut c, "e", "opens_at").to_string(), far);
    run(&mut c, &["HSET", &mk, "opens_at", "0", "closes_at", "1"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "d"], "CLOSED");
    run(&mut c, &["HSET", &mk, "closes_at", "0"]);
    assert_eq!(claim(&mut c, "e", "d"), 4);

    run(&mut c, &["HDEL", &mk, "status"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "CORRUPT");
    expect_error(&mut c, &["TICKET.STATUS", "e"], "CORRUPT");
    run(&mut c, &["HSET", &mk, "status", "open"]);
    assert_eq!(claim(&mut c, "e", "x"), 5);

    // A transaction and a script count too.
    let mut pipe = redis::pipe();
    pipe.atomic()
        .cmd("HSET")
        .arg(&mk)
        .arg("status")
        .arg("closed")
        .cmd("TICKET.CLAIM")
        .arg("e")
        .arg("y");
    let err = pipe
        .query::<Value>(&mut c)
        .expect_err("CLAIM inside MULTI after HSET closed");
    assert!(error_line(&err).contains("CLOSED"), "{err}");
    let _: Value = redis::cmd("EVAL")
        .arg("return redis.call('HSET', KEYS[1], 'status', 'open')")
        .arg(1)
        .arg(&mk)
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "y"), 6);
    assert_eq!(status_text(&mut c, "e"), "open");
}

#[test]
fn deleted_renamed_copied_and_restored_meta_keys_are_seen() {
    let server = RedisServer::start();
    let mut c = server.conn();
    warm(&mut c, "e", 10);
    warm(&mut c, "f", 20);

    // DEL / UNLINK of the meta hash: the event is gone for the module.
    let dump: Vec<u8> = redis::cmd("DUMP")
        .arg(key("e", "meta"))
        .query(&mut c)
        .unwrap();
    run(&mut c, &["UNLINK", &key("e", "meta")]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "b"], "NOEVENT");
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    expect_error(&mut c, &["TICKET.HOLDER", "e", "a"], "NOEVENT");
    // RESTORE brings it back.
    let _: () = redis::cmd("RESTORE")
        .arg(key("e", "meta"))
        .arg(0)
        .arg(dump)
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "b"), 2);

    // COPY ... REPLACE over f's meta: f now has e's total.
    run(
        &mut c,
        &["COPY", &key("e", "meta"), &key("f", "meta"), "REPLACE"],
    );
    assert_eq!(status_int(&mut c, "f", "total"), 10);
    // RENAME e's meta away: e is gone, the new name is not an event's meta.
    run(&mut c, &["RENAME", &key("e", "meta"), "elsewhere"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "c"], "NOEVENT");
    // And back.
    run(&mut c, &["RENAME", "elsewhere", &key("e", "meta")]);
    assert_eq!(claim(&mut c, "e", "c"), 3);
    // RENAME f's meta onto e's: e takes f's (copied) meta, f is gone.
    run(
        &mut c,
        &["HSET", &key("f", "meta"), "total", "3", "minted", "3"],
    );
    run(&mut c, &["RENAME", &key("f", "meta"), &key("e", "meta")]);
    assert_eq!(status_int(&mut c, "e", "total"), 3);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "d"], "SOLDOUT");
    expect_error(&mut c, &["TICKET.STATUS", "f"], "NOEVENT");

    // MOVE to another database and back.
    run(&mut c, &["MOVE", &key("e", "meta"), "1"]);
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    run(&mut c, &["SELECT", "1"]);
    assert_eq!(status_int(&mut c, "e", "total"), 3);
    run(&mut c, &["MOVE", &key("e", "meta"), "0"]);
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    run(&mut c, &["SELECT", "0"]);
    assert_eq!(status_int(&mut c, "e", "total"), 3);
}

/// Claims remember that the pool key is absent and stop opening it; a
/// number put back by anyone else (a hand edit, a slot migration's
/// RESTORE) is still the next claim's.
#[test]
fn numbers_put_in_the_pool_by_others_are_seen() {
    let server = RedisServer::start();
    let mut c = server.conn();
    warm(&mut c, "e", 3);
    // Through the module: its own return is seen (a cancel), and the pool
    // is found absent again once the claim has taken the number back.
    assert_eq!(claim(&mut c, "e", "b"), 2);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e", "a"]), Some(1));
    let pooled: Vec<u8> = redis::cmd("DUMP")
        .arg(key("e", "pool"))
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "c"), 1);
    assert_eq!(claim(&mut c, "e", "d"), 3);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "SOLDOUT");

    // By hand, in a transaction: c's number 1 goes back to the pool.
    run(&mut c, &["MULTI"]);
    run(&mut c, &["HDEL", &key("e", "holders"), "c"]);
    run(&mut c, &["ZADD", &key("e", "pool"), "1", "1"]);
    run(&mut c, &["EXEC"]);
    assert_eq!(claim(&mut c, "e", "y"), 1);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "SOLDOUT");

    // By RESTORE, as a migrating slot brings it: y's number again.
    run(&mut c, &["HDEL", &key("e", "holders"), "y"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "TRYAGAIN");
    let _: () = redis::cmd("RESTORE")
        .arg(key("e", "pool"))
        .arg(0)
        .arg(pooled)
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "z"), 1);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "SOLDOUT");
}

#[test]
fn expiry_of_the_meta_key_is_seen() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // Active expiry off: the key is only removed when something looks at it.
    run(&mut c, &["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    warm(&mut c, "e", 10);
    run(&mut c, &["PEXPIRE", &key("e", "meta"), "150"]);
    assert_eq!(claim(&mut c, "e", "b"), 2);
    assert_eq!(status_int(&mut c, "e", "total"), 10);
    sleep(Duration::from_millis(300));
    assert_eq!(err_code(&mut c, &["TICKET.CLAIM", "e", "c"]), "NOEVENT");
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");

    // The same through the read-only commands first.
    warm(&mut c, "r", 10);
    run(&mut c, &["PEXPIRE", &key("r", "meta"), "150"]);
    assert_eq!(status_int(&mut c, "r", "total"), 10);
    sleep(Duration::from_millis(300));
    assert_eq!(err_code(&mut c, &["TICKET.STATUS", "r"]), "NOEVENT");
    expect_error(&mut c, &["TICKET.HOLDER", "r", "a"], "NOEVENT");
    expect_error(&mut c, &["TICKET.CLAIM", "r", "c"], "NOEVENT");
}

#[test]
fn databases_flushes_swaps_and_reloads_are_seen() {
    let server = RedisServer::start();
    let mut c = server.conn();
    run(&mut c, &["CONFIG", "SET", "ticket.pool-chunk", "1"]);
    warm(&mut c, "e", 10);
    // The same event id in another database is another event.
    run(&mut c, &["SELECT", "3"]);
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    warm(&mut c, "e", 5);
    run(&mut c, &["SELECT", "0"]);
    assert_eq!(status_int(&mut c, "e", "total"), 10);
    assert_eq!(claim(&mut c, "e", "b"), 2);

    run(&mut c, &["SWAPDB", "0", "3"]);
    assert_eq!(status_int(&mut c, "e", "total"), 5);
    assert_eq!(claim(&mut c, "e", "b"), 2);
    assert_eq!(status_int(&mut c, "e", "claimed"), 2);
    run(&mut c, &["SWAPDB", "0", "3"]);
    assert_eq!(status_int(&mut c, "e", "total"), 10);
    assert_eq!(status_int(&mut c, "e", "claimed"), 2);

    // A reload from RDB keeps everything.
    let before = digest(&mut c);
    run(&mut c, &["DEBUG", "RELOAD"]);
    assert_eq!(digest(&mut c), before);
    assert_eq!(claim(&mut c, "e", "c"), 3);

    run(&mut c, &["FLUSHDB"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "d"], "NOEVENT");
    warm(&mut c, "e", 7);
    assert_eq!(status_int(&mut c, "e", "remaining"), 6);
    run(&mut c, &["FLUSHALL"]);
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    run(&mut c, &["SELECT", "3"]);
    expect_error(&mut c, &["TICKET.STATUS", "e"], "NOEVENT");
    warm(&mut c, "e", 4);
    assert_eq!(status_int(&mut c, "e", "remaining"), 3);

    // Drop and re-create with another size.
    assert_eq!(int(&mut c, &["TICKET.DROP", "e", "FORCE"]), 2);
    warm(&mut c, "e", 2);
    assert_eq!(claim(&mut c, "e", "b"), 2);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "c"], "SOLDOUT");
}

#[test]
fn more_events_than_any_cache_holds() {
    const EVENTS: usize = 12_000;
    let server = RedisServer::start();
    let mut c = server.conn();
    let name = |i: usize| format!("ev{i}");
    let mut pipe = redis::pipe();
    for i in 0..EVENTS {
        pipe.cmd("TICKET.INIT").arg(name(i)).arg(2 + i % 3).ignore();
        pipe.cmd("TICKET.CLAIM").arg(name(i)).arg("a");
    }
    let first: Vec<i64> = pipe.query(&mut c).unwrap();
    assert!(first.iter().all(|&n| n == 1));
    // Twice round every event, in an order that defeats any recency.
    for round in 0..2 {
        let mut pipe = redis::pipe();
        for i in (0..EVENTS).rev() {
            pipe.cmd("TICKET.CLAIM").arg(name(i)).arg("b");
            pipe.cmd("TICKET.HOLDER").arg(name(i)).arg("a");
            pipe.cmd("TICKET.STATUS").arg(name(i));
        }
        let replies: Vec<Value> = pipe.query(&mut c).unwrap();
        for (j, chunk) in replies.chunks(3).enumerate() {
            let i = EVENTS - 1 - j;
            assert_eq!(chunk[0], Value::Int(2), "round {round} {}", name(i));
            assert_eq!(chunk[1], Value::Int(1), "round {round} {}", name(i));
            let total = (2 + i % 3) as i64;
            match &chunk[2] {
                Value::Array(st) => {
                    assert_eq!(st[1], Value::Int(total), "{}", name(i));
                    assert_eq!(st[3], Value::Int(total - 2), "{}", name(i));
                }
                other => panic!("{other:?}"),
            }
        }
    }
    // Every event's log has its own init and the two claims (a compact
    // claim names no event: its key says it; the init does).
    for i in [0, 4095, 4096, 4097, 9_999, 10_000, 10_001, EVENTS - 1] {
        let entries = log(&mut c, &name(i));
        let ops: Vec<_> = entries.iter().map(|e| field(e, "op")).collect();
        assert_eq!(
            ops,
            [Some("init"), Some("claim"), Some("claim")],
            "{}",
            name(i)
        );
        assert_eq!(field(&entries[0], "event"), Some(name(i).as_str()));
        let users: Vec<_> = entries[1..].iter().map(|e| field(e, "user")).collect();
        assert_eq!(users, [Some("a"), Some("b")], "{}", name(i));
    }
}

/// The shared object is not really unmapped by `MODULE UNLOAD`, so its
/// thread-local meta cache survives into the next `MODULE LOAD` of the same
/// path, while the changes made in between raised no notification the
/// unloaded module could see. A stale `minted` there would
/// hand out numbers that are already held, so the cache is cleared on load.
#[test]
fn changes_while_the_module_is_unloaded_are_seen_after_reload() {
    let server = RedisServer::start_with(&["--enable-module-command", "yes"]);
    let mut c = server.conn();
    let path = ticketgate_tests::module_path();
    let path = path.to_str().unwrap();
    run(&mut c, &["CONFIG", "SET", "ticket.pool-chunk", "1"]);
    warm(&mut c, "e", 10);
    warm(&mut c, "gone", 10);
    ok(&mut c, &["MODULE", "UNLOAD", "ticket"]);
    // While unloaded: another writer (a restore, a replication stream on a
    // replica) moves the event on.
    run(
        &mut c,
        &["HSET", &key("e", "meta"), "minted", "5", "status", "closed"],
    );
    for (i, u) in ["b", "c", "d", "e"].iter().enumerate() {
        run(
            &mut c,
            &["HSET", &key("e", "holders"), u, &(i + 2).to_string()],
        );
    }
    run(&mut c, &["DEL", &key("gone", "meta")]);
    ok(&mut c, &["MODULE", "LOAD", path]);

    assert_eq!(status_text(&mut c, "e"), "closed");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "x"], "CLOSED");
    expect_error(&mut c, &["TICKET.STATUS", "gone"], "NOEVENT");
    ok(&mut c, &["TICKET.OPEN", "e"]);
    assert_eq!(claim(&mut c, "e", "x"), 6, "numbers 1..=5 are held");
    let h = holders(&mut c, "e");
    let mut numbers: Vec<i64> = h.values().copied().collect();
    numbers.sort_unstable();
    assert_eq!(numbers, [1, 2, 3, 4, 5, 6]);
}
