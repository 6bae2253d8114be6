//! An order, and every row it writes: the one owner of the
//! `ticket_participation` row shape and of the stock UPDATEs an order
//! makes. The vocabulary: an order's [`OrderStatus`], the [`ChangeKind`]
//! of a confirm, expire or cancel, a [`Change`] of an order older than a
//! batch and a [`NewOrder`] a batch creates. The rows: [`insert_orders`]
//! (one row per ticket, the lead row carrying a seated order's pick,
//! used by the fast path for a whole batch and by the slow path for one
//! order), [`take_stock`] and [`return_stock`] (`ticket_stock`),
//! [`take_category`] (a seated event's `ticket_seat_stock`) and
//! [`recount_categories`] (the heal's). Which category a seat is in:
//! `model::seating`. The planner and both paths write these, the heal
//! undoes them.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::model::seating::tally;
use crate::model::time::datetime;
use protocol::record::{Op, Pick, Record};
use protocol::seats::Layout;
use protocol::StreamId;

/// The status of an order and of each of its participation rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    /// Taken from stock until `held_until`.
    Held,
    /// Sold.
    Active,
    /// Given back by a cancel.
    Cancelled,
    /// The hold ran out.
    Expired,
}

impl OrderStatus {
    /// The SQL ENUM value (the schema spells it `canceled`).
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Held => "held",
            OrderStatus::Active => "active",
            OrderStatus::Cancelled => "canceled",
            OrderStatus::Expired => "expired",
        }
    }

    /// The status named by a SQL ENUM value.
    pub fn parse(text: &str) -> Option<OrderStatus> {
        [
            OrderStatus::Held,
            OrderStatus::Active,
            OrderStatus::Cancelled,
            OrderStatus::Expired,
        ]
        .into_iter()
        .find(|s| s.as_str() == text)
    }

    /// Held or active: the order counts against stock and its user.
    pub fn live(self) -> bool {
        matches!(self, OrderStatus::Held | OrderStatus::Active)
    }
}

/// What a confirm, expire or cancel does to a user's live order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    Confirm,
    Expire,
    Cancel,
}

impl ChangeKind {
    /// The kind of a change op, if `op` is one.
    pub fn of<U>(op: &Op<U>) -> Option<ChangeKind> {
        match op {
            Op::Confirm { .. } => Some(ChangeKind::Confirm),
            Op::Expire { .. } => Some(ChangeKind::Expire),
            Op::Cancel { .. } => Some(ChangeKind::Cancel),
            _ => None,
        }
    }

    /// True when an order in status `s` can undergo this change.
    pub fn accepts(self, s: OrderStatus) -> bool {
        match self {
            ChangeKind::Confirm | ChangeKind::Expire => s == OrderStatus::Held,
            ChangeKind::Cancel => s.live(),
        }
    }

    /// The statuses [`ChangeKind::accepts`] (for SQL `status IN (...)`).
    pub fn sources_sql(self) -> &'static str {
        match self {
            ChangeKind::Confirm | ChangeKind::Expire => "'held'",
            ChangeKind::Cancel => "'held', 'active'",
        }
    }

    /// The status after the change.
    pub fn target(self) -> OrderStatus {
        match self {
            ChangeKind::Confirm => OrderStatus::Active,
            ChangeKind::Expire => OrderStatus::Expired,
            ChangeKind::Cancel => OrderStatus::Cancelled,
        }
    }

    /// The time column the change sets.
    pub fn time_column(self) -> &'static str {
        match self {
            ChangeKind::Confirm => "confirmed_at",
            ChangeKind::Expire => "expired_at",
            ChangeKind::Cancel => "canceled_at",
        }
    }

    /// True when the change gives the tickets back to stock.
    pub fn releases(self) -> bool {
        self != ChangeKind::Confirm
    }

    /// The conflict reason when the change matches no order.
    pub fn mismatch(self) -> &'static str {
        match self {
            ChangeKind::Confirm => "confirm_mismatch",
            ChangeKind::Expire => "expire_mismatch",
            ChangeKind::Cancel => "cancel_mismatch",
        }
    }
}

/// A confirm, expire or cancel of an order that existed before the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    /// Entry id (stored as the rows' `stream_id`).
    pub id: StreamId,
    pub user: String,
    /// Exactly the order's tickets, ascending.
    pub tickets: Vec<i64>,
    /// Unix ms of the entry.
    pub at: i64,
    /// The allocation a held order goes back to (the record's `from`;
    /// None: public stock).
    pub from: Option<String>,
}

impl Change {
    /// The change `rec` (a confirm, expire or cancel) asks for, if it is one.
    pub fn of(id: StreamId, rec: &Record) -> Option<Change> {
        let (user, tickets, _) = rec.op.order()?;
        Some(Change {
            kind: ChangeKind::of(&rec.op)?,
            id,
            user: user.clone(),
            tickets: tickets.as_slice().to_vec(),
            at: rec.at,
            from: rec.op.from().map(str::to_owned),
        })
    }
}

/// An order created by the batch, as it stands at the end of the batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrder {
    /// The id of the claim/hold/offer that created it (`order_id`).
    pub order_id: StreamId,
    pub user: String,
    /// Ascending ticket numbers.
    pub tickets: Vec<i64>,
    pub status: OrderStatus,
    /// Deadline of a hold or offer (unix ms).
    pub held_until: Option<i64>,
    /// Unix ms of the creating entry.
    pub created_at: i64,
    pub confirmed_at: Option<i64>,
    pub cancelled_at: Option<i64>,
    pub expired_at: Option<i64>,
    /// The last entry that changed the order (`stream_id`).
    pub last: StreamId,
    /// How a seated event's seats were chosen (stored on the lead row).
    pub pick: Option<Pick>,
    /// The allocation its tickets came from (None: public stock).
    pub allocation: Option<String>,
}

impl NewOrder {
    /// The order `op` (a claim, hold or offer) creates, if it is one.
    pub fn created_by(id: StreamId, rec: &Record) -> Option<NewOrder> {
        let status = match rec.op {
            Op::Claim { .. } => OrderStatus::Active,
            Op::Hold { .. } | Op::Offer { .. } => OrderStatus::Held,
            _ => return None,
        };
        let (user, tickets, until) = rec.op.order()?;
        Some(NewOrder {
            order_id: id,
            user: user.clone(),
            tickets: tickets.as_slice().to_vec(),
            status,
            held_until: (until > 0).then_some(until),
            created_at: rec.at,
            confirmed_at: None,
            cancelled_at: None,
            expired_at: None,
            last: id,
            pick: rec.op.pick().cloned(),
            allocation: rec.op.from().map(str::to_owned),
        })
    }

    /// Applies change `c`, if the order accepts it with exactly its
    /// tickets (what the per-record path checks).
    pub fn change(&mut self, c: &Change) -> bool {
        let (kind, at) = (c.kind, c.at);
        if !kind.accepts(self.status) || self.tickets != c.tickets {
            return false;
        }
        self.status = kind.target();
        let slot = match kind {
            ChangeKind::Confirm => &mut self.confirmed_at,
            ChangeKind::Expire => &mut self.expired_at,
            ChangeKind::Cancel => &mut self.cancelled_at,
        };
        *slot = Some(at);
        self.last = c.id;
        true
    }
}

/// Rows per multi-row INSERT (keeps placeholders far below 65,535).
const ROWS_PER_INSERT: usize = 1000;

/// Ticket `t` of order `o`; `true` for its first ticket (the lead row).
type Ticket<'a> = (&'a NewOrder, i64, bool);

/// A column of `ticket_participation`: its name, its default (None: never
/// the row's value, always sent) and its value for a ticket of an event.
struct Column {
    name: &'static str,
    default: Option<Value>,
    cell: fn(&str, Ticket<'_>) -> Value,
}

/// The columns of a new row, in the order of the INSERT.
static COLUMNS: [Column; 18] = [
    col("event_id", None, |e, _| e.into()),
    col("order_id", None, |_, (o, _, _)| {
        o.order_id.to_string().into()
    }),
    col("order_tickets", Some(Value::Int(1)), |_, (o, _, _)| {
        (o.tickets.len() as i64).into()
    }),
    col("order_lead", Some(Value::Int(1)), |_, (_, _, lead)| {
        Value::Int(lead as i64)
    }),
    col("user_id", None, |_, (o, _, _)| o.user.as_str().into()),
    col("ticket_number", None, |_, (_, t, _)| t.into()),
    col("status", None, |_, (o, _, _)| o.status.as_str().into()),
    col("held_until", Some(Value::NULL), |_, (o, _, _)| {
        when(o.held_until)
    }),
    col("claimed_at", None, |_, (o, _, _)| {
        datetime(o.created_at).into()
    }),
    col("confirmed_at", Some(Value::NULL), |_, (o, _, _)| {
        when(o.confirmed_at)
    }),
    col("canceled_at", Some(Value::NULL), |_, (o, _, _)| {
        when(o.cancelled_at)
    }),
    col("expired_at", Some(Value::NULL), |_, (o, _, _)| {
        when(o.expired_at)
    }),
    col("stream_id", None, |_, (o, _, _)| o.last.to_string().into()),
    col("seat_pick", Some(Value::NULL), |_, (o, _, lead)| {
        pick_value(o, lead, |p| Some(p.how.as_str().into()))
    }),
    col("seat_section", Some(Value::NULL), |_, (o, _, lead)| {
        pick_value(o, lead, |p| p.section.clone().map(Value::from))
    }),
    col("seat_category", Some(Value::NULL), |_, (o, _, lead)| {
        pick_value(o, lead, |p| p.category.clone().map(Value::from))
    }),
    col("seat_accessible", Some(Value::NULL), |_, (o, _, lead)| {
        pick_value(o, lead, |p| p.accessible.map(Value::from))
    }),
    col("allocation", Some(Value::NULL), |_, (o, _, _)| {
        o.allocation.as_deref().map_or(Value::NULL, Value::from)
    }),
];

const fn col(
    name: &'static str,
    default: Option<Value>,
    cell: fn(&str, Ticket<'_>) -> Value,
) -> Column {
    Column {
        name,
        default,
        cell,
    }
}

/// Unix ms (or none) as a DATETIME(3) parameter.
fn when(ms: Option<i64>) -> Value {
    ms.map_or(Value::NULL, |ms| datetime(ms).into())
}

/// A pick column of order `o`'s row: set on the lead row of a seated
/// event's order, NULL elsewhere.
fn pick_value(o: &NewOrder, lead: bool, f: impl Fn(&Pick) -> Option<Value>) -> Value {
    o.pick
        .as_ref()
        .filter(|_| lead)
        .and_then(f)
        .unwrap_or(Value::NULL)
}

/// The INSERTs of the rows of `orders` (each in the status it has now):
/// one row per ticket, the first its order's lead; at most
/// [`ROWS_PER_INSERT`] rows a statement.
pub fn insert_orders(event: &str, orders: &[NewOrder]) -> Vec<(String, Vec<Value>)> {
    let rows: Vec<Ticket> = orders
        .iter()
        .flat_map(|o| {
            o.tickets
                .iter()
                .enumerate()
                .map(move |(i, t)| (o, *t, i == 0))
        })
        .collect();
    rows.chunks(ROWS_PER_INSERT)
        .map(|rows| insert(event, rows))
        .collect()
}

/// A multi-row INSERT of `rows` into ticket_participation, leaving out
/// the columns that hold their default in every row (a claim-only batch
/// sends no deadlines, end times or order sizes: fewer placeholders, a
/// faster statement).
fn insert(event: &str, rows: &[Ticket<'_>]) -> (String, Vec<Value>) {
    let kept: Vec<&Column> = COLUMNS
        .iter()
        .filter(|c| match &c.default {
            None => true,
            Some(d) => rows.iter().any(|r| (c.cell)(event, *r) != *d),
        })
        .collect();
    let names: Vec<&str> = kept.iter().map(|c| c.name).collect();
    let tuple = format!("({})", vec!["?"; kept.len()].join(", "));
    let sql = format!(
        "INSERT INTO ticket_participation ({}) VALUES {}",
        names.join(", "),
        vec![tuple.as_str(); rows.len()].join(", ")
    );
    let mut params = Vec::with_capacity(rows.len() * kept.len());
    for r in rows {
        params.extend(kept.iter().map(|c| (c.cell)(event, *r)));
    }
    (sql, params)
}

/// The conditional UPDATE of `event`'s stock: `delta` tickets taken (a
/// negative delta gives back), refused (no row matched) unless at least
/// `need` remain: the second line of defence against overselling.
pub fn take_stock(event: &str, need: i64, delta: i64) -> (&'static str, Vec<Value>) {
    let sql = "UPDATE ticket_stock SET remaining_stock = remaining_stock - ? WHERE event_id = ? AND remaining_stock >= ?";
    (sql, vec![delta.into(), event.into(), need.into()])
}

/// The UPDATE that gives `n` tickets back to `event`'s stock.
pub fn return_stock(event: &str, n: i64) -> (&'static str, Vec<Value>) {
    let sql = "UPDATE ticket_stock SET remaining_stock = remaining_stock + ? WHERE event_id = ?";
    (sql, vec![n.into(), event.into()])
}

/// The conditional UPDATE of a category's stock: `delta` seats taken (a
/// negative delta gives back), refused (no row matched) unless at least
/// `need` remain.
pub fn take_category(
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
/// live orders' seats and the free allocated seats of the category, as
/// MySQL's rows say (a no-op for
/// an event without seats). The heal calls it after undoing lost writes:
/// an undone order or change moves the event's stock by its count, but
/// which categories its seats were in is known only to the rows.
pub fn recount_categories(tx: &mut Transaction<'_>, event: &str) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_seat_stock st SET remaining = st.seats - (SELECT COUNT(*) FROM ticket_participation p JOIN ticket_seat s ON s.event_id = p.event_id AND s.seat_id = p.live_ticket WHERE p.event_id = st.event_id AND s.category = st.category) - (SELECT COUNT(*) FROM ticket_seat a WHERE a.event_id = st.event_id AND a.category = st.category AND a.allocation IS NOT NULL) WHERE st.event_id = ?",
        (event,),
    )
}

/// What a record-by-record write refuses: a conflict's reason and detail.
pub type Verdict = Result<(), (&'static str, String)>;

/// `?, ?, ...` for `n` values.
pub fn marks(n: usize) -> String {
    vec!["?"; n].join(", ")
}

/// The first of `tickets` live in an order of `event`, and its holder.
pub fn live_holder(
    tx: &mut Transaction<'_>,
    event: &str,
    tickets: &[i64],
) -> mysql::Result<Option<(i64, String)>> {
    let sql = format!(
        "SELECT ticket_number, user_id FROM ticket_participation WHERE event_id = ? AND live_ticket IN ({}) LIMIT 1",
        marks(tickets.len())
    );
    let mut params: Vec<Value> = vec![event.into()];
    params.extend(tickets.iter().map(|t| (*t).into()));
    tx.exec_first(sql, params)
}

/// A seated event's seats `tickets` taken (`sign` 1) or given back (-1)
/// from their categories' stocks, one at a time; a refused take names the
/// category (`category_oversell`).
pub fn category_stocks(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, &Layout),
    tickets: &[i64],
    sign: i64,
) -> mysql::Result<Verdict> {
    let Ok(counts) = tally(layout, tickets) else {
        return Ok(Ok(())); // checked before: only seats get here
    };
    for (c, n) in counts.into_iter().enumerate().filter(|(_, n)| *n > 0) {
        let category = &layout.categories[c];
        let need = if sign > 0 { n } else { 0 };
        let (sql, params) = take_category(event, category, need, sign * n);
        tx.exec_drop(sql, params)?;
        if tx.affected_rows() != 1 {
            let left: Option<i64> = tx.exec_first(
                "SELECT remaining FROM ticket_seat_stock WHERE event_id = ? AND category = ?",
                (event, category),
            )?;
            let left = left.map_or("no stock row".into(), |l| format!("{l} remaining"));
            let detail =
                format!("category '{category}': {left}, {n} needed — conditional UPDATE refused");
            return Ok(Err(("category_oversell", detail)));
        }
    }
    Ok(Ok(()))
}

/// Tickets taken from `event`'s public stocks (`stock`: what
/// `remaining_stock` was when read), a seated event's categories too:
/// `oversell` or `category_oversell` when a conditional UPDATE refuses.
pub fn take_public(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    tickets: &[i64],
    stock: i64,
) -> mysql::Result<Verdict> {
    let k = tickets.len() as i64;
    let (sql, params) = take_stock(event, k, k);
    tx.exec_drop(sql, params)?;
    if tx.affected_rows() != 1 {
        let detail = format!("remaining_stock is {stock}, {k} needed — conditional UPDATE refused");
        return Ok(Err(("oversell", detail)));
    }
    match layout {
        Some(layout) => category_stocks(tx, (event, layout), tickets, 1),
        None => Ok(Ok(())),
    }
}
