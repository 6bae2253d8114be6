//! `checkout`: a burst at scale with holds. Every user claims with `HOLD`;
//! a share never confirms, the rest confirm after a think time; abandoned
//! holds expire and go to the users still retrying, until sold out.
//! ticketgate (the module's expiry, the sidecar draining) runs side by side
//! with the Lua path (hold and confirm scripts, plus a sweep script the
//! client runs every 100 ms). How late holds were released comes from the
//! `op=expire` entries of each path's log, decoded by `protocol::record`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

use protocol::record::{Op, Record};

use super::*;
use crate::load::{Action, Actor};
use crate::oracle::LogCheck;
use crate::report::quantile;

/// The Lua path's client sweep: the module's default `ticket.sweep-interval`
/// and `ticket.sweep-max`.
const LUA_SWEEP_EVERY: Duration = Duration::from_millis(100);
const LUA_SWEEP_MAX: u64 = 1000;
/// How long the bench waits for MySQL to match Redis after the last change.
const LAG_BOUND: Duration = Duration::from_secs(30);

/// How one path encodes a claim with a hold, and a confirm.
enum Cmds {
    Module {
        event: String,
        hold: String,
    },
    Lua {
        keys: LuaKeys,
        hold_sha: String,
        confirm_sha: String,
        hold: String,
    },
}

impl Cmds {
    fn claim(&self, user: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(128);
        match self {
            Cmds::Module { event, hold } => encode(
                &mut b,
                &[
                    b"TICKET.CLAIM",
                    event.as_bytes(),
                    user,
                    b"HOLD",
                    hold.as_bytes(),
                ],
            ),
            Cmds::Lua {
                keys,
                hold_sha,
                hold,
                ..
            } => keys.encode_checkout(
                &mut b,
                hold_sha,
                &[user, keys.event.as_bytes(), hold.as_bytes()],
            ),
        }
        b
    }

    fn confirm(&self, user: &[u8]) -> Vec<u8> {
        let mut b = Vec::with_capacity(128);
        match self {
            Cmds::Module { event, .. } => {
                encode(&mut b, &[b"TICKET.CONFIRM", event.as_bytes(), user])
            }
            Cmds::Lua {
                keys, confirm_sha, ..
            } => keys.encode_checkout(&mut b, confirm_sha, &[user, keys.event.as_bytes()]),
        }
        b
    }
}

/// What the users of a run do (from the CLI sizes).
#[derive(Clone, Copy)]
struct Plan {
    total: u64,
    think_ms: u64,
    retry_ms: u64,
    abandon_pct: u64,
}

/// Where a user is.
#[derive(Clone, Copy)]
enum Step {
    Claiming,
    Confirming(i64),
    Gone,
}

/// What the users of one client thread saw.
#[derive(Default)]
struct Tally {
    claims: u64,
    holds: u64,
    confirms: u64,
    late_confirms: u64,
    /// Unix ms of the last confirm reply.
    last_confirm_ms: u64,
    sold: HashMap<String, i64>,
    errors: Vec<String>,
}

/// The users of one client thread: users `k` with `k % threads == j`.
struct Users<'a> {
    cmds: &'a Cmds,
    plan: Plan,
    confirmed: &'a AtomicU64,
    stop: &'a AtomicBool,
    ids: Vec<String>,
    steps: Vec<Step>,
    rng: u64,
    t: Tally,
}

/// SplitMix64: the bench's deterministic randomness.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Whether user `k` never confirms (`pct` percent of the users do not).
fn abandons(k: u64, pct: u64) -> bool {
    mix(k) % 100 < pct
}

impl Users<'_> {
    /// `mean` ms ± 50%, from now.
    fn after(&mut self, now: Instant, mean: u64) -> Instant {
        self.rng = mix(self.rng);
        now + Duration::from_millis(mean / 2 + self.rng % (mean + 1))
    }

    /// User `i`'s claim, or confirm (urgent), at `at`.
    fn action(&self, i: usize, at: Instant, confirm: bool) -> Action {
        let user = self.ids[i].as_bytes();
        let bytes = match confirm {
            true => self.cmds.confirm(user),
            false => self.cmds.claim(user),
        };
        let (urgent, user) = (confirm, i);
        Action {
            at,
            urgent,
            user,
            bytes,
        }
    }

    fn claim(&mut self, i: usize, now: Instant) -> Option<Action> {
        self.steps[i] = Step::Claiming;
        let at = self.after(now, self.plan.retry_ms);
        Some(self.action(i, at, false))
    }

    fn error(&mut self, i: usize, reply: Reply) -> Option<Action> {
        self.steps[i] = Step::Gone;
        if self.t.errors.len() < 5 {
            self.t.errors.push(format!("{}: {reply:?}", self.ids[i]));
        }
        None
    }
}

impl Actor for Users<'_> {
    fn start(&mut self, now: Instant) -> Vec<Action> {
        (0..self.ids.len())
            .map(|i| self.action(i, now, false))
            .collect()
    }

    fn on_reply(&mut self, i: usize, reply: Reply, _: Instant, now: Instant) -> Option<Action> {
        match (self.steps[i], reply) {
            (Step::Claiming, Reply::Int(n)) => {
                self.t.claims += 1;
                self.t.holds += 1;
                let k: u64 = self.ids[i][1..].parse().unwrap_or(0);
                if abandons(k, self.plan.abandon_pct) {
                    self.steps[i] = Step::Gone;
                    return None;
                }
                self.steps[i] = Step::Confirming(n);
                let at = self.after(now, self.plan.think_ms);
                Some(self.action(i, at, true))
            }
            (Step::Claiming, Reply::Error(e)) if e.starts_with("SOLDOUT") => {
                self.t.claims += 1;
                self.claim(i, now)
            }
            (Step::Confirming(n), Reply::Int(_)) => {
                self.t.confirms += 1;
                self.t.last_confirm_ms = env::unix_ms();
                self.t.sold.insert(self.ids[i].clone(), n);
                self.steps[i] = Step::Gone;
                if self.confirmed.fetch_add(1, Ordering::Relaxed) + 1 >= self.plan.total {
                    self.stop.store(true, Ordering::Relaxed);
                }
                None
            }
            (Step::Confirming(_), Reply::Error(e)) if e.starts_with("NOHOLD") => {
                self.t.late_confirms += 1;
                self.claim(i, now)
            }
            (_, other) => self.error(i, other),
        }
    }
}

/// The Lua user's expiry: the sweep script every [`LUA_SWEEP_EVERY`] (again
/// at once while it finds a full batch), until `stop`.
fn lua_sweep(s: &Servers, keys: &LuaKeys, sha: &str, stop: &AtomicBool) -> Result<()> {
    let mut c = s.redis()?;
    while !stop.load(Ordering::Relaxed) {
        let n: u64 = redis::cmd("EVALSHA")
            .arg(sha)
            .arg(4)
            .arg(&keys.holders)
            .arg(&keys.pool)
            .arg(&keys.holds)
            .arg(&keys.log)
            .arg(&keys.event)
            .arg(LUA_SWEEP_MAX)
            .query(&mut c)
            .context("EVALSHA sweep")?;
        if n < LUA_SWEEP_MAX {
            std::thread::sleep(LUA_SWEEP_EVERY);
        }
    }
    Ok(())
}

/// The Lua path's sweep, run beside the users until its flag is set.
type Sweep<'a> = &'a (dyn Fn(&AtomicBool) -> Result<()> + Sync);

/// One path's run: what the users saw, how long until sold out (or the
/// deadline), and the log.
struct PathRun {
    t: Tally,
    elapsed: Duration,
    log: Vec<Record>,
    log_errors: Vec<String>,
}

/// Runs the users of `cmds` until sold out or the deadline, tailing `log`
/// (and running `sweep` beside them, for the Lua path).
fn run_users(
    ctx: &Ctx,
    cmds: &Cmds,
    plan: Plan,
    (log, event): (&str, &str),
    sweep: Option<Sweep>,
) -> Result<PathRun> {
    let z = ctx.sizes;
    let (confirmed, stop, tail_stop) = (
        AtomicU64::new(0),
        AtomicBool::new(false),
        AtomicBool::new(false),
    );
    let threads = z.client_threads.max(1);
    let actors = users_of(cmds, plan, (&confirmed, &stop), threads, z.checkout_users);
    let deadline = Instant::now() + Duration::from_secs(z.checkout_deadline_s);
    let conns = (z.checkout_conns as usize / threads).max(1);
    let ready = Barrier::new(2);
    std::thread::scope(|sc| {
        let tail = sc.spawn(|| env::tail_log(ctx.servers, log, &ready, &tail_stop));
        let sweeper = sweep.map(|f| sc.spawn(|| f(&stop)));
        ready.wait();
        let t0 = Instant::now();
        let users = load::scheduled(&ctx.servers.redis_addr, actors, conns, &stop, deadline);
        let elapsed = t0.elapsed();
        stop.store(true, Ordering::Relaxed);
        let swept = sweeper.map(|h| h.join().unwrap_or_else(|_| bail!("sweep thread panicked")));
        tail_stop.store(true, Ordering::Relaxed);
        let entries = tail
            .join()
            .unwrap_or_else(|_| bail!("log thread panicked"))?;
        let (log, log_errors) = env::decode_log(event, &entries);
        swept.transpose()?;
        let mut t = Tally::default();
        for u in users? {
            merge(&mut t, u.t);
        }
        Ok(PathRun {
            t,
            elapsed,
            log,
            log_errors,
        })
    })
}

/// The users `u0..u<users>` split over `threads` actors.
fn users_of<'a>(
    cmds: &'a Cmds,
    plan: Plan,
    (confirmed, stop): (&'a AtomicU64, &'a AtomicBool),
    threads: usize,
    users: u64,
) -> Vec<Users<'a>> {
    (0..threads)
        .map(|j| {
            let ids: Vec<String> = (j as u64..users)
                .step_by(threads)
                .map(|k| format!("u{k}"))
                .collect();
            Users {
                cmds,
                plan,
                confirmed,
                stop,
                steps: vec![Step::Claiming; ids.len()],
                ids,
                rng: mix(j as u64 + 1),
                t: Tally::default(),
            }
        })
        .collect()
}

fn merge(into: &mut Tally, t: Tally) {
    into.claims += t.claims;
    into.holds += t.holds;
    into.confirms += t.confirms;
    into.late_confirms += t.late_confirms;
    into.last_confirm_ms = into.last_confirm_ms.max(t.last_confirm_ms);
    into.sold.extend(t.sold);
    into.errors.extend(t.errors);
}

/// The Lua path's row name: no MySQL here, the client sweeps.
const LUA_HOLDS: &str = "lua (client sweep)";

/// The checks every path shares; `redis` is the path's holders hash.
/// Returns the row (without MySQL lag) and the violations.
fn verdict(
    path: &str,
    plan: Plan,
    run: &PathRun,
    redis: &HashMap<String, i64>,
) -> (Row, Vec<String>, Vec<String>) {
    let (t, mut v, mut notes) = (&run.t, Vec::new(), Vec::new());
    if (t.sold.len() as u64) < plan.total {
        v.push(format!(
            "not sold out before the deadline: {} of {} sold",
            t.sold.len(),
            plan.total
        ));
    }
    v.extend(t.errors.iter().map(|e| format!("unexpected reply: {e}")));
    v.extend(run.log_errors.iter().take(5).cloned());
    v.extend(check_claims(plan.total, plan.total, &t.sold));
    v.extend(diff_holders("replies", &t.sold, "Redis", redis));
    let log = LogCheck::replay(&run.log);
    if log.holds < t.holds || log.confirms < t.confirms {
        notes.push(format!(
            "{path}: the log tail read {} of {} holds and {} of {} confirms (the rest was trimmed by the sidecar first); \
             lateness is over the expiries read, the log replay is not checked",
            log.holds, t.holds, log.confirms, t.confirms
        ));
    } else {
        if (log.holds, log.confirms) != (t.holds, t.confirms) {
            v.push(format!(
                "the log has {} holds and {} confirms, the replies say {} and {}",
                log.holds, log.confirms, t.holds, t.confirms
            ));
        }
        v.extend(log.violations.iter().cloned());
        v.extend(diff_holders("replies", &t.sold, "log", &log.sold()));
    }
    let mut late = log.late_ms.clone();
    late.sort_unstable();
    let secs = run.elapsed.as_secs_f64().max(1e-9);
    let mut row = Row::new(path)
        .with("sold", t.sold.len() as f64)
        .with("claims", t.claims as f64)
        .with("claims_per_s", t.claims as f64 / secs)
        .with("confirms_per_s", t.confirms as f64 / secs)
        .with("expired", log.expires as f64)
        .with("late_confirms", t.late_confirms as f64)
        .with("sold_out_s", secs);
    for (key, q) in [
        ("late_p50_ms", 0.5),
        ("late_p99_ms", 0.99),
        ("late_max_ms", 1.0),
    ] {
        if let Some(x) = quantile(&late, q) {
            row.set(key, x);
        }
    }
    (row, v, notes)
}

/// Waits until MySQL matches Redis at the end (every ticket sold, stock 0;
/// trimming the log may come later); `Ok(ms)` after the last change (`last_at`, unix ms), or
/// `Err(why)` when it cannot: the sidecar logs holds as `unsupported_op`,
/// or nothing matched within [`LAG_BOUND`].
fn mysql_lag(
    s: &Servers,
    event: &str,
    total: u64,
    last_at: i64,
    sidecar: &mut env::Sidecar,
) -> Result<Result<f64, String>> {
    let mut m = env::mysql_conn(&s.tg_db)?;
    let t0 = Instant::now();
    loop {
        let reasons = env::mysql_conflict_reasons(&mut m, event)?;
        if let Some((_, n)) = reasons.iter().find(|(why, _)| why == "unsupported_op") {
            return Ok(Err(format!(
                "n/a (sidecar does not write holds: {n} unsupported_op conflicts)"
            )));
        }
        if env::mysql_active_count(&mut m, event)? == total as i64
            && env::mysql_stock(&mut m, event)? == Some(0)
        {
            return Ok(Ok(env::unix_ms() as f64 - last_at as f64));
        }
        if t0.elapsed() > LAG_BOUND {
            return Ok(Err(format!(
                "n/a (MySQL did not match Redis within {LAG_BOUND:?}; conflicts: {reasons:?})"
            )));
        }
        if !sidecar.running() {
            bail!("the sidecar exited; log:\n{}", sidecar.log_tail());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A path's row, violations and notes.
type PathOut = (Row, Vec<String>, Vec<String>);

/// ticketgate: `TICKET.CLAIM ... HOLD`, `TICKET.CONFIRM`, the module's
/// expiry, the sidecar draining into MySQL.
fn run_tg(ctx: &Ctx, plan: Plan) -> Result<PathOut> {
    let s = ctx.servers;
    let event = ctx.event("checkout", "tg");
    let mut r = s.redis()?;
    tg_init(&mut r, &event, plan.total)?;
    let mut sidecar = s.start_sidecar(&event)?;
    wait_event_in_mysql(s, &event, &mut sidecar)?;
    let cmds = Cmds::Module {
        event: event.clone(),
        hold: ctx.sizes.checkout_hold_ms.to_string(),
    };
    ctx.ui.say(&format!("checkout: {TG}"));
    let log = protocol::keys::key(&event, protocol::keys::Part::Log);
    let run = run_users(ctx, &cmds, plan, (&log, &event), None)?;
    let holders = env::redis_holders(&mut r, &env::holders_key(&event))?;
    let (mut row, mut v, mut notes) = verdict(TG, plan, &run, &holders);
    let st = env::ticket_status(&mut r, &event)?;
    for (k, want) in [
        ("remaining", 0),
        ("held", 0),
        ("claimed", plan.total as i64),
    ] {
        let got = env::status_field(&st, k)?;
        if got != want {
            v.push(format!(
                "TICKET.STATUS {k} is {got} at the end, expected {want}"
            ));
        }
    }
    // The last change is the last confirm: its log entry, or its reply if
    // the tail missed the entry.
    let logged = run
        .log
        .iter()
        .filter(|r| matches!(r.op, Op::Confirm { .. }));
    let last_at = match logged.count() as u64 == run.t.confirms {
        true => run.log.iter().map(|r| r.at).max().unwrap_or(0),
        false => run.t.last_confirm_ms as i64,
    };
    match mysql_lag(s, &event, plan.total, last_at, &mut sidecar)? {
        Ok(ms) => {
            row.set("mysql_lag_ms", ms);
            v.extend(env::compare_event(s, &event)?);
        }
        Err(why) => notes.push(format!("{TG}: MySQL lag {why}")),
    }
    if !sidecar.stop() {
        v.push("the sidecar did not stop cleanly on SIGTERM".into());
    }
    tg_drop(&mut r, &event)?;
    Ok((row, v, notes))
}

/// The Lua path: hold and confirm scripts, the client's sweep script.
fn run_lua(ctx: &Ctx, plan: Plan) -> Result<PathOut> {
    let s = ctx.servers;
    let event = ctx.event("checkout", "lua");
    let keys = LuaKeys::new(&event);
    let mut raw = RawConn::connect(&s.redis_addr)?;
    lua::fill_pool(
        &mut raw,
        &keys.pool,
        plan.total,
        &indicatif::ProgressBar::hidden(),
    )?;
    let sweep_sha = lua::load_script(&s.redis_addr, lua::SWEEP_SCRIPT)?;
    let cmds = Cmds::Lua {
        hold_sha: lua::load_script(&s.redis_addr, lua::HOLD_SCRIPT)?,
        confirm_sha: lua::load_script(&s.redis_addr, lua::CONFIRM_SCRIPT)?,
        hold: ctx.sizes.checkout_hold_ms.to_string(),
        keys: LuaKeys::new(&event),
    };
    ctx.ui.say(&format!("checkout: {LUA_HOLDS}"));
    let sweep = |stop: &AtomicBool| lua_sweep(s, &keys, &sweep_sha, stop);
    let run = run_users(ctx, &cmds, plan, (&keys.log, &event), Some(&sweep))?;
    let mut r = s.redis()?;
    let holders = env::redis_holders(&mut r, &keys.holders)?;
    let (row, mut v, notes) = verdict(LUA_HOLDS, plan, &run, &holders);
    for key in [&keys.pool, &keys.holds] {
        let n: i64 = redis::cmd("ZCARD")
            .arg(key)
            .query(&mut r)
            .with_context(|| format!("ZCARD {key}"))?;
        if n != 0 {
            v.push(format!("{key} has {n} members at the end, expected 0"));
        }
    }
    keys.delete(&mut raw)?;
    Ok((row, v, notes))
}

/// Users claim with a hold, most confirm, abandoned holds go back to the
/// users still trying, until sold out: ticketgate vs the Lua path.
pub fn checkout(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let plan = Plan {
        total: z.checkout_tickets,
        think_ms: z.checkout_think_ms,
        retry_ms: z.checkout_retry_ms,
        abandon_pct: z.checkout_abandon_pct.min(100),
    };
    let what = format!(
        "{} users on {} tickets from {} connections, HOLD {} ms, {}% never confirm, the rest after {} ms ± 50%, sold-out claims retried after {} ms ± 50%",
        n0(z.checkout_users), n0(plan.total), z.checkout_conns, z.checkout_hold_ms, plan.abandon_pct, plan.think_ms, plan.retry_ms
    );
    ctx.ui.say(&format!("checkout: {what}"));
    let buyers = (0..z.checkout_users)
        .filter(|&k| !abandons(k, plan.abandon_pct))
        .count() as u64;
    if buyers < plan.total {
        bail!(
            "checkout: only {buyers} of the {} users confirm, fewer than the {} tickets: it could never sell out (more --checkout-users, or a lower --checkout-abandon-pct)",
            z.checkout_users,
            plan.total
        );
    }
    let mut rep = ScenarioReport::new("checkout", &what, columns());
    for (path, run) in [
        (TG, run_tg as fn(&Ctx, Plan) -> Result<PathOut>),
        (LUA_HOLDS, run_lua),
    ] {
        let (row, v, notes) = run(ctx, plan)?;
        rep.rows.push(row);
        rep.add_violations(path, v);
        rep.notes.extend(notes);
    }
    summarize(&mut rep);
    Ok(rep)
}

fn columns() -> Vec<crate::report::Column> {
    vec![
        col("sold", "sold", 0),
        col("claims_per_s", "claims/s", 0),
        col("confirms_per_s", "confirms/s", 0),
        col("expired", "expired", 0),
        col("late_confirms", "late confirms", 0),
        col("late_p50_ms", "released late p50 ms", 0),
        col("late_p99_ms", "p99 ms", 0),
        col("late_max_ms", "max ms", 0),
        col("sold_out_s", "sold out s", 1),
        col("mysql_lag_ms", "MySQL lag ms", 0),
    ]
}

/// Ratios, targets, what was checked and how to read the table.
fn summarize(rep: &mut ScenarioReport) {
    let (lateness, lag) = (
        "release p99 lateness lua/ticketgate",
        "ticketgate MySQL lag",
    );
    rep.add_ratios(&[
        (lateness, LUA_HOLDS, TG, "late_p99_ms"),
        ("claims/s ticketgate/lua", TG, LUA_HOLDS, "claims_per_s"),
    ]);
    let late = "ticketgate hold released p99 after its deadline";
    rep.add_targets(&[
        (late, Goal::Below, 100.0, " ms", TG, "late_p99_ms"),
        (lag, Goal::Below, 1000.0, " ms", TG, "mysql_lag_ms"),
    ]);
    rep.checks.push(
        "checked: sold == tickets before the deadline, distinct numbers in range, confirmed replies == Redis holders == the log's sold tickets; \
         log replay: no ticket handed out while held or sold, no confirm at or after a deadline, no release before one; \
         ticketgate: STATUS remaining 0, held 0; MySQL == Redis once the sidecar writes holds; lua: pool and holds empty"
            .into(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abandoning_users_are_about_the_share_asked() {
        let n = (0..10_000).filter(|&k| abandons(k, 30)).count();
        assert!((2_800..3_200).contains(&n), "{n}");
        assert!(!(0..100).any(|k| abandons(k, 0)));
    }
}
