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

use crate::plan::{plan, Entry, Plan};
use crate::timefmt::datetime;
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

/// What one committed batch did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Offset after the commit (None: the batch was empty).
    pub offset: Option<StreamId>,
    /// `fast`, `slow` or `skip`.
    pub path: &'static str,
    /// Applied entries by op name (conflicts excluded).
    pub applied: HashMap<&'static str, u64>,
    /// Entries that went to `ticket_conflict`.
    pub conflicts: Vec<Conflict>,
}

/// Applies one batch of `event`'s entries (ascending ids) exactly once.
pub fn apply_batch(
    conn: &mut Conn,
    event: &str,
    entries: &[Entry],
) -> Result<Outcome, mysql::Error> {
    conn.exec_drop(
        "INSERT IGNORE INTO ticket_sync_offset (event_id, last_stream_id, updated_at) VALUES (?, '0-0', NOW(3))",
        (event,),
    )?;
    let mut force_slow = false;
    loop {
        let mut tx = conn.start_transaction(TxOpts::default())?;
        let offset = lock_offset(&mut tx, event)?;
        let (todo, p) = plan(offset, entries);
        let last = match todo.last() {
            Some(e) => e.id,
            None => {
                tx.commit()?;
                return Ok(Outcome {
                    offset: Some(offset),
                    path: "skip",
                    ..Outcome::default()
                });
            }
        };
        let p = if force_slow {
            Plan::Slow("retry after anomaly".into())
        } else {
            p
        };
        let mut out = Outcome {
            offset: Some(last),
            ..Outcome::default()
        };
        match p {
            Plan::Nothing => {}
            Plan::Fast(fp) => match crate::fast::apply(&mut tx, event, &fp)? {
                Ok(()) => {
                    out.path = "fast";
                    out.applied = crate::plan::count_ops(&todo);
                }
                Err(why) => {
                    log::info!("event {event}: fast path refused ({why}); replaying batch record by record");
                    drop(tx); // rollback
                    force_slow = true;
                    continue;
                }
            },
            Plan::Slow(why) => {
                log::debug!("event {event}: slow path: {why}");
                out.path = "slow";
                crate::slow::apply(&mut tx, event, &todo, &mut out)?;
            }
        }
        tx.exec_drop(
            "UPDATE ticket_sync_offset SET last_stream_id = ?, updated_at = NOW(3) WHERE event_id = ?",
            (last.to_string(), event),
        )?;
        tx.commit()?;
        return Ok(out);
    }
}

/// Reads and locks the event's offset row.
fn lock_offset(tx: &mut Transaction<'_>, event: &str) -> Result<StreamId, mysql::Error> {
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
    conn: &mut Conn,
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
