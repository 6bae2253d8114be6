//! The soak's history: every operation a writer (or the box office, on
//! the seated event's allocations) sent, with its reply and whether
//! `WAIT 1` acknowledged it, and the final state of each user that the
//! checker compares it with. Plain data, no I/O.

use std::collections::BTreeMap;

/// What a writer asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// `TICKET.CLAIM E user COUNT n [HOLD ms]`, or on the seated event
    /// `TICKET.CLAIM E user [HOLD ms] SEATS id ...` when `seats` are picked.
    Claim {
        count: i64,
        hold_ms: Option<i64>,
        seats: Option<Vec<i64>>,
    },
    /// `TICKET.CONFIRM E user`.
    Confirm,
    /// `TICKET.CANCEL E user`.
    Cancel,
    /// `TICKET.WAIT E user`.
    Wait,
    /// `TICKET.LEAVE E user`.
    Leave,
}

impl Kind {
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Claim { .. } => "claim",
            Kind::Confirm => "confirm",
            Kind::Cancel => "cancel",
            Kind::Wait => "wait",
            Kind::Leave => "leave",
        }
    }
}

/// What the server answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// A claim's tickets (the user's, ascending).
    Tickets(Vec<i64>),
    /// A confirm's count of tickets now sold.
    Sold(i64),
    /// A cancel's lowest returned ticket, or none.
    Returned(Option<i64>),
    /// A wait's position (0: offered at once).
    Position(i64),
    /// A leave's answer.
    Left(bool),
    /// A release's count of tickets given back to public sale.
    Released(i64),
    /// Refused with this error code: nothing was written.
    Refused(String),
    /// No answer (connection lost, timeout): it may or may not have been applied.
    Unknown(String),
}

/// One operation of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub event: String,
    pub user: String,
    pub kind: Kind,
    pub reply: Reply,
    /// The command changed something (the writer expected a write and the
    /// reply says it happened).
    pub wrote: bool,
    /// It wrote and `WAIT 1` returned >= 1.
    pub acked: bool,
    /// Unix ms when it was sent.
    pub sent_ms: i64,
    /// Unix ms when its reply (or error) came, before any `WAIT`.
    pub answered_ms: i64,
    /// Unix ms from which the order it made may have expired (a hold).
    pub expires_from_ms: Option<i64>,
}

impl Op {
    /// An answer from a primary about the user (not a lost connection, not
    /// a node that was loading, read-only or restoring).
    pub fn answered(&self) -> bool {
        match &self.reply {
            Reply::Unknown(_) => false,
            Reply::Refused(code) => !matches!(
                code.as_str(),
                "READONLY" | "LOADING" | "TRYAGAIN" | "MASTERDOWN"
            ),
            _ => true,
        }
    }
}

/// What the box office asked of the seated event's allocations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Book {
    /// `TICKET.ALLOCATE E name (COUNT n [SECTION s] | SEATS id ...) [KEY k]
    /// [RELEASE ms]`: `count` is the number asked for either way.
    Allocate {
        name: String,
        count: i64,
        section: Option<String>,
        seats: Option<Vec<i64>>,
        key: Option<String>,
        release_ms: Option<i64>,
    },
    /// `TICKET.RELEASE E name (COUNT n | SEATS id ...)`.
    Release {
        name: String,
        count: i64,
        seats: Option<Vec<i64>>,
    },
}

impl Book {
    /// The allocation it is about.
    pub fn name(&self) -> &str {
        match self {
            Book::Allocate { name, .. } | Book::Release { name, .. } => name,
        }
    }
}

/// One box-office operation: `Reply::Tickets` (allocated), `Released`,
/// a refusal or an unknown outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookOp {
    pub book: Book,
    pub reply: Reply,
    /// It changed something and `WAIT 1` returned >= 1.
    pub acked: bool,
    pub sent_ms: i64,
    pub answered_ms: i64,
}

impl BookOp {
    /// Whether it may have changed something (not refused).
    pub fn may_have_applied(&self) -> bool {
        !matches!(self.reply, Reply::Refused(_))
    }

    /// How many tickets it moved, or at most moved (an unknown outcome:
    /// what it asked for).
    pub fn moved(&self) -> i64 {
        match (&self.reply, &self.book) {
            (Reply::Tickets(t), _) => t.len() as i64,
            (Reply::Released(n), _) => *n,
            (Reply::Refused(_), _) => 0,
            (_, Book::Allocate { count, .. } | Book::Release { count, .. }) => *count,
        }
    }
}

/// An event's stock: every ticket is public free, free in an
/// allocation, or claimed (held or sold), so `total` is their sum.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stock {
    pub total: i64,
    /// Public free tickets (`TICKET.STATUS remaining`, `ticket_stock`).
    pub remaining: i64,
    /// Free allocated tickets (`allocated`; MySQL: the live allocations'
    /// `remaining_stock`).
    pub allocated: i64,
    /// Held or sold (`claimed`; MySQL: live participation rows).
    pub claimed: i64,
}

/// The seated event's allocations and stock at the end, in Redis and MySQL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocEnd {
    /// `TICKET.ALLOCATIONS`: (name, free, claimed, release time).
    pub allocations: Vec<(String, i64, i64, Option<i64>)>,
    pub redis_stock: Stock,
    pub mysql_stock: Stock,
    /// The sum of MySQL's `ticket_seat_stock.remaining` (public free seats).
    pub mysql_seat_stock: i64,
    /// `ticket_allocation` rows: (name, remaining_stock, ended).
    pub mysql_allocations: Vec<(String, i64, bool)>,
    /// `ticket_allocation_step` rows: (name, kind, stream ms, undone by a
    /// heal: `lost_in_failover`), in log order.
    pub steps: Vec<(String, String, i64, bool)>,
    /// Live `ticket_participation` rows: (user, ticket, allocation).
    pub rows: Vec<(String, i64, Option<String>)>,
}

/// A user's order state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum OrderState {
    Held,
    Sold,
}

/// A user's state at the end: their order (tickets, state) and whether they wait.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserState {
    pub order: Option<(Vec<i64>, OrderState)>,
    pub waiting: bool,
}

/// (event, user) -> state.
pub type States = BTreeMap<(String, String), UserState>;

/// A `ticket_conflict` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictRow {
    pub event: String,
    pub user: Option<String>,
    pub reason: String,
    pub stream_id: String,
}
