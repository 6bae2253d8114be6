//! `waitlist`: the waiting list at scale. An event of T tickets with
//! `OFFER` is sold out, then N users join its list with pipelined
//! `TICKET.WAIT`s from many connections (joins/s), and `MEMORY USAGE` of
//! `ticket:{E}:waiting` (the list's only key) over N gives bytes per waiting
//! user. Then K sold tickets are cancelled one by one: right after each
//! `CANCEL` reply, `TICKET.ORDER` of the head must already be `held` (the
//! offer is made inside the freeing command). Those K offers are left to
//! expire, and the log's `op=offer` `at` of the next K offers minus the
//! expired offers' `until` (same ticket) is how late the sweep handed them
//! on. Checked: offers in list order, nobody offered twice, no oversell.

use std::collections::HashSet;

use protocol::keys::{key, Part};
use protocol::record::{Op, Record};

use super::big_event::memory_usage;
use super::*;
use crate::report::quantile;

/// How long past the first offers' deadline to wait for the next ones.
const HANDOFF_BOUND: Duration = Duration::from_secs(10);

/// Sells out, fills the list, cancels, lets the offers expire; one row.
pub fn waitlist(ctx: &Ctx) -> Result<ScenarioReport> {
    let z = ctx.sizes;
    let (total, users, k) = (z.waitlist_tickets, z.waitlist_users, z.waitlist_cancels);
    let k = k.min(total).min(users / 2);
    let what = format!(
        "{} tickets sold out, {} users join the list from {} connections (pipeline {}), {k} cancels, OFFER {} ms left to expire",
        n0(total), n0(users), z.throughput_conns, z.pipeline, z.waitlist_offer_ms
    );
    ctx.ui.say(&format!("waitlist: {what}"));
    let event = ctx.event("waitlist", "tg");
    let mut r = ctx.servers.redis()?;
    let () = redis::cmd("TICKET.INIT")
        .arg(&event)
        .arg(total)
        .arg("OFFER")
        .arg(z.waitlist_offer_ms)
        .query(&mut r)
        .with_context(|| format!("TICKET.INIT {event} {total} OFFER"))?;
    let mut v = sell_out(ctx, &event, total)?;
    let (joins_per_s, jv) = join(ctx, &event, users, "waitlist: joins", EACH_PLACE_ONCE)?;
    v.extend(jv);
    let bytes = memory_usage(&mut r, &key(&event, Part::Waiting))?;
    let heads: Vec<String> = redis::cmd("ZRANGE")
        .arg(key(&event, Part::Waiting))
        .arg(0)
        .arg(2 * k as i64 - 1)
        .query(&mut r)
        .context("ZRANGE waiting")?;
    if heads.len() as u64 != 2 * k {
        bail!(
            "waitlist: the list has {} users, expected at least {}",
            heads.len(),
            2 * k
        );
    }
    let (in_cmd, cv) = cancel_and_check(&mut r, &event, &heads[..k as usize])?;
    v.extend(cv);
    let (late, hv) = handoff(&mut r, &event, &heads, z.waitlist_offer_ms)?;
    v.extend(hv);
    v.extend(final_checks(&mut r, &event, total, users - 2 * k)?);
    tg_drop(&mut r, &event)?;
    let mut row = Row::new(TG)
        .with("joins_per_s", joins_per_s)
        .with("bytes_per_user", bytes as f64 / users.max(1) as f64)
        .with("offered_in_cmd", in_cmd as f64)
        .with("cancels", k as f64);
    for (name, q) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
        if let Some(x) = quantile(&late, q) {
            row.set(&format!("handoff_{name}_ms"), x);
        }
    }
    Ok(build_report(what, row, v, users))
}

/// Pipelined `TICKET.CLAIM E s<i>` of every ticket.
fn sell_out(ctx: &Ctx, event: &str, total: u64) -> Result<Vec<String>> {
    let encode = |buf: &mut Vec<u8>, i: u64| {
        let user = format!("s{i}");
        encode(buf, &[b"TICKET.CLAIM", event.as_bytes(), user.as_bytes()]);
    };
    let z = ctx.sizes;
    let res = load::pipelined(
        &ctx.servers.redis_addr,
        z.throughput_conns,
        z.client_threads,
        z.pipeline,
        total,
        &encode,
        &indicatif::ProgressBar::hidden(),
    )?;
    let mut v: Vec<String> = res.errors.iter().map(|e| format!("claim: {e}")).collect();
    let distinct: HashSet<i64> = res.tickets.iter().copied().collect();
    if distinct.len() as u64 != total || res.tickets.len() as u64 != total {
        v.push(format!(
            "sell-out: {} tickets ({} distinct) for {total} claims",
            res.tickets.len(),
            distinct.len()
        ));
    }
    Ok(v)
}

/// What the sorted replies of `n` joins must be, and how to say it.
pub(super) struct Expect {
    pub ok: fn(&[i64], u64) -> bool,
    pub want: &'static str,
}

/// A plain list's joins: each place once.
pub(super) const EACH_PLACE_ONCE: Expect = Expect {
    ok: |replies, n| replies.iter().copied().eq(1..=n as i64),
    want: "each place once",
};

/// Pipelined `TICKET.WAIT E w<i>` of `users` users (progress bar `label`):
/// joins/s, and violations: error replies, or replies not as `expect`ed.
pub(super) fn join(
    ctx: &Ctx,
    event: &str,
    users: u64,
    label: &str,
    expect: Expect,
) -> Result<(f64, Vec<String>)> {
    let encode = |buf: &mut Vec<u8>, i: u64| {
        let user = format!("w{i}");
        encode(buf, &[b"TICKET.WAIT", event.as_bytes(), user.as_bytes()]);
    };
    let z = ctx.sizes;
    let pb = ctx.ui.bar(users, label);
    let res = load::pipelined(
        &ctx.servers.redis_addr,
        z.throughput_conns,
        z.client_threads,
        z.pipeline,
        users,
        &encode,
        &pb,
    )?;
    pb.finish_and_clear();
    let mut v: Vec<String> = res.errors.iter().map(|e| format!("wait: {e}")).collect();
    let mut replies = res.tickets.clone();
    replies.sort_unstable();
    if !(expect.ok)(&replies, users) {
        v.push(format!(
            "{users} joins of {event} answered {} replies, not {} ({} nil)",
            replies.len(),
            expect.want,
            res.nils
        ));
    }
    Ok((res.per_sec(), v))
}

/// `TICKET.ORDER E user`'s `state`, or `None` (no order).
fn order_state(r: &mut redis::Connection, event: &str, user: &str) -> Result<Option<String>> {
    let reply: Option<Vec<redis::Value>> = redis::cmd("TICKET.ORDER")
        .arg(event)
        .arg(user)
        .query(r)
        .with_context(|| format!("TICKET.ORDER {event} {user}"))?;
    let fields: Vec<Option<String>> = reply
        .unwrap_or_default()
        .iter()
        .map(|x| redis::from_redis_value_ref::<String>(x).ok())
        .collect();
    let at = fields.iter().position(|f| f.as_deref() == Some("state"));
    Ok(at.and_then(|i| fields.get(i + 1).cloned().flatten()))
}

/// Cancels `s0..s<k>` one at a time; the head must hold its offer right
/// after each reply. How many did, and violations.
fn cancel_and_check(
    r: &mut redis::Connection,
    event: &str,
    heads: &[String],
) -> Result<(u64, Vec<String>)> {
    let (mut in_cmd, mut v) = (0, Vec::new());
    for (i, head) in heads.iter().enumerate() {
        let n: Option<i64> = redis::cmd("TICKET.CANCEL")
            .arg(event)
            .arg(format!("s{i}"))
            .query(r)
            .with_context(|| format!("TICKET.CANCEL {event} s{i}"))?;
        if n.is_none() {
            v.push(format!(
                "TICKET.CANCEL s{i} answered nil, expected a ticket"
            ));
        }
        match order_state(r, event, head)?.as_deref() {
            Some("held") => in_cmd += 1,
            other => v.push(format!(
                "head {head} is {other:?} right after cancel {i}, expected held"
            )),
        }
    }
    Ok((in_cmd, v))
}

/// The event's log, decoded.
fn read_log(r: &mut redis::Connection, event: &str) -> Result<(Vec<Record>, Vec<String>)> {
    let reply: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg(key(event, Part::Log))
        .arg("-")
        .arg("+")
        .query(r)
        .context("XRANGE log")?;
    Ok(env::decode_log(event, &reply.ids))
}

/// `(user, ticket, at, until)` of every `op=offer`, in log order.
fn offers(log: &[Record]) -> Vec<(String, i64, i64, i64)> {
    let mut out = Vec::new();
    for rec in log {
        if let Op::Offer {
            user,
            tickets,
            until,
            ..
        } = &rec.op
        {
            out.extend(
                tickets
                    .as_slice()
                    .iter()
                    .map(|&t| (user.clone(), t, rec.at, *until)),
            );
        }
    }
    out
}

/// Waits (sending only reads) until the sweep has offered the next
/// `heads.len() / 2` users; each lateness is the new offer's `at` minus the
/// expired offer's `until` on the same ticket.
fn handoff(
    r: &mut redis::Connection,
    event: &str,
    heads: &[String],
    offer_ms: u64,
) -> Result<(Vec<i64>, Vec<String>)> {
    let give_up = Instant::now() + Duration::from_millis(offer_ms) + HANDOFF_BOUND;
    let (log, mut v) = loop {
        let (log, errs) = read_log(r, event)?;
        if offers(&log).len() >= heads.len() || Instant::now() > give_up {
            break (log, errs);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let offered = offers(&log);
    let users: Vec<&str> = offered.iter().map(|o| o.0.as_str()).collect();
    if users != heads.iter().map(String::as_str).collect::<Vec<_>>() {
        v.push(format!(
            "offers are not the list's first {} users in order: {} offers, first {:?}",
            heads.len(),
            users.len(),
            &users[..users.len().min(5)]
        ));
    }
    if users.iter().collect::<HashSet<_>>().len() != users.len() {
        v.push("a user was offered tickets twice".into());
    }
    let half = heads.len() / 2;
    let mut late = Vec::new();
    for (_, t, at, _) in offered.iter().skip(half) {
        match offered[..half.min(offered.len())]
            .iter()
            .find(|o| o.1 == *t)
        {
            Some(first) => late.push(at - first.3),
            None => v.push(format!("ticket {t} offered again without a first offer")),
        }
    }
    late.sort_unstable();
    Ok((late, v))
}

/// No oversell and the list's length at the end.
fn final_checks(
    r: &mut redis::Connection,
    event: &str,
    total: u64,
    left: u64,
) -> Result<Vec<String>> {
    let st = env::ticket_status(r, event)?;
    let mut v = Vec::new();
    let holders = env::redis_holders(r, &env::holders_key(event))?;
    let distinct: HashSet<i64> = holders.values().copied().collect();
    if holders.len() as u64 > total || distinct.len() != holders.len() {
        v.push(format!(
            "oversell: {} holders, {} distinct tickets, {total} tickets",
            holders.len(),
            distinct.len()
        ));
    }
    for (field, want) in [("claimed", total as i64), ("waiting", left as i64)] {
        let got = env::status_field(&st, field)?;
        if got != want {
            v.push(format!("TICKET.STATUS {field} is {got}, expected {want}"));
        }
    }
    Ok(v)
}

fn build_report(what: String, row: Row, v: Vec<String>, users: u64) -> ScenarioReport {
    let mut rep = ScenarioReport::new(
        "waitlist",
        &what,
        vec![
            col("joins_per_s", "joins/s", 0),
            col("bytes_per_user", "bytes/waiting user", 1),
            col("offered_in_cmd", "offered in the CANCEL", 0),
            col("handoff_p50_ms", "expiry handed on p50 ms", 0),
            col("handoff_p99_ms", "p99 ms", 0),
            col("handoff_max_ms", "max ms", 0),
        ],
    );
    let handoff_p99 = row.get("handoff_p99_ms");
    let missed = row.get("cancels").zip(row.get("offered_in_cmd"));
    rep.rows.push(row);
    rep.add_violations(TG, v);
    let (in_cmd, handed) = (
        "cancels whose offer was not made in the same command",
        "expired offer handed on p99 after its deadline",
    );
    let not_in_cmd = missed.map(|(k, offered)| k - offered);
    rep.targets
        .push(target(in_cmd, Goal::Below, 0.5, "", not_in_cmd));
    rep.targets
        .push(target(handed, Goal::Below, 150.0, " ms", handoff_p99));
    rep.checks.push(format!(
        "checked: {users} joins got each place once; after each CANCEL reply the head's TICKET.ORDER is held; \
         offers (log) are the list's head in order, nobody twice; no oversell; STATUS claimed == tickets, waiting == users − 2K"
    ));
    rep
}
