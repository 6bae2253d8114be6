//! Face-value resale in MySQL (migration V11, docs/design.md "After the
//! sale"). A listed ticket stays its seller's live participation row until
//! a buyer confirms it; its listing is a `ticket_listing` row. A buyer's
//! hold, offer or claim of a listed ticket is written on the listing (the
//! record does not say the ticket is listed: the listing rows do), so it
//! takes no stock and never collides with the seller's row; the buyer's
//! free tickets in the same order are an ordinary order. An expiry or
//! cancel of it puts the ticket back on the list, no stock given back.
//! `resold` moves the seller's rows to the buyer a generation up, as a
//! transfer does (`after::hand_over`, a `ticket_owner` row each), and
//! inserts `ticket_resold` rows. Stock never changes through resale. Written record
//! by record (the planner sends these records, and every batch of an event
//! with a listing, to the slow path):
//!
//! * resell: `resell_mismatch` when the seller has no sold row of a ticket
//!   or it is listed already;
//! * unlist: `unlist_mismatch` when a ticket is not on the seller's list
//!   or a buyer holds it;
//! * resold: `resold_mismatch` when a ticket is not listed by the seller
//!   and held by the buyer, or the seller's sold row of it is missing.
//!
//! A heal undoes a lost resell ([`undo_resell`]: its listings end, marked
//! lost, migration V13), a lost unlist ([`undo_unlist`]: listed again) and
//! a buyer's lost hold, offer or claim of listed tickets ([`undo_buy`]:
//! back on the list), a lost expiry or cancel of one ([`rehold`]) and a lost resold ([`undo_resold`], after the rows'
//! `after::undo_transfer`: the listings held by the buyer again, the
//! `ticket_resold` rows marked lost).

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::after::{hand_over, live_order};
use crate::batch::order::{marks, Verdict};
use crate::model::time::datetime;
use protocol::record::{Op, Record};
use protocol::StreamId;

/// Writes `rec` when it is a resell, unlist or resold; `None` otherwise.
pub fn write(
    tx: &mut Transaction<'_>,
    event: &str,
    id: StreamId,
    rec: &Record,
) -> mysql::Result<Option<Verdict>> {
    let when = (id, rec.at);
    match &rec.op {
        Op::Resell { user, tickets } => resell(tx, event, user, tickets.as_slice(), when).map(Some),
        Op::Unlist { user, tickets } => unlist(tx, event, user, tickets.as_slice(), when).map(Some),
        Op::Resold { user, to, tickets } => {
            resold(tx, event, (user, to), tickets.as_slice(), when).map(Some)
        }
        _ => Ok(None),
    }
}

/// Whether `event` has a ticket on the list (held by a buyer or not):
/// its batches are written record by record.
pub fn any_listed(tx: &mut Transaction<'_>, event: &str) -> mysql::Result<bool> {
    let one: Option<i64> = tx.exec_first(
        "SELECT 1 FROM ticket_listing WHERE event_id = ? AND live_listing IS NOT NULL LIMIT 1",
        (event,),
    )?;
    Ok(one.is_some())
}

/// Whether `user` holds a listed ticket (an order MySQL keeps on the
/// listing, not as participation rows).
pub fn buys_listed(tx: &mut Transaction<'_>, event: &str, user: &str) -> mysql::Result<bool> {
    let n: Option<i64> = tx.exec_first(
        "SELECT COUNT(*) FROM ticket_listing WHERE event_id = ? AND live_listing IS NOT NULL AND buyer = ?",
        (event, user),
    )?;
    Ok(n.unwrap_or(0) > 0)
}

/// The listed ones of `tickets`, ascending, each with its buyer.
pub fn listed(
    tx: &mut Transaction<'_>,
    event: &str,
    tickets: &[i64],
) -> mysql::Result<Vec<(i64, Option<String>)>> {
    let sql = format!(
        "SELECT ticket_number, buyer FROM ticket_listing WHERE event_id = ? AND live_listing IN ({}) ORDER BY ticket_number",
        marks(tickets.len())
    );
    tx.exec(sql, params(&[event.into()], tickets))
}

/// `user`'s hold (or claim, `until` None) of the listed `tickets`, order
/// `order`: written on their listings. A listing a buyer holds already is
/// a `collision`.
pub fn buy(
    tx: &mut Transaction<'_>,
    event: &str,
    (user, order, until): (&str, StreamId, Option<i64>),
    tickets: &[i64],
) -> mysql::Result<Verdict> {
    let sql = format!(
        "UPDATE ticket_listing SET buyer = ?, buyer_order = ?, held_until = ? \
         WHERE event_id = ? AND buyer IS NULL AND live_listing IN ({})",
        marks(tickets.len())
    );
    let head: Vec<Value> = vec![
        user.into(),
        order.to_string().into(),
        until.map_or(Value::NULL, |t| datetime(t).into()),
    ];
    tx.exec_drop(sql, params(&[head, vec![event.into()]].concat(), tickets))?;
    if tx.affected_rows() != tickets.len() as u64 {
        let why = format!("a listed ticket of {tickets:?} is held by another buyer");
        return Ok(Err(("collision", why)));
    }
    Ok(Ok(()))
}

/// The ones of `tickets` whose listing `user` holds, ascending.
pub fn bought_by(
    tx: &mut Transaction<'_>,
    event: &str,
    user: &str,
    tickets: &[i64],
) -> mysql::Result<Vec<i64>> {
    let sql = format!(
        "SELECT ticket_number FROM ticket_listing WHERE event_id = ? AND buyer = ? AND live_listing IN ({}) ORDER BY ticket_number",
        marks(tickets.len())
    );
    tx.exec(sql, params(&[event.into(), user.into()], tickets))
}

/// A buyer's hold of listed `tickets` ended without a sale: back on the
/// list, no stock given back.
pub fn give_back(tx: &mut Transaction<'_>, event: &str, tickets: &[i64]) -> mysql::Result<()> {
    let sql = format!(
        "UPDATE ticket_listing SET buyer = NULL, buyer_order = NULL, held_until = NULL \
         WHERE event_id = ? AND live_listing IN ({})",
        marks(tickets.len())
    );
    tx.exec_drop(sql, params(&[event.into()], tickets))
}

/// `head`, then `tickets`, as statement parameters.
fn params(head: &[Value], tickets: &[i64]) -> Vec<Value> {
    let mut out: Vec<Value> = head.to_vec();
    out.extend(tickets.iter().map(|t| Value::from(*t)));
    out
}

/// The seller's sold rows of `tickets`: how many there are.
fn sold_rows(
    tx: &mut Transaction<'_>,
    event: &str,
    seller: &str,
    tickets: &[i64],
) -> mysql::Result<i64> {
    let sql = format!(
        "SELECT COUNT(*) FROM ticket_participation WHERE event_id = ? AND user_id = ? AND status = 'active' AND live_ticket IN ({})",
        marks(tickets.len())
    );
    let n: Option<i64> = tx.exec_first(sql, params(&[event.into(), seller.into()], tickets))?;
    Ok(n.unwrap_or(0))
}

fn resell(
    tx: &mut Transaction<'_>,
    event: &str,
    seller: &str,
    tickets: &[i64],
    (id, at): (StreamId, i64),
) -> mysql::Result<Verdict> {
    let mismatch = |why: String| Ok(Err(("resell_mismatch", why)));
    if sold_rows(tx, event, seller, tickets)? != tickets.len() as i64 {
        return mismatch(format!("user {seller:?} has not all of {tickets:?} sold"));
    }
    if let Some((t, _)) = listed(tx, event, tickets)?.first() {
        return mismatch(format!("ticket {t} is listed already"));
    }
    let rows = vec!["(?, ?, ?, ?, ?)"; tickets.len()].join(", ");
    let mut values: Vec<Value> = Vec::with_capacity(tickets.len() * 5);
    for t in tickets {
        values.extend([
            event.into(),
            Value::from(*t),
            seller.into(),
            datetime(at).into(),
            id.to_string().into(),
        ]);
    }
    tx.exec_drop(
        format!("INSERT INTO ticket_listing (event_id, ticket_number, seller, listed_at, listed_stream_id) VALUES {rows}"),
        values,
    )?;
    Ok(Ok(()))
}

/// Ends the live listings of `tickets` as `state` (`unlisted`, `sold`);
/// how many it ended (those of `seller`, held by `buyer` or by nobody).
fn end(
    tx: &mut Transaction<'_>,
    event: &str,
    (seller, buyer, state): (&str, Option<&str>, &str),
    tickets: &[i64],
    (id, at): (StreamId, i64),
) -> mysql::Result<u64> {
    let sql = format!(
        "UPDATE ticket_listing SET state = ?, ended_stream_id = ?, ended_at = ? \
         WHERE event_id = ? AND seller = ? AND buyer <=> ? AND live_listing IN ({})",
        marks(tickets.len())
    );
    let buyer = buyer.map_or(Value::NULL, Value::from);
    let head = [state.into(), id.to_string().into(), datetime(at).into()];
    let key = [event.into(), seller.into(), buyer];
    tx.exec_drop(sql, params(&[head, key].concat(), tickets))?;
    Ok(tx.affected_rows())
}

fn unlist(
    tx: &mut Transaction<'_>,
    event: &str,
    seller: &str,
    tickets: &[i64],
    when: (StreamId, i64),
) -> mysql::Result<Verdict> {
    if end(tx, event, (seller, None, "unlisted"), tickets, when)? != tickets.len() as u64 {
        let why = format!("not all of {tickets:?} are on {seller:?}'s list, unheld");
        return Ok(Err(("unlist_mismatch", why)));
    }
    Ok(Ok(()))
}

fn resold(
    tx: &mut Transaction<'_>,
    event: &str,
    (seller, buyer): (&str, &str),
    tickets: &[i64],
    (id, at): (StreamId, i64),
) -> mysql::Result<Verdict> {
    let mismatch = |why: String| Ok(Err(("resold_mismatch", why)));
    let Some(&first) = tickets.first() else {
        return mismatch("no tickets".into());
    };
    let order: Option<Option<String>> = tx.exec_first(
        "SELECT buyer_order FROM ticket_listing WHERE event_id = ? AND buyer = ? AND live_listing = ?",
        (event, buyer, first),
    )?;
    let Some(bought) = order else {
        return mismatch(format!("user {buyer:?} holds no listing of ticket {first}"));
    };
    if sold_rows(tx, event, seller, tickets)? != tickets.len() as i64 {
        return mismatch(format!("user {seller:?} has not all of {tickets:?} sold"));
    }
    if end(tx, event, (seller, Some(buyer), "sold"), tickets, (id, at))? != tickets.len() as u64 {
        return mismatch(format!(
            "not all of {tickets:?} are listed by {seller:?} and held by {buyer:?}"
        ));
    }
    // The buyer's order: the free tickets bought with these, if any.
    let target = match live_order(tx, event, buyer)? {
        Some((order, _)) => order,
        None => bought,
    };
    hand_over(tx, event, (seller, buyer), target, tickets, (id, at))?;
    let moved = format!(
        "FROM ticket_participation WHERE event_id = ? AND user_id = ? AND live_ticket IN ({})",
        marks(tickets.len())
    );
    let key = params(&[event.into(), buyer.into()], tickets);
    let by: Vec<Value> = vec![seller.into(), id.to_string().into(), datetime(at).into()];
    tx.exec_drop(
        format!("INSERT INTO ticket_resold (event_id, ticket_number, gen, seller, buyer, stream_id, at) \
                 SELECT event_id, ticket_number, gen, ?, user_id, ?, ? {moved}"),
        [by, key].concat(),
    )?;
    Ok(Ok(()))
}

/// Undoes the lost resell `id`: its listings end, marked lost (history;
/// not live, so the seller may list the tickets again).
pub fn undo_resell(tx: &mut Transaction<'_>, event: &str, id: StreamId) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_listing SET state = 'unlisted', lost_in_failover = 1, ended_at = NOW(3), \
         buyer = NULL, buyer_order = NULL, held_until = NULL \
         WHERE event_id = ? AND listed_stream_id = ? AND lost_in_failover = 0",
        (event, id.to_string()),
    )
}

/// Undoes the lost unlist `id`: the listings it ended are listed again,
/// nobody holding them.
pub fn undo_unlist(tx: &mut Transaction<'_>, event: &str, id: StreamId) -> mysql::Result<()> {
    list_again(tx, event, id, "unlisted")
}

/// The listings entry `id` ended as `ended_as` (`unlisted`, `sold`) are
/// listed again; a buyer on them stays.
fn list_again(
    tx: &mut Transaction<'_>,
    event: &str,
    id: StreamId,
    ended_as: &str,
) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_listing SET state = 'listed', ended_stream_id = NULL, ended_at = NULL \
         WHERE event_id = ? AND ended_stream_id = ? AND state = ?",
        (event, id.to_string(), ended_as),
    )
}

/// Undoes a buyer's lost hold, offer or claim `order` of listed tickets:
/// back on the list (they took no stock).
pub fn undo_buy(tx: &mut Transaction<'_>, event: &str, order: StreamId) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_listing SET buyer = NULL, buyer_order = NULL, held_until = NULL \
         WHERE event_id = ? AND buyer_order = ? AND state = 'listed'",
        (event, order.to_string()),
    )
}

/// Undoes the lost resold `id` (its rows went back to the seller first):
/// its listings are listed again, held by their buyer, and its
/// `ticket_resold` rows are marked lost: no refund is owed for them.
pub fn undo_resold(tx: &mut Transaction<'_>, event: &str, id: StreamId) -> mysql::Result<()> {
    list_again(tx, event, id, "sold")?;
    tx.exec_drop(
        "UPDATE ticket_resold SET lost_in_failover = 1 WHERE event_id = ? AND stream_id = ? AND lost_in_failover = 0",
        (event, id.to_string()),
    )
}

/// Undoes the lost expiry or cancel of `buyer`'s hold `order` (until
/// `until`) of `tickets`: the listed ones are held by the buyer again
/// (only they have a live listing with nobody on it; [`buy`] calls the
/// others a collision, which is none here).
pub fn rehold(
    tx: &mut Transaction<'_>,
    event: &str,
    (buyer, order, until): (&str, StreamId, i64),
    tickets: &[i64],
) -> mysql::Result<()> {
    match tickets.is_empty() {
        true => Ok(()),
        false => buy(tx, event, (buyer, order, Some(until)), tickets).map(drop),
    }
}
