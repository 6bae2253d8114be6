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

use crate::batch::event::{draw_state, init_rows, insert_steps, set_status, store_draw};
use crate::batch::order::{insert_orders, take_category, take_stock, Change, ChangeKind, NewOrder};
use crate::batch::plan::FastPlan;
use crate::batch::queue::{admitted, DrawState, QueueStep};
use crate::io::mysql::is_record_level;
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

    fn with(text: impl Into<String>, params: Vec<Value>) -> Sql {
        Sql {
            text: text.into(),
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

/// Writes `fp` to `event` (`layout`: the event's, when seated).
/// `Ok(Err(why))` = anomaly: roll back, go slow.
pub fn write(
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
        steps.push((Sql::with(sql, params), Want::Matched(1)));
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
    let init = fp.init.iter().flat_map(|i| init_rows(event, i, layout));
    steps.extend(init.map(|(text, params)| (Sql::with(text, params), Want::Done)));
    if let Some(d) = &fp.draw {
        let (sql, params) = store_draw(event, d);
        steps.push((Sql::with(sql, params), Want::Matched(1)));
    }
    if !queue.is_empty() {
        let inserts = insert_steps(event, queue).into_iter();
        steps.extend(inserts.map(|(text, params)| (Sql::with(text, params), Want::Done)));
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
    let inserts = insert_orders(event, &fp.orders).into_iter();
    steps.extend(inserts.map(|(text, params)| (Sql::with(text, params), Want::Done)));
    if !fp.orders.is_empty() || !fp.changes.is_empty() {
        let (text, params) = take_stock(event, fp.stock_need, fp.stock_delta);
        steps.push((Sql::with(text, params), Want::Matched(1)));
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
            from: None,
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
                from: None,
                user: "a".into(),
                tickets: t.clone(),
            },
            Op::Hold {
                from: None,
                pick: None,
                user: "b".into(),
                tickets: t,
                until: 9,
            },
            Op::Cancel {
                from: None,
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
