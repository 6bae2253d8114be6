//! One batch of one event's log entries, applied to MySQL exactly once:
//! the transaction the writer threads (`sync::writer`) run, and its parts.
//!
//! The invariant, step by step in [`commit_batch`] (rust-rdkafka's
//! at-least-once loop — receive, process, store the offset last — with all
//! three in one transaction, which makes it exactly once):
//!
//! 1. open a transaction and lock the event's `ticket_sync_offset` row
//!    (`SELECT .. FOR UPDATE`): a second sidecar waits here;
//! 2. skip the entries at or below the locked offset: applied already (a
//!    retry, a restart after `kill -9`, the sidecar that held the lock);
//! 3. ask the [`gate`]: a quarantined, re-created or replaced event is
//!    refused, and only its quarantine or conflict commits, no entry;
//! 4. apply the rest as [`plan`]ned: the [`fast`] path, or record by record
//!    ([`slow`]), both on [`sql`];
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
//! event's steps, [`seating`] a seated event's seats and category stocks; the heal (`loss::heal`) re-applies entries through
//! [`apply_rest`].

pub mod fast;
pub mod gate;
pub mod journal;
pub mod plan;
pub mod queue;
pub mod seating;
pub mod slow;
pub mod sql;

use mysql::prelude::Queryable;
use mysql::{Conn, Transaction, TxOpts};

use crate::io::mysql::{quarantine, record_conflict_once};
use crate::io::rounds::request_now;
use crate::model::event::restored_status;
use crate::model::time::datetime;
use crate::model::{Conflict, Entry, EventState, Evidence, Outcome};
use gate::{gate, Gate, Restore};
use plan::{count_ops, plan, Plan};
use protocol::record::Incarnation;
use protocol::StreamId;

/// Applies one batch of `event`'s entries (ascending ids, read from the
/// log after `after`) exactly once, unless the gate refuses it (see
/// [`gate`]): the one function that opens and commits the transaction,
/// retried slowly in a new one when the fast path finds an anomaly.
pub fn commit_batch(
    conn: &mut Conn,
    event: &str,
    after: StreamId,
    entries: &[Entry],
) -> Result<Outcome, mysql::Error> {
    conn.exec_drop(
        "INSERT IGNORE INTO ticket_sync_offset (event_id, last_stream_id, entries, updated_at) VALUES (?, '0-0', 0, NOW(3))",
        (event,),
    )?;
    let mut force_slow = false;
    loop {
        let mut tx = conn.start_transaction(TxOpts::default())?;
        match attempt(&mut tx, event, after, entries, force_slow)? {
            Some(out) => {
                tx.commit()?;
                return Ok(out);
            }
            None => {
                drop(tx); // rollback
                force_slow = true;
            }
        }
    }
}

/// Step 1: reads and locks the event's offset row (the verifier and
/// rebuild take the same lock to serialise with the writers).
pub fn lock_offset(tx: &mut impl Queryable, event: &str) -> Result<StreamId, mysql::Error> {
    let row: Option<String> = tx.exec_first(
        "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = ? FOR UPDATE",
        (event,),
    )?;
    let text = row.unwrap_or_else(|| "0-0".into());
    StreamId::parse(&text).ok_or_else(|| {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "HY000".into(),
            code: 0,
            message: format!(
                "ticket_sync_offset.last_stream_id of event {event:?} is {text:?}, not a stream id: fix the row"
            ),
        })
    })
}

/// Steps 2 to 5 under the offset lock: what to commit, or `None` when the
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
) -> Result<Option<Outcome>, mysql::Error> {
    let offset = lock_offset(tx, event)?;
    let todo: Vec<Entry> = entries.iter().filter(|e| e.id > offset).cloned().collect();
    let Some(last) = todo.last().map(|e| e.id) else {
        return Ok(Some(Outcome {
            offset: Some(offset),
            path: "skip",
            ..Outcome::default()
        }));
    };
    if after > offset {
        return refuse(tx, event, offset, None, None).map(Some);
    }
    let state = event_state(tx, event)?;
    let (from, restore) = match gate(event, state.as_ref(), offset, &todo) {
        Gate::Apply { from, restore } => (from, restore),
        Gate::Discard { upto, lifted } => {
            let more = upto + 1 < todo.len();
            return discard(tx, event, &todo[..=upto], lifted, more).map(Some);
        }
        Gate::Refuse {
            quarantine,
            conflict,
        } => return refuse(tx, event, offset, quarantine, conflict).map(Some),
    };
    if restore.is_none() && !anchor_holds(tx, event, after, offset, entries)? {
        return refuse(tx, event, offset, None, None).map(Some);
    }
    let todo = &todo[from..];
    apply_gated(
        tx,
        event,
        (offset, last),
        todo,
        restore.as_ref(),
        force_slow,
    )
}

/// Applies `todo` (what the gate let through, a restore first when
/// `restore`) above `offset` and advances the offset to `last` (the
/// batch's last entry); `None` when the fast path refused and the batch
/// must be replayed slowly.
fn apply_gated(
    tx: &mut Transaction<'_>,
    event: &str,
    (offset, last): (StreamId, StreamId),
    todo: &[Entry],
    restore: Option<&Restore>,
    force_slow: bool,
) -> Result<Option<Outcome>, mysql::Error> {
    let mut out = Outcome {
        offset: Some(last),
        ..Outcome::default()
    };
    let mut rest = todo;
    let mut base = offset;
    if let Some(r) = restore {
        apply_restore(tx, event, r)?;
        out.restored = Some(r.id);
        out.applied.insert("restore", 1);
        (base, rest) = (r.id, &rest[1..]);
    }
    if !apply_rest(tx, event, base, rest, force_slow, &mut out)? {
        return Ok(None);
    }
    advance(tx, event, last, todo, restore.is_some())?;
    Ok(Some(out))
}

/// Moves the offset to `last` and counts the `applied` entries; after a
/// restore the count starts again (the new log: the restore and what
/// follows it).
fn advance(
    tx: &mut Transaction<'_>,
    event: &str,
    last: StreamId,
    applied: &[Entry],
    restored: bool,
) -> Result<(), mysql::Error> {
    let count = match restored {
        true => "entries = ?",
        false => "entries = entries + ?",
    };
    tx.exec_drop(
        format!("UPDATE ticket_sync_offset SET last_stream_id = ?, {count}, updated_at = NOW(3) WHERE event_id = ?"),
        (last.to_string(), applied.len() as i64, event),
    )?;
    // The journal and the offset's anchor, in this transaction.
    journal::record(tx, event, applied)
}

/// Whether the batch carries the offset's anchor: a batch read from before
/// the offset must hold the offset's entry with the content MySQL applied,
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

/// Plans and applies `rest` (the entries above `base`) into `out`; false
/// when the fast path refused and the batch must be replayed slowly.
pub(crate) fn apply_rest(
    tx: &mut Transaction<'_>,
    event: &str,
    base: StreamId,
    rest: &[Entry],
    force_slow: bool,
    out: &mut Outcome,
) -> Result<bool, mysql::Error> {
    let layout = seating::batch_layout(tx, event, rest)?;
    let (todo, p) = plan(base, rest, layout.as_deref());
    let p = match (p, force_slow) {
        (Plan::Nothing, _) => Plan::Nothing,
        (_, true) => Plan::Slow("retry after anomaly".into()),
        (p, false) => p,
    };
    match p {
        Plan::Nothing => out.path = "fast",
        Plan::Fast(fp) => match fast::apply(tx, event, &fp, layout.as_deref())? {
            Ok(()) => {
                out.path = "fast";
                for (op, n) in count_ops(&todo) {
                    *out.applied.entry(op).or_insert(0) += n;
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
            slow::apply(tx, event, &todo, layout.as_deref(), out)?;
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
    event: &str,
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
        advance(tx, event, last, reused, false)?;
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

/// The event's row as the gate needs it; None when MySQL has no row.
fn event_state(tx: &mut Transaction<'_>, event: &str) -> Result<Option<EventState>, mysql::Error> {
    let row: Option<(Option<String>, bool, bool)> = tx.exec_first(
        "SELECT incarnation, quarantined_at IS NOT NULL, dropped_at IS NOT NULL FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    Ok(row.map(|(inc, quarantined, dropped)| EventState {
        incarnation: inc.as_deref().and_then(Incarnation::parse),
        quarantined,
        dropped,
    }))
}

/// Applies a restore: the event's status and incarnation, quarantine lifted.
fn apply_restore(tx: &mut Transaction<'_>, event: &str, r: &Restore) -> Result<(), mysql::Error> {
    tx.exec_drop(
        "UPDATE ticket_event SET status = ?, incarnation = ?, quarantined_at = NULL, quarantine_reason = NULL, updated_at = ? WHERE event_id = ?",
        (restored_status(r.status), r.incarnation.to_string(), datetime(r.at), event),
    )
}
