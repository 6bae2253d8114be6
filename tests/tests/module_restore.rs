//! Incarnations, DROP's trace and `TICKET.RESTORE` (issue 11) against a
//! real redis-server: INIT stamps an incarnation everywhere; DROP keeps the
//! log with an `op=drop` entry and a re-INIT continues it; a restore in
//! steps installs a snapshot (sold, multi-ticket, held and past-deadline
//! orders, free numbers), answers TRYAGAIN meanwhile, refuses every bad step
//! without changing anything, and reaches a strict replica and an AOF
//! reload byte for byte.

#[path = "support/module.rs"]
mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

const INCARNATION: &str = "00000000deadbeef";

/// `TICKET.RESTORE E BEGIN ...` with the given values (and `extra`, e.g.
/// `FORCE`).
fn begin_args<'a>(event: &'a str, values: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["TICKET.RESTORE", event, "BEGIN"];
    args.extend_from_slice(values);
    args.extend_from_slice(extra);
    args
}

/// `incarnation total minted status opens closes hold limit offer orders from`.
fn values<'a>(minted: &'a str, orders: &'a str, from: &'a str) -> [&'a str; 11] {
    [
        INCARNATION,
        "20",
        minted,
        "open",
        "0",
        "0",
        "60000",
        "3",
        "60000",
        orders,
        from,
    ]
}

/// The incarnation STATUS reports (nil -> None).
fn incarnation(c: &mut Connection, event: &str) -> Option<String> {
    match status(c, event).remove("incarnation") {
        Some(Value::BulkString(b)) => Some(String::from_utf8(b).unwrap()),
        Some(Value::Nil) => None,
        other => panic!("STATUS incarnation: {other:?}"),
    }
}

fn meta_field(c: &mut Connection, event: &str, name: &str) -> Option<String> {
    redis::cmd("HGET")
        .arg(key(event, "meta"))
        .arg(name)
        .query(c)
        .unwrap()
}

fn status_text(c: &mut Connection, event: &str) -> String {
    match status(c, event).remove("status") {
        Some(Value::BulkString(b)) => String::from_utf8(b).unwrap(),
        other => panic!("STATUS status: {other:?}"),
    }
}

#[test]
fn init_stamps_distinct_incarnations_in_status_meta_log_and_replica() {
    let primary = RedisServer::start();
    let replica = strict_replica_of(&primary.port().to_string());
    let mut c = primary.conn();
    let mut seen = BTreeSet::new();
    for event in ["e1", "e2", "e3"] {
        ok(&mut c, &["TICKET.INIT", event, "5"]);
        let i = incarnation(&mut c, event).expect("a 0.3 event has an incarnation");
        assert_eq!(i.len(), 16, "{i}");
        assert!(
            i.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
            "{i}"
        );
        assert_ne!(i, "0000000000000000");
        assert_eq!(meta_field(&mut c, event, "incarnation"), Some(i.clone()));
        let init = &log(&mut c, event)[0];
        assert_eq!(field(init, "op"), Some("init"));
        assert_eq!(field(init, "incarnation"), Some(i.as_str()));
        assert!(seen.insert(i), "incarnations differ");
    }
    // Re-created after a drop: a new incarnation, in the same log.
    let old = incarnation(&mut c, "e1").unwrap();
    assert_eq!(int(&mut c, &["TICKET.DROP", "e1", "FORCE"]), 1);
    ok(&mut c, &["TICKET.INIT", "e1", "5"]);
    let new = incarnation(&mut c, "e1").unwrap();
    assert_ne!(old, new);
    let inits: Vec<String> = log(&mut c, "e1")
        .iter()
        .filter(|e| field(e, "op") == Some("init"))
        .map(|e| field(e, "incarnation").unwrap().to_owned())
        .collect();
    assert_eq!(inits.last(), Some(&new));

    wait_replicated(&mut c, 1);
    let mut r = replica.conn();
    for event in ["e1", "e2", "e3"] {
        assert_eq!(incarnation(&mut r, event), incarnation(&mut c, event));
    }
    assert_eq!(digest(&mut r), digest(&mut c));
}

#[test]
fn drop_keeps_the_log_with_an_op_drop_and_a_new_init_continues_it() {
    let primary = RedisServer::start();
    let replica = strict_replica_of(&primary.port().to_string());
    let mut c = primary.conn();
    set_chunk(&mut c, 4);
    ok(&mut c, &["TICKET.INIT", "d", "10", "HOLD", "60000"]);
    claim(&mut c, "d", "a");
    claim(&mut c, "d", "b");
    assert_eq!(
        int(&mut c, &["TICKET.WAIT", "d", "w"]),
        0,
        "offered at once"
    );
    // meta, pool, holders, holds (and the waiting list if w waits).
    let deleted = int(&mut c, &["TICKET.DROP", "d", "FORCE"]);
    assert!((4..=5).contains(&deleted), "{deleted}");
    for part in ["meta", "pool", "holders", "holds", "waiting"] {
        assert!(!exists(&mut c, &key("d", part)), "{part} left behind");
    }
    let entries = log(&mut c, "d");
    let ops: Vec<&str> = entries.iter().map(|e| field(e, "op").unwrap()).collect();
    assert_eq!(ops.last(), Some(&"drop"), "{ops:?}");
    let dropped = entries.last().unwrap().0.clone();
    ok(&mut c, &["TICKET.INIT", "d", "3"]);
    assert_eq!(claim(&mut c, "d", "c"), 1, "from scratch");
    let entries = log(&mut c, "d");
    let after: Vec<&Entry> = entries
        .iter()
        .filter(|e| id_pair(&e.0) > id_pair(&dropped))
        .collect();
    let ops: Vec<&str> = after.iter().map(|e| field(e, "op").unwrap()).collect();
    assert_eq!(ops, ["init", "claim"]);
    wait_replicated(&mut c, 1);
    let mut r = replica.conn();
    assert_eq!(log(&mut r, "d"), log(&mut c, "d"), "same log, same ids");
    assert_eq!(digest(&mut r), digest(&mut c));
}

/// Restores event `e`: 20 tickets, minted 10; sold `a` {1}, `b` {2,3,4};
/// held `c` {6,7} for another minute; `d` {8} held until a second ago;
/// sold `e` {10}; free 5 and 9. Returns the commit's id.
fn restore_sample(c: &mut Connection, from: &str, force: bool) -> String {
    let now = server_ms(c);
    let live = (now + 60_000).to_string();
    let past = (now - 1_000).to_string();
    let extra: &[&str] = if force { &["FORCE"] } else { &[] };
    ok(c, &begin_args("e", &values("10", "5", from), extra));
    assert_eq!(
        int(
            c,
            &[
                "TICKET.RESTORE",
                "e",
                "ORDERS",
                "a",
                "1",
                "0",
                "b",
                "2,3,4",
                "0"
            ]
        ),
        2
    );
    assert_eq!(
        int(
            c,
            &[
                "TICKET.RESTORE",
                "e",
                "ORDERS",
                "c",
                "6,7",
                &live,
                "d",
                "8",
                &past
            ]
        ),
        4
    );
    assert_eq!(int(c, &["TICKET.RESTORE", "e", "FREE", "5"]), 1);
    assert_eq!(
        int(c, &["TICKET.RESTORE", "e", "ORDERS", "e", "10", "0"]),
        5
    );
    assert_eq!(int(c, &["TICKET.RESTORE", "e", "FREE", "9-9"]), 2);
    match value(c, &["TICKET.RESTORE", "e", "COMMIT"]) {
        Value::BulkString(id) => String::from_utf8(id).unwrap(),
        other => panic!("COMMIT: {other:?}"),
    }
}

/// Waits until the sweep has logged the expiry of `d`'s past hold.
fn wait_for_the_sweep(c: &mut Connection) {
    wait_until(
        Duration::from_secs(10),
        "the sweep expires d's hold",
        || users_of_op(c, "e", "expire") == ["d"],
    );
}

#[test]
fn a_full_restore_installs_the_snapshot_and_claims_resume_without_handing_out_a_number_twice() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // A live event of the same id with a log: FORCE replaces it.
    ok(&mut c, &["TICKET.INIT", "e", "5"]);
    claim(&mut c, "e", "old");
    let old_last = log(&mut c, "e").last().unwrap().0.clone();
    let t0 = server_ms(&mut c);
    let id = restore_sample(&mut c, "3-7", true);
    assert!(id_pair(&id) >= (t0 as u64, 0), "{id} not before now");
    assert!(id_pair(&id) > id_pair(&old_last) && id_pair(&id) > (3, 7));

    // The old log is gone; the new one starts with the restore.
    let entries = log(&mut c, "e");
    assert_eq!(entries.len(), 1, "{entries:?}");
    let restore = &entries[0];
    assert_eq!(restore.0, id);
    assert_eq!(
        field_names(restore),
        ["op", "event", "incarnation", "status", "from", "at"]
    );
    assert_eq!(field(restore, "op"), Some("restore"));
    assert_eq!(field(restore, "incarnation"), Some(INCARNATION));
    assert_eq!(field(restore, "status"), Some("open"));
    assert_eq!(field(restore, "from"), Some("3-7"));
    for staging in [
        "restore_status",
        "restore_orders",
        "restore_from",
        "restore_sum",
    ] {
        assert_eq!(meta_field(&mut c, "e", staging), None, "{staging} left");
    }

    // STATUS, HOLDER and ORDER: d's hold is past its deadline, so free.
    let st = status(&mut c, "e");
    assert_eq!(st["total"], Value::Int(20));
    assert_eq!(st["remaining"], Value::Int(13), "5, 8, 9 and 11..=20");
    assert_eq!(st["claimed"], Value::Int(7));
    assert_eq!(st["held"], Value::Int(2));
    assert_eq!(status_text(&mut c, "e"), "open");
    assert_eq!(incarnation(&mut c, "e").as_deref(), Some(INCARNATION));
    for (user, ticket) in [
        ("a", Some(1)),
        ("b", Some(2)),
        ("c", Some(6)),
        ("e", Some(10)),
    ] {
        assert_eq!(
            int_or_nil(&mut c, &["TICKET.HOLDER", "e", user]),
            ticket,
            "{user}"
        );
    }
    assert_eq!(
        order(&mut c, "e", "b"),
        Some((vec![2, 3, 4], "sold".into(), 0))
    );
    let (tickets, state, until) = order(&mut c, "e", "c").unwrap();
    assert_eq!((tickets, state.as_str()), (vec![6, 7], "held"));
    assert!(until > server_ms(&mut c) + 50_000);
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e", "d"]), None);

    // The sweep expires the past-deadline hold and logs it.
    wait_for_the_sweep(&mut c);
    let expire = log(&mut c, "e").pop().unwrap();
    assert_eq!(field(&expire, "ticket"), Some("8"));

    // Claims hand out the free numbers lowest first, then numbers above
    // minted; never a restored one.
    let got: Vec<i64> = (0..13)
        .map(|i| claim(&mut c, "e", &format!("n{i}")))
        .collect();
    let mut want = vec![5, 8, 9];
    want.extend(11..=20);
    assert_eq!(got, want);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "late"], "SOLDOUT");
    assert_eq!(claim(&mut c, "e", "a"), 1, "a restored holder repeats");
    assert_eq!(int(&mut c, &["TICKET.CONFIRM", "e", "c"]), 2);
}

#[test]
fn a_restore_id_is_past_the_snapshot_offset() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let future = (server_ms(&mut c) + 1_000_000_000) as u64;
    let from = format!("{future}-5");
    let id = restore_sample(&mut c, &from, false);
    assert_eq!(id_pair(&id), (future, 6), "next(from-id)");
    // The claims after it get ids after it.
    wait_for_the_sweep(&mut c);
    claim(&mut c, "e", "n");
    let entries = log(&mut c, "e");
    assert!(entries
        .windows(2)
        .all(|w| id_pair(&w[0].0) < id_pair(&w[1].0)));
}

#[test]
fn while_restoring_the_event_answers_tryagain_and_drop_abandons_it() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &begin_args("e", &values("10", "5", "0-0"), &[]));
    let past = (server_ms(&mut c) - 1).to_string();
    int(&mut c, &["TICKET.RESTORE", "e", "ORDERS", "a", "1", &past]);
    assert_eq!(status_text(&mut c, "e"), "restoring");
    assert_eq!(
        meta_field(&mut c, "e", "restore_status").as_deref(),
        Some("open")
    );
    for args in [
        &["TICKET.CLAIM", "e", "u"][..],
        &["TICKET.CLAIM", "e", "u", "COUNT", "2"],
        &["TICKET.CANCEL", "e", "a"],
        &["TICKET.CONFIRM", "e", "a"],
        &["TICKET.WAIT", "e", "u"],
        &["TICKET.LEAVE", "e", "u"],
        &["TICKET.OPEN", "e"],
        &["TICKET.CLOSE", "e"],
        &["TICKET.HOLDER", "e", "a"],
        &["TICKET.ORDER", "e", "a"],
        &["TICKET.POSITION", "e", "u"],
    ] {
        let line = expect_error(&mut c, args, "TRYAGAIN");
        assert!(
            line.contains("event 'e' is being restored"),
            "{args:?}: {line}"
        );
    }
    expect_error(&mut c, &["TICKET.INIT", "e", "5"], "EXISTS");
    // The past-deadline hold is not expired while restoring.
    std::thread::sleep(Duration::from_millis(400));
    assert!(users_of_op(&mut c, "e", "expire").is_empty());
    assert_eq!(status(&mut c, "e")["held"], Value::Int(1));
    // A BEGIN on an event being restored starts over without FORCE.
    ok(&mut c, &begin_args("e", &values("10", "5", "0-0"), &[]));
    assert!(!exists(&mut c, &key("e", "holders")));
    // DROP works and abandons it.
    assert_eq!(int(&mut c, &["TICKET.DROP", "e", "FORCE"]), 1);
    expect_error(&mut c, &["TICKET.RESTORE", "e", "COMMIT"], "NOTRESTORING");
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("TICKET.RESTORE")
        .arg("e")
        .arg("COMMIT")
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["e"]);
}

#[test]
fn begin_on_a_live_event_without_force_is_refused_and_changes_nothing() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "5"]);
    claim(&mut c, "e", "a");
    let before = digest(&mut c);
    let line = expect_error(
        &mut c,
        &begin_args("e", &values("1", "1", "0-0"), &[]),
        "EXISTS",
    );
    assert!(line.contains("'e'"), "{line}");
    assert_eq!(digest(&mut c), before);
    ok(
        &mut c,
        &begin_args("e", &values("1", "1", "0-0"), &["force"]),
    );
    assert_eq!(status_text(&mut c, "e"), "restoring");
}

#[test]
fn every_bad_step_is_an_error_naming_it_that_changes_nothing() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // Not restoring (no event, a live event).
    for event in ["none", "live"] {
        if event == "live" {
            ok(&mut c, &["TICKET.INIT", "live", "5"]);
        }
        for args in [
            &["TICKET.RESTORE", event, "ORDERS", "u", "1", "0"][..],
            &["TICKET.RESTORE", event, "FREE", "1"],
            &["TICKET.RESTORE", event, "COMMIT"],
        ] {
            expect_error(&mut c, args, "NOTRESTORING");
        }
    }
    // Bad BEGIN values, each named.
    let base = values("10", "3", "5-0");
    for (i, bad, named) in [
        (0, "00000000DEADBEEF", "incarnation"),
        (0, "0000000000000000", "incarnation"),
        (1, "0", "total"),
        (1, "2147483648", "total"),
        (2, "21", "minted \"21\" must be 0..=20"),
        (3, "restoring", "status"),
        (4, "-1", "opens_at"),
        (6, "604800001", "hold"),
        (7, "1001", "limit"),
        (8, "0", "offer"),
        (9, "11", "orders"),
        (10, "x-1", "from-id"),
    ] {
        let mut v = base;
        v[i] = bad;
        let line = expect_error(&mut c, &begin_args("e", &v, &[]), "ERR");
        assert!(line.contains(named), "{bad}: {line}");
    }
    for (args, named) in [
        (begin_args("e", &base[..10], &[]), "BEGIN takes 11 values"),
        (begin_args("e", &base, &["NOW"]), "unknown option \"NOW\""),
        (vec!["TICKET.RESTORE", "e", "LATER"], "unknown step"),
        (vec!["TICKET.RESTORE", "e{x}", "COMMIT"], "invalid event id"),
        (
            vec!["TICKET.RESTORE", "e", "COMMIT", "now"],
            "COMMIT takes no arguments",
        ),
    ] {
        let line = expect_error(&mut c, &args, "ERR");
        assert!(line.contains(named), "{args:?}: {line}");
    }
    expect_error(&mut c, &["TICKET.RESTORE", "e"], "ERR");

    // Bad ORDERS and FREE on an event being restored.
    ok(&mut c, &begin_args("e", &base, &[]));
    int(&mut c, &["TICKET.RESTORE", "e", "ORDERS", "a", "1,2", "0"]);
    int(&mut c, &["TICKET.RESTORE", "e", "FREE", "3-4"]);
    for (args, named) in [
        (
            &["a", "5", "0"][..],
            "order 1 (user 'a'): the user is restored already",
        ),
        (&["b", "11", "0"], "ticket 11 is above minted (10)"),
        (&["b", "3", "0"], "ticket 3 is restored as free already"),
        (&["b", "5", "0", "c", "5", "0"], "ticket 5 is in two orders"),
        (&["b", "6,5", "0"], "order 1 (user \"b\"): tickets \"6,5\""),
        (&["b", "5,5", "0"], "ascending distinct"),
        (&["b", "5", "-1"], "until \"-1\""),
        (&["b", "5"], "triples, got 2"),
        (&["b\u{7}", "5", "0"], "invalid user id"),
        (
            &["b", "5", "0", "c", "6", "0", "d", "7", "0"],
            "would exceed the 3 that BEGIN announced",
        ),
    ] {
        let mut full = vec!["TICKET.RESTORE", "e", "ORDERS"];
        full.extend_from_slice(args);
        let line = expect_error(&mut c, &full, "ERR");
        assert!(line.contains(named), "{args:?}: {line}");
    }
    let too_many = (1..=1001)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    expect_error(
        &mut c,
        &["TICKET.RESTORE", "e", "ORDERS", "b", &too_many, "0"],
        "ERR",
    );
    for (args, named) in [
        (&["4"][..], "4 is in the pool already"),
        (&["5-11"], "11 is above minted (10)"),
        (&["6-7", "7"], "7 is given twice"),
        (&["7-6"], "free number \"7-6\""),
        (&["0"], "free number \"0\""),
        (&[], "at least one"),
    ] {
        let mut full = vec!["TICKET.RESTORE", "e", "FREE"];
        full.extend_from_slice(args);
        let line = expect_error(&mut c, &full, "ERR");
        assert!(line.contains(named), "{args:?}: {line}");
    }
    // Incomplete: orders missing, then numbers missing.
    let line = expect_error(&mut c, &["TICKET.RESTORE", "e", "COMMIT"], "INCOMPLETE");
    assert!(line.contains("1 of 3 orders"), "{line}");
    int(
        &mut c,
        &[
            "TICKET.RESTORE",
            "e",
            "ORDERS",
            "b",
            "5",
            "0",
            "c",
            "6,7",
            "0",
        ],
    );
    let line = expect_error(&mut c, &["TICKET.RESTORE", "e", "COMMIT"], "INCOMPLETE");
    assert!(line.contains("7 of the 10 numbers"), "{line}");
    int(&mut c, &["TICKET.RESTORE", "e", "FREE", "8", "9-10"]);
    value(&mut c, &["TICKET.RESTORE", "e", "COMMIT"]);
    assert_eq!(claim(&mut c, "e", "z"), 3, "the lowest free number");
}

#[test]
fn restore_effects_from_a_client_are_refused() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let mut begin = vec!["TICKET._APPLY", "1", "e", "restore-begin"];
    begin.extend(values("10", "3", "0-0"));
    for args in [
        begin,
        vec!["TICKET._APPLY", "1", "e", "restore-orders", "a", "1", "0"],
        vec!["TICKET._APPLY", "1", "e", "restore-free", "1-3"],
        vec![
            "TICKET._APPLY",
            "1",
            "e",
            "restore",
            "5-0",
            "5",
            INCARNATION,
            "open",
            "0-0",
        ],
        vec!["TICKET._APPLY", "1", "e", "drop", "5-0", "5"],
    ] {
        expect_error(&mut c, &args, "NOPERM");
    }
    assert!(!exists(&mut c, &key("e", "meta")));
}

#[test]
fn a_strict_replica_and_an_aof_reload_reach_the_primarys_state_after_a_restore() {
    let aof = ["--appendonly", "yes", "--appendfsync", "always"];
    let mut primary = RedisServer::start_with(&aof);
    let replica = strict_replica_with(&primary.port().to_string(), &aof);
    let mut c = primary.conn();
    ok(&mut c, &["TICKET.INIT", "e", "5"]);
    claim(&mut c, "e", "old");
    restore_sample(&mut c, "1-0", true);
    wait_for_the_sweep(&mut c);
    claim(&mut c, "e", "after");
    wait_replicated(&mut c, 1);
    let mut r = replica.conn();
    assert_eq!(log(&mut r, "e"), log(&mut c, "e"));
    let before = digest(&mut c);
    assert_eq!(digest(&mut r), before, "the replica");
    assert_eq!(status_text(&mut r, "e"), "open");
    for part in ["meta", "pool", "holders", "holds", "log"] {
        let k = key("e", part);
        assert_eq!(digest_value(&mut r, &k), digest_value(&mut c, &k), "{part}");
    }
    drop(c);
    primary.stop();
    primary.start_again();
    let mut c = primary.conn();
    assert_eq!(digest(&mut c), before, "the AOF reload");
    assert_eq!(claim(&mut c, "e", "next"), 8);
}

/// An event with allocations restored in steps: `ALLOCATION` puts each
/// back (free tickets out of public sale, its users' orders its own, its
/// release time), locked until a `TICKET.ALLOCATE` (key only) sets its key; every bad
/// `ALLOCATION` is an `ERR` naming what is wrong, `DEBUG DIGEST` unchanged;
/// a strict replica reaches the primary's state.
#[test]
fn allocations_are_restored_locked_and_bad_allocation_steps_change_nothing() {
    let primary = RedisServer::start();
    let replica = strict_replica_of(&primary.port().to_string());
    let mut c = primary.conn();
    let live = (server_ms(&mut c) + 600_000).to_string();
    let release = (server_ms(&mut c) + 3_600_000).to_string();
    ok(&mut c, &begin_args("e", &values("10", "3", "1-0"), &[]));
    expect_error(
        &mut c,
        &[
            "TICKET.RESTORE",
            "e",
            "ALLOCATION",
            "fan",
            "4,5",
            "2",
            "-",
            "f",
        ],
        "ERR",
    );
    let orders = ["a", "1", "0", "f", "2,3", &live, "g", "9", "0"];
    let mut full = vec!["TICKET.RESTORE", "e", "ORDERS"];
    full.extend_from_slice(&orders);
    assert_eq!(int(&mut c, &full), 3);
    let restore = |rest: &[&'static str]| {
        let mut full = vec!["TICKET.RESTORE", "e", "ALLOCATION"];
        full.extend_from_slice(rest);
        full
    };
    let fan = ["fan", "4,5", "2", &release, "f"];
    let mut args = vec!["TICKET.RESTORE", "e", "ALLOCATION"];
    args.extend_from_slice(&fan);
    assert_eq!(int(&mut c, &args), 1);
    let before = digest(&mut c);
    for (args, named) in [
        (restore(&["fan", "-", "0", "-"]), "'fan': restored already"),
        (
            restore(&["x", "11", "0", "-"]),
            "ticket 11 is above minted (10)",
        ),
        (
            restore(&["x", "4", "0", "-"]),
            "ticket 4 is in another allocation",
        ),
        (
            restore(&["x", "6", "0", "-", "f"]),
            "user 'f' is in an allocation already",
        ),
        (
            restore(&["x", "6", "0", "-", "zz"]),
            "user 'zz' has no restored order",
        ),
        (
            restore(&["x", "6", "2", "-", "a"]),
            "claimed is 2 but its users' orders hold 1",
        ),
        (restore(&["x", "6,6", "0", "-"]), "free tickets \"6,6\""),
        (restore(&["x", "6", "-1", "-"]), "claimed \"-1\""),
        (restore(&["x", "6", "0", "soon"]), "release \"soon\""),
        (restore(&["x y", "6", "0", "-"]), "allocation name \"x y\""),
        (restore(&["x", "6", "0"]), "ALLOCATION takes"),
    ] {
        let line = expect_error(&mut c, &args, "ERR");
        assert!(line.contains(named), "{args:?}: {line}");
        assert_eq!(digest(&mut c), before, "{args:?}");
    }
    assert_eq!(int(&mut c, &restore(&["kill", "6", "0", "-"])), 2);
    expect_error(&mut c, &["TICKET.RESTORE", "e", "COMMIT"], "INCOMPLETE");
    assert_eq!(
        int(&mut c, &["TICKET.RESTORE", "e", "FREE", "7-8", "10"]),
        3
    );
    value(&mut c, &["TICKET.RESTORE", "e", "COMMIT"]);

    let release: i64 = release.parse().unwrap();
    let want = Value::Array(vec![
        Value::Array(vec![
            Value::BulkString(b"fan".to_vec()),
            Value::Int(2),
            Value::Int(2),
            Value::Int(release),
        ]),
        Value::Array(vec![
            Value::BulkString(b"kill".to_vec()),
            Value::Int(1),
            Value::Int(0),
            Value::Nil,
        ]),
    ]);
    assert_eq!(value(&mut c, &["TICKET.ALLOCATIONS", "e"]), want);
    assert_eq!(
        (
            status_int(&mut c, "e", "remaining"),
            status_int(&mut c, "e", "allocated")
        ),
        (13, 3)
    );
    // Locked: no key opens it; the first ALLOCATE sets the key.
    for extra in [&[][..], &["KEY", "pw"]] {
        let mut args = vec!["TICKET.CLAIM", "e", "p", "FROM", "fan"];
        args.extend_from_slice(extra);
        expect_error(&mut c, &args, "NOKEY");
    }
    let key = ["TICKET.ALLOCATE", "e", "fan", "KEY", "k"];
    assert_eq!(int_array(&mut c, &key), Vec::<i64>::new());
    expect_error(&mut c, &key, "ERR");
    let args = [
        "TICKET.CLAIM",
        "e",
        "p",
        "FROM",
        "fan",
        "KEY",
        "k",
        "COUNT",
        "2",
    ];
    assert!(matches!(value(&mut c, &args), Value::Array(_)));
    // Public claims go around the allocations.
    assert_eq!(claim(&mut c, "e", "q"), 7);
    wait_replicated(&mut c, 1);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r), digest(&mut c), "the replica");
}
