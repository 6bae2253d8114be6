//! `throughput`: pipelined claims/s, module vs Lua vs raw ZPOPMIN, and
//! module vs Lua with an AOF (`appendfsync everysec`), on the same server.

use super::*;

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

/// One measured path: what it sends, and whether the server writes an AOF.
#[derive(Clone, Copy)]
struct Run {
    key: &'static str,
    label: &'static str,
    path: Path,
    aof: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Path {
    Module,
    Lua,
    Zpopmin,
}

impl Path {
    /// The command whose `INFO commandstats` entry measures the path.
    fn command(self) -> &'static str {
        match self {
            Path::Module => "ticket.claim",
            Path::Lua => "evalsha",
            Path::Zpopmin => "zpopmin",
        }
    }
}

const RUNS: [Run; 5] = [
    Run {
        key: TG,
        label: "ticketgate (TICKET.CLAIM)",
        path: Path::Module,
        aof: false,
    },
    Run {
        key: "lua",
        label: "lua (EVALSHA)",
        path: Path::Lua,
        aof: false,
    },
    Run {
        key: "zpopmin",
        label: "raw ZPOPMIN",
        path: Path::Zpopmin,
        aof: false,
    },
    Run {
        key: "tg_aof",
        label: "ticketgate, AOF everysec",
        path: Path::Module,
        aof: true,
    },
    Run {
        key: "lua_aof",
        label: "lua, AOF everysec",
        path: Path::Lua,
        aof: true,
    },
];

/// Turns the AOF (`appendfsync everysec`) on or off and waits until the
/// rewrite that turning it on starts has finished.
fn set_aof(c: &mut redis::Connection, on: bool) -> Result<()> {
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendfsync")
        .arg("everysec")
        .query(c)?;
    let value = if on { "yes" } else { "no" };
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendonly")
        .arg(value)
        .query(c)?;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info: String = redis::cmd("INFO").arg("persistence").query(c)?;
        let fields = crate::info::fields(&info);
        let field = |name: &str| fields.get(name).copied().unwrap_or_default();
        let enabled = field("aof_enabled") == if on { "1" } else { "0" };
        if enabled
            && field("aof_rewrite_in_progress") == "0"
            && field("aof_rewrite_scheduled") == "0"
        {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the AOF did not settle (appendonly {value}) within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Shared state of one scenario run.
struct Bench<'a> {
    ctx: &'a Ctx<'a>,
    sha: String,
    r: redis::Connection,
    raw: RawConn,
    stats_conn: redis::Connection,
}

impl Bench<'_> {
    /// One round of one path: fresh tickets, `n` pipelined claims, cleanup.
    fn round(
        &mut self,
        run: Run,
        round: usize,
        pb: &indicatif::ProgressBar,
    ) -> Result<(f64, ServerStats, Vec<String>)> {
        let (z, s) = (self.ctx.sizes, self.ctx.servers);
        let n = z.throughput_claims;
        let event = self.ctx.event("tp", &format!("{}{round}", run.key));
        let keys = LuaKeys::new(&event);
        let zkey = format!("tgbench:{{{event}}}:zpop");
        let hidden = indicatif::ProgressBar::hidden();
        match run.path {
            Path::Module => tg_init(&mut self.r, &event, n)?,
            Path::Lua => lua::fill_pool(&mut self.raw, &keys.pool, n, &hidden)?,
            Path::Zpopmin => lua::fill_pool(&mut self.raw, &zkey, n, &hidden)?,
        }
        let sha = self.sha.clone();
        let encode = |buf: &mut Vec<u8>, k: u64| {
            let mut ub = [0u8; 24];
            match run.path {
                Path::Module => encode(
                    buf,
                    &[b"TICKET.CLAIM", event.as_bytes(), user_id(k, &mut ub)],
                ),
                Path::Lua => keys.encode_claim(buf, &sha, user_id(k, &mut ub)),
                Path::Zpopmin => encode(buf, &[b"ZPOPMIN", zkey.as_bytes()]),
            }
        };
        let (res, st) = with_server_stats(&mut self.stats_conn, run.path.command(), || {
            load::pipelined(
                &s.redis_addr,
                z.throughput_conns,
                z.client_threads,
                z.pipeline,
                n,
                &encode,
                pb,
            )
        })?;
        match run.path {
            Path::Module => tg_drop(&mut self.r, &event)?,
            Path::Lua => keys.delete(&mut self.raw)?,
            Path::Zpopmin => {
                let _: i64 = redis::cmd("UNLINK").arg(&zkey).query(&mut self.r)?;
            }
        }
        Ok((res.per_sec(), st, check_pipelined(&res, n)))
    }
}

/// Per-path results over the rounds.
#[derive(Default)]
struct Samples {
    rates: HashMap<&'static str, Vec<f64>>,
    usecs: HashMap<&'static str, Vec<f64>>,
    busy: HashMap<&'static str, Vec<f64>>,
}

impl Samples {
    fn record(&mut self, key: &'static str, rate: f64, st: ServerStats) {
        self.rates.entry(key).or_default().push(rate);
        if let Some(u) = st.usec_per_call {
            self.usecs.entry(key).or_default().push(u);
        }
        if let Some(b) = st.busy {
            self.busy.entry(key).or_default().push(b * 100.0);
        }
    }

    fn row(&self, run: &Run) -> Row {
        let v = self.rates.get(run.key).cloned().unwrap_or_default();
        let mut row = Row::new(run.label);
        if let Some(m) = median(&v) {
            row.set("claims_per_s", m);
        }
        if let Some(m) = v.iter().copied().reduce(f64::min) {
            row.set("min", m);
        }
        if let Some(m) = v.iter().copied().reduce(f64::max) {
            row.set("max", m);
        }
        if let Some(u) = self.usecs.get(run.key).and_then(|v| median(v)) {
            row.set("usec_per_call", u);
        }
        if let Some(b) = self.busy.get(run.key).and_then(|v| median(v)) {
            row.set("busy_pct", b);
        }
        row
    }

    /// The median over rounds of `a`'s rate / `b`'s rate in the same round.
    fn per_round_ratio(&self, a: &str, b: &str) -> Option<f64> {
        let (a, b) = (self.rates.get(a)?, self.rates.get(b)?);
        let r: Vec<f64> = a
            .iter()
            .zip(b)
            .filter_map(|(x, y)| ratio(Some(*x), Some(*y)))
            .collect();
        median(&r)
    }
}

/// Pipelined claims/s: module vs Lua vs raw ZPOPMIN, and module vs Lua with
/// an AOF (everysec), interleaved rounds on the same server.
pub fn throughput(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let n = z.throughput_claims;
    ctx.ui.say(&format!(
        "throughput: {n} pipelined claims per path and round, {} connections x pipeline {}, {} client threads, {} rounds; module and Lua also with appendonly yes (everysec)",
        z.throughput_conns, z.pipeline, z.client_threads, z.rounds
    ));
    let s = ctx.servers;
    let mut bench = Bench {
        ctx,
        sha: lua::load(&s.redis_addr)?,
        r: s.redis()?,
        raw: RawConn::connect(&s.redis_addr)?,
        stats_conn: s.redis()?,
    };
    let mut samples = Samples::default();
    let mut violations: Vec<(String, Vec<String>)> = Vec::new();
    let pb = ctx
        .ui
        .bar(n * RUNS.len() as u64 * z.rounds as u64, "throughput");
    for round in 0..z.rounds {
        for aof in [false, true] {
            set_aof(&mut bench.r, aof)?;
            for run in RUNS.iter().filter(|r| r.aof == aof) {
                let (rate, st, v) = bench.round(*run, round, &pb)?;
                samples.record(run.key, rate, st);
                violations.push((format!("{} round {}", run.key, round + 1), v));
            }
        }
    }
    set_aof(&mut bench.r, false)?;
    pb.finish_and_clear();
    let mut rep = report(&samples, z);
    for (what, v) in violations {
        rep.add_violations(&what, v);
    }
    Ok(rep)
}

/// The table, ratios and targets of a run.
fn report(samples: &Samples, z: &Sizes) -> ScenarioReport {
    let mut rep = ScenarioReport::new(
        "throughput",
        &format!(
            "pipelined claims/s, {} connections x pipeline {}, {} claims per path and round, median of {} interleaved rounds",
            z.throughput_conns, z.pipeline, n0(z.throughput_claims), z.rounds
        ),
        vec![
            col("claims_per_s", "claims/s (median)", 0),
            col("min", "min", 0),
            col("max", "max", 0),
            col("usec_per_call", "server us/call", 2),
            col("busy_pct", "server busy %", 0),
        ],
    );
    rep.rows = RUNS.iter().map(|r| samples.row(r)).collect();
    rep.checks.push(
        "checked: every claim of every path and round won a distinct ticket in 1..=N, no error replies".into(),
    );
    let rate: Vec<Option<f64>> = rep.rows.iter().map(|r| r.get("claims_per_s")).collect();
    let usec: Vec<Option<f64>> = rep.rows.iter().map(|r| r.get("usec_per_call")).collect();
    let ratios = [
        ("module/lua", ratio(rate[0], rate[1]), 2.5),
        ("module/zpopmin", ratio(rate[0], rate[2]), 0.6),
        ("module/lua with AOF everysec", ratio(rate[3], rate[4]), 2.2),
    ];
    for (name, value, goal) in ratios {
        rep.add_ratio(name, value);
        rep.targets
            .push(target(name, Goal::AtLeast, goal, "x", value));
    }
    let per_round = [
        (TG, "lua", "module/lua"),
        (TG, "zpopmin", "module/zpopmin"),
        ("tg_aof", "lua_aof", "module/lua with AOF"),
    ];
    for (a, b, name) in per_round.into_iter().filter(|_| z.rounds > 1) {
        let name = format!("{name} (median of per-round ratios)");
        rep.add_ratio(&name, samples.per_round_ratio(a, b));
    }
    rep.add_ratio("server time per call lua/module", ratio(usec[1], usec[0]));
    rep.add_ratio(
        "server time per call zpopmin/module",
        ratio(usec[2], usec[0]),
    );
    rep
}
