//! One batch of one event's log entries, written to MySQL exactly once:
//! the transaction the writer threads (`sync::writer`) run, and its parts.
//!
//! The invariant, step by step in [`commit_batch`] (rust-rdkafka's
//! at-least-once loop — receive, process, store the offset last — with all
//! three in one transaction, which makes it exactly once):
//!
//! 1. open a transaction and lock the event's `ticket_sync_offset` row
//!    (`SELECT .. FOR UPDATE`): a second sidecar waits here;
//! 2. skip the entries at or below the locked offset: written already (a
//!    retry, a restart after `kill -9`, the sidecar that held the lock);
//! 3. ask the [`gate`]: a quarantined, re-created or replaced event is
//!    refused, and only its quarantine or conflict commits, no entry (see
//!    docs/design.md, "Incarnations and Redis data loss");
//! 4. write the rest as [`plan`](mod@plan)ned: the [`fast`] path, or record by record
//!    ([`slow`]), both writing the rows of [`order`] and [`event`], each
//!    row shape built in one place;
//! 5. last, move the offset to the batch's last entry and write the
//!    [`journal`] in the same transaction; then `COMMIT`.
//!
//! Whatever dies at whatever instant, either a batch and its offset are both
//! in MySQL or neither is.
//!
//! Errors are split in two: *record-level* server errors (duplicate key,
//! value out of range, ...) mean "this data is wrong" and send the batch
//! down the slow path, where they become `ticket_conflict` rows; everything
//! else (connection lost, deadlock, lock wait timeout, missing table,
//! read-only server) is returned to the caller, which rolls back and
//! retries with backoff — never skipping an entry. [`queue`] holds a draw
//! event's steps; the heal (`loss::heal`) re-applies entries through
//! [`write_entries`].

pub mod after;
pub mod allocation;
pub mod event;
pub mod fast;
pub mod journal;
pub mod order;
pub mod plan;
pub mod queue;
pub mod resale;
pub mod slow;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use mysql::prelude::Queryable;
use mysql::{Conn, Transaction, TxOpts};

use crate::io::mysql::{packet_limit, quarantine, record_conflict_once};
use crate::io::rounds::request_now;
use crate::model::entry::refusal;
use crate::model::seating::choose_layout;
use crate::model::time::datetime;
use crate::model::{Conflict, Entry, EventState, Evidence, Outcome, Reason};
use event::restored_status;
use plan::{count_ops, plan, Plan};
use protocol::record::{Incarnation, Op, Status};
use protocol::seats::Layout;
use protocol::StreamId;

/// Writes one batch of `event`'s entries (ascending ids, read from the
/// log after `after`) exactly once, unless the gate refuses it (see
/// [`gate`]): the one function that opens and commits the transaction,
/// retried slowly in a new one when the fast path finds an anomaly. The
/// event's offset row is created (outside the transaction, so the lock
/// of step 1 always has a row to hold) only when step 1 finds none: an
/// event's first batch, not every batch.
pub fn commit_batch(
    conn: &mut Conn,
    event: &str,
    after: StreamId,
    entries: &[Entry],
) -> Result<Outcome, mysql::Error> {
    let mut force_slow = false;
    let mut created = false;
    loop {
        let mut tx = conn.start_transaction(TxOpts::default())?;
        match attempt(&mut tx, event, after, entries, force_slow)? {
            Attempt::Commit(out) => {
                tx.commit()?;
                return Ok(out);
            }
            // `tx` rolls back as it is dropped.
            Attempt::Slow => force_slow = true,
            Attempt::NoRow if created => return Err(vanished(event)),
            Attempt::NoRow => {
                drop(tx); // rollback
                conn.exec_drop(
                    "INSERT IGNORE INTO ticket_sync_offset (event_id, last_stream_id, entries, updated_at) VALUES (?, '0-0', 0, NOW(3))",
                    (event,),
                )?;
                created = true;
            }
        }
    }
}

/// What one attempt under the offset lock came to.
enum Attempt {
    /// Commit the transaction: this is what it did.
    Commit(Outcome),
    /// The fast path refused: roll back and replay record by record.
    Slow,
    /// The event has no offset row yet: roll back, create it, try again.
    NoRow,
}

/// The event's offset row, read under its lock.
#[derive(Debug, Clone, Copy)]
struct Locked {
    offset: StreamId,
    /// The journal's next row (`ticket_sync_offset.journal_seq`).
    journal_seq: i64,
}

/// The offset row was gone again right after it was created.
fn vanished(event: &str) -> mysql::Error {
    server_error(format!(
        "the ticket_sync_offset row of event {event:?} vanished right after it was created"
    ))
}

/// An error of the kind the server reports, for a row the sidecar cannot use.
fn server_error(message: String) -> mysql::Error {
    mysql::Error::MySqlError(mysql::MySqlError {
        state: "HY000".into(),
        code: 0,
        message,
    })
}

/// Reads and locks the event's offset row; None when it has none.
fn lock_row(tx: &mut impl Queryable, event: &str) -> Result<Option<Locked>, mysql::Error> {
    let row: Option<(String, i64)> = tx.exec_first(
        "SELECT last_stream_id, journal_seq FROM ticket_sync_offset WHERE event_id = ? FOR UPDATE",
        (event,),
    )?;
    let Some((text, journal_seq)) = row else {
        return Ok(None);
    };
    let offset = StreamId::parse(&text).ok_or_else(|| {
        server_error(format!(
            "ticket_sync_offset.last_stream_id of event {event:?} is {text:?}, not a stream id: fix the row"
        ))
    })?;
    Ok(Some(Locked {
        offset,
        journal_seq,
    }))
}

/// Step 1: reads and locks the event's offset row, `0-0` when it has none
/// (the verifier and rebuild take the same lock to serialise with the
/// writers).
pub fn lock_offset(tx: &mut impl Queryable, event: &str) -> Result<StreamId, mysql::Error> {
    Ok(lock_row(tx, event)?.map_or(StreamId::ZERO, |l| l.offset))
}

/// The entries of `entries` above `offset`: a slice of them when they
/// ascend (as read), else a filtered copy.
fn above(entries: &[Entry], offset: StreamId) -> Cow<'_, [Entry]> {
    if entries.windows(2).all(|w| w[0].id < w[1].id) {
        let from = entries.partition_point(|e| e.id <= offset);
        return Cow::Borrowed(&entries[from..]);
    }
    Cow::Owned(entries.iter().filter(|e| e.id > offset).cloned().collect())
}

/// Steps 2 to 5 under the offset lock: what to commit, `Slow` when the
/// fast path refused and the batch must be replayed slowly. A batch read
/// after a point beyond the committed offset (queued before the reader
/// rewound to it) is refused: the entries in between are not in it, and
/// nothing may skip them.
fn attempt(
    tx: &mut Transaction<'_>,
    event: &str,
    after: StreamId,
    entries: &[Entry],
    force_slow: bool,
) -> Result<Attempt, mysql::Error> {
    let Some(locked) = lock_row(tx, event)? else {
        return Ok(Attempt::NoRow);
    };
    let offset = locked.offset;
    let todo = above(entries, offset);
    let Some(last) = todo.last().map(|e| e.id) else {
        return Ok(Attempt::Commit(Outcome {
            offset: Some(offset),
            path: "skip",
            ..Outcome::default()
        }));
    };
    if after > offset {
        return refuse(tx, event, offset, None, None).map(Attempt::Commit);
    }
    let (state, seated) = event_state(tx, event)?;
    let (from, restore) = match gate(event, state.as_ref(), offset, &todo) {
        Gate::Write { from, restore } => (from, restore),
        Gate::Discard { upto, lifted } => {
            let more = upto + 1 < todo.len();
            return discard(tx, (event, locked), &todo[..=upto], lifted, more).map(Attempt::Commit);
        }
        Gate::Refuse {
            quarantine,
            conflict,
        } => return refuse(tx, event, offset, quarantine, conflict).map(Attempt::Commit),
    };
    if restore.is_none() && !anchor_holds(tx, event, after, offset, entries)? {
        return refuse(tx, event, offset, None, None).map(Attempt::Commit);
    }
    let how = How { force_slow, seated };
    let done = write_gated(
        tx,
        (event, locked),
        (&todo[from..], last),
        restore.as_ref(),
        how,
    )?;
    Ok(done.map_or(Attempt::Slow, Attempt::Commit))
}

// ---- The gate: may the batch be written at all? ----

/// An `op=restore` to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restore {
    pub id: StreamId,
    pub incarnation: Incarnation,
    pub status: Status,
    pub at: i64,
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Write `todo[from..]`; with `restore`, `todo[from]` is that restore.
    Write {
        from: usize,
        restore: Option<Restore>,
    },
    /// Write nothing of `todo[..=upto]` (entries of a dropped event's
    /// re-created id): record each as a conflict and move the offset past
    /// them. With `lifted`, `todo[upto]` is the re-created sale's drop: the
    /// quarantine is lifted, and the rest is read again and gated anew.
    Discard { upto: usize, lifted: bool },
    /// Write nothing; quarantine with `quarantine` (None: already
    /// quarantined) and record `conflict`.
    Refuse {
        quarantine: Option<Evidence>,
        conflict: Option<Conflict>,
    },
}

/// What may be written of `todo` (the entries above `offset`), given
/// the event's row as MySQL has it under the offset row lock (pure):
/// [`Gate::Write`] from which entry on, and whether that entry is an
/// `op=restore` to write first; or [`Gate::Refuse`], nothing written and
/// the offset kept, so the reader reads it again (docs/design.md,
/// "Incarnations and Redis data loss"):
///
/// * a quarantined event is refused unless the batch holds an
///   `op=restore` (the last one counts: each rebuild starts a new log).
///   Entries before it are skipped (rebuild recorded them as conflicts);
///   the restore is written when MySQL's incarnation is none or the
///   record's, and the offset is its `from`, else it is a
///   `restore_mismatch` conflict and the event is (or stays) quarantined;
/// * an `op=init` for an event MySQL already has with another incarnation
///   (or one side has none) quarantines it: a re-created event must never
///   be written on top of the old one's rows;
/// * an event MySQL has as dropped and that is quarantined (its id was
///   re-created in Redis: event ids are not reused, MySQL keys a sale's
///   rows by its id) has its entries discarded, [`Gate::Discard`]: each
///   becomes a `reused_after_drop` conflict and the offset moves past it.
///   The quarantine (the alarm) stays until the re-created sale is
///   dropped too: its `op=drop` lifts it, and the event stays dropped.
pub fn gate(event: &str, state: Option<&EventState>, offset: StreamId, todo: &[Entry]) -> Gate {
    let restore = todo
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| match &e.rec {
            Ok(r) => match r.op {
                Op::Restore {
                    incarnation,
                    status,
                    from,
                } => Some((
                    i,
                    Restore {
                        id: e.id,
                        incarnation,
                        status,
                        at: r.at,
                    },
                    from,
                )),
                _ => None,
            },
            Err(_) => None,
        });
    let quarantined = state.is_some_and(|s| s.quarantined);
    if let Some((i, r, from)) = restore {
        return restore_gate(event, state, offset, (i, &todo[i]), r, from);
    }
    if let Some(discard) = reused_after_drop(state, todo) {
        return discard;
    }
    if quarantined {
        return Gate::Refuse {
            quarantine: None,
            conflict: None,
        };
    }
    match state.and_then(|s| changed_init(event, s, todo)) {
        Some(ev) => Gate::Refuse {
            quarantine: Some(ev),
            conflict: None,
        },
        None => Gate::Write {
            from: 0,
            restore: None,
        },
    }
}

/// The discard of `todo` when the event is dropped in MySQL and
/// quarantined (its id was re-created in Redis): up to its last `op=drop`
/// (which lifts the quarantine), or all of it.
fn reused_after_drop(state: Option<&EventState>, todo: &[Entry]) -> Option<Gate> {
    let s = state?;
    if !(s.quarantined && s.dropped) || todo.is_empty() {
        return None;
    }
    let drop = todo
        .iter()
        .rposition(|e| matches!(&e.rec, Ok(r) if matches!(r.op, Op::Drop)));
    Some(Gate::Discard {
        upto: drop.unwrap_or(todo.len() - 1),
        lifted: drop.is_some(),
    })
}

/// A batch with a restore at `todo[i]`.
fn restore_gate(
    event: &str,
    state: Option<&EventState>,
    offset: StreamId,
    (i, entry): (usize, &Entry),
    r: Restore,
    from: StreamId,
) -> Gate {
    let mine = state.and_then(|s| s.incarnation);
    if mine.is_none_or(|m| m == r.incarnation) && offset == from {
        return Gate::Write {
            from: i,
            restore: Some(r),
        };
    }
    let shown = mine.map_or("none".into(), |m| m.to_string());
    let detail = format!(
        "restore of incarnation {} from {from}, but MySQL has incarnation {shown} at offset {offset}: rebuild again",
        r.incarnation
    );
    let quarantined = state.is_some_and(|s| s.quarantined);
    Gate::Refuse {
        quarantine: (!quarantined).then(|| Evidence {
            reason: Reason::RestoreMismatch,
            text: format!("event {event}: {detail}"),
        }),
        conflict: Some(Conflict::about(entry, "restore_mismatch", detail)),
    }
}

/// Evidence when an init in `todo` carries another incarnation than MySQL's.
fn changed_init(event: &str, s: &EventState, todo: &[Entry]) -> Option<Evidence> {
    todo.iter().find_map(|e| {
        let r = e.rec.as_ref().ok()?;
        let Op::Init { incarnation, .. } = &r.op else {
            return None;
        };
        if *incarnation == s.incarnation {
            return None;
        }
        let show = |i: &Option<Incarnation>| i.map_or("none".into(), |i| i.to_string());
        let dropped = match s.dropped {
            true => " (MySQL has the event as dropped: an event id cannot be reused; TICKET.DROP it again and pick a new id)",
            false => " (the event was re-created in Redis)",
        };
        Some(Evidence {
            reason: Reason::IncarnationChanged,
            text: format!(
                "event {event}: init {} carries incarnation {} but MySQL has {}{dropped}",
                e.id,
                show(incarnation),
                show(&s.incarnation)
            ),
        })
    })
}

// ---- Writing what the gate let through ----

/// How the entries the gate let through are written.
#[derive(Debug, Clone, Copy)]
struct How {
    /// Record by record (the fast path refused once).
    force_slow: bool,
    /// Whether the event's row has a seat layout, when read already and
    /// there is a row.
    seated: Option<bool>,
}

/// Writes `todo` (what the gate let through, a restore first when
/// `restore`) above the locked offset and advances the offset to `last`
/// (the batch's last entry); `None` when the fast path refused and the
/// batch must be replayed slowly.
fn write_gated(
    tx: &mut Transaction<'_>,
    (event, locked): (&str, Locked),
    (todo, last): (&[Entry], StreamId),
    restore: Option<&Restore>,
    how: How,
) -> Result<Option<Outcome>, mysql::Error> {
    let mut out = Outcome {
        offset: Some(last),
        ..Outcome::default()
    };
    let mut rest = todo;
    let mut base = locked.offset;
    if let Some(r) = restore {
        write_restore(tx, event, r)?;
        out.restored = Some(r.id);
        out.written.insert("restore", 1);
        (base, rest) = (r.id, &rest[1..]);
    }
    if !write_entries(tx, event, base, rest, how.force_slow, how.seated, &mut out)? {
        return Ok(None);
    }
    advance(tx, (event, locked), last, todo, restore.is_some())?;
    Ok(Some(out))
}

/// Moves the offset to `last`, counts the `written` entries and journals
/// them, the anchor and the journal's next row in the same UPDATE; after
/// a restore the count starts again (the new log: the restore and what
/// follows it).
fn advance(
    tx: &mut Transaction<'_>,
    (event, locked): (&str, Locked),
    last: StreamId,
    written: &[Entry],
    restored: bool,
) -> Result<(), mysql::Error> {
    let count = match restored {
        true => "entries = ?",
        false => "entries = entries + ?",
    };
    // The journal and the offset's anchor, in this transaction.
    let journal = journal::rows(event, written, locked.journal_seq);
    journal::write_rows(tx, event, &journal.rows)?;
    tx.exec_drop(
        format!("UPDATE ticket_sync_offset SET last_stream_id = ?, {count}, updated_at = NOW(3), anchor = COALESCE(?, anchor), journal_seq = ? WHERE event_id = ?"),
        (last.to_string(), written.len() as i64, &journal.anchor, journal.next_seq, event),
    )?;
    journal.remember(event);
    Ok(())
}

/// Whether the batch carries the offset's anchor: a batch read from before
/// the offset must hold the offset's entry with the content MySQL wrote,
/// else Redis was replaced since (see [`journal::anchored`]); when not,
/// asks the verifier for a round now.
fn anchor_holds(
    tx: &mut Transaction<'_>,
    event: &str,
    after: StreamId,
    offset: StreamId,
    entries: &[Entry],
) -> Result<bool, mysql::Error> {
    match journal::anchored(tx, event, after, offset, entries)? {
        Ok(()) => Ok(true),
        Err(why) => {
            log::warn!(
                "event {event}: batch refused: {why}; asking the verifier to check the event"
            );
            request_now();
            Ok(false)
        }
    }
}

/// Plans and writes `rest` (the entries above `base`) into `out`; false
/// when the fast path refused and the batch must be replayed slowly.
/// `seated`: whether the event's row has a seat layout, when the caller
/// read it and found a row (else it is read here). An event with a live
/// listing goes record by record: whether a claim takes a listed ticket
/// is known only from the listing rows (`batch::resale`).
pub(crate) fn write_entries(
    tx: &mut Transaction<'_>,
    event: &str,
    base: StreamId,
    rest: &[Entry],
    force_slow: bool,
    seated: Option<bool>,
    out: &mut Outcome,
) -> Result<bool, mysql::Error> {
    let layout = batch_layout(tx, event, rest, seated)?;
    let (todo, p) = plan(base, rest, layout.as_deref());
    let packet = packet_limit();
    let p = match (p, force_slow) {
        (Plan::Nothing, _) => Plan::Nothing,
        (_, true) => Plan::Slow("retry after anomaly".into()),
        // An entry MySQL cannot take becomes a conflict there.
        (_, false) if todo.iter().any(|e| refusal(e, packet).is_some()) => {
            Plan::Slow("an entry MySQL cannot take".into())
        }
        (Plan::Fast(_), false) if resale::any_listed(tx, event)? => {
            Plan::Slow("the event has listed tickets".into())
        }
        (p, false) => p,
    };
    match p {
        Plan::Nothing => out.path = "fast",
        Plan::Fast(fp) => match fast::write(tx, event, &fp, layout.as_deref())? {
            Ok(()) => {
                out.path = "fast";
                for (op, n) in count_ops(&todo) {
                    *out.written.entry(op).or_insert(0) += n;
                }
            }
            Err(why) => {
                log::info!(
                    "event {event}: fast path refused ({why}); replaying batch record by record"
                );
                return Ok(false);
            }
        },
        Plan::Slow(why) => {
            log::debug!("event {event}: slow path: {why}");
            out.path = "slow";
            slow::write(tx, event, &todo, layout.as_deref(), out)?;
        }
    }
    Ok(true)
}

/// A refused batch: only the quarantine and the conflict, never the
/// entries or the offset.
fn refuse(
    tx: &mut Transaction<'_>,
    event: &str,
    offset: StreamId,
    quarantine: Option<Evidence>,
    conflict: Option<Conflict>,
) -> Result<Outcome, mysql::Error> {
    if let Some(ev) = &quarantine {
        self::quarantine(tx, event, ev)?;
    }
    let mut conflicts = Vec::new();
    if let Some(c) = conflict {
        if record_conflict_once(tx, event, &c)? {
            conflicts.push(c);
        }
    }
    Ok(Outcome {
        offset: Some(offset),
        path: "refused",
        refused: true,
        quarantined: quarantine,
        conflicts,
        ..Outcome::default()
    })
}

/// The discard of `reused` (entries of a dropped event's
/// re-created id): each becomes a `reused_after_drop` conflict and the
/// offset moves past them. With `lifted` (the last is the re-created
/// sale's drop) the quarantine is lifted; the event stays dropped. With
/// `more` (entries after them in the batch), the reader reads on from the
/// new offset, through the gate again.
fn discard(
    tx: &mut Transaction<'_>,
    (event, locked): (&str, Locked),
    reused: &[Entry],
    lifted: bool,
    more: bool,
) -> Result<Outcome, mysql::Error> {
    let detail = "the event was dropped; its id was created again in Redis: not applied (event ids are not reused)";
    log::warn!(
        "event {event}: {} entries of a sale created again under this dropped event's id are not applied (reused_after_drop conflicts)",
        reused.len()
    );
    let mut conflicts = Vec::new();
    for e in reused {
        let detail = match &e.rec {
            Ok(_) => detail.to_owned(),
            Err(m) => format!("{detail}: {}", m.raw),
        };
        let c = Conflict::about(e, "reused_after_drop", detail);
        if record_conflict_once(tx, event, &c)? {
            conflicts.push(c);
        }
    }
    if lifted {
        tx.exec_drop(
            "UPDATE ticket_event SET quarantined_at = NULL, quarantine_reason = NULL WHERE event_id = ?",
            (event,),
        )?;
    }
    let last = reused.last().map(|e| e.id);
    if let Some(last) = last {
        advance(tx, (event, locked), last, reused, false)?;
    }
    Ok(Outcome {
        offset: last,
        path: "discarded",
        refused: more,
        discarded: last.filter(|_| lifted),
        conflicts,
        ..Outcome::default()
    })
}

/// The event's row as the gate needs it (None when MySQL has no row),
/// and whether it has a seat layout (for [`write_entries`]; None without a
/// row), in one query.
fn event_state(
    tx: &mut Transaction<'_>,
    event: &str,
) -> Result<(Option<EventState>, Option<bool>), mysql::Error> {
    let row: Option<(Option<String>, bool, bool, bool)> = tx.exec_first(
        "SELECT incarnation, quarantined_at IS NOT NULL, dropped_at IS NOT NULL, seat_layout IS NOT NULL FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    let seated = row.as_ref().map(|r| r.3);
    let state = row.map(|(inc, quarantined, dropped, _)| EventState {
        incarnation: inc.as_deref().and_then(Incarnation::parse),
        quarantined,
        dropped,
    });
    Ok((state, seated))
}

thread_local! {
    /// Stored layouts this writer has parsed, by event. A stored layout
    /// never changes (written once, with the event's row; event ids are
    /// not reused), so each writer parses an event's once, not per batch
    /// (the 80,000-seat arena's is ~150 KB and ~1 ms to parse).
    static PARSED: RefCell<HashMap<String, Arc<Layout>>> = RefCell::new(HashMap::new());
}

/// Most layouts a writer keeps parsed (then it starts over).
const PARSED_MAX: usize = 64;

/// The layout a batch of `event` is written with (see [`choose_layout`]),
/// reading the one MySQL stores (parsed once per writer). `seated`:
/// whether the event's row has one, when the caller read it and found a
/// row. An event MySQL has without a layout has none: an init in its
/// batch is a duplicate (a conflict), and its layout must not judge the
/// claims after it.
fn batch_layout(
    tx: &mut Transaction<'_>,
    event: &str,
    todo: &[Entry],
    seated: Option<bool>,
) -> Result<Option<Arc<Layout>>, mysql::Error> {
    let seated = match seated {
        Some(known) => Some(known),
        None => tx.exec_first(
            "SELECT seat_layout IS NOT NULL FROM ticket_event WHERE event_id = ?",
            (event,),
        )?,
    };
    match seated {
        Some(false) => return Ok(None),
        None => return Ok(choose_layout(None, todo).map(Arc::new)),
        Some(true) => {}
    }
    if let Some(layout) = PARSED.with(|p| p.borrow().get(event).cloned()) {
        return Ok(Some(layout));
    }
    let stored: Option<String> = tx
        .exec_first::<Option<String>, _, _>(
            "SELECT seat_layout FROM ticket_event WHERE event_id = ?",
            (event,),
        )?
        .flatten();
    let layout = choose_layout(stored, todo).map(Arc::new);
    if let Some(l) = &layout {
        PARSED.with(|p| {
            let mut p = p.borrow_mut();
            if p.len() >= PARSED_MAX {
                p.clear();
            }
            p.insert(event.to_owned(), l.clone());
        });
    }
    Ok(layout)
}

/// Writes a restore: the event's status and incarnation, quarantine lifted.
fn write_restore(tx: &mut Transaction<'_>, event: &str, r: &Restore) -> Result<(), mysql::Error> {
    tx.exec_drop(
        "UPDATE ticket_event SET status = ?, incarnation = ?, quarantined_at = NULL, quarantine_reason = NULL, updated_at = ? WHERE event_id = ?",
        (restored_status(r.status), r.incarnation.to_string(), datetime(r.at), event),
    )?;
    // A rebuild does not restore resale listings (nor buyers' holds of
    // them): the tickets came back as their sellers' sold ones, so their
    // live listing rows end here and a seller may list them again.
    tx.exec_drop(
        "UPDATE ticket_listing SET state = 'unlisted', ended_stream_id = ?, ended_at = ?, buyer = NULL, buyer_order = NULL, held_until = NULL \
         WHERE event_id = ? AND state = 'listed'",
        (r.id.to_string(), datetime(r.at), event),
    )
}

#[cfg(test)]
mod tests;
