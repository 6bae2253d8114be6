//! MySQL glue: connecting, migrating, and applying one planned batch.
//!
//! [`apply_batch`] is the exactly-once core. In one transaction it locks the
//! event's `ticket_sync_offset` row (`SELECT .. FOR UPDATE`), drops entries at
//! or below the stored offset, applies the rest — fast path or record by
//! record (see [`crate::plan`]) — advances the offset and commits. Whatever
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

use crate::plan::{plan, Entry, FastPlan, Plan};
use crate::timefmt::datetime;
use protocol::record::{Op, Tickets};
use protocol::StreamId;

mod embedded {
    refinery::embed_migrations!("../migrations");
}

/// Rows per multi-row statement (keeps placeholders far below 65,535).
const INSERT_CHUNK: usize = 1000;

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
            Plan::Fast(fp) => match fast(&mut tx, event, &fp)? {
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
                slow(&mut tx, event, &todo, &mut out)?;
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
fn try_exec<P: Into<mysql::Params>>(
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

fn opt_time(ms: i64) -> Value {
    if ms == 0 {
        Value::NULL
    } else {
        Value::from(datetime(ms))
    }
}

/// The fast path. `Ok(Err(why))` = anomaly: the caller rolls back and goes slow.
fn fast(
    tx: &mut Transaction<'_>,
    event: &str,
    fp: &FastPlan,
) -> Result<Result<(), String>, mysql::Error> {
    if let Some(i) = &fp.init {
        let at = datetime(i.at);
        if let Err(e) = try_exec(
            tx,
            "INSERT INTO ticket_event (event_id, total, status, opens_at, closes_at, created_at, updated_at) VALUES (?, ?, 'open', ?, ?, ?, ?)",
            (event, i.total, opt_time(i.opens_at), opt_time(i.closes_at), at.clone(), at),
        )? {
            return Ok(Err(format!("init: {e}")));
        }
        if let Err(e) = try_exec(
            tx,
            "INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?)",
            (event, i.total),
        )? {
            return Ok(Err(format!("init stock: {e}")));
        }
    }
    for cancels in fp.cancels.chunks(INSERT_CHUNK) {
        let mut sql = String::from(
            "UPDATE ticket_participation SET status = 'canceled', canceled_at = CASE user_id",
        );
        let mut params: Vec<Value> = Vec::with_capacity(cancels.len() * 6 + 1);
        for c in cancels {
            sql.push_str(" WHEN ? THEN ?");
            params.push(c.user.clone().into());
            params.push(datetime(c.at).into());
        }
        sql.push_str(" END, stream_id = CASE user_id");
        for c in cancels {
            sql.push_str(" WHEN ? THEN ?");
            params.push(c.user.clone().into());
            params.push(c.id.to_string().into());
        }
        sql.push_str(
            " END WHERE event_id = ? AND status = 'active' AND (user_id, ticket_number) IN (",
        );
        params.push(event.into());
        for (i, c) in cancels.iter().enumerate() {
            sql.push_str(if i == 0 { "(?, ?)" } else { ", (?, ?)" });
            params.push(c.user.clone().into());
            params.push(c.ticket.into());
        }
        sql.push(')');
        match try_exec(tx, &sql, params)? {
            Ok(n) if n == cancels.len() as u64 => {}
            Ok(n) => {
                return Ok(Err(format!(
                    "{} cancels matched {n} active rows",
                    cancels.len()
                )))
            }
            Err(e) => return Ok(Err(e)),
        }
    }
    if !fp.claims.is_empty() {
        let mut existing: HashMap<String, String> = HashMap::new();
        for chunk in fp.claims.chunks(INSERT_CHUNK) {
            let mut sql = String::from("SELECT user_id, status FROM ticket_participation WHERE event_id = ? AND user_id IN (");
            let mut params: Vec<Value> = vec![event.into()];
            for (i, c) in chunk.iter().enumerate() {
                sql.push_str(if i == 0 { "?" } else { ", ?" });
                params.push(c.user.clone().into());
            }
            sql.push(')');
            let rows: Vec<(String, String)> = tx.exec(sql, params)?;
            existing.extend(rows);
        }
        if let Some((u, _)) = existing.iter().find(|(_, s)| s.as_str() == "active") {
            return Ok(Err(format!("user {u:?} already holds an active ticket")));
        }
        let (reclaims, fresh): (Vec<_>, Vec<_>) = fp
            .claims
            .iter()
            .partition(|c| existing.contains_key(&c.user));
        for c in reclaims {
            match try_exec(
                tx,
                "UPDATE ticket_participation SET status = 'active', ticket_number = ?, claimed_at = ?, canceled_at = NULL, stream_id = ? WHERE event_id = ? AND user_id = ? AND status = 'canceled'",
                (c.ticket, datetime(c.at), c.id.to_string(), event, c.user.as_str()),
            )? {
                Ok(1) => {}
                Ok(n) => return Ok(Err(format!("re-claim of {:?} matched {n} rows", c.user))),
                Err(e) => return Ok(Err(e)),
            }
        }
        for chunk in fresh.chunks(INSERT_CHUNK) {
            let mut sql = String::from(
                "INSERT INTO ticket_participation (event_id, user_id, ticket_number, status, claimed_at, stream_id) VALUES ",
            );
            let mut params: Vec<Value> = Vec::with_capacity(chunk.len() * 5);
            for (i, c) in chunk.iter().enumerate() {
                sql.push_str(if i == 0 {
                    "(?, ?, ?, 'active', ?, ?)"
                } else {
                    ", (?, ?, ?, 'active', ?, ?)"
                });
                params.push(event.into());
                params.push(c.user.clone().into());
                params.push(c.ticket.into());
                params.push(datetime(c.at).into());
                params.push(c.id.to_string().into());
            }
            if let Err(e) = try_exec(tx, &sql, params)? {
                return Ok(Err(e));
            }
        }
    }
    if !fp.claims.is_empty() || !fp.cancels.is_empty() {
        match try_exec(
            tx,
            "UPDATE ticket_stock SET remaining_stock = remaining_stock - ? WHERE event_id = ? AND remaining_stock >= ?",
            (fp.stock_delta, event, fp.stock_need),
        )? {
            Ok(1) => {}
            Ok(_) => return Ok(Err(format!("stock check refused {} claims (need {})", fp.claims.len(), fp.stock_need))),
            Err(e) => return Ok(Err(e)),
        }
    }
    if let Some((status, at)) = fp.status {
        match try_exec(
            tx,
            "UPDATE ticket_event SET status = ?, updated_at = ? WHERE event_id = ?",
            (status, datetime(at), event),
        )? {
            Ok(1) => {}
            Ok(_) => return Ok(Err("open/close of an unknown event".into())),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(()))
}

/// The slow path: each record in its own savepoint; bad ones become conflicts.
fn slow(
    tx: &mut Transaction<'_>,
    event: &str,
    todo: &[Entry],
    out: &mut Outcome,
) -> Result<(), mysql::Error> {
    for e in todo {
        tx.query_drop("SAVEPOINT rec")?;
        let verdict = match &e.rec {
            Err(m) => Err(Conflict {
                id: e.id,
                reason: "malformed",
                user: m.user.clone(),
                ticket: m.ticket,
                detail: format!("{}: {}", m.reason, m.raw),
            }),
            Ok(rec) => match one(tx, event, e.id, &rec.op, rec.at) {
                Ok(Ok(())) => Ok(rec.op.name()),
                Ok(Err((reason, detail))) => Err(conflict_of(e.id, &rec.op, reason, detail)),
                Err(err) if is_record_level(&err) => {
                    Err(conflict_of(e.id, &rec.op, "sql_error", err.to_string()))
                }
                Err(err) => return Err(err),
            },
        };
        match verdict {
            Ok(op) => {
                tx.query_drop("RELEASE SAVEPOINT rec")?;
                *out.applied.entry(op).or_insert(0) += 1;
            }
            Err(c) => {
                tx.query_drop("ROLLBACK TO SAVEPOINT rec")?;
                log::warn!(
                    "event {event}: entry {} -> ticket_conflict ({}): {}",
                    c.id,
                    c.reason,
                    c.detail
                );
                let detail: String = c.detail.chars().take(1024).collect();
                tx.exec_drop(
                    "INSERT INTO ticket_conflict (event_id, stream_id, user_id, ticket_number, reason, detail, created_at) VALUES (?, ?, ?, ?, ?, ?, NOW(3))",
                    (event, c.id.to_string(), c.user.clone(), c.ticket, c.reason, detail),
                )?;
                out.conflicts.push(c);
            }
        }
    }
    Ok(())
}

fn conflict_of(id: StreamId, op: &Op, reason: &'static str, detail: String) -> Conflict {
    let (user, ticket) = match op.order() {
        Some((user, tickets, _)) => (Some(user.clone()), Some(tickets.lowest())),
        None => (None, None),
    };
    Conflict {
        id,
        reason,
        user,
        ticket,
        detail,
    }
}

type Verdict = Result<(), (&'static str, String)>;

/// Applies one record with explicit checks, so the common anomalies are
/// named precisely instead of surfacing as SQL errors.
fn one(
    tx: &mut Transaction<'_>,
    event: &str,
    id: StreamId,
    op: &Op,
    at: i64,
) -> Result<Verdict, mysql::Error> {
    match op {
        Op::Init {
            total,
            opens_at,
            closes_at,
        } => {
            let exists: Option<i32> = tx.exec_first(
                "SELECT total FROM ticket_event WHERE event_id = ?",
                (event,),
            )?;
            if let Some(t) = exists {
                return Ok(Err((
                    "duplicate_init",
                    format!("event already exists with total {t}"),
                )));
            }
            let at = datetime(at);
            tx.exec_drop(
                "INSERT INTO ticket_event (event_id, total, status, opens_at, closes_at, created_at, updated_at) VALUES (?, ?, 'open', ?, ?, ?, ?)",
                (event, total, opt_time(*opens_at), opt_time(*closes_at), at.clone(), at),
            )?;
            tx.exec_drop(
                // (no VALUES() here: deprecated in MySQL 8)
                "INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?) ON DUPLICATE KEY UPDATE remaining_stock = ?",
                (event, total, total),
            )?;
        }
        Op::Claim {
            user,
            tickets: Tickets::One(ticket),
        } => {
            let stock: Option<i64> = tx.exec_first(
                "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
                (event,),
            )?;
            if stock.is_none() {
                return Ok(Err((
                    "unknown_event",
                    "claim for an event without a ticket_stock row".into(),
                )));
            }
            let row: Option<(String, i32)> = tx.exec_first(
                "SELECT status, ticket_number FROM ticket_participation WHERE event_id = ? AND user_id = ?",
                (event, user.as_str()),
            )?;
            if let Some((s, n)) = &row {
                if s == "active" {
                    return Ok(Err((
                        "duplicate_claim",
                        format!("user already holds ticket {n}"),
                    )));
                }
            }
            let holder: Option<String> = tx.exec_first(
                "SELECT user_id FROM ticket_participation WHERE event_id = ? AND active_ticket = ?",
                (event, ticket),
            )?;
            if let Some(h) = holder {
                return Ok(Err((
                    "collision",
                    format!("ticket {ticket} is held by {h:?}"),
                )));
            }
            tx.exec_drop(
                "UPDATE ticket_stock SET remaining_stock = remaining_stock - 1 WHERE event_id = ? AND remaining_stock >= 1",
                (event,),
            )?;
            if tx.affected_rows() != 1 {
                return Ok(Err((
                    "oversell",
                    format!(
                        "remaining_stock is {} — conditional UPDATE refused",
                        stock.unwrap_or(0)
                    ),
                )));
            }
            if row.is_some() {
                tx.exec_drop(
                    "UPDATE ticket_participation SET status = 'active', ticket_number = ?, claimed_at = ?, canceled_at = NULL, stream_id = ? WHERE event_id = ? AND user_id = ?",
                    (ticket, datetime(at), id.to_string(), event, user.as_str()),
                )?;
            } else {
                tx.exec_drop(
                    "INSERT INTO ticket_participation (event_id, user_id, ticket_number, status, claimed_at, stream_id) VALUES (?, ?, ?, 'active', ?, ?)",
                    (event, user.as_str(), ticket, datetime(at), id.to_string()),
                )?;
            }
        }
        Op::Cancel {
            user,
            tickets: Tickets::One(ticket),
        } => {
            tx.exec_drop(
                "UPDATE ticket_participation SET status = 'canceled', canceled_at = ?, stream_id = ? WHERE event_id = ? AND user_id = ? AND status = 'active' AND ticket_number = ?",
                (datetime(at), id.to_string(), event, user.as_str(), ticket),
            )?;
            if tx.affected_rows() != 1 {
                return Ok(Err((
                    "cancel_mismatch",
                    format!("no active row of user {user:?} with ticket {ticket}"),
                )));
            }
            tx.exec_drop(
                "UPDATE ticket_stock SET remaining_stock = remaining_stock + 1 WHERE event_id = ?",
                (event,),
            )?;
        }
        Op::Open | Op::Close => {
            tx.exec_drop(
                "UPDATE ticket_event SET status = ?, updated_at = ? WHERE event_id = ?",
                (op.name(), datetime(at), event),
            )?;
            if tx.affected_rows() != 1 {
                return Ok(Err((
                    "unknown_event",
                    format!("{} of an event without a ticket_event row", op.name()),
                )));
            }
        }
        // Orders of several tickets and holds need the V2 schema.
        other => {
            return Ok(Err((
                "unsupported_op",
                format!("{} is not applied by this sidecar yet", other.name()),
            )))
        }
    }
    Ok(Ok(()))
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

/// Active participations of `event`: user -> ticket.
pub fn active_holders(conn: &mut Conn, event: &str) -> Result<HashMap<String, i64>, mysql::Error> {
    let rows: Vec<(String, i64)> = conn.exec(
        "SELECT user_id, ticket_number FROM ticket_participation WHERE event_id = ? AND status = 'active'",
        (event,),
    )?;
    Ok(rows.into_iter().collect())
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
