//! An event's own rows, the one owner of each shape, used by the fast
//! and the slow path alike: what an init writes ([`Init`], [`init_rows`]:
//! the `ticket_event` row, its `ticket_stock` row and a seated event's
//! `ticket_seat` and `ticket_seat_stock` rows), the status an open, close
//! or drop sets ([`status_of`], [`set_status`]), a draw ([`store_draw`])
//! and a draw event's `ticket_draw_step` rows ([`insert_steps`]). What an
//! order writes is in `batch::order`.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::queue::{DrawState, Drawn, QueueStep};
use crate::model::seating::{category_sizes, seat_rows};
use crate::model::time::datetime;
use protocol::draw::hex;
use protocol::model::DrawTerms;
use protocol::record::{default_offer, Checkout, Incarnation, Op, Record, Status};
use protocol::seats::Layout;
use protocol::StreamId;

/// An `init`, as the event row stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init {
    /// Entry id.
    pub id: StreamId,
    /// Total tickets.
    pub total: i64,
    /// Opening time (unix ms, 0 = none).
    pub opens_at: i64,
    /// Closing time (unix ms, 0 = none).
    pub closes_at: i64,
    /// Hold, limit and offer.
    pub checkout: Checkout,
    /// None for an event from before 0.3.
    pub incarnation: Option<Incarnation>,
    /// A draw event's terms (commitment, admit; never the seed).
    pub draw: Option<DrawTerms>,
    /// A seated event's layout (the stored JSON).
    pub layout: Option<String>,
    /// Unix ms of the entry.
    pub at: i64,
    /// `TRANSFER_UNTIL` (unix ms), when given.
    pub transfer_until: Option<i64>,
}

impl Init {
    /// The init `rec` records, if it is one.
    pub fn of(id: StreamId, rec: &Record) -> Option<Init> {
        match &rec.op {
            Op::Init {
                transfer_until,
                total,
                opens_at,
                closes_at,
                checkout,
                incarnation,
                draw,
                layout,
            } => Some(Init {
                id,
                total: *total,
                opens_at: *opens_at,
                closes_at: *closes_at,
                checkout: *checkout,
                incarnation: *incarnation,
                draw: draw.map(|d| DrawTerms { seed: None, ..d }),
                layout: layout.clone(),
                at: rec.at,
                transfer_until: *transfer_until,
            }),
            _ => None,
        }
    }

    /// `offer_ms`: NULL (None) when the offer is the default.
    pub fn offer_ms(&self) -> Option<i64> {
        let c = self.checkout;
        (c.offer != default_offer(c.hold)).then_some(c.offer)
    }

    /// The status the event starts in: a draw event without an opening
    /// time waits, closed, for `TICKET.OPEN` (as the module applies it).
    pub fn status(&self) -> &'static str {
        match (&self.draw, self.opens_at) {
            (Some(_), 0) => "close",
            _ => "open",
        }
    }
}

/// The event status an open, close or drop sets (`ticket_event.status`:
/// `open`, `close` — the op's name, as every release stored it — or
/// `dropped`).
pub fn status_of<U>(op: &Op<U>) -> Option<&'static str> {
    match op {
        Op::Open | Op::Close => Some(op.name()),
        Op::Drop => Some("dropped"),
        _ => None,
    }
}

/// The `ticket_event.status` of a restored event.
pub fn restored_status(s: Status) -> &'static str {
    match s {
        Status::Open => "open",
        Status::Closed => "close",
    }
}

/// The statements of `i`, an init of `event`: its event row, its stock
/// row (set to the total, should a hand repair have left one) and, with
/// the valid `layout` of a seated event, its seat rows and category
/// stocks.
pub(crate) fn init_rows(
    event: &str,
    i: &Init,
    layout: Option<&Layout>,
) -> Vec<(String, Vec<Value>)> {
    let (sql, params) = insert_event(event, i);
    let mut out = vec![(sql.to_owned(), params)];
    out.push((
        // (no VALUES() here: deprecated in MySQL 8)
        "INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?) ON DUPLICATE KEY UPDATE remaining_stock = ?".into(),
        vec![event.into(), i.total.into(), i.total.into()],
    ));
    if let (Some(_), Some(layout)) = (&i.layout, layout) {
        out.extend(insert_seats(event, layout));
    }
    out
}

/// The INSERTs of `layout`'s `ticket_seat` rows and its category stocks
/// (each category full).
fn insert_seats(event: &str, layout: &Layout) -> Vec<(String, Vec<Value>)> {
    let seats: Vec<_> = seat_rows(layout).collect();
    let mut out = insert_rows(
        "INSERT INTO ticket_seat (event_id, seat_id, section, row_name, label, category, `accessible`) VALUES",
        &seats,
        |s| {
            [
                event.into(),
                s.id.into(),
                s.section.into(),
                s.row.into(),
                s.label.into(),
                s.category.into(),
                s.accessible.into(),
            ]
        },
    );
    out.extend(insert_rows(
        "INSERT INTO ticket_seat_stock (event_id, category, seats, remaining) VALUES",
        &category_sizes(layout),
        |(category, seats)| {
            [
                event.into(),
                (*category).into(),
                (*seats).into(),
                (*seats).into(),
            ]
        },
    ));
    out
}

/// The INSERT of an init's event row, with its parameters.
fn insert_event(event: &str, i: &Init) -> (&'static str, Vec<Value>) {
    let at = datetime(i.at);
    let sql = "INSERT INTO ticket_event (event_id, total, status, opens_at, closes_at, incarnation, hold_ms, ticket_limit, offer_ms, draw_commitment, draw_admit, seat_layout, transfer_until, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
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
        i.transfer_until.into(),
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

/// The multi-row INSERTs of `steps` into `ticket_draw_step`.
pub(crate) fn insert_steps(event: &str, steps: &[QueueStep]) -> Vec<(String, Vec<Value>)> {
    insert_rows(
        "INSERT INTO ticket_draw_step (event_id, stream_ms, stream_seq, kind, user_id, tickets, at) VALUES",
        steps,
        |s| {
            [
                event.into(),
                s.id.ms.into(),
                s.id.seq.into(),
                s.kind.as_str().into(),
                s.user.clone().into(),
                s.tickets.into(),
                datetime(s.at).into(),
            ]
        },
    )
}

/// Rows per multi-row INSERT (keeps placeholders far below 65,535).
const ROWS_PER_INSERT: usize = 1000;

/// `head` (`INSERT INTO t (a, b, ...) VALUES`) over `rows`, the `N`
/// values of each made by `values`: one statement per [`ROWS_PER_INSERT`]
/// rows, none for no rows.
fn insert_rows<T, const N: usize>(
    head: &str,
    rows: &[T],
    values: impl Fn(&T) -> [Value; N],
) -> Vec<(String, Vec<Value>)> {
    let tuple = format!("({})", vec!["?"; N].join(", "));
    let statement = |chunk: &[T]| {
        let sql = format!("{head} {}", vec![tuple.as_str(); chunk.len()].join(", "));
        (sql, chunk.iter().flat_map(&values).collect())
    };
    rows.chunks(ROWS_PER_INSERT).map(statement).collect()
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
