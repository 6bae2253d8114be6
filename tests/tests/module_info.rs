//! What Redis and its clients see of the module: `MODULE LIST`, key positions
//! (`COMMAND GETKEYS`), command flags (`COMMAND INFO`), the `INFO ticket`
//! counters, blocking `XREAD` on a log waking on a claim, and the
//! `ticket:events` channel announcing `TICKET.INIT`.

#[path = "support/module.rs"]
mod support;

use std::thread;
use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

fn text(v: &Value) -> String {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Okay => "OK".into(),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn module_list_names_ticket() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let modules = match value(&mut c, &["MODULE", "LIST"]) {
        Value::Array(m) => m,
        other => panic!("MODULE LIST: {other:?}"),
    };
    let ticket: Vec<Vec<Value>> = modules
        .into_iter()
        .filter_map(|m| match m {
            Value::Array(fields) => Some(fields),
            _ => None,
        })
        .filter(|fields| {
            fields
                .chunks(2)
                .any(|kv| text(&kv[0]) == "name" && text(&kv[1]) == "ticket")
        })
        .collect();
    assert_eq!(ticket.len(), 1, "exactly one module named ticket");
    let ver = ticket[0]
        .chunks(2)
        .find(|kv| text(&kv[0]) == "ver")
        .map(|kv| kv[1].clone());
    assert_eq!(ver, Some(Value::Int(3)));
}

const ALL: [(&str, &[&str]); 10] = [
    ("ticket.init", &["e1", "10", "OPENS", "5", "CLOSES", "9"]),
    ("ticket.claim", &["e1", "u"]),
    ("ticket.confirm", &["e1", "u"]),
    ("ticket.order", &["e1", "u"]),
    ("ticket.cancel", &["e1", "u"]),
    ("ticket.open", &["e1"]),
    ("ticket.close", &["e1"]),
    ("ticket.drop", &["e1", "FORCE"]),
    ("ticket.holder", &["e1", "u"]),
    ("ticket.status", &["e1"]),
];

#[test]
fn key_positions_route_by_the_event_argument() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let keys: Vec<String> = cmd(&["COMMAND", "GETKEYS", "TICKET.CLAIM", "e1", "u"])
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["e1"]);
    for (name, args) in ALL {
        let mut parts = vec!["COMMAND", "GETKEYS", name];
        parts.extend(args);
        let keys: Vec<String> = cmd(&parts).query(&mut c).unwrap();
        assert_eq!(keys, ["e1"], "{name}");
    }
}

#[test]
fn command_flags_and_key_specs() {
    let server = RedisServer::start();
    let mut c = server.conn();
    for (name, _) in ALL {
        let info = match value(&mut c, &["COMMAND", "INFO", name]) {
            Value::Array(mut v) if v.len() == 1 => v.remove(0),
            other => panic!("COMMAND INFO {name}: {other:?}"),
        };
        let fields = match info {
            Value::Array(f) => f,
            other => panic!("COMMAND INFO {name} is {other:?} (is the command registered?)"),
        };
        assert_eq!(text(&fields[0]), name);
        let flags: Vec<String> = match &fields[2] {
            Value::Array(f) | Value::Set(f) => f.iter().map(text).collect(),
            other => panic!("{name} flags: {other:?}"),
        };
        assert_eq!(
            (&fields[3], &fields[4], &fields[5]),
            (&Value::Int(1), &Value::Int(1), &Value::Int(1)),
            "{name}: first key, last key, step"
        );
        let has = |f: &str| flags.iter().any(|x| x == f);
        let key_flags = key_spec_flags(&fields[8]);
        if matches!(name, "ticket.holder" | "ticket.status" | "ticket.order") {
            assert!(has("readonly") && has("fast"), "{name}: {flags:?}");
            assert!(!has("write") && !has("denyoom"), "{name}: {flags:?}");
            assert_eq!(key_flags, ["RO", "access"], "{name}: key spec");
        } else {
            assert!(has("write") && has("denyoom"), "{name}: {flags:?}");
            assert!(!has("readonly") && !has("fast"), "{name}: {flags:?}");
            assert_eq!(key_flags[0], "RW", "{name}: key spec");
        }
    }
}

/// The flags of the one key spec in a `COMMAND INFO` reply's key specs.
fn key_spec_flags(specs: &Value) -> Vec<String> {
    let Value::Array(specs) = specs else {
        panic!("key specs: {specs:?}")
    };
    assert_eq!(specs.len(), 1, "one key spec: {specs:?}");
    let Value::Array(spec) = &specs[0] else {
        panic!("key spec: {specs:?}")
    };
    let at = spec.iter().position(|v| text(v) == "flags").expect("flags");
    match &spec[at + 1] {
        Value::Array(f) | Value::Set(f) => f.iter().map(text).collect(),
        other => panic!("key spec flags: {other:?}"),
    }
}

/// `COMMAND DOCS` of a command as name -> value.
fn docs(c: &mut Connection, name: &str) -> Vec<(String, Value)> {
    let reply = value(c, &["COMMAND", "DOCS", name]);
    let items = match reply {
        Value::Array(v) => v,
        Value::Map(m) => m.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        other => panic!("COMMAND DOCS {name}: {other:?}"),
    };
    assert_eq!(items.len(), 2, "COMMAND DOCS {name}: {items:?}");
    match &items[1] {
        Value::Array(f) => f.chunks(2).map(|p| (text(&p[0]), p[1].clone())).collect(),
        other => panic!("COMMAND DOCS {name}: {other:?}"),
    }
}

#[test]
fn command_docs_for_every_command() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // On Redis 8+ the internal TICKET._APPLY is hidden from clients,
    // COMMAND DOCS included.
    let hidden = internal_commands_hidden(&mut c);
    if hidden {
        let reply = value(&mut c, &["COMMAND", "DOCS", "ticket._apply"]);
        assert!(
            matches!(&reply, Value::Array(v) if v.is_empty())
                || matches!(&reply, Value::Map(m) if m.is_empty()),
            "COMMAND DOCS ticket._apply on Redis 8: {reply:?}"
        );
    }
    let apply = (!hidden).then_some("ticket._apply");
    let names = ALL.iter().map(|(n, _)| *n).chain(apply);
    for name in names {
        let doc = docs(&mut c, name);
        let get = |field: &str| {
            doc.iter()
                .find(|(k, _)| k == field)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("{name} docs lack {field}: {doc:?}"))
        };
        assert!(text(&get("summary")).len() > 20, "{name}");
        assert!(text(&get("since")).starts_with("0."), "{name}");
        assert_eq!(text(&get("module")), "ticket", "{name}");
        let Value::Array(args) = get("arguments") else {
            panic!("{name} arguments")
        };
        let first_key = args
            .iter()
            .position(|a| format!("{a:?}").contains("\"key\""));
        let want = if name == "ticket._apply" { 1 } else { 0 };
        assert_eq!(
            first_key,
            Some(want),
            "{name}: the event is the key argument"
        );
    }
    // Redis itself now enforces the documented arity, with its standard message.
    let err = cmd(&["TICKET.STATUS"]).query::<Value>(&mut c).unwrap_err();
    assert!(
        error_line(&err).contains("wrong number of arguments"),
        "{err}"
    );
}

/// The `ticket_<name>` counter of `INFO ticket`.
fn counter(c: &mut Connection, name: &str) -> i64 {
    info_field(c, "ticket", &format!("ticket_{name}"))
        .unwrap_or_else(|| panic!("INFO ticket has no ticket_{name}"))
        .parse()
        .unwrap()
}

#[test]
fn info_ticket_counters_move_as_expected() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let names = [
        "claims",
        "repeat_claims",
        "soldout_replies",
        "cancels",
        "rejected_claims",
        "events_created",
    ];
    let all = |c: &mut Connection| -> Vec<i64> { names.iter().map(|n| counter(c, n)).collect() };
    assert_eq!(all(&mut c), [0, 0, 0, 0, 0, 0]);

    ok(&mut c, &["TICKET.INIT", "e", "2"]);
    assert_eq!(all(&mut c), [0, 0, 0, 0, 0, 1]);
    claim(&mut c, "e", "a");
    claim(&mut c, "e", "b");
    assert_eq!(all(&mut c), [2, 0, 0, 0, 0, 1]);
    claim(&mut c, "e", "a");
    claim(&mut c, "e", "a");
    assert_eq!(all(&mut c), [2, 2, 0, 0, 0, 1]);
    for _ in 0..3 {
        expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "SOLDOUT");
    }
    assert_eq!(all(&mut c), [2, 2, 3, 0, 0, 1]);
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e", "a"]), Some(1));
    assert_eq!(int_or_nil(&mut c, &["TICKET.CANCEL", "e", "a"]), None);
    assert_eq!(all(&mut c), [2, 2, 3, 1, 0, 1], "a nil cancel is no cancel");
    ok(&mut c, &["TICKET.CLOSE", "e"]);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "CLOSED");
    expect_error(&mut c, &["TICKET.CLAIM", "nope", "z"], "NOEVENT");
    assert_eq!(all(&mut c), [2, 2, 3, 1, 2, 1]);
    expect_error(&mut c, &["TICKET.INIT", "e", "2"], "EXISTS");
    assert_eq!(
        all(&mut c),
        [2, 2, 3, 1, 2, 1],
        "a failed INIT creates no event"
    );

    // The section is part of INFO everything too, under the module's name.
    let everything: String = redis::cmd("INFO").arg("everything").query(&mut c).unwrap();
    assert!(everything.contains("# ticket_stats"), "no ticket section");
    assert!(everything.contains("ticket_claims:2"));
}

#[test]
fn info_ticket_counts_holds_confirms_and_expiries() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let all = |c: &mut Connection| ["holds", "confirms", "expired"].map(|n| counter(c, n));
    assert_eq!(all(&mut c), [0, 0, 0]);
    ok(&mut c, &["TICKET.INIT", "e", "5", "HOLD", "2000"]);
    claim(&mut c, "e", "a");
    claim(&mut c, "e", "b");
    value(&mut c, &["TICKET.CLAIM", "e", "c", "HOLD", "0"]);
    assert_eq!(all(&mut c), [2, 0, 0], "a claim with HOLD 0 is a sale");
    int(&mut c, &["TICKET.CONFIRM", "e", "a"]);
    int(&mut c, &["TICKET.CONFIRM", "e", "a"]);
    assert_eq!(all(&mut c), [2, 1, 0], "a repeat confirm is no confirm");
    wait_until(Duration::from_secs(20), "b's hold expired", || {
        counter(&mut c, "expired") == 1
    });
    assert_eq!(counter(&mut c, "claims"), 3);
}

/// Sends `XREAD BLOCK <ms> STREAMS <key> $` on its own connection in a thread,
/// waits until the server reports it blocked, then runs `trigger`.
fn blocked_xread(
    server: &RedisServer,
    stream: &str,
    block_ms: u64,
    trigger: impl FnOnce(&mut Connection),
) -> Value {
    let client = server.client();
    let stream = stream.to_string();
    let reader = thread::spawn(move || {
        let mut conn = client.get_connection().unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        redis::cmd("XREAD")
            .arg("BLOCK")
            .arg(block_ms)
            .arg("STREAMS")
            .arg(&stream)
            .arg("$")
            .query::<Value>(&mut conn)
            .unwrap()
    });
    let mut c = server.conn();
    wait_until(Duration::from_secs(10), "the XREAD is blocked", || {
        info_field(&mut c, "clients", "blocked_clients").as_deref() == Some("1")
    });
    trigger(&mut c);
    reader.join().expect("the XREAD thread panicked")
}

/// The entries of an XREAD reply on one stream.
fn xread_entries(v: Value, stream: &str) -> Vec<Entry> {
    let streams = match v {
        Value::Array(s) => s,
        Value::Nil => return vec![],
        other => panic!("XREAD: {other:?}"),
    };
    assert_eq!(streams.len(), 1);
    let (name, entries) = match &streams[0] {
        Value::Array(pair) if pair.len() == 2 => (text(&pair[0]), pair[1].clone()),
        other => panic!("XREAD stream: {other:?}"),
    };
    assert_eq!(name, stream);
    let entries = match entries {
        Value::Array(e) => e,
        other => panic!("{other:?}"),
    };
    entries
        .into_iter()
        .map(|e| match e {
            Value::Array(mut idf) if idf.len() == 2 => {
                let flat = match idf.pop().unwrap() {
                    Value::Array(f) => f.iter().map(text).collect::<Vec<_>>(),
                    other => panic!("{other:?}"),
                };
                let pairs = flat
                    .chunks(2)
                    .map(|kv| (kv[0].clone(), kv[1].clone()))
                    .collect();
                (text(&idf[0]), pairs)
            }
            other => panic!("XREAD entry: {other:?}"),
        })
        .collect()
}

#[test]
fn blocked_xread_on_the_log_wakes_up_on_a_claim() {
    let server = RedisServer::start();
    let mut c = server.conn();

    // A sidecar waiting on the log of an event not created yet: INIT wakes it.
    let got = blocked_xread(&server, &key("later", "log"), 5000, |c| {
        ok(c, &["TICKET.INIT", "later", "3"]);
    });
    let entries = xread_entries(got, &key("later", "log"));
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(field(&entries[0], "op"), Some("init"));
    assert_eq!(entries, log(&mut c, "later"));

    // Waiting on an existing log: a claim wakes it with exactly that entry.
    let got = blocked_xread(&server, &key("later", "log"), 5000, |c| {
        assert_eq!(claim(c, "later", "alice"), 1);
    });
    let entries = xread_entries(got, &key("later", "log"));
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(field(&entries[0], "op"), Some("claim"));
    assert_eq!(field(&entries[0], "user"), Some("alice"));
    assert_eq!(field(&entries[0], "ticket"), Some("1"));
    assert_eq!(Some(&entries[0]), log(&mut c, "later").last());

    // Repeat claims and losers append nothing: the reader times out empty.
    claim(&mut c, "later", "b");
    claim(&mut c, "later", "c");
    let got = blocked_xread(&server, &key("later", "log"), 600, |c| {
        assert_eq!(claim(c, "later", "alice"), 1);
        expect_error(c, &["TICKET.CLAIM", "later", "d"], "SOLDOUT");
        assert_eq!(int_or_nil(c, &["TICKET.CANCEL", "later", "nobody"]), None);
    });
    assert_eq!(got, Value::Nil, "something was appended: {got:?}");
}

#[test]
fn init_is_announced_on_the_events_channel() {
    let server = RedisServer::start();
    let mut sub = server.conn();
    let mut pubsub = sub.as_pubsub();
    pubsub.subscribe("ticket:events").unwrap();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut c = server.conn();
    let receivers: i64 = cmd(&["PUBSUB", "NUMSUB", "ticket:events"])
        .query::<(String, i64)>(&mut c)
        .unwrap()
        .1;
    assert_eq!(receivers, 1);

    ok(&mut c, &["TICKET.INIT", "e1", "10"]);
    let msg = pubsub.get_message().expect("a message within 5 s");
    assert_eq!(msg.get_channel_name(), "ticket:events");
    assert_eq!(msg.get_payload::<String>().unwrap(), "e1");

    // Failed inits and other commands announce nothing; the next message is e2.
    expect_error(&mut c, &["TICKET.INIT", "e1", "10"], "EXISTS");
    expect_error(&mut c, &["TICKET.INIT", "bad id", "10"], "ERR");
    claim(&mut c, "e1", "u");
    ok(&mut c, &["TICKET.CLOSE", "e1"]);
    int(&mut c, &["TICKET.DROP", "e1", "FORCE"]);
    ok(&mut c, &["TICKET.INIT", "e2:x-y.z_1", "1"]);
    let msg = pubsub.get_message().expect("a message within 5 s");
    assert_eq!(msg.get_payload::<String>().unwrap(), "e2:x-y.z_1");
}

#[test]
fn a_claim_that_changes_state_aborts_a_watching_transaction() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let mut watcher = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "5"]);
    for watched in ["holders", "log"] {
        let _: () = redis::cmd("WATCH")
            .arg(key("e", watched))
            .query(&mut watcher)
            .unwrap();
        claim(&mut c, "e", &format!("u-{watched}"));
        let mut tx = redis::pipe();
        tx.atomic().cmd("PING");
        let result: Option<Vec<String>> = tx.query(&mut watcher).unwrap();
        assert_eq!(result, None, "EXEC must abort: {watched} was modified");
    }
    // Without an intervening change, the transaction goes through.
    let _: () = redis::cmd("WATCH")
        .arg(key("e", "holders"))
        .query(&mut watcher)
        .unwrap();
    let mut tx = redis::pipe();
    tx.atomic().cmd("PING");
    let result: Option<Vec<String>> = tx.query(&mut watcher).unwrap();
    assert_eq!(result, Some(vec!["PONG".to_string()]));
}

#[test]
fn deny_oom_refuses_writes_but_not_reads_when_memory_is_full() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "5"]);
    claim(&mut c, "e", "a");
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory-policy")
        .arg("noeviction")
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(1)
        .query(&mut c)
        .unwrap();
    for parts in [
        &["TICKET.CLAIM", "e", "b"][..],
        &["TICKET.CLAIM", "e", "a"],
        &["TICKET.INIT", "f", "5"],
        &["TICKET.CANCEL", "e", "a"],
        &["TICKET.CLOSE", "e"],
        &["TICKET.OPEN", "e"],
        &["TICKET.DROP", "e", "FORCE"],
    ] {
        expect_error(&mut c, parts, "OOM");
    }
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "e", "a"]), Some(1));
    assert_eq!(status_int(&mut c, "e", "claimed"), 1);
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "b"), 2);
}

/// Like Redis's own commands, a command that changes nothing (a repeat
/// claim, a sold-out loser, a nil cancel, a no-op CLOSE, an error) must not
/// abort transactions that WATCH the event's keys: the module turns off
/// Redis's implicit "modified on close" signal and signals only the keys it
/// wrote.
#[test]
fn a_command_that_changes_nothing_does_not_abort_a_watching_transaction() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let mut watcher = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "1"]);
    claim(&mut c, "e", "a");
    let no_ops: [&[&str]; 6] = [
        &["TICKET.CLAIM", "e", "a"],
        &["TICKET.CLAIM", "e", "loser"],
        &["TICKET.CANCEL", "e", "nobody"],
        &["TICKET.OPEN", "e"],
        &["TICKET.DROP", "e"],
        &["TICKET.CLAIM", "missing", "a"],
    ];
    for parts in no_ops {
        let _: () = redis::cmd("WATCH")
            .arg(key("e", "meta"))
            .arg(key("e", "pool"))
            .arg(key("e", "holders"))
            .arg(key("e", "log"))
            .arg(key("missing", "meta"))
            .query(&mut watcher)
            .unwrap();
        let before = snapshot(&mut c);
        let _ = cmd(parts).query::<Value>(&mut c);
        assert_eq!(snapshot(&mut c), before, "{parts:?} changed something");
        let mut tx = redis::pipe();
        tx.atomic().cmd("PING");
        let result: Option<Vec<String>> = tx.query(&mut watcher).unwrap();
        assert_eq!(
            result,
            Some(vec!["PONG".to_string()]),
            "{parts:?} changed nothing but aborted the WATCH"
        );
    }
}
