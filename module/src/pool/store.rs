//! The storage of one event, as the pool sees it: reads and writes of the
//! event's keys (docs/design.md "Keys"), nothing else. Redis implements it
//! over the native key API (`host::store`), the unit tests over plain
//! collections (`pool::memory`). Replication, pub/sub and the expiry index
//! are not the store's business: the pool returns its effects and the
//! command layer commits them.
//!
//! Reads may fail (wrong types, corrupt values); writes happen only after
//! every read of the command succeeded and cannot fail.

use std::ops::RangeInclusive;

use protocol::record::{Record, Tickets};
use protocol::seats::{Layout, Seat, SeatState};
use protocol::StreamId;

pub use protocol::keys::Part;

use super::model::{Allocation, Allocs, Meta, Staging, Status};
use crate::error::TicketError;

/// The two zsets keyed by user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Set {
    /// Held orders: user -> deadline (unix ms).
    Holds,
    /// The waiting list: user -> place (`seq * WAIT_COUNT_SPAN + count`).
    Waiting,
}

/// The hashes of a ticket's life after the sale
/// (`protocol::keys::after_key`, `resale_key`), keyed by ticket number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum After {
    /// ticket -> its generation, only when above 1.
    Gens,
    /// ticket -> `<at> <gen> <gate or ->` of its admitting scan.
    Scans,
    /// listed ticket -> `<seller>` or `<seller>\n<buyer>` (field 0: how
    /// many listed tickets buyers hold).
    Resale,
}

/// What a deletion removes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every key of the event but its log.
    State,
    /// The log (unlinked: freed in the background).
    Log,
}

/// One write to the meta hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaWrite<'a> {
    /// Creates the hash (`created_at` 0: not known, not written).
    Create {
        meta: &'a Meta,
        created_at: i64,
    },
    Status(Status),
    Minted(i64),
    /// Adds to the counters `held` and `extra`.
    AddCounts {
        held: i64,
        extra: i64,
    },
    /// Raises `waitseq` to this, if below.
    RaiseWaitSeq(i64),
    /// Writes a restore's staging fields (and resets `held`, `extra`,
    /// `waitseq`).
    Staging(&'a Staging),
    /// Adds to the staging field `restore_sum`.
    AddStagedSum(i64),
    /// Removes the staging fields.
    ClearStaging,
    /// A draw event drew at this time (unix ms): `drawn_at`, and the
    /// admission bucket starts full.
    Drawn(i64),
    /// The admission bucket after an offer.
    Admitted {
        second: i64,
        used: i64,
    },
    /// The summary of the event's allocations.
    Allocs(Allocs),
    /// Adds to `listed`, the tickets listed for resale.
    AddListed(i64),
}

/// Storage of one event.
pub trait Store {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError>;
    /// The meta's `listed` (0 without a meta): what the effects of a claim
    /// look at, cheaper than the whole meta.
    fn listed(&mut self) -> u32 {
        self.meta().ok().flatten().map_or(0, |meta| meta.listed)
    }
    /// The staging fields of a restore in progress.
    fn staging(&mut self) -> Result<Option<Staging>, TicketError>;
    /// The user's tickets, held or sold.
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError>;
    /// The user's score in `set` (a hold's deadline, a waiting place).
    fn score(&mut self, set: Set, user: &str) -> Result<Option<i64>, TicketError>;
    /// Up to `max` members of `set` scored at most `highest`, lowest score
    /// first (equal scores in byte order), with their scores.
    fn lowest(
        &mut self,
        set: Set,
        highest: i64,
        max: usize,
    ) -> Result<Vec<(String, i64)>, TicketError>;
    /// How many tickets a draw's entrant wants (`None`: 1, or not an entrant).
    fn wants(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// The user's 0-based rank in the waiting list (O(log n)).
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// The smallest number in the pool, without removing it (the claim's
    /// hot path: no allocation).
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError>;
    /// Up to `n` of the smallest numbers in the pool, ascending.
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError>;
    /// Whether `ticket` is in the pool (a seated event: whether the seat
    /// is free).
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError>;
    /// Runs `f` on a seated event's layout and seat state (`None`: the
    /// event is not seated). Neither is parsed or read per call: both are
    /// kept in memory, rebuilt from the keys when needed.
    fn seating<T>(
        &mut self,
        f: impl FnOnce(&Layout, &SeatState) -> T,
    ) -> Result<Option<T>, TicketError>;
    /// A seated event's layout as stored (`None`: not seated).
    fn layout_json(&mut self) -> Result<Option<String>, TicketError>;
    /// The length of one of the event's keys (0 when absent).
    fn len(&mut self, part: Part) -> Result<i64, TicketError>;
    /// Whether one of the event's keys exists (the log does from
    /// `TICKET.INIT` on: trimming empties a stream but keeps it).
    fn exists(&mut self, part: Part) -> Result<bool, TicketError>;
    /// The id the log's last entry got, even when trimmed away since
    /// (its `last-generated-id`); `None` without a log.
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError>;
    /// The log's entries after `since`, decoded (a malformed one is left
    /// out: it changed nothing); `None` when there are more than `max`.
    fn log_since(
        &mut self,
        since: StreamId,
        max: usize,
    ) -> Result<Option<Vec<Record>>, TicketError>;
    /// A field of the event's note of answers (`ticket:{E}:answered`, see
    /// `pool::note`), and how many fields it has.
    fn note_field(&mut self, field: &str) -> Result<Option<String>, TicketError>;
    fn note_len(&mut self) -> Result<i64, TicketError>;

    /// A field of the event's allocations hash (`ticket:{E}:alloc`, see
    /// `protocol::keys::alloc_key`), and all of its fields.
    fn alloc_field(&mut self, field: &str) -> Result<Option<String>, TicketError>;
    fn alloc_fields(&mut self) -> Result<Vec<(String, String)>, TicketError>;

    /// The allocation `name`, if it exists.
    fn allocation(&mut self, name: &str) -> Result<Option<Allocation>, TicketError> {
        match self.alloc_field(&protocol::keys::alloc_field(name))? {
            None => Ok(None),
            Some(text) => Allocation::parse(&text)
                .map(Some)
                .ok_or_else(|| corrupt_alloc(name)),
        }
    }

    /// Every allocation by name, in name order.
    fn allocations(&mut self) -> Result<Vec<(String, Allocation)>, TicketError> {
        let mut all = Vec::new();
        for (field, value) in self.alloc_fields()? {
            if let Some(name) = field.strip_prefix("a:") {
                let allocation = Allocation::parse(&value).ok_or_else(|| corrupt_alloc(name))?;
                all.push((name.to_owned(), allocation));
            }
        }
        all.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(all)
    }

    /// A ticket's field of one of the hashes after the sale.
    fn after_field(&mut self, hash: After, ticket: i64) -> Result<Option<String>, TicketError>;
    /// Sets a ticket's field of one of the hashes after the sale, or
    /// removes it (`None`).
    fn set_after_field(&mut self, hash: After, ticket: i64, value: Option<&str>);
    /// Every field of one of the hashes after the sale, ascending.
    fn after_fields(&mut self, hash: After) -> Result<Vec<(i64, String)>, TicketError>;

    fn write_meta(&mut self, write: MetaWrite<'_>);
    /// Sets a field of the allocations hash, or removes it (`None`).
    fn set_alloc_field(&mut self, field: &str, value: Option<&str>);
    /// Sets the user's tickets, or removes the user (`None`).
    fn set_holder(&mut self, user: &str, tickets: Option<&Tickets>);
    /// Sets the user's score in `set`, or removes the user (`None`);
    /// returns whether the user was removed (always true when setting).
    fn set_score(&mut self, set: Set, user: &str, score: Option<i64>) -> bool;
    /// Sets how many tickets an entrant wants, or removes the user (`None`).
    fn set_wants(&mut self, user: &str, count: Option<i64>);
    /// Puts `numbers` into the pool (`free`) or takes them out.
    fn set_free(&mut self, numbers: RangeInclusive<i64>, free: bool);
    /// Makes the new event seated: its layout (the stored JSON, already
    /// valid) and every seat free.
    fn create_seating(&mut self, layout: &str);
    /// Sets the state of seats (a seated event's tickets).
    fn set_seats(&mut self, ids: &[i64], seat: Seat);
    /// Appends `record` to the log at `id`, or at an id the store picks
    /// (the primary's auto id) when `None`; returns the id used.
    fn append<U: AsRef<str>>(&mut self, record: &Record<U>, id: Option<StreamId>) -> StreamId;
    /// Deletes keys; returns how many existed.
    fn delete(&mut self, scope: Scope) -> i64;
    /// Adds `fields` (value `1`) to the note of answers and removes its
    /// `closed` field.
    fn note_add(&mut self, fields: &[String]);
    /// Replaces the note of answers with `closed = term`, or deletes it
    /// when `term` is 0.
    fn note_close(&mut self, term: i64);
}

fn corrupt_alloc(name: &str) -> TicketError {
    TicketError::Corrupt(format!(
        "allocation {} holds a value the module never writes",
        crate::error::quote(name.as_bytes())
    ))
}
