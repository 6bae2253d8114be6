//! `restore`: `TICKET.RESTORE` of a 1,000,000-order snapshot (what
//! `ticketgate-sidecar rebuild --apply` sends) in chunks, while another
//! connection PINGs: how long Redis is blocked at a time (issue 11).

use protocol::record::{Checkout, Incarnation, Status, Tickets};
use protocol::restore::{free_spans, steps, Begin, Order, Step};
use protocol::StreamId;

use super::stall::{longest_in_slowlog, slowlog_on, Pinger};
use super::*;

/// The snapshot: `orders` orders of one ticket, every 20th of two; every
/// third held for an hour, the rest sold; every 50th number free (a
/// cancelled ticket); `total` 10% above the highest number.
fn snapshot(orders: u64, now: i64) -> (Begin, Vec<Order>, Vec<std::ops::RangeInclusive<i64>>) {
    let mut next = 1i64;
    let mut taken = Vec::new();
    let mut out = Vec::with_capacity(orders as usize);
    for i in 0..orders {
        let count = if i % 20 == 19 { 2 } else { 1 };
        let mut numbers = Vec::with_capacity(count);
        while numbers.len() < count {
            if next % 50 != 0 {
                numbers.push(next);
            }
            next += 1;
        }
        taken.extend_from_slice(&numbers);
        out.push(Order {
            user: format!("r{i}"),
            tickets: Tickets::from_sorted(numbers),
            until: if i % 3 == 0 { now + 3_600_000 } else { 0 },
        });
    }
    let minted = next - 1;
    let begin = Begin {
        incarnation: Incarnation(0x5eed_0000_0000_0001),
        total: minted + minted / 10 + 1,
        minted,
        status: Status::Open,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout {
            hold: 600_000,
            limit: 2,
            offer: 600_000,
        },
        orders: orders as i64,
        from: StreamId::new(1, 0),
        layout: None,
    };
    (begin, out, free_spans(minted, &taken))
}

/// One `TICKET.RESTORE` call, as its reply.
fn call(c: &mut redis::Connection, event: &str, step: &Step) -> Result<redis::Value> {
    let mut cmd = redis::cmd(protocol::restore::RESTORE_COMMAND);
    for v in step.args(event).as_slice() {
        cmd.arg(v.to_string());
    }
    cmd.query(c)
        .with_context(|| format!("TICKET.RESTORE {event} ({} tickets)", step.tickets()))
}

/// Restores the snapshot in chunks while a second connection PINGs.
pub fn restore(ctx: &Ctx) -> Result<ScenarioReport> {
    let s = ctx.servers;
    let (orders, chunk) = (ctx.sizes.restore_orders, ctx.sizes.restore_chunk);
    ctx.ui.say(&format!(
        "restore: TICKET.RESTORE of {} orders in chunks of {} tickets, PINGs alongside",
        n0(orders),
        n0(chunk as u64)
    ));
    let mut rep = ScenarioReport::new(
        "restore",
        &format!(
            "TICKET.RESTORE of {} orders (a third held, every 20th of two tickets) in chunks of {} tickets",
            n0(orders),
            n0(chunk as u64)
        ),
        vec![
            col("calls", "calls", 0),
            col("longest_call_ms", "longest call ms", 1),
            col("longest_server_ms", "longest in Redis ms", 1),
            col("longest_ping_ms", "longest PING ms", 1),
            col("total_s", "total s", 2),
            col("orders_per_s", "orders/s", 0),
        ],
    );
    let mut c = s.redis()?;
    let event = ctx.event("restore", "tg");
    let now: i64 = {
        let (secs, us): (i64, i64) = redis::cmd("TIME").query(&mut c)?;
        secs * 1000 + us / 1000
    };
    let (begin, snapshot, free) = snapshot(orders, now);
    let plan = steps(begin.clone(), false, &snapshot, &[], &free, chunk);
    // The server's own time per call, from the slow log (where allowed).
    let slowlog = slowlog_on(&mut c, plan.len());

    let pinger = Pinger::start(s)?;
    let pb = ctx.ui.bar(plan.len() as u64, "restore: calls");
    let mut longest = Duration::ZERO;
    let mut commit = None;
    let t0 = Instant::now();
    let mut outcome = Ok(());
    for step in &plan {
        let t = Instant::now();
        match call(&mut c, &event, step) {
            Ok(reply) => {
                longest = longest.max(t.elapsed());
                if matches!(step, Step::Commit) {
                    commit = Some(reply);
                }
            }
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
        pb.inc(1);
    }
    let total = t0.elapsed();
    pb.finish_and_clear();
    let server_longest = match slowlog {
        true => Some(longest_in_slowlog(&mut c, Some("TICKET.RESTORE"))?),
        false => None,
    };
    let longest_ping = pinger.stop()?;
    outcome?;

    // The restored event matches the snapshot.
    let mut found = Vec::new();
    if !matches!(commit, Some(redis::Value::BulkString(_))) {
        found.push(format!(
            "COMMIT replied {commit:?}, expected the restore id"
        ));
    }
    let st = env::ticket_status(&mut c, &event)?;
    let tickets: i64 = snapshot
        .iter()
        .map(|o| o.tickets.as_slice().len() as i64)
        .sum();
    let held: i64 = snapshot
        .iter()
        .filter(|o| o.until > 0)
        .map(|o| o.tickets.as_slice().len() as i64)
        .sum();
    for (field, want) in [
        ("total", begin.total),
        ("claimed", tickets),
        ("held", held),
        ("remaining", begin.total - tickets),
    ] {
        let got = env::status_field(&st, field)?;
        if got != want {
            found.push(format!("STATUS {field} {got}, expected {want}"));
        }
    }
    let step = (snapshot.len() / 97).max(1);
    for o in snapshot.iter().step_by(step) {
        let got: Option<i64> = redis::cmd("TICKET.HOLDER")
            .arg(&event)
            .arg(&o.user)
            .query(&mut c)?;
        if got != Some(o.tickets.lowest()) {
            found.push(format!(
                "HOLDER {} is {got:?}, expected {}",
                o.user,
                o.tickets.lowest()
            ));
        }
    }
    let first = free.first().map(|r| *r.start()).unwrap_or(begin.minted + 1);
    let got: i64 = redis::cmd("TICKET.CLAIM")
        .arg(&event)
        .arg("after-restore")
        .query(&mut c)?;
    if got != first {
        found.push(format!(
            "the first claim got {got}, expected the free {first}"
        ));
    }
    rep.add_violations(TG, found);
    tg_drop(&mut c, &event)?;

    let mut row = Row::new("ticketgate TICKET.RESTORE");
    if let Some(server) = server_longest {
        row = row.with("longest_server_ms", ms(server));
    }
    rep.rows.push(
        row.with("calls", plan.len() as f64)
            .with("longest_call_ms", ms(longest))
            .with("longest_ping_ms", ms(longest_ping))
            .with("total_s", secs(total))
            .with("orders_per_s", orders as f64 / secs(total)),
    );
    for (name, value) in [
        ("longest TICKET.RESTORE call", longest),
        ("longest PING during the restore", longest_ping),
    ] {
        let measured = Some(ms(value));
        rep.targets
            .push(target(name, Goal::Below, 50.0, " ms", measured));
    }
    rep.checks.push(
        "checked: COMMIT replies with an id; STATUS total/claimed/held/remaining == the snapshot; HOLDER of ~100 users spread over the snapshot; the first claim afterwards gets the lowest free number"
            .into(),
    );
    Ok(rep)
}
