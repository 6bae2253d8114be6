//! A seated event's SQL, shared by the fast and the slow path: the seat
//! rows and category stocks an init writes, the conditional UPDATE of a
//! category's stock, and the layout a batch of a seated event is planned
//! with (the one the event's row stores, or a new event's init's).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

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

/// Sets each category stock of a seated event to its seats minus the
/// live orders' seats of the category, as MySQL's rows say (a no-op for
/// an event without seats). The heal calls it after undoing lost writes:
/// an undone order or change moves the event's stock by its count, but
/// which categories its seats were in is known only to the rows.
pub(crate) fn recount_categories(tx: &mut Transaction<'_>, event: &str) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_seat_stock st SET remaining = st.seats - (SELECT COUNT(*) FROM ticket_participation p JOIN ticket_seat s ON s.event_id = p.event_id AND s.seat_id = p.live_ticket WHERE p.event_id = st.event_id AND s.category = st.category) WHERE st.event_id = ?",
        (event,),
    )
}

thread_local! {
    /// Stored layouts this writer has parsed, by event. A stored layout
    /// never changes (written once, with the event's row; event ids are
    /// not reused), so each writer parses an event's once, not per batch
    /// (the 80,000-seat arena's is ~150 KB and ~1 ms to parse).
    static PARSED: RefCell<HashMap<String, Arc<Layout>>> = RefCell::new(HashMap::new());
}

/// Most layouts a writer keeps parsed (then it starts over).
const PARSED_MAX: usize = 64;

/// The layout a batch of `event` is applied with (see [`choose_layout`]),
/// reading the one MySQL stores (parsed once per writer). `seated`:
/// whether the event's row has one, when the caller read it and found a
/// row. An event MySQL has without a layout has none: an init in its
/// batch is a duplicate (a conflict), and its layout must not judge the
/// claims after it.
pub(crate) fn batch_layout(
    tx: &mut Transaction<'_>,
    event: &str,
    todo: &[Entry],
    seated: Option<bool>,
) -> Result<Option<Arc<Layout>>, mysql::Error> {
    let seated = match seated {
        Some(known) => Some(known),
        None => tx.exec_first(
            "SELECT seat_layout IS NOT NULL FROM ticket_event WHERE event_id = ?",
            (event,),
        )?,
    };
    match seated {
        Some(false) => return Ok(None),
        None => return Ok(choose_layout(None, todo).map(Arc::new)),
        Some(true) => {}
    }
    if let Some(layout) = PARSED.with(|p| p.borrow().get(event).cloned()) {
        return Ok(Some(layout));
    }
    let stored: Option<String> = tx
        .exec_first::<Option<String>, _, _>(
            "SELECT seat_layout FROM ticket_event WHERE event_id = ?",
            (event,),
        )?
        .flatten();
    let layout = choose_layout(stored, todo).map(Arc::new);
    if let Some(l) = &layout {
        PARSED.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() >= PARSED_MAX {
                p.clear();
            }
            p.insert(event.to_owned(), l.clone());
        });
    }
    Ok(layout)
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
