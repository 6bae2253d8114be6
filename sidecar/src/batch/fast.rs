//! The fast path's SQL: one planned batch ([`crate::batch::plan::FastPlan`]) as a
//! fixed handful of multi-row statements, in the plan's order — the init;
//! per kind (confirm, expire, cancel), one UPDATE of the rows of the older
//! orders it changes; the live-row check of orders that begin and end in the
//! batch; one INSERT of the rows of the batch's new orders (in their final
//! status); the conditional stock UPDATE (and a seated event's per
//! category); the last open/close/drop. A seated event's init also
//! INSERTs its seats and category stocks. A draw
//! event's batch also stores its draw (an UPDATE that matches only the
//! committed seed of an event not drawn yet) and INSERTs its queue steps,
//! checked first against the event's draw state (see `batch::queue`).
//!
//! Every statement checks what the planner could not: the matched-row count
//! of each UPDATE, the unique indexes (one live lead row per user, one live
//! row per ticket) on each INSERT, and `remaining_stock >= peak need`. Any
//! mismatch is an anomaly: `Ok(Err(why))`, and the caller rolls the batch
//! back and replays it record by record.

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::plan::FastPlan;
use crate::batch::queue::{admitted, DrawState, QueueStep};
use crate::batch::seating::{insert_seats, take_category};
use crate::batch::sql::{
    draw_state, insert_event, insert_steps, pick_value, set_status, store_draw,
};
use crate::io::mysql::is_record_level;
use crate::model::event::Init;
use crate::model::order::{Change, ChangeKind, NewOrder};
use crate::model::time::datetime;
use protocol::seats::Layout;

/// Rows per multi-row statement (keeps placeholders far below 65,535).
const CHUNK: usize = 1000;

/// Ok, or why the fast path gave up.
type Step = Result<(), String>;

/// A statement being built, with its parameters.
#[derive(Default)]
struct Sql {
    text: String,
    params: Vec<Value>,
}

impl Sql {
    fn new(text: &str) -> Sql {
        Sql {
            text: text.to_owned(),
            params: Vec::new(),
        }
    }

    fn with(text: &str, params: Vec<Value>) -> Sql {
        Sql {
            text: text.to_owned(),
            params,
        }
    }

    fn push(&mut self, text: &str) -> &mut Sql {
        self.text.push_str(text);
        self
    }

    fn take(&mut self) -> Sql {
        std::mem::take(self)
    }

    /// ` CASE user_id WHEN ? THEN ? ... END`.
    fn case_user<'a>(&mut self, arms: impl Iterator<Item = (&'a str, Value)>) -> &mut Sql {
        self.text.push_str(" CASE user_id");
        for (user, v) in arms {
            self.text.push_str(" WHEN ? THEN ?");
            self.params.push(user.into());
            self.params.push(v);
        }
        self.push(" END")
    }

    /// `(?, ?, ...), (?, ?, ...)`: one tuple per item, its values taken
    /// as they come (a batch has thousands of rows: no list per row, and
    /// the marks of a tuple made once per width).
    fn tuples<T>(&mut self, items: impl Iterator<Item = T>) -> &mut Sql
    where
        T: IntoIterator<Item = Value>,
        T::IntoIter: ExactSizeIterator,
    {
        let (mut marks, mut width) = (String::new(), None);
        for (i, tuple) in items.enumerate() {
            let values = tuple.into_iter();
            if width != Some(values.len()) {
                width = Some(values.len());
                marks = format!("({})", vec!["?"; values.len()].join(", "));
            }
            if i > 0 {
                self.text.push_str(", ");
            }
            self.text.push_str(&marks);
            self.params.extend(values);
        }
        self
    }

    /// Runs it and checks what it must report.
    fn run(self, tx: &mut Transaction<'_>, want: Want) -> Result<Step, mysql::Error> {
        if want == Want::Zero {
            let n: Option<i64> = tx.exec_first(self.text, self.params)?;
            return Ok(match n {
                Some(0) => Ok(()),
                n => Err(format!("{n:?} live rows where none may be")),
            });
        }
        Ok(match (try_exec(tx, &self.text, self.params)?, want) {
            (Err(e), _) => Err(e),
            (Ok(n), Want::Matched(w)) if n != w => Err(format!("matched {n} rows, not {w}")),
            (Ok(_), _) => Ok(()),
        })
    }
}

/// What a statement must report for the fast path to stand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Anything but a record-level error (a unique index refusing).
    Done,
    /// This matched-row count.
    Matched(u64),
    /// A `SELECT COUNT(*)` of 0.
    Zero,
}

/// Unix ms (or none) as a DATETIME(3) parameter.
fn when(ms: Option<i64>) -> Value {
    ms.map_or(Value::NULL, |ms| datetime(ms).into())
}

/// Applies `fp` to `event` (`layout`: the event's, when seated).
/// `Ok(Err(why))` = anomaly: roll back, go slow.
pub fn apply(
    tx: &mut Transaction<'_>,
    event: &str,
    fp: &FastPlan,
    layout: Option<&Layout>,
) -> Result<Step, mysql::Error> {
    let steps = match queue_steps(tx, event, fp)? {
        Ok(steps) => steps,
        Err(why) => return Ok(Err(why)),
    };
    for (n, (sql, want)) in statements(event, fp, &steps, layout)
        .into_iter()
        .enumerate()
    {
        if let Err(why) = sql.run(tx, want)? {
            return Ok(Err(format!("statement {n}: {why}")));
        }
    }
    Ok(Ok(()))
}

/// The queue steps of `fp` that `ticket_draw_step` keeps, checked against
/// the event's draw state (from the batch's init, else its row); Err when
/// one would be a conflict (the slow path names it).
fn queue_steps(
    tx: &mut Transaction<'_>,
    event: &str,
    fp: &FastPlan,
) -> Result<Result<Vec<QueueStep>, String>, mysql::Error> {
    if fp.queue.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let state = match &fp.init {
        Some(i) => i
            .draw
            .map(|d| DrawState::fresh(&d.commitment))
            .unwrap_or_default(),
        None => match draw_state(tx, event)? {
            Some(state) => state,
            None => return Ok(Err("queue steps of an event without a row".into())),
        },
    };
    Ok(admitted(state, &fp.queue, fp.draw.as_ref()).map_err(|(r, d)| format!("{r}: {d}")))
}

/// The statements of `fp` (with its admitted queue `queue`), in order,
/// each with what it must report.
fn statements(
    event: &str,
    fp: &FastPlan,
    queue: &[QueueStep],
    layout: Option<&Layout>,
) -> Vec<(Sql, Want)> {
    let mut steps = event_steps(event, fp, queue, layout);
    steps.extend(order_steps(event, fp));
    if let Some((status, at)) = fp.status {
        let (sql, params) = set_status(event, status, at);
        let mut sql = Sql::new(sql);
        sql.params = params;
        steps.push((sql, Want::Matched(1)));
    }
    steps
}

/// The event's own statements, first: its init (and a seated event's
/// seats), its draw, a draw event's queue steps.
fn event_steps(
    event: &str,
    fp: &FastPlan,
    queue: &[QueueStep],
    layout: Option<&Layout>,
) -> Vec<(Sql, Want)> {
    let mut steps: Vec<(Sql, Want)> = Vec::new();
    if let Some(i) = &fp.init {
        steps.extend(init(event, i).map(|sql| (sql, Want::Done)));
        if let (Some(_), Some(layout)) = (&i.layout, layout) {
            let seats = insert_seats(event, layout).into_iter();
            steps.extend(seats.map(|(text, params)| (Sql { text, params }, Want::Done)));
        }
    }
    if let Some(d) = &fp.draw {
        let (sql, params) = store_draw(event, d);
        steps.push((
            Sql {
                text: sql.into(),
                params,
            },
            Want::Matched(1),
        ));
    }
    for (text, params) in insert_steps(event, queue) {
        steps.push((Sql { text, params }, Want::Done));
    }
    steps
}

/// The orders' statements: changes of existing orders by kind, the orders
/// created and ended within the batch, the new orders, then the stocks
/// under their conditional UPDATEs.
fn order_steps(event: &str, fp: &FastPlan) -> Vec<(Sql, Want)> {
    let mut steps: Vec<(Sql, Want)> = Vec::new();
    for kind in [ChangeKind::Confirm, ChangeKind::Expire, ChangeKind::Cancel] {
        let group: Vec<&Change> = fp.changes.iter().filter(|c| c.kind == kind).collect();
        for chunk in group.chunks(CHUNK) {
            let (sql, n) = change(event, kind, chunk);
            steps.push((sql, Want::Matched(n)));
        }
    }
    steps.extend(
        transient(event, &fp.orders)
            .into_iter()
            .map(|sql| (sql, Want::Zero)),
    );
    steps.extend(
        insert_orders(event, &fp.orders)
            .into_iter()
            .map(|sql| (sql, Want::Done)),
    );
    if !fp.orders.is_empty() || !fp.changes.is_empty() {
        let mut sql = Sql::new("UPDATE ticket_stock SET remaining_stock = remaining_stock - ? WHERE event_id = ? AND remaining_stock >= ?");
        sql.params = vec![fp.stock_delta.into(), event.into(), fp.stock_need.into()];
        steps.push((sql, Want::Matched(1)));
    }
    for (category, need, delta) in &fp.categories {
        let (text, params) = take_category(event, category, *need, *delta);
        steps.push((Sql::with(text, params), Want::Matched(1)));
    }
    steps
}

/// Orders created and ended within the batch are inserted already ended,
/// so no unique index sees them: check by hand that, when they were
/// created, none of their tickets was live and their user had no live
/// order (the older changes have run; the batch's own orders are checked
/// by the planner).
fn transient(event: &str, orders: &[NewOrder]) -> Vec<Sql> {
    let ended: Vec<&NewOrder> = orders.iter().filter(|o| !o.status.live()).collect();
    let mut out = Vec::new();
    for chunk in ended.chunks(CHUNK) {
        let mut users = Sql::new(
            "SELECT COUNT(*) FROM ticket_participation WHERE event_id = ? AND live_lead IN (",
        );
        users.params.push(event.into());
        users.tuples(chunk.iter().map(|o| vec![o.user.clone().into()]));
        out.push(users.push(")").take());
        let mut rows = Sql::new(
            "SELECT COUNT(*) FROM ticket_participation WHERE event_id = ? AND live_ticket IN (",
        );
        rows.params.push(event.into());
        rows.tuples(
            chunk
                .iter()
                .flat_map(|o| o.tickets.iter().map(|t| vec![(*t).into()])),
        );
        out.push(rows.push(")").take());
    }
    out
}

/// The event and stock rows of an `init`.
fn init(event: &str, i: &Init) -> [Sql; 2] {
    let (sql, params) = insert_event(event, i);
    let mut ev = Sql::new(sql);
    ev.params = params;
    let mut stock = Sql::new("INSERT INTO ticket_stock (event_id, remaining_stock) VALUES (?, ?)");
    stock.params = vec![event.into(), i.total.into()];
    [ev, stock]
}

/// The UPDATE of one kind of change of older orders, with the matched-row
/// count it must report: every ticket of the change live for its user in
/// an order of that size (so the order has exactly these tickets).
fn change(event: &str, kind: ChangeKind, chunk: &[&Change]) -> (Sql, u64) {
    let (col, to, from) = (
        kind.time_column(),
        kind.target().as_str(),
        kind.sources_sql(),
    );
    let mut sql = Sql::new(&format!("UPDATE ticket_participation SET {col} ="));
    sql.case_user(
        chunk
            .iter()
            .map(|c| (c.user.as_str(), datetime(c.at).into())),
    );
    sql.push(", stream_id =");
    sql.case_user(
        chunk
            .iter()
            .map(|c| (c.user.as_str(), c.id.to_string().into())),
    );
    sql.push(&format!(
        ", status = '{to}' WHERE event_id = ? AND status IN ({from}) AND live_ticket IN ("
    ));
    sql.params.push(event.into());
    let rows: Vec<(&Change, i64)> = chunk
        .iter()
        .flat_map(|c| c.tickets.iter().map(move |t| (*c, *t)))
        .collect();
    sql.tuples(rows.iter().map(|(_, t)| vec![(*t).into()]));
    sql.push(") AND (user_id, ticket_number, order_tickets) IN (");
    sql.tuples(rows.iter().map(|(c, t)| {
        let n = c.tickets.len() as i64;
        vec![c.user.clone().into(), (*t).into(), n.into()]
    }));
    sql.push(")");
    (sql, rows.len() as u64)
}

/// The INSERTs of the rows of the batch's new orders.
fn insert_orders(event: &str, orders: &[NewOrder]) -> Vec<Sql> {
    let rows: Vec<Ticket> = orders
        .iter()
        .flat_map(|o| {
            o.tickets
                .iter()
                .enumerate()
                .map(move |(i, t)| (o, *t, i == 0))
        })
        .collect();
    rows.chunks(CHUNK).map(|rows| insert(event, rows)).collect()
}

/// Ticket `t` of order `o`; `true` for its first ticket (the lead row).
type Ticket<'a> = (&'a NewOrder, i64, bool);

/// A column of `ticket_participation` the fast path writes: its name, its
/// default (None: never the row's value, always sent) and its value for
/// a ticket of an event.
struct Column {
    name: &'static str,
    default: Option<Value>,
    cell: fn(&str, Ticket<'_>) -> Value,
}

/// The columns of a new row, in the order of the INSERT.
static COLUMNS: [Column; 17] = [
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
        when(o.canceled_at)
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

/// A multi-row INSERT of `rows` into ticket_participation, leaving out
/// the columns that hold their default in every row (a claim-only batch
/// sends no deadlines, end times or order sizes: fewer placeholders, a
/// faster statement).
fn insert(event: &str, rows: &[Ticket<'_>]) -> Sql {
    let kept: Vec<&Column> = COLUMNS
        .iter()
        .filter(|c| match &c.default {
            None => true,
            Some(d) => rows.iter().any(|r| (c.cell)(event, *r) != *d),
        })
        .collect();
    let names: Vec<&str> = kept.iter().map(|c| c.name).collect();
    let mut sql = Sql::new(&format!(
        "INSERT INTO ticket_participation ({}) VALUES ",
        names.join(", ")
    ));
    sql.params.reserve(rows.len() * kept.len());
    sql.tuples(
        rows.iter()
            .map(|r| kept.iter().map(|c| (c.cell)(event, *r))),
    );
    sql
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::plan::{plan, Plan};
    use crate::model::Entry;
    use protocol::record::{Op, Record, Tickets};
    use protocol::StreamId;

    fn fast_plan(ops: Vec<Op>) -> FastPlan {
        let entries: Vec<Entry> = ops
            .into_iter()
            .enumerate()
            .map(|(i, op)| Entry::new(StreamId::new(5, i as u64), Ok(Record { op, at: 1000 })))
            .collect();
        match plan(StreamId::ZERO, &entries, None).1 {
            Plan::Fast(fp) => *fp,
            other => panic!("{other:?}"),
        }
    }

    fn marks(sql: &Sql) -> usize {
        sql.text.matches('?').count()
    }

    #[test]
    fn claims_bind_only_what_differs() {
        let claim = |u: &str, t: &[i64]| Op::Claim {
            pick: None,
            user: u.into(),
            tickets: Tickets::from_sorted(t.to_vec()),
        };
        let fp = fast_plan(vec![claim("a", &[1]), claim("b", &[2])]);
        let steps = statements("e", &fp, &[], None);
        assert_eq!(steps.len(), 2, "insert + stock");
        let (insert, want) = &steps[0];
        assert_eq!(*want, Want::Done);
        assert!(insert.text.starts_with("INSERT INTO ticket_participation (event_id, order_id, user_id, ticket_number, status, claimed_at, stream_id) VALUES"), "{}", insert.text);
        assert_eq!(marks(insert), insert.params.len());
        assert_eq!(insert.params.len(), 14);
        assert_eq!(steps[1].1, Want::Matched(1));
        // two tickets: order size and the lead flag are sent too
        let fp = fast_plan(vec![claim("a", &[1, 2])]);
        let text = &statements("e", &fp, &[], None)[0].0.text;
        assert!(text.contains("order_tickets, order_lead"), "{text}");
    }

    #[test]
    fn changes_match_user_ticket_and_order_size() {
        let t = Tickets::from_sorted(vec![3, 4]);
        let fp = fast_plan(vec![
            Op::Expire {
                user: "a".into(),
                tickets: t.clone(),
            },
            Op::Hold {
                pick: None,
                user: "b".into(),
                tickets: t,
                until: 9,
            },
            Op::Cancel {
                user: "b".into(),
                tickets: Tickets::from_sorted(vec![3, 4]),
            },
        ]);
        let steps = statements("e", &fp, &[], None);
        let (change, want) = &steps[0];
        assert_eq!(*want, Want::Matched(2));
        assert!(
            change
                .text
                .contains("status = 'expired' WHERE event_id = ? AND status IN ('held')"),
            "{}",
            change.text
        );
        assert!(change
            .text
            .contains("(user_id, ticket_number, order_tickets) IN ((?, ?, ?), (?, ?, ?))"));
        assert_eq!(marks(change), change.params.len());
        // b's order began and ended in the batch: checked by hand, twice
        assert_eq!(steps[1].1, Want::Zero);
        assert_eq!(steps[2].1, Want::Zero);
        assert!(steps[3].0.text.contains("held_until"));
        // stock: 2 back, 2 taken, 2 back; the peak need is 0
        assert_eq!((fp.stock_delta, fp.stock_need), (-2, 0));
    }
}
