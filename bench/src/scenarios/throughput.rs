//! `throughput`: pipelined claims/s, module vs Lua vs raw ZPOPMIN.

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
