//! The heal itself (I/O), run by the verifier in its transaction, under
//! the event's offset row lock, so no writer commits meanwhile.
//!
//! [`check`]: Redis holds what MySQL wrote when Redis's anchor key names
//! the entry at MySQL's offset, or when its log from that anchor through
//! the offset is, entry by entry, the journal's after the anchor (the entry
//! at the offset alone is not enough: two primaries can log the same record
//! at the same id). Otherwise the new primary's anchor places its
//! log against the journal ([`planner::place`]), the lost writes
//! are re-applied through `TICKET.REAPPLY` (in order; one refused, or one
//! following a refused one, is undone) or undone, MySQL reverts every
//! lost write and applies the log after D (the re-applied writes among
//! it, where the new primary logged them), the journal is rewritten from
//! D, the offset moves to the log's end, and a `ticket_heal` row and a
//! `lost_in_failover` conflict per undone write (naming user, tickets and
//! what replaced them) record it. A lost `resold` is never sent: the
//! re-applied confirm before it logs it again (matched by content), or
//! it is undone. A log that cannot be placed, or a lost
//! `init`/`drop`/`restore`, is evidence for the quarantine, as before.

use std::time::Instant;

use mysql::prelude::Queryable;
use mysql::Transaction;
use redis::ConnectionLike;

use super::entry;
use super::journal;
use super::planner::{self, Fate, Logged, Touch, Undo};
use super::report::{name_after_sale, store_report, undone_detail, Report};
use crate::batch::after;
use crate::batch::allocation::{self, Move};
use crate::batch::order::{recount_categories, ChangeKind};
use crate::batch::resale;
use crate::batch::write_entries;
use crate::io::mysql as db;
use crate::io::redis::inspect::{count_upto, stream_info};
use crate::io::redis::stream;
use crate::model::{Conflict, Entry, Evidence, Outcome, Reason};
use protocol::record::Op;
use protocol::StreamId;

/// Why a check or heal stopped: the round retries it.
#[derive(Debug)]
pub enum Error {
    Redis(redis::RedisError),
    Mysql(mysql::Error),
}

impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Error {
        Error::Redis(e)
    }
}

impl From<mysql::Error> for Error {
    fn from(e: mysql::Error) -> Error {
        Error::Mysql(e)
    }
}

/// The outcome of [`check`].
#[derive(Debug)]
pub enum Verdict {
    /// Redis holds what MySQL wrote (or there is no evidence either way:
    /// the older checks decide).
    Intact,
    Healed(Report),
    Quarantine(Evidence),
}

/// Checks `event` (MySQL at `offset`) and heals it when it diverged.
pub fn check(
    tx: &mut Transaction<'_>,
    rc: &mut dyn ConnectionLike,
    event: &str,
    offset: StreamId,
) -> Result<Verdict, Error> {
    let Some(anchor) = journal::stored_anchor(tx, event)? else {
        return Ok(Verdict::Intact);
    };
    // No anchor in Redis: nothing was ever trimmed (or only before V4),
    // no evidence either way; the older checks decide.
    let Some((key, log)) = anchored_log(rc, event, &offset.to_string())? else {
        return Ok(Verdict::Intact);
    };
    if key == (offset, anchor.clone()) || holds_written(tx, event, (offset, &anchor), &key, &log)? {
        return Ok(Verdict::Intact);
    }
    heal(tx, rc, event, offset)
}

/// An anchor Redis names: the entry's id and content digest.
type Anchor = (StreamId, String);

/// The anchor Redis names and its log after that anchor up to `upto`
/// (XRANGE syntax); None without an anchor. The log is read first: the
/// trimmer names an anchor before it trims up to it, so a trim in between
/// moves the anchor read second past every entry it deleted, and the log
/// still holds every entry after that anchor.
fn anchored_log(
    rc: &mut dyn ConnectionLike,
    event: &str,
    upto: &str,
) -> Result<Option<(Anchor, Vec<Logged>)>, Error> {
    let all = range(rc, event, "-", upto)?;
    let Some(key) = journal::redis_anchor(rc, event)? else {
        return Ok(None);
    };
    let log = all.into_iter().filter(|e| e.id > key.0).collect();
    Ok(Some((key, log)))
}

/// Whether `log`, Redis's entries after its anchor `key` through MySQL's
/// offset, is what MySQL's journal holds after that anchor, entry by
/// entry. The entry at the offset alone proves nothing: two primaries can
/// log the same record at the same id after different histories (during a
/// partition, the old primary and the promoted replica both expire a hold
/// in the same millisecond), and MySQL then holds writes the new primary
/// never had.
fn holds_written(
    tx: &mut Transaction<'_>,
    event: &str,
    (offset, anchor): (StreamId, &str),
    (from, digest): &(StreamId, String),
    log: &[Logged],
) -> Result<bool, Error> {
    if *from >= offset {
        return Ok(false);
    }
    let at_offset = log.last().filter(|e| e.id == offset);
    if at_offset.is_none_or(|e| entry::digest(&e.text) != anchor) {
        return Ok(false);
    }
    Ok(match journal::after_anchor(tx, event, (*from, digest))? {
        journal::Tail::After(written) => written == log,
        journal::Tail::Other => false,
        // Older than the ring: a heal could not place the log either; the
        // entry at the offset is all the evidence left.
        journal::Tail::Older => true,
    })
}

/// Entries of the log from `start` to `end` (XRANGE syntax), as read.
fn range_entries(
    rc: &mut dyn ConnectionLike,
    event: &str,
    start: &str,
    end: &str,
) -> Result<Vec<Entry>, Error> {
    Ok(stream::range(rc, event, (start, end), None)?)
}

/// [`range_entries`] as the heal compares them.
fn range(
    rc: &mut dyn ConnectionLike,
    event: &str,
    start: &str,
    end: &str,
) -> Result<Vec<Logged>, Error> {
    let entries = range_entries(rc, event, start, end)?;
    Ok(entries.into_iter().map(|e| logged(event, e)).collect())
}

fn logged(event: &str, e: Entry) -> Logged {
    Logged {
        id: e.id,
        text: entry::text(event, &e),
        rec: e.rec.ok(),
    }
}

/// The first entries of a heal's journal or log, one `id op user
/// tickets` each: the evidence an operator (or a soak) reads when a heal
/// undid a write.
fn window(entries: &[Logged]) -> String {
    const SHOWN: usize = 24;
    let mut shown: Vec<String> = entries
        .iter()
        .take(SHOWN)
        .map(|l| match l.rec.as_ref().map(|r| (&r.op, r.op.order())) {
            Some((op, Some((user, tickets, _)))) => {
                format!("{} {} {user:?} {}", l.id, op.name(), tickets.value())
            }
            Some((op, None)) => format!("{} {}", l.id, op.name()),
            None => format!("{} (malformed)", l.id),
        })
        .collect();
    if entries.len() > SHOWN {
        shown.push(format!("... {} more", entries.len() - SHOWN));
    }
    format!("[{}]", shown.join(", "))
}

/// A journal's entry, for its conflict (user, tickets).
fn entry_of(l: &Logged) -> Entry {
    let rec = l.rec.clone().ok_or_else(|| protocol::record::Malformed {
        reason: "malformed".into(),
        user: None,
        ticket: None,
        raw: l.text.clone(),
    });
    Entry::new(l.id, rec)
}

/// The heal: the plan, the re-applications in Redis, then MySQL.
fn heal(
    tx: &mut Transaction<'_>,
    rc: &mut dyn ConnectionLike,
    event: &str,
    offset: StreamId,
) -> Result<Verdict, Error> {
    let started = Instant::now();
    let Some(((anchor, digest), log)) = anchored_log(rc, event, "+")? else {
        return Ok(Verdict::Intact);
    };
    let rows = journal::load(tx, event)?;
    let journal: Vec<Logged> = rows.iter().map(|(_, l)| l.clone()).collect();
    let (meet, fates) = match plan(event, &journal, (anchor, &digest), &log) {
        Ok(Some(plan)) => plan,
        Ok(None) => return Ok(Verdict::Intact),
        Err(evidence) => return Ok(Verdict::Quarantine(evidence)),
    };
    let lost = &journal[meet.journal + 1..];
    let fates = reapply(rc, event, lost, fates, log.last().map_or(anchor, |e| e.id))?;
    if fates.iter().any(|f| matches!(f, Fate::Undo(_))) {
        log::info!(
            "event {event}: heal evidence: MySQL's journal after {}: {}; the new primary's log after it: {}",
            journal[meet.journal].id,
            window(lost),
            window(&log[meet.log..])
        );
    }
    let mut report = Report {
        diverged_at: journal[meet.journal].id,
        before: offset,
        lost: lost.len(),
        ..Report::default()
    };
    let d = (&rows[..], &journal[..], meet.journal);
    follow(tx, rc, event, d, &fates, &mut report)?;
    report.millis = started.elapsed().as_millis();
    store_report(tx, event, &report)?;
    Ok(Verdict::Healed(report))
}

/// Where the log meets the journal and the fate of each lost write; None
/// when nothing was lost, Err when the log cannot be placed or a lost
/// write cannot be healed (evidence for the quarantine).
fn plan(
    event: &str,
    journal: &[Logged],
    anchor: (StreamId, &str),
    log: &[Logged],
) -> Result<Option<(planner::Meet, Vec<Fate>)>, Evidence> {
    let evidence = |text: String| Evidence {
        reason: Reason::EntriesLost,
        text: format!("event {event}: {text}"),
    };
    let meet = planner::place(journal, anchor, log).map_err(evidence)?;
    let lost = &journal[meet.journal + 1..];
    if lost.is_empty() {
        return Ok(None);
    }
    let fates = planner::decide(lost, &log[meet.log..]);
    if let Some(Fate::Unhealable(why)) = fates.iter().find(|f| matches!(f, Fate::Unhealable(_))) {
        return Err(evidence(format!(
            "an unplanned failover lost writes MySQL applied, and one cannot be healed: {why}"
        )));
    }
    Ok(Some((meet, fates)))
}

/// MySQL follows the new primary: every lost write reverted, the undone
/// ones reported, the log after D (`journal[d]`, the entries of `rows`)
/// written, the offset moved.
fn follow(
    tx: &mut Transaction<'_>,
    rc: &mut dyn ConnectionLike,
    event: &str,
    (rows, journal, d): (&[(journal::Pos, Logged)], &[Logged], usize),
    fates: &[Fate],
    report: &mut Report,
) -> Result<(), Error> {
    let lost = &journal[d + 1..];
    // As read (not rebuilt from their texts): written and journaled as
    // the writer would, a too-large entry a conflict with its SHA-256.
    let after = range_entries(rc, event, &format!("({}", journal[d].id), "+")?;
    for step in planner::undo_steps(lost, fates, &journal[..=d]) {
        undo(tx, event, &step)?;
    }
    recount_categories(tx, event)?;
    report_fates(tx, event, lost, fates, &after, report)?;
    catch_up(tx, event, (rows, d), &after, report)?;
    mark_reapplied(tx, event, fates)?;
    move_offset(tx, rc, event, report.after, &journal[d], after.is_empty())
}

/// MySQL writes the new primary's log after D (`rows[d]`), and its
/// journal is cut after D and continued with that log.
fn catch_up(
    tx: &mut Transaction<'_>,
    event: &str,
    (rows, d): (&[(journal::Pos, Logged)], usize),
    after: &[Entry],
    report: &mut Report,
) -> Result<(), Error> {
    let mut out = Outcome::default();
    let from = report.diverged_at;
    write_entries(tx, event, from, after, true, None, &mut out)?;
    report.conflicts = out.conflicts;
    journal::forget_after(tx, event, rows, d)?;
    journal::record(tx, event, after)?;
    report.after = after.last().map_or(from, |e| e.id);
    report.written = after.len();
    Ok(())
}

/// Marks the orders the re-applied writes created (`reapplied`): their
/// seats were chosen on the lost history, so `audit-seats` checks them for
/// "no seat twice" only.
fn mark_reapplied(tx: &mut Transaction<'_>, event: &str, fates: &[Fate]) -> mysql::Result<()> {
    for fate in fates {
        if let Fate::Reapplied { by } = fate {
            tx.exec_drop(
                "UPDATE ticket_participation SET reapplied = 1 WHERE event_id = ? AND order_id = ? AND status <> 'lost_in_failover'",
                (event, by.to_string()),
            )?;
        }
    }
    Ok(())
}

/// Counts the re-applied writes and records the undone ones: a
/// `lost_in_failover` conflict per client write; an expiry, an offer or a
/// draw is the module's own decision, decided anew by the new primary, with nobody
/// to tell: logged and counted only.
fn report_fates(
    tx: &mut Transaction<'_>,
    event: &str,
    lost: &[Logged],
    fates: &[Fate],
    after: &[Entry],
    report: &mut Report,
) -> mysql::Result<()> {
    for (l, fate) in lost.iter().zip(fates) {
        match fate {
            Fate::Reapplied { .. } => report.reapplied += 1,
            Fate::Undo(why) => {
                let detail = undone_detail(l, why, after);
                let mut c = Conflict::about(&entry_of(l), "lost_in_failover", detail);
                if let Some(r) = &l.rec {
                    name_after_sale(&mut c, &r.op);
                }
                match l.rec.as_ref().map(|r| &r.op) {
                    Some(Op::Expire { .. } | Op::Offer { .. } | Op::Draw { .. }) => {
                        report.undone_quietly.push(c)
                    }
                    _ => {
                        db::record_conflict_once(tx, event, &c)?;
                        report.undone.push(c);
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// `TICKET.REAPPLY` of each lost write to try, in order; a refused one, or
/// one following a refused or undone one, becomes an undo. `cursor`: the
/// last entry of the log the plan read. Before each, the entries the new
/// primary logged since are read (this heal's own re-applications left
/// out): one touching the write's user or tickets undoes it, and
/// `SINCE <the last entry read>` makes the module refuse it for any entry
/// logged after that, so no answer the new primary gives while the heal
/// runs is taken back.
fn reapply(
    rc: &mut dyn ConnectionLike,
    event: &str,
    lost: &[Logged],
    fates: Vec<Fate>,
    mut cursor: StreamId,
) -> Result<Vec<Fate>, Error> {
    let mut refused: Vec<Touch> = Vec::new();
    let mut since_plan = Since::default();
    let mut out = Vec::with_capacity(fates.len());
    for (l, fate) in lost.iter().zip(fates) {
        let fate = match (fate, &l.rec) {
            (Fate::Try, Some(rec)) if matches!(rec.op, Op::Resold { .. }) => {
                match since_plan.resold(l) {
                    Some(id) => Fate::Reapplied { by: id },
                    None => {
                        refused.push(Touch::of(&rec.op));
                        Fate::Undo("the confirm before it was not re-applied with it".into())
                    }
                }
            }
            (Fate::Try, Some(rec)) => {
                let mine = Touch::of(&rec.op);
                since_plan.read(rc, event, &mut cursor)?;
                let follows = refused.iter().find_map(|t| mine.shared(t)).map(|what| {
                    format!("it follows a lost write about {what} that could not be re-applied")
                });
                let changed = mine
                    .shared(&since_plan.touched)
                    .map(|what| format!("the new primary changed {what} while the heal ran"));
                let sent = match follows.or(changed) {
                    Some(why) => Err(why),
                    None => send(rc, event, l, cursor)?,
                };
                match sent {
                    Ok(id) => {
                        since_plan.own.push(id);
                        if let Op::Confirm { tickets, .. } = &rec.op {
                            let sellers = tickets.as_slice().len();
                            since_plan.sold_with(rc, event, id, sellers)?;
                        }
                        Fate::Reapplied { by: id }
                    }
                    Err(why) => {
                        refused.push(mine);
                        Fate::Undo(why)
                    }
                }
            }
            (Fate::Undo(why), Some(rec)) => {
                refused.push(Touch::of(&rec.op));
                Fate::Undo(why)
            }
            (f, _) => f,
        };
        out.push(fate);
    }
    Ok(out)
}

/// What the new primary logged after the plan's read of its log.
#[derive(Default)]
struct Since {
    touched: Touch,
    /// This heal's re-applied entries (not the new primary's changes).
    own: Vec<StreamId>,
    /// The `resold` entries a re-applied confirm logged, not yet matched
    /// to a lost one.
    sold: Vec<Logged>,
}

impl Since {
    /// The `resold` entries (at most `sellers`) right after the re-applied
    /// confirm `id`: logged by the same `TICKET.REAPPLY` (no command logs a
    /// `resold` but right after the confirm or claim that sold it), so
    /// this heal's own.
    fn sold_with(
        &mut self,
        rc: &mut dyn ConnectionLike,
        event: &str,
        id: StreamId,
        sellers: usize,
    ) -> Result<(), Error> {
        let start = format!("({id}");
        let after = stream::range(rc, event, (&start, "+"), Some(sellers))?;
        let sold = after
            .into_iter()
            .map(|e| logged(event, e))
            .take_while(|e| matches!(e.rec.as_ref().map(|r| &r.op), Some(Op::Resold { .. })));
        for e in sold {
            self.own.push(e.id);
            self.sold.push(e);
        }
        Ok(())
    }

    /// The id of the re-applied `resold` with `lost`'s content, if any.
    fn resold(&mut self, lost: &Logged) -> Option<StreamId> {
        let at = self.sold.iter().position(|e| e.text == lost.text)?;
        Some(self.sold.remove(at).id)
    }

    /// Reads the log after `cursor`, moves `cursor` to its last entry.
    fn read(
        &mut self,
        rc: &mut dyn ConnectionLike,
        event: &str,
        cursor: &mut StreamId,
    ) -> Result<(), Error> {
        for e in range(rc, event, &format!("({cursor}"), "+")? {
            *cursor = e.id;
            if let (false, Some(r)) = (self.own.contains(&e.id), &e.rec) {
                self.touched.add(&r.op);
            }
        }
        Ok(())
    }
}

/// One `TICKET.REAPPLY ... SINCE <since>`: Ok(Ok(new id)), Ok(Err(why))
/// when refused with `CHANGED`; any other error stops the heal.
fn send(
    rc: &mut dyn ConnectionLike,
    event: &str,
    l: &Logged,
    since: StreamId,
) -> Result<Result<StreamId, String>, Error> {
    let mut cmd = redis::cmd("TICKET.REAPPLY");
    cmd.arg(event).arg("SINCE").arg(since.to_string());
    for (k, v) in entry::text_fields(&l.text) {
        cmd.arg(k).arg(v);
    }
    match cmd.query::<String>(rc) {
        Ok(id) => Ok(StreamId::parse(&id)
            .ok_or_else(|| format!("TICKET.REAPPLY answered {id:?}, not an id"))),
        Err(e) if e.code() == Some("CHANGED") => {
            Ok(Err(e.detail().unwrap_or("changed").to_owned()))
        }
        Err(e) => Err(Error::Redis(e)),
    }
}

/// Reverts one lost write in MySQL.
fn undo(tx: &mut Transaction<'_>, event: &str, step: &Undo) -> mysql::Result<()> {
    match step {
        Undo::Order { order, from } => {
            // The rows stay as history: a re-applied write gets new rows
            // from its new entry.
            tx.exec_drop(
                "UPDATE ticket_participation SET status = 'lost_in_failover' WHERE event_id = ? AND order_id = ? AND live_ticket IS NOT NULL",
                (event, order.to_string()),
            )?;
            let n = tx.affected_rows() as i64;
            // an offer of a draw event: its step too
            lost_step(tx, event, *order)?;
            resale::undo_buy(tx, event, *order)?;
            match from {
                Some(a) => allocation::undo_take(tx, event, (&a.name, &a.tickets), n),
                None => stock(tx, event, n),
            }
        }
        Undo::Move { step, op } => match Move::of(op) {
            Some(m) => allocation::undo_step(tx, event, &m, *step),
            None => Ok(()),
        },
        Undo::Step { step } => lost_step(tx, event, *step),
        Undo::Transfer { transfer, from, to } => {
            after::undo_transfer(tx, event, *transfer, (from, to))
        }
        Undo::Scan { scan } => after::undo_scan(tx, event, *scan),
        Undo::Resell { resell } => resale::undo_resell(tx, event, *resell),
        Undo::Unlist { unlist } => resale::undo_unlist(tx, event, *unlist),
        Undo::Resold { resold, from, to } => {
            after::undo_transfer(tx, event, *resold, (from, to))?;
            resale::undo_resold(tx, event, *resold)
        }
        Undo::Draw { draw } => {
            tx.exec_drop(
                "UPDATE ticket_event SET draw_seed = NULL, drawn_at = NULL, draw_stream_id = NULL WHERE event_id = ? AND draw_stream_id = ?",
                (event, draw.to_string()),
            )?;
            lost_step(tx, event, *draw)
        }
        Undo::Change {
            change,
            kind,
            user,
            previous,
            from,
            rehold,
        } => {
            let back = match kind {
                ChangeKind::Confirm => "'held', confirmed_at = NULL",
                ChangeKind::Expire => "'held', expired_at = NULL",
                ChangeKind::Cancel => "IF(held_until IS NOT NULL AND confirmed_at IS NULL, 'held', 'active'), canceled_at = NULL",
            };
            tx.exec_drop(
                format!("UPDATE ticket_participation SET status = {back}, stream_id = COALESCE(?, order_id) WHERE event_id = ? AND user_id = ? AND stream_id = ? AND status = ?"),
                (previous.map(|p| p.to_string()), event, user, change.to_string(), kind.target().as_str()),
            )?;
            let n = tx.affected_rows() as i64;
            if let Some(h) = rehold {
                resale::rehold(tx, event, (user, h.order, h.until), &h.tickets)?;
            }
            match (kind.releases(), from) {
                (true, Some(a)) => {
                    let back = Move::Return {
                        name: &a.name,
                        tickets: &a.tickets,
                    };
                    allocation::undo_step(tx, event, &back, *change)
                }
                (true, None) => stock(tx, event, -n),
                (false, _) => Ok(()),
            }
        }
        Undo::SetStatus { to } => tx.exec_drop(
            "UPDATE ticket_event SET status = ? WHERE event_id = ?",
            (to, event),
        ),
    }
}

/// Marks the `ticket_draw_step` row of lost entry `id` lost (none for an
/// entry that is no draw event's step).
fn lost_step(tx: &mut Transaction<'_>, event: &str, id: StreamId) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_draw_step SET lost_in_failover = 1 WHERE event_id = ? AND stream_ms = ? AND stream_seq = ? AND lost_in_failover = 0",
        (event, id.ms, id.seq),
    )
}

fn stock(tx: &mut Transaction<'_>, event: &str, n: i64) -> mysql::Result<()> {
    tx.exec_drop(
        "UPDATE ticket_stock SET remaining_stock = remaining_stock + ? WHERE event_id = ?",
        (n, event),
    )
}

/// Moves the offset to `to` with the entry count Redis's log shows (what
/// it deleted plus what it keeps up to `to`), and with no entry written
/// after D, the anchor back to D's.
fn move_offset(
    tx: &mut Transaction<'_>,
    rc: &mut dyn ConnectionLike,
    event: &str,
    to: StreamId,
    d: &Logged,
    anchor_is_d: bool,
) -> Result<(), Error> {
    // XINFO before the count: a trim in between then counts its entries
    // in neither (an alarm missed) rather than in both (a false
    // `entries_lost` later).
    let deleted =
        stream_info(rc, event)?.map_or(0, |(_, added, length)| added.saturating_sub(length));
    let kept = count_upto(rc, event, to, 10_000_000)?;
    tx.exec_drop(
        "UPDATE ticket_sync_offset SET last_stream_id = ?, entries = ?, updated_at = NOW(3) WHERE event_id = ?",
        (to.to_string(), (deleted + kept) as i64, event),
    )?;
    if anchor_is_d {
        tx.exec_drop(
            "UPDATE ticket_sync_offset SET anchor = ? WHERE event_id = ?",
            (entry::digest(&d.text), event),
        )?;
    }
    Ok(())
}
