//! The soak's history: every operation a writer sent, with its reply and
//! whether `WAIT 1` acknowledged it, and the final state of each user that
//! the checker compares it with. Plain data, no I/O.

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
