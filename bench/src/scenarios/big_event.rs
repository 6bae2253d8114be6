//! `big-event`: a 10,000,000-ticket event vs a materialised ZSet.

use super::*;

pub(super) fn memory_usage(c: &mut redis::Connection, key: &str) -> Result<i64> {
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
    for part in protocol::keys::PARTS {
        bytes += memory_usage(&mut r, &protocol::keys::key(&event, part))?;
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
    let kb = Some(bytes as f64 / 1024.0);
    rep.targets
        .push(target("event memory", Goal::Below, 100.0, " KB", kb));
    rep.checks.push(
        "checked: first claim got ticket 1, remaining == N - 1; the ZSet pops 1 and keeps N - 1"
            .into(),
    );
    Ok(rep)
}
