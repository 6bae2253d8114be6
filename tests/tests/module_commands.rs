//! Every `TICKET.*` command's happy path against a real redis-server with the
//! module loaded: replies and their shapes (RESP2 and RESP3), the keys they
//! write, and the log records they append (or do not append).

#[path = "support/module.rs"]
mod support;

use std::collections::HashMap;

use redis::Value;
use support::*;
use ticketgate_tests::RedisServer;

fn hgetall(conn: &mut redis::Connection, key: &str) -> HashMap<String, String> {
    redis::cmd("HGETALL").arg(key).query(conn).expect("HGETALL")
}

#[test]
fn init_creates_meta_and_logs_init_record() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let t0 = server_ms(&mut c);
    ok(&mut c, &["TICKET.INIT", "e1", "10"]);
    let t1 = server_ms(&mut c);

    let meta = hgetall(&mut c, &key("e1", "meta"));
    assert_eq!(meta.get("total").map(String::as_str), Some("10"));
    assert_eq!(meta.get("minted").map(String::as_str), Some("0"));
    assert_eq!(meta.get("status").map(String::as_str), Some("open"));
    assert_eq!(meta.get("opens_at").map(String::as_str), Some("0"));
    assert_eq!(meta.get("closes_at").map(String::as_str), Some("0"));
    let created: i64 = meta["created_at"].parse().expect("numeric created_at");
    assert!((t0..=t1).contains(&created), "{created} not in {t0}..={t1}");
    // Lazy pool: nothing minted until the first claim, no holders yet.
    assert!(!exists(&mut c, &key("e1", "pool")));
    assert!(!exists(&mut c, &key("e1", "holders")));

    let entries = log(&mut c, "e1");
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert_eq!(
        field_names(e),
        [
            "op",
            "event",
            "total",
            "opens_at",
            "closes_at",
            "incarnation",
            "at"
        ]
    );
    assert_eq!(
        field(e, "incarnation"),
        meta.get("incarnation").map(String::as_str)
    );
    assert_eq!(field(e, "op"), Some("init"));
    assert_eq!(field(e, "event"), Some("e1"));
    assert_eq!(field(e, "total"), Some("10"));
    assert_eq!(field(e, "opens_at"), Some("0"));
    assert_eq!(field(e, "closes_at"), Some("0"));
    let at: i64 = field(e, "at").unwrap().parse().unwrap();
    assert!((t0..=t1).contains(&at), "at {at} not in {t0}..={t1}");

    let st = status(&mut c, "e1");
    assert_eq!(st["total"], Value::Int(10));
    assert_eq!(st["remaining"], Value::Int(10));
    assert_eq!(st["claimed"], Value::Int(0));
    assert_eq!(st["status"], Value::BulkString(b"open".to_vec()));
    assert_eq!(st["opens_at"], Value::Int(0));
    assert_eq!(st["closes_at"], Value::Int(0));
    assert_eq!(st["unsynced"], Value::Int(1));
}

#[test]
fn init_with_window_options_in_any_case_and_order() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let now = server_ms(&mut c);
    let (opens, closes) = (now - 1000, now + 3_600_000);
    ok(
        &mut c,
        &[
            "TICKET.INIT",
            "w1",
            "5",
            "closes",
            &closes.to_string(),
            "Opens",
            &opens.to_string(),
        ],
    );
    let meta = hgetall(&mut c, &key("w1", "meta"));
    assert_eq!(meta["opens_at"], opens.to_string());
    assert_eq!(meta["closes_at"], closes.to_string());
    let e = &log(&mut c, "w1")[0];
    assert_eq!(field(e, "opens_at"), Some(opens.to_string().as_str()));
    assert_eq!(field(e, "closes_at"), Some(closes.to_string().as_str()));
    let st = status(&mut c, "w1");
    assert_eq!(st["opens_at"], Value::Int(opens));
    assert_eq!(st["closes_at"], Value::Int(closes));
    // Inside the window: claims work.
    assert_eq!(claim(&mut c, "w1", "a"), 1);

    // Only one bound, and explicit zeros meaning "none".
    ok(
        &mut c,
        &["TICKET.INIT", "w2", "5", "CLOSES", &closes.to_string()],
    );
    ok(
        &mut c,
        &["TICKET.INIT", "w3", "5", "OPENS", "0", "CLOSES", "0"],
    );
    assert_eq!(status_int(&mut c, "w2", "opens_at"), 0);
    assert_eq!(status_int(&mut c, "w2", "closes_at"), closes);
    assert_eq!(status_int(&mut c, "w3", "closes_at"), 0);
    assert_eq!(claim(&mut c, "w3", "a"), 1);

    // The largest total is accepted (and costs nothing: the pool is lazy).
    ok(&mut c, &["TICKET.INIT", "max", "2147483647"]);
    assert_eq!(status_int(&mut c, "max", "remaining"), 2_147_483_647);
    assert_eq!(claim(&mut c, "max", "a"), 1);
    assert_eq!(status_int(&mut c, "max", "remaining"), 2_147_483_646);
}

#[test]
fn claim_hands_out_lowest_first_and_repeats_change_nothing() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e1", "5"]);
    for (i, user) in ["u1", "u2", "u3"].iter().enumerate() {
        assert_eq!(claim(&mut c, "e1", user), i as i64 + 1);
    }
    assert_eq!(log_len(&mut c, "e1"), 4, "init + 3 claims");

    // A repeated claim returns the same number, appends nothing, changes nothing.
    let before = snapshot(&mut c);
    for _ in 0..3 {
        assert_eq!(claim(&mut c, "e1", "u2"), 2);
    }
    assert_eq!(
        snapshot(&mut c),
        before,
        "a repeat claim changed the dataset"
    );

    let t0 = server_ms(&mut c);
    assert_eq!(claim(&mut c, "e1", "u4"), 4);
    let t1 = server_ms(&mut c);
    let entries = log(&mut c, "e1");
    assert_eq!(entries.len(), 5);
    let last = entries.last().unwrap();
    assert_compact(last, "claim");
    assert_eq!(field(last, "op"), Some("claim"));
    assert_eq!(field(last, "user"), Some("u4"));
    assert_eq!(field(last, "ticket"), Some("4"));
    let at: i64 = field(last, "at").unwrap().parse().unwrap();
    assert!((t0..=t1).contains(&at), "at {at} not in {t0}..={t1}");

    // Holders hash and HOLDER agree.
    let h = holders(&mut c, "e1");
    assert_eq!(
        h,
        HashMap::from([
            ("u1".into(), 1),
            ("u2".into(), 2),
            ("u3".into(), 3),
            ("u4".into(), 4)
        ])
    );
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e1", "u3"]), Some(3));
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e1", "nobody"]), None);
    assert_eq!(replay(&log(&mut c, "e1")), h);

    // The last ticket, then the loser: SOLDOUT and no log entry.
    assert_eq!(claim(&mut c, "e1", "u5"), 5);
    let n = log_len(&mut c, "e1");
    expect_error(&mut c, &["TICKET.CLAIM", "e1", "u6"], "SOLDOUT");
    assert_eq!(log_len(&mut c, "e1"), n);
    // Repeat claims are still answered when sold out.
    assert_eq!(claim(&mut c, "e1", "u1"), 1);
    assert_eq!(log_len(&mut c, "e1"), n);
}

#[test]
fn user_ids_are_any_utf8_up_to_64_bytes() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e1", "20"]);
    let users = [
        "jöe 42".to_string(),
        "用户-αβγ ✓".to_string(),
        "é".repeat(32), // 64 bytes
        "u".repeat(64),
        "a:b{c}d e'\"".to_string(),
        // Users named like the event, the log's field names and op values.
        "e1".to_string(),
        "op".to_string(),
        "claim".to_string(),
        "ticket".to_string(),
        "init".to_string(),
        "at".to_string(),
    ];
    for (i, u) in users.iter().enumerate() {
        assert_eq!(claim(&mut c, "e1", u), i as i64 + 1, "user {u:?}");
        assert_eq!(
            int_or_nil(&mut c, &["TICKET.HOLDER", "e1", u]),
            Some(i as i64 + 1)
        );
    }
    let h = holders(&mut c, "e1");
    for (i, u) in users.iter().enumerate() {
        assert_eq!(h.get(u), Some(&(i as i64 + 1)), "holders[{u:?}]");
    }
    assert_eq!(replay(&log(&mut c, "e1")), h);
    // A 64-byte event id is fine too.
    let long_event = "E".repeat(64);
    ok(&mut c, &["TICKET.INIT", &long_event, "1"]);
    assert_eq!(claim(&mut c, &long_event, "x"), 1);
    assert_eq!(
        int_or_nil(&mut c, &["TICKET.HOLDER", &long_event, "x"]),
        Some(1)
    );
}

#[test]
fn cancel_returns_the_number_which_is_reissued_first() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e1", "10"]);
    for u in ["u1", "u2", "u3", "u4"] {
        claim(&mut c, "e1", u);
    }
    let t0 = server_ms(&mut c);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e1", "u2"]), Some(2));
    let t1 = server_ms(&mut c);
    let entries = log(&mut c, "e1");
    let last = entries.last().unwrap();
    assert_compact(last, "cancel");
    assert_eq!(field(last, "op"), Some("cancel"));
    assert_eq!(field(last, "user"), Some("u2"));
    assert_eq!(field(last, "ticket"), Some("2"));
    let at: i64 = field(last, "at").unwrap().parse().unwrap();
    assert!((t0..=t1).contains(&at));

    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e1", "u2"]), None);
    assert_eq!(status_int(&mut c, "e1", "claimed"), 3);
    assert_eq!(status_int(&mut c, "e1", "remaining"), 7);

    // Nothing to cancel: nil, and nothing changes.
    let before = snapshot(&mut c);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e1", "u2"]), None);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e1", "never"]), None);
    assert_eq!(snapshot(&mut c), before, "a nil cancel changed the dataset");

    // Two returned numbers: the lowest comes back first, then the other,
    // then fresh ones.
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e1", "u4"]), Some(4));
    assert_eq!(claim(&mut c, "e1", "u5"), 2);
    assert_eq!(claim(&mut c, "e1", "u2"), 4, "the canceller claims again");
    assert_eq!(claim(&mut c, "e1", "u6"), 5);
    assert_eq!(replay(&log(&mut c, "e1")), holders(&mut c, "e1"));
    assert_eq!(
        status_int(&mut c, "e1", "remaining") + status_int(&mut c, "e1", "claimed"),
        10
    );

    // A sold-out event gets a ticket back by a cancel.
    ok(&mut c, &["TICKET.INIT", "one", "1"]);
    assert_eq!(claim(&mut c, "one", "a"), 1);
    expect_error(&mut c, &["TICKET.CLAIM", "one", "b"], "SOLDOUT");
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "one", "a"]), Some(1));
    assert_eq!(status_int(&mut c, "one", "remaining"), 1);
    assert_eq!(claim(&mut c, "one", "b"), 1);
    // The holders hash emptied and refilled; the log tells the whole story.
    assert_eq!(replay(&log(&mut c, "one")), holders(&mut c, "one"));
}

#[test]
fn status_is_a_flat_array_in_resp2_and_a_map_in_resp3() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &[
            "TICKET.INIT",
            "s1",
            "7",
            "OPENS",
            "1000",
            "CLOSES",
            "99999999999999",
        ],
    );
    claim(&mut c, "s1", "a");
    claim(&mut c, "s1", "b");
    ok(&mut c, &["TICKET.CLOSE", "s1"]);

    let flat = match value(&mut c, &["TICKET.STATUS", "s1"]) {
        Value::Array(items) => items,
        other => panic!("RESP2 STATUS: {other:?}"),
    };
    let b = |s: &str| Value::BulkString(s.as_bytes().to_vec());
    let incarnation: String = redis::cmd("HGET")
        .arg(key("s1", "meta"))
        .arg("incarnation")
        .query(&mut c)
        .unwrap();
    assert_eq!(incarnation.len(), 16, "{incarnation}");
    assert_eq!(
        flat,
        vec![
            b("total"),
            Value::Int(7),
            b("remaining"),
            Value::Int(5),
            b("claimed"),
            Value::Int(2),
            b("status"),
            b("closed"),
            b("opens_at"),
            Value::Int(1000),
            b("closes_at"),
            Value::Int(99_999_999_999_999),
            b("unsynced"),
            Value::Int(4),
            b("held"),
            Value::Int(0),
            b("waiting"),
            Value::Int(0),
            b("incarnation"),
            b(&incarnation),
        ]
    );

    let client = redis::Client::open(format!("{}/?protocol=resp3", server.url())).unwrap();
    let mut c3 = client.get_connection().expect("RESP3 connection");
    let map = match cmd(&["TICKET.STATUS", "s1"])
        .query::<Value>(&mut c3)
        .unwrap()
    {
        Value::Map(pairs) => pairs,
        other => panic!("RESP3 STATUS is not a map: {other:?}"),
    };
    let expected: Vec<(Value, Value)> = flat
        .chunks(2)
        .map(|kv| (kv[0].clone(), kv[1].clone()))
        .collect();
    assert_eq!(map, expected, "RESP3 map: same names, values and order");

    // The other replies in RESP3: integers, nulls, OK, errors with codes.
    let q = |c: &mut redis::Connection, parts: &[&str]| cmd(parts).query::<Value>(c);
    assert_eq!(
        q(&mut c3, &["TICKET.HOLDER", "s1", "a"]).unwrap(),
        Value::Int(1)
    );
    assert_eq!(
        q(&mut c3, &["TICKET.HOLDER", "s1", "zz"]).unwrap(),
        Value::Nil
    );
    assert_eq!(
        q(&mut c3, &["TICKET.CANCEL", "s1", "zz"]).unwrap(),
        Value::Nil
    );
    assert_eq!(
        q(&mut c3, &["TICKET.CANCEL", "s1", "b"]).unwrap(),
        Value::Int(2)
    );
    assert_eq!(
        q(&mut c3, &["TICKET.CLAIM", "s1", "a"]).unwrap(),
        Value::Int(1)
    );
    assert_eq!(q(&mut c3, &["TICKET.OPEN", "s1"]).unwrap(), Value::Okay);
    assert_eq!(
        q(&mut c3, &["TICKET.CLAIM", "s1", "c"]).unwrap(),
        Value::Int(2)
    );
    let err = q(&mut c3, &["TICKET.CLAIM", "nope", "c"]).unwrap_err();
    assert_eq!(error_line(&err), "NOEVENT event 'nope' does not exist");
}

#[test]
fn close_and_open_gate_new_claims_are_idempotent_and_logged_once() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e1", "10"]);
    assert_eq!(claim(&mut c, "e1", "early"), 1);

    ok(&mut c, &["TICKET.CLOSE", "e1"]);
    let entries = log(&mut c, "e1");
    assert_eq!(entries.len(), 3);
    let last = entries.last().unwrap();
    assert_eq!(field_names(last), ["op", "event", "at"]);
    assert_eq!(field(last, "op"), Some("close"));
    assert_eq!(field(last, "event"), Some("e1"));
    let meta = hgetall(&mut c, &key("e1", "meta"));
    assert_eq!(meta["status"], "closed");
    let st = status(&mut c, "e1");
    assert_eq!(st["status"], Value::BulkString(b"closed".to_vec()));

    // Closing again: OK, nothing changes, nothing is logged.
    let before = snapshot(&mut c);
    ok(&mut c, &["TICKET.CLOSE", "e1"]);
    assert_eq!(
        snapshot(&mut c),
        before,
        "a repeated CLOSE changed something"
    );

    expect_error(&mut c, &["TICKET.CLAIM", "e1", "late"], "CLOSED");
    // Repeat claims are still answered after close, and log nothing.
    assert_eq!(claim(&mut c, "e1", "early"), 1);
    assert_eq!(snapshot(&mut c), before);
    // A cancel (refund) is allowed while closed; the number is free again.
    assert_eq!(
        int_or_nil(&mut c, &["TICKET.CANCEL", "e1", "early"]),
        Some(1)
    );

    ok(&mut c, &["TICKET.OPEN", "e1"]);
    let last = log(&mut c, "e1").pop().unwrap();
    assert_eq!(field_names(&last), ["op", "event", "at"]);
    assert_eq!(field(&last, "op"), Some("open"));
    let before = snapshot(&mut c);
    ok(&mut c, &["TICKET.OPEN", "e1"]);
    assert_eq!(
        snapshot(&mut c),
        before,
        "a repeated OPEN changed something"
    );
    assert_eq!(claim(&mut c, "e1", "late"), 1, "the refunded number first");
    assert_eq!(claim(&mut c, "e1", "later"), 2);

    let ops: Vec<String> = log(&mut c, "e1")
        .iter()
        .map(|e| field(e, "op").unwrap().to_string())
        .collect();
    assert_eq!(
        ops,
        ["init", "claim", "close", "cancel", "open", "claim", "claim"]
    );
}

#[test]
fn drop_refuses_unsynced_logs_unless_forced_and_counts_keys() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // Mint ahead so that a claim leaves a pool key behind (whatever the default).
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("ticket.pool-chunk")
        .arg(1024)
        .query(&mut c)
        .unwrap();
    ok(&mut c, &["TICKET.INIT", "d1", "10"]);
    claim(&mut c, "d1", "a");
    let msg = expect_error(&mut c, &["TICKET.DROP", "d1"], "UNSYNCED");
    assert!(msg.contains("'d1'") && msg.contains(" 2 "), "{msg}");
    // FORCE (any case) deletes meta, pool and holders; the log stays, with
    // an op=drop entry as the trace of the drop (not counted in the reply).
    let before = log(&mut c, "d1");
    assert_eq!(int(&mut c, &["TICKET.DROP", "d1", "force"]), 3);
    for part in ["meta", "pool", "holders"] {
        assert!(!exists(&mut c, &key("d1", part)), "{part} left behind");
    }
    let after = log(&mut c, "d1");
    assert_eq!(after.len(), 3, "{after:?}");
    assert_eq!(after[..2], before[..]);
    let drop = &after[2];
    assert_eq!(field_names(drop), ["op", "event", "at"]);
    assert_eq!(field(drop, "op"), Some("drop"));
    assert_eq!(field(drop, "event"), Some("d1"));
    expect_error(&mut c, &["TICKET.STATUS", "d1"], "NOEVENT");
    // Only the log is left: the UNSYNCED rule still applies, and a forced
    // drop is logged again (0 keys deleted).
    expect_error(&mut c, &["TICKET.DROP", "d1"], "UNSYNCED");
    assert_eq!(int(&mut c, &["TICKET.DROP", "d1", "FORCE"]), 0);
    assert_eq!(log_len(&mut c, "d1"), 4);
    // Dropping what does not exist at all deletes and logs nothing.
    assert_eq!(int(&mut c, &["TICKET.DROP", "never", "FORCE"]), 0);
    assert!(!exists(&mut c, &key("never", "log")));
    // The event can be created again, from scratch; its log goes on (the
    // ids keep growing).
    ok(&mut c, &["TICKET.INIT", "d1", "3"]);
    assert_eq!(claim(&mut c, "d1", "a"), 1);
    let again = log(&mut c, "d1");
    assert_eq!(again.len(), 6);
    assert_eq!(field(&again[4], "op"), Some("init"));
    assert!(id_pair(&again[4].0) > id_pair(&after[2].0));

    // A one-ticket event never creates a pool key: two keys.
    ok(&mut c, &["TICKET.INIT", "d2", "1"]);
    claim(&mut c, "d2", "a");
    assert!(!exists(&mut c, &key("d2", "pool")));
    assert_eq!(int(&mut c, &["TICKET.DROP", "d2", "FORCE"]), 2);

    // Once the sidecar has trimmed the log to nothing, DROP needs no FORCE.
    ok(&mut c, &["TICKET.INIT", "d3", "10"]);
    claim(&mut c, "d3", "a");
    claim(&mut c, "d3", "b");
    int(&mut c, &["TICKET.CANCEL", "d3", "a"]);
    let _: i64 = redis::cmd("XTRIM")
        .arg(key("d3", "log"))
        .arg("MAXLEN")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(status_int(&mut c, "d3", "unsynced"), 0);
    assert!(exists(&mut c, &key("d3", "log")), "an empty stream remains");
    let other = snapshot(&mut c);
    assert_eq!(int(&mut c, &["TICKET.DROP", "d3"]), 3);
    assert_eq!(log_len(&mut c, "d3"), 1, "only the op=drop entry");
    assert!(!exists(&mut c, &key("d3", "meta")));
    // Other events untouched.
    let after = snapshot(&mut c);
    let not_d3 = |s: &Snapshot| {
        s.keys
            .iter()
            .filter(|(k, _)| !k.contains("{d3}"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(not_d3(&other), not_d3(&after));
    assert_eq!(claim(&mut c, "d1", "b"), 2);

    // Only an undrained log left (the rest deleted by hand): still refused
    // without FORCE, and FORCE deletes just that one key.
    ok(&mut c, &["TICKET.INIT", "d4", "10"]);
    claim(&mut c, "d4", "a");
    for part in ["meta", "pool", "holders"] {
        let _: i64 = redis::cmd("DEL")
            .arg(key("d4", part))
            .query(&mut c)
            .unwrap();
    }
    expect_error(&mut c, &["TICKET.DROP", "d4"], "UNSYNCED");
    assert_eq!(int(&mut c, &["TICKET.DROP", "d4", "FORCE"]), 0);
    let entries = log(&mut c, "d4");
    assert_eq!(entries.len(), 3, "init, claim, drop: {entries:?}");
    assert_eq!(field(&entries[2], "op"), Some("drop"));
}

/// A compact record of `op` about one ticket: `<op> <user> ticket <n>`,
/// then `at` only when the entry id does not start with it (the event is
/// in the key, so no `op`, `event` or `user` field).
fn assert_compact(entry: &Entry, op: &str) {
    let names = field_names(entry);
    assert_eq!(names[..2], [op, "ticket"], "{entry:?}");
    assert!(names.len() == 2 || names[2..] == ["at"], "{entry:?}");
    assert_eq!(field(entry, "event"), None, "{entry:?}");
}
