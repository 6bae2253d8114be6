//! The five scenarios. Each runs ticketgate and the baselines against the
//! same servers and returns a [`ScenarioReport`] (rows, ratios, targets and
//! correctness violations).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::env::{self, Servers};
use crate::load::{self, ClosedLoopResult, Request};
use crate::lua::{self, LuaKeys};
use crate::mysqlpath::{self, Writers};
use crate::report::{
    check_claims, col, combine_rounds, diff_holders, median, ratio, target, Goal, Row,
    ScenarioReport,
};
use crate::resp::{encode, RawConn, Reply};
use crate::{Sizes, Ui};

pub struct Ctx<'a> {
    pub servers: &'a Servers,
    pub sizes: &'a Sizes,
    pub ui: Ui,
    pub run_id: String,
}

impl Ctx<'_> {
    /// A unique event id for one scenario and path.
    fn event(&self, scenario: &str, path: &str) -> String {
        format!("{scenario}-{path}-{}", self.run_id)
    }
}

pub const TG: &str = "ticketgate";
pub const LUA: &str = "lua+mysql";
pub const MYSQL: &str = "mysql-only";
pub const PING: &str = "redis PING (floor)";

const CLOSED_CHECKS: &str = "checked: winners == min(tickets, users), no oversell, no duplicate or out-of-range ticket, \
     replies == Redis holders == MySQL active rows, remaining stock equal, 0 conflicts, INFO ticket counters == replies on a private server (ticketgate); \
     MySQL rows == replies and stock == total - winners (baselines)";

/// A count with thousands separators.
fn n0(v: u64) -> String {
    crate::report::fmt_num(v as f64, 0)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// `u<k>` as bytes, without allocating.
fn user_id(k: u64, buf: &mut [u8; 24]) -> &[u8] {
    use std::io::Write;
    let mut cur = std::io::Cursor::new(&mut buf[..]);
    let _ = write!(cur, "u{k}");
    let n = cur.position() as usize;
    &buf[..n]
}

fn claim_cmd(event: &str, user: &str) -> Vec<u8> {
    let mut b = Vec::with_capacity(64);
    encode(
        &mut b,
        &[b"TICKET.CLAIM", event.as_bytes(), user.as_bytes()],
    );
    b
}

fn tg_init(c: &mut redis::Connection, event: &str, total: u64) -> Result<()> {
    let () = redis::cmd("TICKET.INIT")
        .arg(event)
        .arg(total)
        .query(c)
        .with_context(|| format!("TICKET.INIT {event} {total}"))?;
    Ok(())
}

fn tg_drop(c: &mut redis::Connection, event: &str) -> Result<()> {
    let _: i64 = redis::cmd("TICKET.DROP")
        .arg(event)
        .arg("FORCE")
        .query(c)
        .with_context(|| format!("TICKET.DROP {event} FORCE"))?;
    Ok(())
}

/// The module's `INFO ticket` counters.
fn ticket_counters(c: &mut redis::Connection) -> Result<HashMap<String, u64>> {
    let text: String = redis::cmd("INFO")
        .arg("ticket")
        .query(c)
        .context("INFO ticket")?;
    Ok(crate::info::fields(&text)
        .into_iter()
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect())
}

/// Counter deltas that differ from the expected ones.
fn check_counters(
    before: &HashMap<String, u64>,
    after: &HashMap<String, u64>,
    expected: &[(&str, u64)],
) -> Vec<String> {
    expected
        .iter()
        .filter_map(|&(k, want)| {
            let got = after
                .get(k)?
                .checked_sub(before.get(k).copied().unwrap_or(0))?;
            (got != want).then(|| format!("INFO ticket {k} grew by {got}, the replies say {want}"))
        })
        .collect()
}

/// Waits until the sidecar has applied the `init` of `event` (stock row in MySQL).
fn wait_event_in_mysql(servers: &Servers, event: &str, sidecar: &mut env::Sidecar) -> Result<()> {
    let mut m = env::mysql_conn(&servers.tg_db)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while env::mysql_stock(&mut m, event)?.is_none() {
        if !sidecar.running() {
            bail!("the sidecar exited; log:\n{}", sidecar.log_tail());
        }
        if Instant::now() > deadline {
            bail!(
                "the sidecar did not apply the init of {event} within 60 s; log:\n{}",
                sidecar.log_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Users `u<first>..` split into `conns` sequential request lists.
fn user_lists(conns: u64, claims: u64) -> Vec<Vec<String>> {
    let conns = conns.clamp(1, claims.max(1));
    let mut lists: Vec<Vec<String>> = (0..conns).map(|_| Vec::new()).collect();
    for k in 0..claims {
        lists[(k % conns) as usize].push(format!("u{k}"));
    }
    lists
}

/// Winners (user -> ticket), sold-out replies and other errors of a closed loop.
struct Tally {
    winners: HashMap<String, i64>,
    sold_out: u64,
    violations: Vec<String>,
}

fn tally(res: &ClosedLoopResult) -> Tally {
    let mut t = Tally {
        winners: HashMap::new(),
        sold_out: 0,
        violations: Vec::new(),
    };
    let mut other = Vec::new();
    for o in &res.outcomes {
        match &o.reply {
            Ok(Some(n)) => {
                if let Some(prev) = t.winners.insert(o.user.clone(), *n) {
                    if prev != *n {
                        t.violations.push(format!(
                            "user {} got two different tickets: {prev} and {n}",
                            o.user
                        ));
                    }
                }
            }
            Err(e) if e.starts_with("SOLDOUT") => t.sold_out += 1,
            Ok(None) => other.push("nil reply".to_string()),
            Err(e) => other.push(e.clone()),
        }
    }
    if !other.is_empty() {
        t.violations.push(format!(
            "{} unexpected replies, e.g. {:?}",
            other.len(),
            &other[..other.len().min(3)]
        ));
    }
    t
}

fn duplicates(winners: &HashMap<String, i64>) -> usize {
    let mut v: Vec<i64> = winners.values().copied().collect();
    v.sort_unstable();
    let n = v.len();
    v.dedup();
    n - v.len()
}

/// Winners / oversell / duplicates metrics of a row.
fn outcome_metrics(row: &mut Row, winners: &HashMap<String, i64>, sold_out: u64, total: u64) {
    row.set("winners", winners.len() as f64);
    row.set("sold_out", sold_out as f64);
    row.set("oversell", (winners.len() as f64 - total as f64).max(0.0));
    row.set("duplicates", duplicates(winners) as f64);
}

/// One closed-loop run of ticketgate with the sidecar running; returns the
/// row and the violations. Used by burst and coupon.
fn run_tg_closed(
    ctx: &Ctx,
    scenario: &str,
    total: u64,
    lists: Vec<Vec<String>>,
) -> Result<(Row, Vec<String>)> {
    let s = ctx.servers;
    let event = ctx.event(scenario, "tg");
    let users: u64 = lists.iter().map(|l| l.len() as u64).sum();
    let mut r = s.redis()?;
    tg_init(&mut r, &event, total)?;
    let mut sidecar = s.start_sidecar(&event)?;
    wait_event_in_mysql(s, &event, &mut sidecar)?;
    let per_conn: Vec<Vec<Request>> = lists
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|u| Request {
                    bytes: claim_cmd(&event, &u),
                    user: u,
                })
                .collect()
        })
        .collect();
    let pb = ctx.ui.bar(users, &format!("{scenario}: ticketgate"));
    let counters_before = ticket_counters(&mut r)?;
    let res = load::closed_loop(
        &s.redis_addr,
        per_conn,
        ctx.sizes.client_threads,
        &|_, _| {},
        &pb,
    )?;
    pb.finish_and_clear();
    let counters_after = ticket_counters(&mut r)?;
    let t = tally(&res);
    let synced = env::wait_drained(
        s,
        &event,
        t.winners.len() as i64,
        Duration::from_secs(300),
        Duration::from_millis(2),
        &mut sidecar,
    )?;
    let mut violations = t.violations;
    violations.extend(check_claims(total, users, &t.winners));
    if s.private_redis {
        // Nobody else uses a private server: the module's INFO counters
        // must have moved exactly as the replies say.
        violations.extend(check_counters(
            &counters_before,
            &counters_after,
            &[
                ("ticket_claims", t.winners.len() as u64),
                ("ticket_soldout_replies", t.sold_out),
                ("ticket_repeat_claims", 0),
            ],
        ));
    }
    let holders = env::redis_holders(&mut r, &env::holders_key(&event))?;
    violations.extend(diff_holders("replies", &t.winners, "Redis", &holders));
    violations.extend(env::compare_event(s, &event)?);
    if !sidecar.stop() {
        violations.push("the sidecar did not stop cleanly on SIGTERM".into());
    }
    tg_drop(&mut r, &event)?;
    let mut row = Row::new(TG).with_latency(res.latency.clone());
    outcome_metrics(&mut row, &t.winners, t.sold_out, total);
    row.set("issued_s", secs(res.end - res.start));
    row.set("issued_ms", ms(res.end - res.start));
    row.set("mysql_s", secs(synced.max(res.end) - res.start));
    row.set("mysql_ms", ms(synced.max(res.end) - res.start));
    row.set(
        "claims_per_s",
        users as f64 / secs(res.end - res.start).max(1e-9),
    );
    Ok((row, violations))
}

/// The Lua path: EVALSHA claims, winners written to MySQL by a writer pool.
fn run_lua_closed(
    ctx: &Ctx,
    scenario: &str,
    total: u64,
    lists: Vec<Vec<String>>,
) -> Result<(Row, Vec<String>)> {
    let s = ctx.servers;
    let event = ctx.event(scenario, "lua");
    let keys = LuaKeys::new(&event);
    let users: u64 = lists.iter().map(|l| l.len() as u64).sum();
    let sha = lua::load(&s.redis_addr)?;
    let mut raw = RawConn::connect(&s.redis_addr)?;
    lua::fill_pool(
        &mut raw,
        &keys.pool,
        total,
        &indicatif::ProgressBar::hidden(),
    )?;
    env::baseline_init(&mut env::mysql_conn(&s.baseline_db)?, &event, total)?;
    let writers = Writers::start(&s.baseline_db, &event, ctx.sizes.lua_writers)?;
    let per_conn: Vec<Vec<Request>> = lists
        .into_iter()
        .map(|l| {
            l.into_iter()
                .map(|u| {
                    let mut bytes = Vec::with_capacity(128);
                    keys.encode_claim(&mut bytes, &sha, u.as_bytes());
                    Request { bytes, user: u }
                })
                .collect()
        })
        .collect();
    let tx = writers.sender();
    let on_reply = move |user: &str, reply: &Reply| {
        if let Reply::Int(t) = reply {
            let _ = tx.send((user.to_string(), *t));
        }
    };
    let pb = ctx.ui.bar(users, &format!("{scenario}: lua"));
    let res = load::closed_loop(
        &s.redis_addr,
        per_conn,
        ctx.sizes.client_threads,
        &on_reply,
        &pb,
    );
    drop(on_reply);
    pb.finish_and_clear();
    let last_write = writers.finish()?;
    let res = res?;
    let t = tally(&res);
    let mut violations = t.violations;
    violations.extend(check_claims(total, users, &t.winners));
    let mut r = s.redis()?;
    let holders = env::redis_holders(&mut r, &keys.holders)?;
    violations.extend(diff_holders("replies", &t.winners, "Redis", &holders));
    violations.extend(env::compare_baseline(s, &event, total, &t.winners)?);
    keys.delete(&mut raw)?;
    let mysql_done = last_write.unwrap_or(res.end).max(res.end);
    let mut row = Row::new(LUA).with_latency(res.latency.clone());
    outcome_metrics(&mut row, &t.winners, t.sold_out, total);
    row.set("issued_s", secs(res.end - res.start));
    row.set("issued_ms", ms(res.end - res.start));
    row.set("mysql_s", secs(mysql_done - res.start));
    row.set("mysql_ms", ms(mysql_done - res.start));
    row.set(
        "claims_per_s",
        users as f64 / secs(res.end - res.start).max(1e-9),
    );
    Ok((row, violations))
}

/// The MySQL-only path: one transaction per request.
fn run_mysql_closed(
    ctx: &Ctx,
    scenario: &str,
    total: u64,
    lists: Vec<Vec<String>>,
) -> Result<(Row, Vec<String>)> {
    let s = ctx.servers;
    let event = ctx.event(scenario, "mysql");
    let users: u64 = lists.iter().map(|l| l.len() as u64).sum();
    env::baseline_init(&mut env::mysql_conn(&s.baseline_db)?, &event, total)?;
    let pb = ctx.ui.bar(users, &format!("{scenario}: mysql-only"));
    let run = mysqlpath::run_mysql_only(&s.baseline_db, &event, total, lists, &pb)?;
    pb.finish_and_clear();
    let mut violations = Vec::new();
    if run.duplicates > 0 {
        violations.push(format!(
            "{} claims refused as duplicate users (every user claims once)",
            run.duplicates
        ));
    }
    violations.extend(check_claims(total, users, &run.winners));
    violations.extend(env::compare_baseline(s, &event, total, &run.winners)?);
    let d = run.end - run.start;
    let mut row = Row::new(MYSQL).with_latency(run.latency.clone());
    outcome_metrics(&mut row, &run.winners, run.sold_out, total);
    row.set("issued_s", secs(d));
    row.set("issued_ms", ms(d));
    row.set("mysql_s", secs(d));
    row.set("mysql_ms", ms(d));
    row.set("claims_per_s", users as f64 / secs(d).max(1e-9));
    Ok((row, violations))
}

/// The burst with PING instead of claims: what the machine allows at best.
fn ping_floor(ctx: &Ctx, users: u64) -> Result<Row> {
    let mut ping = Vec::new();
    encode(&mut ping, &[b"PING"]);
    let per_conn: Vec<Vec<Request>> = (0..users)
        .map(|k| {
            vec![Request {
                user: format!("p{k}"),
                bytes: ping.clone(),
            }]
        })
        .collect();
    let res = load::closed_loop(
        &ctx.servers.redis_addr,
        per_conn,
        ctx.sizes.client_threads,
        &|_, _| {},
        &indicatif::ProgressBar::hidden(),
    )?;
    let mut row = Row::new(PING).with_latency(res.latency.clone());
    row.set("issued_ms", ms(res.end - res.start));
    Ok(row)
}

/// 1,000 connections each claim once, at the same instant, on 100 tickets.
pub fn burst(ctx: &Ctx) -> Result<ScenarioReport> {
    let (users, tickets) = (ctx.sizes.burst_users, ctx.sizes.burst_tickets);
    ctx.ui.say(&format!(
        "burst: {users} connections claim once each, at the same instant, on {tickets} tickets"
    ));
    let mut rep = ScenarioReport::new(
        "burst",
        &format!(
            "{} connections x 1 claim at the same instant on {} tickets, {} bursts per path",
            n0(users),
            n0(tickets),
            ctx.sizes.burst_repeats
        ),
        vec![
            col("winners", "winners", 0),
            col("sold_out", "sold out", 0),
            col("oversell", "oversell", 0),
            col("duplicates", "dups", 0),
            col("p50_ms", "p50 ms", 2),
            col("p95_ms", "p95 ms", 2),
            col("p99_ms", "p99 ms", 2),
            col("max_ms", "max ms", 2),
            col("p99_ms_worst", "p99 worst", 2),
            col("issued_ms", "all replied ms", 1),
            col("mysql_ms", "MySQL == Redis ms", 1),
        ],
    );
    let one_each = |n: u64| user_lists(n, n);
    let repeats = ctx.sizes.burst_repeats;
    let mut rounds: [Vec<Row>; 4] = Default::default();
    for r in 1..=repeats {
        if repeats > 1 {
            ctx.ui.say(&format!("burst {r}/{repeats}"));
        }
        let name = format!("burst{r}");
        rounds[0].push(ping_floor(ctx, users)?);
        let (row, v) = run_tg_closed(ctx, &name, tickets, one_each(users))?;
        rounds[1].push(row);
        rep.add_violations(&format!("{TG} burst {r}"), v);
        let (row, v) = run_lua_closed(ctx, &name, tickets, one_each(users))?;
        rounds[2].push(row);
        rep.add_violations(&format!("{LUA} burst {r}"), v);
        let (row, v) = run_mysql_closed(ctx, &name, tickets, one_each(users))?;
        rounds[3].push(row);
        rep.add_violations(&format!("{MYSQL} burst {r}"), v);
    }
    for rows in &rounds {
        if let Some(row) = combine_rounds(rows) {
            rep.rows.push(row);
        }
    }
    rep.add_ratio(
        "p99 mysql-only/ticketgate",
        ratio(rep.metric(MYSQL, "p99_ms"), rep.metric(TG, "p99_ms")),
    );
    rep.add_ratio(
        "p99 lua/ticketgate",
        ratio(rep.metric(LUA, "p99_ms"), rep.metric(TG, "p99_ms")),
    );
    rep.add_ratio(
        "MySQL-match time mysql-only/ticketgate",
        ratio(rep.metric(MYSQL, "mysql_ms"), rep.metric(TG, "mysql_ms")),
    );
    rep.add_ratio(
        "p99 ticketgate/PING",
        ratio(rep.metric(TG, "p99_ms"), rep.metric(PING, "p99_ms")),
    );
    rep.checks.push(CLOSED_CHECKS.into());
    rep.targets.push(target(
        "ticketgate claim p99",
        Goal::Below,
        10.0,
        " ms",
        rep.metric(TG, "p99_ms"),
    ));
    rep.notes.push(
        "latency: ticketgate and lua = the Redis claim (send to reply); mysql-only = its whole transaction. \
         lua+mysql then writes each winner to MySQL from a writer pool; 'MySQL == Redis' is measured from the start of the burst"
            .into(),
    );
    if repeats > 1 {
        rep.notes.push(format!(
            "{repeats} bursts per path, interleaved (PING, ticketgate, lua, mysql-only, repeat); each value is the median over the bursts \
             (oversell and dups: the worst burst); 'p99 worst' is the highest p99 of any burst"
        ));
    }
    rep.notes.push(format!(
        "{PING}: the same burst sending PING instead of a claim — the floor set by this machine's loopback TCP and Redis's event loop with {users} connections"
    ));
    Ok(rep)
}

/// 30,000 claims from 300 connections on 30,000 tickets.
pub fn coupon(ctx: &Ctx) -> Result<ScenarioReport> {
    let (claims, conns) = (ctx.sizes.coupon_claims, ctx.sizes.coupon_conns);
    ctx.ui.say(&format!(
        "coupon: {claims} claims from {conns} connections on {claims} tickets"
    ));
    let mut rep = ScenarioReport::new(
        "coupon",
        &format!(
            "{} claims from {} connections on {} tickets",
            n0(claims),
            n0(conns),
            n0(claims)
        ),
        vec![
            col("winners", "winners", 0),
            col("oversell", "oversell", 0),
            col("duplicates", "dups", 0),
            col("issued_s", "all issued s", 3),
            col("mysql_s", "all in MySQL s", 3),
            col("claims_per_s", "claims/s", 0),
            col("p99_ms", "p99 ms", 2),
        ],
    );
    let (row, v) = run_tg_closed(ctx, "coupon", claims, user_lists(conns, claims))?;
    rep.rows.push(row);
    rep.add_violations(TG, v);
    let (row, v) = run_lua_closed(ctx, "coupon", claims, user_lists(conns, claims))?;
    rep.rows.push(row);
    rep.add_violations(LUA, v);
    let (row, v) = run_mysql_closed(ctx, "coupon", claims, user_lists(conns, claims))?;
    rep.rows.push(row);
    rep.add_violations(MYSQL, v);
    rep.add_ratio(
        "all-in-MySQL time lua/ticketgate",
        ratio(rep.metric(LUA, "mysql_s"), rep.metric(TG, "mysql_s")),
    );
    rep.add_ratio(
        "all-in-MySQL time mysql-only/ticketgate",
        ratio(rep.metric(MYSQL, "mysql_s"), rep.metric(TG, "mysql_s")),
    );
    rep.checks.push(CLOSED_CHECKS.into());
    rep.targets.push(target(
        "ticketgate all issued",
        Goal::Below,
        1.0,
        " s",
        rep.metric(TG, "issued_s"),
    ));
    rep.targets.push(target(
        "ticketgate all in MySQL",
        Goal::Below,
        2.0,
        " s",
        rep.metric(TG, "mysql_s"),
    ));
    rep.notes.push(format!(
        "each connection sends its claims one after another (no pipelining); lua+mysql writes winners with {} writer threads",
        ctx.sizes.lua_writers
    ));
    Ok(rep)
}

/// Correctness of a pipelined run where every claim must win a distinct
/// ticket in `1..=total`.
fn check_pipelined(res: &load::PipelinedResult, total: u64) -> Vec<String> {
    let mut v = Vec::new();
    if res.error_count > 0 {
        v.push(format!(
            "{} error replies, e.g. {:?}",
            res.error_count, res.errors
        ));
    }
    if res.nils > 0 {
        v.push(format!("{} nil replies", res.nils));
    }
    let winners: HashMap<String, i64> = res
        .tickets
        .iter()
        .enumerate()
        .map(|(i, t)| (i.to_string(), *t))
        .collect();
    v.extend(check_claims(total, total, &winners));
    v
}

/// What Redis itself spent during a run: µs per call of the measured
/// command (from `INFO commandstats` deltas) and the main thread's busy
/// fraction (CPU seconds / wall seconds).
#[derive(Clone, Copy, Debug, Default)]
struct ServerStats {
    usec_per_call: Option<f64>,
    busy: Option<f64>,
}

fn info_all(c: &mut redis::Connection) -> Result<String> {
    redis::cmd("INFO")
        .arg("everything")
        .query(c)
        .context("INFO everything")
}

/// Runs `f` and returns its result with the server's stats for `command`.
fn with_server_stats<T>(
    c: &mut redis::Connection,
    command: &str,
    f: impl FnOnce() -> Result<T>,
) -> Result<(T, ServerStats)> {
    let before = info_all(c)?;
    let t0 = Instant::now();
    let out = f()?;
    let wall = t0.elapsed().as_secs_f64();
    let after = info_all(c)?;
    let usec_per_call = match (
        crate::info::cmdstat(&before, command).unwrap_or((0, 0)),
        crate::info::cmdstat(&after, command),
    ) {
        ((c0, u0), Some((c1, u1))) if c1 > c0 => Some((u1 - u0) as f64 / (c1 - c0) as f64),
        _ => None,
    };
    let busy = match (
        crate::info::main_thread_cpu(&before),
        crate::info::main_thread_cpu(&after),
    ) {
        (Some(a), Some(b)) if wall > 0.0 => Some((b - a) / wall),
        _ => None,
    };
    Ok((
        out,
        ServerStats {
            usec_per_call,
            busy,
        },
    ))
}

/// Pipelined claims/s: module vs Lua vs raw ZPOPMIN, interleaved rounds.
pub fn throughput(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let n = z.throughput_claims;
    ctx.ui.say(&format!(
        "throughput: {n} pipelined claims per path and round, {} connections x pipeline {}, {} client threads, {} rounds",
        z.throughput_conns, z.pipeline, z.client_threads, z.rounds
    ));
    let s = ctx.servers;
    let sha = lua::load(&s.redis_addr)?;
    let mut r = s.redis()?;
    let mut raw = RawConn::connect(&s.redis_addr)?;
    let mut rates: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut usecs: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut busy: HashMap<&str, Vec<f64>> = HashMap::new();
    let mut stats_conn = s.redis()?;
    let mut record = |path: &'static str, rate: f64, st: ServerStats| {
        rates.entry(path).or_default().push(rate);
        if let Some(u) = st.usec_per_call {
            usecs.entry(path).or_default().push(u);
        }
        if let Some(b) = st.busy {
            busy.entry(path).or_default().push(b * 100.0);
        }
    };
    let mut violations: Vec<(String, Vec<String>)> = Vec::new();
    let total_work = n * 3 * z.rounds as u64;
    let pb = ctx.ui.bar(total_work, "throughput");
    for round in 0..z.rounds {
        // module
        let event = ctx.event("tp", &format!("tg{round}"));
        tg_init(&mut r, &event, n)?;
        let (res, st) = with_server_stats(&mut stats_conn, "ticket.claim", || {
            load::pipelined(
                &s.redis_addr,
                z.throughput_conns,
                z.client_threads,
                z.pipeline,
                n,
                &|buf, k| {
                    let mut ub = [0u8; 24];
                    encode(
                        buf,
                        &[b"TICKET.CLAIM", event.as_bytes(), user_id(k, &mut ub)],
                    );
                },
                &pb,
            )
        })?;
        record(TG, res.per_sec(), st);
        violations.push((
            format!("{TG} round {}", round + 1),
            check_pipelined(&res, n),
        ));
        tg_drop(&mut r, &event)?;

        // Lua
        let event = ctx.event("tp", &format!("lua{round}"));
        let keys = LuaKeys::new(&event);
        lua::fill_pool(&mut raw, &keys.pool, n, &indicatif::ProgressBar::hidden())?;
        let (res, st) = with_server_stats(&mut stats_conn, "evalsha", || {
            load::pipelined(
                &s.redis_addr,
                z.throughput_conns,
                z.client_threads,
                z.pipeline,
                n,
                &|buf, k| {
                    let mut ub = [0u8; 24];
                    keys.encode_claim(buf, &sha, user_id(k, &mut ub));
                },
                &pb,
            )
        })?;
        record("lua", res.per_sec(), st);
        violations.push((format!("lua round {}", round + 1), check_pipelined(&res, n)));
        keys.delete(&mut raw)?;

        // raw ZPOPMIN
        let key = format!("tgbench:{{{}}}:zpop", ctx.event("tp", &format!("z{round}")));
        lua::fill_pool(&mut raw, &key, n, &indicatif::ProgressBar::hidden())?;
        let (res, st) = with_server_stats(&mut stats_conn, "zpopmin", || {
            load::pipelined(
                &s.redis_addr,
                z.throughput_conns,
                z.client_threads,
                z.pipeline,
                n,
                &|buf, _| encode(buf, &[b"ZPOPMIN", key.as_bytes()]),
                &pb,
            )
        })?;
        record("zpopmin", res.per_sec(), st);
        violations.push((
            format!("zpopmin round {}", round + 1),
            check_pipelined(&res, n),
        ));
        let _: i64 = redis::cmd("UNLINK").arg(&key).query(&mut r)?;
    }
    pb.finish_and_clear();
    let mut rep = ScenarioReport::new(
        "throughput",
        &format!(
            "pipelined claims/s, {} connections x pipeline {}, {} claims per path and round, median of {} interleaved rounds",
            z.throughput_conns,
            z.pipeline,
            n0(n),
            z.rounds
        ),
        vec![
            col("claims_per_s", "claims/s (median)", 0),
            col("min", "min", 0),
            col("max", "max", 0),
            col("usec_per_call", "server us/call", 2),
            col("busy_pct", "server busy %", 0),
        ],
    );
    for (path, label) in [
        (TG, "ticketgate (TICKET.CLAIM)"),
        ("lua", "lua (EVALSHA)"),
        ("zpopmin", "raw ZPOPMIN"),
    ] {
        let v = rates.get(path).cloned().unwrap_or_default();
        let mut row = Row::new(label);
        if let Some(m) = median(&v) {
            row.set("claims_per_s", m);
        }
        if let Some(m) = v.iter().copied().reduce(f64::min) {
            row.set("min", m);
        }
        if let Some(m) = v.iter().copied().reduce(f64::max) {
            row.set("max", m);
        }
        for (i, x) in v.iter().enumerate() {
            row.set(&format!("round{}", i + 1), *x);
        }
        if let Some(u) = usecs.get(path).and_then(|v| median(v)) {
            row.set("usec_per_call", u);
        }
        if let Some(b) = busy.get(path).and_then(|v| median(v)) {
            row.set("busy_pct", b);
        }
        rep.rows.push(row);
    }
    for (what, v) in violations {
        rep.add_violations(&what, v);
    }
    rep.checks.push(
        "checked: every claim of every path and round won a distinct ticket in 1..=N, no error replies"
            .into(),
    );
    let m = rep.rows[0].get("claims_per_s");
    let module_lua = ratio(m, rep.rows[1].get("claims_per_s"));
    let module_zpop = ratio(m, rep.rows[2].get("claims_per_s"));
    rep.add_ratio("module/lua", module_lua);
    rep.add_ratio("module/zpopmin", module_zpop);
    if z.rounds > 1 {
        let per_round = |other: &str| {
            let a = rates.get(TG).cloned().unwrap_or_default();
            let b = rates.get(other).cloned().unwrap_or_default();
            let r: Vec<f64> = a
                .iter()
                .zip(&b)
                .filter_map(|(x, y)| ratio(Some(*x), Some(*y)))
                .collect();
            median(&r)
        };
        rep.add_ratio("module/lua (median of per-round ratios)", per_round("lua"));
        rep.add_ratio(
            "module/zpopmin (median of per-round ratios)",
            per_round("zpopmin"),
        );
    }
    rep.add_ratio(
        "server time per call lua/module",
        ratio(
            rep.rows[1].get("usec_per_call"),
            rep.rows[0].get("usec_per_call"),
        ),
    );
    rep.add_ratio(
        "server time per call zpopmin/module",
        ratio(
            rep.rows[2].get("usec_per_call"),
            rep.rows[0].get("usec_per_call"),
        ),
    );
    rep.notes.push(
        "server us/call = INFO commandstats usec delta / calls (time inside the command, without networking); \
         server busy % = Redis main-thread CPU time / wall time of the round (near 100% = the server is the bottleneck)"
            .into(),
    );
    rep.targets
        .push(target("module/lua", Goal::AtLeast, 2.0, "x", module_lua));
    rep.targets.push(target(
        "module/zpopmin",
        Goal::AtLeast,
        0.5,
        "x",
        module_zpop,
    ));
    Ok(rep)
}

/// Winners/s the sidecar writes into MySQL vs the MySQL-only path's claims/s.
pub fn drain(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let s = ctx.servers;
    let n = z.drain_claims;
    ctx.ui.say(&format!(
        "drain: {n} winners claimed with the sidecar stopped, then drained; MySQL-only: {} claims from {} connections",
        z.mysql_claims, z.mysql_conns
    ));
    let mut rep = ScenarioReport::new(
        "drain",
        &format!(
            "sidecar draining {} winners into MySQL vs MySQL-only path ({} claims, {} connections)",
            n0(n),
            n0(z.mysql_claims),
            z.mysql_conns
        ),
        vec![
            col("rows", "rows", 0),
            col("seconds", "seconds", 3),
            col("rows_per_s", "rows/s into MySQL", 0),
        ],
    );
    let event = ctx.event("drain", "tg");
    let mut r = s.redis()?;
    tg_init(&mut r, &event, n)?;
    let pb = ctx.ui.bar(n, "drain: claiming");
    let res = load::pipelined(
        &s.redis_addr,
        z.throughput_conns.min(16),
        z.client_threads,
        64,
        n,
        &|buf, k| {
            let mut ub = [0u8; 24];
            encode(
                buf,
                &[b"TICKET.CLAIM", event.as_bytes(), user_id(k, &mut ub)],
            );
        },
        &pb,
    )?;
    pb.finish_and_clear();
    rep.add_violations(TG, check_pipelined(&res, n));
    ctx.ui.say(&format!(
        "drain: {n} winners in Redis, starting the sidecar"
    ));
    let t0 = Instant::now();
    let mut sidecar = s.start_sidecar("drain")?;
    let done = env::wait_drained(
        s,
        &event,
        n as i64,
        Duration::from_secs(900),
        Duration::from_millis(20),
        &mut sidecar,
    )?;
    let d = done - t0;
    rep.add_violations(TG, env::compare_event(s, &event)?);
    if !sidecar.stop() {
        rep.add_violations(
            TG,
            vec!["the sidecar did not stop cleanly on SIGTERM".into()],
        );
    }
    tg_drop(&mut r, &event)?;
    rep.rows.push(
        Row::new("ticketgate sidecar")
            .with("rows", n as f64)
            .with("seconds", secs(d))
            .with("rows_per_s", n as f64 / secs(d).max(1e-9)),
    );

    let event = ctx.event("drain", "mysql");
    env::baseline_init(
        &mut env::mysql_conn(&s.baseline_db)?,
        &event,
        z.mysql_claims,
    )?;
    let pb = ctx.ui.bar(z.mysql_claims, "drain: mysql-only");
    let run = mysqlpath::run_mysql_only(
        &s.baseline_db,
        &event,
        z.mysql_claims,
        user_lists(z.mysql_conns, z.mysql_claims),
        &pb,
    )?;
    pb.finish_and_clear();
    rep.add_violations(
        MYSQL,
        check_claims(z.mysql_claims, z.mysql_claims, &run.winners),
    );
    rep.add_violations(
        MYSQL,
        env::compare_baseline(s, &event, z.mysql_claims, &run.winners)?,
    );
    let d = run.end - run.start;
    rep.rows.push(
        Row::new(MYSQL)
            .with("rows", run.winners.len() as f64)
            .with("seconds", secs(d))
            .with("rows_per_s", run.winners.len() as f64 / secs(d).max(1e-9)),
    );
    let x = ratio(rep.rows[0].get("rows_per_s"), rep.rows[1].get("rows_per_s"));
    rep.add_ratio("sidecar/mysql-only", x);
    rep.targets
        .push(target("sidecar/mysql-only", Goal::AtLeast, 10.0, "x", x));
    rep.checks.push(
        "checked: after the drain MySQL active rows == Redis holders, stock equal, 0 conflicts; MySQL-only rows == its winners, distinct tickets"
            .into(),
    );
    rep.notes.push(
        "sidecar time runs from spawning the process until MySQL holds every row and the log is drained (includes its startup)".into(),
    );
    Ok(rep)
}

fn memory_usage(c: &mut redis::Connection, key: &str) -> Result<i64> {
    let v: Option<i64> = redis::cmd("MEMORY")
        .arg("USAGE")
        .arg(key)
        .arg("SAMPLES")
        .arg(0)
        .query(c)
        .with_context(|| format!("MEMORY USAGE {key}"))?;
    Ok(v.unwrap_or(0))
}

/// TICKET.INIT of 10,000,000 tickets vs a materialised ZSet of the same pool.
pub fn big_event(ctx: &Ctx) -> Result<ScenarioReport> {
    let s = ctx.servers;
    let n = ctx.sizes.big_tickets;
    ctx.ui.say(&format!(
        "big-event: TICKET.INIT of {n} tickets vs ZADD of {n} members"
    ));
    let mut rep = ScenarioReport::new(
        "big-event",
        &format!(
            "an event of {} tickets: lazy pool vs materialised ZSet",
            n0(n)
        ),
        vec![
            col("init_ms", "init ms", 3),
            col("bytes", "bytes (after 1st claim)", 0),
            col("bytes_per_ticket", "bytes/ticket", 4),
        ],
    );
    let mut r = s.redis()?;
    let event = ctx.event("big", "tg");
    let t0 = Instant::now();
    tg_init(&mut r, &event, n)?;
    let init = t0.elapsed();
    let first: i64 = redis::cmd("TICKET.CLAIM")
        .arg(&event)
        .arg("first-user")
        .query(&mut r)
        .context("first claim of the big event")?;
    if first != 1 {
        rep.add_violations(
            TG,
            vec![format!("first claim got ticket {first}, expected 1")],
        );
    }
    let mut bytes = 0;
    for k in ["meta", "pool", "holders", "log"] {
        bytes += memory_usage(&mut r, &format!("ticket:{{{event}}}:{k}"))?;
    }
    let st = env::ticket_status(&mut r, &event)?;
    let remaining = env::status_field(&st, "remaining")?;
    if remaining != n as i64 - 1 {
        rep.add_violations(
            TG,
            vec![format!(
                "remaining {remaining} after one claim, expected {}",
                n - 1
            )],
        );
    }
    tg_drop(&mut r, &event)?;
    rep.rows.push(
        Row::new("ticketgate (lazy pool)")
            .with("init_ms", ms(init))
            .with("bytes", bytes as f64)
            .with("bytes_per_ticket", bytes as f64 / n as f64),
    );

    let key = format!("tgbench:{{{}}}:bigpool", ctx.event("big", "zset"));
    let mut raw = RawConn::connect(&s.redis_addr)?;
    let pb = ctx.ui.bar(n, "big-event: ZADD");
    let t0 = Instant::now();
    lua::fill_pool(&mut raw, &key, n, &pb)?;
    let build = t0.elapsed();
    pb.finish_and_clear();
    let popped: Vec<String> = redis::cmd("ZPOPMIN").arg(&key).query(&mut r)?;
    if popped.first().map(String::as_str) != Some("1") {
        rep.add_violations(
            "zset",
            vec![format!("ZPOPMIN returned {popped:?}, expected 1")],
        );
    }
    let zbytes = memory_usage(&mut r, &key)?;
    let card: i64 = redis::cmd("ZCARD").arg(&key).query(&mut r)?;
    if card != n as i64 - 1 {
        rep.add_violations("zset", vec![format!("ZCARD {card}, expected {}", n - 1)]);
    }
    let _: i64 = redis::cmd("UNLINK").arg(&key).query(&mut r)?;
    rep.rows.push(
        Row::new("materialised ZSet")
            .with("init_ms", ms(build))
            .with("bytes", zbytes as f64)
            .with("bytes_per_ticket", zbytes as f64 / n as f64),
    );
    rep.add_ratio(
        "memory zset/ticketgate",
        ratio(Some(zbytes as f64), Some(bytes as f64)),
    );
    rep.targets
        .push(target("init time", Goal::Below, 1.0, " ms", Some(ms(init))));
    rep.targets.push(target(
        "event memory",
        Goal::Below,
        100.0,
        " KB",
        Some(bytes as f64 / 1024.0),
    ));
    rep.checks.push(
        "checked: first claim got ticket 1, remaining == N - 1; the ZSet pops 1 and keeps N - 1"
            .into(),
    );
    rep.notes.push(
        "init ms = client round trip of TICKET.INIT (ZSet: all ZADD batches); bytes = MEMORY USAGE ... SAMPLES 0 summed over the event's keys".into(),
    );
    Ok(rep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_lists_split_round_robin() {
        let l = user_lists(3, 7);
        assert_eq!(l.len(), 3);
        assert_eq!(l[0], vec!["u0", "u3", "u6"]);
        assert_eq!(l[2], vec!["u2", "u5"]);
        assert_eq!(user_lists(10, 2).len(), 2);
    }

    #[test]
    fn user_id_formats_without_allocating() {
        let mut b = [0u8; 24];
        assert_eq!(user_id(12345, &mut b), b"u12345");
        assert_eq!(user_id(u64::MAX, &mut b), b"u18446744073709551615");
    }

    #[test]
    fn counter_deltas_are_checked() {
        let m = |v: &[(&str, u64)]| -> HashMap<String, u64> {
            v.iter().map(|(k, n)| (k.to_string(), *n)).collect()
        };
        let before = m(&[("ticket_claims", 10), ("ticket_soldout_replies", 5)]);
        let after = m(&[("ticket_claims", 110), ("ticket_soldout_replies", 905)]);
        assert!(check_counters(
            &before,
            &after,
            &[
                ("ticket_claims", 100),
                ("ticket_soldout_replies", 900),
                ("absent", 1)
            ]
        )
        .is_empty());
        let v = check_counters(&before, &after, &[("ticket_claims", 99)]);
        assert_eq!(
            v,
            ["INFO ticket ticket_claims grew by 100, the replies say 99"]
        );
    }

    #[test]
    fn duplicates_counts_repeated_tickets() {
        let w: HashMap<String, i64> = [("a", 1), ("b", 1), ("c", 2), ("d", 1)]
            .iter()
            .map(|(u, t)| (u.to_string(), *t))
            .collect();
        assert_eq!(duplicates(&w), 2);
    }

    #[test]
    fn pipelined_check_finds_errors_nils_and_duplicates() {
        let ok = load::PipelinedResult {
            elapsed: Duration::from_secs(1),
            tickets: vec![3, 1, 2],
            nils: 0,
            error_count: 0,
            errors: vec![],
        };
        assert!(check_pipelined(&ok, 3).is_empty());
        assert_eq!(ok.per_sec(), 3.0);
        let bad = load::PipelinedResult {
            tickets: vec![1, 1],
            nils: 1,
            error_count: 2,
            errors: vec!["SOLDOUT".into()],
            ..ok
        };
        let v = check_pipelined(&bad, 3);
        assert!(v.iter().any(|s| s.starts_with("2 error replies")), "{v:?}");
        assert!(v.iter().any(|s| s == "1 nil replies"), "{v:?}");
        assert!(v.iter().any(|s| s.starts_with("DUPLICATE")), "{v:?}");
        assert!(
            v.iter().any(|s| s.starts_with("wrong winner count")),
            "{v:?}"
        );
    }

    #[test]
    fn outcome_metrics_count_oversell() {
        let w: HashMap<String, i64> = (1..=5).map(|t| (format!("u{t}"), t)).collect();
        let mut row = Row::new("x");
        outcome_metrics(&mut row, &w, 7, 3);
        assert_eq!(row.get("winners"), Some(5.0));
        assert_eq!(row.get("oversell"), Some(2.0));
        assert_eq!(row.get("sold_out"), Some(7.0));
        assert_eq!(row.get("duplicates"), Some(0.0));
    }

    #[test]
    fn tally_separates_winners_soldout_and_errors() {
        let now = Instant::now();
        let o = |u: &str, r: Result<Option<i64>, String>| load::Outcome {
            user: u.into(),
            reply: r,
        };
        let res = ClosedLoopResult {
            outcomes: vec![
                o("a", Ok(Some(1))),
                o("b", Err("SOLDOUT event 'e' is sold out".into())),
                o("c", Err("ERR boom".into())),
                o("d", Ok(None)),
            ],
            latency: None,
            start: now,
            end: now,
        };
        let t = tally(&res);
        assert_eq!(t.winners.len(), 1);
        assert_eq!(t.sold_out, 1);
        assert_eq!(t.violations.len(), 1);
        assert!(t.violations[0].starts_with("2 unexpected replies"));
    }
}
