//! The scenarios, one file each. Each runs ticketgate and the
//! baselines against the same servers and returns a [`ScenarioReport`]
//! (rows, ratios, targets and correctness violations). This file holds the
//! paths they share: ticketgate, Lua and MySQL-only closed loops, and the
//! correctness helpers.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use indicatif::ProgressBar;

use crate::env::{self, Servers};
use crate::load::{self, ClosedLoopResult, Request};
use crate::lua::{self, LuaKeys};
use crate::mysqlpath::{self, Writers};
use crate::oracle::{check_claims, diff_holders};
use crate::report::{col, combine_rounds, median, ratio, target, Goal, Row, ScenarioReport};
use crate::resp::{encode, RawConn, Reply};
use crate::{Sizes, Ui};

mod big_event;
mod burst;
mod checkout;
mod coupon;
mod drain;
mod draw;
mod live;
mod restore;
mod seats;
mod stall;
mod throughput;
mod waitlist;

pub use big_event::big_event;
pub use burst::burst;
pub use checkout::checkout;
pub use coupon::coupon;
pub use drain::drain;
pub use draw::draw;
pub use live::live;
pub use restore::restore;
pub use seats::seats;
pub use throughput::throughput;
pub use waitlist::waitlist;

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

/// STATUS's `unsynced` (a seated STATUS has nested fields, so not
/// `env::ticket_status`).
fn unsynced(r: &mut redis::Connection, event: &str) -> Result<i64> {
    let status: Vec<redis::Value> = redis::cmd("TICKET.STATUS").arg(event).query(r)?;
    let at = status
        .iter()
        .position(|v| *v == redis::Value::BulkString(b"unsynced".to_vec()))
        .context("STATUS has no unsynced")?;
    match status.get(at + 1) {
        Some(redis::Value::Int(n)) => Ok(*n),
        other => bail!("STATUS unsynced: {other:?}"),
    }
}

/// Starts the sidecar, waits until `event`'s log is drained, and times
/// `ticketgate-sidecar <audit> --event E` (which must exit 0).
fn audited(ctx: &Ctx, event: &str, audit: &str) -> Result<Duration> {
    let s = ctx.servers;
    let mut sidecar = s.start_sidecar(audit)?;
    let mut r = s.redis()?;
    let give_up = Instant::now() + Duration::from_secs(600);
    while unsynced(&mut r, event)? > 0 {
        if !sidecar.running() || Instant::now() > give_up {
            bail!(
                "the sidecar did not drain {event}; log:\n{}",
                sidecar.log_tail()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let t0 = Instant::now();
    let out = std::process::Command::new(&s.sidecar_bin)
        .args([audit, "--event", event])
        .env("TICKETGATE_REDIS_URL", &s.redis_url)
        .env("TICKETGATE_MYSQL_URL", &s.tg_db)
        .output()
        .with_context(|| format!("run ticketgate-sidecar {audit}"))?;
    let took = t0.elapsed();
    sidecar.stop();
    if !out.status.success() {
        bail!(
            "{audit} exit {}: {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(took)
}

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

pub fn claim_cmd(event: &str, user: &str) -> Vec<u8> {
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

/// Deletes the event, and its log (which `TICKET.DROP` keeps as a trace).
fn tg_drop(c: &mut redis::Connection, event: &str) -> Result<()> {
    let _: i64 = redis::cmd("TICKET.DROP")
        .arg(event)
        .arg("FORCE")
        .query(c)
        .with_context(|| format!("TICKET.DROP {event} FORCE"))?;
    let _: i64 = redis::cmd("UNLINK")
        .arg(protocol::keys::key(event, protocol::keys::Part::Log))
        .query(c)
        .with_context(|| format!("UNLINK the log of {event}"))?;
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

/// Waits until the sidecar has written the `init` of `event` (stock row in MySQL).
fn wait_event_in_mysql(servers: &Servers, event: &str, sidecar: &mut env::Sidecar) -> Result<()> {
    let mut m = env::mysql_conn(&servers.tg_db)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while env::mysql_stock(&mut m, event)?.is_none() {
        if !sidecar.running() {
            bail!("the sidecar exited; log:\n{}", sidecar.log_tail());
        }
        if Instant::now() > deadline {
            bail!(
                "the sidecar did not write the init of {event} within 60 s; log:\n{}",
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
pub struct Tally {
    pub winners: HashMap<String, i64>,
    pub sold_out: u64,
    pub violations: Vec<String>,
}

pub fn tally(res: &ClosedLoopResult) -> Tally {
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

/// What one Redis path of the closed loop keeps around the run: ticketgate
/// with its sidecar draining (and the module's counters before), or the Lua
/// script with its MySQL writer pool.
enum Side {
    Tg {
        event: String,
        sidecar: env::Sidecar,
        counters: HashMap<String, u64>,
    },
    Lua {
        keys: LuaKeys,
        sha: String,
        raw: RawConn,
        writers: Writers,
    },
}

impl Side {
    /// A fresh event of `total` tickets on `path` (`TG` or `LUA`).
    fn prepare(ctx: &Ctx, path: &str, scenario: &str, total: u64) -> Result<Side> {
        let s = ctx.servers;
        if path == TG {
            let event = ctx.event(scenario, "tg");
            let mut r = s.redis()?;
            tg_init(&mut r, &event, total)?;
            let mut sidecar = s.start_sidecar(&event)?;
            wait_event_in_mysql(s, &event, &mut sidecar)?;
            let counters = ticket_counters(&mut r)?;
            return Ok(Side::Tg {
                event,
                sidecar,
                counters,
            });
        }
        let event = ctx.event(scenario, "lua");
        let keys = LuaKeys::new(&event);
        let sha = lua::load(&s.redis_addr)?;
        let mut raw = RawConn::connect(&s.redis_addr)?;
        lua::fill_pool(&mut raw, &keys.pool, total, &ProgressBar::hidden())?;
        env::baseline_init(&mut env::mysql_conn(&s.baseline_db)?, &event, total)?;
        let writers = Writers::start(&s.baseline_db, &event, ctx.sizes.lua_writers)?;
        Ok(Side::Lua {
            keys,
            sha,
            raw,
            writers,
        })
    }

    fn claim(&self, user: &str) -> Vec<u8> {
        match self {
            Side::Tg { event, .. } => claim_cmd(event, user),
            Side::Lua { keys, sha, .. } => {
                let mut bytes = Vec::with_capacity(128);
                keys.encode_claim(&mut bytes, sha, user.as_bytes());
                bytes
            }
        }
    }

    /// Checks the run against Redis and MySQL and cleans up; returns when
    /// the last winner was in MySQL (if any was), and the violations.
    fn finish(
        self,
        ctx: &Ctx,
        t: &Tally,
        total: u64,
        users: u64,
    ) -> Result<(Option<Instant>, Vec<String>)> {
        let s = ctx.servers;
        let mut r = s.redis()?;
        let mut violations = check_claims(total, users, &t.winners);
        let (holders, in_mysql) = match self {
            Side::Tg {
                event,
                mut sidecar,
                counters,
            } => {
                let after = ticket_counters(&mut r)?;
                let winners = t.winners.len() as i64;
                let (wait, poll) = (Duration::from_secs(300), Duration::from_millis(2));
                let synced = env::wait_drained(s, &event, winners, wait, poll, &mut sidecar)?;
                if s.private_redis {
                    // Nobody else uses a private server: the module's INFO
                    // counters must have moved exactly as the replies say.
                    let want = [
                        ("ticket_claims", t.winners.len() as u64),
                        ("ticket_soldout_replies", t.sold_out),
                        ("ticket_repeat_claims", 0),
                    ];
                    violations.extend(check_counters(&counters, &after, &want));
                }
                let holders = env::redis_holders(&mut r, &env::holders_key(&event))?;
                violations.extend(env::compare_event(s, &event)?);
                if !sidecar.stop() {
                    violations.push("the sidecar did not stop cleanly on SIGTERM".into());
                }
                tg_drop(&mut r, &event)?;
                (holders, Some(synced))
            }
            Side::Lua {
                keys,
                mut raw,
                writers,
                ..
            } => {
                let last_write = writers.finish()?;
                let holders = env::redis_holders(&mut r, &keys.holders)?;
                violations.extend(env::compare_baseline(s, &keys.event, total, &t.winners)?);
                keys.delete(&mut raw)?;
                (holders, last_write)
            }
        };
        violations.extend(diff_holders("replies", &t.winners, "Redis", &holders));
        Ok((in_mysql, violations))
    }
}

/// One closed-loop run of a Redis path (`TG` or `LUA`): every list is one
/// connection's users, each claiming once; returns the row and the
/// violations. Used by burst and coupon.
fn run_closed(
    ctx: &Ctx,
    path: &str,
    scenario: &str,
    total: u64,
    lists: Vec<Vec<String>>,
) -> Result<(Row, Vec<String>)> {
    let users: u64 = lists.iter().map(|l| l.len() as u64).sum();
    let side = Side::prepare(ctx, path, scenario, total)?;
    let per_conn: Vec<Vec<Request>> = lists
        .into_iter()
        .map(|l| {
            let claim = |user: String| Request {
                bytes: side.claim(&user),
                user,
            };
            l.into_iter().map(claim).collect()
        })
        .collect();
    let tx = match &side {
        Side::Lua { writers, .. } => Some(writers.sender()),
        Side::Tg { .. } => None,
    };
    // The Lua path's winners go to its MySQL writers as they come.
    let on_reply = move |user: &str, reply: &Reply| {
        if let (Some(tx), Reply::Int(t)) = (&tx, reply) {
            let _ = tx.send((user.to_string(), *t));
        }
    };
    let pb = ctx.ui.bar(users, &format!("{scenario}: {path}"));
    let threads = ctx.sizes.client_threads;
    let res = load::closed_loop(&ctx.servers.redis_addr, per_conn, threads, &on_reply, &pb);
    drop(on_reply);
    pb.finish_and_clear();
    let res = res?;
    let t = tally(&res);
    let (in_mysql, v) = side.finish(ctx, &t, total, users)?;
    let mut violations = t.violations.clone();
    violations.extend(v);
    let mut row = Row::new(path).with_latency(res.latency.clone());
    outcome_metrics(&mut row, &t.winners, t.sold_out, total);
    let issued = res.end - res.start;
    let in_mysql = in_mysql.unwrap_or(res.end).max(res.end);
    set_timings(&mut row, issued, in_mysql - res.start, users);
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
    // Each claim is its own MySQL transaction: issued is in MySQL.
    set_timings(&mut row, d, d, users);
    Ok((row, violations))
}

/// The timing columns of a closed-loop row: time until all were issued,
/// until all were in MySQL, and the issue rate.
fn set_timings(row: &mut Row, issued: Duration, in_mysql: Duration, users: u64) {
    row.set("issued_s", secs(issued));
    row.set("issued_ms", ms(issued));
    row.set("mysql_s", secs(in_mysql));
    row.set("mysql_ms", ms(in_mysql));
    row.set("claims_per_s", users as f64 / secs(issued).max(1e-9));
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
