//! Prometheus metrics (text format 0.0.4) and a tiny HTTP endpoint.
//!
//! Series (all prefixed `ticketgate_`):
//! - `applied_records_total{op}` — log entries applied to MySQL, by op;
//! - `conflicts_total{reason}` — entries written to `ticket_conflict`;
//! - `batches_total{path}` — committed batches by path (`fast`, `slow`, `skip`);
//! - `batch_duration_seconds` — histogram of batch apply time (lock to commit);
//! - `lag_entries` — entries still in the logs (sum of `XLEN` after trimming);
//! - `lag_seconds` — age of the oldest unapplied entry, 0 when caught up;
//! - `errors_total{kind}` — retried errors (`mysql`, `redis`);
//! - `events` — event logs being drained;
//! - `up{component}` — 1 while `redis` / `mysql` answered the last call.
//!
//! `/healthz` answers `200 ok` while both components are up, else `503`.
//! The server is a plain `std::net` loop on its own thread: two routes do not
//! need an HTTP framework.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Upper bounds (seconds) of the batch latency histogram.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

/// All counters and gauges of one sidecar process.
#[derive(Default)]
pub struct Metrics {
    applied: Mutex<BTreeMap<String, u64>>,
    conflicts: Mutex<BTreeMap<String, u64>>,
    batches: Mutex<BTreeMap<String, u64>>,
    errors: Mutex<BTreeMap<String, u64>>,
    latency: Mutex<Histogram>,
    lag_entries: Mutex<BTreeMap<String, u64>>,
    lag_ms: Mutex<BTreeMap<String, u64>>,
    events: AtomicU64,
    redis_up: AtomicBool,
    mysql_up: AtomicBool,
}

fn bump(map: &Mutex<BTreeMap<String, u64>>, key: &str, n: u64) {
    if let Ok(mut m) = map.lock() {
        *m.entry(key.to_owned()).or_insert(0) += n;
    }
}

impl Metrics {
    /// A fresh, shareable registry.
    pub fn new() -> Arc<Metrics> {
        Arc::new(Metrics::default())
    }

    /// `n` entries of `op` were applied.
    pub fn applied(&self, op: &str, n: u64) {
        bump(&self.applied, op, n);
    }

    /// One entry went to `ticket_conflict` for `reason`.
    pub fn conflict(&self, reason: &str) {
        bump(&self.conflicts, reason, 1);
    }

    /// A batch committed via `path` in `secs`.
    pub fn batch(&self, path: &str, secs: f64) {
        bump(&self.batches, path, 1);
        if let Ok(mut h) = self.latency.lock() {
            for (i, b) in BUCKETS.iter().enumerate() {
                if secs <= *b {
                    h.counts[i] += 1;
                }
            }
            h.count += 1;
            h.sum += secs;
        }
    }

    /// A retried error of `kind` (`mysql` or `redis`).
    pub fn error(&self, kind: &str) {
        bump(&self.errors, kind, 1);
        self.set_up(kind, false);
    }

    /// Marks `component` (`mysql` / `redis`) up or down.
    pub fn set_up(&self, component: &str, up: bool) {
        match component {
            "mysql" => self.mysql_up.store(up, Ordering::Relaxed),
            "redis" => self.redis_up.store(up, Ordering::Relaxed),
            _ => {}
        }
    }

    /// True while both Redis and MySQL answered their last call.
    pub fn healthy(&self) -> bool {
        self.mysql_up.load(Ordering::Relaxed) && self.redis_up.load(Ordering::Relaxed)
    }

    /// Number of event logs tracked.
    pub fn set_events(&self, n: u64) {
        self.events.store(n, Ordering::Relaxed);
    }

    /// Lag of one event: entries left in its log and age of the oldest (ms).
    pub fn set_lag(&self, event: &str, entries: u64, age_ms: u64) {
        if let Ok(mut m) = self.lag_entries.lock() {
            m.insert(event.to_owned(), entries);
        }
        if let Ok(mut m) = self.lag_ms.lock() {
            m.insert(event.to_owned(), age_ms);
        }
    }

    /// Drops the lag of an event that no longer exists.
    pub fn forget(&self, event: &str) {
        if let Ok(mut m) = self.lag_entries.lock() {
            m.remove(event);
        }
        if let Ok(mut m) = self.lag_ms.lock() {
            m.remove(event);
        }
    }

    /// Sum of the lag in entries over all events.
    pub fn lag_entries(&self) -> u64 {
        self.lag_entries
            .lock()
            .map(|m| m.values().sum())
            .unwrap_or(0)
    }

    /// Renders the Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let labelled = |out: &mut String,
                        name: &str,
                        help: &str,
                        label: &str,
                        map: &Mutex<BTreeMap<String, u64>>| {
            let _ = writeln!(
                out,
                "# HELP ticketgate_{name} {help}\n# TYPE ticketgate_{name} counter"
            );
            if let Ok(m) = map.lock() {
                for (k, v) in m.iter() {
                    let _ = writeln!(out, "ticketgate_{name}{{{label}=\"{}\"}} {v}", escape(k));
                }
            }
        };
        labelled(
            &mut out,
            "applied_records_total",
            "Log entries applied to MySQL, by op.",
            "op",
            &self.applied,
        );
        labelled(
            &mut out,
            "conflicts_total",
            "Log entries written to ticket_conflict, by reason.",
            "reason",
            &self.conflicts,
        );
        labelled(
            &mut out,
            "batches_total",
            "Committed batches, by path.",
            "path",
            &self.batches,
        );
        labelled(
            &mut out,
            "errors_total",
            "Retried errors, by component.",
            "kind",
            &self.errors,
        );
        let _ = writeln!(
            out,
            "# HELP ticketgate_batch_duration_seconds Time to apply one batch, lock to commit.\n# TYPE ticketgate_batch_duration_seconds histogram"
        );
        if let Ok(h) = self.latency.lock() {
            for (i, b) in BUCKETS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "ticketgate_batch_duration_seconds_bucket{{le=\"{b}\"}} {}",
                    h.counts[i]
                );
            }
            let _ = writeln!(
                out,
                "ticketgate_batch_duration_seconds_bucket{{le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(out, "ticketgate_batch_duration_seconds_sum {}", h.sum);
            let _ = writeln!(out, "ticketgate_batch_duration_seconds_count {}", h.count);
        }
        let lag_s = self
            .lag_ms
            .lock()
            .map(|m| m.values().copied().max().unwrap_or(0))
            .unwrap_or(0) as f64
            / 1000.0;
        let gauges = [
            (
                "lag_entries",
                "Entries not yet applied, summed over all event logs.",
                self.lag_entries() as f64,
            ),
            (
                "lag_seconds",
                "Age of the oldest entry not yet applied.",
                lag_s,
            ),
            (
                "events",
                "Event logs being drained.",
                self.events.load(Ordering::Relaxed) as f64,
            ),
        ];
        for (name, help, v) in gauges {
            let _ = writeln!(out, "# HELP ticketgate_{name} {help}\n# TYPE ticketgate_{name} gauge\nticketgate_{name} {v}");
        }
        let _ = writeln!(out, "# HELP ticketgate_up 1 while the component answered its last call.\n# TYPE ticketgate_up gauge");
        for (c, flag) in [("mysql", &self.mysql_up), ("redis", &self.redis_up)] {
            let _ = writeln!(
                out,
                "ticketgate_up{{component=\"{c}\"}} {}",
                u8::from(flag.load(Ordering::Relaxed))
            );
        }
        out
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Serves `/metrics` and `/healthz` on `listener` until `stop` is set.
pub fn serve(listener: TcpListener, metrics: Arc<Metrics>, stop: Arc<AtomicBool>) {
    if let Err(e) = listener.set_nonblocking(true) {
        log::error!("metrics listener: {e}");
        return;
    }
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => handle(stream, &metrics),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => {
                log::warn!("metrics accept: {e}");
                std::thread::sleep(Duration::from_millis(200));
            }
        }
    }
}

/// Status line and body for a request path.
pub fn route(path: &str, metrics: &Metrics) -> (&'static str, &'static str, String) {
    match path {
        "/metrics" => ("200 OK", "text/plain; version=0.0.4", metrics.render()),
        "/healthz" if metrics.healthy() => ("200 OK", "text/plain", "ok\n".into()),
        "/healthz" => (
            "503 Service Unavailable",
            "text/plain",
            "redis or mysql unreachable\n".into(),
        ),
        _ => ("404 Not Found", "text/plain", "not found\n".into()),
    }
}

fn handle(mut stream: TcpStream, metrics: &Metrics) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    // Read the whole request head: a client may send it in several pieces.
    let mut buf: Vec<u8> = Vec::with_capacity(512);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n")
        && !buf.windows(2).any(|w| w == b"\n\n")
        && buf.len() < 8192
    {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .split('?')
        .next()
        .unwrap_or("/")
        .to_owned();
    let (status, ctype, body) = route(&path, metrics);
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(resp.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_series() {
        let m = Metrics::new();
        m.applied("claim", 3);
        m.conflict("oversell");
        m.batch("fast", 0.003);
        m.error("mysql");
        m.set_lag("e1", 5, 1500);
        m.set_lag("e2", 2, 100);
        m.set_lag("gone", 9, 99_000);
        m.forget("gone");
        let text = m.render();
        for want in [
            "ticketgate_applied_records_total{op=\"claim\"} 3",
            "ticketgate_conflicts_total{reason=\"oversell\"} 1",
            "ticketgate_batches_total{path=\"fast\"} 1",
            "ticketgate_errors_total{kind=\"mysql\"} 1",
            "ticketgate_batch_duration_seconds_bucket{le=\"0.0025\"} 0",
            "ticketgate_batch_duration_seconds_bucket{le=\"0.005\"} 1",
            "ticketgate_batch_duration_seconds_count 1",
            "ticketgate_lag_entries 7",
            "ticketgate_lag_seconds 1.5",
            "ticketgate_up{component=\"mysql\"} 0",
        ] {
            assert!(text.contains(want), "missing {want}\n{text}");
        }
    }

    #[test]
    fn serves_a_request_sent_in_pieces() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let m = Metrics::new();
        m.applied("claim", 7);
        let stop = Arc::new(AtomicBool::new(false));
        let (m2, s2) = (m.clone(), stop.clone());
        let server = std::thread::spawn(move || serve(listener, m2, s2));
        let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        for piece in ["GET ", "/metrics", " HTTP/1.1\r\n", "Host: x\r\n", "\r\n"] {
            c.write_all(piece.as_bytes()).unwrap();
            std::thread::sleep(Duration::from_millis(30));
        }
        let mut out = String::new();
        c.read_to_string(&mut out).unwrap();
        stop.store(true, Ordering::Relaxed);
        server.join().unwrap();
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        assert!(
            out.contains("ticketgate_applied_records_total{op=\"claim\"} 7"),
            "{out}"
        );
    }

    #[test]
    fn health_follows_components() {
        let m = Metrics::new();
        assert_eq!(route("/healthz", &m).0, "503 Service Unavailable");
        m.set_up("mysql", true);
        m.set_up("redis", true);
        assert_eq!(route("/healthz", &m).0, "200 OK");
        assert_eq!(route("/nope", &m).0, "404 Not Found");
    }
}
