//! `burst`: 1,000 connections claim once each, at the same instant.

use super::*;

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
        let (row, v) = run_closed(ctx, TG, &name, tickets, one_each(users))?;
        rounds[1].push(row);
        rep.add_violations(&format!("{TG} burst {r}"), v);
        let (row, v) = run_closed(ctx, LUA, &name, tickets, one_each(users))?;
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
    let match_time = "MySQL-match time mysql-only/ticketgate";
    rep.add_ratios(&[
        ("p99 mysql-only/ticketgate", MYSQL, TG, "p99_ms"),
        ("p99 lua/ticketgate", LUA, TG, "p99_ms"),
        (match_time, MYSQL, TG, "mysql_ms"),
        ("p99 ticketgate/PING", TG, PING, "p99_ms"),
    ]);
    rep.checks.push(CLOSED_CHECKS.into());
    let p99 = (
        "ticketgate claim p99",
        Goal::Below,
        10.0,
        " ms",
        TG,
        "p99_ms",
    );
    rep.add_targets(&[p99]);
    if repeats > 1 {
        rep.notes.push(format!(
            "{repeats} bursts per path, interleaved (PING, ticketgate, lua, mysql-only, repeat); each value is the median over the bursts \
             (oversell and dups: the worst burst); 'p99 worst' is the highest p99 of any burst"
        ));
    }
    Ok(rep)
}
