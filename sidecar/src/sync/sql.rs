//! SQL shared by the fast and the slow path (below both): the statements
//! of an init and of a status change, and running a statement with
//! record-level errors kept apart from the server's.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::io::mysql::is_record_level;
use crate::model::time::datetime;
use crate::sync::plan::Init;

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
