//! The slow path: a batch written one record at a time, each in its own
//! savepoint. Every record is checked explicitly, in the order the planning
//! model (the `plan` module's tests) follows, so an anomaly is named precisely and
//! lands in `ticket_conflict` while the rest of the batch is written:
//!
//! * claim / hold / offer: `unknown_event`, `duplicate_order` (the user
//!   already has a live order), `collision` (a ticket is live for someone
//!   else), `oversell` (the conditional stock UPDATE refused); in a seated
//!   event first `unknown_seat` (a ticket that is no seat of the layout),
//!   last `category_oversell` (a category's conditional UPDATE refused);
//! * confirm / expire / cancel: `confirm_mismatch`, `expire_mismatch`,
//!   `cancel_mismatch` when the user has no live order in the right status
//!   (held; held or active for a cancel) with exactly these tickets;
//! * init: `duplicate_init`, `bad_layout` (a seated init whose layout does
//!   not parse or whose total is not its number of seats); open / close /
//!   drop: `unknown_event`;
//! * enter / leave / draw (a draw event's queue): `unknown_event`,
//!   `not_a_draw`, `enter_after_draw`, `draw_mismatch` (SHA-256 of the
//!   revealed seed is not the commitment), `draw_repeated` (drawn before);
//!   an offer in a draw event is also a `ticket_draw_step` row;
//!   a restore here (not at the head of its batch): `restore_mismatch`;
//! * allocate / release, and a claim, hold, expiry or cancel `FROM` an
//!   allocation: as `batch::allocation` checks them (`unknown_allocation`,
//!   `allocation_oversell`, `allocation_mismatch`; an allocate also
//!   `unknown_event`, `unknown_seat`, `collision`, `oversell`,
//!   `category_oversell`). The planner sends every batch holding one
//!   here: allocations are a box office's few commands, and the fast
//!   path stays what a plain batch needs;
//! * transfer / scan: as `batch::after` checks them
//!   (`transfer_mismatch`, `scan_mismatch`); resell / unlist / resold as
//!   `batch::resale` does (`resell_mismatch`, `unlist_mismatch`,
//!   `resold_mismatch`); a claim, hold or offer of listed tickets is
//!   written on their listings (a `collision` when a buyer holds one),
//!   its expiry or cancel puts them back on the list;
//! * `malformed` entries, and `sql_error` for data MySQL refuses;
//! * before any of these, what MySQL cannot take at all (see
//!   `model::entry`): `too_large` (beyond the entry bound) and
//!   `too_large_for_packet` (a seated init beyond `max_allowed_packet`),
//!   never sent.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::after;
use crate::batch::allocation::{self, Move};
use crate::batch::event::{
    draw_state, init_rows, insert_steps, set_status, status_of, store_draw, Init,
};
use crate::batch::order::{
    category_stocks, insert_orders, live_holder, marks, return_stock, take_public, Change,
    NewOrder, OrderStatus, Verdict,
};
use crate::batch::queue::{Drawn, QueueStep, StepKind};
use crate::batch::resale;
use crate::io::mysql::{insert_conflict, is_record_level, packet_limit};
use crate::model::entry::refusal;
use crate::model::seating::{init_layout, tally};
use crate::model::time::datetime;
use crate::model::{Conflict, Entry, Outcome};
use protocol::record::Record;
use protocol::seats::Layout;
use protocol::StreamId;

/// Writes `todo` record by record (`layout`: the event's, when seated);
/// bad records become conflicts.
pub fn write(
    tx: &mut Transaction<'_>,
    event: &str,
    todo: &[Entry],
    layout: Option<&Layout>,
    out: &mut Outcome,
) -> Result<(), mysql::Error> {
    let packet = packet_limit();
    for e in todo {
        tx.query_drop("SAVEPOINT rec")?;
        let verdict = match (&e.rec, refusal(e, packet)) {
            // Never sent: the server would refuse it on every retry.
            (_, Some((reason, detail))) => Err(Conflict::about(e, reason, detail)),
            (Err(m), None) => Err(Conflict::about(
                e,
                "malformed",
                format!("{}: {}", m.reason, m.raw),
            )),
            (Ok(rec), None) => match one(tx, (event, layout), e.id, rec) {
                Ok(Ok(())) => Ok(rec.op.name()),
                Ok(Err((reason, detail))) => Err(Conflict::about(e, reason, detail)),
                Err(err) if is_record_level(&err) => {
                    Err(Conflict::about(e, "sql_error", err.to_string()))
                }
                Err(err) => return Err(err),
            },
        };
        match verdict {
            Ok(op) => {
                tx.query_drop("RELEASE SAVEPOINT rec")?;
                *out.written.entry(op).or_insert(0) += 1;
            }
            Err(c) => {
                tx.query_drop("ROLLBACK TO SAVEPOINT rec")?;
                record_conflict(tx, event, &c)?;
                out.conflicts.push(c);
            }
        }
    }
    Ok(())
}

/// Logs `c` (its detail cut as its row's is) and writes its
/// `ticket_conflict` row.
fn record_conflict(
    tx: &mut Transaction<'_>,
    event: &str,
    c: &Conflict,
) -> Result<(), mysql::Error> {
    log::warn!(
        "event {event}: entry {} -> ticket_conflict ({}): {}",
        c.id,
        c.reason,
        c.row(event).detail
    );
    insert_conflict(tx, event, c, false).map(|_| ())
}

/// Writes one record with explicit checks.
fn one(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    id: StreamId,
    rec: &Record,
) -> Result<Verdict, mysql::Error> {
    if let Some(order) = NewOrder::created_by(id, rec) {
        let verdict = create(tx, (event, layout), &order)?;
        if let (Ok(()), Some(offer)) = (&verdict, QueueStep::of(id, rec)) {
            return queue(tx, event, &offer, None);
        }
        return Ok(verdict);
    }
    if let Some(step) = QueueStep::of(id, rec) {
        return queue(tx, event, &step, Drawn::of(id, rec).as_ref());
    }
    if let Some(c) = Change::of(id, rec) {
        return change(tx, (event, layout), &c);
    }
    if let Some(i) = Init::of(id, rec) {
        return init(tx, event, &i);
    }
    if let Some(verdict) = after::write(tx, event, id, rec)? {
        return Ok(verdict);
    }
    if let Some(verdict) = resale::write(tx, event, id, rec)? {
        return Ok(verdict);
    }
    if let Some(m @ (Move::Allocate { .. } | Move::Release { .. })) = Move::of(&rec.op) {
        return allocation::write(tx, (event, layout), &m, (id, rec.at));
    }
    let Some(status) = status_of(&rec.op) else {
        let detail = format!("{} {id} not at the head of its batch", rec.op.name());
        return Ok(Err(("restore_mismatch", detail)));
    };
    let (sql, params) = set_status(event, status, rec.at);
    tx.exec_drop(sql, params)?;
    Ok(match tx.affected_rows() {
        1 => Ok(()),
        _ => Err((
            "unknown_event",
            format!("{} of an event without a ticket_event row", rec.op.name()),
        )),
    })
}

/// A queue step (an enter, leave, draw, or an offer already written as
/// an order) checked against the event's draw state; a draw stores its
/// seed. An offer of an event without a draw keeps no step.
fn queue(
    tx: &mut Transaction<'_>,
    event: &str,
    step: &QueueStep,
    draw: Option<&Drawn>,
) -> Result<Verdict, mysql::Error> {
    let Some(state) = draw_state(tx, event)? else {
        let detail = format!(
            "{} of an event without a ticket_event row",
            step.kind.as_str()
        );
        return Ok(Err(("unknown_event", detail)));
    };
    if let Err(refusal) = state.admits(step) {
        return Ok(Err(refusal));
    }
    if step.kind == StepKind::Offer && state.commitment.is_none() {
        return Ok(Ok(()));
    }
    if let Some(d) = draw {
        if let Err(refusal) = state.draw(d) {
            return Ok(Err(refusal));
        }
        let (sql, params) = store_draw(event, d);
        tx.exec_drop(sql, params)?;
    }
    for (sql, params) in insert_steps(event, std::slice::from_ref(step)) {
        tx.exec_drop(sql, params)?;
    }
    Ok(Ok(()))
}

fn init(tx: &mut Transaction<'_>, event: &str, i: &Init) -> Result<Verdict, mysql::Error> {
    let total = i.total;
    let exists: Option<i32> = tx.exec_first(
        "SELECT total FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    if let Some(t) = exists {
        let detail = format!("event already exists with total {t}");
        return Ok(Err(("duplicate_init", detail)));
    }
    let layout = match i.layout.as_deref().map(|json| init_layout(json, total)) {
        Some(Err(why)) => return Ok(Err(("bad_layout", format!("the layout: {why}")))),
        Some(Ok(layout)) => Some(layout),
        None => None,
    };
    for (sql, params) in init_rows(event, i, layout.as_ref()) {
        tx.exec_drop(sql, params)?;
    }
    Ok(Ok(()))
}

/// A claim, hold or offer: a new order and one row per ticket.
fn create(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    o: &NewOrder,
) -> Result<Verdict, mysql::Error> {
    let stock: Option<i64> = tx.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )?;
    let Some(stock) = stock else {
        let detail = "order for an event without a ticket_stock row".into();
        return Ok(Err(("unknown_event", detail)));
    };
    if let Some(Err(t)) = layout.map(|l| tally(l, &o.tickets)) {
        let detail = format!("ticket {t} is no seat of the event's layout");
        return Ok(Err(("unknown_seat", detail)));
    }
    let live: Option<(Option<String>, String)> = tx.exec_first(
        "SELECT order_id, CAST(status AS CHAR) FROM ticket_participation WHERE event_id = ? AND live_lead = ?",
        (event, o.user.as_str()),
    )?;
    if let Some((order, status)) = live {
        let order = order.unwrap_or_else(|| "(none)".into());
        let detail = format!("user already has {status} order {order}");
        return Ok(Err(("duplicate_order", detail)));
    }
    if resale::buys_listed(tx, event, &o.user)? {
        let detail = "user already holds a listed ticket".to_string();
        return Ok(Err(("duplicate_order", detail)));
    }
    // Listed tickets stay their seller's rows: the order holds them on
    // their listings, taking no stock; the rest is an ordinary order.
    let listed: Vec<i64> = resale::listed(tx, event, &o.tickets)?
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    let rest;
    let o = match listed.is_empty() {
        true => o,
        false => {
            let until = (o.status == OrderStatus::Held)
                .then_some(o.held_until)
                .flatten();
            let verdict = resale::buy(tx, event, (&o.user, o.order_id, until), &listed)?;
            if verdict.is_err() || listed.len() == o.tickets.len() {
                return Ok(verdict);
            }
            rest = NewOrder {
                tickets: without(&o.tickets, &listed),
                ..o.clone()
            };
            &rest
        }
    };
    if let Some((t, holder)) = live_holder(tx, event, &o.tickets)? {
        let detail = format!("ticket {t} is live for {holder:?}");
        return Ok(Err(("collision", detail)));
    }
    let verdict = match &o.allocation {
        // Its stock, not the public one (its seats are out of the
        // categories' public stock already).
        Some(name) => {
            let m = Move::Take {
                name,
                tickets: &o.tickets,
            };
            allocation::write(tx, (event, layout), &m, (o.order_id, o.created_at))?
        }
        None => take_public(tx, (event, layout), &o.tickets, stock)?,
    };
    if verdict.is_err() {
        return Ok(verdict);
    }
    for (sql, params) in insert_orders(event, std::slice::from_ref(o)) {
        tx.exec_drop(sql, params)?;
    }
    Ok(Ok(()))
}

/// A confirm, expire or cancel of the user's live order.
fn change(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    c: &Change,
) -> Result<Verdict, mysql::Error> {
    let (kind, user, tickets) = (c.kind, c.user.as_str(), c.tickets.as_slice());
    let bought = resale::bought_by(tx, event, user, tickets)?;
    if !bought.is_empty() {
        // Back on the list when not sold (a confirm waits for `resold`).
        if kind.releases() {
            resale::give_back(tx, event, &bought)?;
        }
        let rest = Change {
            tickets: without(tickets, &bought),
            ..c.clone()
        };
        return match rest.tickets.is_empty() {
            true => Ok(Ok(())),
            false => change(tx, (event, layout), &rest),
        };
    }
    let live: Option<(Option<String>, String, i64, Option<String>)> = tx.exec_first(
        "SELECT order_id, CAST(status AS CHAR), order_tickets, allocation FROM ticket_participation WHERE event_id = ? AND live_lead = ?",
        (event, user),
    )?;
    let Some((order, status, n, from)) = live else {
        let detail = format!("user {user:?} has no live order");
        return Ok(Err((kind.mismatch(), detail)));
    };
    if let Some(back) = c.from.as_deref().filter(|b| from.as_deref() != Some(*b)) {
        let from = from.map_or("public stock".into(), |f| format!("allocation '{f}'"));
        let detail = format!("user {user:?}'s order came from {from}, not allocation '{back}'");
        return Ok(Err(("allocation_mismatch", detail)));
    }
    // The order's rows, found through the live_ticket index.
    let rows = format!(
        "event_id = ? AND user_id = ? AND order_id <=> ? AND live_ticket IN ({})",
        marks(tickets.len())
    );
    let mut key: Vec<Value> = vec![event.into(), user.into(), order.clone().into()];
    key.extend(tickets.iter().map(|t| Value::from(*t)));
    let found: Option<i64> = tx.exec_first(
        format!("SELECT COUNT(*) FROM ticket_participation WHERE {rows}"),
        key.clone(),
    )?;
    let accepted = OrderStatus::parse(&status).is_some_and(|s| kind.accepts(s));
    if !accepted || n != tickets.len() as i64 || found != Some(n) {
        let order = order.unwrap_or_else(|| "(none)".into());
        let detail = format!(
            "user {user:?}'s live order {order} is {status} with {n} tickets, not {tickets:?}"
        );
        return Ok(Err((kind.mismatch(), detail)));
    }
    let set = format!("SET {} = ?, stream_id = ?, status = ?", kind.time_column());
    let values: Vec<Value> = vec![
        datetime(c.at).into(),
        c.id.to_string().into(),
        kind.target().as_str().into(),
    ];
    tx.exec_drop(
        format!("UPDATE ticket_participation {set} WHERE {rows}"),
        [values, key].concat(),
    )?;
    if let (true, Some(name)) = (kind.releases(), c.from.as_deref()) {
        let m = Move::Return { name, tickets };
        return allocation::write(tx, (event, layout), &m, (c.id, c.at));
    }
    if kind.releases() {
        let (sql, params) = return_stock(event, tickets.len() as i64);
        tx.exec_drop(sql, params)?;
        if let Some(layout) = layout {
            return category_stocks(tx, (event, layout), tickets, -1);
        }
    }
    Ok(Ok(()))
}

/// `tickets` less `listed` (both ascending).
fn without(tickets: &[i64], listed: &[i64]) -> Vec<i64> {
    tickets
        .iter()
        .copied()
        .filter(|t| listed.binary_search(t).is_err())
        .collect()
}
