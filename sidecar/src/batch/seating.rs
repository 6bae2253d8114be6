//! A seated event's SQL, shared by the fast and the slow path: the seat
//! rows and category stocks an init writes, the conditional UPDATE of a
//! category's stock, and the layout a batch of a seated event is planned
//! with (the one the event's row stores, or a new event's init's).

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::model::seating::{category_sizes, seat_rows};
use crate::model::Entry;
use protocol::record::Op;
use protocol::seats::Layout;

/// Rows per multi-row INSERT of seats.
const SEAT_CHUNK: usize = 1000;

/// The INSERTs of `layout`'s `ticket_seat` rows and its category stocks
/// (each category full).
pub(crate) fn insert_seats(event: &str, layout: &Layout) -> Vec<(String, Vec<Value>)> {
    let rows: Vec<_> = seat_rows(layout).collect();
    let mut out: Vec<(String, Vec<Value>)> = rows
        .chunks(SEAT_CHUNK)
        .map(|chunk| {
            let mut params = Vec::with_capacity(chunk.len() * 7);
            for s in chunk {
                params.extend([
                    event.into(),
                    s.id.into(),
                    s.section.into(),
                    s.row.into(),
                    s.label.into(),
                    s.category.into(),
                    s.accessible.into(),
                ]);
            }
            let tuples = vec!["(?, ?, ?, ?, ?, ?, ?)"; chunk.len()].join(", ");
            let sql = format!("INSERT INTO ticket_seat (event_id, seat_id, section, row_name, label, category, `accessible`) VALUES {tuples}");
            (sql, params)
        })
        .collect();
    let sizes = category_sizes(layout);
    let mut params = Vec::with_capacity(sizes.len() * 4);
    for (category, seats) in &sizes {
        params.extend([
            event.into(),
            (*category).into(),
            (*seats).into(),
            (*seats).into(),
        ]);
    }
    let tuples = vec!["(?, ?, ?, ?)"; sizes.len()].join(", ");
    out.push((
        format!(
            "INSERT INTO ticket_seat_stock (event_id, category, seats, remaining) VALUES {tuples}"
        ),
        params,
    ));
    out
}

/// The conditional UPDATE of a category's stock: `delta` seats taken (a
/// negative delta gives back), refused (no row matched) unless at least
/// `need` remain.
pub(crate) fn take_category(
    event: &str,
    category: &str,
    need: i64,
    delta: i64,
) -> (&'static str, Vec<Value>) {
    let sql = "UPDATE ticket_seat_stock SET remaining = remaining - ? WHERE event_id = ? AND category = ? AND remaining >= ?";
    (
        sql,
        vec![delta.into(), event.into(), category.into(), need.into()],
    )
}

/// The layout a batch of `event` is applied with (see [`choose_layout`]),
/// reading the one MySQL stores.
pub(crate) fn batch_layout(
    tx: &mut Transaction<'_>,
    event: &str,
    todo: &[Entry],
) -> Result<Option<Layout>, mysql::Error> {
    let stored: Option<String> = tx
        .exec_first::<Option<String>, _, _>(
            "SELECT seat_layout FROM ticket_event WHERE event_id = ?",
            (event,),
        )?
        .flatten();
    Ok(choose_layout(stored, todo))
}

/// The layout a batch is applied with: the one MySQL stores for the
/// event, else (a new event) the one its first entry's `init` carries;
/// None for an unseated event, or an init's layout that is not valid (the
/// slow path makes that init a `bad_layout` conflict).
pub fn choose_layout(stored: Option<String>, todo: &[Entry]) -> Option<Layout> {
    if let Some(json) = stored {
        return Layout::parse(&json).ok();
    }
    let init = todo.first().and_then(|e| e.rec.as_ref().ok());
    match init.map(|r| &r.op) {
        Some(Op::Init {
            layout: Some(json),
            total,
            ..
        }) => init_layout(json, *total).ok(),
        _ => None,
    }
}

/// An init's layout, valid only when it parses and has `total` seats.
pub fn init_layout(json: &str, total: i64) -> Result<Layout, String> {
    let layout = Layout::parse(json).map_err(|e| e.0)?;
    layout.check_total(total).map_err(|e| e.0)?;
    Ok(layout)
}
