//! Prometheus metrics (the `prometheus` crate's registry and text format
//! 0.0.4) and their HTTP endpoint (axum on a one-thread tokio runtime, the
//! same stack as `ticketgate-live`).
//!
//! Series (all prefixed `ticketgate_`):
//! - `applied_records_total{op}` — log entries written to MySQL, by op;
//! - `conflicts_total{reason}` — entries written to `ticket_conflict`;
//! - `batches_total{path}` — committed batches by path (`fast`, `slow`, `skip`);
//! - `batch_duration_seconds` — histogram of batch write time (lock to commit);
//! - `lag_entries` — entries still in the logs (sum of `XLEN` after trimming);
//! - `lag_seconds` — age of the oldest unwritten entry, 0 when caught up;
//! - `errors_total{kind}` — retried errors (`mysql`, `redis`);
//! - `events` — event logs being drained;
//! - `up{component}` — 1 while `redis` / `mysql` answered the last call;
//! - `quarantined_events` — events quarantined (Redis lost or replaced
//!   them; nothing of them is written until a rebuild);
//! - `event_quarantined{event,reason}` — 1 per quarantined event;
//! - `stuck_events` — events whose last batch attempt failed (their
//!   writer retries them with their own backoff, the others drain on);
//! - `event_stuck_seconds{event}`, `event_stuck_attempts{event}` — per
//!   such event, since its first failed attempt in a row, and how many;
//! - with a Sentinel URL, per master name: `sentinels_reachable{master}`
//!   (sentinels that answered the last round, every second),
//!   `sentinel_quorum{master}` (1 while `SENTINEL CKQUORUM` says a failover
//!   can be authorised; 0: no quorum, the sidecar drains the master it has)
//!   and `sentinel_master_switches_total{master}`.
//!
//! `/healthz` answers `200 ok` while both components are up, else `503`.
//! Every response closes its connection, as the hand-written server did.

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use prometheus::{
    Encoder, Gauge, GaugeVec, Histogram, HistogramOpts, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// Upper bounds (seconds) of the batch latency histogram.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];

/// All counters and gauges of one sidecar process.
pub struct Metrics {
    registry: Registry,
    written: IntCounterVec,
    conflicts: IntCounterVec,
    batches: IntCounterVec,
    errors: IntCounterVec,
    latency: Histogram,
    lag_entries: IntGauge,
    lag_seconds: Gauge,
    events: IntGauge,
    up: IntGaugeVec,
    quarantined_events: IntGauge,
    event_quarantined: IntGaugeVec,
    lost_writes: IntCounterVec,
    sentinel: SentinelSeries,
    stuck: StuckSeries,
    /// Quarantined events and their reason codes.
    quarantined: Mutex<BTreeMap<String, String>>,
    /// Per event: (entries left, age of the oldest in ms).
    lag: Mutex<BTreeMap<String, (u64, u64)>>,
}

// Names, labels and options are constants: a failure in these
// constructors is a bug, caught by the tests.

fn counter_vec(name: &str, help: &str, label: &str) -> IntCounterVec {
    IntCounterVec::new(Opts::new(name, help), &[label]).expect("valid metric name and label")
}

fn int_gauge(name: &str, help: &str) -> IntGauge {
    IntGauge::new(name, help).expect("valid metric name")
}

fn gauge_vec(name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric name and labels")
}

fn latency_histogram() -> Histogram {
    let opts = HistogramOpts::new(
        "batch_duration_seconds",
        "Time to apply one batch, lock to commit.",
    );
    Histogram::with_opts(opts.buckets(BUCKETS.to_vec())).expect("valid buckets")
}

/// The series of events whose batch keeps failing, and those events:
/// since when, how many attempts.
struct StuckSeries {
    events: IntGauge,
    seconds: GaugeVec,
    attempts: IntGaugeVec,
    now: Mutex<BTreeMap<String, (Instant, u32)>>,
}

impl StuckSeries {
    fn new() -> StuckSeries {
        let seconds = GaugeVec::new(
            Opts::new(
                "event_stuck_seconds",
                "Per event whose batch keeps failing: seconds since its first failed attempt in a row.",
            ),
            &["event"],
        )
        .expect("valid metric name and label");
        StuckSeries {
            events: int_gauge(
                "stuck_events",
                "Events whose last batch attempt failed; retried with their own backoff while the others drain.",
            ),
            seconds,
            attempts: gauge_vec(
                "event_stuck_attempts",
                "Per event whose batch keeps failing: failed attempts in a row.",
                &["event"],
            ),
            now: Mutex::new(BTreeMap::new()),
        }
    }

    /// Applies `change` to the stuck events, then refreshes the series
    /// (the seconds are as of now).
    fn update(&self, change: impl FnOnce(&mut BTreeMap<String, (Instant, u32)>)) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        let before: Vec<String> = now.keys().cloned().collect();
        change(&mut now);
        for event in before.iter().filter(|e| !now.contains_key(*e)) {
            let _ = self.seconds.remove_label_values(&[event]);
            let _ = self.attempts.remove_label_values(&[event]);
        }
        for (event, (since, attempts)) in now.iter() {
            let secs = since.elapsed().as_secs_f64();
            self.seconds.with_label_values(&[event]).set(secs);
            self.attempts
                .with_label_values(&[event])
                .set(i64::from(*attempts));
        }
        self.events
            .set(i64::try_from(now.len()).unwrap_or(i64::MAX));
    }
}

/// The series of a Sentinel URL, by master name (absent without one).
struct SentinelSeries {
    reachable: IntGaugeVec,
    quorum: IntGaugeVec,
    switches: IntCounterVec,
}

impl SentinelSeries {
    fn new() -> SentinelSeries {
        SentinelSeries {
            reachable: gauge_vec(
                "sentinels_reachable",
                "Sentinels that answered the last round (a Sentinel URL only).",
                &["master"],
            ),
            quorum: gauge_vec(
                "sentinel_quorum",
                "1 while SENTINEL CKQUORUM says a failover can be authorised; 0: no quorum, the master in use is kept.",
                &["master"],
            ),
            switches: counter_vec(
                "sentinel_master_switches_total",
                "Master switches the sentinels announced or a round found.",
                "master",
            ),
        }
    }

    /// Reads the process's watchers into the series.
    fn update(&self) {
        for w in conn::sentinel::watchers() {
            let name = w.url().master.as_str();
            let h = w.health();
            let reachable = i64::try_from(h.reachable).unwrap_or(i64::MAX);
            self.reachable.with_label_values(&[name]).set(reachable);
            self.quorum
                .with_label_values(&[name])
                .set(i64::from(h.quorum));
            let switches = self.switches.with_label_values(&[name]);
            switches.inc_by(h.switches.saturating_sub(switches.get()));
        }
    }
}

impl Metrics {
    /// A fresh, shareable registry.
    pub fn new() -> Arc<Metrics> {
        let registry = Registry::new_custom(Some("ticketgate".into()), None).expect("prefix");
        let m = Metrics {
            written: counter_vec(
                "applied_records_total",
                "Log entries applied to MySQL, by op.",
                "op",
            ),
            conflicts: counter_vec(
                "conflicts_total",
                "Log entries written to ticket_conflict, by reason.",
                "reason",
            ),
            batches: counter_vec("batches_total", "Committed batches, by path.", "path"),
            errors: counter_vec("errors_total", "Retried errors, by component.", "kind"),
            latency: latency_histogram(),
            lag_entries: int_gauge(
                "lag_entries",
                "Entries not yet applied, summed over all event logs.",
            ),
            lag_seconds: Gauge::new("lag_seconds", "Age of the oldest entry not yet applied.")
                .expect("valid name"),
            events: int_gauge("events", "Event logs being drained."),
            up: gauge_vec(
                "up",
                "1 while the component answered its last call.",
                &["component"],
            ),
            quarantined_events: int_gauge(
                "quarantined_events",
                "Events quarantined: Redis lost or replaced them; rebuild repairs them.",
            ),
            event_quarantined: gauge_vec(
                "event_quarantined",
                "1 per quarantined event, with its reason.",
                &["event", "reason"],
            ),
            lost_writes: counter_vec(
                "lost_writes_total",
                "Writes MySQL applied that an unplanned failover lost in Redis, by what the heal did: reapplied or undone.",
                "outcome",
            ),
            sentinel: SentinelSeries::new(),
            stuck: StuckSeries::new(),
            quarantined: Mutex::new(BTreeMap::new()),
            lag: Mutex::new(BTreeMap::new()),
            registry,
        };
        m.register();
        Arc::new(m)
    }

    fn register(&self) {
        let collectors: [Box<dyn prometheus::core::Collector>; 18] = [
            Box::new(self.stuck.events.clone()),
            Box::new(self.stuck.seconds.clone()),
            Box::new(self.stuck.attempts.clone()),
            Box::new(self.lost_writes.clone()),
            Box::new(self.sentinel.reachable.clone()),
            Box::new(self.sentinel.quorum.clone()),
            Box::new(self.sentinel.switches.clone()),
            Box::new(self.quarantined_events.clone()),
            Box::new(self.event_quarantined.clone()),
            Box::new(self.written.clone()),
            Box::new(self.conflicts.clone()),
            Box::new(self.batches.clone()),
            Box::new(self.errors.clone()),
            Box::new(self.latency.clone()),
            Box::new(self.lag_entries.clone()),
            Box::new(self.lag_seconds.clone()),
            Box::new(self.events.clone()),
            Box::new(self.up.clone()),
        ];
        for c in collectors {
            self.registry.register(c).expect("distinct metric names");
        }
        for component in ["mysql", "redis"] {
            self.up.with_label_values(&[component]).set(0);
        }
    }

    /// `n` entries of `op` were written.
    pub fn written(&self, op: &str, n: u64) {
        self.written.with_label_values(&[op]).inc_by(n);
    }

    /// `n` lost writes were `outcome` (`reapplied` or `undone`) by a heal.
    pub fn lost_writes(&self, outcome: &str, n: u64) {
        self.lost_writes.with_label_values(&[outcome]).inc_by(n);
    }

    /// One entry went to `ticket_conflict` for `reason`.
    pub fn conflict(&self, reason: &str) {
        self.conflicts.with_label_values(&[reason]).inc();
    }

    /// A batch committed via `path` in `secs`.
    pub fn batch(&self, path: &str, secs: f64) {
        self.batches.with_label_values(&[path]).inc();
        self.latency.observe(secs);
    }

    /// A retried error of `kind` (`mysql` or `redis`).
    pub fn error(&self, kind: &str) {
        self.errors.with_label_values(&[kind]).inc();
        self.set_up(kind, false);
    }

    /// Marks `component` (`mysql` / `redis`) up or down.
    pub fn set_up(&self, component: &str, up: bool) {
        if matches!(component, "mysql" | "redis") {
            self.up.with_label_values(&[component]).set(i64::from(up));
        }
    }

    /// True while both Redis and MySQL answered their last call.
    pub fn healthy(&self) -> bool {
        ["mysql", "redis"]
            .iter()
            .all(|c| self.up.with_label_values(&[c]).get() == 1)
    }

    /// Number of event logs tracked.
    pub fn set_events(&self, n: u64) {
        self.events.set(i64::try_from(n).unwrap_or(i64::MAX));
    }

    /// Lag of one event: entries left in its log and age of the oldest (ms).
    pub fn set_lag(&self, event: &str, entries: u64, age_ms: u64) {
        self.update_lag(|lag| {
            lag.insert(event.to_owned(), (entries, age_ms));
        });
    }

    /// Drops the lag of an event that no longer exists.
    pub fn forget(&self, event: &str) {
        self.update_lag(|lag| {
            lag.remove(event);
        });
    }

    /// Applies `change` to the per-event lag, then refreshes both lag gauges.
    fn update_lag(&self, change: impl FnOnce(&mut BTreeMap<String, (u64, u64)>)) {
        let mut lag = self.lag.lock().unwrap_or_else(|e| e.into_inner());
        change(&mut lag);
        let entries: u64 = lag.values().map(|(n, _)| n).sum();
        let oldest_ms = lag.values().map(|(_, age)| *age).max().unwrap_or(0);
        self.lag_entries
            .set(i64::try_from(entries).unwrap_or(i64::MAX));
        self.lag_seconds.set(oldest_ms as f64 / 1000.0);
    }

    /// `event` is quarantined for `reason` (a code).
    pub fn quarantine(&self, event: &str, reason: &str) {
        self.update_quarantine(|q| {
            q.insert(event.to_owned(), reason.to_owned());
        });
    }

    /// `event` is no longer quarantined.
    pub fn release(&self, event: &str) {
        self.update_quarantine(|q| {
            q.remove(event);
        });
    }

    /// Exactly these events are quarantined (event -> reason code).
    pub fn set_quarantined(&self, now: BTreeMap<String, String>) {
        self.update_quarantine(|q| *q = now);
    }

    /// Applies `change` to the quarantined events, then refreshes the
    /// gauge and the per-event series.
    fn update_quarantine(&self, change: impl FnOnce(&mut BTreeMap<String, String>)) {
        let mut q = self.quarantined.lock().unwrap_or_else(|e| e.into_inner());
        let before = q.clone();
        change(&mut q);
        for (event, reason) in &before {
            if q.get(event) != Some(reason) {
                let _ = self.event_quarantined.remove_label_values(&[event, reason]);
            }
        }
        for (event, reason) in q.iter() {
            self.event_quarantined
                .with_label_values(&[event, reason])
                .set(1);
        }
        self.quarantined_events
            .set(i64::try_from(q.len()).unwrap_or(i64::MAX));
    }

    /// `event`'s batch has failed `attempts` times in a row since `since`.
    pub fn stuck(&self, event: &str, since: Instant, attempts: u32) {
        self.stuck.update(|s| {
            s.insert(event.to_owned(), (since, attempts));
        });
    }

    /// `event`'s batch committed again.
    pub fn unstuck(&self, event: &str) {
        self.stuck.update(|s| {
            s.remove(event);
        });
    }

    /// Renders the Prometheus text exposition.
    pub fn render(&self) -> String {
        self.sentinel.update();
        self.stuck.update(|_| {});
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            log::error!("encoding metrics: {e}");
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

/// Serves `/metrics` and `/healthz` on `listener` until `stop` is set.
pub fn serve(listener: TcpListener, metrics: Arc<Metrics>, stop: Arc<AtomicBool>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let result = runtime.map_err(|e| e.to_string()).and_then(|rt| {
        rt.block_on(async move {
            listener.set_nonblocking(true).map_err(|e| e.to_string())?;
            let listener =
                tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
            let app = axum::Router::new().fallback(handle).with_state(metrics);
            axum::serve(listener, app)
                .with_graceful_shutdown(stopped(stop))
                .await
                .map_err(|e| e.to_string())
        })
    });
    if let Err(e) = result {
        log::error!("metrics server: {e}");
    }
}

async fn stopped(stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn handle(State(metrics): State<Arc<Metrics>>, uri: Uri) -> Response {
    let (status, ctype, body) = route(uri.path(), &metrics);
    let mut resp = (status, [(header::CONTENT_TYPE, ctype)], body).into_response();
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// Status, content type and body for a request path.
pub fn route(path: &str, metrics: &Metrics) -> (StatusCode, &'static str, String) {
    match path {
        "/metrics" => (
            StatusCode::OK,
            "text/plain; version=0.0.4",
            metrics.render(),
        ),
        "/healthz" if metrics.healthy() => (StatusCode::OK, "text/plain", "ok\n".into()),
        "/healthz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "redis or mysql unreachable\n".into(),
        ),
        _ => (StatusCode::NOT_FOUND, "text/plain", "not found\n".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    #[test]
    fn renders_series() {
        let m = Metrics::new();
        m.written("claim", 3);
        m.conflict("oversell");
        m.batch("fast", 0.003);
        m.error("mysql");
        m.set_lag("e1", 5, 1500);
        m.set_lag("e2", 2, 100);
        m.set_lag("gone", 9, 99_000);
        m.forget("gone");
        m.quarantine("q1", "vanished");
        m.quarantine("q2", "log_restarted");
        m.release("q2");
        let since = Instant::now() - Duration::from_secs(90);
        m.stuck("s1", since, 7);
        m.stuck("s2", Instant::now(), 1);
        m.unstuck("s2");
        let text = m.render();
        assert!(!text.contains("q2"), "{text}");
        assert!(!text.contains("s2"), "{text}");
        let secs = text
            .lines()
            .find_map(|l| l.strip_prefix("ticketgate_event_stuck_seconds{event=\"s1\"} "))
            .and_then(|v| v.parse::<f64>().ok());
        assert!(secs.is_some_and(|s| (90.0..100.0).contains(&s)), "{text}");
        for want in [
            "ticketgate_applied_records_total{op=\"claim\"} 3",
            "ticketgate_conflicts_total{reason=\"oversell\"} 1",
            "ticketgate_batches_total{path=\"fast\"} 1",
            "ticketgate_errors_total{kind=\"mysql\"} 1",
            "ticketgate_batch_duration_seconds_bucket{le=\"0.0025\"} 0",
            "ticketgate_batch_duration_seconds_bucket{le=\"0.005\"} 1",
            "ticketgate_batch_duration_seconds_bucket{le=\"+Inf\"} 1",
            "ticketgate_batch_duration_seconds_count 1",
            "ticketgate_lag_entries 7",
            "ticketgate_lag_seconds 1.5",
            "ticketgate_events 0",
            "ticketgate_up{component=\"mysql\"} 0",
            "ticketgate_up{component=\"redis\"} 0",
            "# TYPE ticketgate_batch_duration_seconds histogram",
            "ticketgate_quarantined_events 1",
            "ticketgate_event_quarantined{event=\"q1\",reason=\"vanished\"} 1",
            "ticketgate_stuck_events 1",
            "ticketgate_event_stuck_attempts{event=\"s1\"} 7",
        ] {
            assert!(text.contains(want), "missing {want}\n{text}");
        }
    }

    #[test]
    fn serves_a_request_sent_in_pieces_and_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let m = Metrics::new();
        m.written("claim", 7);
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
        assert!(out.contains("text/plain; version=0.0.4"), "{out}");
        assert!(
            out.contains("ticketgate_applied_records_total{op=\"claim\"} 7"),
            "{out}"
        );
    }

    #[test]
    fn health_follows_components() {
        let m = Metrics::new();
        assert_eq!(route("/healthz", &m).0, StatusCode::SERVICE_UNAVAILABLE);
        m.set_up("mysql", true);
        m.set_up("redis", true);
        assert_eq!(route("/healthz", &m).0, StatusCode::OK);
        m.error("redis");
        assert_eq!(route("/healthz", &m).0, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(route("/nope", &m).0, StatusCode::NOT_FOUND);
    }
}
