//! `ticketgate-sidecar reconcile [--event E]`: compares Redis with MySQL.
//!
//! For each event (the one given, or every event known to either side) it
//! compares, user by user, the tickets each side has **sold** and **held**
//! (with the hold's deadline): Redis's `holders` hash plus its holds zset
//! against MySQL's live (`held`/`active`) participation rows. It also compares
//! `TICKET.STATUS remaining` with `ticket_stock.remaining_stock` (and `held`
//! with MySQL's held rows, when STATUS reports it), and prints every
//! difference. With allocations, `STATUS allocated` and each allocation's
//! free tickets and release time (`TICKET.ALLOCATIONS`) against MySQL's
//! live `ticket_allocation` rows (read only when Redis has any). Each
//! sold ticket's generation and scan ([`super::after_sale`]) against
//! MySQL's. Entries still in the log (`unsynced`) are reported too: until
//! the sidecar has written them, the two sides legitimately differ. So do
//! they while a due hold waits for the module's sweep (STATUS counts it
//! free at once) or the log moves as they are read: with `--wait`, such an
//! event is compared again until it agrees or the wait runs out.
//!
//! Before comparing, each event goes through the sidecar's loss checks
//! ([`crate::loss::quarantine`], read-only here: nothing is trimmed): an event
//! MySQL has quarantined, or one the checks find evidence against, is
//! reported `E: QUARANTINED (<reason>): <evidence> -- repair: ...` (`E:
//! LOST (vanished): ...` when Redis lost it entirely) and counts as drift,
//! naming the `rebuild` command that repairs it. An event MySQL has as
//! dropped (a written `op=drop`) prints `E: dropped`: not drift.
//!
//! An event whose first log entry beyond MySQL's offset has waited longer
//! than `--stuck-after` (by Redis's clock, which stamped it) is reported
//! `E: STUCK: ...` first: the sidecar is not writing it (a batch MySQL
//! keeps refusing, or no sidecar running), which its log and
//! `ticketgate_event_stuck_seconds` explain.
//! Exit status: 0 = consistent, 1 = drift, 2 = could not compare.

use std::collections::{BTreeSet, HashMap};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::after_sale;
use crate::io::mysql as db;
use crate::io::redis::connect::Conn;
use crate::io::redis::inspect::{
    first_after, read_allocations, read_event, read_status, stream_info, time_ms, Allocation,
    RedisEvent,
};
use crate::io::redis::scan::scan_all;
use crate::loss::quarantine::check;
use crate::loss::verify::{self, Row};
use crate::model::live::add_listing_holds;
use crate::model::{Evidence, Live};
use protocol::StreamId;

/// The report line of an event Redis lost or replaced (`live`: Redis has
/// a meta hash that a rebuild must overwrite with `--force`).
pub fn loss_line(event: &str, code: &str, text: &str, live: bool) -> String {
    let force = if live { " --force" } else { "" };
    let repair = format!("-- repair: ticketgate-sidecar rebuild --event {event} --apply{force}");
    match code {
        "vanished" => format!("{event}: LOST (vanished): {text} {repair}"),
        _ => format!("{event}: QUARANTINED ({code}): {text} {repair}"),
    }
}

/// What `reconcile` is asked.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only this event (else every event either side knows).
    pub only: Option<String>,
    /// How long to wait for the logs to drain and a change under way to
    /// settle.
    pub wait: Duration,
    /// An entry beyond MySQL's offset older than this is reported stuck.
    pub stuck_after: Duration,
}

/// Runs `reconcile`: every event (or `only`), after waiting up to `wait`
/// for the logs to drain and for differences with a change under way to
/// settle.
pub fn run(
    my: &mut mysql::Conn,
    rc: &mut Conn,
    redis_url: &str,
    opts: Options,
    stop: &AtomicBool,
) -> Result<ExitCode, String> {
    let rows = rows_by_event(my)?;
    let events: Vec<String> = match opts.only {
        Some(e) => vec![e],
        None => {
            let found = scan_all(redis_url, rc, protocol::keys::Part::Meta, "hash")
                .map_err(|e| format!("Redis: {e}"))?;
            let all: BTreeSet<String> = rows.keys().cloned().chain(found).collect();
            all.into_iter().collect()
        }
    };
    // Quarantined and dropped events never drain: do not wait for them.
    let draining: Vec<&String> = events
        .iter()
        .filter(|e| {
            rows.get(*e)
                .is_none_or(|r| !r.dropped && r.quarantine.is_none())
        })
        .collect();
    let deadline = Instant::now() + opts.wait;
    wait_drained(rc, &draining, deadline, stop)?;
    // read again: the sidecar may have written (or quarantined) meanwhile
    let rows = rows_by_event(my)?;
    let mut drift = 0usize;
    for e in &events {
        let mut report = settled_report(my, rc, e, rows.get(e), deadline, stop)?;
        if let Some(line) = stuck(rc, e, rows.get(e), opts.stuck_after)? {
            report.lines.insert(0, line);
            report.differences += 1;
        }
        for line in &report.lines {
            println!("{line}");
        }
        drift += report.differences;
    }
    // heal hook: healed events, with their lost writes (not drift).
    for line in
        crate::loss::heal::report::heal_lines(my, &events).map_err(|e| format!("MySQL: {e}"))?
    {
        println!("{line}");
    }
    if drift > 0 {
        println!(
            "DRIFT: {drift} difference(s) in {} event(s) checked",
            events.len()
        );
        Ok(ExitCode::from(1))
    } else {
        println!("consistent: {} event(s) checked", events.len());
        Ok(ExitCode::SUCCESS)
    }
}

/// The STUCK line of `e` (see [`stuck_line`]); none for an event that is
/// dropped or quarantined (its own line says why nothing is written).
fn stuck(
    rc: &mut Conn,
    e: &str,
    row: Option<&Row>,
    after: Duration,
) -> Result<Option<String>, String> {
    if row.is_some_and(|r| r.dropped || r.quarantine.is_some()) {
        return Ok(None);
    }
    let redis_err = |err: redis::RedisError| format!("Redis, event {e}: {err}");
    let offset = row.map_or(StreamId::ZERO, |r| r.offset);
    let first = first_after(rc.as_dyn(), e, offset).map_err(redis_err)?;
    let Some(first) = first else { return Ok(None) };
    let now = time_ms(rc.as_dyn()).map_err(redis_err)?;
    Ok(stuck_line(e, offset, first, now, after))
}

/// The line of `event` when `first`, its first log entry beyond MySQL's
/// `offset`, has waited longer than `after` at `now_ms` (Redis's clock).
pub fn stuck_line(
    event: &str,
    offset: StreamId,
    first: StreamId,
    now_ms: u64,
    after: Duration,
) -> Option<String> {
    let waited = Duration::from_millis(now_ms.saturating_sub(first.ms));
    (waited > after).then(|| {
        format!(
            "{event}: STUCK: entry {first} has waited {} s beyond MySQL's offset {offset}: the sidecar is not applying it -- see its log (\"event {event}: ... not applied\") and ticketgate_event_stuck_seconds{{event=\"{event}\"}}",
            waited.as_secs()
        )
    })
}

/// MySQL's rows, by event.
fn rows_by_event(my: &mut mysql::Conn) -> Result<HashMap<String, Row>, String> {
    let rows = verify::rows(my).map_err(|e| format!("MySQL: {e}"))?;
    Ok(rows.into_iter().map(|r| (r.event.clone(), r)).collect())
}

/// Waits until the logs of `events` are empty, or `deadline`.
fn wait_drained(
    rc: &mut Conn,
    events: &[&String],
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<(), String> {
    while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
        let mut pending = 0i64;
        for e in events {
            let r = read_event(rc.as_dyn(), e).map_err(|err| format!("Redis, event {e}: {err}"))?;
            pending += r.map_or(0, |r| r.unsynced);
        }
        if pending == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}

/// What reconcile says of one event.
#[derive(Debug, Default)]
struct Report {
    /// The lines to print: what differs, or that the event is fine.
    lines: Vec<String>,
    /// How many of the lines are differences.
    differences: usize,
    /// Whether a change was under way while the two sides were read, so
    /// that they may differ for a moment (see [`in_flight`]).
    in_flight: bool,
}

impl Report {
    fn one_difference(line: String) -> Report {
        Report {
            lines: vec![line],
            differences: 1,
            in_flight: false,
        }
    }

    fn fine(line: String) -> Report {
        Report {
            lines: vec![line],
            ..Report::default()
        }
    }
}

/// [`event_report`], made again every 100 ms while it differs with a change
/// under way, until `deadline`: a difference that outlasts the changes in
/// flight is drift.
fn settled_report(
    my: &mut mysql::Conn,
    rc: &mut Conn,
    e: &str,
    row: Option<&Row>,
    deadline: Instant,
    stop: &AtomicBool,
) -> Result<Report, String> {
    loop {
        let report = event_report(my, rc, e, row)?;
        let settled = report.differences == 0 || !report.in_flight;
        if settled || Instant::now() >= deadline || stop.load(Ordering::Relaxed) {
            return Ok(report);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What is wrong with one event, or that it is fine.
fn event_report(
    my: &mut mysql::Conn,
    rc: &mut Conn,
    e: &str,
    row: Option<&Row>,
) -> Result<Report, String> {
    let redis_err = |err: redis::RedisError| format!("Redis, event {e}: {err}");
    if let Some(line) = loss(rc, e, row).map_err(redis_err)? {
        return Ok(Report::one_difference(line));
    }
    if row.is_some_and(|r| r.dropped) {
        return Ok(Report::fine(format!("{e}: dropped")));
    }
    let log_before = log_position(rc, e).map_err(redis_err)?;
    let r = read_event(rc.as_dyn(), e).map_err(redis_err)?;
    if r.is_none() && row.is_some_and(|r| r.entries.is_none()) {
        return Ok(Report::fine(format!("{e}: only in MySQL, synced before V3 (dropped before release 0.3, which left no trace), not compared")));
    }
    let mut r = r;
    if let Some(r) = &mut r {
        r.allocations = read_allocations(rc.as_dyn(), e).map_err(redis_err)?;
    }
    let m = mysql_event(my, e, r.as_ref())?;
    let after = after_sale_lines(my, rc, e, (r.is_some(), m.is_some()))?;
    let log_moved = log_position(rc, e).map_err(redis_err)? != log_before;
    let mut lines = diff(e, r.as_ref(), m.as_ref());
    lines.extend(after);
    let (Some(r), true) = (&r, lines.is_empty()) else {
        return Ok(Report {
            differences: lines.len(),
            lines,
            in_flight: log_moved || r.as_ref().is_some_and(in_flight),
        });
    };
    let (sold, held) = totals(&r.users);
    Ok(Report::fine(format!(
        "{e}: ok ({} holders: {sold} tickets sold, {held} held; remaining {})",
        r.users.len(),
        r.remaining
    )))
}

/// The generations and scans that differ, when both sides have `e`.
fn after_sale_lines(
    my: &mut mysql::Conn,
    rc: &mut Conn,
    e: &str,
    (in_redis, in_mysql): (bool, bool),
) -> Result<Vec<String>, String> {
    if !(in_redis && in_mysql) {
        return Ok(Vec::new());
    }
    let r =
        after_sale::redis_side(rc.as_dyn(), e).map_err(|err| format!("Redis, event {e}: {err}"))?;
    let m = after_sale::mysql_side(my, e).map_err(|err| format!("MySQL, event {e}: {err}"))?;
    Ok(after_sale::lines(e, &r, &m))
}

/// MySQL's view of `e` (`redis`: Redis's, which says whether it is seated).
fn mysql_event(
    my: &mut mysql::Conn,
    e: &str,
    redis: Option<&RedisEvent>,
) -> Result<Option<MysqlEvent>, String> {
    let my_err = |err: mysql::Error| format!("MySQL, event {e}: {err}");
    let mut users = db::live_users(my, e).map_err(my_err)?;
    add_listing_holds(&mut users, db::listing_holds(my, e).map_err(my_err)?);
    let remaining = db::remaining_stock(my, e).map_err(my_err)?;
    // a seated event's (read only then: the table is V6's)
    let categories = match redis.is_some_and(|r| r.categories.is_some()) {
        true => db::category_stocks(my, e).map_err(my_err)?,
        false => Vec::new(),
    };
    // (read only then: the table is V8's, and a plain event needs no
    // grant on it)
    let allocated = redis
        .is_some_and(|r| r.allocated > 0 || r.allocations.as_ref().is_some_and(|a| !a.is_empty()));
    let allocations = match allocated {
        true => db::live_allocations(my, e).map_err(my_err)?,
        false => Vec::new(),
    };
    Ok(
        (remaining.is_some() || !users.is_empty()).then_some(MysqlEvent {
            users,
            remaining,
            categories,
            allocations,
        }),
    )
}

/// The last id of `e`'s log (`None` without a log): reading it before
/// Redis's side and after MySQL's tells whether the log moved meanwhile.
fn log_position(rc: &mut Conn, e: &str) -> redis::RedisResult<Option<StreamId>> {
    Ok(stream_info(rc.as_dyn(), e)?.map(|(last, _, _)| last))
}

/// How long after its deadline a hold may still be held in Redis's keys:
/// the module's sweep expires it within `ticket.sweep-interval` (100 ms by
/// default), and this host's clock may be a little off Redis's.
const EXPIRY_SLACK_MS: i64 = 2_000;

/// Whether the two sides may differ only for a moment: the log holds
/// entries MySQL has not written, or a hold is at or past its deadline
/// (STATUS counts it free at once; MySQL holds it until its expiry is
/// logged and written).
fn in_flight(r: &RedisEvent) -> bool {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let due = |live: &Live| live.held_until.is_some_and(|t| t <= now + EXPIRY_SLACK_MS);
    r.unsynced > 0 || r.users.values().any(due)
}

/// The loss line of `e`: quarantined in MySQL, or evidence found now.
fn loss(rc: &mut Conn, e: &str, row: Option<&Row>) -> redis::RedisResult<Option<String>> {
    let Some(row) = row else { return Ok(None) };
    let live = read_status(rc.as_dyn(), e)?.is_some_and(|m| m.status != "restoring");
    if let Some(stored) = &row.quarantine {
        let (reason, text) = Evidence::from_stored(stored);
        let code = reason.map_or("quarantined", |r| r.code());
        return Ok(Some(loss_line(e, code, &text, live)));
    }
    if row.dropped || row.offset == protocol::StreamId::ZERO {
        return Ok(None);
    }
    let facts = verify::redis_facts(rc.as_dyn(), e, Some(row.offset))?;
    Ok(check(e, &row.facts(), &facts).map(|ev| loss_line(e, ev.reason.code(), &ev.text, live)))
}

/// MySQL's view of one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MysqlEvent {
    /// Users with live (held or sold) tickets.
    pub users: HashMap<String, Live>,
    /// `remaining_stock`, if the stock row exists.
    pub remaining: Option<i64>,
    /// A seated event's category stocks (sorted by name).
    pub categories: Vec<(String, i64)>,
    /// Its live allocations (sorted by name).
    pub allocations: Vec<Allocation>,
}

/// Tickets (sold, held) over all users.
pub fn totals(users: &HashMap<String, Live>) -> (usize, usize) {
    users
        .values()
        .fold((0, 0), |(s, h), l| (s + l.sold.len(), h + l.held.len()))
}

/// Every difference between the two views, one human-readable line each.
pub fn diff(event: &str, redis: Option<&RedisEvent>, mysql: Option<&MysqlEvent>) -> Vec<String> {
    let mut out = Vec::new();
    let (r, m) = match (redis, mysql) {
        (None, None) => return vec![format!("{event}: unknown to both Redis and MySQL")],
        // In MySQL, not in Redis, and no drop written: Redis lost it.
        (None, Some(_)) => {
            return vec![format!(
                "{event}: LOST: in MySQL but not in Redis, and no drop was applied -- repair: ticketgate-sidecar rebuild --event {event} --apply"
            )]
        }
        (Some(r), None) => (r, &MysqlEvent::default()),
        (Some(r), Some(m)) => (r, m),
    };
    if r.unsynced > 0 {
        out.push(format!(
            "{event}: {} log entries not yet applied to MySQL",
            r.unsynced
        ));
    }
    match m.remaining {
        None => out.push(format!(
            "{event}: no ticket_stock row in MySQL (Redis remaining {})",
            r.remaining
        )),
        Some(s) if s != r.remaining => out.push(format!(
            "{event}: remaining differs: Redis {} MySQL {s}",
            r.remaining
        )),
        Some(_) => {}
    }
    if let Some(c) = r.categories.as_ref().filter(|c| **c != m.categories) {
        let show = |v: &[(String, i64)]| {
            let v: Vec<String> = v.iter().map(|(n, k)| format!("{n}={k}")).collect();
            format!("[{}]", v.join(" "))
        };
        out.push(format!(
            "{event}: free seats by category differ: Redis {} MySQL {}",
            show(c),
            show(&m.categories)
        ));
    }
    out.extend(allocation_lines(event, r, &m.allocations));
    let held = totals(&m.users).1 as i64;
    if let Some(h) = r.held.filter(|h| *h != held) {
        out.push(format!("{event}: held differs: Redis {h} MySQL {held}"));
    }
    out.extend(user_lines(event, &r.users, &m.users));
    out
}

/// The event's free allocated tickets (`STATUS` `allocated`) against
/// MySQL's live allocations, and each allocation (free tickets, release
/// time) when Redis listed them (`TICKET.ALLOCATIONS`).
fn allocation_lines(event: &str, r: &RedisEvent, mysql: &[Allocation]) -> Vec<String> {
    let mut out = Vec::new();
    let allocated: i64 = mysql.iter().map(|a| a.1).sum();
    if r.allocated != allocated {
        out.push(format!(
            "{event}: allocated differs: Redis {} MySQL {allocated}",
            r.allocated
        ));
    }
    let Some(redis) = &r.allocations else {
        return out;
    };
    let show = |a: Option<&Allocation>| match a {
        None => "none".to_owned(),
        Some((_, free, release)) => {
            let at = release.map_or(String::new(), |t| format!(", releasing at {t}"));
            format!("{free} free{at}")
        }
    };
    let names: BTreeSet<&String> = redis.iter().chain(mysql).map(|a| &a.0).collect();
    for name in names {
        let (a, b) = (
            redis.iter().find(|a| &a.0 == name),
            mysql.iter().find(|a| &a.0 == name),
        );
        if a != b {
            out.push(format!(
                "{event}: allocation {name:?} differs: Redis {} MySQL {}",
                show(a),
                show(b)
            ));
        }
    }
    out
}

/// One line per user whose tickets differ.
fn user_lines(
    event: &str,
    redis: &HashMap<String, Live>,
    mysql: &HashMap<String, Live>,
) -> Vec<String> {
    let users: BTreeSet<&String> = redis.keys().chain(mysql.keys()).collect();
    let mut out = Vec::new();
    for u in users {
        match (redis.get(u), mysql.get(u)) {
            (Some(a), Some(b)) if a != b => out.push(format!(
                "{event}: user {u:?} has {} in Redis but {} in MySQL",
                a.describe(),
                b.describe()
            )),
            (Some(a), None) => out.push(format!(
                "{event}: user {u:?} has {} in Redis, nothing live in MySQL",
                a.describe()
            )),
            (None, Some(b)) => out.push(format!(
                "{event}: user {u:?} has {} in MySQL, not in Redis",
                b.describe()
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::live::{mysql_users, redis_users};

    fn sold(t: &[i64]) -> Live {
        Live {
            sold: t.to_vec(),
            ..Live::default()
        }
    }

    fn held(t: &[i64], until: i64) -> Live {
        Live {
            held: t.to_vec(),
            held_until: Some(until),
            ..Live::default()
        }
    }

    fn users(v: &[(&str, Live)]) -> HashMap<String, Live> {
        v.iter().map(|(u, l)| (u.to_string(), l.clone())).collect()
    }

    fn r(v: &[(&str, Live)], remaining: i64, unsynced: i64) -> RedisEvent {
        RedisEvent {
            users: users(v),
            remaining,
            unsynced,
            held: None,
            categories: None,
            allocated: 0,
            allocations: None,
        }
    }

    fn m(v: &[(&str, Live)], remaining: Option<i64>) -> MysqlEvent {
        MysqlEvent {
            users: users(v),
            remaining,
            categories: Vec::new(),
            allocations: Vec::new(),
        }
    }

    #[test]
    fn a_seated_event_compares_free_seats_by_category() {
        let mut a = r(&[("u1", sold(&[1]))], 3, 0);
        let mut b = m(&[("u1", sold(&[1]))], Some(3));
        let cats = |f: i64| vec![("box".to_string(), 1), ("front".to_string(), f)];
        a.categories = Some(cats(2));
        b.categories = cats(2);
        assert!(diff("e", Some(&a), Some(&b)).is_empty());
        b.categories = cats(1);
        assert_eq!(
            diff("e", Some(&a), Some(&b)),
            ["e: free seats by category differ: Redis [box=1 front=2] MySQL [box=1 front=1]"]
        );
    }

    #[test]
    fn allocations_are_compared_by_free_tickets_and_release_time() {
        let mut a = r(&[], 5, 0);
        let mut b = m(&[], Some(5));
        let fan = |free, release| ("fan".to_string(), free, release);
        a.allocated = 3;
        a.allocations = Some(vec![fan(3, Some(99))]);
        b.allocations = vec![fan(3, Some(99))];
        assert!(diff("e", Some(&a), Some(&b)).is_empty());
        b.allocations = vec![fan(2, Some(99)), ("kill".to_string(), 0, None)];
        assert_eq!(
            diff("e", Some(&a), Some(&b)),
            [
                "e: allocated differs: Redis 3 MySQL 2",
                "e: allocation \"fan\" differs: Redis 3 free, releasing at 99 MySQL 2 free, releasing at 99",
                "e: allocation \"kill\" differs: Redis none MySQL 0 free",
            ]
        );
        // a module without TICKET.ALLOCATIONS: the total only
        a.allocations = None;
        assert_eq!(diff("e", Some(&a), Some(&b)).len(), 1);
    }

    #[test]
    fn consistent_is_empty() {
        let a = r(&[("u1", sold(&[1])), ("u2", held(&[2, 3], 9))], 8, 0);
        let b = m(&[("u2", held(&[2, 3], 9)), ("u1", sold(&[1]))], Some(8));
        assert!(diff("e", Some(&a), Some(&b)).is_empty());
    }

    #[test]
    fn reports_each_kind_of_drift() {
        let mut a = r(
            &[
                ("u1", sold(&[1])),
                ("u2", sold(&[2])),
                ("u4", held(&[4, 5], 1000)),
            ],
            8,
            3,
        );
        a.held = Some(2);
        let b = m(
            &[
                ("u1", sold(&[5])),
                ("u3", sold(&[3])),
                ("u4", held(&[4, 5], 2000)),
            ],
            Some(7),
        );
        let d = diff("e", Some(&a), Some(&b));
        assert_eq!(d.len(), 6, "{d:?}");
        assert!(d[0].contains("3 log entries"));
        assert!(d[1].contains("Redis 8 MySQL 7"));
        let has = |s: &str| d.iter().any(|l| l.contains(s));
        assert!(has(
            "\"u1\" has sold ticket 1 in Redis but sold ticket 5 in MySQL"
        ));
        assert!(has(
            "\"u2\" has sold ticket 2 in Redis, nothing live in MySQL"
        ));
        assert!(has("\"u3\" has sold ticket 3 in MySQL, not in Redis"));
        assert!(has("\"u4\" has held tickets 4,5 until 1970-01-01 00:00:01.000 in Redis but held tickets 4,5 until 1970-01-01 00:00:02.000"));
        a.held = Some(1);
        assert!(diff("e", Some(&a), Some(&b))
            .iter()
            .any(|l| l.contains("held differs: Redis 1 MySQL 2")));
        assert_eq!(diff("e", Some(&a), None).len(), 6);
        assert!(diff("e", None, Some(&b))[0].contains("e: LOST"));
        assert_eq!(diff("e", None, None).len(), 1);
    }

    #[test]
    fn an_entry_waiting_longer_than_the_bound_is_named_stuck() {
        let (offset, first) = (StreamId::new(1_000, 3), StreamId::new(5_000, 0));
        let after = Duration::from_secs(60);
        assert_eq!(stuck_line("e", offset, first, 65_000, after), None);
        let line = stuck_line("e", offset, first, 65_001, after).unwrap_or_default();
        assert!(
            line.starts_with("e: STUCK: entry 5000-0 has waited 60 s beyond MySQL's offset 1000-3"),
            "{line}"
        );
        assert!(
            line.contains("ticketgate_event_stuck_seconds{event=\"e\"}"),
            "{line}"
        );
        // a Redis clock behind the entry's id is no wait at all
        assert_eq!(stuck_line("e", offset, first, 10, Duration::ZERO), None);
    }

    #[test]
    fn loss_lines_name_event_and_repair() {
        let l = loss_line("e9", "log_restarted", "event e9: the log", true);
        assert_eq!(l, "e9: QUARANTINED (log_restarted): event e9: the log -- repair: ticketgate-sidecar rebuild --event e9 --apply --force");
        let l = loss_line("e9", "vanished", "gone", false);
        assert!(
            l.starts_with("e9: LOST (vanished): gone") && l.ends_with("--apply"),
            "{l}"
        );
    }

    #[test]
    fn parses_both_sides() {
        let holders: HashMap<String, String> = [("a", "3"), ("b", "4,5"), ("c", "x")]
            .iter()
            .map(|(u, v)| (u.to_string(), v.to_string()))
            .collect();
        let holds: HashMap<String, i64> = [("b".to_string(), 77)].into_iter().collect();
        let redis = redis_users(holders, &holds);
        assert_eq!(redis["a"], sold(&[3]));
        assert_eq!(redis["b"], held(&[4, 5], 77));
        assert_eq!(redis["c"], sold(&[-1]));
        let row = |u: &str, t, s: &str, until| (u.to_string(), t, s.to_string(), until);
        let mysql = mysql_users(vec![
            row("a", 3, "active", None),
            row("b", 4, "held", Some(77)),
            row("b", 5, "held", Some(77)),
        ]);
        assert_eq!(mysql["a"], redis["a"]);
        assert_eq!(mysql["b"], redis["b"]);
        assert_eq!(totals(&mysql), (1, 2));
    }

    #[test]
    fn a_buyers_hold_of_a_listed_ticket_joins_their_held_tickets() {
        let row = |u: &str, t, s: &str, until| (u.to_string(), t, s.to_string(), until);
        let mut mysql = mysql_users(vec![row("b", 5, "held", Some(70))]);
        let listing = |u: &str, t, until| (u.to_string(), t, until);
        add_listing_holds(
            &mut mysql,
            vec![listing("b", 2, Some(77)), listing("c", 9, Some(80))],
        );
        assert_eq!(mysql["b"], held(&[2, 5], 77));
        assert_eq!(mysql["c"], held(&[9], 80));
    }
}
