//! After the sale in MySQL (migration V10, docs/design.md "After the
//! sale: transfer and entry scan"): a `transfer` moves the live rows of its
//! tickets to the new owner a generation up, so the live rows stay what
//! Redis's holders say, and inserts a `ticket_owner` row per ticket; a
//! `scan` inserts a `ticket_scan` row. Written record by record (the
//! planner sends a batch holding one to the slow path):
//!
//! * transfer: `transfer_mismatch` when the giver has no sold order with
//!   every ticket, or the receiver a held one;
//! * scan: `scan_mismatch` when the ticket is not sold at that generation
//!   or was scanned at it already.
//!
//! Resale (`batch::resale`) moves rows as a transfer does, with
//! [`live_order`] and [`regroup`]. A heal undoes a lost transfer or scan
//! with [`undo_transfer`] and [`undo_scan`] (migration V12).

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::order::{marks, Verdict};
use crate::model::time::datetime;
use protocol::record::{Op, Record};
use protocol::StreamId;

/// Writes `rec` when it is a transfer or a scan; `None` for any other op.
pub fn write(
    tx: &mut Transaction<'_>,
    event: &str,
    id: StreamId,
    rec: &Record,
) -> mysql::Result<Option<Verdict>> {
    match &rec.op {
        Op::Transfer { user, to, tickets } => {
            transfer(tx, event, (user, to), tickets.as_slice(), (id, rec.at)).map(Some)
        }
        Op::Scan { ticket, gen, gate } => {
            scan(tx, event, (*ticket, *gen), gate.as_deref(), (id, rec.at)).map(Some)
        }
        _ => Ok(None),
    }
}

/// A user's live order: its id and status, from its lead row.
pub(crate) fn live_order(
    tx: &mut Transaction<'_>,
    event: &str,
    user: &str,
) -> mysql::Result<Option<(Option<String>, String)>> {
    tx.exec_first(
        "SELECT order_id, CAST(status AS CHAR) FROM ticket_participation WHERE event_id = ? AND live_lead = ?",
        (event, user),
    )
}

fn transfer(
    tx: &mut Transaction<'_>,
    event: &str,
    (from, to): (&str, &str),
    tickets: &[i64],
    (id, at): (StreamId, i64),
) -> mysql::Result<Verdict> {
    let mismatch = |why: String| Ok(Err(("transfer_mismatch", why)));
    let Some((_, status)) = live_order(tx, event, from)? else {
        return mismatch(format!("user {from:?} has no live order"));
    };
    let rows = format!(
        "event_id = ? AND user_id = ? AND status = 'active' AND live_ticket IN ({})",
        marks(tickets.len())
    );
    let mut key: Vec<Value> = vec![event.into(), from.into()];
    key.extend(tickets.iter().map(|t| Value::from(*t)));
    let found: Option<i64> = tx.exec_first(
        format!("SELECT COUNT(*) FROM ticket_participation WHERE {rows}"),
        key.clone(),
    )?;
    if status != "active" || found != Some(tickets.len() as i64) {
        return mismatch(format!(
            "user {from:?}'s live order is {status}, without all of {tickets:?} sold"
        ));
    }
    let theirs = live_order(tx, event, to)?;
    let target = match theirs {
        Some((_, status)) if status != "active" => {
            return mismatch(format!("user {to:?}'s live order is {status}"));
        }
        Some((order, _)) => order,
        None => Some(id.to_string()),
    };
    hand_over(tx, event, (from, to), target, tickets, (id, at))?;
    Ok(Ok(()))
}

/// Moves `from`'s sold rows of `tickets` to `to`'s order `target` a
/// generation up (a transfer, a resale): each keeps the order that first
/// took it in `first_order` (migrations/V11, for audit-seats); both users'
/// rows regrouped, one `ticket_owner` row per ticket.
pub(crate) fn hand_over(
    tx: &mut Transaction<'_>,
    event: &str,
    (from, to): (&str, &str),
    target: Option<String>,
    tickets: &[i64],
    (id, at): (StreamId, i64),
) -> mysql::Result<()> {
    let rows = format!(
        "event_id = ? AND user_id = ? AND status = 'active' AND live_ticket IN ({})",
        marks(tickets.len())
    );
    let mut key: Vec<Value> = vec![event.into(), from.into()];
    key.extend(tickets.iter().map(|t| Value::from(*t)));
    // The owner rows first, while the rows still say what the heal's undo
    // puts back (migration V12).
    let owners = format!(
        "INSERT INTO ticket_owner (event_id, ticket_number, gen, user_id, from_user, since_stream_id, at, prior_order_id, prior_stream_id) \
         SELECT event_id, ticket_number, gen + 1, ?, user_id, ?, ?, order_id, stream_id FROM ticket_participation WHERE {rows}"
    );
    let head: Vec<Value> = vec![to.into(), id.to_string().into(), datetime(at).into()];
    tx.exec_drop(owners, [head, key.clone()].concat())?;
    // first_order before order_id: MySQL assigns left to right.
    let set = "SET first_order = IFNULL(first_order, order_id), user_id = ?, order_id = ?, \
               order_lead = 0, gen = gen + 1, stream_id = ?";
    let values: Vec<Value> = vec![to.into(), target.into(), id.to_string().into()];
    tx.exec_drop(
        format!("UPDATE ticket_participation {set} WHERE {rows}"),
        [values, key].concat(),
    )?;
    regroup(tx, event, from)?;
    regroup(tx, event, to)?;
    Ok(())
}

/// A user's live rows after a hand-over: `order_tickets` their count, the
/// lowest ticket the lead row.
pub(crate) fn regroup(tx: &mut Transaction<'_>, event: &str, user: &str) -> mysql::Result<()> {
    let live = "event_id = ? AND user_id = ? AND live_ticket IS NOT NULL";
    let n: Option<i64> = tx.exec_first(
        format!("SELECT COUNT(*) FROM ticket_participation WHERE {live}"),
        (event, user),
    )?;
    let n = n.unwrap_or(0);
    if n == 0 {
        return Ok(());
    }
    tx.exec_drop(
        format!("UPDATE ticket_participation SET order_tickets = ?, order_lead = 0 WHERE {live}"),
        (n, event, user),
    )?;
    tx.exec_drop(
        format!("UPDATE ticket_participation SET order_lead = 1 WHERE {live} ORDER BY live_ticket LIMIT 1"),
        (event, user),
    )
}

fn scan(
    tx: &mut Transaction<'_>,
    event: &str,
    (ticket, gen): (i64, i64),
    gate: Option<&str>,
    (id, at): (StreamId, i64),
) -> mysql::Result<Verdict> {
    let row: Option<i64> = tx.exec_first(
        "SELECT id FROM ticket_participation WHERE event_id = ? AND live_ticket = ? AND status = 'active' AND gen = ?",
        (event, ticket, gen),
    )?;
    let Some(row) = row else {
        let why = format!("ticket {ticket} is not sold at generation {gen}");
        return Ok(Err(("scan_mismatch", why)));
    };
    let seen: Option<i64> = tx.exec_first(
        "SELECT COUNT(*) FROM ticket_scan WHERE participation_id = ? AND gen = ? AND lost_in_failover = 0",
        (row, gen),
    )?;
    if seen.unwrap_or(0) > 0 {
        let why = format!("ticket {ticket} was scanned at generation {gen} already");
        return Ok(Err(("scan_mismatch", why)));
    }
    tx.exec_drop(
        "INSERT INTO ticket_scan (event_id, ticket_number, gen, gate, participation_id, scanned_at, stream_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (event, ticket, gen, gate, row, datetime(at), id.to_string()),
    )?;
    Ok(Ok(()))
}

/// A heal's undo of lost transfer `id` from `from` to `to` (newest first,
/// so its rows are as it left them): each moved row back to the giver, a
/// generation down, with the order and stream id its owner row kept; the
/// owner rows marked lost (history, never deleted).
pub fn undo_transfer(
    tx: &mut Transaction<'_>,
    event: &str,
    id: StreamId,
    (from, to): (&str, &str),
) -> mysql::Result<()> {
    let id = id.to_string();
    tx.exec_drop(
        "UPDATE ticket_participation p JOIN ticket_owner o ON o.event_id = p.event_id AND o.ticket_number = p.live_ticket AND o.user_id = p.user_id AND o.gen = p.gen \
         SET p.user_id = o.from_user, p.order_id = COALESCE(o.prior_order_id, p.order_id), p.stream_id = COALESCE(o.prior_stream_id, p.stream_id), p.gen = p.gen - 1, p.order_lead = 0 \
         WHERE p.event_id = ? AND o.since_stream_id = ? AND o.lost_in_failover = 0",
        (event, &id),
    )?;
    tx.exec_drop(
        "UPDATE ticket_owner SET lost_in_failover = 1 WHERE event_id = ? AND since_stream_id = ? AND lost_in_failover = 0",
        (event, &id),
    )?;
    regroup(tx, event, from)?;
    regroup(tx, event, to)
}

/// A heal's undo of lost scan `id`: its row marked lost (history), so the
/// ticket may be admitted again at that generation (a re-applied scan
/// comes back as its own entry).
pub fn undo_scan(tx: &mut Transaction<'_>, event: &str, id: StreamId) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_scan SET lost_in_failover = 1 WHERE event_id = ? AND stream_id = ? AND lost_in_failover = 0",
        (event, id.to_string()),
    )
}
