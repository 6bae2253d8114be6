//! The sidecar's order vocabulary, as MySQL's `ticket_order` and
//! `ticket_participation` rows hold it: an order's [`OrderStatus`], the
//! [`ChangeKind`] of a confirm, expire or cancel, a [`Change`] of an
//! order older than a batch and a [`NewOrder`] a batch creates. Pure: the
//! batch's planner and paths write these, the heal undoes them.

use protocol::record::{Op, Pick, Record};
use protocol::StreamId;

/// The status of an order and of each of its participation rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    /// Taken from stock until `held_until`.
    Held,
    /// Sold.
    Active,
    /// Given back by a cancel.
    Canceled,
    /// The hold ran out.
    Expired,
}

impl OrderStatus {
    /// The SQL ENUM value.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Held => "held",
            OrderStatus::Active => "active",
            OrderStatus::Canceled => "canceled",
            OrderStatus::Expired => "expired",
        }
    }

    /// The status named by a SQL ENUM value.
    pub fn parse(text: &str) -> Option<OrderStatus> {
        [
            OrderStatus::Held,
            OrderStatus::Active,
            OrderStatus::Canceled,
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
            ChangeKind::Cancel => OrderStatus::Canceled,
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
    pub canceled_at: Option<i64>,
    pub expired_at: Option<i64>,
    /// The last entry that changed the order (`stream_id`).
    pub last: StreamId,
    /// How a seated event's seats were chosen (stored on the lead row).
    pub pick: Option<Pick>,
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
            canceled_at: None,
            expired_at: None,
            last: id,
            pick: rec.op.pick().cloned(),
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
            ChangeKind::Cancel => &mut self.canceled_at,
        };
        *slot = Some(at);
        self.last = c.id;
        true
    }
}
