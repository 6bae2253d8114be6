//! Batch planning: which SQL one batch of log entries needs.
//!
//! The writer hands a batch (entries of one event, in id order) and the offset
//! it found under `SELECT .. FOR UPDATE` to [`plan`]. Entries at or below the
//! offset are dropped (already applied — this is what makes a retry, a second
//! sidecar or a restart after `kill -9` harmless). The rest either fit the
//! **fast path** — a fixed handful of multi-row statements and one conditional
//! stock UPDATE — or the batch goes down the **slow path**, one record at a
//! time, so each bad record becomes a `ticket_conflict` row.
//!
//! The fast path reorders within a batch (init, then all cancels, then all
//! claims, then the final open/close). [`plan`] only admits batches where that
//! reordering cannot change the outcome: every user at most once, no ticket
//! claimed twice or canceled twice, a ticket claimed after being canceled in
//! the same batch only by a later entry, `init` only first, no malformed entry.
//! The stock check uses the *peak* need over the batch's prefixes, so one
//! UPDATE refuses exactly what per-record application would refuse. The tests
//! check this against a sequential model of the SQL.

use std::collections::{HashMap, HashSet};

use protocol::record::{Malformed, Op, Record, Tickets};
use protocol::StreamId;

/// One stream entry, decoded or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The stream id.
    pub id: StreamId,
    /// The decoded record, or why it could not be decoded.
    pub rec: Result<Record, Malformed>,
}

/// A claim or cancel in a fast plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// Entry id (stored as `stream_id`).
    pub id: StreamId,
    /// User id.
    pub user: String,
    /// Ticket number.
    pub ticket: i64,
    /// Unix ms of the entry.
    pub at: i64,
}

/// An `init` in a fast plan.
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
    /// Unix ms of the entry.
    pub at: i64,
}

/// The statements of a fast-path batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FastPlan {
    /// Event creation, always the first entry when present.
    pub init: Option<Init>,
    /// Cancels, applied before the claims.
    pub cancels: Vec<Move>,
    /// Claims (new or re-claims after a cancel).
    pub claims: Vec<Move>,
    /// The last open/close of the batch: (`"open"`/`"close"`, at).
    pub status: Option<(&'static str, i64)>,
    /// `remaining_stock` must be at least this before the batch (peak prefix
    /// need, `>= 0`); `UPDATE .. WHERE remaining_stock >= need`.
    pub stock_need: i64,
    /// Net stock change: claims minus cancels.
    pub stock_delta: i64,
}

/// What a batch needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// Nothing above the offset: only (re)trim.
    Nothing,
    /// One set of multi-row statements.
    Fast(FastPlan),
    /// Record by record; the string says why the fast path was not taken.
    Slow(String),
}

/// Drops entries at or below `offset` and returns the rest with their plan.
pub fn plan(offset: StreamId, entries: &[Entry]) -> (Vec<Entry>, Plan) {
    let todo: Vec<Entry> = entries.iter().filter(|e| e.id > offset).cloned().collect();
    if todo.is_empty() {
        return (todo, Plan::Nothing);
    }
    let p = fast_plan(&todo);
    (todo, p)
}

fn fast_plan(todo: &[Entry]) -> Plan {
    let mut fp = FastPlan::default();
    let mut users: HashSet<&str> = HashSet::new();
    let mut claimed: HashSet<i64> = HashSet::new();
    let mut canceled: HashSet<i64> = HashSet::new();
    let mut running: i64 = 0;
    for (i, e) in todo.iter().enumerate() {
        let rec = match &e.rec {
            Ok(r) => r,
            Err(m) => return Plan::Slow(format!("malformed entry {}: {}", e.id, m.reason)),
        };
        match &rec.op {
            Op::Init {
                total,
                opens_at,
                closes_at,
            } => {
                if i != 0 {
                    return Plan::Slow(format!("init {} not first in batch", e.id));
                }
                fp.init = Some(Init {
                    id: e.id,
                    total: *total,
                    opens_at: *opens_at,
                    closes_at: *closes_at,
                    at: rec.at,
                });
            }
            Op::Claim {
                user,
                tickets: Tickets::One(ticket),
            }
            | Op::Cancel {
                user,
                tickets: Tickets::One(ticket),
            } => {
                if !users.insert(user) {
                    return Plan::Slow(format!("user {user:?} twice in batch"));
                }
                let m = Move {
                    id: e.id,
                    user: user.clone(),
                    ticket: *ticket,
                    at: rec.at,
                };
                if matches!(rec.op, Op::Claim { .. }) {
                    if !claimed.insert(*ticket) {
                        return Plan::Slow(format!("ticket {ticket} claimed twice in batch"));
                    }
                    running += 1;
                    fp.stock_need = fp.stock_need.max(running);
                    fp.claims.push(m);
                } else {
                    if claimed.contains(ticket) || !canceled.insert(*ticket) {
                        return Plan::Slow(format!("ticket {ticket} canceled out of order"));
                    }
                    running -= 1;
                    fp.cancels.push(m);
                }
            }
            Op::Open => fp.status = Some(("open", rec.at)),
            Op::Close => fp.status = Some(("close", rec.at)),
            other => return Plan::Slow(format!("{} {} has no fast path", other.name(), e.id)),
        }
    }
    fp.stock_delta = running;
    Plan::Fast(fp)
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
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// A model of the MySQL rows of one event, with the per-record (slow
    /// path) semantics and the fast-path statement semantics.
    #[derive(Debug, Clone, PartialEq, Eq, Default)]
    struct Db {
        event: bool,
        stock: i64,
        /// user -> (ticket, active)
        rows: BTreeMap<String, (i64, bool)>,
        conflicts: Vec<(StreamId, &'static str)>,
    }

    impl Db {
        fn active_holder(&self, t: i64) -> Option<&String> {
            self.rows
                .iter()
                .find(|(_, (n, a))| *a && *n == t)
                .map(|(u, _)| u)
        }

        /// Slow path: exactly what the per-record SQL does.
        fn apply_one(&mut self, e: &Entry) {
            let rec = match &e.rec {
                Ok(r) => r,
                Err(_) => return self.conflicts.push((e.id, "malformed")),
            };
            match &rec.op {
                Op::Init { total, .. } => {
                    if self.event {
                        return self.conflicts.push((e.id, "duplicate_init"));
                    }
                    self.event = true;
                    self.stock = *total;
                }
                Op::Claim {
                    user,
                    tickets: Tickets::One(ticket),
                } => {
                    if !self.event {
                        return self.conflicts.push((e.id, "unknown_event"));
                    }
                    if matches!(self.rows.get(user), Some((_, true))) {
                        return self.conflicts.push((e.id, "duplicate_claim"));
                    }
                    if self.active_holder(*ticket).is_some() {
                        return self.conflicts.push((e.id, "collision"));
                    }
                    if self.stock < 1 {
                        return self.conflicts.push((e.id, "oversell"));
                    }
                    self.stock -= 1;
                    self.rows.insert(user.clone(), (*ticket, true));
                }
                Op::Cancel {
                    user,
                    tickets: Tickets::One(ticket),
                } => match self.rows.get_mut(user) {
                    Some((t, a)) if *a && t == ticket => {
                        *a = false;
                        self.stock += 1;
                    }
                    _ => self.conflicts.push((e.id, "cancel_mismatch")),
                },
                Op::Open | Op::Close => {
                    if !self.event {
                        self.conflicts.push((e.id, "unknown_event"));
                    }
                }
                _ => self.conflicts.push((e.id, "unsupported_op")),
            }
        }

        /// Fast path: the statements in fast order; Err = anomaly (rollback).
        fn apply_fast(&self, fp: &FastPlan) -> Result<Db, ()> {
            let mut db = self.clone();
            if let Some(i) = &fp.init {
                if db.event {
                    return Err(()); // duplicate key on ticket_event
                }
                db.event = true;
                db.stock = i.total;
            }
            if !db.event && (fp.status.is_some() || !fp.claims.is_empty() || !fp.cancels.is_empty())
            {
                return Err(()); // stock / event UPDATE matched no row
            }
            for c in &fp.cancels {
                match db.rows.get_mut(&c.user) {
                    Some((t, a)) if *a && *t == c.ticket => *a = false,
                    _ => return Err(()), // affected rows != cancels
                }
            }
            for c in &fp.claims {
                if matches!(db.rows.get(&c.user), Some((_, true))) {
                    return Err(()); // pre-select found an active row
                }
                if db.active_holder(c.ticket).is_some() {
                    return Err(()); // duplicate key on the active ticket
                }
                db.rows.insert(c.user.clone(), (c.ticket, true));
            }
            if db.stock < fp.stock_need {
                return Err(()); // conditional UPDATE matched no row
            }
            db.stock -= fp.stock_delta;
            Ok(db)
        }
    }

    fn arb_entries() -> impl Strategy<Value = Vec<Entry>> {
        let op = prop_oneof![
            6 => (0..6usize, 1..6i64).prop_map(|(u, t)| Ok(Op::Claim { user: format!("u{u}"), tickets: Tickets::One(t) })),
            3 => (0..6usize, 1..6i64).prop_map(|(u, t)| Ok(Op::Cancel { user: format!("u{u}"), tickets: Tickets::One(t) })),
            1 => (1..6i64).prop_map(|t| Ok(Op::Init { total: t, opens_at: 0, closes_at: 0 })),
            1 => Just(Ok(Op::Open)),
            1 => Just(Ok(Op::Close)),
            1 => Just(Err(())),
        ];
        proptest::collection::vec(op, 0..10).prop_map(|ops| {
            ops.into_iter()
                .enumerate()
                .map(|(i, op)| Entry {
                    id: StreamId::new(100 + i as u64 / 3, i as u64 % 3),
                    rec: match op {
                        Ok(op) => Ok(Record { op, at: i as i64 }),
                        Err(()) => Err(Malformed {
                            reason: "bad".into(),
                            user: None,
                            ticket: None,
                            raw: String::new(),
                        }),
                    },
                })
                .collect()
        })
    }

    fn arb_db() -> impl Strategy<Value = Db> {
        (
            any::<bool>(),
            0..4i64,
            proptest::collection::btree_map(0..6usize, (1..6i64, any::<bool>()), 0..5),
        )
            .prop_map(|(event, stock, rows)| {
                let mut db = Db {
                    event,
                    stock,
                    ..Db::default()
                };
                let mut used = HashSet::new();
                // Participation rows exist only under an event row.
                let rows = if event { rows } else { Default::default() };
                for (u, (t, a)) in rows {
                    // keep the model's own unique index valid
                    let a = a && used.insert(t);
                    db.rows.insert(format!("u{u}"), (t, a));
                }
                db
            })
    }

    proptest! {
        /// Fast path (when it succeeds) == record-by-record with no conflict;
        /// fast path anomaly <=> record-by-record would log a conflict.
        #[test]
        fn fast_path_equals_sequential(db in arb_db(), entries in arb_entries()) {
            let (todo, p) = plan(StreamId::ZERO, &entries);
            let mut seq = db.clone();
            for e in &todo {
                seq.apply_one(e);
            }
            match p {
                Plan::Nothing => prop_assert!(todo.is_empty()),
                Plan::Slow(_) => {}
                Plan::Fast(fp) => match db.apply_fast(&fp) {
                    Ok(fast) => {
                        prop_assert!(seq.conflicts.is_empty(), "fast ok but seq {:?}", seq.conflicts);
                        prop_assert_eq!(fast, seq);
                    }
                    Err(()) => prop_assert!(!seq.conflicts.is_empty(), "fast anomaly but seq clean"),
                },
            }
        }

        /// Entries at or below the offset are never applied again.
        #[test]
        fn skips_at_or_below_offset(entries in arb_entries(), cut in 0..12usize) {
            let offset = entries.get(cut).map(|e| e.id).unwrap_or(StreamId::ZERO);
            let (todo, _) = plan(offset, &entries);
            prop_assert!(todo.iter().all(|e| e.id > offset));
            prop_assert_eq!(todo.len(), entries.iter().filter(|e| e.id > offset).count());
        }
    }

    #[test]
    fn stock_need_is_peak_prefix() {
        let mk = |i: u64, op: Op| Entry {
            id: StreamId::new(1, i),
            rec: Ok(Record { op, at: 0 }),
        };
        let entries = vec![
            mk(
                1,
                Op::Claim {
                    user: "a".into(),
                    tickets: Tickets::One(1),
                },
            ),
            mk(
                2,
                Op::Claim {
                    user: "b".into(),
                    tickets: Tickets::One(2),
                },
            ),
            mk(
                3,
                Op::Cancel {
                    user: "c".into(),
                    tickets: Tickets::One(3),
                },
            ),
            mk(
                4,
                Op::Claim {
                    user: "d".into(),
                    tickets: Tickets::One(3),
                },
            ),
        ];
        match plan(StreamId::ZERO, &entries).1 {
            Plan::Fast(fp) => {
                assert_eq!(fp.stock_need, 2);
                assert_eq!(fp.stock_delta, 2);
                assert_eq!(fp.claims.len(), 3);
                assert_eq!(fp.cancels.len(), 1);
            }
            other => panic!("{other:?}"),
        }
        // claim of 3 before its cancel: slow
        let entries = vec![
            mk(
                1,
                Op::Claim {
                    user: "d".into(),
                    tickets: Tickets::One(3),
                },
            ),
            mk(
                2,
                Op::Cancel {
                    user: "c".into(),
                    tickets: Tickets::One(3),
                },
            ),
        ];
        assert!(matches!(plan(StreamId::ZERO, &entries).1, Plan::Slow(_)));
        assert_eq!(plan(StreamId::new(1, 9), &entries).1, Plan::Nothing);
    }
}
