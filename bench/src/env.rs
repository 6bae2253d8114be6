//! The servers a run talks to (private ones from the test harness, or
//! existing ones given by URL), the sidecar child process, the Redis and
//! MySQL queries shared by the scenarios, and reading an event's log.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use mysql::prelude::Queryable;
use protocol::record::Record;

use crate::resp::RedisAddr;
use ticketgate_tests::with_database;

/// The Redis and MySQL servers of a run, plus the two databases on MySQL:
/// `tg_db` (sidecar schema, drained by the sidecar) and `baseline_db` (same
/// schema, written only by the Lua and MySQL-only baselines).
pub struct Servers {
    pub redis_url: String,
    pub redis_addr: RedisAddr,
    pub tg_db: String,
    pub baseline_db: String,
    pub private_redis: bool,
    pub private_mysql: bool,
    pub sidecar_bin: PathBuf,
    pub log_dir: tempfile::TempDir,
    _redis: Option<ticketgate_tests::RedisServer>,
    _mariadb: Option<ticketgate_tests::MariaDb>,
}

/// Runs `f`, turning a panic (the harness panics when a server cannot be
/// set up, with the server log in the message) into an error.
fn harness<T>(what: &str, f: impl FnOnce() -> T + std::panic::UnwindSafe) -> Result<T> {
    std::panic::catch_unwind(f).map_err(|e| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        anyhow!("{what} failed: {msg}")
    })
}

/// Unique suffix for database names and event ids of this run.
pub fn run_id() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("{}_{secs}", std::process::id())
}

pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The sidecar binary: `--sidecar`, else `<workspace>/target/release/ticketgate-sidecar`.
pub fn sidecar_bin(explicit: Option<&Path>) -> Result<PathBuf> {
    release_bin("ticketgate-sidecar", explicit)
}

/// `explicit`, else the release binary `name` of this workspace; an error
/// saying how to build it when the file is missing.
pub fn release_bin(name: &str, explicit: Option<&Path>) -> Result<PathBuf> {
    let p = match explicit {
        Some(p) => p.to_path_buf(),
        None => ticketgate_tests::workspace_root()
            .join("target/release")
            .join(name),
    };
    if !p.is_file() {
        bail!(
            "{name} binary {} not found: run `cargo build --release --workspace` first",
            p.display()
        );
    }
    Ok(p)
}

impl Servers {
    /// Starts (or connects to) Redis and MySQL, creates the two databases and
    /// migrates both with `ticketgate-sidecar migrate`.
    pub fn setup(
        redis_url: Option<&str>,
        mysql_url: Option<&str>,
        sidecar: Option<&Path>,
        redis_args: &[String],
    ) -> Result<Servers> {
        let sidecar_bin = sidecar_bin(sidecar)?;
        let (redis, redis_url) = match redis_url {
            Some(u) => (None, u.to_string()),
            None => {
                harness("checking the module build", || {
                    ticketgate_tests::module_path()
                })?;
                let mut args: Vec<&str> = vec!["--maxclients", "20000"];
                args.extend(redis_args.iter().map(String::as_str));
                let r = harness("starting a private redis-server", || {
                    ticketgate_tests::RedisServer::start_with(&args)
                })?;
                let url = r.url();
                (Some(r), url)
            }
        };
        let redis_addr = RedisAddr::from_url(&redis_url)?;
        let mut rc = redis_conn(&redis_url)?;
        let modules: redis::Value = redis::cmd("MODULE")
            .arg("LIST")
            .query(&mut rc)
            .context("MODULE LIST")?;
        if !format!("{modules:?}").contains("ticket") {
            bail!("the ticketgate module is not loaded on {redis_url} (MODULE LIST: {modules:?})");
        }
        let (mariadb, server_url) = match mysql_url {
            Some(u) => (None, u.to_string()),
            None => {
                let m = harness(
                    "starting a private MariaDB",
                    ticketgate_tests::MariaDb::start,
                )?;
                let url = m.url();
                (Some(m), url)
            }
        };
        let id = run_id();
        let tg_db = create_database(&server_url, &format!("tgbench_{id}"))?;
        let baseline_db = create_database(&server_url, &format!("tgbench_base_{id}"))?;
        if mariadb.is_some() {
            // 1,000 MySQL-only connections plus the sidecar's and ours.
            let mut c = mysql_conn(&tg_db)?;
            c.query_drop("SET GLOBAL max_connections = 3000")?;
        }
        let log_dir = tempfile::Builder::new()
            .prefix("tg-bench-")
            .tempdir()
            .context("create a temporary directory for sidecar logs")?;
        let s = Servers {
            redis_url,
            redis_addr,
            tg_db,
            baseline_db,
            private_redis: redis.is_some(),
            private_mysql: mariadb.is_some(),
            sidecar_bin,
            log_dir,
            _redis: redis,
            _mariadb: mariadb,
        };
        s.migrate(&s.tg_db)?;
        s.migrate(&s.baseline_db)?;
        Ok(s)
    }

    /// `ticketgate-sidecar migrate` on `db`.
    pub fn migrate(&self, db: &str) -> Result<()> {
        let out = Command::new(&self.sidecar_bin)
            .arg("migrate")
            .env("TICKETGATE_REDIS_URL", &self.redis_url)
            .env("TICKETGATE_MYSQL_URL", db)
            .env("TICKETGATE_STARTUP_TIMEOUT", "20")
            .stdin(Stdio::null())
            .output()
            .context("run ticketgate-sidecar migrate")?;
        if !out.status.success() {
            bail!(
                "ticketgate-sidecar migrate failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(())
    }

    /// Starts `ticketgate-sidecar run` on the ticketgate database.
    pub fn start_sidecar(&self, name: &str) -> Result<Sidecar> {
        let log = self.log_dir.path().join(format!("sidecar-{name}.log"));
        let f = fs::File::create(&log).with_context(|| format!("create {}", log.display()))?;
        let child = Command::new(&self.sidecar_bin)
            .arg("run")
            .env("TICKETGATE_REDIS_URL", &self.redis_url)
            .env("TICKETGATE_MYSQL_URL", &self.tg_db)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(f.try_clone()?)
            .stderr(f)
            .spawn()
            .context("spawn ticketgate-sidecar run")?;
        Ok(Sidecar { child, log })
    }

    pub fn redis(&self) -> Result<redis::Connection> {
        redis_conn(&self.redis_url)
    }

    pub fn redis_version(&self) -> String {
        let info: Option<String> = self
            .redis()
            .ok()
            .and_then(|mut c| redis::cmd("INFO").arg("server").query(&mut c).ok());
        info.and_then(|i| {
            i.lines()
                .find_map(|l| l.strip_prefix("redis_version:").map(str::to_string))
        })
        .unwrap_or_default()
    }

    pub fn mysql_version(&self) -> String {
        mysql_conn(&self.tg_db)
            .ok()
            .and_then(|mut c| {
                c.query_first::<String, _>("SELECT VERSION()")
                    .ok()
                    .flatten()
            })
            .unwrap_or_default()
    }
}

fn create_database(server_url: &str, name: &str) -> Result<String> {
    let mut c = mysql_conn(&with_database(server_url, ""))?;
    c.query_drop(format!(
        "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    ))
    .with_context(|| format!("CREATE DATABASE {name}"))?;
    Ok(with_database(server_url, name))
}

pub fn redis_conn(url: &str) -> Result<redis::Connection> {
    let client = redis::Client::open(url).with_context(|| format!("Redis URL {url:?}"))?;
    client
        .get_connection_with_timeout(Duration::from_secs(10))
        .with_context(|| format!("connect to Redis at {url}"))
}

pub fn mysql_conn(url: &str) -> Result<mysql::Conn> {
    let opts = mysql::Opts::from_url(url).map_err(|e| anyhow!("invalid MySQL URL: {e}"))?;
    mysql::Conn::new(opts).context("connect to MySQL")
}

/// A running `ticketgate-sidecar run`; SIGKILLed on drop if not stopped.
pub struct Sidecar {
    child: Child,
    log: PathBuf,
}

impl Sidecar {
    /// SIGTERM and wait (SIGKILL after 20 s); true if it exited 0.
    pub fn stop(mut self) -> bool {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on our own child, which has not been reaped yet.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return st.success();
            }
            sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        false
    }

    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last lines of the sidecar's log.
    pub fn log_tail(&self) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// `TICKET.STATUS E`'s numeric fields as a map (RESP2 flat array of field,
/// value; a seated event's `categories`, an array, is left out).
pub fn ticket_status(c: &mut redis::Connection, event: &str) -> Result<HashMap<String, i64>> {
    let flat: Vec<redis::Value> = redis::cmd("TICKET.STATUS")
        .arg(event)
        .query(c)
        .with_context(|| format!("TICKET.STATUS {event}"))?;
    let mut m = HashMap::new();
    for kv in flat.chunks(2) {
        if let [k, v] = kv {
            let k: Option<String> = redis::from_redis_value(k.clone()).ok();
            let v: Option<String> = redis::from_redis_value(v.clone()).ok();
            if let (Some(k), Some(Ok(n))) = (k, v.map(|v| v.parse::<i64>())) {
                m.insert(k, n);
            }
        }
    }
    Ok(m)
}

pub fn status_field(m: &HashMap<String, i64>, k: &str) -> Result<i64> {
    m.get(k)
        .copied()
        .ok_or_else(|| anyhow!("TICKET.STATUS has no numeric {k:?}"))
}

/// The holders hash of an event (user -> ticket).
pub fn redis_holders(c: &mut redis::Connection, key: &str) -> Result<HashMap<String, i64>> {
    redis::cmd("HGETALL")
        .arg(key)
        .query(c)
        .with_context(|| format!("HGETALL {key}"))
}

pub fn holders_key(event: &str) -> String {
    protocol::keys::key(event, protocol::keys::Part::Holders)
}

/// Active participations of an event in MySQL (user -> ticket).
pub fn mysql_active(c: &mut mysql::Conn, event: &str) -> Result<HashMap<String, i64>> {
    let rows: Vec<(String, i64)> = c.exec(
        "SELECT user_id, ticket_number FROM ticket_participation WHERE event_id = ? AND status = 'active'",
        (event,),
    )?;
    Ok(rows.into_iter().collect())
}

/// One number about an event: `sql` with the event id as its one parameter.
fn event_scalar(c: &mut mysql::Conn, sql: &str, event: &str) -> Result<Option<i64>> {
    Ok(c.exec_first(sql, (event,))?)
}

/// The MariaDB/MySQL counters the drain scenario reports, as
/// `SHOW GLOBAL STATUS` names them.
pub const COUNTERS: [&str; 6] = [
    "Questions",
    "Com_commit",
    "Handler_write",
    "Innodb_data_fsyncs",
    "Innodb_os_log_written",
    "Bytes_received",
];

/// The server-wide values of [`COUNTERS`] (a counter the server does not
/// have reads 0).
pub fn mysql_counters(url: &str) -> Result<HashMap<String, i64>> {
    let mut c = mysql_conn(url)?;
    let list = COUNTERS.map(|n| format!("'{n}'")).join(", ");
    let rows: Vec<(String, String)> = c
        .query(format!(
            "SHOW GLOBAL STATUS WHERE Variable_name IN ({list})"
        ))
        .context("SHOW GLOBAL STATUS")?;
    Ok(rows
        .into_iter()
        .map(|(k, v)| (k, v.parse().unwrap_or(0)))
        .collect())
}

pub fn mysql_active_count(c: &mut mysql::Conn, event: &str) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM ticket_participation WHERE event_id = ? AND status = 'active'";
    Ok(event_scalar(c, sql, event)?.unwrap_or(0))
}

pub fn mysql_stock(c: &mut mysql::Conn, event: &str) -> Result<Option<i64>> {
    let sql = "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?";
    event_scalar(c, sql, event)
}

pub fn mysql_conflicts(c: &mut mysql::Conn, event: &str) -> Result<i64> {
    let sql = "SELECT COUNT(*) FROM ticket_conflict WHERE event_id = ?";
    Ok(event_scalar(c, sql, event)?.unwrap_or(0))
}

/// The conflicts of an event by reason (reason, count), most frequent first.
pub fn mysql_conflict_reasons(c: &mut mysql::Conn, event: &str) -> Result<Vec<(String, i64)>> {
    Ok(c.exec(
        "SELECT reason, COUNT(*) AS n FROM ticket_conflict WHERE event_id = ? GROUP BY reason ORDER BY n DESC",
        (event,),
    )?)
}

/// Polls until the sidecar has written `expected` active rows of a
/// ticketgate event and its log is drained; returns when that happened.
/// `Err` after `timeout`. Redis's `unsynced` is polled first and MySQL's
/// row count only once it is 0 (or every [`COUNT_EVERY`] polls, to end
/// early on more rows than expected): a `COUNT(*)` over the event's rows
/// every few ms would compete with the drain it measures for MariaDB's
/// CPU.
pub fn wait_drained(
    servers: &Servers,
    event: &str,
    expected: i64,
    timeout: Duration,
    poll: Duration,
    sidecar: &mut Sidecar,
) -> Result<Instant> {
    let mut r = servers.redis()?;
    let mut m = mysql_conn(&servers.tg_db)?;
    let deadline = Instant::now() + timeout;
    let (mut n, mut polls) = (0, 0u64);
    loop {
        let drained = status_field(&ticket_status(&mut r, event)?, "unsynced")? == 0;
        if drained || polls % COUNT_EVERY == 0 {
            n = mysql_active_count(&mut m, event)?;
            if (drained && n >= expected) || n > expected {
                return Ok(Instant::now());
            }
        }
        if !sidecar.running() {
            bail!(
                "the sidecar exited while draining {event}; log:\n{}",
                sidecar.log_tail()
            );
        }
        if Instant::now() > deadline {
            bail!(
                "MySQL has {n} of {expected} rows of {event} after {timeout:?}; sidecar log:\n{}",
                sidecar.log_tail()
            );
        }
        sleep(poll);
        polls += 1;
    }
}

/// How often [`wait_drained`] counts MySQL's rows while the log is not
/// drained yet (in polls).
const COUNT_EVERY: u64 = 25;

/// Full comparison of a ticketgate event, Redis vs MySQL: holders == active
/// rows, remaining == remaining_stock, no conflicts. Returns violations.
pub fn compare_event(servers: &Servers, event: &str) -> Result<Vec<String>> {
    let mut r = servers.redis()?;
    let mut m = mysql_conn(&servers.tg_db)?;
    let redis_h = redis_holders(&mut r, &holders_key(event))?;
    let mysql_h = mysql_active(&mut m, event)?;
    let mut v = crate::oracle::diff_holders("Redis", &redis_h, "MySQL", &mysql_h);
    let st = ticket_status(&mut r, event)?;
    let remaining = status_field(&st, "remaining")?;
    match mysql_stock(&mut m, event)? {
        Some(s) if s == remaining => {}
        other => v.push(format!(
            "remaining stock differs: Redis {remaining}, MySQL {other:?}"
        )),
    }
    let conflicts = mysql_conflicts(&mut m, event)?;
    if conflicts > 0 {
        v.push(format!("{conflicts} rows in ticket_conflict"));
    }
    Ok(v)
}

/// Reads `key` from the start with `XREAD BLOCK` while the run goes on, so
/// entries the sidecar trims later are read first (decoding waits until
/// the end, to keep the gap between two reads short); after `stop`, until
/// nothing more comes. Waits at `ready` once connected (the users start
/// then).
pub fn tail_log(
    s: &Servers,
    key: &str,
    ready: &Barrier,
    stop: &AtomicBool,
) -> Result<Vec<redis::streams::StreamId>> {
    let c = s.redis();
    ready.wait();
    let mut c = c?;
    let (mut last, mut out) = ("0-0".to_string(), Vec::new());
    loop {
        let finishing = stop.load(Ordering::Relaxed);
        let mut cmd = redis::cmd("XREAD");
        cmd.arg("COUNT").arg(10_000);
        if !finishing {
            cmd.arg("BLOCK").arg(100);
        }
        let reply: Option<redis::streams::StreamReadReply> = cmd
            .arg("STREAMS")
            .arg(key)
            .arg(&last)
            .query(&mut c)
            .with_context(|| format!("XREAD {key}"))?;
        let before = out.len();
        out.extend(reply.into_iter().flat_map(|r| r.keys).flat_map(|k| k.ids));
        match out.last() {
            _ if out.len() == before && finishing => return Ok(out),
            Some(e) => last.clone_from(&e.id),
            None => {}
        }
    }
}

/// The entries of `event`'s log decoded by `protocol::record::decode_entry`, and
/// the ones that do not decode.
pub fn decode_log(event: &str, entries: &[redis::streams::StreamId]) -> (Vec<Record>, Vec<String>) {
    let (mut out, mut bad) = (Vec::new(), Vec::new());
    for e in entries {
        let raw: Result<Vec<(Vec<u8>, Vec<u8>)>, _> = e
            .map
            .iter()
            .map(|(k, v)| Ok((k.clone().into_bytes(), redis::from_redis_value_ref(v)?)))
            .collect::<Result<_, redis::ParsingError>>();
        // The reply's map lost the entry's field order, and a compact
        // record's first field is its op (`hold u3`): put it back first.
        let raw = raw.map(|mut raw| {
            raw.sort_by_key(|(k, _)| protocol::ops::find(k).is_none());
            raw
        });
        let id = protocol::StreamId::parse(&e.id);
        match raw.map(|raw| protocol::record::decode_entry(event, id, &raw)) {
            Ok(Ok(r)) => out.push(r),
            Ok(Err(m)) => bad.push(format!("log entry {}: {} ({})", e.id, m.reason, m.raw)),
            Err(err) => bad.push(format!("log entry {}: {err}", e.id)),
        }
    }
    (out, bad)
}

/// Creates the event and stock rows of a baseline event (baseline database).
pub fn baseline_init(c: &mut mysql::Conn, event: &str, total: u64) -> Result<()> {
    c.exec_drop(
        "INSERT INTO ticket_event (event_id, total, status, created_at, updated_at) VALUES (?, ?, 'open', NOW(3), NOW(3))",
        (event, total),
    )?;
    c.exec_drop(
        "INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?)",
        (event, total),
    )?;
    Ok(())
}

/// Checks a baseline event: MySQL active rows == the winners the clients saw,
/// stock == total - winners.
pub fn compare_baseline(
    servers: &Servers,
    event: &str,
    total: u64,
    winners: &HashMap<String, i64>,
) -> Result<Vec<String>> {
    let mut m = mysql_conn(&servers.baseline_db)?;
    let rows = mysql_active(&mut m, event)?;
    let mut v = crate::oracle::diff_holders("replies", winners, "MySQL", &rows);
    let expect = total as i64 - winners.len() as i64;
    match mysql_stock(&mut m, event)? {
        Some(s) if s == expect => {}
        other => v.push(format!(
            "remaining stock {other:?} in MySQL, expected {expect}"
        )),
    }
    Ok(v)
}
