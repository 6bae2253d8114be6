//! `live`: N concurrent Server-Sent-Events subscribers (default 10,000) on
//! one event of a real `ticketgate-live` child process while a burst sells
//! the event out. Measures, per subscriber, the time from the last claim's
//! reply until it has read `"remaining":0`; the live process's memory per
//! subscriber (RSS after connecting minus before); and the `TICKET.STATUS`
//! reads per second Redis served meanwhile — with 100 and with N
//! subscribers, which must be the same. Next to it, the reference design's
//! cadence: the same server polling once a second (`--max-rate 1`).

use std::net::{Ipv4Addr, SocketAddr};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Semaphore;

use super::*;

/// The field of the SSE data this bench reads.
const REMAINING: &[u8] = br#""remaining":"#;
/// Subscribers connecting at once (each holds a permit until its first message).
const CONNECTING: usize = 256;
/// Upper bound for connecting everyone, and for everyone to see the sell-out.
const PATIENCE: Duration = Duration::from_secs(120);

/// `VmRSS` in kB from the text of `/proc/<pid>/status`.
fn vm_rss_kb(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Microseconds from `last_claim` to each time a subscriber saw the sell-out
/// (0 when it was seen no later than the claim's reply was read).
fn latencies_us(last_claim: Instant, seen: &[Instant]) -> Vec<u64> {
    seen.iter()
        .map(|t| t.saturating_duration_since(last_claim).as_micros() as u64)
        .collect()
}

/// Raises the soft open-files limit to the hard one (10,000 sockets need it);
/// the `ticketgate-live` child inherits it.
fn raise_nofile() -> Result<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid pointer to a local struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            bail!("getrlimit(RLIMIT_NOFILE) failed");
        }
        lim.rlim_cur = lim.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
            bail!("setrlimit(RLIMIT_NOFILE, {}) failed", lim.rlim_max);
        }
    }
    Ok(lim.rlim_cur)
}

/// Where a row's subscribers get the stock from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    /// `ticketgate-live --max-rate N` reading Redis.
    Live(u32),
    /// `ticketgate-ref-live`: the reference design, MySQL read once a second.
    MysqlPoll,
}

/// A server child on a kernel-chosen port (read from its log); killed on drop.
struct ServerChild {
    child: Child,
    addr: SocketAddr,
}

impl ServerChild {
    fn start(ctx: &Ctx, server: Server, event: &str) -> Result<ServerChild> {
        let s = ctx.servers;
        let log = s
            .log_dir
            .path()
            .join(format!("{server:?}-{}.log", env::unix_ms()));
        let f = std::fs::File::create(&log)?;
        let mut cmd = match server {
            Server::Live(rate) => {
                let mut c = Command::new(env::release_bin("ticketgate-live", None)?);
                c.args(["--listen", "127.0.0.1:0", "--max-rate", &rate.to_string()])
                    .env("TICKETGATE_REDIS_URL", &s.redis_url)
                    .env("RUST_LOG", "warn,ticketgate_live=info");
                c
            }
            Server::MysqlPoll => {
                let mut c = Command::new(env::release_bin("ticketgate-ref-live", None)?);
                c.args([s.baseline_db.as_str(), event]);
                c
            }
        };
        let child = cmd
            .stdin(Stdio::null())
            .stdout(f.try_clone()?)
            .stderr(f)
            .spawn()
            .with_context(|| format!("spawn {server:?}"))?;
        let mut started = ServerChild {
            child,
            addr: SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        };
        started.addr.set_port(logged_port(&log)?);
        Ok(started)
    }

    fn rss_kb(&self) -> Result<u64> {
        let path = format!("/proc/{}/status", self.child.id());
        let text = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
        vm_rss_kb(&text).ok_or_else(|| anyhow::anyhow!("no VmRSS in {path}"))
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The port in a `listening on http://127.0.0.1:PORT/` line of `log`.
fn logged_port(log: &std::path::Path) -> Result<u16> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let port = text.lines().find_map(|l| {
            let rest = l.split("listening on http://127.0.0.1:").nth(1)?;
            rest.split('/').next()?.parse::<u16>().ok()
        });
        if let Some(port) = port {
            return Ok(port);
        }
        if Instant::now() > deadline {
            bail!("{} shows no listening address:\n{text}", log.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `remaining` values of the complete SSE messages at the front of
/// `buf`, which keeps only the incomplete rest.
fn take_remaining(buf: &mut Vec<u8>) -> Vec<i64> {
    let mut out = Vec::new();
    let mut used = 0;
    while let Some(end) = buf[used..].windows(2).position(|w| w == b"\n\n") {
        let msg = &buf[used..used + end];
        if let Some(at) = msg.windows(REMAINING.len()).position(|w| w == REMAINING) {
            let digits: Vec<u8> = msg[at + REMAINING.len()..]
                .iter()
                .copied()
                .take_while(u8::is_ascii_digit)
                .collect();
            if let Ok(n) = std::str::from_utf8(&digits).unwrap_or("").parse() {
                out.push(n);
            }
        }
        used += end + 2;
    }
    buf.drain(..used);
    out
}

/// Counters shared by all subscribers of a row.
#[derive(Default)]
struct Tally {
    ready: AtomicUsize,
    sold_out: AtomicUsize,
    reopened: AtomicUsize,
}

/// One subscriber: connects from `src` (spreading the clients over
/// 127.0.0.x so ephemeral ports never run out), counts its first message,
/// and records when it sees the stock fall to 0 and come back, until the
/// server goes away. Returns the times it saw 0.
async fn subscriber(
    addr: SocketAddr,
    src: Ipv4Addr,
    request: Arc<Vec<u8>>,
    tally: Arc<Tally>,
    gate: Arc<Semaphore>,
) -> Vec<Instant> {
    let mut sold_out = Vec::new();
    let Ok(permit) = gate.acquire_owned().await else {
        return sold_out;
    };
    let Ok(sock) = tokio::net::TcpSocket::new_v4() else {
        return sold_out;
    };
    if sock.bind(SocketAddr::from((src, 0))).is_err() {
        return sold_out;
    }
    let Ok(mut s) = sock.connect(addr).await else {
        return sold_out;
    };
    if s.write_all(&request).await.is_err() {
        return sold_out;
    }
    let (mut buf, mut pending) = (vec![0u8; 2048], Vec::new());
    let (mut permit, mut last) = (Some(permit), None::<i64>);
    while let Ok(n @ 1..) = s.read(&mut buf).await {
        pending.extend_from_slice(&buf[..n]);
        for remaining in take_remaining(&mut pending) {
            if permit.take().is_some() {
                tally.ready.fetch_add(1, Ordering::Relaxed);
            }
            if remaining == 0 && last != Some(0) {
                sold_out.push(Instant::now());
                tally.sold_out.fetch_add(1, Ordering::Relaxed);
            } else if remaining != 0 && last == Some(0) {
                tally.reopened.fetch_add(1, Ordering::Relaxed);
            }
            last = Some(remaining);
        }
    }
    sold_out
}

/// What one row measured.
struct Measured {
    seen_us: Vec<u64>,
    missed: u64,
    rss_before_kb: u64,
    rss_after_kb: u64,
    reads_per_s: f64,
}

/// Claims (`reopen` false) or cancels every ticket of `event`, pipelined;
/// returns when the last reply has been read.
fn burst(c: &mut redis::Connection, event: &str, tickets: u64, reopen: bool) -> Result<Instant> {
    let op = if reopen {
        "TICKET.CANCEL"
    } else {
        "TICKET.CLAIM"
    };
    let mut done = 0;
    while done < tickets {
        let batch = (tickets - done).min(200);
        let mut p = redis::pipe();
        for k in done..done + batch {
            p.cmd(op).arg(event).arg(format!("u{k}"));
        }
        let _: Vec<redis::Value> = p.query(c).with_context(|| format!("{op} burst"))?;
        done += batch;
    }
    Ok(Instant::now())
}

/// The reference design's stock row: `tickets` conditional decrements, one
/// autocommit statement each (`reopen`: back to `tickets` in one UPDATE).
fn mysql_burst(c: &mut mysql::Conn, event: &str, tickets: u64, reopen: bool) -> Result<Instant> {
    use mysql::prelude::Queryable;
    if reopen {
        let sql = "UPDATE ticket_stock SET remaining_stock = ? WHERE event_id = ?";
        c.exec_drop(sql, (tickets, event))?;
        return Ok(Instant::now());
    }
    let sql = "UPDATE ticket_stock SET remaining_stock = remaining_stock - 1 \
               WHERE event_id = ? AND remaining_stock >= 1";
    for _ in 0..tickets {
        c.exec_drop(sql, (event,))?;
    }
    Ok(Instant::now())
}

/// The connections a row sells through and counts reads on.
struct Source {
    server: Server,
    redis: redis::Connection,
    mysql: mysql::Conn,
}

impl Source {
    fn open(ctx: &Ctx, server: Server, event: &str) -> Result<Source> {
        let mut src = Source {
            server,
            redis: ctx.servers.redis()?,
            mysql: env::mysql_conn(&ctx.servers.baseline_db)?,
        };
        match server {
            Server::Live(_) => tg_init(&mut src.redis, event, ctx.sizes.live_tickets)?,
            Server::MysqlPoll => env::baseline_init(&mut src.mysql, event, ctx.sizes.live_tickets)?,
        }
        Ok(src)
    }

    fn burst(&mut self, event: &str, tickets: u64, reopen: bool) -> Result<Instant> {
        match self.server {
            Server::Live(_) => burst(&mut self.redis, event, tickets, reopen),
            Server::MysqlPoll => mysql_burst(&mut self.mysql, event, tickets, reopen),
        }
    }

    /// Reads served so far: `TICKET.STATUS` calls, or MySQL's `Com_select`.
    fn reads(&mut self) -> Result<u64> {
        use mysql::prelude::Queryable;
        if self.server == Server::MysqlPoll {
            let row: Option<(String, u64)> = self
                .mysql
                .query_first("SHOW GLOBAL STATUS LIKE 'Com_select'")?;
            return Ok(row.map_or(0, |(_, n)| n));
        }
        let text: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.redis)?;
        Ok(crate::info::cmdstat(&text, "ticket.status").map_or(0, |(calls, _)| calls))
    }

    fn close(mut self, event: &str) -> Result<()> {
        if let Server::Live(_) = self.server {
            tg_drop(&mut self.redis, event)?;
        }
        Ok(())
    }
}

/// Waits until `counter` reaches `want`; false after [`PATIENCE`].
fn wait_count(counter: &AtomicUsize, want: usize) -> bool {
    let deadline = Instant::now() + PATIENCE;
    while counter.load(Ordering::Relaxed) < want {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Starts `n` subscribers of `event` on `live`; waits until each has its
/// first message.
fn connect_all(
    rt: &tokio::runtime::Runtime,
    live: SocketAddr,
    event: &str,
    n: usize,
    tally: &Arc<Tally>,
) -> Result<Vec<tokio::task::JoinHandle<Vec<Instant>>>> {
    let request = format!(
        "GET /events/{event}/stock HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n"
    );
    let request = Arc::new(request.into_bytes());
    let gate = Arc::new(Semaphore::new(CONNECTING));
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let src = Ipv4Addr::new(127, 0, 1, 1 + (i % 200) as u8);
            let sub = subscriber(live, src, request.clone(), tally.clone(), gate.clone());
            rt.spawn(sub)
        })
        .collect();
    if !wait_count(&tally.ready, n) {
        bail!(
            "only {} of {n} subscribers connected",
            tally.ready.load(Ordering::Relaxed)
        );
    }
    Ok(tasks)
}

/// Sells the event out `rounds` times (reopening it in between), each after
/// a pause at another phase of the poll tick; returns each last claim's time.
fn rounds(
    ctx: &Ctx,
    src: &mut Source,
    event: &str,
    n: usize,
    tally: &Tally,
) -> Result<Vec<Instant>> {
    let tickets = ctx.sizes.live_tickets;
    let mut last_claims = Vec::new();
    for k in 1..=ctx.sizes.live_rounds {
        std::thread::sleep(Duration::from_millis(300 + (env::unix_ms() * 7919) % 1000));
        last_claims.push(src.burst(event, tickets, false)?);
        if !wait_count(&tally.sold_out, n * k) {
            break;
        }
        src.burst(event, tickets, true)?;
        if !wait_count(&tally.reopened, n * k) {
            break;
        }
    }
    Ok(last_claims)
}

/// One row: a fresh server child, `n` subscribers, [`rounds`] of sell-outs.
fn run_one(ctx: &Ctx, path: &str, server: Server, n: usize) -> Result<Measured> {
    let event = ctx.event(
        "live",
        &format!("{server:?}-{n}")
            .to_lowercase()
            .replace(['(', ')'], ""),
    );
    let mut src = Source::open(ctx, server, &event)?;
    let live = ServerChild::start(ctx, server, &event)?;
    let rss_before_kb = live.rss_kb()?;
    ctx.ui.say(&format!(
        "live: {path}: {n} subscribers, {} sell-outs",
        ctx.sizes.live_rounds
    ));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let tally = Arc::new(Tally::default());
    let tasks = connect_all(&rt, live.addr, &event, n, &tally)?;
    std::thread::sleep(Duration::from_millis(500));
    let rss_after_kb = live.rss_kb()?;
    let (reads0, t0) = (src.reads()?, Instant::now());
    let last_claims = rounds(ctx, &mut src, &event, n, &tally)?;
    let reads_per_s = (src.reads()? - reads0) as f64 / t0.elapsed().as_secs_f64();
    drop(live);
    let seen: Vec<Vec<Instant>> = rt.block_on(async {
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await.unwrap_or_default());
        }
        out
    });
    src.close(&event)?;
    let mut seen_us = Vec::new();
    let mut missed = 0;
    for (k, &last) in last_claims.iter().enumerate() {
        let got: Vec<Instant> = seen.iter().filter_map(|v| v.get(k).copied()).collect();
        missed += (n - got.len()) as u64;
        seen_us.extend(latencies_us(last, &got));
    }
    Ok(Measured {
        seen_us,
        missed,
        rss_before_kb,
        rss_after_kb,
        reads_per_s,
    })
}

fn row(path: &str, n: usize, m: &Measured) -> Row {
    let mut h = crate::report::latency_histogram();
    for &us in &m.seen_us {
        let _ = h.record(us.max(1));
    }
    let per_sub = (m.rss_after_kb.saturating_sub(m.rss_before_kb)) as f64 * 1024.0 / n as f64;
    Row::new(path)
        .with_latency(crate::report::Latency::from_histogram(&h))
        .with("subscribers", n as f64)
        .with("bytes_per_sub", per_sub)
        .with("rss_mb", m.rss_after_kb as f64 / 1024.0)
        .with("reads_per_s", m.reads_per_s)
}

pub const LIVE: &str = "ticketgate-live (10/s)";
pub const POLL_1S: &str = "ticketgate-live polling 1/s";
pub const REFERENCE: &str = "reference: MySQL polled 1/s";

/// The scenario: ticketgate-live with 100 and N subscribers, then polling
/// once a second (Redis, and the reference design's MySQL) with N.
pub fn live(ctx: &Ctx) -> Result<ScenarioReport> {
    let nofile = raise_nofile()? as usize;
    // Each subscriber is one socket here and one in the server child.
    let n = (ctx.sizes.live_subscribers as usize).min(nofile.saturating_sub(300).max(1));
    let small = n.min(100);
    let mut rep = ScenarioReport::new(
        "live",
        &format!(
            "{} SSE subscribers on one event while {} tickets sell out",
            n0(n as u64),
            n0(ctx.sizes.live_tickets)
        ),
        vec![
            col("subscribers", "subscribers", 0),
            col("p50_ms", "p50 ms", 1),
            col("p99_ms", "p99 ms", 1),
            col("max_ms", "max ms", 1),
            col("bytes_per_sub", "bytes/subscriber", 0),
            col("rss_mb", "server RSS MB", 1),
            col("reads_per_s", "source reads/s", 1),
        ],
    );
    if n < ctx.sizes.live_subscribers as usize {
        rep.notes.push(format!(
            "only {n} subscribers: the open-files hard limit is {nofile} (ulimit -Hn)"
        ));
    }
    let rows = [
        (LIVE, Server::Live(10), small),
        (LIVE, Server::Live(10), n),
        (POLL_1S, Server::Live(1), n),
        (REFERENCE, Server::MysqlPoll, n),
    ];
    for (path, server, subs) in rows {
        let m = run_one(ctx, path, server, subs)?;
        if m.missed > 0 {
            rep.add_violations(
                path,
                vec![format!(
                    "{} of {subs} subscribers never saw remaining 0",
                    m.missed
                )],
            );
        }
        rep.rows.push(row(path, subs, &m));
    }
    finish(&mut rep, small, n);
    Ok(rep)
}

/// Ratios, the "load does not grow" check, and notes.
fn finish(rep: &mut ScenarioReport, small: usize, n: usize) {
    let reads: Vec<f64> = rep
        .rows
        .iter()
        .filter_map(|r| r.get("reads_per_s"))
        .collect();
    if let [few, many, ..] = reads[..] {
        if many > 2.0 * few.max(5.0) {
            rep.violations.push(format!(
                "{LIVE}: {many:.1} STATUS reads/s with {n} subscribers vs {few:.1} with {small}"
            ));
        }
        rep.add_ratio(
            &format!("STATUS reads/s {n} / {small} subscribers"),
            ratio(Some(many), Some(few)),
        );
    }
    let p99: Vec<Option<f64>> = (0..4)
        .map(|i| rep.rows.get(i).and_then(|r| r.get("p99_ms")))
        .collect();
    rep.add_ratio(
        "p99 reference (MySQL 1/s) / ticketgate-live",
        ratio(p99[3], p99[1]),
    );
    rep.add_ratio("p99 ticketgate-live 1/s / 10/s", ratio(p99[2], p99[1]));
    rep.targets
        .push(target("p99 to sold out", Goal::Below, 250.0, " ms", p99[1]));
    rep.checks.push(format!(
        "checked: every subscriber read remaining 0; STATUS reads/s with {n} subscribers within 2x of {small}"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_remaining_from_complete_messages_only() {
        let mut buf = br#"event: stock
id: 1
data: {"total":5,"remaining":10,"held":0}

: heartbeat

event: stock
data: {"remaining":0,"#
            .to_vec();
        assert_eq!(take_remaining(&mut buf), vec![10]);
        assert!(buf.starts_with(b"event: stock\ndata:"), "{buf:?}");
        buf.extend_from_slice(b"\"held\":0}\n\n");
        assert_eq!(take_remaining(&mut buf), vec![0]);
        assert!(buf.is_empty());
    }

    #[test]
    fn reads_rss() {
        assert_eq!(
            vm_rss_kb("Name:\tx\nVmRSS:\t  12345 kB\nVmSwap: 0 kB\n"),
            Some(12345)
        );
        assert_eq!(vm_rss_kb("Name: x\n"), None);
    }

    #[test]
    fn latencies_count_from_the_last_claim() {
        let t = Instant::now();
        let seen = [
            t + Duration::from_millis(3),
            t,
            t + Duration::from_micros(10),
        ];
        assert_eq!(
            latencies_us(t + Duration::from_millis(1), &seen),
            vec![2000, 0, 0]
        );
    }
}
