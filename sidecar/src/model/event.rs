//! An event's state as MySQL holds it: what the gate reads
//! ([`EventState`]), and why an event is quarantined: the [`Reason`]
//! codes and the [`Evidence`] stored in `ticket_event.quarantine_reason`.
//! What the event's row holds otherwise is written by `batch::event`.

use protocol::record::Incarnation;

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
