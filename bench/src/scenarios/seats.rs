//! `seats`: reserved seating (docs/design.md "Reserved seating"). The
//! burst of the contract (parties of 1-8 from many connections, one claim
//! each, on a 10,000-seat venue) beside general-admission `CLAIM COUNT`
//! claims of the same sizes in the same run; the longest claim during the
//! sale (`SLOWLOG`); `MEMORY USAGE` of the seat key per seat; INIT of the
//! 80,000-seat arena (40 sections x 40 rows x 50); and `audit-seats` on
//! the arena sold out (drained by the sidecar). It only measures: the
//! module chooses every seat, the sidecar and `audit-seats` check them.

use super::*;

/// A layout of `sections` x `rows` rows of 50 seats.
fn layout(sections: u64, rows: u64) -> String {
    let row: Vec<String> = (1..=rows)
        .map(|r| format!(r#"{{"name":"{r}","seats":50}}"#))
        .collect();
    let row = row.join(",");
    let all: Vec<String> = (1..=sections)
        .map(|s| format!(r#"{{"name":"S{s}","rows":[{row}]}}"#))
        .collect();
    format!(r#"{{"sections":[{}]}}"#, all.join(","))
}

/// The size of party `k` (1-8, spread evenly).
fn party(k: u64) -> u64 {
    (k * 5) % 8 + 1
}

/// `TICKET.INIT event total LIMIT 8 [SEATS layout]`; the round trip.
fn init(
    r: &mut redis::Connection,
    event: &str,
    total: u64,
    seats: Option<&str>,
) -> Result<Duration> {
    let mut cmd = redis::cmd("TICKET.INIT");
    cmd.arg(event).arg(total).arg("LIMIT").arg(8);
    if let Some(layout) = seats {
        cmd.arg("SEATS").arg(layout);
    }
    let t0 = Instant::now();
    let () = cmd
        .query(r)
        .with_context(|| format!("TICKET.INIT {event}"))?;
    Ok(t0.elapsed())
}

/// Parties `0..parties` over `conns` connections, one `CLAIM ... COUNT n`
/// each (party `k` has [`party`]`(k)` seats, or `size` when given).
fn claims(event: &str, parties: u64, conns: u64, size: Option<u64>) -> Vec<Vec<Request>> {
    let mut out: Vec<Vec<Request>> = (0..conns.max(1)).map(|_| Vec::new()).collect();
    for k in 0..parties {
        let n = size.unwrap_or_else(|| party(k));
        out[(k % conns.max(1)) as usize].push(Request::claim_count(event, format!("p{k}"), n));
    }
    out
}

/// Runs the claims; the row (parties/s, seats/s, latency) and violations:
/// every reply seats, or is `NOTOGETHER`/`SOLDOUT`.
fn run(
    ctx: &Ctx,
    path: &str,
    per_conn: Vec<Vec<Request>>,
    size: Option<u64>,
) -> Result<(Row, Vec<String>)> {
    let n: u64 = per_conn.iter().map(|c| c.len() as u64).sum();
    let pb = ctx.ui.bar(n, &format!("seats: {path}"));
    let res = load::closed_loop(
        &ctx.servers.redis_addr,
        per_conn,
        ctx.sizes.client_threads,
        &|_, _| {},
        &pb,
    )?;
    pb.finish_and_clear();
    let (mut seated, mut seats, mut refused, mut v) = (0u64, 0u64, 0u64, Vec::new());
    for o in &res.outcomes {
        let k: u64 = o.user.trim_start_matches('p').parse().unwrap_or(0);
        match &o.reply {
            Ok(Some(_)) => (seated, seats) = (seated + 1, seats + size.unwrap_or_else(|| party(k))),
            Err(e) if e.starts_with("NOTOGETHER") || e.starts_with("SOLDOUT") => refused += 1,
            other => v.push(format!("{path} {}: {other:?}", o.user)),
        }
    }
    let took = secs(res.end - res.start).max(1e-9);
    let row = Row::new(path)
        .with_latency(res.latency.clone())
        .with("parties", seated as f64)
        .with("refused", refused as f64)
        .with("parties_per_s", n as f64 / took)
        .with("seats_per_s", seats as f64 / took);
    Ok((row, v))
}

/// The slowest `TICKET.CLAIM` in the slow log (microseconds; 0 if none
/// took `floor_us`), the slow log set to catch every claim over
/// `floor_us` while `f` runs, and put back after.
fn slowest_claim<T>(
    r: &mut redis::Connection,
    floor_us: u64,
    f: impl FnOnce() -> Result<T>,
) -> Result<(T, u64)> {
    let old: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("slowlog-*").query(r)?;
    let set = |r: &mut redis::Connection, k: &str, v: &str| -> Result<()> {
        let () = redis::cmd("CONFIG").arg("SET").arg(k).arg(v).query(r)?;
        Ok(())
    };
    set(r, "slowlog-log-slower-than", &floor_us.to_string())?;
    set(r, "slowlog-max-len", "100000")?;
    let () = redis::cmd("SLOWLOG").arg("RESET").query(r)?;
    let out = f();
    // Entries: id, time, duration (us), the arguments, then client fields.
    let log: Vec<Vec<redis::Value>> = redis::cmd("SLOWLOG").arg("GET").arg(100_000).query(r)?;
    for pair in old.chunks(2) {
        set(r, &pair[0], &pair[1])?;
    }
    let claim = redis::Value::BulkString(b"TICKET.CLAIM".to_vec());
    let slowest = log
        .iter()
        .filter_map(|e| match (e.get(2), e.get(3)) {
            (Some(redis::Value::Int(us)), Some(redis::Value::Array(args)))
                if args.first() == Some(&claim) =>
            {
                Some(*us as u64)
            }
            _ => None,
        })
        .max()
        .unwrap_or(0);
    Ok((out?, slowest))
}

/// Sells the arena out (parties of 5 fill rows of 50), lets the sidecar
/// drain it and times `audit-seats`.
fn audit_sold_out(ctx: &Ctx, event: &str, total: u64) -> Result<Duration> {
    let (_, v) = run(
        ctx,
        "arena sell-out",
        claims(event, total / 5, 50, Some(5)),
        Some(5),
    )?;
    if let Some(first) = v.first() {
        bail!("the arena sell-out: {first}");
    }
    audited(ctx, event, "audit-seats")
}

/// The scenario.
pub fn seats(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let (parties, conns, venue, arena) =
        (z.seats_parties, z.seats_conns, z.seats_venue, z.seats_arena);
    ctx.ui.say(&format!(
        "seats: {parties} parties of 1-8 from {conns} connections on {venue} seats vs general admission; the {arena}-seat arena"
    ));
    let mut rep = report(parties, conns, venue, arena);
    let mut r = ctx.servers.redis()?;
    // General admission first, then the seated burst: the same parties.
    let ga = ctx.event("seats", "ga");
    init(&mut r, &ga, venue, None)?;
    let (row, v) = run(
        ctx,
        "general admission COUNT",
        claims(&ga, parties, conns, None),
        None,
    )?;
    rep.rows.push(row);
    rep.add_violations("general admission", v);
    let seated = ctx.event("seats", "tg");
    init(&mut r, &seated, venue, Some(&layout(venue / 1000, 20)))?;
    let burst = claims(&seated, parties, conns, None);
    let ((mut row, v), slowest) = slowest_claim(&mut r, 0, || run(ctx, TG, burst, None))?;
    let key = protocol::keys::key(&seated, protocol::keys::Part::Seats);
    let bytes = big_event::memory_usage(&mut r, &key)?;
    row.set("longest_ms", slowest as f64 / 1000.0);
    row.set("bytes_per_seat", bytes as f64 / venue as f64);
    rep.add_violations(TG, v);
    // The arena: INIT, then sold out and audited.
    let big = ctx.event("seats", "arena");
    let arena_layout = layout(arena / 2000, 40);
    let took = init(&mut r, &big, arena, Some(&arena_layout))?;
    row.set("arena_init_ms", ms(took));
    match audit_sold_out(ctx, &big, arena) {
        Ok(took) => row.set("audit_s", secs(took)),
        Err(e) => rep.add_violations(TG, vec![format!("{e:#}")]),
    }
    rep.rows.push(row);
    for event in [&ga, &seated, &big] {
        tg_drop(&mut r, event)?;
    }
    finish(&mut rep);
    Ok(rep)
}

fn report(parties: u64, conns: u64, venue: u64, arena: u64) -> ScenarioReport {
    ScenarioReport::new(
        "seats",
        &format!(
            "{} parties of 1-8 from {conns} connections on {} seats (ticketgate: best available together; general admission: CLAIM COUNT); the {}-seat arena",
            n0(parties), n0(venue), n0(arena)
        ),
        vec![
            col("parties", "seated", 0),
            col("refused", "refused", 0),
            col("parties_per_s", "parties/s", 0),
            col("seats_per_s", "seats/s", 0),
            col("p99_ms", "p99 ms", 2),
            col("longest_ms", "longest claim ms", 2),
            col("bytes_per_seat", "bytes/seat", 3),
            col("arena_init_ms", "arena INIT ms", 1),
            col("audit_s", "audit-seats s", 2),
        ],
    )
}

fn finish(rep: &mut ScenarioReport) {
    rep.add_ratios(&[(
        "seated vs general admission parties/s",
        TG,
        "general admission COUNT",
        "parties_per_s",
    )]);
    rep.add_targets(&[
        (
            "longest claim during the sale",
            Goal::Below,
            50.0,
            " ms",
            TG,
            "longest_ms",
        ),
        (
            "seat state per seat",
            Goal::Below,
            1.0,
            " bytes",
            TG,
            "bytes_per_seat",
        ),
        (
            "INIT of the arena",
            Goal::Below,
            50.0,
            " ms",
            TG,
            "arena_init_ms",
        ),
    ]);
    rep.checks.push(
        "checked: every claim seated its party or answered NOTOGETHER/SOLDOUT; the arena sold out by parties of 5, drained by the sidecar, and audit-seats exited 0"
            .into(),
    );
}
