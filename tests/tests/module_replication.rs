//! Effects replication and persistence: a replica (streaming and full sync),
//! a replica of that replica, an AOF reload (after a clean stop, a crash and
//! a rewrite) and a promoted replica reach the primary's state byte for byte
//! (`DEBUG DIGEST`, per-key `DEBUG DIGEST-VALUE`, stream ids). Every state
//! change travels as one `TICKET._APPLY` effect: replicas run with
//! `propagation-error-behavior panic`, so an effect they cannot apply would
//! crash them, and they execute no plain HSET/ZREM/XADD and no MULTI.

#[path = "support/module.rs"]
mod support;

use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::{wait_until, RedisServer};

const PARTS: [&str; 4] = ["meta", "pool", "holders", "log"];

fn xtrim(c: &mut Connection, event: &str, maxlen: i64) {
    let _: i64 = redis::cmd("XTRIM")
        .arg(key(event, "log"))
        .arg("MAXLEN")
        .arg(maxlen)
        .query(c)
        .unwrap();
}

/// Every kind of write the module does: init (with a window), claims that
/// mint chunks, repeat claims, cancels (returned numbers re-issued), close
/// and open, a forced drop of another event, a drop after a trimmed log.
fn workload(c: &mut Connection) {
    set_chunk(c, 3);
    let now = server_ms(c);
    ok(c, &["TICKET.INIT", "ev", "20"]);
    ok(c, &["TICKET.INIT", "other", "5"]);
    ok(
        c,
        &[
            "TICKET.INIT",
            "win",
            "10",
            "OPENS",
            &(now - 1000).to_string(),
            "CLOSES",
            &(now + 3_600_000).to_string(),
        ],
    );
    for i in 1..=10 {
        assert_eq!(claim(c, "ev", &format!("u{i}")), i);
    }
    assert_eq!(int_or_nil(c, &["TICKET.CANCEL", "ev", "u3"]), Some(3));
    assert_eq!(int_or_nil(c, &["TICKET.CANCEL", "ev", "u7"]), Some(7));
    assert_eq!(claim(c, "ev", "u11"), 3);
    assert_eq!(claim(c, "ev", "u3"), 7);
    assert_eq!(claim(c, "ev", "u3"), 7);
    ok(c, &["TICKET.CLOSE", "ev"]);
    assert_eq!(claim(c, "ev", "u1"), 1);
    ok(c, &["TICKET.OPEN", "ev"]);
    assert_eq!(claim(c, "ev", "u12"), 11);
    assert_eq!(claim(c, "ev", "ü-ß 13"), 12);
    for u in ["a", "b", "c"] {
        claim(c, "other", u);
    }
    int_or_nil(c, &["TICKET.CANCEL", "other", "b"]);
    assert_eq!(int(c, &["TICKET.DROP", "other", "FORCE"]), 3);
    for i in 1..=4 {
        claim(c, "win", &format!("w{i}"));
    }
    ok(c, &["TICKET.INIT", "gone", "3"]);
    claim(c, "gone", "x");
    xtrim(c, "gone", 0);
    assert_eq!(int(c, &["TICKET.DROP", "gone"]), 3);
    // The sidecar's trim of a drained prefix.
    xtrim(c, "win", 3);
    // Claims from a script and inside a transaction replicate as effects too.
    let from_script: Vec<i64> = redis::cmd("EVAL")
        .arg(
            "return {redis.call('TICKET.CLAIM', KEYS[1], ARGV[1]), \
             redis.call('TICKET.CLAIM', KEYS[1], ARGV[2]), \
             redis.call('TICKET.CANCEL', KEYS[1], ARGV[1])}",
        )
        .arg(1)
        .arg("win")
        .arg("s1")
        .arg("s2")
        .query(c)
        .unwrap();
    assert_eq!(from_script, [5, 6, 5]);
    let mut tx = redis::pipe();
    tx.atomic()
        .cmd("TICKET.CLAIM")
        .arg("win")
        .arg("t1")
        .cmd("TICKET.CLAIM")
        .arg("win")
        .arg("t2")
        .cmd("TICKET.CLOSE")
        .arg("win")
        .ignore()
        .cmd("TICKET.OPEN")
        .arg("win")
        .ignore();
    let in_tx: Vec<i64> = tx.query(c).unwrap();
    assert_eq!(in_tx, [5, 7]);
}

/// A second batch of writes (after the first one was already replicated).
fn more_work(c: &mut Connection) {
    set_chunk(c, 5);
    for i in 14..=20 {
        claim(c, "ev", &format!("u{i}"));
    }
    int_or_nil(c, &["TICKET.CANCEL", "ev", "u5"]);
    claim(c, "ev", "late");
    ok(c, &["TICKET.CLOSE", "win"]);
    ok(c, &["TICKET.INIT", "fresh", "100"]);
    claim(c, "fresh", "a");
}

/// Everything observable about the dataset.
#[derive(Debug, PartialEq)]
struct State {
    digest: String,
    keys: Vec<String>,
    values: Vec<(String, String)>,
    logs: Vec<(String, Vec<Entry>)>,
    statuses: Vec<Value>,
}

fn state(c: &mut Connection) -> State {
    let mut keys: Vec<String> = redis::cmd("KEYS").arg("*").query(c).unwrap();
    keys.sort();
    let mut values = Vec::new();
    let mut logs = Vec::new();
    let mut statuses = Vec::new();
    for event in ["ev", "other", "win", "gone", "fresh"] {
        for part in PARTS {
            let k = key(event, part);
            values.push((k.clone(), digest_value(c, &k)));
        }
        logs.push((event.to_string(), log(c, event)));
        statuses.push(
            cmd(&["TICKET.STATUS", event])
                .query::<Value>(c)
                .unwrap_or_else(|e| Value::SimpleString(error_line(&e))),
        );
    }
    State {
        digest: digest(c),
        keys,
        values,
        logs,
        statuses,
    }
}

/// A strict replica of the server on `port` that also keeps an AOF of what
/// it applied, and serves its own replicas without a sync delay.
fn strict_replica(port: u16) -> RedisServer {
    let extra = ["--appendonly", "yes", "--repl-diskless-sync-delay", "0"];
    strict_replica_with(&port.to_string(), &extra)
}

/// Calls of each command from `INFO commandstats`, e.g. `hset` -> 3.
fn command_calls(c: &mut Connection) -> std::collections::HashMap<String, i64> {
    let info: String = redis::cmd("INFO").arg("commandstats").query(c).unwrap();
    info.lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let calls = rest.strip_prefix("calls=")?.split(',').next()?;
            Some((name.to_string(), calls.parse().ok()?))
        })
        .collect()
}

/// A replica applied the primary's changes as `TICKET._APPLY` effects only.
fn assert_applied_as_effects(c: &mut Connection) {
    let calls = command_calls(c);
    assert!(
        calls.get("ticket._apply").copied().unwrap_or(0) > 20,
        "{calls:?}"
    );
    for plain in ["hset", "hdel", "zadd", "zrem", "xadd", "del"] {
        assert_eq!(calls.get(plain), None, "the replica ran {plain}: {calls:?}");
    }
    // Only the workload's script and transaction (several commands each).
    assert_eq!(calls.get("multi"), Some(&2), "{calls:?}");
}

#[test]
fn replica_reaches_the_primarys_state_byte_for_byte() {
    // No 5 s wait for more replicas before a full sync starts.
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let port = primary.port().to_string();
    let replica = strict_replica(primary.port());
    let chained = strict_replica(replica.port());
    let mut p = primary.conn();
    let mut r = replica.conn();

    workload(&mut p);
    wait_replicated(&mut p, 1);
    let expected = state(&mut p);
    assert_ne!(
        expected.digest,
        "0".repeat(40),
        "the workload wrote nothing"
    );
    assert!(!expected.logs[0].1.is_empty());
    assert_eq!(
        state(&mut r),
        expected,
        "replica differs after the workload"
    );
    // Read commands on the replica (and warm any cache there) agree.
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "ev", "u3"]), Some(7));
    assert_eq!(
        status(&mut r, "ev")["status"],
        Value::BulkString(b"open".to_vec())
    );

    more_work(&mut p);
    wait_replicated(&mut p, 1);
    let expected = state(&mut p);
    assert_eq!(state(&mut r), expected, "replica differs after more work");
    let mut sub = chained.conn();
    wait_until(
        Duration::from_secs(20),
        "the replica's replica caught up",
        || digest(&mut sub) == expected.digest,
    );
    assert_eq!(state(&mut sub), expected, "the replica's replica differs");
    assert_applied_as_effects(&mut r);
    assert_applied_as_effects(&mut sub);
    assert_eq!(
        status(&mut r, "win")["status"],
        Value::BulkString(b"closed".to_vec()),
        "a replicated CLOSE is visible to TICKET.STATUS on the replica"
    );
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "ev", "u5"]), None);

    // Writes are refused on the replica (the commands are flagged `write`).
    let err = cmd(&["TICKET.CLAIM", "ev", "zz"])
        .query::<Value>(&mut r)
        .expect_err("a replica must refuse TICKET.CLAIM");
    assert!(error_line(&err).starts_with("READONLY"), "{err}");
    assert_eq!(state(&mut r), expected);

    // A replica that joins late gets the same state by full sync.
    let late = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_for_link(&late);
    wait_replicated(&mut p, 2);
    assert_eq!(
        state(&mut late.conn()),
        expected,
        "full-sync replica differs"
    );
}

/// The commands in the server's incremental AOF files, by name.
fn aof_commands(server: &RedisServer) -> Vec<String> {
    let dir = server.dir().join("appendonlydir");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".incr.aof") {
            let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
            // `*<n>` then `$<len>` then the command name.
            let lines: Vec<&str> = text.split("\r\n").collect();
            for w in lines.windows(3) {
                if w[0].starts_with('*') && w[1].starts_with('$') {
                    names.push(w[2].to_ascii_uppercase());
                }
            }
        }
    }
    names
}

#[test]
fn aof_reload_reaches_the_same_state_after_stop_crash_and_rewrite() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.conn();
    workload(&mut c);
    let before = state(&mut c);
    drop(c);
    // One effect per state change: no plain writes, no MULTI around them
    // (an EVAL or MULTI of several TICKET.* commands is the only MULTI).
    let written = aof_commands(&server);
    let applies = written.iter().filter(|n| *n == "TICKET._APPLY").count();
    assert!(applies > 20, "{written:?}");
    for plain in ["HSET", "HDEL", "ZADD", "ZREM", "XADD", "TICKET.CLAIM"] {
        assert!(
            !written.iter().any(|n| n == plain),
            "AOF has {plain}: {written:?}"
        );
    }
    assert_eq!(
        written.iter().filter(|n| *n == "MULTI").count(),
        2,
        "{written:?}"
    );

    // Clean stop, same directory, same arguments.
    server.stop();
    server.start_again();
    let mut c = server.conn();
    assert_eq!(state(&mut c), before, "state differs after an AOF reload");
    // The reloaded event carries on where it stopped.
    assert_eq!(claim(&mut c, "ev", "after-restart"), 13);

    more_work(&mut c);
    let before = state(&mut c);
    drop(c);
    // A crash: appendfsync always has every acknowledged write on disk.
    server.kill();
    server.start_again();
    let mut c = server.conn();
    assert_eq!(state(&mut c), before, "state differs after a crash");

    // A rewritten AOF (base RDB + increments) loads the same state too.
    let _: Value = redis::cmd("BGREWRITEAOF").query(&mut c).unwrap();
    wait_until(Duration::from_secs(30), "the AOF rewrite finished", || {
        info_field(&mut c, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
            && info_field(&mut c, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
    });
    claim(&mut c, "fresh", "after-rewrite");
    let before = state(&mut c);
    drop(c);
    server.stop();
    server.start_again();
    let mut c = server.conn();
    assert_eq!(
        state(&mut c),
        before,
        "state differs after rewrite + reload"
    );
}

#[test]
fn replica_switching_primaries_and_promotion_see_the_new_data() {
    let first = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let second = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let mut p1 = first.conn();
    let mut p2 = second.conn();
    ok(&mut p1, &["TICKET.INIT", "ev", "20"]);
    claim(&mut p1, "ev", "a");
    ok(&mut p2, &["TICKET.INIT", "ev", "3"]);
    claim(&mut p2, "ev", "x");
    claim(&mut p2, "ev", "y");
    ok(&mut p2, &["TICKET.CLOSE", "ev"]);

    let replica = strict_replica(first.port());
    wait_replicated(&mut p1, 1);
    let mut r = replica.conn();
    // Reads on the replica (which may keep copies of the meta hash).
    assert_eq!(status_int(&mut r, "ev", "total"), 20);
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "ev", "a"]), Some(1));

    // Follow another primary: a full sync replaces the whole dataset.
    let _: () = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg(second.port())
        .query(&mut r)
        .unwrap();
    wait_until(
        Duration::from_secs(20),
        "the replica synced from the second primary",
        || {
            info_field(&mut r, "replication", "master_port").as_deref()
                == Some(second.port().to_string().as_str())
                && info_field(&mut r, "replication", "master_link_status").as_deref() == Some("up")
        },
    );
    wait_replicated(&mut p2, 1);
    assert_eq!(digest(&mut r), digest(&mut p2));
    let st = status(&mut r, "ev");
    assert_eq!(st["total"], Value::Int(3));
    assert_eq!(st["status"], Value::BulkString(b"closed".to_vec()));
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "ev", "a"]), None);
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "ev", "y"]), Some(2));

    // Promotion: the former replica carries on exactly like its primary.
    ok(&mut p2, &["TICKET.OPEN", "ev"]);
    wait_replicated(&mut p2, 1);
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    assert_eq!(claim(&mut r, "ev", "z"), 3);
    assert_eq!(claim(&mut p2, "ev", "z"), 3);
    // A promoted primary notes whom it answers without logging (for the
    // heal: docs/design.md, "Healing after an unplanned failover"): the
    // SOLDOUT writes that note and nothing else.
    let before = digest_value(&mut r, "ticket:{ev}:holders");
    let e = cmd(&["TICKET.CLAIM", "ev", "w"])
        .query::<i64>(&mut r)
        .unwrap_err();
    assert_eq!(e.code(), Some("SOLDOUT"), "{e}");
    let noted: Vec<String> = redis::cmd("HKEYS")
        .arg("ticket:{ev}:answered")
        .query(&mut r)
        .unwrap();
    assert_eq!(noted, ["u:w"]);
    assert_eq!(digest_value(&mut r, "ticket:{ev}:holders"), before);
    expect_error(&mut p2, &["TICKET.CLAIM", "ev", "w"], "SOLDOUT");
    assert_eq!(status(&mut r, "ev"), status(&mut p2, "ev"));
    assert_eq!(holders(&mut r, "ev"), holders(&mut p2, "ev"));
}

/// While writes are paused (`CLIENT PAUSE WRITE`, as a planned `FAILOVER`
/// does until the replica reaches the primary's offset), the expiry sweep
/// must not write: Redis 7.0 aborts when something is propagated during a
/// pause. The due holds are expired once the pause ends, and the replica
/// reaches the primary's state.
#[test]
fn the_sweep_waits_while_writes_are_paused() {
    let primary = RedisServer::start();
    let mut c = primary.conn();
    let replica = strict_replica_of(&primary.port().to_string());
    ok(&mut c, &["TICKET.INIT", "ev", "100", "HOLD", "100"]);
    for i in 0..20 {
        claim(&mut c, "ev", &format!("u{i}"));
    }
    let _: Value = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(1500)
        .arg("WRITE")
        .query(&mut c)
        .unwrap();
    // Every hold falls due during the pause; several sweeps pass.
    std::thread::sleep(Duration::from_millis(800));
    let pong: String = redis::cmd("PING").query(&mut primary.conn()).unwrap();
    assert_eq!(pong, "PONG", "the primary survived the sweeps of the pause");
    assert_eq!(
        info_int(&mut c, "ticket_expired"),
        0,
        "nothing expired while paused"
    );
    wait_until(
        Duration::from_secs(20),
        "the holds expire after the pause",
        || info_int(&mut c, "ticket_expired") == 20,
    );
    wait_replicated(&mut c, 1);
    assert_eq!(digest(&mut replica.conn()), digest(&mut c));
}

/// An AOF a release before effect version 3 wrote loads to the same state:
/// the hot ops' effects of a workload are turned back into version 2 (the
/// stream id as one `<ms>-<seq>` argument) in the AOF, which then reloads to
/// the digest the server had.
#[test]
fn an_aof_with_effect_version_2_loads_the_same_state() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "10"]);
    assert_eq!(claim(&mut c, "e", "u1"), 1);
    assert_eq!(
        int(&mut c, &["TICKET.CLAIM", "e", "u2", "HOLD", "60000"]),
        2
    );
    assert_eq!(int(&mut c, &["TICKET.CONFIRM", "e", "u2"]), 1);
    assert_eq!(int(&mut c, &["TICKET.CANCEL", "e", "u1"]), 1);
    assert_eq!(claim(&mut c, "e", "u3"), 1);
    let before = digest(&mut c);
    drop(c);
    server.stop();

    let to_version_2 = |args: Vec<String>| match args.as_slice() {
        [apply, version, event, op, ms, seq, rest @ ..]
            if apply == "TICKET._APPLY" && version == "3" =>
        {
            let mut v2 = vec![apply.clone(), "2".into(), event.clone(), op.clone()];
            v2.push(format!("{ms}-{seq}"));
            v2.extend(rest.iter().cloned());
            v2
        }
        _ => args,
    };
    let commands: Vec<Vec<String>> = aof_arguments(&server)
        .into_iter()
        .map(to_version_2)
        .collect();
    let version_2 = commands
        .iter()
        .filter(|a| a[0] == "TICKET._APPLY" && a[1] == "2");
    assert_eq!(version_2.count(), 5, "{commands:?}");
    write_incr_aof(&server, &commands);

    server.start_again();
    let mut c = server.conn();
    assert_eq!(
        digest(&mut c),
        before,
        "the version 2 AOF loaded another state"
    );
    assert_eq!(claim(&mut c, "e", "u4"), 3, "the event carries on");
}

/// Replaces the server's one incremental AOF file with `commands`.
fn write_incr_aof(server: &RedisServer, commands: &[Vec<String>]) {
    let dir = server.dir().join("appendonlydir");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".incr.aof"))
        .collect();
    let [file] = files.as_slice() else {
        panic!("not one incremental AOF: {files:?}");
    };
    let mut resp = String::new();
    for args in commands {
        resp += &format!("*{}\r\n", args.len());
        for arg in args {
            resp += &format!("${}\r\n{arg}\r\n", arg.len());
        }
    }
    std::fs::write(file, resp).unwrap();
}

/// Every command the AOF holds, as its arguments (the incremental part:
/// what was appended since the base).
fn aof_arguments(server: &RedisServer) -> Vec<Vec<String>> {
    let dir = server.dir().join("appendonlydir");
    let mut commands = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.to_string_lossy().ends_with(".incr.aof") {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&path).unwrap()).into_owned();
        let mut lines = text.split("\r\n");
        while let Some(head) = lines.next() {
            let Some(n) = head.strip_prefix('*').and_then(|n| n.parse().ok()) else {
                continue;
            };
            // Each argument is a `$<len>` line, then the argument.
            let args = (0..n).filter_map(|_| lines.nth(1).map(str::to_owned));
            commands.push(args.collect());
        }
    }
    commands
}

/// The six hot ops are replicated in effect version 3: `<op> <ms> <seq>
/// <minted>`, then the log entry's own fields from the user on — whether
/// the effect is the entry its command appended last (the strings are
/// reused) or an earlier one (an expiry a claim made first).
#[test]
fn a_hot_effect_carries_its_log_entry() {
    let server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = server.conn();
    ok(&mut c, &["CONFIG", "SET", "ticket.sweep-interval", "60000"]);
    ok(&mut c, &["TICKET.INIT", "e", "10"]);
    assert_eq!(claim(&mut c, "e", "u1"), 1);
    assert_eq!(int(&mut c, &["TICKET.CLAIM", "e", "u2", "HOLD", "50"]), 2);
    std::thread::sleep(Duration::from_millis(120));
    // Expires u2's hold first, then takes its ticket from the pool.
    assert_eq!(claim(&mut c, "e", "u3"), 2);
    assert_eq!(int(&mut c, &["TICKET.CANCEL", "e", "u1"]), 1);

    let entries: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg("ticket:{e}:log")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    let effects: Vec<Vec<String>> = aof_arguments(&server)
        .into_iter()
        .filter(|a| a.first().map(String::as_str) == Some("TICKET._APPLY") && a[1] == "3")
        .collect();
    let ops: Vec<&str> = effects.iter().map(|a| a[3].as_str()).collect();
    assert_eq!(ops, ["claim", "hold", "expire", "claim", "cancel"]);
    let minted: Vec<&str> = effects.iter().map(|a| a[6].as_str()).collect();
    assert_eq!(minted, ["1", "2", "0", "0", "0"]);
    for effect in &effects {
        let id = format!("{}-{}", effect[4], effect[5]);
        let (_, fields) = entries
            .iter()
            .find(|(entry, _)| *entry == id)
            .unwrap_or_else(|| panic!("no entry {id}: {entries:?}"));
        assert_eq!(effect[2], "e");
        assert_eq!(fields[0], effect[3], "{effect:?}");
        assert_eq!(fields[1..], effect[7..], "{effect:?}");
    }
    assert!(effects[1].contains(&"until".to_string()), "{effects:?}");
}
