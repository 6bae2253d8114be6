//! End-to-end: a poison entry never stalls another event (issue 39). Eight
//! events drain through two writers while claims keep arriving on all of
//! them; a hand-written entry MySQL cannot take (one beyond the entry
//! bound, a seated init beyond a lowered `max_allowed_packet`, hostile
//! bytes) becomes exactly one bounded conflict row with the entry's id and
//! SHA-256, and its stream moves on. An event whose batch MySQL keeps
//! refusing for a reason outside the data (its offset row locked by
//! another session) waits on its own while the others drain, is named by
//! the metrics and `reconcile`, and drains once the lock is gone.

#[path = "support/sidecar.rs"]
mod support;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use mysql::prelude::Queryable;
use protocol::record::{Checkout, Incarnation, Op};
use sha2::{Digest, Sha256};
use support::*;
use ticketgate_tests::{fresh_database, fresh_database_on, wait_until, MariaDb, RedisServer};

/// One field of a hand-written entry: name and value, as bytes.
type Field = (Vec<u8>, Vec<u8>);

/// Claims on every event, round after round, until stopped: the sale
/// that must keep draining around a poison entry.
struct Sale {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl Sale {
    fn start(redis: &RedisServer, events: &[String]) -> Sale {
        let stop = Arc::new(AtomicBool::new(false));
        let (mut conn, events, flag) = (redis.conn(), events.to_vec(), stop.clone());
        let thread = thread::spawn(move || {
            let mut n = 0u64;
            while !flag.load(Ordering::Relaxed) {
                for e in &events {
                    redis::cmd("TICKET.CLAIM")
                        .arg(e)
                        .arg(format!("u{n}"))
                        .query::<i64>(&mut conn)
                        .unwrap_or_else(|err| panic!("TICKET.CLAIM {e} u{n}: {err}"));
                }
                n += 1;
                thread::sleep(Duration::from_millis(2));
            }
            n
        });
        Sale { stop, thread }
    }

    /// Stops the claims; how many rounds were made.
    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the claims thread")
    }
}

/// `run` with `writers` writer threads and `/metrics`; its metrics port.
fn sidecar(redis: &RedisServer, db: &str, writers: &str) -> (Sidecar, u16) {
    let flags = ["--writers", writers, "--metrics-addr", "127.0.0.1:0"];
    let sc = Sidecar::start(&redis.url(), db, &flags);
    let port = sc.metrics_port();
    (sc, port)
}

/// `n` events `<prefix>0..`, each of a million tickets.
fn events(r: &mut redis::Connection, prefix: &str, n: usize) -> Vec<String> {
    let events: Vec<String> = (0..n).map(|i| format!("{prefix}{i}")).collect();
    for e in &events {
        init_event(r, e, 1_000_000);
    }
    events
}

/// The writer of `event` among `n`, as the sidecar's reader picks it.
fn writer_of(event: &str, n: u64) -> u64 {
    let mut h = DefaultHasher::new();
    event.hash(&mut h);
    h.finish() % n
}

/// SHA-256 (hex) of an entry's fields as netstrings, as migrations/V7
/// defines `ticket_conflict.entry_sha256`.
fn entry_sha256(fields: &[Field]) -> String {
    let mut h = Sha256::new();
    for part in fields.iter().flat_map(|(k, v)| [k, v]) {
        h.update(format!("{}:", part.len()));
        h.update(part);
        h.update(b",");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// `XADD ticket:{event}:log * <fields>`, the bytes as given; the id.
fn xadd_raw(r: &mut redis::Connection, event: &str, fields: &[Field]) -> String {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(format!("ticket:{{{event}}}:log")).arg("*");
    for (k, v) in fields {
        cmd.arg(k.as_slice()).arg(v.as_slice());
    }
    cmd.query(r).expect("XADD")
}

fn field(k: &str, v: impl Into<Vec<u8>>) -> Field {
    (k.as_bytes().to_vec(), v.into())
}

/// A conflict row: stream id, reason, user, ticket, detail, SHA-256.
type Row = (
    String,
    String,
    Option<String>,
    Option<i64>,
    String,
    Option<String>,
);

fn conflicts(db: &str, event: &str) -> Vec<Row> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).expect("url")).expect("MySQL");
    c.exec(
        "SELECT stream_id, reason, user_id, ticket_number, detail, entry_sha256 FROM ticket_conflict WHERE event_id = ? ORDER BY id",
        (event,),
    )
    .expect("SELECT ticket_conflict")
}

/// Every event but `skip` reaches unsynced = 0 with MySQL equal to Redis,
/// and has no conflict.
fn all_synced(r: &mut redis::Connection, db: &str, events: &[String], skip: &str, sc: &Sidecar) {
    for e in events.iter().filter(|e| *e != skip) {
        wait_synced(r, db, e, Duration::from_secs(90), &|| sc.log());
        assert!(conflicts(db, e).is_empty(), "{e}: {:?}", conflicts(db, e));
    }
}

/// The JSON of a seated layout: `sections` x `rows` rows of `seats`.
fn layout(sections: usize, rows: usize, seats: usize) -> String {
    let row = |r: usize| format!("{{\"name\":\"{r}\",\"seats\":{seats}}}");
    let section = |s: usize| {
        let rows: Vec<String> = (0..rows).map(row).collect();
        format!("{{\"name\":\"S{s}\",\"rows\":[{}]}}", rows.join(","))
    };
    let all: Vec<String> = (0..sections).map(section).collect();
    format!("{{\"sections\":[{}]}}", all.join(","))
}

#[test]
fn an_entry_beyond_the_bound_is_one_conflict_and_the_others_drain_on() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_poison_big");
    migrate(&db);
    let all = events(&mut r, "p", 8);
    let poisoned = "p3";
    let neighbours = all
        .iter()
        .filter(|e| writer_of(e, 2) == writer_of(poisoned, 2));
    assert!(
        neighbours.count() > 1,
        "p3 shares its writer with another event"
    );
    let (sc, port) = sidecar(&redis, &db, "2");
    let sale = Sale::start(&redis, &all);
    thread::sleep(Duration::from_millis(500));
    // The init: a seated layout far beyond what an entry may hold
    // (9 MiB; the bound is 8 MiB), written behind the module's back.
    let poison = vec![
        field("op", "init"),
        field("event", poisoned),
        field("total", "160000"),
        field("layout", vec![b'x'; 9 << 20]),
        field("at", "1"),
    ];
    let id = xadd_raw(&mut r, poisoned, &poison);
    thread::sleep(Duration::from_secs(2));
    let rounds = sale.stop();
    assert!(rounds > 100, "the claims kept flowing: {rounds} rounds");
    // Every event drains, the poisoned one too: its claims after the poison
    // are applied (MySQL holds every holder Redis has).
    all_synced(&mut r, &db, &all, poisoned, &sc);
    wait_synced(&mut r, &db, poisoned, Duration::from_secs(90), &|| sc.log());
    let rows = conflicts(&db, poisoned);
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (at, reason, user, ticket, detail, sha) = &rows[0];
    assert_eq!((at, reason.as_str()), (&id, "too_large"));
    assert_eq!((user, ticket), (&None, &None));
    assert!(detail.chars().count() <= 1024, "{detail}");
    let bytes: usize = poison.iter().map(|(k, v)| k.len() + v.len()).sum();
    assert!(detail.contains(&format!("has {bytes} bytes")), "{detail}");
    assert_eq!(sha.as_deref(), Some(entry_sha256(&poison).as_str()));
    // the journal holds a stand-in of the entry, not the entry
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).expect("url")).expect("MySQL");
    let stand_in = format!("{id}\u{1d}too_large\u{1f}bytes=");
    let journaled: Vec<(i64, String)> = my
        .exec(
            "SELECT LENGTH(content), content FROM ticket_journal WHERE event_id = ? AND LOCATE(?, content) > 0",
            (poisoned, &stand_in),
        )
        .expect("SELECT ticket_journal");
    assert_eq!(journaled.len(), 1);
    assert!(journaled[0].0 < 1 << 20, "{} bytes", journaled[0].0);
    assert!(journaled[0].1.contains(&entry_sha256(&poison)));
    wait_until(Duration::from_secs(10), "the metrics count it", || {
        metric(port, "ticketgate_conflicts_total{reason=\"too_large\"}") == 1
    });
    assert_eq!(metric(port, "ticketgate_stuck_events"), 0);
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile"]);
    assert_eq!(st.code(), Some(0), "{out}");
    assert!(!sc.log().contains("panicked"), "{}", sc.log());
}

#[test]
fn a_seated_init_beyond_max_allowed_packet_is_a_conflict_not_a_retry() {
    let maria = MariaDb::start();
    maria
        .conn()
        .query_drop("SET GLOBAL max_allowed_packet = 1048576")
        .expect("SET GLOBAL max_allowed_packet");
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database_on(&maria, "sc_poison_packet");
    migrate(&db);
    let all = events(&mut r, "q", 8);
    let (sc, port) = sidecar(&redis, &db, "2");
    let sale = Sale::start(&redis, &all);
    // A legal seated event through the module: 160,000 seats, a stored
    // layout of about 2 MiB, more than this server's 1 MiB packet.
    let () = redis::cmd("TICKET.INIT")
        .arg("hall")
        .arg(160_000)
        .arg("SEATS")
        .arg(layout(16, 1000, 10))
        .query(&mut r)
        .expect("TICKET.INIT hall ... SEATS");
    // hall's init (its stored layout) again, by hand, in q5's log with
    // q5's own incarnation (not a re-created event): the duplicate must
    // not be sent either, nor its layout judge q5's claims after it.
    let mut meta = |event: &str, field: &str| -> String {
        redis::cmd("HGET")
            .arg(format!("ticket:{{{event}}}:meta"))
            .arg(field)
            .query(&mut r)
            .unwrap_or_else(|e| panic!("HGET {event} {field}: {e}"))
    };
    let (inc, big) = (meta("q5", "incarnation"), meta("hall", "layout"));
    assert!(
        big.len() > 3 << 19,
        "a stored layout of {} bytes",
        big.len()
    );
    let dup = Op::Init {
        transfer_until: None,
        total: 160_000,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout::default(),
        incarnation: Incarnation::parse(&inc),
        draw: None,
        layout: Some(big),
    };
    let dup_id = xadd(&mut r, "q5", dup);
    thread::sleep(Duration::from_secs(2));
    sale.stop();
    all_synced(&mut r, &db, &all, "q5", &sc);
    wait_synced(&mut r, &db, "q5", Duration::from_secs(90), &|| sc.log());
    let rows = conflicts(&db, "q5");
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (&rows[0].0, rows[0].1.as_str()),
        (&dup_id, "too_large_for_packet")
    );
    assert!(
        rows[0].4.contains("max_allowed_packet of 1048576"),
        "{}",
        rows[0].4
    );
    assert_eq!(rows[0].5.as_ref().map(String::len), Some(64));
    // hall: its init is one conflict, its log trimmed, the event not created
    wait_until(Duration::from_secs(60), "hall's init is a conflict", || {
        conflicts(&db, "hall").len() == 1
    });
    let rows = conflicts(&db, "hall");
    assert_eq!(rows[0].1, "too_large_for_packet");
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).expect("url")).expect("MySQL");
    let hall: Option<String> = my
        .query_first("SELECT event_id FROM ticket_event WHERE event_id = 'hall'")
        .expect("SELECT ticket_event");
    assert_eq!(hall, None);
    wait_until(Duration::from_secs(30), "hall's log is trimmed", || {
        redis_view(&mut r, "hall").unsynced == 0
    });
    assert!(
        sc.log().contains("max_allowed_packet is 1048576 bytes"),
        "{}",
        sc.log()
    );
    let retried = metric(port, "ticketgate_errors_total{kind=\"mysql\"}");
    assert_eq!(retried, 0, "nothing was retried\n{}", sc.log());
    assert_eq!(metric(port, "ticketgate_stuck_events"), 0);
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("hall: no ticket_stock row in MySQL"), "{out}");
    assert!(!out.contains("STUCK") && out.contains("q5: ok"), "{out}");
}

#[test]
fn hostile_bytes_become_bounded_conflicts_without_a_stall() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_poison_bytes");
    migrate(&db);
    let all = events(&mut r, "h", 3);
    let (sc, _) = sidecar(&redis, &db, "1");
    let sale = Sale::start(&redis, &all);
    let hostile: Vec<Vec<Field>> = vec![
        vec![
            field("claim", b"\xff\xfe not utf-8".to_vec()),
            field("ticket", "5"),
        ],
        vec![
            field("claim", b"ctl\x01\x07\x1b[2J".to_vec()),
            field("ticket", "6"),
        ],
        vec![field("claim", "u".repeat(1 << 20)), field("ticket", "7")],
        vec![field("claim", "bob"), field("ticket", "99999999999")],
        vec![
            field("claim", "bob"),
            field("ticket", "99999999999999999999999"),
        ],
        vec![field("claim", b"nu\0l".to_vec()), field("ticket", "8")],
        vec![
            field("op", b"open\0".to_vec()),
            field("event", "h1"),
            field("at", "1"),
        ],
        vec![
            field("op", "open"),
            field("event", "h1"),
            field("at", "99999999999999999999999"),
        ],
        vec![(vec![b'k'; 1 << 20], b"v".to_vec())],
    ];
    let mut ids = Vec::new();
    for fields in &hostile {
        ids.push(xadd_raw(&mut r, "h1", fields));
        thread::sleep(Duration::from_millis(50));
    }
    thread::sleep(Duration::from_secs(1));
    sale.stop();
    all_synced(&mut r, &db, &all, "h1", &sc);
    wait_synced(&mut r, &db, "h1", Duration::from_secs(90), &|| sc.log());
    let rows = conflicts(&db, "h1");
    let got: Vec<(&str, &str)> = rows.iter().map(|c| (c.0.as_str(), c.1.as_str())).collect();
    let want: Vec<(&str, &str)> = ids.iter().map(|id| (id.as_str(), "malformed")).collect();
    assert_eq!(got, want);
    for (row, fields) in rows.iter().zip(&hostile) {
        assert_eq!(
            row.5.as_deref(),
            Some(entry_sha256(fields).as_str()),
            "{row:?}"
        );
        assert!(row.4.chars().count() <= 1024, "{}", row.4.len());
        assert!(!row.4.chars().any(|c| c.is_control()), "{:?}", row.4);
        assert!(row.2.as_ref().is_none_or(|u| u.chars().count() <= 64));
        assert!(row.3.is_none_or(|t| (1..=i64::from(i32::MAX)).contains(&t)));
    }
    assert!(!sc.log().contains("panicked"), "{}", sc.log());
}

#[test]
fn an_event_mysql_keeps_refusing_waits_alone_and_is_named() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_poison_lock");
    migrate(&db);
    let all = events(&mut r, "s", 4);
    // One writer: every event shares it with the stuck one.
    let (sc, port) = sidecar(&redis, &db, "1");
    claim_users(&mut r, "s2", 0..3);
    wait_synced(&mut r, &db, "s2", Duration::from_secs(30), &|| sc.log());
    // Another session holds s2's offset row: every batch of s2 waits for
    // the lock and gives up.
    let mut locker = mysql::Conn::new(mysql::Opts::from_url(&db).expect("url")).expect("MySQL");
    let mut tx = locker
        .start_transaction(mysql::TxOpts::default())
        .expect("BEGIN");
    let held: Option<String> = tx
        .exec_first(
            "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = 's2' FOR UPDATE",
            (),
        )
        .expect("lock s2's offset row");
    assert!(held.is_some());
    let sale = Sale::start(&redis, &all);
    wait_until(
        Duration::from_secs(30),
        "s2 is stuck in the metrics",
        || {
            metric(port, "ticketgate_stuck_events") == 1
                && metric(port, "ticketgate_event_stuck_attempts{event=\"s2\"}") >= 2
        },
    );
    thread::sleep(Duration::from_secs(2));
    sale.stop();
    all_synced(&mut r, &db, &all, "s2", &sc);
    assert!(redis_view(&mut r, "s2").unsynced > 0);
    assert!(metric(port, "ticketgate_event_stuck_seconds{event=\"s2\"}") >= 1);
    let log = sc.log();
    assert!(
        log.contains("event s2: ") && log.contains("not applied (attempt"),
        "{log}"
    );
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--stuck-after", "1"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("s2: STUCK: entry "), "{out}");
    for e in ["s0", "s1", "s3"] {
        assert!(out.contains(&format!("{e}: ok")), "{out}");
    }
    // The lock goes: s2 drains, exactly once, and is stuck no more.
    tx.rollback().expect("ROLLBACK");
    wait_synced(&mut r, &db, "s2", Duration::from_secs(60), &|| sc.log());
    assert!(conflicts(&db, "s2").is_empty());
    wait_until(Duration::from_secs(10), "s2 leaves the metrics", || {
        metric(port, "ticketgate_stuck_events") == 0
    });
    assert!(sc.log().contains("event s2: applied again after"));
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["reconcile", "--stuck-after", "1"]);
    assert_eq!(st.code(), Some(0), "{out}");
}
