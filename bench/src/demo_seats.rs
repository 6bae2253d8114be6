//! `ticketgate-bench demo-seats` (`bash scripts/demo.sh seats`): the seated
//! demo. Private Redis + MariaDB + sidecar; a venue of 2,000 seats (4
//! sections x 10 rows x 50); parties of 1 to 6 (1,000 by default,
//! `--burst-users`) each send one `TICKET.CLAIM E party COUNT n` at the
//! same instant from their own connection. Then: every seated party sits
//! together (adjacent seats of one row), no seat is sold twice, the other
//! parties got `NOTOGETHER` or `SOLDOUT`, MySQL's seats equal Redis's, and
//! `ticketgate-sidecar audit-seats` replays the sale from MySQL alone.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, ExitCode};
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use mysql::prelude::Queryable;

use crate::demo::line;
use crate::load::{self, Request};
use crate::{env, Opts, Sizes, Ui};

const SECTIONS: [&str; 4] = ["A", "B", "C", "D"];
const ROWS: i64 = 10;
const SEATS_PER_ROW: i64 = 50;
const LARGEST_PARTY: u64 = 6;

/// Each party's seats (user -> ids, ascending).
type Seating = BTreeMap<String, Vec<i64>>;

/// The venue: every row of 50 seats, no blocked positions, so seat `id`
/// is in row `(id - 1) / 50` of the whole venue.
fn venue() -> String {
    let rows: Vec<String> = (1..=ROWS)
        .map(|r| format!(r#"{{"name":"{r}","seats":{SEATS_PER_ROW}}}"#))
        .collect();
    let sections: Vec<String> = SECTIONS
        .iter()
        .map(|s| format!(r#"{{"name":"{s}","rows":[{}]}}"#, rows.join(",")))
        .collect();
    format!(r#"{{"sections":[{}]}}"#, sections.join(","))
}

fn party_size(k: u64) -> u64 {
    1 + (k * 7) % LARGEST_PARTY
}

/// Why `ids` (a party of `size`) do not sit together, if they do not.
fn apart(ids: &[i64], size: u64) -> Option<String> {
    let row = |id: i64| (id - 1) / SEATS_PER_ROW;
    let together = ids.len() as u64 == size
        && ids
            .windows(2)
            .all(|w| w[1] == w[0] + 1 && row(w[1]) == row(w[0]));
    (!together).then(|| format!("{size} seats wanted, got {ids:?}"))
}

pub fn run(opts: &Opts, ui: Ui) -> Result<ExitCode> {
    let parties = Sizes::resolve(opts).burst_users;
    let total = SECTIONS.len() as i64 * ROWS * SEATS_PER_ROW;
    ui.say("demo-seats: a private redis-server with the module, a private MariaDB, the sidecar...");
    let servers = crate::servers(opts)?;
    let event = format!("venue-{}", env::run_id());
    let mut r = servers.redis()?;
    let mut sidecar = servers.start_sidecar("demo-seats")?;
    let () = redis::cmd("TICKET.INIT")
        .arg(&event)
        .arg(total)
        .arg("LIMIT")
        .arg(LARGEST_PARTY)
        .arg("SEATS")
        .arg(venue())
        .query(&mut r)
        .context("TICKET.INIT ... SEATS")?;
    ui.say(&format!(
        "demo-seats: {total} seats; {parties} parties of 1-{LARGEST_PARTY} ask for seats together at the same instant..."
    ));
    let per_conn: Vec<Vec<Request>> = (0..parties)
        .map(|k| {
            vec![Request::claim_count(
                &event,
                format!("party-{k}"),
                party_size(k),
            )]
        })
        .collect();
    let hidden = ProgressBar::hidden();
    let res = load::closed_loop(&servers.redis_addr, per_conn, 4, &|_, _| {}, &hidden)?;
    let mut refused: BTreeMap<String, u64> = BTreeMap::new();
    let mut problems = Vec::new();
    for o in &res.outcomes {
        if let Err(e) = &o.reply {
            let code = e.split(' ').next().unwrap_or_default().to_owned();
            if code != "NOTOGETHER" && code != "SOLDOUT" {
                problems.push(format!("{}: unexpected reply {e}", o.user));
            }
            *refused.entry(code).or_default() += 1;
        }
    }
    let redis_seats = redis_seating(&mut r, &event, parties)?;
    let sold: usize = redis_seats.values().map(Vec::len).sum();
    let synced = env::wait_drained(
        &servers,
        &event,
        sold as i64,
        Duration::from_secs(60),
        Duration::from_millis(5),
        &mut sidecar,
    );
    let mut m = env::mysql_conn(&servers.tg_db)?;
    let mysql_seats = mysql_seating(&mut m, &event)?;
    let audit = audit_seats(&servers, &event);
    sidecar.stop();
    let mut lines = Vec::new();
    checks(&redis_seats, &mysql_seats, &mut problems, &mut lines);
    let redis_remaining = env::status_field(&env::ticket_status(&mut r, &event)?, "remaining")?;
    let mysql_remaining = env::mysql_stock(&mut m, &event)?;
    let stock_ok =
        mysql_remaining == Some(redis_remaining) && redis_remaining == total - sold as i64;
    lines.push((
        "remaining seats".into(),
        format!(
            "MySQL {} == Redis {redis_remaining} == {total} - {sold}",
            mysql_remaining.map_or("missing".to_owned(), |n| n.to_string())
        ),
        Some(stock_ok),
    ));
    lines.push((
        "refused parties".into(),
        format!("{refused:?}"),
        Some(!refused.is_empty()),
    ));
    let caught_up = synced.as_ref().map(|at| {
        let ms = (*at.max(&res.end) - res.start).as_secs_f64() * 1000.0;
        format!("{ms:.1} ms after the burst started")
    });
    lines.push((
        "MySQL caught up".into(),
        describe(&caught_up),
        Some(synced.is_ok()),
    ));
    lines.push(("audit-seats".into(), describe(&audit), Some(audit.is_ok())));
    problems.extend(synced.err().map(|e| format!("{e:#}")));
    problems.extend(audit.err().map(|e| format!("audit-seats: {e:#}")));
    problems.extend((!stock_ok).then(|| "remaining seats differ".to_owned()));
    let _: redis::RedisResult<i64> = redis::cmd("TICKET.DROP")
        .arg(&event)
        .arg("FORCE")
        .query(&mut r);
    print_summary(ui, &servers, parties, total, &lines, &problems);
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The seated parties' checks: together, no seat twice, MySQL == Redis.
fn checks(
    redis_seats: &Seating,
    mysql_seats: &Seating,
    problems: &mut Vec<String>,
    lines: &mut Vec<(String, String, Option<bool>)>,
) {
    let mut seen = BTreeSet::new();
    let before = problems.len();
    for (user, ids) in redis_seats {
        let k: u64 = user.trim_start_matches("party-").parse().unwrap_or(0);
        problems.extend(apart(ids, party_size(k)).map(|why| format!("{user} apart: {why}")));
        for id in ids {
            if !seen.insert(*id) {
                problems.push(format!("seat {id} sold twice"));
            }
        }
    }
    let sold: usize = redis_seats.values().map(Vec::len).sum();
    lines.push((
        "seated parties".into(),
        format!(
            "{} parties, {sold} seats, each party side by side in one row",
            redis_seats.len()
        ),
        Some(problems.len() == before && !redis_seats.is_empty()),
    ));
    let same = redis_seats == mysql_seats;
    if !same {
        problems.push(format!(
            "MySQL's seats differ from Redis's: {} parties vs {}",
            mysql_seats.len(),
            redis_seats.len()
        ));
    }
    lines.push((
        "MySQL seats == Redis".into(),
        format!("{} active orders", mysql_seats.len()),
        Some(same),
    ));
}

/// Every party's seats in Redis (`TICKET.ORDER`, pipelined).
fn redis_seating(r: &mut redis::Connection, event: &str, parties: u64) -> Result<Seating> {
    let mut pipe = redis::pipe();
    for k in 0..parties {
        pipe.cmd("TICKET.ORDER")
            .arg(event)
            .arg(format!("party-{k}"));
    }
    let orders: Vec<redis::Value> = pipe.query(r).context("TICKET.ORDER")?;
    let mut seating = Seating::new();
    for (k, order) in orders.into_iter().enumerate() {
        let redis::Value::Array(fields) = order else {
            continue;
        };
        if let Some(redis::Value::Array(ids)) = fields.get(1) {
            let ids = ids
                .iter()
                .filter_map(|v| redis::from_redis_value(v.clone()).ok())
                .collect();
            seating.insert(format!("party-{k}"), ids);
        }
    }
    Ok(seating)
}

/// Every active order's seats in MySQL.
fn mysql_seating(m: &mut mysql::Conn, event: &str) -> Result<Seating> {
    let rows: Vec<(String, i64)> = m.exec(
        "SELECT user_id, ticket_number FROM ticket_participation \
         WHERE event_id = ? AND status = 'active' ORDER BY ticket_number",
        (event,),
    )?;
    let mut seating = Seating::new();
    for (user, id) in rows {
        seating.entry(user).or_default().push(id);
    }
    Ok(seating)
}

/// `ticketgate-sidecar audit-seats --event E`: its summary line, or why not.
fn audit_seats(servers: &env::Servers, event: &str) -> Result<String> {
    let out = Command::new(&servers.sidecar_bin)
        .args(["audit-seats", "--event", event])
        .env("TICKETGATE_REDIS_URL", &servers.redis_url)
        .env("TICKETGATE_MYSQL_URL", &servers.tg_db)
        .output()
        .context("run ticketgate-sidecar audit-seats")?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match out.status.success() {
        true => Ok(text.lines().last().unwrap_or("exit 0").to_owned()),
        false => anyhow::bail!(
            "exit {}: {text} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

fn describe<E: std::fmt::Display>(r: &Result<String, E>) -> String {
    match r {
        Ok(v) => v.clone(),
        Err(e) => format!("{e:#}")
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

fn print_summary(
    ui: Ui,
    servers: &env::Servers,
    parties: u64,
    total: i64,
    lines: &[(String, String, Option<bool>)],
    problems: &[String],
) {
    let mut out = format!(
        "\nticketgate seated demo — {parties} parties of 1-{LARGEST_PARTY}, {total} seats, one claim each at the same instant\n  \
         (redis-server {} with the module, MariaDB {}, sidecar draining into MySQL)\n\n",
        servers.redis_version(),
        servers.mysql_version()
    );
    for (label, value, check) in lines {
        out.push_str(&line(label, value, *check));
    }
    out.push_str(match problems.is_empty() {
        true => "\nresult: OK — every party together, no seat twice, MySQL matches Redis, audit-seats passes\n",
        false => "\nresult: FAILED\n",
    });
    problems
        .iter()
        .for_each(|p| out.push_str(&format!("  - {p}\n")));
    ui.print(&out);
}
