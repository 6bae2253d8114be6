//! Drain-rate measurement (not a timed assertion; `#[ignore]`d):
//!
//! ```text
//! cargo test --release -p ticketgate-tests --test sidecar_rate -- --ignored --nocapture
//! ```
//!
//! 1. backlog: N winners are claimed while no sidecar runs, then a sidecar
//!    starts; prints winners/s from start until MySQL holds all N rows;
//! 2. live: the sidecar runs while a pipelined burst claims N tickets; prints
//!    the lag (time from the end of the burst until MySQL matches Redis).

#[path = "sidecar_support.rs"]
mod support;

use std::time::{Duration, Instant};

use support::*;
use ticketgate_tests::{fresh_database, RedisServer};

const N: usize = 100_000;

/// Waits until the log is fully applied and trimmed (cheap: TICKET.STATUS
/// only, so polling does not compete with the sidecar for MySQL), then
/// checks MySQL against Redis once.
fn wait_drained(r: &mut redis::Connection, db: &str, event: &str, log: &dyn Fn() -> String) {
    let t0 = Instant::now();
    while redis_view_unsynced(r, event) > 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "not drained\n{}",
            tail(&log(), 30)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    wait_synced(r, db, event, Duration::from_secs(60), log);
}

fn redis_view_unsynced(r: &mut redis::Connection, event: &str) -> i64 {
    let status: Vec<String> = redis::cmd("TICKET.STATUS").arg(event).query(r).unwrap();
    status
        .chunks(2)
        .find(|kv| kv[0] == "unsynced")
        .and_then(|kv| kv[1].parse().ok())
        .unwrap_or(-1)
}

fn burst(r: &mut redis::Connection, event: &str, n: usize) {
    for chunk in 0..n / 1000 {
        let mut p = redis::pipe();
        for i in 0..1000 {
            p.cmd("TICKET.CLAIM")
                .arg(event)
                .arg(format!("user-{chunk}-{i}"));
        }
        let _: Vec<i64> = p.query(r).unwrap();
    }
}

#[test]
#[ignore = "measurement; run with --ignored --nocapture"]
fn drain_rate() {
    let n: usize = std::env::var("TG_RATE_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(N);
    for batch in ["500", "2000"] {
        let redis = RedisServer::start();
        let mut r = redis.conn();
        let db = fresh_database("sc_rate");
        migrate(&db);
        let _: () = redis::cmd("TICKET.INIT")
            .arg("rate")
            .arg(n)
            .query(&mut r)
            .unwrap();
        burst(&mut r, "rate", n);
        let t0 = Instant::now();
        let sc = Sidecar::start(&redis.url(), &db, &["--batch-size", batch]);
        wait_drained(&mut r, &db, "rate", &|| sc.log());
        let secs = t0.elapsed().as_secs_f64();
        println!(
            "backlog: {n} winners drained in {secs:.2}s = {:.0} winners/s (batch size {batch}, incl. sidecar start)",
            n as f64 / secs
        );

        let _: () = redis::cmd("TICKET.INIT")
            .arg("live")
            .arg(n)
            .query(&mut r)
            .unwrap();
        let t0 = Instant::now();
        burst(&mut r, "live", n);
        let burst_secs = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        wait_drained(&mut r, &db, "live", &|| sc.log());
        let lag = t1.elapsed().as_secs_f64();
        println!(
            "live: burst of {n} claims took {burst_secs:.2}s in Redis; all applied {:.2}s after the burst ended ({:.0} winners/s end to end, batch size {batch})",
            lag,
            n as f64 / (burst_secs + lag)
        );
        assert!(mysql_view(&db, "live").unwrap().conflicts.is_empty());
    }
}
