//! The verifier: a daemon thread that asks, for every event MySQL has
//! synced, whether Redis still holds that event (see [`crate::loss::quarantine`]).
//!
//! It runs every `--verify-interval` and whenever the reader asks for a
//! round ([`Rounds`]): at every Redis connect, before it reads. Per event — not dropped, not quarantined, offset past `0-0` — in
//! one MySQL transaction under the offset row lock (so no writer commits
//! meanwhile): `TICKET.STATUS` and `XINFO STREAM`; if the incarnation and
//! the log's last id agree with MySQL, `XTRIM MINID = next(offset)` and
//! `XINFO STREAM` again for the entry count. (Trimming only after the
//! first check keeps a log that restarted below the offset intact for
//! `rebuild` to report.) Evidence quarantines the event in MySQL, logs an
//! error naming the event and the evidence, and sets the metrics; a row
//! from before V3 without an entry count adopts the one Redis shows.
//!
//! The same fact gathering, read-only (no XTRIM, the written entries still
//! in the log counted instead), serves `reconcile`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use mysql::TxOpts;
use redis::ConnectionLike;

use crate::batch::{journal, lock_offset};
use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::metrics::Metrics;
use crate::io::mysql as db;
use crate::io::redis::connect::Conn;
use crate::io::redis::inspect::{count_upto, read_status, stream_info};
use crate::io::rounds::{take_request, Rounds};
use crate::loss::quarantine::{
    adopt, check, check_identity, Adopt, LogInfo, MysqlFacts, RedisFacts,
};
use crate::model::Evidence;
use protocol::StreamId;

/// Most written-but-untrimmed entries reconcile counts in a log.
const COUNT_CAP: usize = 1_000_000;

/// What MySQL has about one event for the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub event: String,
    pub offset: StreamId,
    pub entries: Option<u64>,
    pub incarnation: Option<String>,
    pub dropped: bool,
    /// `quarantine_reason` while quarantined.
    pub quarantine: Option<String>,
}

impl Row {
    /// True when the verifier checks it.
    pub fn checked(&self) -> bool {
        !self.dropped && self.quarantine.is_none() && self.offset > StreamId::ZERO
    }

    /// The MySQL facts of [`check`].
    pub fn facts(&self) -> MysqlFacts {
        MysqlFacts {
            offset: self.offset,
            entries: self.entries,
            incarnation: self.incarnation.clone(),
        }
    }
}

type RawRow = (
    String,
    Option<String>,
    Option<i64>,
    Option<String>,
    bool,
    Option<String>,
);

const ROWS_SQL: &str =
    "SELECT e.event_id, o.last_stream_id, o.entries, e.incarnation, e.dropped_at IS NOT NULL, \
     IF(e.quarantined_at IS NULL, NULL, COALESCE(e.quarantine_reason, 'quarantined')) \
     FROM ticket_event e LEFT JOIN ticket_sync_offset o ON o.event_id = e.event_id";

fn row_of(r: RawRow) -> Row {
    Row {
        event: r.0,
        offset: r
            .1
            .and_then(|t| StreamId::parse(&t))
            .unwrap_or(StreamId::ZERO),
        entries: r.2.map(|n| n.max(0) as u64),
        incarnation: r.3,
        dropped: r.4,
        quarantine: r.5,
    }
}

/// Every event MySQL has.
pub fn rows(my: &mut impl Queryable) -> Result<Vec<Row>, mysql::Error> {
    let raw: Vec<RawRow> = my.query(ROWS_SQL)?;
    Ok(raw.into_iter().map(row_of).collect())
}

/// One event's row, if MySQL has it.
pub fn row(my: &mut impl Queryable, event: &str) -> Result<Option<Row>, mysql::Error> {
    let raw: Option<RawRow> =
        my.exec_first(format!("{ROWS_SQL} WHERE e.event_id = ?"), (event,))?;
    Ok(raw.map(row_of))
}

/// Redis's facts about `event`; with `count_below`, the entries at or
/// below that offset still in the log are counted (reconcile, no trim).
/// They are counted before `XINFO STREAM`: a trim by a running sidecar in
/// between then counts an entry twice (no alarm), never not at all.
pub fn redis_facts(
    conn: &mut dyn ConnectionLike,
    event: &str,
    count_below: Option<StreamId>,
) -> redis::RedisResult<RedisFacts> {
    let written_present = match count_below {
        Some(offset) => count_upto(conn, event, offset, COUNT_CAP)?,
        None => 0,
    };
    let meta = read_status(conn, event)?.map(|m| m.incarnation);
    let log = stream_info(conn, event)?.map(|(last_generated, entries_added, length)| LogInfo {
        last_generated,
        entries_added,
        length,
        written_present,
    });
    Ok(RedisFacts { meta, log })
}

/// Settings of the verifier thread.
#[derive(Debug, Clone)]
pub struct Settings {
    pub redis_url: String,
    pub mysql_url: String,
    pub cluster: bool,
    pub interval: Duration,
}

/// Connections of the verifier, opened on demand.
#[derive(Default)]
struct Conns {
    my: Option<mysql::Conn>,
    rc: Option<Conn>,
}

/// The thread: a round every `interval`, and one whenever one is asked for.
pub fn verifier(cfg: Settings, rounds: Arc<Rounds>, metrics: Arc<Metrics>, stop: Arc<AtomicBool>) {
    let mut conns = Conns::default();
    let mut last: Option<Instant> = None;
    let mut served = 0;
    let mut backoff = Backoff::standard();
    while !stop.load(Ordering::Relaxed) {
        let due = last.is_none_or(|t| t.elapsed() >= cfg.interval);
        let asked = rounds.asked();
        // heal hook: a writer saw a divergence: a round now.
        if !due && asked <= served && !take_request() {
            // Woken at once when the reader asks for a round.
            rounds.wait_asked(served, Duration::from_millis(20));
            continue;
        }
        last = Some(Instant::now());
        if let Err(e) = round(&cfg, &mut conns, &metrics, &stop) {
            log::warn!("verifier: round not finished, will retry: {e}");
            conns = Conns::default();
            sleep_unless(&stop, backoff.next_delay());
            last = None;
            continue;
        }
        served = asked;
        rounds.finished(asked);
        backoff.reset();
    }
}

/// Checks every synced event once, then refreshes the quarantine metrics.
fn round(
    cfg: &Settings,
    c: &mut Conns,
    metrics: &Metrics,
    stop: &AtomicBool,
) -> Result<(), String> {
    if c.my.is_none() {
        let my = db::connect_locking(&cfg.mysql_url);
        c.my = Some(my.map_err(|e| format!("MySQL: {e}"))?);
    }
    if c.rc.is_none() {
        let conn = Conn::open(&cfg.redis_url, Duration::from_secs(10), cfg.cluster);
        c.rc = Some(conn.map_err(|e| format!("Redis: {e}"))?);
    }
    let (Some(my), Some(rc)) = (c.my.as_mut(), c.rc.as_mut()) else {
        return Ok(());
    };
    let all = rows(my).map_err(|e| format!("MySQL: {e}"))?;
    for r in all.iter().filter(|r| r.checked()) {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let found = match verify_event(my, rc.as_dyn(), &r.event, metrics) {
            Ok(found) => found,
            // One event Redis answers with an error (a key of the wrong
            // type, say) must not hold up the round, nor the reader that
            // waits for it; a broken connection ends the round.
            Err(Failure::Event(e)) => {
                log::warn!("verifier: {e}; checking the other events");
                None
            }
            Err(Failure::Connection(e)) => return Err(e),
        };
        if let Some(ev) = found {
            log::error!(
                "event {}: QUARANTINED ({}): {} -- nothing more of it is applied; repair: ticketgate-sidecar rebuild --event {} --apply [--force]",
                r.event,
                ev.reason.code(),
                ev.text,
                r.event
            );
            metrics.quarantine(&r.event, ev.reason.code());
        }
    }
    let now = rows(my).map_err(|e| format!("MySQL: {e}"))?;
    metrics.set_quarantined(quarantined(&now));
    Ok(())
}

/// Quarantined events and their reason codes.
pub fn quarantined(rows: &[Row]) -> BTreeMap<String, String> {
    rows.iter()
        .filter_map(|r| {
            let stored = r.quarantine.as_deref()?;
            let code = match Evidence::from_stored(stored) {
                (Some(reason), _) => reason.code().to_owned(),
                (None, _) => "unknown".to_owned(),
            };
            Some((r.event.clone(), code))
        })
        .collect()
}

/// Why one event could not be checked.
enum Failure {
    /// Redis answered this event's commands with an error.
    Event(String),
    /// A connection failed: the round ends and starts over.
    Connection(String),
}

/// Checks one event under its offset row lock; quarantines it on evidence.
fn verify_event(
    my: &mut mysql::Conn,
    rc: &mut dyn ConnectionLike,
    event: &str,
    metrics: &Metrics,
) -> Result<Option<Evidence>, Failure> {
    let my_err = |e: mysql::Error| Failure::Connection(format!("MySQL, event {event}: {e}"));
    let redis_err = |e: redis::RedisError| redis_failure(event, e);
    let mut tx = my.start_transaction(TxOpts::default()).map_err(my_err)?;
    // An offset row locked elsewhere (a stuck batch, a hand-held lock)
    // skips this event for this round, not the round.
    lock_offset(&mut tx, event).map_err(|e| match db::is_lock_wait(&e) {
        true => Failure::Event(format!("MySQL, event {event}: {e}")),
        false => my_err(e),
    })?;
    let Some(r) = row(&mut tx, event).map_err(my_err)?.filter(Row::checked) else {
        return Ok(None);
    };
    let m = r.facts();
    let before = redis_facts(rc, event, None).map_err(redis_err)?;
    // heal hook: a log of this incarnation that lost writes is
    // healed here, or is evidence; see `loss::heal`.
    let mut intact = false;
    if before.meta == Some(m.incarnation.clone()) && before.log.is_some() {
        use crate::loss::heal::executor::{check as heal_check, Error as HealError, Verdict};
        match heal_check(&mut tx, rc, event, m.offset) {
            Ok(Verdict::Intact) => intact = true,
            Ok(Verdict::Healed(report)) => {
                tx.commit().map_err(my_err)?;
                crate::loss::heal::report::announce(event, &report, metrics);
                heal_done(rc, event).map_err(redis_err)?;
                return Ok(None);
            }
            Ok(Verdict::Quarantine(ev)) => {
                db::quarantine(&mut tx, event, &ev).map_err(my_err)?;
                tx.commit().map_err(my_err)?;
                return Ok(Some(ev));
            }
            Err(HealError::Mysql(e)) => return Err(my_err(e)),
            Err(HealError::Redis(e)) => return Err(redis_err(e)),
        }
    }
    let mut evidence = check_identity(event, &m, &before);
    if evidence.is_none() {
        // heal hook: name the anchor in Redis before trimming.
        let anchor = journal::stored_anchor(&mut tx, event).map_err(my_err)?;
        journal::trim(rc, event, m.offset, anchor.as_deref()).map_err(redis_err)?;
        let after = redis_facts(rc, event, None).map_err(redis_err)?;
        evidence = check(event, &m, &after);
        if let (None, Some(a)) = (&evidence, adopt(&m, &after)) {
            store_adopted(&mut tx, event, &a).map_err(my_err)?;
        }
    }
    if let Some(ev) = &evidence {
        db::quarantine(&mut tx, event, ev).map_err(my_err)?;
    }
    tx.commit().map_err(my_err)?;
    if intact && evidence.is_none() {
        heal_done(rc, event).map_err(redis_err)?;
    }
    Ok(evidence)
}

/// heal hook: the event is healed, or had nothing to heal: the new
/// primary may forget whom it answered since its promotion
/// (`TICKET.HEALED`; a no-op, nothing replicated, once done).
fn heal_done(rc: &mut dyn ConnectionLike, event: &str) -> Result<(), redis::RedisError> {
    redis::cmd("TICKET.HEALED").arg(event).query::<i64>(rc)?;
    Ok(())
}

/// A Redis error of `event`: the connection's (the round stops) or the
/// event's alone (the round goes on).
fn redis_failure(event: &str, e: redis::RedisError) -> Failure {
    let text = format!("Redis, event {event}: {e}");
    let connection =
        e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout();
    match connection {
        true => Failure::Connection(text),
        false => Failure::Event(text),
    }
}

/// Stores what a row from before V3 adopts.
fn store_adopted(tx: &mut impl Queryable, event: &str, a: &Adopt) -> Result<(), mysql::Error> {
    let n = a.entries;
    tx.exec_drop(
        "UPDATE ticket_sync_offset SET entries = ? WHERE event_id = ? AND entries IS NULL",
        (n as i64, event),
    )?;
    log::info!(
        "event {event}: ticket_sync_offset.entries was unknown (a row from before V3); adopted {n}, the entries Redis's log deleted (entries-added - length after trimming)"
    );
    if let Some(inc) = &a.incarnation {
        tx.exec_drop(
            "UPDATE ticket_event SET incarnation = ? WHERE event_id = ? AND incarnation IS NULL",
            (inc, event),
        )?;
        log::info!(
            "event {event}: adopted Redis's incarnation {inc} (its init was applied by a sidecar from before V3)"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(event: &str, quarantine: Option<&str>, dropped: bool, offset: u64) -> Row {
        Row {
            event: event.into(),
            offset: StreamId::new(offset, 0),
            entries: Some(1),
            incarnation: None,
            dropped,
            quarantine: quarantine.map(str::to_owned),
        }
    }

    #[test]
    fn rounds_are_waited_for_by_number() {
        let rounds = Rounds::default();
        let stop = AtomicBool::new(false);
        let n = rounds.ask();
        assert!(!rounds.wait(n, Duration::from_millis(50), &stop));
        rounds.finished(n);
        assert!(rounds.wait(n, Duration::ZERO, &stop));
        assert!(!rounds.wait_asked(n, Duration::from_millis(10)));
        assert!(rounds.wait_asked(n - 1, Duration::ZERO));
        let stopped = AtomicBool::new(true);
        assert!(!rounds.wait(rounds.ask(), Duration::from_secs(5), &stopped));
    }

    #[test]
    fn a_round_finished_by_another_thread_ends_the_wait() {
        let rounds = Arc::new(Rounds::default());
        let n = rounds.ask();
        let r = rounds.clone();
        let waiter = std::thread::spawn(move || {
            let started = Instant::now();
            let done = r.wait(n, Duration::from_secs(10), &AtomicBool::new(false));
            (done, started.elapsed())
        });
        std::thread::sleep(Duration::from_millis(30));
        rounds.finished(n);
        let (done, waited) = waiter.join().unwrap();
        assert!(done);
        // Woken by `finished`, not by the 10 s limit (a generous bound
        // for a loaded machine).
        assert!(waited < Duration::from_secs(5), "{waited:?}");
    }

    #[test]
    fn checks_only_live_synced_events() {
        assert!(r("a", None, false, 5).checked());
        assert!(!r("a", Some("vanished: x"), false, 5).checked());
        assert!(!r("a", None, true, 5).checked());
        assert!(!r("a", None, false, 0).checked());
    }

    #[test]
    fn lists_quarantined_events_with_codes() {
        let all = [
            r("a", Some("log_restarted: the log"), false, 5),
            r("b", None, false, 5),
            r("c", Some("something odd"), false, 5),
        ];
        let q = quarantined(&all);
        assert_eq!(q.get("a").map(String::as_str), Some("log_restarted"));
        assert_eq!(q.get("c").map(String::as_str), Some("unknown"));
        assert_eq!(q.len(), 2);
    }
}
