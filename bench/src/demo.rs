//! `ticketgate-bench demo`: private Redis + MariaDB + sidecar, 1,000 users
//! burst an event of 100 tickets, then MySQL is checked against Redis.

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use indicatif::ProgressBar;

use crate::load::{self, Request};
use crate::oracle::{check_claims, diff_holders};
use crate::report::fmt_num;
use crate::{env, scenarios, Opts, Sizes, Ui};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One summary line: label, value, and OK/FAIL when it is a check.
pub(crate) fn line(label: &str, value: &str, check: Option<bool>) -> String {
    let mark = match check {
        Some(true) => "  OK",
        Some(false) => "  FAIL",
        None => "",
    };
    format!("  {label:<24} {value}{mark}\n")
}

pub fn run(opts: &Opts, ui: Ui) -> Result<ExitCode> {
    let sizes = Sizes::resolve(opts);
    let (users, tickets) = (sizes.burst_users, sizes.burst_tickets);
    ui.say("demo: starting a private redis-server with the module and a private MariaDB...");
    let servers = crate::servers(opts)?;
    ui.say("demo: schema migrated (ticketgate-sidecar migrate); starting the sidecar...");
    let event = format!("demo-{}", env::run_id());
    let mut r = servers.redis()?;
    let mut sidecar = servers.start_sidecar("demo")?;
    let () = redis::cmd("TICKET.INIT")
        .arg(&event)
        .arg(tickets)
        .query(&mut r)
        .context("TICKET.INIT")?;
    ui.say(&format!(
        "demo: event {event} with {tickets} tickets; {users} users claim at the same instant..."
    ));
    let per_conn: Vec<Vec<Request>> = (0..users)
        .map(|k| {
            let user = format!("user-{k}");
            let bytes = scenarios::claim_cmd(&event, &user);
            vec![Request { user, bytes }]
        })
        .collect();
    let (addr, threads, hidden) = (
        &servers.redis_addr,
        sizes.client_threads,
        ProgressBar::hidden(),
    );
    let res = load::closed_loop(addr, per_conn, threads, &|_, _| {}, &hidden)?;
    let t = scenarios::tally(&res);
    let (wait, poll) = (Duration::from_secs(60), Duration::from_millis(2));
    let synced = env::wait_drained(
        &servers,
        &event,
        t.winners.len() as i64,
        wait,
        poll,
        &mut sidecar,
    );
    let synced_at = synced.as_ref().ok().copied();
    let mut m = env::mysql_conn(&servers.tg_db)?;
    let redis_h = env::redis_holders(&mut r, &env::holders_key(&event))?;
    let mysql_h = env::mysql_active(&mut m, &event)?;
    let st = env::ticket_status(&mut r, &event)?;
    let redis_remaining = env::status_field(&st, "remaining")?;
    let mysql_remaining = env::mysql_stock(&mut m, &event)?;
    let conflicts = env::mysql_conflicts(&mut m, &event)?;
    let claim_problems = check_claims(tickets, users, &t.winners);
    let distinct: HashSet<i64> = t.winners.values().copied().collect();
    let holder_diff = diff_holders("Redis", &redis_h, "MySQL", &mysql_h);
    let replies_vs_redis = diff_holders("replies", &t.winners, "Redis", &redis_h);
    let stop_started = Instant::now();
    let clean = sidecar.stop();
    let stop_ms = ms(stop_started.elapsed());
    let _: redis::RedisResult<i64> = redis::cmd("TICKET.DROP")
        .arg(&event)
        .arg("FORCE")
        .query(&mut r);

    let numbers = match (distinct.iter().min(), distinct.iter().max()) {
        (Some(a), Some(b)) => format!("{} distinct, {a}..={b}", distinct.len()),
        _ => "0 distinct, none".into(),
    };
    let matched = match synced_at {
        Some(at) => format!(
            "{:.1} ms after the burst started",
            ms(at.max(res.end) - res.start)
        ),
        None => "not within 60 s".into(),
    };
    let mysql_stock = mysql_remaining.map_or("missing".to_string(), |v| v.to_string());
    let n = |v: usize| fmt_num(v as f64, 0);
    let winners = t.winners.len();
    let mut lines = vec![
        (
            "winners",
            n(winners),
            Some(winners as u64 == tickets.min(users)),
        ),
        (
            "sold-out replies",
            n(t.sold_out as usize),
            Some(t.sold_out + winners as u64 == users && t.violations.is_empty()),
        ),
        ("ticket numbers", numbers, Some(claim_problems.is_empty())),
    ];
    if let Some(l) = &res.latency {
        let (p50, p99, max) = (l.p50_us / 1000.0, l.p99_us / 1000.0, l.max_us / 1000.0);
        lines.push((
            "claim latency",
            format!("p50 {p50:.2} ms, p99 {p99:.2} ms, max {max:.2} ms"),
            None,
        ));
    }
    let stopped = if clean { "exit 0" } else { "not clean" };
    lines.extend([
        ("MySQL matched Redis", matched, Some(synced_at.is_some())),
        (
            "MySQL active rows",
            format!("{} == Redis holders {}", mysql_h.len(), redis_h.len()),
            Some(holder_diff.is_empty() && replies_vs_redis.is_empty()),
        ),
        (
            "remaining stock",
            format!("MySQL {mysql_stock} == Redis {redis_remaining}"),
            Some(mysql_remaining == Some(redis_remaining)),
        ),
        ("conflicts", conflicts.to_string(), Some(conflicts == 0)),
        (
            "sidecar stop (SIGTERM)",
            format!("{stopped} in {stop_ms:.0} ms"),
            Some(clean),
        ),
    ]);
    let problems: Vec<String> = claim_problems
        .into_iter()
        .chain(holder_diff)
        .chain(replies_vs_redis)
        .chain(t.violations)
        .chain(synced.err().map(|e| format!("{e:#}")))
        .chain(
            (mysql_remaining != Some(redis_remaining))
                .then(|| "remaining stock differs".to_string()),
        )
        .chain((conflicts != 0).then(|| format!("{conflicts} conflicts")))
        .collect();

    let mysql = if servers.private_mysql {
        "private MariaDB"
    } else {
        "MySQL"
    };
    let mut out = format!(
        "\nticketgate demo — {users} users, {tickets} tickets, one claim each at the same instant\n  \
         (redis-server {} with the module, {mysql} {}, sidecar draining into MySQL)\n\n",
        servers.redis_version(),
        servers.mysql_version()
    );
    for (label, value, check) in lines {
        out.push_str(&line(label, &value, check));
    }
    match problems.is_empty() {
        true => out.push_str("\nresult: OK — no oversell, no duplicates, MySQL matches Redis\n"),
        false => out.push_str("\nresult: FAILED\n"),
    }
    problems
        .iter()
        .for_each(|p| out.push_str(&format!("  - {p}\n")));
    ui.print(&out);
    drop(servers);
    Ok(match problems.is_empty() {
        true => ExitCode::SUCCESS,
        false => ExitCode::from(1),
    })
}
