//! What writing a batch produced: the [`Outcome`] the writer reports
//! (path, written counts, quarantine, restore, discard, and the
//! [`Conflict`]s it wrote to `ticket_conflict`).

use std::collections::HashMap;

use crate::model::{Conflict, Evidence};
use protocol::StreamId;

/// What one batch did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Offset after the commit (None: the batch was empty).
    pub offset: Option<StreamId>,
    /// `fast`, `slow`, `skip`, `refused` or `discarded`.
    pub path: &'static str,
    /// Written entries by op name (conflicts excluded).
    pub written: HashMap<&'static str, u64>,
    /// Entries that went to `ticket_conflict`.
    pub conflicts: Vec<Conflict>,
    /// The batch was refused (nothing written, offset unchanged): the
    /// reader must read the event again from `offset`.
    pub refused: bool,
    /// The event was quarantined by this batch, with this evidence.
    pub quarantined: Option<Evidence>,
    /// A restore was written: the quarantine is lifted.
    pub restored: Option<StreamId>,
    /// A dropped event's re-created id was dropped again: its entries up
    /// to this one are conflicts, and the quarantine is lifted.
    pub discarded: Option<StreamId>,
}
