//! `ticketgate-bench demo`: private Redis + MariaDB + sidecar, 1,000 users
//! burst an event of 100 tickets, then MySQL is checked against Redis.

use std::collections::HashSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::env;
use crate::load::{self, Request};
use crate::report::{check_claims, diff_holders, fmt_num};
use crate::resp::encode;
use crate::{Opts, Sizes, Ui};

/// One summary line: label, value, and OK/FAIL when it is a check.
fn line(label: &str, value: &str, check: Option<bool>) -> String {
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
            let mut bytes = Vec::new();
            encode(
                &mut bytes,
                &[b"TICKET.CLAIM", event.as_bytes(), user.as_bytes()],
            );
            vec![Request { user, bytes }]
        })
        .collect();
    let res = load::closed_loop(
        &servers.redis_addr,
        per_conn,
        sizes.client_threads,
        &|_, _| {},
        &indicatif::ProgressBar::hidden(),
    )?;
    let mut winners = std::collections::HashMap::new();
    let mut sold_out = 0u64;
    let mut other = Vec::new();
    for o in &res.outcomes {
        match &o.reply {
            Ok(Some(t)) => {
                winners.insert(o.user.clone(), *t);
            }
            Err(e) if e.starts_with("SOLDOUT") => sold_out += 1,
            Ok(None) => other.push("nil".to_string()),
            Err(e) => other.push(e.clone()),
        }
    }
    let synced = env::wait_drained(
        &servers,
        &event,
        winners.len() as i64,
        Duration::from_secs(60),
        Duration::from_millis(2),
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
    let claim_problems = check_claims(tickets, users, &winners);
    let distinct: HashSet<i64> = winners.values().copied().collect();
    let holder_diff = diff_holders("Redis", &redis_h, "MySQL", &mysql_h);
    let replies_vs_redis = diff_holders("replies", &winners, "Redis", &redis_h);

    let mut out = String::new();
    out.push_str(&format!(
        "\nticketgate demo — {users} users, {tickets} tickets, one claim each at the same instant\n"
    ));
    out.push_str(&format!(
        "  (redis-server {} with the module, {} {}, sidecar draining into MySQL)\n\n",
        servers.redis_version(),
        if servers.private_mysql {
            "private MariaDB"
        } else {
            "MySQL"
        },
        servers.mysql_version()
    ));
    out.push_str(&line(
        "winners",
        &fmt_num(winners.len() as f64, 0),
        Some(winners.len() as u64 == tickets.min(users)),
    ));
    out.push_str(&line(
        "sold-out replies",
        &fmt_num(sold_out as f64, 0),
        Some(sold_out + winners.len() as u64 == users && other.is_empty()),
    ));
    out.push_str(&line(
        "ticket numbers",
        &format!(
            "{} distinct, {}",
            distinct.len(),
            match (distinct.iter().min(), distinct.iter().max()) {
                (Some(a), Some(b)) => format!("{a}..={b}"),
                _ => "none".into(),
            }
        ),
        Some(claim_problems.is_empty()),
    ));
    if let Some(l) = &res.latency {
        out.push_str(&line(
            "claim latency",
            &format!(
                "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                l.p50_us / 1000.0,
                l.p99_us / 1000.0,
                l.max_us / 1000.0
            ),
            None,
        ));
    }
    out.push_str(&line(
        "MySQL matched Redis",
        &match synced_at {
            Some(t) => format!(
                "{:.1} ms after the burst started",
                t.max(res.end).duration_since(res.start).as_secs_f64() * 1000.0
            ),
            None => "not within 60 s".into(),
        },
        Some(synced_at.is_some()),
    ));
    out.push_str(&line(
        "MySQL active rows",
        &format!("{} == Redis holders {}", mysql_h.len(), redis_h.len()),
        Some(holder_diff.is_empty() && replies_vs_redis.is_empty()),
    ));
    out.push_str(&line(
        "remaining stock",
        &format!(
            "MySQL {} == Redis {redis_remaining}",
            mysql_remaining.map_or("missing".to_string(), |v| v.to_string())
        ),
        Some(mysql_remaining == Some(redis_remaining)),
    ));
    out.push_str(&line(
        "conflicts",
        &conflicts.to_string(),
        Some(conflicts == 0),
    ));

    let problems: Vec<String> = claim_problems
        .into_iter()
        .chain(holder_diff)
        .chain(replies_vs_redis)
        .chain(
            other
                .iter()
                .take(3)
                .map(|e| format!("unexpected reply {e:?}")),
        )
        .chain(synced.err().map(|e| format!("{e:#}")))
        .chain(
            (mysql_remaining != Some(redis_remaining))
                .then(|| "remaining stock differs".to_string()),
        )
        .chain((conflicts != 0).then(|| format!("{conflicts} conflicts")))
        .collect();
    let t = Instant::now();
    let clean = sidecar.stop();
    let _: redis::RedisResult<i64> = redis::cmd("TICKET.DROP")
        .arg(&event)
        .arg("FORCE")
        .query(&mut r);
    out.push_str(&line(
        "sidecar stop (SIGTERM)",
        &format!(
            "{} in {:.0} ms",
            if clean { "exit 0" } else { "not clean" },
            t.elapsed().as_secs_f64() * 1000.0
        ),
        Some(clean),
    ));
    if problems.is_empty() {
        out.push_str("\nresult: OK — no oversell, no duplicates, MySQL matches Redis\n");
    } else {
        out.push_str("\nresult: FAILED\n");
        for p in &problems {
            out.push_str(&format!("  - {p}\n"));
        }
    }
    ui.print(&out);
    drop(servers);
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
