//! End-to-end crash tests: `kill -9` of the sidecar at random moments while
//! claims — and, on a second event, holds, confirms, expiries and cancels —
//! keep arriving, MariaDB stopped and restarted mid-drain, Redis
//! killed and restarted from its AOF mid-drain, and two sidecars draining the
//! same logs at once. In every case the final MySQL
//! state equals Redis exactly and `ticket_conflict` stays empty (an entry
//! applied twice would land there as a duplicate claim or a cancel mismatch).

#[path = "support/sidecar.rs"]
mod support;

use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mysql::prelude::Queryable;
use support::*;
use ticketgate_tests::{fresh_database, MariaDb, RedisServer};

/// Tiny deterministic PRNG (xorshift64*), seeded and printed per test.
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
        eprintln!("rng seed {seed}");
        Rng(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Claims keep arriving: `rounds` pipelines of 40 claims, plus cancels of
/// earlier winners and re-claims by them. Returns the number of claim and
/// cancel log entries produced.
fn claimer(
    redis_url: String,
    event: &'static str,
    rounds: usize,
    pause: Duration,
) -> JoinHandle<(u64, u64)> {
    thread::spawn(move || {
        let mut c = redis::Client::open(redis_url)
            .unwrap()
            .get_connection()
            .unwrap();
        let (mut claims, mut cancels) = (0u64, 0u64);
        for round in 0..rounds {
            let mut p = redis::pipe();
            for i in 0..40 {
                p.cmd("TICKET.CLAIM")
                    .arg(event)
                    .arg(format!("r{round}-{i}"));
            }
            let got: Vec<i64> = p.query(&mut c).unwrap();
            claims += got.len() as u64;
            if round > 0 {
                // cancel three users of the previous round, two claim again
                for i in 0..3 {
                    let t: Option<i64> = redis::cmd("TICKET.CANCEL")
                        .arg(event)
                        .arg(format!("r{}-{i}", round - 1))
                        .query(&mut c)
                        .unwrap();
                    assert!(t.is_some());
                    cancels += 1;
                }
                for i in 0..2 {
                    let _: i64 = redis::cmd("TICKET.CLAIM")
                        .arg(event)
                        .arg(format!("r{}-{i}", round - 1))
                        .query(&mut c)
                        .unwrap();
                    claims += 1;
                }
            }
            thread::sleep(pause);
        }
        (claims, cancels)
    })
}

/// A checkout stream (holds, confirms, expiries, cancels; see
/// [`Checkout`]) on its own event, `rounds` rounds of 30 holds.
fn checkouts(
    redis_url: String,
    event: &'static str,
    rounds: usize,
    pause: Duration,
) -> JoinHandle<Checkout> {
    let mut c = redis::Client::open(redis_url)
        .unwrap()
        .get_connection()
        .unwrap();
    let () = redis::cmd("TICKET.INIT")
        .arg(event)
        .arg(50_000)
        .query(&mut c)
        .unwrap();
    thread::spawn(move || {
        let mut ck = Checkout::new(event, 50_000);
        for round in 0..rounds {
            ck.round(&mut c, round, 30);
            thread::sleep(pause);
        }
        ck
    })
}

fn assert_exact(r: &mut redis::Connection, db: &str, event: &str, log: &dyn Fn() -> String) {
    wait_synced(r, db, event, Duration::from_secs(90), log);
    let view = mysql_view(db, event).unwrap();
    assert!(
        view.conflicts.is_empty(),
        "conflicts: {:?}\n{}",
        view.conflicts,
        tail(&log(), 40)
    );
}

#[test]
fn kill_9_at_random_moments_while_claims_arrive() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_kill9");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("k")
        .arg(50_000)
        .query(&mut r)
        .unwrap();
    let load = claimer(redis.url(), "k", 120, Duration::from_millis(25));
    let holds = checkouts(redis.url(), "kc", 120, Duration::from_millis(25));
    let mut rng = Rng::seeded();
    let mut logs = String::new();
    for round in 0..6 {
        let mut sc = Sidecar::start(
            &redis.url(),
            &db,
            &["--batch-size", &(20 + rng.below(200)).to_string()],
        );
        thread::sleep(Duration::from_millis(150 + rng.below(600)));
        assert!(sc.running(), "sidecar exited early:\n{}", sc.log());
        sc.kill9();
        logs.push_str(&format!("--- run {round} ---\n{}", tail(&sc.log(), 10)));
    }
    let (claims, cancels) = load.join().unwrap();
    let ck = holds.join().unwrap();
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    assert_exact(&mut r, &db, "k", &|| {
        format!("{logs}\n--- final ---\n{}", sc.log())
    });
    wait_checkout(&mut r, &db, &ck, Duration::from_secs(90), &|| sc.log());
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let rows: u64 = my
        .query_first("SELECT COUNT(*) FROM ticket_participation WHERE event_id = 'k'")
        .unwrap()
        .unwrap();
    // one row per claim (a re-claim after a cancel adds a row: history stays)
    assert_eq!(rows, claims);
    let active = mysql_view(&db, "k").unwrap().active.len() as u64;
    assert_eq!(active, claims - cancels);
}

#[test]
fn mariadb_stopped_killed_and_restarted_mid_drain() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let mut maria = MariaDb::start();
    maria
        .conn()
        .query_drop("CREATE DATABASE tg CHARACTER SET utf8mb4")
        .unwrap();
    let db = format!("{}tg", maria.url());
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("m")
        .arg(50_000)
        .query(&mut r)
        .unwrap();
    let sc = Sidecar::start(&redis.url(), &db, &["--metrics-addr", "127.0.0.1:0"]);
    let port = sc.metrics_port();
    let load = claimer(redis.url(), "m", 100, Duration::from_millis(20));
    let holds = checkouts(redis.url(), "mc", 100, Duration::from_millis(20));
    thread::sleep(Duration::from_millis(500));
    maria.stop();
    thread::sleep(Duration::from_secs(2));
    let during = redis_view(&mut r, "m").unsynced;
    // the outage is visible: lag grows, mysql is down, /healthz says 503
    assert!(metric(port, "ticketgate_lag_entries") > 0);
    assert_eq!(metric(port, "ticketgate_up{component=\"mysql\"}"), 0);
    assert!(http_get(port, "/healthz").starts_with("HTTP/1.1 503"));
    maria.start_again();
    // and once more, as a crash: SIGKILL, then restart (InnoDB recovery)
    thread::sleep(Duration::from_millis(700));
    maria.kill();
    thread::sleep(Duration::from_secs(1));
    maria.start_again();
    load.join().unwrap();
    assert_exact(&mut r, &db, "m", &|| sc.log());
    let ck = holds.join().unwrap();
    wait_checkout(&mut r, &db, &ck, Duration::from_secs(90), &|| sc.log());
    assert!(
        during > 0,
        "claims should have queued up in the log while MariaDB was down"
    );
    assert!(
        sc.log().contains("will retry") || sc.log().contains("cannot connect to MySQL"),
        "{}",
        sc.log()
    );
}

#[test]
fn two_sidecars_at_once_apply_each_entry_exactly_once() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_two");
    migrate(&db);
    let _: () = redis::cmd("TICKET.INIT")
        .arg("two")
        .arg(50_000)
        .query(&mut r)
        .unwrap();
    let a = Sidecar::start(
        &redis.url(),
        &db,
        &["--metrics-addr", "127.0.0.1:0", "--batch-size", "50"],
    );
    let b = Sidecar::start(
        &redis.url(),
        &db,
        &["--metrics-addr", "127.0.0.1:0", "--batch-size", "70"],
    );
    let (p1, p2) = (a.metrics_port(), b.metrics_port());
    let holds = checkouts(redis.url(), "twoc", 80, Duration::from_millis(10));
    let (claims, cancels) = claimer(redis.url(), "two", 80, Duration::from_millis(10))
        .join()
        .unwrap();
    let ck = holds.join().unwrap();
    let logs = || format!("{}\n--- b ---\n{}", a.log(), b.log());
    assert_exact(&mut r, &db, "two", &logs);
    wait_checkout(&mut r, &db, &ck, Duration::from_secs(90), &logs);
    let series = "ticketgate_applied_records_total{op=\"claim\"}";
    let (ca, cb) = (metric(p1, series), metric(p2, series));
    assert_eq!(
        ca + cb,
        claims,
        "claims applied by a={ca} b={cb}\n--- a ---\n{}\n--- b ---\n{}",
        tail(&a.log(), 30),
        tail(&b.log(), 30)
    );
    let applied = |op: &str| {
        let series = format!("ticketgate_applied_records_total{{op=\"{op}\"}}");
        metric(p1, &series) + metric(p2, &series)
    };
    assert_eq!(applied("cancel"), cancels + ck.written["cancel"]);
    for op in ["hold", "confirm", "expire"] {
        assert_eq!(applied(op), ck.written[op], "{op}");
    }
}

#[test]
fn redis_crash_and_restart_mid_drain() {
    // appendfsync always: every acknowledged claim survives the SIGKILL.
    let mut redis = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let db = fresh_database("sc_redis");
    migrate(&db);
    {
        let mut r = redis.conn();
        let _: () = redis::cmd("TICKET.INIT")
            .arg("rr")
            .arg(50_000)
            .query(&mut r)
            .unwrap();
    }
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let (c1, x1) = claimer(redis.url(), "rr", 30, Duration::from_millis(5))
        .join()
        .unwrap();
    redis.kill();
    thread::sleep(Duration::from_secs(1));
    redis.start_again();
    let mut r = redis.conn();
    // more claims after the restart, from users new to the event
    let mut p = redis::pipe();
    for i in 0..500 {
        p.cmd("TICKET.CLAIM").arg("rr").arg(format!("after-{i}"));
    }
    let _: Vec<i64> = p.query(&mut r).unwrap();
    assert_exact(&mut r, &db, "rr", &|| sc.log());
    let active = mysql_view(&db, "rr").unwrap().active.len() as u64;
    assert_eq!(active, c1 - x1 + 500);
    assert!(
        sc.log().contains("XREAD failed") || sc.log().contains("cannot connect to Redis"),
        "{}",
        sc.log()
    );
}
