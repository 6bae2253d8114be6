//! Batch planning: which SQL one batch of log entries needs.
//!
//! The writer hands a batch (entries of one event, in id order) and the offset
//! it found under `SELECT .. FOR UPDATE` to [`plan`]. Entries at or below the
//! offset are dropped (already written — this is what makes a retry, a second
//! sidecar or a restart after `kill -9` harmless). The rest either fit the
//! **fast path** — a fixed handful of multi-row statements and one conditional
//! stock UPDATE — or the batch goes down the **slow path**, one record at a
//! time, so each bad record becomes a `ticket_conflict` row.
//!
//! The fast path runs, in this order: the `init`; one UPDATE per kind for the
//! confirms, expiries and cancels of orders that existed before the batch
//! ([`Change`]); one multi-row INSERT of the rows of every order the batch
//! creates, with the status it has at the end of the batch ([`NewOrder`]: a
//! hold confirmed in the same batch is inserted as sold); the stock UPDATE;
//! the last open/close (see the `fast` module). [`plan`] only admits batches where that reordering cannot
//! change the outcome:
//!
//! * no malformed entry, `init` only first;
//! * an order that existed before the batch changes at most once, and only
//!   before its user's first new order (a cancel or expiry frees the user);
//! * a change of an order created in the batch must be one the per-record
//!   path would accept (right status, the same tickets), else slow;
//! * a ticket is never taken twice while live within the batch, and never
//!   released by an older order after the batch has taken it.
//!
//! Whatever the planner cannot see (the rows already in MySQL) is checked by
//! the statements themselves: matched-row counts, the unique indexes, and the
//! conditional stock UPDATE with the *peak* need over the batch's prefixes, so
//! one UPDATE refuses exactly what per-record writing would refuse. A
//! seated event (planned with its layout) does the same per category: one
//! conditional UPDATE of each category's stock the batch touches, with the
//! category's peak need; a ticket that is no seat of the layout, or an init
//! whose layout is not valid, goes slow. The tests check all of this
//! against a model of the SQL.

use std::collections::{HashMap, HashSet};

use crate::batch::event::{status_of, Init};
use crate::batch::order::{Change, NewOrder};
use crate::batch::queue::{Drawn, QueueStep, StepKind};
use crate::model::seating::{tally, CategoryNeed};
use crate::model::Entry;
use protocol::record::{Op, Record};
use protocol::seats::Layout;
use protocol::StreamId;

/// The statements of a fast-path batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FastPlan {
    /// Event creation, always the first entry when present.
    pub init: Option<Init>,
    /// Changes of orders older than the batch, written before the inserts.
    pub changes: Vec<Change>,
    /// Orders the batch creates, in their final status.
    pub orders: Vec<NewOrder>,
    /// The last open/close/drop of the batch: (the status it sets, at).
    pub status: Option<(&'static str, i64)>,
    /// `remaining_stock` must be at least this before the batch (peak prefix
    /// need, `>= 0`); `UPDATE .. WHERE remaining_stock >= need`.
    pub stock_need: i64,
    /// Net stock change: tickets taken minus tickets given back.
    pub stock_delta: i64,
    /// A draw event's enters, leaves, draw and offers, in log order (the
    /// offers of other events are dropped when written).
    pub queue: Vec<QueueStep>,
    /// The batch's draw (at most one).
    pub draw: Option<Drawn>,
    /// A seated event's category stocks the batch changes: (category,
    /// need, delta), as `stock_need` and `stock_delta` per category.
    pub categories: Vec<(String, i64, i64)>,
}

/// What a batch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing above the offset: only (re)trim.
    Nothing,
    /// One set of multi-row statements.
    Fast(Box<FastPlan>),
    /// Record by record; the string says why the fast path was not taken.
    Slow(String),
}

/// Drops entries at or below `offset` and returns the rest with their
/// plan; `layout`: the event's, when it is seated.
pub fn plan(offset: StreamId, entries: &[Entry], layout: Option<&Layout>) -> (Vec<Entry>, Plan) {
    let todo: Vec<Entry> = entries.iter().filter(|e| e.id > offset).cloned().collect();
    if todo.is_empty() {
        return (todo, Plan::Nothing);
    }
    let planner = Planner {
        layout,
        ..Planner::default()
    };
    let p = match planner.run(&todo) {
        Ok(fp) => Plan::Fast(Box::new(fp)),
        Err(why) => Plan::Slow(why),
    };
    (todo, p)
}

/// What the planner knows about one user within the batch.
#[derive(Debug, Clone, Copy)]
enum Seen {
    /// The user's order from before the batch changed; `freed` when that
    /// was a cancel or an expiry.
    Older { freed: bool },
    /// The user's latest order is `orders[i]` of the plan.
    New(usize),
}

/// State of the fast-path check over one batch.
#[derive(Default)]
struct Planner<'a> {
    fp: FastPlan,
    users: HashMap<&'a str, Seen>,
    /// Tickets live in an order created by the batch, right now.
    live: HashSet<i64>,
    /// Tickets some order of the batch has taken.
    taken: HashSet<i64>,
    /// Stock taken so far (running prefix sum).
    running: i64,
    /// A seated event's layout.
    layout: Option<&'a Layout>,
    /// Its category stocks taken so far.
    categories: CategoryNeed,
}

impl<'a> Planner<'a> {
    fn run(mut self, todo: &'a [Entry]) -> Result<FastPlan, String> {
        for (i, e) in todo.iter().enumerate() {
            let rec = match &e.rec {
                Ok(r) => r,
                Err(m) => return Err(format!("malformed entry {}: {}", e.id, m.reason)),
            };
            self.entry(i, e.id, rec)?;
        }
        self.fp.stock_delta = self.running;
        if let Some(layout) = self.layout {
            let updates = self.categories.updates();
            self.fp.categories = updates
                .into_iter()
                .map(|(c, need, delta)| (layout.categories[c].clone(), need, delta))
                .collect();
        }
        Ok(self.fp)
    }

    fn entry(&mut self, i: usize, id: StreamId, rec: &'a Record) -> Result<(), String> {
        match &rec.op {
            Op::Open | Op::Close | Op::Drop => {
                self.fp.status = status_of(&rec.op).map(|status| (status, rec.at));
                Ok(())
            }
            Op::Init {
                layout: Some(_), ..
            } if i == 0 && self.layout.is_none() => {
                Err(format!("init {id}: its layout is not valid"))
            }
            Op::Init { .. } if i == 0 => {
                self.fp.init = Init::of(id, rec);
                Ok(())
            }
            Op::Init { .. } => Err(format!("init {id} not first in batch")),
            Op::Enter { .. } | Op::Leave { .. } | Op::Draw { .. } => self.queue(id, rec),
            Op::Offer { .. } => {
                // A draw event keeps its offers as queue steps too.
                self.fp.queue.extend(QueueStep::of(id, rec));
                self.order(id, rec)
            }
            _ => self.order(id, rec),
        }
    }

    /// A claim, hold or offer (a new order), or a confirm, expire or
    /// cancel (a change of one).
    fn order(&mut self, id: StreamId, rec: &'a Record) -> Result<(), String> {
        let op = &rec.op;
        if op.from().is_some() || matches!(op, Op::Allocate { .. } | Op::Release { .. }) {
            // batch/allocation.rs: allocations go record by record.
            return Err(format!("{} {id} moves allocated stock", op.name()));
        }
        match (
            op.order(),
            NewOrder::created_by(id, rec),
            Change::of(id, rec),
        ) {
            (Some((user, _, _)), Some(order), _) => self.create(user, order),
            (Some((user, _, _)), None, Some(c)) => self.change(user, c),
            _ => Err(format!("{} {id} has no fast path", op.name())),
        }
    }

    /// An enter, leave or draw: a queue step (checked against the event's
    /// row when written); an enter after the batch's draw, or a second
    /// draw, goes slow (where it becomes a conflict).
    fn queue(&mut self, id: StreamId, rec: &Record) -> Result<(), String> {
        if let Some(d) = Drawn::of(id, rec) {
            if self.fp.draw.is_some() {
                return Err(format!("second draw {id} in the batch"));
            }
            self.fp.draw = Some(d);
        }
        let step = QueueStep::of(id, rec).ok_or_else(|| format!("{id} is no queue step"))?;
        if step.kind == StepKind::Enter && self.fp.draw.is_some() {
            return Err(format!("enter {id} after the batch's draw"));
        }
        self.fp.queue.push(step);
        Ok(())
    }

    /// A claim, hold or offer.
    fn create(&mut self, user: &'a str, order: NewOrder) -> Result<(), String> {
        match self.users.get(user) {
            Some(Seen::Older { freed: false }) => {
                return Err(format!("user {user:?} orders while an older order is live"))
            }
            Some(Seen::New(i)) if self.fp.orders[*i].status.live() => {
                return Err(format!("user {user:?} has two live orders in the batch"))
            }
            _ => {}
        }
        for t in &order.tickets {
            if !self.live.insert(*t) {
                return Err(format!("ticket {t} taken twice in the batch"));
            }
            self.taken.insert(*t);
        }
        self.seats(&order.tickets, 1)?;
        self.running += order.tickets.len() as i64;
        self.fp.stock_need = self.fp.stock_need.max(self.running);
        self.users.insert(user, Seen::New(self.fp.orders.len()));
        self.fp.orders.push(order);
        Ok(())
    }

    /// A confirm, expire or cancel.
    fn change(&mut self, user: &'a str, c: Change) -> Result<(), String> {
        match self.users.get(user).copied() {
            None => self.change_older(user, c),
            Some(Seen::Older { .. }) => Err(format!("user {user:?}: second change in the batch")),
            Some(Seen::New(i)) => {
                if !self.fp.orders[i].change(&c) {
                    return Err(format!(
                        "{:?} {} does not match the batch's order",
                        c.kind, c.id
                    ));
                }
                if c.kind.releases() {
                    self.release(&c.tickets)?;
                }
                Ok(())
            }
        }
    }

    /// A change of the user's order from before the batch.
    fn change_older(&mut self, user: &'a str, c: Change) -> Result<(), String> {
        let freed = c.kind.releases();
        if freed {
            if let Some(t) = c.tickets.iter().find(|t| self.taken.contains(t)) {
                return Err(format!("ticket {t} released after the batch took it"));
            }
            self.release(&c.tickets)?;
        }
        self.users.insert(user, Seen::Older { freed });
        self.fp.changes.push(c);
        Ok(())
    }

    fn release(&mut self, tickets: &[i64]) -> Result<(), String> {
        for t in tickets {
            self.live.remove(t);
        }
        self.running -= tickets.len() as i64;
        self.seats(tickets, -1)
    }

    /// A seated event's seats taken (`sign` 1) or given back (-1), by
    /// category; a ticket that is no seat goes slow.
    fn seats(&mut self, tickets: &[i64], sign: i64) -> Result<(), String> {
        let Some(layout) = self.layout else {
            return Ok(());
        };
        let counts = tally(layout, tickets).map_err(|t| format!("ticket {t} is no seat"))?;
        self.categories.add(&counts, sign);
        Ok(())
    }
}

/// Counts entries by op name (`malformed` for undecodable ones).
pub fn count_ops(entries: &[Entry]) -> HashMap<&'static str, u64> {
    let mut out = HashMap::new();
    for e in entries {
        let name = match &e.rec {
            Ok(r) => r.op.name(),
            Err(_) => "malformed",
        };
        *out.entry(name).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::order::OrderStatus;
    use crate::batch::queue::{admitted, DrawState};
    use crate::model::seating::{category_sizes, choose_layout, init_layout};
    use proptest::prelude::*;
    use protocol::record::{Checkout, Incarnation, Malformed, Tickets};

    /// The seated events' venue: seats 1-3 in category front, 4-8 general
    /// (ticket 9 is no seat).
    const SEATED: &str = r#"{"sections":[{"name":"A","category":"front","rows":[{"name":"1","seats":3}]},{"name":"B","rows":[{"name":"1","seats":5}]}]}"#;

    fn seated() -> Layout {
        Layout::parse(SEATED).unwrap()
    }

    /// The venue's stored form, as an init record carries it.
    fn stored() -> String {
        seated().to_json()
    }

    /// Seats of `tickets` by category of the venue; None if one is no seat.
    fn counts(tickets: &[i64]) -> Option<Vec<i64>> {
        tally(&seated(), tickets).ok()
    }

    /// The seed the model's draw events commit to (another one is a
    /// mismatch).
    const SEED: [u8; 32] = [1; 32];

    fn committed() -> [u8; 32] {
        let mut c = [0u8; 32];
        let text = protocol::draw::commitment(&SEED);
        c.copy_from_slice(&protocol::draw::parse_seed(&text).unwrap_or_default());
        c
    }

    /// A model of the MySQL rows of one event (orders; each order's rows
    /// share its status), with the per-record (slow path) semantics and the
    /// fast-path statement semantics.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    struct Db {
        event: bool,
        /// What the init stored (total, window, checkout, incarnation).
        init: Option<Init>,
        /// The status the last open/close/drop set, and when.
        status: Option<(&'static str, i64)>,
        stock: i64,
        orders: Vec<NewOrder>,
        conflicts: Vec<(StreamId, &'static str)>,
        /// The draw columns of the event row.
        draw: DrawState,
        /// ticket_draw_step.
        steps: Vec<QueueStep>,
        /// A seated event's category stocks (front, general); None when
        /// the event is not seated.
        categories: Option<Vec<i64>>,
    }

    impl Db {
        fn live_order(&mut self, user: &str) -> Option<&mut NewOrder> {
            self.orders
                .iter_mut()
                .find(|o| o.status.live() && o.user == user)
        }

        fn live_ticket(&self, t: i64) -> bool {
            self.orders
                .iter()
                .any(|o| o.status.live() && o.tickets.contains(&t))
        }

        /// Slow path: exactly what the per-record SQL checks, in its order.
        fn write_one(&mut self, e: &Entry) {
            let rec = match &e.rec {
                Ok(r) => r,
                Err(_) => return self.conflicts.push((e.id, "malformed")),
            };
            if let Err(reason) = self.one(e.id, rec) {
                self.conflicts.push((e.id, reason));
            }
        }

        fn one(&mut self, id: StreamId, rec: &Record) -> Result<(), &'static str> {
            if let Some(i) = Init::of(id, rec) {
                if self.event {
                    return Err("duplicate_init");
                }
                if let Some(json) = &i.layout {
                    let layout = init_layout(json, i.total).map_err(|_| "bad_layout")?;
                    let sizes = category_sizes(&layout).into_iter().map(|c| c.1);
                    self.categories = Some(sizes.collect());
                }
                self.event = true;
                self.stock = i.total;
                self.draw = i
                    .draw
                    .map(|d| DrawState::fresh(&d.commitment))
                    .unwrap_or_default();
                self.init = Some(i);
            } else if let Op::Restore { .. } = rec.op {
                return Err("restore_mismatch");
            } else if let Op::Allocate { .. } | Op::Release { .. } = rec.op {
                // never fast (see `allocations_go_record_by_record`); the
                // model does not write them
                return Err("allocation");
            } else if let Some(order) = NewOrder::created_by(id, rec) {
                self.create(order)?;
                let offer = QueueStep::of(id, rec).filter(|_| self.draw.commitment.is_some());
                self.steps.extend(offer);
            } else if let Some(step) = QueueStep::of(id, rec) {
                self.queue(step, Drawn::of(id, rec))?;
            } else if let Some(c) = Change::of(id, rec) {
                let o = self.live_order(&c.user).ok_or(c.kind.mismatch())?;
                if !o.change(&c) {
                    return Err(c.kind.mismatch());
                }
                if c.kind.releases() {
                    self.stock += c.tickets.len() as i64;
                    let back = counts(&c.tickets);
                    if let (Some(cats), Some(back)) = (&mut self.categories, back) {
                        cats.iter_mut().zip(back).for_each(|(c, n)| *c += n);
                    }
                }
            } else if !self.event {
                return Err("unknown_event"); // open / close / drop
            } else {
                self.status = status_of(&rec.op).map(|s| (s, rec.at));
            }
            Ok(())
        }

        /// An enter, leave or draw, as the slow path checks it.
        fn queue(&mut self, step: QueueStep, draw: Option<Drawn>) -> Result<(), &'static str> {
            if !self.event {
                return Err("unknown_event");
            }
            self.draw.admits(&step).map_err(|r| r.0)?;
            if let Some(d) = &draw {
                self.draw.draw(d).map_err(|r| r.0)?;
                self.draw.after(d);
            }
            self.steps.push(step);
            Ok(())
        }

        fn create(&mut self, order: NewOrder) -> Result<(), &'static str> {
            if !self.event {
                return Err("unknown_event");
            }
            let seats = match self.categories {
                Some(_) => Some(counts(&order.tickets).ok_or("unknown_seat")?),
                None => None,
            };
            if self.live_order(&order.user).is_some() {
                return Err("duplicate_order");
            }
            if order.tickets.iter().any(|t| self.live_ticket(*t)) {
                return Err("collision");
            }
            let k = order.tickets.len() as i64;
            if self.stock < k {
                return Err("oversell");
            }
            if let (Some(cats), Some(seats)) = (&mut self.categories, seats) {
                if cats.iter().zip(&seats).any(|(c, n)| c < n) {
                    return Err("category_oversell");
                }
                cats.iter_mut().zip(seats).for_each(|(c, n)| *c -= n);
            }
            self.stock -= k;
            self.orders.push(order);
            Ok(())
        }

        /// Fast path: the statements in fast order; Err = anomaly (rollback).
        fn write_fast(&self, fp: &FastPlan) -> Result<Db, ()> {
            let mut db = self.clone();
            if let Some(i) = &fp.init {
                if db.event {
                    return Err(()); // duplicate key on ticket_event
                }
                db.event = true;
                db.stock = i.total;
                if i.layout.is_some() {
                    let venue = seated();
                    let sizes = category_sizes(&venue).into_iter().map(|c| c.1);
                    db.categories = Some(sizes.collect());
                }
                db.draw = i
                    .draw
                    .map(|d| DrawState::fresh(&d.commitment))
                    .unwrap_or_default();
                db.init = Some(i.clone());
            }
            if !fp.queue.is_empty() {
                // fast::queue_steps: the event's draw state, then the steps
                if !db.event {
                    return Err(());
                }
                let kept =
                    admitted(db.draw.clone(), &fp.queue, fp.draw.as_ref()).map_err(|_| ())?;
                if let Some(d) = &fp.draw {
                    db.draw.after(d);
                }
                db.steps.extend(kept);
            }
            let touches = fp.status.is_some() || !fp.orders.is_empty() || !fp.changes.is_empty();
            if !db.event && touches {
                return Err(()); // stock / event UPDATE matched no row
            }
            for c in &fp.changes {
                // matched-row counts of the order and row UPDATEs
                let o = db.live_order(&c.user).ok_or(())?;
                if !o.change(c) {
                    return Err(());
                }
            }
            // unique (event_id, live_lead) and (event_id, live_ticket) for
            // live new orders, the transient check for ended ones
            for o in &fp.orders {
                if db.live_order(&o.user).is_some() || o.tickets.iter().any(|t| db.live_ticket(*t))
                {
                    return Err(());
                }
            }
            db.orders.extend(fp.orders.iter().cloned());
            if db.stock < fp.stock_need {
                return Err(()); // conditional UPDATE matched no row
            }
            db.stock -= fp.stock_delta;
            for (name, need, delta) in &fp.categories {
                // one conditional UPDATE per category
                let cats = db.categories.as_mut().ok_or(())?;
                let c = seated().category_index(name).ok_or(())? as usize;
                if cats[c] < *need {
                    return Err(());
                }
                cats[c] -= delta;
            }
            if fp.status.is_some() {
                db.status = fp.status;
            }
            Ok(db)
        }
    }

    fn tickets() -> impl Strategy<Value = Tickets> {
        proptest::collection::btree_set(1..10i64, 1..3)
            .prop_map(|s| Tickets::from_sorted(s.into_iter().collect()))
    }

    fn arb_op() -> impl Strategy<Value = Result<Op, ()>> {
        let u = || (0..5usize).prop_map(|u| format!("u{u}"));
        prop_oneof![
            4 => (u(), tickets()).prop_map(|(user, tickets)| Ok(Op::Claim { from: None, pick: None, user, tickets })),
            4 => (u(), tickets(), 1..9i64).prop_map(|(user, tickets, until)| Ok(Op::Hold { from: None, pick: None, user, tickets, until })),
            1 => (u(), tickets(), 1..9i64).prop_map(|(user, tickets, until)| Ok(Op::Offer { pick: None, user, tickets, until })),
            3 => (u(), tickets()).prop_map(|(user, tickets)| Ok(Op::Confirm { user, tickets })),
            2 => (u(), tickets()).prop_map(|(user, tickets)| Ok(Op::Expire { from: None, user, tickets })),
            3 => (u(), tickets()).prop_map(|(user, tickets)| Ok(Op::Cancel { from: None, user, tickets })),
            1 => (1..12i64, 0..3i64, proptest::option::of(1..4u64)).prop_map(|(t, h, inc)| Ok(Op::Init { transfer_until: None, layout: None,
                total: t,
                opens_at: 0,
                closes_at: 0,
                checkout: Checkout { hold: h * 1000, limit: 1 + h, offer: 5000 + h },
                incarnation: inc.map(Incarnation),
                draw: (h > 0).then(|| protocol::model::DrawTerms { commitment: committed(), admit: None, seed: None }),
            })),
            // a seated init: valid, its total not the layout's, or not JSON
            1 => (0..3u8, 1..4u64).prop_map(|(kind, inc)| Ok(Op::Init { transfer_until: None,
                layout: Some(if kind == 2 { "{".into() } else { stored() }),
                total: if kind == 1 { 7 } else { 8 },
                opens_at: 0,
                closes_at: 0,
                checkout: Checkout::default(),
                incarnation: Some(Incarnation(inc)),
                draw: None,
            })),
            2 => (u(), 1..3i64).prop_map(|(user, count)| Ok(Op::Enter { user, count, rank: None })),
            1 => u().prop_map(|user| Ok(Op::Leave { user })),
            1 => prop_oneof![4 => Just(SEED), 1 => Just([2u8; 32])].prop_map(|seed| Ok(Op::Draw { seed })),
            1 => Just(Ok(Op::Open)),
            1 => Just(Ok(Op::Close)),
            1 => Just(Ok(Op::Drop)),
            1 => (1..4u64).prop_map(|i| Ok(Op::Restore {
                incarnation: Incarnation(i),
                status: protocol::record::Status::Open,
                from: StreamId::new(1, 0),
            })),
            1 => Just(Err(())),
        ]
    }

    fn arb_entries() -> impl Strategy<Value = Vec<Entry>> {
        proptest::collection::vec(arb_op(), 0..12).prop_map(|ops| {
            ops.into_iter()
                .enumerate()
                .map(|(i, op)| {
                    Entry::new(
                        StreamId::new(100 + i as u64 / 3, i as u64 % 3),
                        match op {
                            Ok(op) => Ok(Record { op, at: i as i64 }),
                            Err(()) => Err(Malformed {
                                reason: "bad".into(),
                                user: None,
                                ticket: None,
                                raw: String::new(),
                            }),
                        },
                    )
                })
                .collect()
        })
    }

    /// Orders from before the batch, kept valid under the unique indexes
    /// (one live order per user, one live row per ticket).
    fn arb_db() -> impl Strategy<Value = Db> {
        let status = prop_oneof![
            Just(OrderStatus::Held),
            Just(OrderStatus::Active),
            Just(OrderStatus::Cancelled),
            Just(OrderStatus::Expired)
        ];
        let order = (0..5usize, tickets(), status);
        // none, a draw event not drawn yet, one drawn
        let draw = prop_oneof![Just(0u8), Just(1), Just(2)];
        // a seated event's category stocks (front, general)
        let seated = proptest::option::weighted(0.3, (0..4i64, 0..6i64));
        (
            proptest::bool::weighted(0.8),
            0..12i64,
            proptest::collection::vec(order, 0..6),
            draw,
            seated,
        )
            .prop_map(|(event, stock, orders, draw, seated)| {
                let mut db = Db {
                    event,
                    stock,
                    categories: seated.filter(|_| event).map(|(f, g)| vec![f, g]),
                    ..Db::default()
                };
                if event && draw > 0 {
                    db.draw = DrawState::fresh(&committed());
                    db.draw.seed = (draw == 2).then(|| protocol::draw::hex(&SEED));
                }
                // Orders exist only under an event row.
                for (n, (u, tickets, status)) in orders.into_iter().enumerate().filter(|_| event) {
                    let rec = Record {
                        op: Op::Claim {
                            from: None,
                            pick: None,
                            user: format!("u{u}"),
                            tickets,
                        },
                        at: 0,
                    };
                    let Some(mut o) = NewOrder::created_by(StreamId::new(1, n as u64), &rec) else {
                        continue;
                    };
                    o.status = status;
                    let clash = db.live_order(&o.user).is_some()
                        || o.tickets.iter().any(|t| db.live_ticket(*t));
                    if !(status.live() && clash) {
                        db.orders.push(o);
                    }
                }
                db
            })
    }

    /// The tickets `user` has live at this point: from the last order the
    /// entries so far created, else from `db`.
    fn live_tickets(db: &Db, done: &[Entry], user: &str) -> Option<Tickets> {
        let created = done.iter().rev().find_map(|e| {
            let rec = e.rec.as_ref().ok()?;
            NewOrder::created_by(e.id, rec).filter(|o| o.user == user)
        });
        let tickets = match created {
            Some(o) => o.tickets,
            None => db
                .orders
                .iter()
                .find(|o| o.user == user && o.status.live())?
                .tickets
                .clone(),
        };
        Some(Tickets::from_sorted(tickets))
    }

    /// A database and a batch whose confirms, expiries and cancels mostly
    /// name the tickets their user really has (random ones rarely match).
    fn arb_case() -> impl Strategy<Value = (Db, Vec<Entry>)> {
        let fits = proptest::collection::vec(proptest::bool::weighted(0.85), 12);
        let clean = proptest::bool::weighted(0.6);
        (arb_db(), arb_entries(), fits, clean).prop_map(|(mut db, mut entries, fits, clean)| {
            if clean {
                // no init, nothing malformed, the event exists: mostly fast
                entries.retain(|e| matches!(&e.rec, Ok(r) if !matches!(r.op, Op::Init { .. })));
                db.event = true;
            }
            for (i, fit) in fits.into_iter().enumerate().take(entries.len()) {
                let (done, rest) = entries.split_at_mut(i);
                let Ok(rec) = &mut rest[0].rec else { continue };
                let fitted = match &rec.op {
                    Op::Confirm { user, .. }
                    | Op::Expire { user, .. }
                    | Op::Cancel { user, .. }
                        if fit =>
                    {
                        live_tickets(&db, done, user)
                    }
                    _ => None,
                };
                if let (
                    Some(t),
                    Op::Confirm { tickets, .. }
                    | Op::Expire { tickets, .. }
                    | Op::Cancel { tickets, .. },
                ) = (fitted, &mut rec.op)
                {
                    *tickets = t;
                }
            }
            (db, entries)
        })
    }

    /// What a module would log for `user` next, given the orders so far
    /// (`choice` picks among the possible ops): an order of 1–2 of the
    /// lowest free tickets, or a change of the user's live order.
    fn module_op(db: &Db, user: String, choice: u8) -> Option<Op> {
        let live = db.orders.iter().find(|o| o.user == user && o.status.live());
        let Some(o) = live else {
            let taken: Vec<i64> = db
                .orders
                .iter()
                .filter(|o| o.status.live())
                .flat_map(|o| o.tickets.clone())
                .collect();
            let free: Vec<i64> = (1..9)
                .filter(|t| !taken.contains(t))
                .take(1 + choice as usize % 2)
                .collect();
            let tickets = (!free.is_empty()).then(|| Tickets::from_sorted(free))?;
            return Some(match choice % 3 {
                0 => Op::Claim {
                    from: None,
                    pick: None,
                    user,
                    tickets,
                },
                1 => Op::Hold {
                    from: None,
                    pick: None,
                    user,
                    tickets,
                    until: 5,
                },
                _ => Op::Offer {
                    pick: None,
                    user,
                    tickets,
                    until: 5,
                },
            });
        };
        let tickets = Tickets::from_sorted(o.tickets.clone());
        Some(match (o.status, choice % 3) {
            (OrderStatus::Held, 0) => Op::Confirm { user, tickets },
            (OrderStatus::Held, 1) => Op::Expire {
                from: None,
                user,
                tickets,
            },
            _ => Op::Cancel {
                from: None,
                user,
                tickets,
            },
        })
    }

    /// A database and a batch as the module would log it (each op checked
    /// against a sequential run so far), with a little noise: mostly fast.
    fn arb_module_case() -> impl Strategy<Value = (Db, Vec<Entry>)> {
        let step = (
            0..5usize,
            any::<u8>(),
            proptest::option::weighted(0.1, arb_op()),
        );
        (arb_db(), proptest::collection::vec(step, 0..14)).prop_map(|(mut db, steps)| {
            db.event = true;
            db.stock = db.stock.max(6);
            let mut sim = db.clone();
            let mut entries = Vec::new();
            for (i, (u, choice, noise)) in steps.into_iter().enumerate() {
                let op = match noise {
                    Some(Ok(op)) => Some(op),
                    Some(Err(())) => None,
                    None => module_op(&sim, format!("u{u}"), choice),
                };
                let id = StreamId::new(200 + i as u64 / 4, i as u64 % 4);
                let Some(op) = op else { continue };
                let e = Entry::new(id, Ok(Record { op, at: i as i64 }));
                sim.write_one(&e);
                entries.push(e);
            }
            (db, entries)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]
        /// Fast path (when it succeeds) == record-by-record with no conflict;
        /// fast path anomaly <=> record-by-record would log a conflict.
        #[test]
        fn fast_path_equals_sequential((db, entries) in prop_oneof![arb_case(), arb_module_case()]) {
            // the layout `batch_layout` gives: the stored one, or the init's
            let layout = choose_layout(db.categories.as_ref().map(|_| stored()), &entries);
            let (todo, p) = plan(StreamId::ZERO, &entries, layout.as_ref());
            let mut seq = db.clone();
            for e in &todo {
                seq.write_one(e);
            }
            match p {
                Plan::Nothing => prop_assert!(todo.is_empty()),
                Plan::Slow(_) => {}
                Plan::Fast(fp) => match db.write_fast(&fp) {
                    Ok(fast) => {
                        prop_assert!(seq.conflicts.is_empty(), "fast ok but seq {:?}", seq.conflicts);
                        prop_assert_eq!(fast, seq);
                    }
                    Err(()) => prop_assert!(!seq.conflicts.is_empty(), "fast anomaly but seq clean"),
                },
            }
        }

        /// Entries at or below the offset are never written again.
        #[test]
        fn skips_at_or_below_offset(entries in arb_entries(), cut in 0..12usize) {
            let offset = entries.get(cut).map(|e| e.id).unwrap_or(StreamId::ZERO);
            let (todo, _) = plan(offset, &entries, None);
            prop_assert!(todo.iter().all(|e| e.id > offset));
            prop_assert_eq!(todo.len(), entries.iter().filter(|e| e.id > offset).count());
        }
    }

    fn mk(i: u64, op: Op) -> Entry {
        Entry::new(StreamId::new(1, i), Ok(Record { op, at: i as i64 }))
    }

    fn claim(user: &str, t: i64) -> Op {
        Op::Claim {
            from: None,
            pick: None,
            user: user.into(),
            tickets: Tickets::One(t),
        }
    }

    #[test]
    fn stock_need_is_peak_prefix() {
        let cancel = Op::Cancel {
            from: None,
            user: "c".into(),
            tickets: Tickets::One(3),
        };
        let entries = vec![
            mk(1, claim("a", 1)),
            mk(2, claim("b", 2)),
            mk(3, cancel.clone()),
            mk(4, claim("d", 3)),
        ];
        match plan(StreamId::ZERO, &entries, None).1 {
            Plan::Fast(fp) => {
                assert_eq!((fp.stock_need, fp.stock_delta), (2, 2));
                assert_eq!((fp.orders.len(), fp.changes.len()), (3, 1));
            }
            other => panic!("{other:?}"),
        }
        // claim of 3 before an older order gives it back: slow
        let entries = vec![mk(1, claim("d", 3)), mk(2, cancel)];
        assert!(matches!(
            plan(StreamId::ZERO, &entries, None).1,
            Plan::Slow(_)
        ));
        assert_eq!(plan(StreamId::new(1, 9), &entries, None).1, Plan::Nothing);
    }

    /// A checkout in one batch: hold, confirm; hold, expire, the freed
    /// ticket held again — all fast, orders inserted in their final status.
    #[test]
    fn hold_confirm_expire_in_one_batch_is_fast() {
        let t = |v: &[i64]| Tickets::from_sorted(v.to_vec());
        let hold = |user: &str, v: &[i64]| Op::Hold {
            from: None,
            pick: None,
            user: user.into(),
            tickets: t(v),
            until: 99,
        };
        let entries = vec![
            mk(1, hold("a", &[1, 2])),
            mk(2, hold("b", &[3])),
            mk(
                3,
                Op::Confirm {
                    user: "a".into(),
                    tickets: t(&[1, 2]),
                },
            ),
            mk(
                4,
                Op::Expire {
                    from: None,
                    user: "b".into(),
                    tickets: t(&[3]),
                },
            ),
            mk(5, hold("c", &[3])),
        ];
        let Plan::Fast(fp) = plan(StreamId::ZERO, &entries, None).1 else {
            panic!("slow");
        };
        let st: Vec<_> = fp
            .orders
            .iter()
            .map(|o| (o.user.as_str(), o.status))
            .collect();
        assert_eq!(
            st,
            [
                ("a", OrderStatus::Active),
                ("b", OrderStatus::Expired),
                ("c", OrderStatus::Held)
            ]
        );
        assert_eq!((fp.stock_need, fp.stock_delta), (3, 3));
        assert_eq!(fp.orders[0].confirmed_at, Some(3));
        assert_eq!(fp.orders[1].last, StreamId::new(1, 4));
        // a confirm with other tickets than held would conflict: slow
        let bad = vec![
            mk(1, hold("a", &[1, 2])),
            mk(
                2,
                Op::Confirm {
                    user: "a".into(),
                    tickets: t(&[1]),
                },
            ),
        ];
        assert!(matches!(plan(StreamId::ZERO, &bad, None).1, Plan::Slow(_)));
    }

    /// Any batch that moves allocated stock (an allocate, a release, a
    /// claim, hold, expiry or cancel `FROM` an allocation) is written
    /// record by record; the same batch without it stays fast, unchanged.
    #[test]
    fn allocations_go_record_by_record() {
        let t = |v: &[i64]| Tickets::from_sorted(v.to_vec());
        let plain = vec![mk(1, claim("a", 1)), mk(2, claim("b", 2))];
        let Plan::Fast(fast) = plan(StreamId::ZERO, &plain, None).1 else {
            panic!("slow");
        };
        let from = Some(Box::from("fan"));
        let moves = [
            Op::Allocate {
                name: "fan".into(),
                tickets: t(&[5, 6]),
                release: None,
                key: None,
            },
            Op::Release {
                name: "fan".into(),
                tickets: None,
            },
            Op::Claim {
                from: from.clone(),
                pick: None,
                user: "c".into(),
                tickets: t(&[5]),
            },
            Op::Hold {
                from: from.clone(),
                pick: None,
                user: "c".into(),
                tickets: t(&[5]),
                until: 9,
            },
            Op::Expire {
                from: from.clone(),
                user: "d".into(),
                tickets: t(&[6]),
            },
            Op::Cancel {
                from,
                user: "d".into(),
                tickets: t(&[6]),
            },
        ];
        for op in moves {
            let mut batch = plain.clone();
            batch.push(mk(3, op.clone()));
            match plan(StreamId::ZERO, &batch, None).1 {
                Plan::Slow(why) => assert!(why.contains("moves allocated stock"), "{why}"),
                other => panic!("{op:?}: {other:?}"),
            }
        }
        // a plain end of an order from an ended allocation: public, fast
        let mut batch = plain.clone();
        batch.push(mk(
            3,
            Op::Cancel {
                from: None,
                user: "z".into(),
                tickets: t(&[7]),
            },
        ));
        assert!(matches!(
            plan(StreamId::ZERO, &batch, None).1,
            Plan::Fast(_)
        ));
        assert_eq!(
            fast.orders
                .iter()
                .map(|o| o.allocation.clone())
                .collect::<Vec<_>>(),
            [None, None]
        );
    }

    /// A draw event's queue: enters, the draw and offers are fast, in log
    /// order; an enter after the batch's draw, or a second draw, is slow.
    #[test]
    fn a_draw_batch_is_fast_with_its_queue_in_log_order() {
        let enter = |u: &str| Op::Enter {
            user: u.into(),
            count: 1,
            rank: None,
        };
        let draw = Op::Draw { seed: [1u8; 32] };
        let offer = Op::Offer {
            pick: None,
            user: "a".into(),
            tickets: Tickets::One(1),
            until: 9,
        };
        let entries = vec![
            mk(1, enter("a")),
            mk(2, Op::Leave { user: "b".into() }),
            mk(3, draw.clone()),
            mk(4, offer),
            mk(5, claim("z", 2)),
        ];
        let Plan::Fast(fp) = plan(StreamId::ZERO, &entries, None).1 else {
            panic!("slow");
        };
        let kinds: Vec<&str> = fp.queue.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, ["enter", "leave", "draw", "offer"]);
        assert_eq!(fp.draw.as_ref().map(|d| d.id), Some(StreamId::new(1, 3)));
        assert_eq!(fp.orders.len(), 2);
        let late = vec![mk(1, draw.clone()), mk(2, enter("c"))];
        assert!(matches!(plan(StreamId::ZERO, &late, None).1, Plan::Slow(_)));
        let twice = vec![mk(1, draw.clone()), mk(2, draw)];
        assert!(matches!(
            plan(StreamId::ZERO, &twice, None).1,
            Plan::Slow(_)
        ));
    }
}
