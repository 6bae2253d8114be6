//! Shared helpers of the `module_*` integration tests (included with
//! `#[path]`; compiled on its own it is an empty test crate).
//!
//! Every test starts its own private `redis-server` with the module loaded
//! (see `ticketgate_tests::RedisServer`) and talks to it with the sync API of
//! the `redis` crate.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::sync::mpsc;

use redis::{Connection, RedisError, Value};
use ticketgate_tests::RedisServer;

/// A command from byte arguments (the first one is the command name).
pub fn cmd_b(parts: &[&[u8]]) -> redis::Cmd {
    let mut c = redis::cmd(std::str::from_utf8(parts[0]).expect("command name is UTF-8"));
    for p in &parts[1..] {
        c.arg(*p);
    }
    c
}

/// A command from string arguments (the first one is the command name).
pub fn cmd(parts: &[&str]) -> redis::Cmd {
    let bytes: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    cmd_b(&bytes)
}

/// The raw reply of a command, panicking on an error reply.
pub fn value(conn: &mut Connection, parts: &[&str]) -> Value {
    cmd(parts)
        .query::<Value>(conn)
        .unwrap_or_else(|e| panic!("{parts:?} failed: {e}"))
}

/// An integer reply.
pub fn int(conn: &mut Connection, parts: &[&str]) -> i64 {
    match value(conn, parts) {
        Value::Int(n) => n,
        other => panic!("{parts:?}: expected an integer reply, got {other:?}"),
    }
}

/// An integer-or-nil reply.
pub fn int_or_nil(conn: &mut Connection, parts: &[&str]) -> Option<i64> {
    match value(conn, parts) {
        Value::Int(n) => Some(n),
        Value::Nil => None,
        other => panic!("{parts:?}: expected an integer or nil reply, got {other:?}"),
    }
}

/// An array-of-integers reply (ticket numbers, seat ids).
pub fn int_array(conn: &mut Connection, parts: &[&str]) -> Vec<i64> {
    match value(conn, parts) {
        Value::Array(items) => items
            .into_iter()
            .map(|v| match v {
                Value::Int(n) => n,
                other => panic!("{parts:?}: {other:?}"),
            })
            .collect(),
        other => panic!("{parts:?}: expected an array, got {other:?}"),
    }
}

/// Asserts a `+OK` reply.
pub fn ok(conn: &mut Connection, parts: &[&str]) {
    match value(conn, parts) {
        Value::Okay => {}
        Value::SimpleString(s) if s == "OK" => {}
        other => panic!("{parts:?}: expected OK, got {other:?}"),
    }
}

/// `TICKET.CLAIM event user`, expecting a ticket number.
/// `CONFIG SET ticket.pool-chunk n`, which must succeed.
pub fn set_chunk(conn: &mut Connection, n: i64) {
    ok(
        conn,
        &["CONFIG", "SET", "ticket.pool-chunk", &n.to_string()],
    );
}

pub fn claim(conn: &mut Connection, event: &str, user: &str) -> i64 {
    int(conn, &["TICKET.CLAIM", event, user])
}

/// The error line of a failed command: `CODE detail`.
pub fn error_line(e: &RedisError) -> String {
    match (e.code(), e.detail()) {
        (Some(code), Some(detail)) => format!("{code} {detail}"),
        (Some(code), None) => code.to_string(),
        _ => e.to_string(),
    }
}

/// Name of one of the event's keys.
pub fn key(event: &str, part: &str) -> String {
    format!("ticket:{{{event}}}:{part}")
}

/// Whether `key` exists.
pub fn exists(conn: &mut Connection, key: &str) -> bool {
    redis::cmd("EXISTS")
        .arg(key)
        .query::<i64>(conn)
        .expect("EXISTS")
        == 1
}

/// `DEBUG DIGEST` of the whole dataset.
pub fn digest(conn: &mut Connection) -> String {
    redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(conn)
        .expect("DEBUG DIGEST (server started with --enable-debug-command yes)")
}

/// `DEBUG DIGEST-VALUE key` of one key.
pub fn digest_value(conn: &mut Connection, key: &str) -> String {
    let v: Vec<String> = redis::cmd("DEBUG")
        .arg("DIGEST-VALUE")
        .arg(key)
        .query(conn)
        .expect("DEBUG DIGEST-VALUE");
    v.into_iter().next().unwrap_or_default()
}

/// Everything an error must leave untouched: the dataset digest, and the
/// type and length of every key (the length of a stream being its log length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub digest: String,
    pub keys: BTreeMap<String, (String, i64)>,
}

pub fn snapshot(conn: &mut Connection) -> Snapshot {
    let names: Vec<String> = redis::cmd("KEYS").arg("*").query(conn).expect("KEYS *");
    let mut keys = BTreeMap::new();
    for name in names {
        let kind: String = redis::cmd("TYPE").arg(&name).query(conn).expect("TYPE");
        let len_cmd = match kind.as_str() {
            "stream" => "XLEN",
            "zset" => "ZCARD",
            "hash" => "HLEN",
            "string" => "STRLEN",
            "set" => "SCARD",
            "list" => "LLEN",
            _ => "EXISTS",
        };
        let len: i64 = redis::cmd(len_cmd).arg(&name).query(conn).expect(len_cmd);
        keys.insert(name, (kind, len));
    }
    Snapshot {
        digest: digest(conn),
        keys,
    }
}

/// Runs a command that must fail with `code` (the first word of the error)
/// and must leave the dataset exactly as it was (`DEBUG DIGEST`, every key's
/// type and length, hence every log length). Returns the error line.
pub fn expect_error_b(conn: &mut Connection, parts: &[&[u8]], code: &str) -> String {
    let before = snapshot(conn);
    let result = cmd_b(parts).query::<Value>(conn);
    let shown: Vec<String> = parts
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect();
    let line = match result {
        Ok(v) => panic!("{shown:?}: expected error {code}, got reply {v:?}"),
        Err(e) => error_line(&e),
    };
    assert_eq!(
        line.split(' ').next(),
        Some(code),
        "{shown:?}: expected error code {code}, got {line:?}"
    );
    let after = snapshot(conn);
    assert_eq!(
        before, after,
        "{shown:?} failed with {line:?} but changed the dataset"
    );
    line
}

/// [`expect_error_b`] with string arguments.
pub fn expect_error(conn: &mut Connection, parts: &[&str], code: &str) -> String {
    let bytes: Vec<&[u8]> = parts.iter().map(|p| p.as_bytes()).collect();
    expect_error_b(conn, &bytes, code)
}

/// One stream entry: id and field/value pairs in order.
pub type Entry = (String, Vec<(String, String)>);

/// `XRANGE key - +`.
pub fn xrange(conn: &mut Connection, key: &str) -> Vec<Entry> {
    let raw: Vec<(String, Vec<String>)> = redis::cmd("XRANGE")
        .arg(key)
        .arg("-")
        .arg("+")
        .query(conn)
        .expect("XRANGE");
    raw.into_iter()
        .map(|(id, flat)| {
            assert!(flat.len() % 2 == 0, "odd field list in {id}: {flat:?}");
            let pairs = flat
                .chunks(2)
                .map(|kv| (kv[0].clone(), kv[1].clone()))
                .collect();
            (id, pairs)
        })
        .collect()
}

/// The event's log.
pub fn log(conn: &mut Connection, event: &str) -> Vec<Entry> {
    xrange(conn, &key(event, "log"))
}

pub fn log_len(conn: &mut Connection, event: &str) -> i64 {
    redis::cmd("XLEN")
        .arg(key(event, "log"))
        .query(conn)
        .expect("XLEN")
}

/// The ops the module logs as compact records (`<op> <user>` first, `at`
/// in the entry id unless written; docs/design.md "The log record").
pub const COMPACT_OPS: [&str; 6] = ["claim", "hold", "offer", "confirm", "expire", "cancel"];

/// The value of a field of an entry, in either record form: of a compact
/// record, `op` is its first field's name, `user` that field's value, and
/// `at` the id's ms unless written (`event` is only in the key).
pub fn field<'a>(entry: &'a Entry, name: &str) -> Option<&'a str> {
    let found = entry.1.iter().find(|(k, _)| k == name);
    if let Some((_, v)) = found {
        return Some(v.as_str());
    }
    let (first, user) = entry.1.first()?;
    if !COMPACT_OPS.contains(&first.as_str()) {
        return None;
    }
    match name {
        "op" => Some(first.as_str()),
        "user" => Some(user.as_str()),
        "at" => entry.0.split('-').next(),
        _ => None,
    }
}

/// The field names of an entry, in order.
pub fn field_names(entry: &Entry) -> Vec<&str> {
    entry.1.iter().map(|(k, _)| k.as_str()).collect()
}

/// Stream id as a number pair (never compare ids as strings).
pub fn id_pair(id: &str) -> (u64, u64) {
    let (ms, seq) = id.split_once('-').expect("stream id is <ms>-<seq>");
    (ms.parse().expect("ms"), seq.parse().expect("seq"))
}

/// Replays claim/cancel entries of a log into user -> ticket, asserting that
/// a claim never hits a user who already holds one, a cancel always returns
/// what the user held, and ids strictly increase.
pub fn replay(entries: &[Entry]) -> HashMap<String, i64> {
    let mut holders = HashMap::new();
    let mut last = (0, 0);
    for entry in entries {
        let id = id_pair(&entry.0);
        assert!(
            id > last,
            "stream ids not increasing: {:?} after {last:?}",
            id
        );
        last = id;
        let op = field(entry, "op").expect("every entry has an op");
        let ticket = || -> i64 {
            field(entry, "ticket")
                .expect("ticket field")
                .parse()
                .expect("numeric ticket")
        };
        let user = || field(entry, "user").expect("user field").to_string();
        match op {
            "claim" => {
                let prev = holders.insert(user(), ticket());
                assert!(
                    prev.is_none(),
                    "claim of a user who holds {prev:?}: {entry:?}"
                );
            }
            "cancel" => {
                let prev = holders.remove(&user());
                assert_eq!(prev, Some(ticket()), "cancel not matching: {entry:?}");
            }
            "init" | "open" | "close" => {}
            other => panic!("unknown op {other:?} in {entry:?}"),
        }
    }
    holders
}

/// `HGETALL ticket:{E}:holders`.
pub fn holders(conn: &mut Connection, event: &str) -> HashMap<String, i64> {
    redis::cmd("HGETALL")
        .arg(key(event, "holders"))
        .query(conn)
        .expect("HGETALL holders")
}

/// `TICKET.STATUS` (RESP2 flat array) as name -> value, checking the order:
/// [`STATUS_FIELDS`], then for a draw or seated event some of
/// [`DRAW_STATUS_FIELDS`] (in that order).
pub fn status(conn: &mut Connection, event: &str) -> BTreeMap<String, Value> {
    let flat = match value(conn, &["TICKET.STATUS", event]) {
        Value::Array(items) => items,
        other => panic!("TICKET.STATUS {event}: expected an array, got {other:?}"),
    };
    let names: Vec<String> = flat
        .iter()
        .step_by(2)
        .map(|n| match n {
            Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
            other => panic!("STATUS field name {other:?}"),
        })
        .collect();
    assert!(
        names.len() >= STATUS_FIELDS.len(),
        "STATUS has at least {} name/value pairs: {flat:?}",
        STATUS_FIELDS.len()
    );
    assert_eq!(
        names[..STATUS_FIELDS.len()],
        STATUS_FIELDS,
        "STATUS field order"
    );
    let mut draw = DRAW_STATUS_FIELDS.iter();
    for extra in &names[STATUS_FIELDS.len()..] {
        assert!(
            draw.any(|d| d == extra),
            "STATUS field {extra} out of place: {names:?}"
        );
    }
    flat.chunks(2)
        .zip(names)
        .map(|(kv, name)| (name, kv[1].clone()))
        .collect()
}

/// A text field of a STATUS reply, if present.
pub fn status_text(conn: &mut Connection, event: &str, name: &str) -> Option<String> {
    match status(conn, event).remove(name)? {
        Value::BulkString(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Value::SimpleString(s) => Some(s),
        other => panic!("STATUS {event} {name}: {other:?}"),
    }
}

/// What a draw event's STATUS adds, in order: the commitment, the seed
/// once drawn, `admit` when set; a seated event's categories, then any
/// free allocated tickets and the listed ones nobody holds.
pub const DRAW_STATUS_FIELDS: [&str; 7] = [
    "draw",
    "seed",
    "admit",
    "categories",
    "accessible",
    "allocated",
    "resale",
];

/// The numeric field of a STATUS reply.
pub fn status_int(conn: &mut Connection, event: &str, name: &str) -> i64 {
    match status(conn, event).remove(name) {
        Some(Value::Int(n)) => n,
        other => panic!("STATUS {event} {name}: {other:?}"),
    }
}

pub const STATUS_FIELDS: [&str; 10] = [
    "total",
    "remaining",
    "claimed",
    "status",
    "opens_at",
    "closes_at",
    "unsynced",
    "held",
    "waiting",
    "incarnation",
];

/// Redis's clock (`TIME`) in unix milliseconds.
pub fn server_ms(conn: &mut Connection) -> i64 {
    let (s, us): (i64, i64) = redis::cmd("TIME").query(conn).expect("TIME");
    s * 1000 + us / 1000
}

/// A field of `INFO <section>` as a string.
/// A counter of the `INFO ticket` section.
pub fn info_int(c: &mut Connection, name: &str) -> i64 {
    info_field(c, "ticket", name)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("INFO ticket has no {name}"))
}

pub fn info_field(conn: &mut Connection, section: &str, name: &str) -> Option<String> {
    let text: String = redis::cmd("INFO").arg(section).query(conn).expect("INFO");
    text.lines().find_map(|l| {
        l.strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(':'))
            .map(|v| v.trim().to_string())
    })
}

/// A tiny deterministic PRNG (xorshift64*), so tests need no extra crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// Raises this process's soft limit of open files to at least `want` (up to
/// the hard limit), so a test can hold many connections; servers started
/// afterwards inherit it. Panics if the hard limit is too low.
pub fn raise_fd_limit(want: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain getrlimit/setrlimit on a valid struct.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        if lim.rlim_cur < want {
            assert!(
                lim.rlim_max >= want,
                "the hard limit of open files ({}) is below {want}",
                lim.rlim_max
            );
            lim.rlim_cur = want;
            assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
        }
    }
}

/// Waits until `replica`'s link to its primary is up.
pub fn wait_for_link(replica: &ticketgate_tests::RedisServer) {
    let mut c = replica.conn();
    ticketgate_tests::wait_until(
        std::time::Duration::from_secs(20),
        "the replica is in sync",
        || info_field(&mut c, "replication", "master_link_status").as_deref() == Some("up"),
    );
}

/// `REPLICAOF NO ONE`: promotes the replica `c` is connected to.
pub fn promote(c: &mut Connection) {
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(c)
        .expect("REPLICAOF NO ONE");
}

/// `WAIT replicas 2000` on the primary, asserting that enough acknowledged.
pub fn wait_replicated(primary: &mut Connection, replicas: i64) {
    let acked: i64 = redis::cmd("WAIT")
        .arg(replicas)
        .arg(2000)
        .query(primary)
        .unwrap();
    assert!(
        acked >= replicas,
        "WAIT {replicas} 2000 acknowledged {acked}"
    );
}

/// Sends `sig` to a server this test started (`SIGSTOP` freezes it).
pub fn signal(server: &RedisServer, sig: libc::c_int) {
    let pid = server.pid().expect("a running server") as libc::pid_t;
    // SAFETY: a plain kill(2) on a child process this test started.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0);
}

/// Waits until the replica holds everything written on `primary` so far
/// (a write of its own, then `WAIT`), the sidecar's anchor included.
pub fn replicate_all(primary: &mut Connection) {
    let _: () = redis::cmd("SET")
        .arg("barrier")
        .arg(1)
        .query(primary)
        .unwrap();
    wait_replicated(primary, 1);
}

/// Cuts `replica` off `primary`: frozen, and its link closed, so the
/// primary goes on taking writes the replica never gets.
pub fn cut_off(replica: &RedisServer, primary: &mut Connection) {
    signal(replica, libc::SIGSTOP);
    let _: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("TYPE")
        .arg("replica")
        .query(primary)
        .unwrap();
}

/// A primary and a replica of it with an AOF (a failover test promotes
/// it), linked; neither waits before a diskless full sync.
pub fn primary_and_aof_replica() -> (ticketgate_tests::RedisServer, ticketgate_tests::RedisServer) {
    let primary = ticketgate_tests::RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = ticketgate_tests::RedisServer::start_with(&[
        "--replicaof",
        "127.0.0.1",
        &primary.port().to_string(),
        "--appendonly",
        "yes",
        "--repl-diskless-sync-delay",
        "0",
    ]);
    wait_for_link(&replica);
    (primary, replica)
}

/// A replica of the primary on `port` that panics on any effect it cannot
/// apply, in sync.
pub fn strict_replica_of(port: &str) -> ticketgate_tests::RedisServer {
    strict_replica_with(port, &[])
}

/// [`strict_replica_of`] with extra `redis-server` arguments.
pub fn strict_replica_with(port: &str, extra: &[&str]) -> ticketgate_tests::RedisServer {
    let mut args = vec![
        "--replicaof",
        "127.0.0.1",
        port,
        "--propagation-error-behavior",
        "panic",
    ];
    args.extend_from_slice(extra);
    let replica = ticketgate_tests::RedisServer::start_with(&args);
    wait_for_link(&replica);
    replica
}

/// The users of the event's log entries with `op`, in log order.
pub fn users_of_op(c: &mut Connection, event: &str, op: &str) -> Vec<String> {
    log(c, event)
        .iter()
        .filter(|e| field(e, "op") == Some(op))
        .filter_map(|e| field(e, "user").map(str::to_owned))
        .collect()
}

/// `TICKET.ORDER` as (tickets, state, expires_at), or `None` for nil.
pub fn order(c: &mut Connection, event: &str, user: &str) -> Option<(Vec<i64>, String, i64)> {
    let flat = match value(c, &["TICKET.ORDER", event, user]) {
        Value::Nil => return None,
        Value::Array(items) => items,
        other => panic!("TICKET.ORDER: {other:?}"),
    };
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("ORDER text {other:?}"),
    };
    let names: Vec<String> = flat.iter().step_by(2).map(text).collect();
    // A seated event's order adds `seats` (their names) after these.
    assert_eq!(
        names[..3],
        ["tickets", "state", "expires_at"],
        "ORDER fields"
    );
    let tickets = match &flat[1] {
        Value::Array(t) => t
            .iter()
            .map(|v| match v {
                Value::Int(n) => *n,
                other => panic!("ORDER ticket {other:?}"),
            })
            .collect(),
        other => panic!("ORDER tickets {other:?}"),
    };
    let expires_at = match flat[5] {
        Value::Int(n) => n,
        ref other => panic!("ORDER expires_at {other:?}"),
    };
    Some((tickets, text(&flat[3]), expires_at))
}

/// Subscribes to the event's offers channel on `server`; the receiver gets
/// every published user id.
pub fn subscribe_offers(server: &RedisServer, event: &str) -> mpsc::Receiver<String> {
    let (subscribed_tx, subscribed) = mpsc::channel();
    let (tx, rx) = mpsc::channel();
    let mut conn = server.conn();
    let channel = format!("ticket:{{{event}}}:offers");
    std::thread::spawn(move || {
        let mut pubsub = conn.as_pubsub();
        pubsub.subscribe(&channel).unwrap();
        subscribed_tx.send(()).unwrap();
        while let Ok(msg) = pubsub.get_message() {
            if tx.send(msg.get_payload::<String>().unwrap()).is_err() {
                break;
            }
        }
    });
    subscribed.recv().unwrap();
    rx
}

/// Whether this server hides `internal` module commands from clients: Redis
/// 8 and later, where the module registers `TICKET._APPLY` as internal.
pub fn internal_commands_hidden(c: &mut Connection) -> bool {
    let info: String = redis::cmd("INFO").arg("server").query(c).unwrap();
    let major = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.trim().parse::<u32>().ok())
        .unwrap_or(0);
    major >= 8
}

/// The reply of one command: `OK`, or its error code.
pub fn outcome(c: &mut Connection, parts: &[&str]) -> String {
    match cmd(parts).query::<Value>(c) {
        Ok(_) => "OK".to_owned(),
        Err(e) => e.code().unwrap_or("?").to_owned(),
    }
}

/// Sells `n` tickets of `event` at once, `u<i>` getting ticket `i`
/// (pipelined final-sale claims).
pub fn sell(c: &mut Connection, event: &str, n: usize) {
    for chunk in (1..=n).collect::<Vec<_>>().chunks(1000) {
        let mut pipe = redis::pipe();
        for i in chunk {
            pipe.cmd("TICKET.CLAIM").arg(event).arg(format!("u{i}"));
        }
        let got: Vec<i64> = pipe.query(c).expect("claims");
        assert_eq!(got, chunk.iter().map(|i| *i as i64).collect::<Vec<_>>());
    }
}

/// A layout of one section `name` with `rows` rows of `seats` seats
/// (ids 1 to rows * seats).
pub fn rows_of_seats(name: &str, rows: u32, seats: u32) -> String {
    let rows: Vec<String> = (1..=rows)
        .map(|r| format!(r#"{{"name":"{r}","seats":{seats}}}"#))
        .collect();
    format!(
        r#"{{"sections":[{{"name":"{name}","rows":[{}]}}]}}"#,
        rows.join(",")
    )
}

/// A sold-out seated hall `event` that resells (docs/design.md "After the
/// sale"): ten rows of 40 seats, 200 sellers of pairs, 400 waiting
/// parties of 1 or 2, one seat of each pair listed; offered parties
/// confirm, cancel or let the 300 ms offer expire until no hold is left,
/// the stock never moving. Returns each listed seat's seller.
pub fn resale_hall(c: &mut Connection, event: &str, seed: u64) -> BTreeMap<i64, String> {
    use std::collections::BTreeSet;
    use std::time::{Duration, Instant};
    let layout = rows_of_seats("A", 10, 40);
    let init = [
        "TICKET.INIT",
        event,
        "400",
        "LIMIT",
        "4",
        "OFFER",
        "300",
        "SEATS",
        &layout,
    ];
    ok(c, &init);
    let mut pairs = BTreeMap::new();
    for s in 0..200 {
        let seller = format!("s{s}");
        let pair = int_array(c, &["TICKET.CLAIM", event, &seller, "COUNT", "2", "SPLIT"]);
        pairs.insert(seller, pair);
    }
    assert_eq!(status_int(c, event, "remaining"), 0);
    let mut rng = Rng::new(seed);
    for w in 0..400 {
        let count = (1 + rng.below(2)).to_string();
        int(
            c,
            &["TICKET.WAIT", event, &format!("w{w}"), "COUNT", &count],
        );
    }
    let mut listed = BTreeMap::new();
    for (seller, pair) in &pairs {
        let seat = pair[rng.below(2) as usize];
        let ask = ["TICKET.RESELL", event, seller, "TICKETS", &seat.to_string()];
        assert_eq!(int(c, &ask), 1);
        listed.insert(seat, seller.clone());
    }
    let mut done = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(Instant::now() < deadline, "offers never settled");
        for w in 0..400 {
            let user = format!("w{w}");
            if done.contains(&user) {
                continue;
            }
            let Some((_, state, _)) = order(c, event, &user) else {
                continue;
            };
            if state == "held" {
                match rng.below(4) {
                    0 | 1 => assert!(int(c, &["TICKET.CONFIRM", event, &user]) > 0),
                    2 => assert!(int_or_nil(c, &["TICKET.CANCEL", event, &user]).is_some()),
                    _ => {} // lets it expire
                }
            }
            done.insert(user);
        }
        assert_eq!(status_int(c, event, "total"), 400);
        assert_eq!(status_int(c, event, "remaining"), 0, "the stock moved");
        let holds: i64 = redis::cmd("ZCARD")
            .arg(key(event, "holds"))
            .query(c)
            .unwrap();
        if holds == 0 {
            return listed;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
