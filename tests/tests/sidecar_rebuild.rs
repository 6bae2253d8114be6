//! End-to-end: Redis loses an event behind the sidecar's back, and
//! `ticketgate-sidecar rebuild` puts it back from MySQL (issue 11).
//!
//! Each test runs the real sidecar (`--verify-interval 1`) against a private
//! redis-server with the module and a fresh MariaDB database, makes Redis
//! lose data in one of the ways the issue lists — `FLUSHALL` then a naive
//! re-`INIT`, a restart without AOF, an old RDB — and checks what an
//! operator sees (the error line, the metrics, `reconcile` exiting 1 with
//! the repair command), that nothing of a replacing incarnation reaches the
//! old rows, and that after `rebuild --apply` claims resume with no number
//! handed out twice, MySQL equals Redis and `reconcile` exits 0. An old
//! RDB of the same incarnation is healed instead since issue 19 (its log
//! is placed against MySQL's journal and what it lacks is re-applied). A
//! seated event is rebuilt with its layout and seats: the seat map, STATUS
//! and every ORDER are what they were, and the next party gets the seats
//! the rule gave before the loss. An event with allocations (issue 42)
//! gets them back: free stock, orders from them, release times, locked
//! until an ALLOCATE sets the key.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::time::Duration;

use mysql::prelude::Queryable;
use support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

const LONG: Duration = Duration::from_secs(60);

/// A sidecar that verifies every second and rescans every second.
fn sidecar(redis: &RedisServer, db: &str) -> (Sidecar, u16) {
    let args = [
        "--verify-interval",
        "1",
        "--rescan-interval",
        "1",
        "--metrics-addr",
        "127.0.0.1:0",
    ];
    let sc = Sidecar::start(&redis.url(), db, &args);
    let port = sc.metrics_port();
    (sc, port)
}

/// A Redis server, a fresh migrated database `name` and the sidecar.
fn servers(name: &str) -> (RedisServer, String, Sidecar, u16) {
    let redis = RedisServer::start();
    let db = fresh_database(name);
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    (redis, db, sc, port)
}

/// `ticketgate-sidecar rebuild --event <event> <args>`.
fn rebuild(redis: &RedisServer, db: &str, event: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut all = vec!["rebuild", "--event", event];
    all.extend_from_slice(args);
    let (st, out) = sidecar_cmd(&redis.url(), db, &all);
    (st.code(), out)
}

/// `ticketgate-sidecar reconcile --event <event>`.
fn reconcile(redis: &RedisServer, db: &str, event: &str) -> (Option<i32>, String) {
    let (st, out) = sidecar_cmd(&redis.url(), db, &["reconcile", "--event", event]);
    (st.code(), out)
}

/// Waits until the sidecar reports `event` quarantined: the error line,
/// the gauge, the per-event series.
fn wait_quarantined(sc: &Sidecar, port: u16, event: &str) -> String {
    let line = format!("event {event}: QUARANTINED (");
    wait_until(LONG, "the sidecar reports the quarantine", || {
        sc.log().contains(&line) && metric(port, "ticketgate_quarantined_events") == 1
    });
    let series = format!("ticketgate_event_quarantined{{event=\"{event}\",reason=\"");
    let metrics = http_get(port, "/metrics");
    assert!(metrics.contains(&series), "{metrics}");
    let log = sc.log();
    let found = log.lines().find(|l| l.contains(&line));
    found.map(str::to_owned).unwrap_or_default()
}

/// Waits until the restore was applied and the quarantine lifted.
fn wait_released(sc: &Sidecar, port: u16, event: &str) {
    let line = format!("event {event}: restore ");
    wait_until(LONG, "the sidecar applies the restore", || {
        sc.log().contains(&line) && metric(port, "ticketgate_quarantined_events") == 0
    });
}

/// `TICKET.CLAIM event user [args]` as the raw reply.
fn claim(r: &mut redis::Connection, event: &str, user: &str, args: &[&str]) -> redis::Value {
    let mut parts = vec!["TICKET.CLAIM", event, user];
    parts.extend_from_slice(args);
    msupport::value(r, &parts)
}

/// Every live ticket number in Redis (all users).
fn redis_numbers(r: &mut redis::Connection, event: &str) -> BTreeSet<i64> {
    let holders: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(msupport::key(event, "holders"))
        .query(r)
        .expect("HGETALL holders");
    holders
        .values()
        .flat_map(|v| v.split(',').map(|n| n.parse::<i64>().expect("ticket")))
        .collect()
}

/// Conflicts of `event` with `reason`.
fn conflicts(db: &str, event: &str, reason: &str) -> usize {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).expect("url")).expect("MySQL");
    let n: Option<i64> = c
        .exec_first(
            "SELECT COUNT(*) FROM ticket_conflict WHERE event_id = ? AND reason = ?",
            (event, reason),
        )
        .expect("count conflicts");
    n.unwrap_or(0) as usize
}

/// One MySQL value of `event`'s event row.
fn event_column(db: &str, event: &str, column: &str) -> Option<String> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).expect("url")).expect("MySQL");
    c.exec_first(
        format!("SELECT CAST({column} AS CHAR) FROM ticket_event WHERE event_id = ?"),
        (event,),
    )
    .expect("ticket_event")
    .flatten()
}

#[test]
fn flushall_then_naive_reinit_is_quarantined_and_rebuild_repairs_it() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_flush");
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    init_event(&mut r, "fl", 50);
    claim_users(&mut r, "fl", 0..10);
    wait_synced(&mut r, &db, "fl", LONG, &|| sc.log());
    let before = mysql_view(&db, "fl").expect("MySQL").active;
    let incarnation = event_column(&db, "fl", "incarnation").expect("incarnation stored");
    assert_eq!(incarnation.len(), 16, "{incarnation}");

    // Redis loses everything; an operator re-creates the event naively and
    // buyers claim in the new incarnation (numbers 1..5 again).
    let () = redis::cmd("FLUSHALL").query(&mut r).expect("FLUSHALL");
    init_event(&mut r, "fl", 50);
    claim_users(&mut r, "fl", 100..105);
    let line = wait_quarantined(&sc, port, "fl");
    eprintln!("sidecar: {line}");
    assert!(line.contains("rebuild --event fl --apply"), "{line}");
    // nothing of the new incarnation landed on the old rows
    let view = mysql_view(&db, "fl").expect("MySQL");
    assert_eq!(view.active, before);
    assert_eq!(view.remaining, Some(40));
    assert_eq!(event_column(&db, "fl", "incarnation"), Some(incarnation));
    let (code, out) = reconcile(&redis, &db, "fl");
    eprintln!("reconcile:\n{out}");
    assert_eq!(code, Some(1), "{out}");
    // (vanished when the verifier looked between FLUSHALL and the re-INIT)
    let named = out.contains("fl: QUARANTINED (") || out.contains("fl: LOST (vanished)");
    assert!(
        named && out.contains("rebuild --event fl --apply --force"),
        "{out}"
    );

    // The plan, a refusal without --force, then the repair.
    let (code, out) = rebuild(&redis, &db, "fl", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("10 orders") && out.contains("6 log entries"),
        "{out}"
    );
    let (code, out) = rebuild(&redis, &db, "fl", &["--apply"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("--force"), "{out}");
    let (code, out) = rebuild(&redis, &db, "fl", &["--apply", "--force"]);
    eprintln!("rebuild --apply --force:\n{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("restore id"), "{out}");
    wait_released(&sc, port, "fl");

    // Claims resume after the restored numbers; nothing is handed out twice.
    let old: BTreeSet<i64> = before.values().copied().collect();
    assert_eq!(redis_numbers(&mut r, "fl"), old);
    claim_users(&mut r, "fl", 200..205);
    let now = redis_numbers(&mut r, "fl");
    assert_eq!(now.len(), 15, "{now:?}");
    assert!(old.is_subset(&now));
    wait_synced(&mut r, &db, "fl", LONG, &|| sc.log());
    let (code, out) = reconcile(&redis, &db, "fl");
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        conflicts(&db, "fl", "discarded_by_rebuild"),
        6,
        "init + 5 claims"
    );
    // a second rebuild (plan only) of the healthy event changes nothing
    let (code, out) = rebuild(&redis, &db, "fl", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(conflicts(&db, "fl", "discarded_by_rebuild"), 6);
}

#[test]
fn restart_without_aof_is_lost_and_rebuild_restores_holds() {
    let (mut redis, db, sc, port) = servers("rb_lost");
    let mut r = redis.conn();
    msupport::ok(
        &mut r,
        &["TICKET.INIT", "hb", "20", "HOLD", "600000", "LIMIT", "2"],
    );
    claim(&mut r, "hb", "sold", &[]);
    msupport::int(&mut r, &["TICKET.CONFIRM", "hb", "sold"]);
    claim(&mut r, "hb", "long", &["COUNT", "2"]);
    claim(&mut r, "hb", "short", &["HOLD", "20000"]);
    let long = msupport::order(&mut r, "hb", "long").expect("long holds");
    let short = msupport::order(&mut r, "hb", "short").expect("short holds");
    wait_until(LONG, "MySQL has the holds", || {
        rows_of(&db, "hb").map(|v| v.len()).unwrap_or(0) == 4
    });

    redis.kill();
    redis.start_again();
    let mut r = redis.conn();
    let line = wait_quarantined(&sc, port, "hb");
    assert!(line.contains("(vanished)"), "{line}");
    let (code, out) = reconcile(&redis, &db, "hb");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("hb: LOST (vanished)") && !out.contains("hb: dropped"),
        "{out}"
    );

    let (code, out) = rebuild(&redis, &db, "hb", &["--apply"]);
    assert_eq!(code, Some(0), "{out}");
    wait_released(&sc, port, "hb");
    assert_eq!(msupport::order(&mut r, "hb", "long"), Some(long));
    let sold = msupport::order(&mut r, "hb", "sold").expect("sold order");
    assert_eq!((sold.0, sold.1.as_str()), (vec![1], "sold"));
    // the short hold expires in Redis, and MySQL follows
    wait_until(LONG, "the short hold expires and MySQL follows", || {
        let rows = rows_of(&db, "hb").unwrap_or_default();
        rows.iter()
            .any(|(u, t, s)| u == "short" && *t == short.0[0] && s == "expired")
    });
    assert_eq!(msupport::order(&mut r, "hb", "short"), None);
    // a new buyer gets the expired number, never a live one
    claim(&mut r, "hb", "late", &[]);
    assert_eq!(
        msupport::order(&mut r, "hb", "late").map(|o| o.0),
        Some(short.0)
    );
    wait_until(LONG, "MySQL equals Redis", || {
        reconcile(&redis, &db, "hb").0 == Some(0)
    });
}

#[test]
fn an_old_rdb_is_healed_from_mysqls_journal() {
    let mut redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_rdb");
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    init_event(&mut r, "old", 30);
    claim_users(&mut r, "old", 0..5);
    wait_synced(&mut r, &db, "old", LONG, &|| sc.log());
    let () = redis::cmd("SAVE").query(&mut r).expect("SAVE");
    let saved = redis.dir().join("saved.rdb");
    std::fs::copy(redis.dir().join("dump.rdb"), &saved).expect("copy the RDB");
    claim_users(&mut r, "old", 5..10);
    wait_synced(&mut r, &db, "old", LONG, &|| sc.log());

    // Redis comes back from the older snapshot: 5 holders, MySQL has 10.
    // Since issue 19 the snapshot's anchor places its log against MySQL's
    // journal and the 5 writes it lacks are re-applied (nothing touched
    // their users or tickets since): healed, not quarantined.
    redis.kill();
    std::fs::copy(&saved, redis.dir().join("dump.rdb")).expect("restore the RDB");
    redis.start_again();
    let mut r = redis.conn();
    wait_until(LONG, "the sidecar heals the event", || {
        sc.log().contains("event old: HEALED")
    });
    assert!(
        sc.log()
            .contains("5 lost applied write(s): 5 re-applied, 0 undone"),
        "{}",
        sc.log()
    );
    assert_eq!(metric(port, "ticketgate_quarantined_events"), 0);
    assert_eq!(redis_numbers(&mut r, "old"), (1..=10).collect());
    claim_users(&mut r, "old", 10..12);
    assert_eq!(redis_numbers(&mut r, "old"), (1..=12).collect());
    wait_synced(&mut r, &db, "old", LONG, &|| sc.log());
    let (code, out) = reconcile(&redis, &db, "old");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("old: HEALED"), "{out}");
}

/// Sells two tickets of a new event `event`, waits until MySQL has them,
/// drops the event and waits until MySQL has the drop.
fn sell_and_drop(r: &mut redis::Connection, db: &str, sc: &Sidecar, event: &str) {
    init_event(r, event, 5);
    claim_users(r, event, 0..2);
    wait_synced(r, db, event, LONG, &|| sc.log());
    msupport::int(r, &["TICKET.DROP", event]);
    wait_until(LONG, "the drop is applied", || {
        event_column(db, event, "status").as_deref() == Some("dropped")
    });
}

#[test]
fn rebuild_refuses_unknown_and_dropped_events() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_refuse");
    migrate(&db);
    let (code, out) = rebuild(&redis, &db, "nope", &["--apply"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("nope: unknown to MySQL"), "{out}");
    let (sc, _port) = sidecar(&redis, &db);
    sell_and_drop(&mut r, &db, &sc, "dr");
    let (code, out) = rebuild(&redis, &db, "dr", &["--apply", "--force"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("dr: dropped"), "{out}");
}

/// A real `TICKET.DROP` after sync is a drop, not an alarm; re-creating
/// the dropped id is quarantined: nothing reaches the old rows, each entry
/// of the re-created sale becomes a `reused_after_drop` conflict, and the
/// alarm stays until that sale is dropped too.
#[test]
fn a_drop_is_no_alarm_and_a_reused_id_is_quarantined_until_dropped_again() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_reuse");
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    sell_and_drop(&mut r, &db, &sc, "re");
    // two verifier rounds later there is still no alarm
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(metric(port, "ticketgate_quarantined_events"), 0);
    assert!(!sc.log().contains("QUARANTINED"), "{}", sc.log());
    let (code, out) = reconcile(&redis, &db, "re");
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("re: dropped"), "{out}");
    let sold_before = mysql_view(&db, "re").expect("MySQL view").active;

    init_event(&mut r, "re", 5);
    claim_users(&mut r, "re", 10..13);
    let line = wait_quarantined(&sc, port, "re");
    assert!(line.contains("cannot be reused"), "{line}");
    assert_eq!(
        mysql_view(&db, "re").expect("MySQL view").active,
        sold_before,
        "the re-created sale reached the dropped one's rows"
    );
    let (code, out) = reconcile(&redis, &db, "re");
    assert_eq!(code, Some(1), "{out}");
    // its entries are discarded as they come (the init and three claims),
    // and the alarm stays
    wait_until(LONG, "the re-created sale's entries are conflicts", || {
        conflicts(&db, "re", "reused_after_drop") == 4
    });
    assert_eq!(metric(port, "ticketgate_quarantined_events"), 1);

    msupport::int(&mut r, &["TICKET.DROP", "re", "FORCE"]);
    wait_until(LONG, "the quarantine is lifted by the second drop", || {
        metric(port, "ticketgate_quarantined_events") == 0
    });
    // the init, three claims and the drop of the re-created sale
    assert_eq!(conflicts(&db, "re", "reused_after_drop"), 5, "{}", sc.log());
    assert_eq!(
        mysql_view(&db, "re").expect("MySQL view").active,
        sold_before
    );
    assert_eq!(event_column(&db, "re", "quarantined_at"), None);
    let (code, out) = reconcile(&redis, &db, "re");
    assert_eq!(code, Some(0), "{out}");
}

/// Two sections, an aisle, a wheelchair space and two categories (seats
/// 1-36).
const HALL: &str = r#"{"sections":[
  {"name":"A","category":"front","rows":[{"name":"1","seats":8,"accessible":[1]},
    {"name":"2","seats":9,"blocked":[5]}]},
  {"name":"B","rows":[{"name":"1","seats":10,"first":101},{"name":"2","seats":10,"first":101}]}]}"#;

/// What a buyer or the live page sees of a seated event: the seat map,
/// STATUS's counts by category, and every user's ORDER (seat names too).
fn seated_view(r: &mut redis::Connection, event: &str, users: &[&str]) -> Vec<redis::Value> {
    let mut out = vec![msupport::value(r, &["TICKET.SEATMAP", event])];
    let mut status = msupport::status(r, event);
    for name in [
        "total",
        "remaining",
        "held",
        "categories",
        "accessible",
        "status",
    ] {
        out.push(status.remove(name).unwrap_or(redis::Value::Nil));
    }
    out.extend(
        users
            .iter()
            .map(|u| msupport::value(r, &["TICKET.ORDER", event, u])),
    );
    out
}

/// The seats a best-available claim of `count` gets by the rule on the
/// seat map `map` (the module's own rule code).
fn rule_gives(layout: &str, map: &redis::Value, count: u32) -> Vec<i64> {
    use protocol::seats::{best, Layout, Request, Seat, SeatState};
    let redis::Value::BulkString(map) = map else {
        panic!("SEATMAP: {map:?}")
    };
    let layout = Layout::parse(layout).expect("layout");
    let mut state = SeatState::new(&layout);
    for (i, b) in map.iter().enumerate() {
        let seat = match b {
            b'h' => Seat::Held,
            b's' => Seat::Sold,
            _ => continue,
        };
        state.set(&layout, &[i as u32 + 1], seat);
    }
    let request = Request {
        count,
        ..Request::default()
    };
    let chosen = best(&layout, &state, &request).expect("seats together");
    chosen.ids.iter().map(|id| i64::from(*id)).collect()
}

#[test]
fn a_seated_event_is_rebuilt_with_its_layout_and_seats() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_seats");
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    let init = ["TICKET.INIT", "st", "36", "LIMIT", "6", "SEATS", HALL];
    msupport::ok(&mut r, &init);
    // Parties by the rule, a pick, a wheelchair space, a long hold, a
    // cancel: sold, held and freed seats.
    for (user, args) in [
        ("p4", &["COUNT", "4"][..]),
        ("p3", &["COUNT", "3"]),
        ("p2", &["COUNT", "2", "ACCESSIBLE", "1"]),
        ("pick", &["SEATS", "30", "31"]),
        ("held", &["COUNT", "5", "HOLD", "600000"]),
        ("gone", &["COUNT", "2"]),
        ("p6", &["COUNT", "2"]),
    ] {
        let reply = claim(&mut r, "st", user, args);
        assert!(matches!(reply, redis::Value::Array(_)), "{user}: {reply:?}");
    }
    msupport::int_or_nil(&mut r, &["TICKET.CANCEL", "st", "gone"]);
    let users = ["p4", "p3", "p2", "pick", "held", "gone", "p6"];
    let before = seated_view(&mut r, "st", &users);
    let layout = msupport::value(&mut r, &["TICKET.LAYOUT", "st"]);
    let next = rule_gives(HALL, &before[0], 3);
    wait_until(LONG, "MySQL has the sale", || {
        msupport::status_int(&mut r, "st", "unsynced") == 0
            && reconcile(&redis, &db, "st").0 == Some(0)
    });

    // Redis loses everything; rebuild puts the seated event back.
    let () = redis::cmd("FLUSHALL").query(&mut r).expect("FLUSHALL");
    wait_quarantined(&sc, port, "st");
    let (code, out) = rebuild(&redis, &db, "st", &["--apply"]);
    eprintln!("rebuild --apply:\n{out}");
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("seated: every seat in no order is free"),
        "{out}"
    );
    wait_released(&sc, port, "st");
    assert_eq!(seated_view(&mut r, "st", &users), before);
    assert_eq!(msupport::value(&mut r, &["TICKET.LAYOUT", "st"]), layout);

    // The next party gets the seats the rule gave before the loss, and the
    // sale goes on through the sidecar: MySQL equals Redis, the audit passes.
    let reply = claim(&mut r, "st", "next", &["COUNT", "3"]);
    let got: Vec<i64> = redis::FromRedisValue::from_redis_value(reply).expect("seat ids");
    assert_eq!(got, next);
    wait_until(LONG, "MySQL equals Redis after the rebuild", || {
        msupport::status_int(&mut r, "st", "unsynced") == 0
            && reconcile(&redis, &db, "st").0 == Some(0)
    });
    let (code, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", "st"]);
    assert_eq!(code.code(), Some(0), "{out}");
}

/// `TICKET.ALLOCATIONS` as (name, free, claimed, release or 0).
fn allocations(r: &mut redis::Connection, event: &str) -> Vec<(String, i64, i64, i64)> {
    let reply = msupport::value(r, &["TICKET.ALLOCATIONS", event]);
    let rows: Vec<(String, i64, i64, Option<i64>)> =
        redis::FromRedisValue::from_redis_value(reply).expect("ALLOCATIONS");
    rows.into_iter()
        .map(|(n, f, c, at)| (n, f, c, at.unwrap_or(0)))
        .collect()
}

/// The free tickets of allocation `name` as the module keeps them.
fn allocated(r: &mut redis::Connection, event: &str, name: &str) -> BTreeSet<i64> {
    let value: Option<String> = redis::cmd("HGET")
        .arg(format!("ticket:{{{event}}}:alloc"))
        .arg(format!("a:{name}"))
        .query(r)
        .expect("HGET alloc");
    let value = value.unwrap_or_default();
    let free = value.split(' ').nth(3).unwrap_or("-");
    free.split(',').filter_map(|t| t.parse().ok()).collect()
}

/// What a rebuild of an event with allocations must give back.
fn allocation_view(r: &mut redis::Connection, event: &str, users: &[&str]) -> Vec<String> {
    let mut out = vec![format!("{:?}", allocations(r, event))];
    let mut status = msupport::status(r, event);
    for name in ["remaining", "allocated", "held", "categories"] {
        out.push(format!("{name} {:?}", status.remove(name)));
    }
    if event == "sa" {
        out.push(format!(
            "{:?}",
            msupport::value(r, &["TICKET.SEATMAP", event])
        ));
    }
    for u in users {
        out.push(format!("{u} {:?}", msupport::order(r, event, u)));
    }
    out
}

/// Issue 42: a general-admission and a seated event with allocations (a
/// keyed one with sold and held orders FROM it, a timed one, seats
/// allocated by id) are drained to MySQL, Redis is flushed, and `rebuild
/// --apply` puts them back: ALLOCATIONS, STATUS, SEATMAP and the orders as
/// they were; public claims never get allocated stock; the allocations
/// are locked until an ALLOCATE sets the key; a held order FROM one goes
/// back to it; the timed release fires; MySQL equals Redis.
#[test]
fn allocations_are_rebuilt_with_their_orders_and_release_times() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("rb_alloc");
    migrate(&db);
    let (sc, port) = sidecar(&redis, &db);
    let release = (msupport::server_ms(&mut r) + 75_000).to_string();
    let hold = ["HOLD", "600000"];
    msupport::ok(
        &mut r,
        &["TICKET.INIT", "ga", "30", "HOLD", "600000", "LIMIT", "4"],
    );
    let init = [
        "TICKET.INIT",
        "sa",
        "36",
        "HOLD",
        "600000",
        "LIMIT",
        "6",
        "SEATS",
        HALL,
    ];
    msupport::ok(&mut r, &init);
    for event in ["ga", "sa"] {
        claim(&mut r, event, "pub1", &["COUNT", "2"]);
        msupport::int(&mut r, &["TICKET.CONFIRM", event, "pub1"]);
        let fan = ["TICKET.ALLOCATE", event, "fan", "COUNT", "5", "KEY", "pw"];
        msupport::value(&mut r, &fan);
        let timed = [
            "TICKET.ALLOCATE",
            event,
            "timed",
            "COUNT",
            "3",
            "RELEASE",
            &release,
        ];
        msupport::value(&mut r, &timed);
        let from = ["COUNT", "2", "FROM", "fan", "KEY", "pw"];
        claim(&mut r, event, "f1", &from);
        msupport::int(&mut r, &["TICKET.CONFIRM", event, "f1"]);
        let from = ["COUNT", "1", "FROM", "fan", "KEY", "pw", hold[0], hold[1]];
        claim(&mut r, event, "f2", &from);
        claim(&mut r, event, "pub2", &["COUNT", "2"]);
    }
    let camera = ["TICKET.ALLOCATE", "sa", "camera", "SEATS", "20", "21"];
    msupport::value(&mut r, &camera);
    let users = ["pub1", "f1", "f2", "pub2"];
    let before = [
        allocation_view(&mut r, "ga", &users),
        allocation_view(&mut r, "sa", &users),
    ];
    for event in ["ga", "sa"] {
        wait_until(LONG, "MySQL has the sale", || {
            msupport::status_int(&mut r, event, "unsynced") == 0
                && reconcile(&redis, &db, event).0 == Some(0)
        });
    }

    let () = redis::cmd("FLUSHALL").query(&mut r).expect("FLUSHALL");
    wait_until(LONG, "the sidecar quarantines both events", || {
        metric(port, "ticketgate_quarantined_events") == 2
    });
    for event in ["ga", "sa"] {
        let (code, out) = rebuild(&redis, &db, event, &["--apply"]);
        eprintln!("rebuild {event} --apply:\n{out}");
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("allocation fan: "), "{out}");
        assert!(out.contains("restored locked"), "{out}");
    }
    for event in ["ga", "sa"] {
        wait_released(&sc, port, event);
    }
    let after = [
        allocation_view(&mut r, "ga", &users),
        allocation_view(&mut r, "sa", &users),
    ];
    assert!(
        msupport::server_ms(&mut r) < release.parse::<i64>().unwrap(),
        "the rebuild outlasted the release delay: make it longer"
    );
    assert_eq!(after, before);

    for event in ["ga", "sa"] {
        // Locked: no key opens a restored allocation until ALLOCATE sets it.
        let from = ["TICKET.CLAIM", event, "f3", "FROM", "fan", "KEY", "pw"];
        // (Not expect_error: the sidecar trims the other event's log meanwhile.)
        let refused = msupport::cmd(&from).query::<redis::Value>(&mut r);
        assert_eq!(
            refused
                .err()
                .and_then(|e| e.code().map(str::to_owned))
                .as_deref(),
            Some("NOKEY")
        );
        let key = ["TICKET.ALLOCATE", event, "fan", "KEY", "pw"];
        msupport::value(&mut r, &key);
        let claimed = msupport::value(&mut r, &from);
        let one = matches!(&claimed, redis::Value::Int(_) | redis::Value::Array(_));
        assert!(one, "{claimed:?}");
        // A held order FROM it that is cancelled goes back to it.
        let free_in_fan = |r: &mut redis::Connection| allocated(r, event, "fan").len();
        let fan = free_in_fan(&mut r);
        msupport::int_or_nil(&mut r, &["TICKET.CANCEL", event, "f2"]);
        assert_eq!(free_in_fan(&mut r), fan + 1);
        // Public claims sell out without taking allocated stock.
        let kept: Vec<BTreeSet<i64>> = ["fan", "timed", "camera"]
            .iter()
            .map(|n| allocated(&mut r, event, n))
            .collect();
        let frozen = allocations(&mut r, event);
        for i in 0.. {
            let user = format!("p{i}");
            let reply =
                msupport::cmd(&["TICKET.CLAIM", event, &user]).query::<redis::Value>(&mut r);
            let got: Vec<i64> = match reply {
                Ok(redis::Value::Int(n)) => vec![n],
                Ok(v) => redis::FromRedisValue::from_redis_value(v).expect("tickets"),
                Err(e) if e.code() == Some("SOLDOUT") => break,
                Err(e) => panic!("claim {user}: {e}"),
            };
            assert!(
                kept.iter().all(|k| got.iter().all(|t| !k.contains(t))),
                "{got:?}"
            );
        }
        // (The hall's wheelchair space stays for an ACCESSIBLE claim.)
        let left = msupport::status_int(&mut r, event, "remaining");
        assert_eq!(left, i64::from(event == "sa"));
        assert_eq!(allocations(&mut r, event), frozen);
    }
    // The timed allocations release themselves, after the rebuild, and
    // the sidecar drains on: MySQL equals Redis.
    for event in ["ga", "sa"] {
        wait_until(Duration::from_secs(120), "the timed release", || {
            allocations(&mut r, event).iter().all(|a| a.0 != "timed")
        });
        assert!(msupport::status_int(&mut r, event, "remaining") >= 3);
        wait_until(LONG, "MySQL equals Redis after the rebuild", || {
            msupport::status_int(&mut r, event, "unsynced") == 0
                && reconcile(&redis, &db, event).0 == Some(0)
        });
    }
    let (code, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", "sa"]);
    assert_eq!(code.code(), Some(0), "{out}");
}

/// Issue 43: a rebuild puts back what happened after the sale: each
/// transferred ticket's generation, each admitting scan (the door answers
/// `USED` again, with its gate) and the event's `TRANSFER_UNTIL`.
#[test]
fn transfers_scans_and_the_transfer_deadline_are_rebuilt() {
    let (mut redis, db, sc, port) = servers("rb_after");
    let mut r = redis.conn();
    let until = (now_ms() + 3_600_000).to_string();
    msupport::ok(
        &mut r,
        &[
            "TICKET.INIT",
            "ts",
            "20",
            "LIMIT",
            "4",
            "TRANSFER_UNTIL",
            &until,
        ],
    );
    for user in ["a", "b", "c"] {
        claim(&mut r, "ts", user, &[]);
    }
    assert_eq!(
        msupport::int(&mut r, &["TICKET.TRANSFER", "ts", "a", "x"]),
        1
    );
    // A partner's order of 4 and 5, one given away: fan counts 1 claimed.
    msupport::int_array(&mut r, &["TICKET.ALLOCATE", "ts", "fan", "COUNT", "2"]);
    claim(&mut r, "ts", "p", &["COUNT", "2", "FROM", "fan"]);
    let moved = ["TICKET.TRANSFER", "ts", "p", "z", "TICKETS", "4"];
    assert_eq!(msupport::int(&mut r, &moved), 1);
    let fan = allocations(&mut r, "ts");
    assert_eq!(fan, [("fan".to_string(), 0, 1, 0)]);
    msupport::ok(&mut r, &["TICKET.SCAN", "ts", "1", "2", "GATE", "north"]);
    msupport::ok(&mut r, &["TICKET.SCAN", "ts", "2", "1"]);
    wait_until(LONG, "MySQL has the scans", || {
        reconcile(&redis, &db, "ts").0 == Some(0)
    });

    redis.kill();
    redis.start_again();
    let mut r = redis.conn();
    wait_quarantined(&sc, port, "ts");
    let (code, out) = rebuild(&redis, &db, "ts", &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("2 tickets transferred (generation above 1), 2 scanned"),
        "{out}"
    );
    let (code, out) = rebuild(&redis, &db, "ts", &["--apply"]);
    assert_eq!(code, Some(0), "{out}");
    wait_released(&sc, port, "ts");

    let line = msupport::expect_error(&mut r, &["TICKET.SCAN", "ts", "1", "2"], "USED");
    assert!(line.contains("north"), "{line}");
    msupport::expect_error(&mut r, &["TICKET.SCAN", "ts", "1", "1"], "STALE");
    msupport::expect_error(&mut r, &["TICKET.SCAN", "ts", "2", "1"], "USED");
    msupport::ok(&mut r, &["TICKET.SCAN", "ts", "3", "1"]);
    let stored: Option<String> = redis::cmd("HGET")
        .arg(msupport::key("ts", "gens"))
        .arg(0)
        .query(&mut r)
        .expect("HGET");
    assert_eq!(stored, Some(until), "the transfer deadline");
    // a scanned ticket stays where it is; x gives nothing scanned away
    msupport::expect_error(&mut r, &["TICKET.TRANSFER", "ts", "x", "y"], "USED");
    assert_eq!(allocations(&mut r, "ts"), fan, "fan as it was");
    wait_until(LONG, "MySQL equals Redis", || {
        reconcile(&redis, &db, "ts").0 == Some(0)
    });
}
