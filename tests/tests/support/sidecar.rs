//! Shared helpers of the `sidecar_*` end-to-end tests (included with
//! `#[path]` from tests/tests/*.rs; a subdirectory, so not a test crate of its own).
//!
//! The sidecar always runs as a real child process
//! (`target/release/ticketgate-sidecar`), against the harness's private
//! redis-server (module loaded) and a fresh database on the private MariaDB.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use protocol::keys;
use protocol::record::{Op, Record, Tickets};
use ticketgate_tests::{release_bin, wait_until};

/// Path of the release sidecar binary (see [`release_bin`]).
pub fn sidecar_bin() -> PathBuf {
    release_bin("ticketgate-sidecar", "ticketgate-sidecar")
}

/// Runs a sidecar subcommand to completion; returns (status, stdout+stderr).
pub fn sidecar_cmd(redis_url: &str, mysql_url: &str, args: &[&str]) -> (ExitStatus, String) {
    let out = Command::new(sidecar_bin())
        .args(args)
        .env("TICKETGATE_REDIS_URL", redis_url)
        .env("TICKETGATE_MYSQL_URL", mysql_url)
        .env("TICKETGATE_STARTUP_TIMEOUT", "10")
        .stdin(Stdio::null())
        .output()
        .expect("run ticketgate-sidecar");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, text)
}

/// `ticketgate-sidecar migrate`, asserting success.
pub fn migrate(mysql_url: &str) {
    let (st, out) = sidecar_cmd("redis://127.0.0.1:1/", mysql_url, &["migrate"]);
    assert!(st.success(), "migrate failed: {out}");
}

/// A running `ticketgate-sidecar run` child; killed on drop.
pub struct Sidecar {
    pub child: Child,
    pub log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Sidecar {
    /// Starts `run` with the given extra flags; logs go to a temp file.
    pub fn start(redis_url: &str, mysql_url: &str, extra: &[&str]) -> Sidecar {
        let dir = tempfile::Builder::new()
            .prefix("tg-sidecar-")
            .tempdir()
            .expect("tempdir");
        let log = dir.path().join("sidecar.log");
        let f = fs::File::create(&log).expect("create sidecar log");
        let child = Command::new(sidecar_bin())
            .arg("run")
            .args(extra)
            .env("TICKETGATE_RESCAN_INTERVAL", "5")
            .env("TICKETGATE_BATCH_SIZE", "200")
            .env("TICKETGATE_REDIS_URL", redis_url)
            .env("TICKETGATE_MYSQL_URL", mysql_url)
            .env(
                "RUST_LOG",
                std::env::var("TG_SIDECAR_LOG").unwrap_or_else(|_| "info".into()),
            )
            .stdin(Stdio::null())
            .stdout(f.try_clone().expect("dup log"))
            .stderr(f)
            .spawn()
            .expect("spawn ticketgate-sidecar run");
        Sidecar {
            child,
            log,
            _dir: dir,
        }
    }

    /// The sidecar's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The port of `--metrics-addr 127.0.0.1:0`, read from the startup log
    /// line (port 0 lets the kernel pick: no race with other test processes).
    pub fn metrics_port(&self) -> u16 {
        let mut port = None;
        wait_until(
            Duration::from_secs(15),
            "sidecar logs its metrics address",
            || {
                port = self.log().lines().find_map(|l| {
                    let rest = l.split("metrics on http://127.0.0.1:").nth(1)?;
                    rest.split('/').next()?.parse().ok()
                });
                port.is_some()
            },
        );
        port.unwrap_or_else(|| panic!("no metrics address in the log:\n{}", self.log()))
    }

    /// True while the process has not exited.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// kill -9 and reap.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM; waits up to `timeout` for the exit status.
    pub fn terminate(&mut self, timeout: Duration) -> Option<ExitStatus> {
        self.signal(libc::SIGTERM);
        self.wait_exit(timeout)
    }

    /// Sends `sig` to the sidecar.
    pub fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill(2) on our own unreaped child.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, sig);
        }
    }

    /// Waits up to `timeout` for the process to exit by itself.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// `TICKET.INIT event total` (panics if refused).
pub fn init_event(c: &mut dyn redis::ConnectionLike, event: &str, total: i64) {
    redis::cmd("TICKET.INIT")
        .arg(event)
        .arg(total)
        .query::<()>(c)
        .unwrap_or_else(|e| panic!("TICKET.INIT {event}: {e}"));
}

/// `TICKET.CLAIM event u<i>` for every `i` of `users` (panics if refused).
pub fn claim_users(c: &mut dyn redis::ConnectionLike, event: &str, users: std::ops::Range<u32>) {
    for i in users {
        redis::cmd("TICKET.CLAIM")
            .arg(event)
            .arg(format!("u{i}"))
            .query::<i64>(c)
            .unwrap_or_else(|e| panic!("TICKET.CLAIM {event} u{i}: {e}"));
    }
}

/// Redis side of one event: holders, remaining, unsynced.
#[derive(Debug, PartialEq, Eq)]
pub struct RedisView {
    pub holders: HashMap<String, i64>,
    pub remaining: i64,
    pub unsynced: i64,
}

pub fn redis_view(conn: &mut redis::Connection, event: &str) -> RedisView {
    // A seated event's `categories` is an array: only scalars are kept.
    let status: Vec<redis::Value> = redis::cmd("TICKET.STATUS")
        .arg(event)
        .query(conn)
        .expect("TICKET.STATUS");
    let mut m = HashMap::new();
    for kv in status.chunks(2) {
        if let (Ok(k), Ok(v)) = (
            redis::from_redis_value::<String>(kv[0].clone()),
            redis::from_redis_value::<String>(kv[1].clone()),
        ) {
            m.insert(k, v);
        }
    }
    let num = |k: &str| m.get(k).and_then(|v| v.parse::<i64>().ok()).expect(k);
    let holders: HashMap<String, i64> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{event}}}:holders"))
        .query(conn)
        .expect("HGETALL holders");
    RedisView {
        holders,
        remaining: num("remaining"),
        unsynced: num("unsynced"),
    }
}

/// MySQL side of one event.
#[derive(Debug, PartialEq, Eq)]
pub struct MysqlView {
    pub active: HashMap<String, i64>,
    pub remaining: Option<i64>,
    pub conflicts: Vec<(String, String)>,
}

pub fn mysql_view(url: &str, event: &str) -> mysql::Result<MysqlView> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(url).expect("url"))?;
    let active: Vec<(String, i64)> = c.exec(
        "SELECT user_id, ticket_number FROM ticket_participation WHERE event_id = ? AND status = 'active'",
        (event,),
    )?;
    let remaining: Option<i64> = c.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )?;
    let conflicts: Vec<(String, String)> = c.exec(
        "SELECT stream_id, reason FROM ticket_conflict WHERE event_id = ? ORDER BY id",
        (event,),
    )?;
    Ok(MysqlView {
        active: active.into_iter().collect(),
        remaining,
        conflicts,
    })
}

/// Waits until the log is drained and MySQL equals Redis for `event`.
pub fn wait_synced(
    conn: &mut redis::Connection,
    mysql_url: &str,
    event: &str,
    timeout: Duration,
    sidecar_log: &dyn Fn() -> String,
) {
    let end = Instant::now() + timeout;
    loop {
        let r = redis_view(conn, event);
        let m = mysql_view(mysql_url, event).ok();
        if let Some(m) = &m {
            if r.unsynced == 0 && m.active == r.holders && m.remaining == Some(r.remaining) {
                return;
            }
        }
        if Instant::now() > end {
            panic!(
                "event {event} not in sync after {timeout:?}: redis unsynced={} holders={} remaining={}; mysql {:?}\n--- sidecar log ---\n{}",
                r.unsynced,
                r.holders.len(),
                r.remaining,
                m.map(|m| (m.active.len(), m.remaining, m.conflicts)),
                tail(&sidecar_log(), 60)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Waits until `path` exists.
pub fn wait_file(path: &Path) {
    wait_until(Duration::from_secs(10), "file exists", || path.exists());
}

/// GET `path` from the sidecar's metrics server; the raw HTTP response.
pub fn http_get(port: u16, path: &str) -> String {
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return String::new();
    };
    if write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").is_err() {
        return String::new();
    }
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    out
}

/// The value of one series (exact name with labels) on `/metrics`, 0 if absent.
pub fn metric(port: u16, series: &str) -> u64 {
    http_get(port, "/metrics")
        .lines()
        .find_map(|l| {
            l.strip_prefix(series)
                .and_then(|v| v.trim().parse::<f64>().ok())
        })
        .map(|v| v as u64)
        .unwrap_or(0)
}

/// Unix time in ms.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// `XADD` of `op` to `event`'s log, exactly as the module logs it at an id
/// Redis picks: the fields come from `protocol::record::Record::log_fields`,
/// the one definition of the record format (compact for the hot ops, with
/// `at`, as the id is not known before).
pub fn xadd_cmd(event: &str, op: Op<&str>) -> redis::Cmd {
    let rec = Record { op, at: now_ms() };
    let mut cmd = redis::cmd("XADD");
    cmd.arg(keys::key(event, keys::Part::Log)).arg("*");
    for (name, value) in rec.log_fields(event, false) {
        cmd.arg(name).arg(value.to_string());
    }
    cmd
}

/// XADDs `ops` to `event`'s log in one pipeline; the last entry's id.
pub fn log(r: &mut redis::Connection, event: &str, ops: Vec<Op<&str>>) -> String {
    let mut pipe = redis::pipe();
    for op in ops {
        pipe.add_command(xadd_cmd(event, op));
    }
    let ids: Vec<String> = pipe.query(r).expect("XADD pipeline");
    ids.last().cloned().unwrap_or_default()
}

/// Waits until MySQL's offset of `event` is `id` (showing the sidecar's
/// log if it never gets there), and the sidecar never panicked.
pub fn wait_applied(db: &str, event: &str, id: &str, sc: &Sidecar) {
    let mut my = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let at: Option<String> = my
            .exec_first(
                "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = ?",
                (event,),
            )
            .unwrap();
        if at.as_deref() == Some(id) {
            break;
        }
        assert!(
            Instant::now() < end,
            "the sidecar did not apply the log up to {id} (at {at:?}):\n{}",
            sc.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!sc.log().contains("panicked"), "{}", sc.log());
}

/// `XADD` of `rec` to `event`'s log at `id` (`*` for a new one), fields
/// as [`xadd_cmd`] writes them; returns the entry id.
pub fn xadd_at(conn: &mut redis::Connection, event: &str, id: &str, rec: &Record<&str>) -> String {
    let mut cmd = redis::cmd("XADD");
    cmd.arg(keys::key(event, keys::Part::Log)).arg(id);
    for (name, value) in rec.fields(event) {
        cmd.arg(name).arg(value.to_string());
    }
    cmd.query(conn).expect("XADD")
}

/// [`xadd_cmd`], run; returns the entry id.
pub fn xadd(conn: &mut redis::Connection, event: &str, op: Op<&str>) -> String {
    xadd_cmd(event, op).query(conn).expect("XADD")
}

/// Tickets from ascending numbers.
pub fn tickets(numbers: &[i64]) -> Tickets {
    Tickets::from_sorted(numbers.to_vec())
}

/// A checkout stream written as the module half will log it: each round,
/// new users hold 1–3 of the lowest free tickets, and the previous round's
/// holders confirm (6 in 10), let the hold expire (3 in 10) or cancel;
/// returned tickets are held again by later users. Keeps the rows MySQL
/// must end up with.
pub struct Checkout {
    pub event: String,
    free: BTreeSet<i64>,
    /// user -> (tickets, status of its order)
    want: BTreeMap<String, (Vec<i64>, &'static str)>,
    holding: Vec<String>,
    /// Log entries written, by op.
    pub written: HashMap<&'static str, u64>,
}

impl Checkout {
    pub fn new(event: &str, total: i64) -> Checkout {
        Checkout {
            event: event.to_string(),
            free: (1..=total).collect(),
            want: BTreeMap::new(),
            holding: Vec::new(),
            written: HashMap::new(),
        }
    }

    /// One round of `holds` new users (named after `round`), in one pipeline.
    pub fn round(&mut self, conn: &mut redis::Connection, round: usize, holds: usize) {
        let mut p = redis::pipe();
        for (i, user) in std::mem::take(&mut self.holding).into_iter().enumerate() {
            let (held, _) = self.want[&user].clone();
            let t = tickets(&held);
            let (op, status) = match i % 10 {
                0..=5 => (
                    Op::Confirm {
                        user: user.as_str(),
                        tickets: t,
                    },
                    "active",
                ),
                6..=8 => (
                    Op::Expire {
                        from: None,
                        user: user.as_str(),
                        tickets: t,
                    },
                    "expired",
                ),
                _ => (
                    Op::Cancel {
                        from: None,
                        user: user.as_str(),
                        tickets: t,
                    },
                    "canceled",
                ),
            };
            if status != "active" {
                self.free.extend(&held);
            }
            *self.written.entry(op.name()).or_insert(0) += 1;
            p.add_command(xadd_cmd(&self.event, op)).ignore();
            self.want.insert(user, (held, status));
        }
        for i in 0..holds {
            let k = 1 + i % 3;
            let held: Vec<i64> = self.free.iter().take(k).copied().collect();
            if held.len() < k {
                break;
            }
            let user = format!("c{round}-{i}");
            for t in &held {
                self.free.remove(t);
            }
            let op = Op::Hold {
                from: None,
                pick: None,
                user: user.as_str(),
                tickets: tickets(&held),
                until: now_ms() + 60_000,
            };
            *self.written.entry("hold").or_insert(0) += 1;
            p.add_command(xadd_cmd(&self.event, op)).ignore();
            self.want.insert(user.clone(), (held, "held"));
            self.holding.push(user);
        }
        let () = p.query(conn).expect("XADD pipeline");
    }

    /// Rows MySQL must hold: (user, ticket, status), sorted.
    pub fn rows(&self) -> Vec<(String, i64, String)> {
        self.want
            .iter()
            .flat_map(|(u, (ts, s))| ts.iter().map(move |t| (u.clone(), *t, s.to_string())))
            .collect()
    }

    /// Free tickets now: what `remaining_stock` must be.
    pub fn remaining(&self) -> i64 {
        self.free.len() as i64
    }
}

/// Every participation row of `event`: (user, ticket, status), sorted.
pub fn rows_of(url: &str, event: &str) -> mysql::Result<Vec<(String, i64, String)>> {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(url).expect("url"))?;
    c.exec(
        "SELECT user_id, ticket_number, CAST(status AS CHAR) FROM ticket_participation WHERE event_id = ? ORDER BY user_id, ticket_number",
        (event,),
    )
}

/// Waits until `ck`'s log is drained and MySQL holds exactly its rows,
/// its stock and no conflict.
pub fn wait_checkout(
    conn: &mut redis::Connection,
    url: &str,
    ck: &Checkout,
    timeout: Duration,
    log: &dyn Fn() -> String,
) {
    let end = Instant::now() + timeout;
    let want = ck.rows();
    loop {
        let xlen: i64 = redis::cmd("XLEN")
            .arg(keys::key(&ck.event, keys::Part::Log))
            .query(conn)
            .expect("XLEN");
        let rows = rows_of(url, &ck.event).ok();
        let view = mysql_view(url, &ck.event).ok();
        let stock = view.as_ref().and_then(|v| v.remaining);
        if xlen == 0 && rows.as_ref() == Some(&want) && stock == Some(ck.remaining()) {
            let conflicts = view.map(|v| v.conflicts).unwrap_or_default();
            assert!(
                conflicts.is_empty(),
                "conflicts: {conflicts:?}\n{}",
                tail(&log(), 40)
            );
            return;
        }
        if Instant::now() > end {
            let have = rows.map(|r| r.len());
            panic!(
                "checkout {} not in MySQL after {timeout:?}: log {xlen}, rows {have:?} of {}, stock {stock:?} of {}\n{}",
                ck.event,
                want.len(),
                ck.remaining(),
                tail(&log(), 60)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
