//! An event's row as MySQL holds it: its [`Init`], the status an open,
//! close, drop or restore sets ([`status_of`], [`restored_status`]), the
//! state the gate reads ([`EventState`]), and why an event is quarantined:
//! the [`Reason`] codes and the [`Evidence`] stored in
//! `ticket_event.quarantine_reason`.

use protocol::model::DrawTerms;
use protocol::record::{default_offer, Checkout, Incarnation, Op, Record};
use protocol::StreamId;

/// The event's row, as the gate needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventState {
    pub incarnation: Option<Incarnation>,
    pub quarantined: bool,
    pub dropped: bool,
}

/// Why an event is quarantined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    IncarnationChanged,
    LogRestarted,
    EntriesLost,
    Vanished,
    /// A restore's incarnation or `from` did not match MySQL.
    RestoreMismatch,
    /// `rebuild --apply` is installing a snapshot (set by rebuild itself).
    Rebuilding,
}

impl Reason {
    /// Every reason, for parsing.
    pub const ALL: [Reason; 6] = [
        Reason::IncarnationChanged,
        Reason::LogRestarted,
        Reason::EntriesLost,
        Reason::Vanished,
        Reason::RestoreMismatch,
        Reason::Rebuilding,
    ];

    /// The code stored in `quarantine_reason` and used as a metric label.
    pub fn code(self) -> &'static str {
        match self {
            Reason::IncarnationChanged => "incarnation_changed",
            Reason::LogRestarted => "log_restarted",
            Reason::EntriesLost => "entries_lost",
            Reason::Vanished => "vanished",
            Reason::RestoreMismatch => "restore_mismatch",
            Reason::Rebuilding => "rebuild_in_progress",
        }
    }

    /// The reason whose code is `code`.
    pub fn parse(code: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.code() == code)
    }
}

/// Why, in words: the reason and a sentence naming the event and evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub reason: Reason,
    pub text: String,
}

impl Evidence {
    /// `<code>: <sentence>`, at most 255 characters (the column's size).
    pub fn stored(&self) -> String {
        let full = format!("{}: {}", self.reason.code(), self.text);
        full.chars().take(255).collect()
    }

    /// Parses [`Evidence::stored`] back (an unknown code keeps its text).
    pub fn from_stored(stored: &str) -> (Option<Reason>, String) {
        match stored.split_once(": ") {
            Some((code, text)) => match Reason::parse(code) {
                Some(r) => (Some(r), text.to_owned()),
                None => (None, stored.to_owned()),
            },
            None => (Reason::parse(stored), stored.to_owned()),
        }
    }
}

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
    /// Unix ms of the entry.
    pub at: i64,
}

impl Init {
    /// The init `rec` records, if it is one.
    pub fn of(id: StreamId, rec: &Record) -> Option<Init> {
        match &rec.op {
            Op::Init {
                total,
                opens_at,
                closes_at,
                checkout,
                incarnation,
                draw,
                ..
            } => Some(Init {
                id,
                total: *total,
                opens_at: *opens_at,
                closes_at: *closes_at,
                checkout: *checkout,
                incarnation: *incarnation,
                draw: draw.map(|d| DrawTerms { seed: None, ..d }),
                at: rec.at,
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
pub fn restored_status(s: protocol::record::Status) -> &'static str {
    match s {
        protocol::record::Status::Open => "open",
        protocol::record::Status::Closed => "close",
    }
}
