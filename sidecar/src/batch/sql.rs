//! SQL shared by the fast and the slow path (below both): the statements
//! of an init, of a status change, of a draw and of a draw event's queue
//! steps, the draw state of an event's row, and a seated order's pick
//! columns.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::queue::{DrawState, Drawn, QueueStep};
use crate::model::event::Init;
use crate::model::order::NewOrder;
use crate::model::time::datetime;
use protocol::draw::hex;

/// The INSERT of an init's event row, with its parameters.
pub(crate) fn insert_event(event: &str, i: &Init) -> (&'static str, Vec<Value>) {
    let at = datetime(i.at);
    let sql = "INSERT INTO ticket_event (event_id, total, status, opens_at, closes_at, incarnation, hold_ms, ticket_limit, offer_ms, draw_commitment, draw_admit, seat_layout, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    let params = vec![
        event.into(),
        i.total.into(),
        i.status().into(),
        opt_time(i.opens_at),
        opt_time(i.closes_at),
        i.incarnation.map(|i| i.to_string()).into(),
        i.checkout.hold.into(),
        i.checkout.limit.into(),
        i.offer_ms().into(),
        i.draw.map(|d| hex(&d.commitment)).into(),
        i.draw.and_then(|d| d.admit).into(),
        i.layout.clone().into(),
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

/// The UPDATE that stores draw `d`'s seed; it matches the event's row
/// only when not drawn yet and SHA-256(seed) is its commitment.
pub(crate) fn store_draw(event: &str, d: &Drawn) -> (&'static str, Vec<Value>) {
    let sql = "UPDATE ticket_event SET draw_seed = ?, drawn_at = ?, draw_stream_id = ?, updated_at = ? WHERE event_id = ? AND draw_seed IS NULL AND draw_commitment = ?";
    let at = datetime(d.at);
    let params = vec![
        d.seed_hex().into(),
        at.clone().into(),
        d.id.to_string().into(),
        at.into(),
        event.into(),
        d.commitment().into(),
    ];
    (sql, params)
}

/// Rows per multi-row INSERT of queue steps.
const STEP_CHUNK: usize = 1000;

/// The multi-row INSERTs of `steps` into `ticket_draw_step`.
pub(crate) fn insert_steps(event: &str, steps: &[QueueStep]) -> Vec<(String, Vec<Value>)> {
    steps
        .chunks(STEP_CHUNK)
        .map(|chunk| {
            let mut params = Vec::with_capacity(chunk.len() * 7);
            for s in chunk {
                params.extend([
                    event.into(),
                    s.id.ms.into(),
                    s.id.seq.into(),
                    s.kind.as_str().into(),
                    s.user.clone().into(),
                    s.tickets.into(),
                    datetime(s.at).into(),
                ]);
            }
            let tuples = vec!["(?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
            let sql = format!("INSERT INTO ticket_draw_step (event_id, stream_ms, stream_seq, kind, user_id, tickets, at) VALUES {tuples}");
            (sql, params)
        })
        .collect()
}

/// The draw state of `event`'s row; None when MySQL has no row.
pub(crate) fn draw_state(
    tx: &mut Transaction<'_>,
    event: &str,
) -> Result<Option<DrawState>, mysql::Error> {
    let row: Option<(Option<String>, Option<String>)> = tx.exec_first(
        "SELECT draw_commitment, draw_seed FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    Ok(row.map(|(commitment, seed)| DrawState { commitment, seed }))
}

/// Unix ms as a DATETIME(3) parameter, 0 as NULL (no bound).
pub(crate) fn opt_time(ms: i64) -> Value {
    if ms == 0 {
        Value::NULL
    } else {
        Value::from(datetime(ms))
    }
}

/// A pick column of order `o`'s row: set on the lead row of a seated
/// event's order, NULL elsewhere.
pub(crate) fn pick_value(
    o: &NewOrder,
    lead: bool,
    f: impl Fn(&protocol::record::Pick) -> Option<Value>,
) -> Value {
    o.pick
        .as_ref()
        .filter(|_| lead)
        .and_then(f)
        .unwrap_or(Value::NULL)
}
