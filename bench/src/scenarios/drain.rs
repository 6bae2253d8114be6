//! `drain`: winners/s the sidecar writes into MySQL vs the MySQL-only path.

use super::*;

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
    Ok(rep)
}
