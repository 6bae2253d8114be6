//! `draw`: a fair draw at open, at scale. N users enter a `DRAW` event
//! before it opens (pipelined `TICKET.WAIT`), against the same joins on a
//! plain closed event's waiting list in the same run: what the logged entry
//! costs. Then `OPEN` with T tickets and `ADMIT a`: OPEN's own time, the
//! longest PING and slow-log command while the offers go out (the sweep
//! included), the time from the draw to the first and the last offer, and
//! offers per whole second against `a`. The offers must follow the order a
//! plain HMAC recomputes from the revealed seed. Last, the sidecar drains
//! the sale into MySQL and `ticketgate-sidecar audit-draw` checks it: its
//! time.

use protocol::draw::{commitment, parse_seed, rank};
use protocol::keys::{key, Part};
use protocol::record::{Op, Record};

use super::stall::{longest_in_slowlog, slowlog_on, Pinger};
use super::waitlist::{join, Expect, EACH_PLACE_ONCE};
use super::*;

/// How long the offers may take beyond `tickets / admit` seconds.
const OFFERS_SLACK: Duration = Duration::from_secs(60);

/// One run: plain joins, draw joins, the open, the audit; one row each.
pub fn draw(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let (n, t, admit) = (z.draw_entrants, z.draw_tickets, z.draw_admit);
    let what = format!(
        "{} users enter a DRAW event from {} connections (pipeline {}) vs plain WAIT; OPEN with {} tickets, ADMIT {}; audit-draw",
        n0(n), z.throughput_conns, z.pipeline, n0(t), n0(admit)
    );
    ctx.ui.say(&format!("draw: {what}"));
    let mut r = ctx.servers.redis()?;
    let plain = ctx.event("draw", "plain");
    command(
        &mut r,
        &["TICKET.INIT", &plain, &t.to_string(), "OFFER", "600000"],
    )?;
    command(&mut r, &["TICKET.CLOSE", &plain])?;
    let (plain_rate, mut v) = join(ctx, &plain, n, "draw: plain joins", EACH_PLACE_ONCE)?;
    tg_drop(&mut r, &plain)?;
    let event = ctx.event("draw", "tg");
    let init = [
        "TICKET.INIT",
        &event,
        &t.to_string(),
        "HOLD",
        "600000",
        "DRAW",
    ];
    command(
        &mut r,
        &[&init[..], &["ADMIT", &admit.to_string()]].concat(),
    )?;
    let (draw_rate, jv) = join(ctx, &event, n, "draw: enter", ENTERED)?;
    v.extend(jv);
    let (open, ov) = open_and_offer(ctx, &mut r, &event, n, t.min(n), admit)?;
    v.extend(ov);
    let audit = audit(ctx, &event);
    let mut rep = report(what);
    rep.rows
        .push(Row::new("plain TICKET.WAIT").with("joins_per_s", plain_rate));
    let mut row = open.with("joins_per_s", draw_rate);
    match audit {
        Ok(took) => row.set("audit_s", secs(took)),
        Err(e) => v.push(format!("audit-draw: {e:#}")),
    }
    rep.rows.push(row);
    tg_drop(&mut r, &event)?;
    rep.add_violations(TG, v);
    finish(&mut rep, admit as f64);
    Ok(rep)
}

/// Sends one command, ignoring its reply.
fn command(r: &mut redis::Connection, args: &[&str]) -> Result<()> {
    let mut cmd = redis::cmd(args[0]);
    args[1..].iter().for_each(|a| {
        cmd.arg(*a);
    });
    cmd.query::<redis::Value>(r)
        .with_context(|| args.join(" "))?;
    Ok(())
}

/// A draw's entries before the draw: `-1` each (entered, no place yet).
const ENTERED: Expect = Expect {
    ok: |replies, n| replies.len() as u64 == n && replies.iter().all(|p| *p == -1),
    want: "-1 each",
};

/// `OPEN`, then waits until `tickets` offers are made; the row of timings
/// and what was wrong.
fn open_and_offer(
    ctx: &Ctx,
    r: &mut redis::Connection,
    event: &str,
    entrants: u64,
    tickets: u64,
    admit: u64,
) -> Result<(Row, Vec<String>)> {
    let promised = hex_field(&env_status_text(r, event)?, "draw")?;
    let before: Vec<(String, Vec<(String, String)>)> = redis::cmd("XREVRANGE")
        .arg(key(event, Part::Log))
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query(r)
        .context("XREVRANGE log")?;
    let after = before
        .first()
        .map_or("-".to_string(), |(id, _)| format!("({id}"));
    let settings = pace_sweep(r, admit)?;
    let slowlog = slowlog_on(r, 10_000);
    let pinger = Pinger::start(ctx.servers)?;
    let t0 = Instant::now();
    command(r, &["TICKET.OPEN", event])?;
    let open = t0.elapsed();
    let bound = Duration::from_secs(tickets / admit.max(1) + 1) + OFFERS_SLACK;
    let claimed = wait_claimed(r, event, tickets as i64, bound);
    let longest_ping = pinger.stop()?;
    let longest_cmd = match slowlog {
        true => Some(longest_in_slowlog(r, None)?),
        false => None,
    };
    for (name, value) in &settings {
        command(r, &["CONFIG", "SET", name, value])?;
    }
    claimed?;
    let log = read_log_after(r, event, &after)?;
    let (mut row, v) = check_offers(&log, &promised, entrants, tickets, admit);
    row.set("open_ms", ms(open));
    row.set("longest_ping_ms", ms(longest_ping));
    if let Some(d) = longest_cmd {
        row.set("longest_cmd_ms", ms(d));
    }
    Ok((row, v))
}

/// The sweep's settings for `admit` offers a second: `hz 100` and a sweep
/// every 20 ms, each making at most 1.6 times its share (the next sweep
/// comes 20 ms after one returns, so a sweep's own time, ~12 µs an offer
/// here, stretches the period). Many small sweeps keep every stall short;
/// a few big ones (the default 100 ms) would each block Redis for long.
/// Returns the settings as they were, to put back.
fn pace_sweep(r: &mut redis::Connection, admit: u64) -> Result<Vec<(String, String)>> {
    const SWEEP_MS: u64 = 20;
    let mut old = Vec::new();
    let per_sweep = (8 * admit * SWEEP_MS).div_ceil(5000).max(1);
    for (name, value) in [
        ("hz", "100".to_string()),
        ("ticket.sweep-interval", SWEEP_MS.to_string()),
        ("ticket.sweep-max", per_sweep.to_string()),
    ] {
        let pair: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(r)?;
        let was = pair
            .get(1)
            .cloned()
            .with_context(|| format!("CONFIG GET {name}"))?;
        old.push((name.to_string(), was));
        command(r, &["CONFIG", "SET", name, &value])?;
    }
    Ok(old)
}

/// STATUS as text fields (the commitment and seed are strings).
fn env_status_text(r: &mut redis::Connection, event: &str) -> Result<HashMap<String, String>> {
    let fields: Vec<redis::Value> = redis::cmd("TICKET.STATUS").arg(event).query(r)?;
    let text = |v: &redis::Value| redis::from_redis_value_ref::<String>(v).unwrap_or_default();
    Ok(fields
        .chunks(2)
        .filter_map(|p| Some((text(p.first()?), text(p.get(1)?))))
        .collect())
}

fn hex_field(status: &HashMap<String, String>, name: &str) -> Result<String> {
    status
        .get(name)
        .cloned()
        .with_context(|| format!("TICKET.STATUS has no '{name}': {status:?}"))
}

/// Polls STATUS until `claimed` reaches `want` or `bound` passes.
fn wait_claimed(r: &mut redis::Connection, event: &str, want: i64, bound: Duration) -> Result<()> {
    let give_up = Instant::now() + bound;
    loop {
        let got = env::status_field(&env::ticket_status(r, event)?, "claimed")?;
        if got >= want {
            return Ok(());
        }
        if Instant::now() > give_up {
            bail!("{got} of {want} tickets offered after {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The log's entries after `after` (an exclusive `(id` or `-`), decoded.
fn read_log_after(r: &mut redis::Connection, event: &str, after: &str) -> Result<Vec<Record>> {
    let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(key(event, Part::Log))
        .arg(after)
        .arg("+")
        .query(r)
        .context("XRANGE log")?;
    let (log, errors) = env::decode_log(event, &reply.ids);
    match errors.first() {
        Some(e) => bail!("the log does not decode: {e}"),
        None => Ok(log),
    }
}

/// Checks the draw and its offers in the log; the row of their timings.
fn check_offers(
    log: &[Record],
    promised: &str,
    entrants: u64,
    tickets: u64,
    admit: u64,
) -> (Row, Vec<String>) {
    let mut v = Vec::new();
    let draws: Vec<(&[u8; 32], i64)> = log
        .iter()
        .filter_map(|rec| match &rec.op {
            Op::Draw { seed } => Some((seed, rec.at)),
            _ => None,
        })
        .collect();
    let offers: Vec<(&str, i64)> = log
        .iter()
        .filter_map(|rec| match &rec.op {
            Op::Offer { user, .. } => Some((user.as_str(), rec.at)),
            _ => None,
        })
        .collect();
    let mut row = Row::new(TG).with("offers", offers.len() as f64);
    let [(seed, drawn_at)] = draws[..] else {
        v.push(format!(
            "{} op=draw entries after OPEN, expected 1",
            draws.len()
        ));
        return (row, v);
    };
    if commitment(seed) != promised || parse_seed(promised).is_none() {
        v.push(format!(
            "SHA-256 of the seed is not the commitment {promised}"
        ));
    }
    let expected = drawn_order(seed, entrants, tickets as usize);
    let got: Vec<&str> = offers.iter().map(|(u, _)| *u).collect();
    if got != expected.iter().map(String::as_str).collect::<Vec<_>>() {
        let first = got.iter().zip(&expected).position(|(g, e)| g != e);
        v.push(format!(
            "offers do not follow the drawn order: {} offers, first difference at {first:?}",
            got.len()
        ));
    }
    let seconds = per_second(&offers, drawn_at);
    if let Some((s, n)) = seconds.iter().enumerate().find(|(_, n)| **n > admit) {
        v.push(format!(
            "{n} offers in second {s} after the draw, ADMIT is {admit}"
        ));
    }
    if let (Some(first), Some(last)) = (offers.first(), offers.last()) {
        row.set("first_offer_ms", (first.1 - drawn_at) as f64);
        row.set("last_offer_ms", (last.1 - drawn_at) as f64);
    }
    // Whole seconds only: the last one is cut short when the tickets run out.
    let whole = &seconds[..seconds.len().saturating_sub(1).max(1).min(seconds.len())];
    if !whole.is_empty() {
        let mean = whole.iter().sum::<u64>() as f64 / whole.len() as f64;
        row.set("offers_per_s", mean);
    }
    (row, v)
}

/// The first `n` of users `w0..w<entrants>` in drawn order: ascending
/// (rank, user id bytes), the rank from the seed by a plain HMAC.
fn drawn_order(seed: &[u8; 32], entrants: u64, n: usize) -> Vec<String> {
    let mut all: Vec<(u64, String)> = (0..entrants)
        .map(|i| {
            let user = format!("w{i}");
            (rank(seed, user.as_bytes()), user)
        })
        .collect();
    all.sort_unstable();
    all.into_iter().take(n).map(|(_, u)| u).collect()
}

/// Offers in each whole second counted from the draw.
fn per_second(offers: &[(&str, i64)], drawn_at: i64) -> Vec<u64> {
    let mut seconds = Vec::new();
    for (_, at) in offers {
        let s = ((at - drawn_at).max(0) / 1000) as usize;
        if seconds.len() <= s {
            seconds.resize(s + 1, 0);
        }
        seconds[s] += 1;
    }
    seconds
}

/// Lets the sidecar drain the event and times `audit-draw` on it.
fn audit(ctx: &Ctx, event: &str) -> Result<Duration> {
    audited(ctx, event, "audit-draw")
}

fn report(what: String) -> ScenarioReport {
    ScenarioReport::new(
        "draw",
        &what,
        vec![
            col("joins_per_s", "joins/s", 0),
            col("open_ms", "OPEN ms", 1),
            col("longest_cmd_ms", "longest command ms", 1),
            col("longest_ping_ms", "longest PING ms", 1),
            col("first_offer_ms", "first offer ms", 0),
            col("last_offer_ms", "last offer ms", 0),
            col("offers_per_s", "offers/s", 0),
            col("audit_s", "audit-draw s", 2),
        ],
    )
}

/// The ratio and the targets of the issue.
fn finish(rep: &mut ScenarioReport, admit: f64) {
    rep.add_ratios(&[(
        "draw entry vs plain WAIT joins/s",
        TG,
        "plain TICKET.WAIT",
        "joins_per_s",
    )]);
    rep.add_targets(&[
        (
            "longest command during the offers",
            Goal::Below,
            50.0,
            " ms",
            TG,
            "longest_cmd_ms",
        ),
        (
            "longest PING during the offers",
            Goal::Below,
            50.0,
            " ms",
            TG,
            "longest_ping_ms",
        ),
    ]);
    let off = rep
        .metric(TG, "offers_per_s")
        .map(|rate| (rate / admit - 1.0).abs() * 100.0);
    rep.targets
        .push(target("offers/s off ADMIT by", Goal::Below, 5.0, " %", off));
    rep.checks.push(
        "checked: every entry answered -1 (plain joins each place once); one op=draw after OPEN whose seed hashes to the commitment STATUS showed before; \
         the offers are the first T entrants in (HMAC rank, user id) order recomputed from the seed; no second after the draw saw more than ADMIT offers; audit-draw exits 0"
            .into(),
    );
}
