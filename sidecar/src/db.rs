//! MySQL glue: connecting, migrating, and applying one planned batch.
//!
//! [`apply_batch`] is the exactly-once core. In one transaction it locks the
//! event's `ticket_sync_offset` row (`SELECT .. FOR UPDATE`), drops entries at
//! or below the stored offset, applies the rest — fast path or record by
//! record (planned by [`crate::plan`], run by `crate::fast` and
//! `crate::slow`) — advances the offset and commits. Whatever
//! dies at whatever instant, either all of a batch and its offset are in MySQL
//! or none of it is; a second sidecar waits on the row lock and then skips
//! what the first one applied.
//!
//! Errors are split in two: *record-level* server errors (duplicate key, value
//! out of range, ...) mean "this data is wrong" and send the batch down the
//! slow path, where they become `ticket_conflict` rows; everything else
//! (connection lost, deadlock, lock wait timeout, missing table, read-only
//! server) is returned to the caller, which rolls back and retries with backoff
//! — never skipping an entry.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Transaction, TxOpts, Value};

use crate::gate::{gate, EventState, Gate, Restore};
use crate::plan::{plan, restored_status, Entry, Init, Plan};
use crate::quarantine::Evidence;
use crate::timefmt::datetime;
use protocol::record::Incarnation;
use protocol::StreamId;

mod embedded {
    refinery::embed_migrations!("../migrations");
}

/// Server error codes that describe the data of one record rather than the
/// health of the server: these become conflicts, everything else is retried.
const RECORD_LEVEL_CODES: &[u16] = &[
    1048, // column cannot be null
    1062, // duplicate entry
    1264, // out of range
    1265, // data truncated
    1292, // incorrect datetime value
    1366, // incorrect string value
    1406, // data too long
    3819, // MySQL: check constraint violated
    4025, // MariaDB: check constraint violated
];

/// True when `e` is a server error about one record's data.
pub fn is_record_level(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if RECORD_LEVEL_CODES.contains(&me.code))
}

/// Opens a connection: UTC session, found-rows semantics for UPDATE (a
/// no-op `remaining_stock - 0` still counts as matched), bounded timeouts,
/// TLS when `--mysql-ca` is given (see [`crate::tls`]).
pub fn connect(url: &str) -> Result<Conn, mysql::Error> {
    let url_opts = Opts::from_url(url)?;
    let opts = crate::tls::mysql_opts(OptsBuilder::from_opts(url_opts.clone()), &url_opts)
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .read_timeout(Some(Duration::from_secs(30)))
        .write_timeout(Some(Duration::from_secs(30)))
        .init(vec!["SET time_zone = '+00:00'"]);
    Conn::new(opts)
}

/// Applies the embedded `migrations/` (idempotent); returns applied names.
pub fn migrate(conn: &mut Conn) -> Result<Vec<String>, String> {
    let report = embedded::migrations::runner()
        .run(conn)
        .map_err(|e| e.to_string())?;
    Ok(report
        .applied_migrations()
        .iter()
        .map(|m| m.to_string())
        .collect())
}

/// A conflict written while applying a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The entry.
    pub id: StreamId,
    /// Reason code (`oversell`, `collision`, `malformed`, ...).
    pub reason: &'static str,
    /// User id, when known.
    pub user: Option<String>,
    /// Ticket number, when known.
    pub ticket: Option<i64>,
    /// Human-readable detail.
    pub detail: String,
}

impl Conflict {
    /// Conflict `reason` about log entry `e`, with the user and lowest
    /// ticket it names (decoded, or as far as a malformed entry shows them).
    pub fn about(e: &Entry, reason: &'static str, detail: String) -> Conflict {
        let (user, ticket) = match &e.rec {
            Ok(r) => r.op.order().map_or((None, None), |(u, t, _)| {
                (Some(u.clone()), Some(t.lowest()))
            }),
            Err(m) => (m.user.clone(), m.ticket),
        };
        Conflict {
            id: e.id,
            reason,
            user,
            ticket,
            detail,
        }
    }
}

/// What one batch did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Offset after the commit (None: the batch was empty).
    pub offset: Option<StreamId>,
    /// `fast`, `slow`, `skip`, `refused` or `discarded`.
    pub path: &'static str,
    /// Applied entries by op name (conflicts excluded).
    pub applied: HashMap<&'static str, u64>,
    /// Entries that went to `ticket_conflict`.
    pub conflicts: Vec<Conflict>,
    /// The batch was refused (nothing applied, offset unchanged): the
    /// reader must read the event again from `offset`.
    pub refused: bool,
    /// The event was quarantined by this batch, with this evidence.
    pub quarantined: Option<Evidence>,
    /// A restore was applied: the quarantine is lifted.
    pub restored: Option<StreamId>,
    /// A dropped event's re-created id was dropped again: its entries up
    /// to this one are conflicts, and the quarantine is lifted.
    pub discarded: Option<StreamId>,
}

/// Applies one batch of `event`'s entries (ascending ids, read from the
/// log after `after`) exactly once, unless the gate refuses it (see
/// [`crate::gate`]). A batch read after a point beyond the committed
/// offset (queued before the reader rewound to it) is refused too: the
/// entries in between are not in it, and nothing may skip them.
pub fn apply_batch(
    conn: &mut Conn,
    event: &str,
    after: StreamId,
    entries: &[Entry],
) -> Result<Outcome, mysql::Error> {
    conn.exec_drop(
        "INSERT IGNORE INTO ticket_sync_offset (event_id, last_stream_id, entries, updated_at) VALUES (?, '0-0', 0, NOW(3))",
        (event,),
    )?;
    let mut force_slow = false;
    loop {
        let mut tx = conn.start_transaction(TxOpts::default())?;
        let offset = lock_offset(&mut tx, event)?;
        let todo: Vec<Entry> = entries.iter().filter(|e| e.id > offset).cloned().collect();
        let Some(last) = todo.last().map(|e| e.id) else {
            tx.commit()?;
            return Ok(Outcome {
                offset: Some(offset),
                path: "skip",
                ..Outcome::default()
            });
        };
        if after > offset {
            return refuse(tx, event, offset, None, None);
        }
        let state = event_state(&mut tx, event)?;
        let (from, restore) = match gate(event, state.as_ref(), offset, &todo) {
            Gate::Apply { from, restore } => (from, restore),
            Gate::Discard { upto, lifted } => {
                return discard(tx, event, &todo[..=upto], lifted, upto + 1 < todo.len())
            }
            Gate::Refuse {
                quarantine,
                conflict,
            } => return refuse(tx, event, offset, quarantine, conflict),
        };
        // heal hook: a batch read from before the offset must carry the
        // offset's entry with the content MySQL applied.
        if restore.is_none() {
            if let Err(why) =
                crate::heal::journal::anchored(&mut tx, event, after, offset, entries)?
            {
                log::warn!(
                    "event {event}: batch refused: {why}; asking the verifier to check the event"
                );
                crate::heal::request();
                return refuse(tx, event, offset, None, None);
            }
        }
        let mut out = Outcome {
            offset: Some(last),
            ..Outcome::default()
        };
        let mut rest = &todo[from..];
        let mut base = offset;
        if let Some(r) = &restore {
            apply_restore(&mut tx, event, r)?;
            out.restored = Some(r.id);
            out.applied.insert("restore", 1);
            (base, rest) = (r.id, &rest[1..]);
        }
        if !apply_rest(&mut tx, event, base, rest, force_slow, &mut out)? {
            drop(tx); // rollback
            force_slow = true;
            continue;
        }
        advance(&mut tx, event, last, &todo[from..], restore.is_some())?;
        tx.commit()?;
        return Ok(out);
    }
}

/// Moves the offset to `last` and counts the `applied` entries; after a
/// restore the count starts again (the new log: the restore and what
/// follows it).
fn advance(
    tx: &mut Transaction<'_>,
    event: &str,
    last: StreamId,
    applied: &[Entry],
    restored: bool,
) -> Result<(), mysql::Error> {
    let count = match restored {
        true => "entries = ?",
        false => "entries = entries + ?",
    };
    tx.exec_drop(
        format!("UPDATE ticket_sync_offset SET last_stream_id = ?, {count}, updated_at = NOW(3) WHERE event_id = ?"),
        (last.to_string(), applied.len() as i64, event),
    )?;
    // heal hook: the journal and the offset's anchor, in this transaction.
    crate::heal::journal::record(tx, event, applied)
}

/// Plans and applies `rest` (the entries above `base`) into `out`; false
/// when the fast path refused and the batch must be replayed slowly.
pub(crate) fn apply_rest(
    tx: &mut Transaction<'_>,
    event: &str,
    base: StreamId,
    rest: &[Entry],
    force_slow: bool,
    out: &mut Outcome,
) -> Result<bool, mysql::Error> {
    let (todo, p) = plan(base, rest);
    let p = match (p, force_slow) {
        (Plan::Nothing, _) => Plan::Nothing,
        (_, true) => Plan::Slow("retry after anomaly".into()),
        (p, false) => p,
    };
    match p {
        Plan::Nothing => out.path = "fast",
        Plan::Fast(fp) => match crate::fast::apply(tx, event, &fp)? {
            Ok(()) => {
                out.path = "fast";
                for (op, n) in crate::plan::count_ops(&todo) {
                    *out.applied.entry(op).or_insert(0) += n;
                }
            }
            Err(why) => {
                log::info!(
                    "event {event}: fast path refused ({why}); replaying batch record by record"
                );
                return Ok(false);
            }
        },
        Plan::Slow(why) => {
            log::debug!("event {event}: slow path: {why}");
            out.path = "slow";
            crate::slow::apply(tx, event, &todo, out)?;
        }
    }
    Ok(true)
}

/// Commits a refused batch: only the quarantine and the conflict, never
/// the entries or the offset.
fn refuse(
    mut tx: Transaction<'_>,
    event: &str,
    offset: StreamId,
    quarantine: Option<Evidence>,
    conflict: Option<Conflict>,
) -> Result<Outcome, mysql::Error> {
    if let Some(ev) = &quarantine {
        self::quarantine(&mut tx, event, ev)?;
    }
    let mut conflicts = Vec::new();
    if let Some(c) = conflict {
        if record_conflict_once(&mut tx, event, &c)? {
            conflicts.push(c);
        }
    }
    tx.commit()?;
    Ok(Outcome {
        offset: Some(offset),
        path: "refused",
        refused: true,
        quarantined: quarantine,
        conflicts,
        ..Outcome::default()
    })
}

/// Commits the discard of `reused` (entries of a dropped event's
/// re-created id): each becomes a `reused_after_drop` conflict and the
/// offset moves past them. With `lifted` (the last is the re-created
/// sale's drop) the quarantine is lifted; the event stays dropped. With
/// `more` (entries after them in the batch), the reader reads on from the
/// new offset, through the gate again.
fn discard(
    mut tx: Transaction<'_>,
    event: &str,
    reused: &[Entry],
    lifted: bool,
    more: bool,
) -> Result<Outcome, mysql::Error> {
    let detail = "the event was dropped; its id was created again in Redis: not applied (event ids are not reused)";
    log::warn!(
        "event {event}: {} entries of a sale created again under this dropped event's id are not applied (reused_after_drop conflicts)",
        reused.len()
    );
    let mut conflicts = Vec::new();
    for e in reused {
        let detail = match &e.rec {
            Ok(_) => detail.to_owned(),
            Err(m) => format!("{detail}: {}", m.raw),
        };
        let c = Conflict::about(e, "reused_after_drop", detail);
        if record_conflict_once(&mut tx, event, &c)? {
            conflicts.push(c);
        }
    }
    if lifted {
        tx.exec_drop(
            "UPDATE ticket_event SET quarantined_at = NULL, quarantine_reason = NULL WHERE event_id = ?",
            (event,),
        )?;
    }
    let last = reused.last().map(|e| e.id);
    if let Some(last) = last {
        advance(&mut tx, event, last, reused, false)?;
    }
    tx.commit()?;
    Ok(Outcome {
        offset: last,
        path: "discarded",
        refused: more,
        discarded: last.filter(|_| lifted),
        conflicts,
        ..Outcome::default()
    })
}

/// Writes conflict `c` unless the same entry already has one with its
/// reason; true when written.
pub fn record_conflict_once(
    tx: &mut Transaction<'_>,
    event: &str,
    c: &Conflict,
) -> Result<bool, mysql::Error> {
    let detail: String = c.detail.chars().take(1024).collect();
    let id = c.id.to_string();
    tx.exec_drop(
        "INSERT INTO ticket_conflict (event_id, stream_id, user_id, ticket_number, reason, detail, created_at) \
         SELECT ?, ?, ?, ?, ?, ?, NOW(3) FROM DUAL WHERE NOT EXISTS \
         (SELECT 1 FROM ticket_conflict WHERE event_id = ? AND stream_id = ? AND reason = ?)",
        (event, &id, c.user.clone(), c.ticket, c.reason, detail, event, &id, c.reason),
    )?;
    Ok(tx.affected_rows() > 0)
}

/// Marks `event` quarantined with `ev` (a quarantine already there stays,
/// with its first evidence).
pub fn quarantine(tx: &mut impl Queryable, event: &str, ev: &Evidence) -> Result<(), mysql::Error> {
    tx.exec_drop(
        "UPDATE ticket_event SET quarantined_at = NOW(3), quarantine_reason = ? WHERE event_id = ? AND quarantined_at IS NULL",
        (ev.stored(), event),
    )
}

/// The event's row as the gate needs it; None when MySQL has no row.
fn event_state(tx: &mut Transaction<'_>, event: &str) -> Result<Option<EventState>, mysql::Error> {
    let row: Option<(Option<String>, bool, bool)> = tx.exec_first(
        "SELECT incarnation, quarantined_at IS NOT NULL, dropped_at IS NOT NULL FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    Ok(row.map(|(inc, quarantined, dropped)| EventState {
        incarnation: inc.as_deref().and_then(Incarnation::parse),
        quarantined,
        dropped,
    }))
}

/// Applies a restore: the event's status and incarnation, quarantine lifted.
fn apply_restore(tx: &mut Transaction<'_>, event: &str, r: &Restore) -> Result<(), mysql::Error> {
    tx.exec_drop(
        "UPDATE ticket_event SET status = ?, incarnation = ?, quarantined_at = NULL, quarantine_reason = NULL, updated_at = ? WHERE event_id = ?",
        (restored_status(r.status), r.incarnation.to_string(), datetime(r.at), event),
    )
}

/// The INSERT of an init's event row, with its parameters.
pub(crate) fn insert_event(event: &str, i: &Init) -> (&'static str, Vec<Value>) {
    let at = datetime(i.at);
    let sql = "INSERT INTO ticket_event (event_id, total, status, opens_at, closes_at, incarnation, hold_ms, ticket_limit, offer_ms, created_at, updated_at) VALUES (?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?)";
    let params = vec![
        event.into(),
        i.total.into(),
        opt_time(i.opens_at),
        opt_time(i.closes_at),
        i.incarnation.map(|i| i.to_string()).into(),
        i.checkout.hold.into(),
        i.checkout.limit.into(),
        i.offer_ms().into(),
        at.clone().into(),
        at.into(),
    ];
    (sql, params)
}

/// The UPDATE of an open, close or drop (`dropped_at` for a drop).
pub(crate) fn set_status(event: &str, status: &str, at: i64) -> (&'static str, Vec<Value>) {
    let sql = "UPDATE ticket_event SET status = ?, updated_at = ?, dropped_at = IF(? = 'dropped', ?, dropped_at) WHERE event_id = ?";
    let at = datetime(at);
    let params = vec![
        status.into(),
        at.clone().into(),
        status.into(),
        at.into(),
        event.into(),
    ];
    (sql, params)
}

/// Reads and locks the event's offset row.
pub(crate) fn lock_offset(tx: &mut impl Queryable, event: &str) -> Result<StreamId, mysql::Error> {
    let row: Option<String> = tx.exec_first(
        "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = ? FOR UPDATE",
        (event,),
    )?;
    let text = row.unwrap_or_else(|| "0-0".into());
    StreamId::parse(&text).ok_or_else(|| {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "HY000".into(),
            code: 0,
            message: format!(
                "ticket_sync_offset.last_stream_id of event {event:?} is {text:?}, not a stream id: fix the row"
            ),
        })
    })
}

/// Runs a statement; record-level errors become `Ok(Err(msg))`.
pub(crate) fn try_exec<P: Into<mysql::Params>>(
    tx: &mut Transaction<'_>,
    sql: &str,
    params: P,
) -> Result<Result<u64, String>, mysql::Error> {
    match tx.exec_drop(sql, params) {
        Ok(()) => Ok(Ok(tx.affected_rows())),
        Err(e) if is_record_level(&e) => Ok(Err(e.to_string())),
        Err(e) => Err(e),
    }
}

/// Unix ms as a DATETIME(3) parameter, 0 as NULL (no bound).
pub(crate) fn opt_time(ms: i64) -> Value {
    if ms == 0 {
        Value::NULL
    } else {
        Value::from(datetime(ms))
    }
}

/// Every event's committed offset (rows that do not parse are left out).
pub fn offsets(conn: &mut Conn) -> Result<HashMap<String, StreamId>, mysql::Error> {
    let rows: Vec<(String, String)> =
        conn.query("SELECT event_id, last_stream_id FROM ticket_sync_offset")?;
    Ok(rows
        .into_iter()
        .filter_map(|(e, id)| StreamId::parse(&id).map(|id| (e, id)))
        .collect())
}

/// Live (held or sold) tickets of `event`, by user.
pub fn live_users(
    conn: &mut impl Queryable,
    event: &str,
) -> Result<HashMap<String, crate::reconcile::Live>, mysql::Error> {
    let rows: Vec<(String, i64, String, Option<i64>)> = conn.exec(
        "SELECT user_id, ticket_number, CAST(status AS CHAR), CAST(ROUND(UNIX_TIMESTAMP(held_until) * 1000) AS SIGNED) \
         FROM ticket_participation WHERE event_id = ? AND live_ticket IS NOT NULL ORDER BY ticket_number",
        (event,),
    )?;
    Ok(crate::reconcile::mysql_users(rows))
}

/// `remaining_stock` of `event`, if it has a stock row.
pub fn remaining_stock(conn: &mut Conn, event: &str) -> Result<Option<i64>, mysql::Error> {
    conn.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )
}

/// All event ids known to MySQL.
pub fn events(conn: &mut Conn) -> Result<HashSet<String>, mysql::Error> {
    let rows: Vec<String> = conn.query("SELECT event_id FROM ticket_event")?;
    Ok(rows.into_iter().collect())
}
