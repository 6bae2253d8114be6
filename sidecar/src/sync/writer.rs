//! The writer threads: each writes the batches of its events, each
//! event's in log order, so the reader's cursor never runs past an
//! unwritten entry. An event always hashes to the same writer.
//! `batch::commit_batch` is the one place a batch meets MySQL.
//!
//! A writer's [`Schedule`] (pure) keeps a queue per event and gives them
//! turns, merging an event's batches read one after the other into one
//! transaction. An event whose batch fails (its offset row locked
//! elsewhere, a statement the server keeps refusing) waits out its own
//! backoff while the writer writes the other events' batches: one event
//! never stalls the others that hash to the same writer (a stuck event is
//! logged and in the metrics: `ticketgate_stuck_events`,
//! `..._event_stuck_seconds`). Nothing of it is skipped: the failed group
//! goes back to the head of its queue, and a batch that arrives for it
//! meanwhile is not queued but handed back ([`Admitted::Dropped`]): the
//! writer tells the reader to read the event again from the end of what
//! it holds, so a stuck event holds no more than it had when it got
//! stuck; a refused batch (a quarantined event) goes back the same way. A
//! committed offset goes to the trimmer. MySQL's offset row stays the
//! truth for progress, so exactly-once is untouched.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::batch::commit_batch;
use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::metrics::Metrics;
use crate::io::mysql as db;
use crate::model::{Entry, Outcome};
use protocol::StreamId;

/// Longest wait for the reader's next batch when nothing is due.
const IDLE: Duration = Duration::from_millis(100);

/// Where a writer sends what it did.
pub struct Outputs {
    /// Committed offsets, for the trimmer.
    pub trims: Sender<(String, StreamId)>,
    /// Refused batches, for the reader.
    pub rewind: Sender<(String, StreamId)>,
    pub metrics: Arc<Metrics>,
}

/// One writer: its queue, its MySQL connection, its outputs.
pub struct Writer {
    idx: usize,
    url: String,
    rx: Receiver<Batch>,
    out: Outputs,
    stop: Arc<AtomicBool>,
    /// Most entries merged into one transaction.
    max_merge: usize,
    schedule: Schedule,
    conn: Option<mysql::Conn>,
    /// Between attempts to connect (every event needs the connection).
    backoff: Backoff,
}

impl Writer {
    /// Writer number `idx` of the batches on `rx`, into MySQL at `url`.
    pub fn new(
        idx: usize,
        url: String,
        rx: Receiver<Batch>,
        out: Outputs,
        stop: Arc<AtomicBool>,
        max_merge: usize,
    ) -> Writer {
        Writer {
            idx,
            url,
            rx,
            out,
            stop,
            max_merge,
            schedule: Schedule::new(max_merge),
            conn: None,
            backoff: Backoff::standard(),
        }
    }

    /// Writes batches until `stop` is set or the reader is gone.
    pub fn run(mut self) {
        while !self.stop.load(Ordering::Relaxed) {
            if !self.take_new() {
                return;
            }
            if let Some(group) = self.schedule.next(Instant::now()) {
                self.attempt(group);
            }
        }
    }

    /// Moves the reader's batches into the schedule: waits for one (up to
    /// [`IDLE`], or until a failing event is due) when nothing is due,
    /// then takes what is queued while the events that are not failing
    /// hold fewer than `max_merge` entries (back-pressure on the reader
    /// comes from them alone). False once the reader is gone.
    fn take_new(&mut self) -> bool {
        let now = Instant::now();
        let due = self.schedule.next_due(now);
        if due.is_none_or(|t| t > now) {
            let wait = due.map_or(IDLE, |t| (t - now).min(IDLE));
            match self.rx.recv_timeout(wait) {
                Ok(b) => self.admit(b),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
        while self.schedule.healthy_entries() < self.max_merge {
            let Ok(b) = self.rx.try_recv() else { break };
            self.admit(b);
        }
        true
    }

    /// Queues `b`; a batch of a failing event goes back to the reader.
    fn admit(&mut self, b: Batch) {
        let event = b.event.clone();
        if let Admitted::Dropped { rewind } = self.schedule.admit(b) {
            log::debug!("event {event}: failing; read again after {rewind}");
            self.out.rewind(&event, rewind);
        }
    }

    /// One attempt at `group`; a failure puts it back for a retry with its
    /// event's backoff.
    fn attempt(&mut self, group: Batch) {
        let Some(c) = self.connection() else {
            self.schedule.put_back(group);
            sleep_unless(&self.stop, self.backoff.next_delay());
            return;
        };
        let started = Instant::now();
        match commit_batch(c, &group.event, group.after, &group.entries) {
            Ok(o) => {
                self.backoff.reset();
                self.out.metrics.set_up("mysql", true);
                if let Some(streak) = self.schedule.succeeded(&group.event) {
                    self.out.recovered(&group.event, &streak);
                }
                self.out
                    .report(&group.event, group.entries.len(), &o, started);
            }
            Err(e) => {
                // The session may be unusable (a dropped connection, a
                // packet the server refused): a new one for the next.
                self.conn = None;
                self.out.metrics.error("mysql");
                let (event, n, after) = (group.event.clone(), group.entries.len(), group.after);
                let streak = self
                    .schedule
                    .failed(group, Instant::now(), rand::random::<f64>());
                self.out.failed(self.idx, (&event, n, after), &streak, &e);
            }
        }
    }

    /// The connection, opened if needed (a failure is logged and counted).
    fn connection(&mut self) -> Option<&mut mysql::Conn> {
        if self.conn.is_none() {
            match db::connect_locking(&self.url) {
                Ok(c) => {
                    self.out.metrics.set_up("mysql", true);
                    self.conn = Some(c);
                }
                Err(e) => {
                    log::warn!("writer-{}: cannot connect to MySQL: {e}", self.idx);
                    self.out.metrics.error("mysql");
                }
            }
        }
        self.conn.as_mut()
    }
}

impl Outputs {
    /// Tells the reader to read `event` again after `offset`.
    fn rewind(&self, event: &str, offset: StreamId) {
        let _ = self
            .rewind
            .send_timeout((event.to_owned(), offset), Duration::from_secs(1));
    }

    /// Logs and exports a failed attempt of writer `idx` at `n` entries of
    /// `event` after `after`.
    fn failed(
        &self,
        idx: usize,
        (event, n, after): (&str, usize, StreamId),
        streak: &Streak,
        e: &mysql::Error,
    ) {
        let failing = streak.since.elapsed().as_secs_f64();
        let retry = streak.retry_at.saturating_duration_since(Instant::now());
        log::warn!(
            "writer-{idx}: event {event}: {n} entries after {after} not applied (attempt {}, failing for {failing:.1} s; retry in {:.1} s, the other events go on): {e}",
            streak.attempts,
            retry.as_secs_f64()
        );
        if streak.now_stuck {
            log::error!(
                "event {event}: STUCK: its batch after {after} has failed {} times in {failing:.0} s; its log waits in Redis, the other events drain on (ticketgate_event_stuck_seconds, ticketgate-sidecar reconcile): {e}",
                streak.attempts
            );
        }
        self.metrics.stuck(event, streak.since, streak.attempts);
    }

    /// Logs and exports the end of `event`'s run of failures.
    fn recovered(&self, event: &str, streak: &Streak) {
        log::info!(
            "event {event}: applied again after {} failed attempts in {:.1} s",
            streak.attempts,
            streak.since.elapsed().as_secs_f64()
        );
        self.metrics.unstuck(event);
    }

    /// Metrics, logs, trims and rewinds after one batch of `event`.
    fn report(&self, event: &str, n: usize, o: &Outcome, started: Instant) {
        let (m, out) = (&self.metrics, self);
        for cf in &o.conflicts {
            m.conflict(cf.reason);
        }
        if let Some(ev) = &o.quarantined {
            log::error!(
                "event {event}: QUARANTINED ({}): {} -- nothing more of it is applied; repair: ticketgate-sidecar rebuild --event {event} --apply [--force]",
                ev.reason.code(),
                ev.text
            );
            m.quarantine(event, ev.reason.code());
        }
        if let Some(id) = o.discarded {
            log::warn!(
                "event {event}: the re-created id of this dropped event was dropped again at {id}: its {} entries are reused_after_drop conflicts; the quarantine is lifted",
                o.conflicts.len()
            );
            m.release(event);
        }
        let Some(offset) = o.offset else { return };
        if o.refused {
            log::debug!(
                "event {event}: {n} entries refused (quarantined); re-reading after {offset}"
            );
            out.rewind(event, offset);
            return;
        }
        if let Some(id) = o.restored {
            log::info!("event {event}: restore {id} applied; the quarantine is lifted");
            m.release(event);
        }
        m.batch(o.path, started.elapsed().as_secs_f64());
        for (op, k) in &o.written {
            m.written(op, *k);
        }
        log::debug!(
            "event {event}: {n} entries via {} path, offset {offset}",
            o.path
        );
        let _ = out
            .trims
            .send_timeout((event.to_owned(), offset), Duration::from_secs(1));
    }
}

/// How long an event fails before it is called stuck in the log.
pub const STUCK_AFTER: Duration = Duration::from_secs(30);

/// One read of one event's log: the entries after `after`.
pub struct Batch {
    pub event: String,
    pub after: StreamId,
    pub entries: Vec<Entry>,
}

impl Batch {
    /// The id of its last entry (`after` when it has none).
    pub fn end(&self) -> StreamId {
        self.entries.last().map_or(self.after, |e| e.id)
    }
}

/// What became of a batch handed to [`Schedule::admit`].
#[derive(Debug, PartialEq, Eq)]
pub enum Admitted {
    Queued,
    /// Not queued (its event is failing): read the event again after
    /// `rewind`, the last entry its queue holds.
    Dropped {
        rewind: StreamId,
    },
}

/// An event's run of failed attempts.
#[derive(Debug, Clone)]
pub struct Streak {
    /// The first failed attempt of the run.
    pub since: Instant,
    /// Failed attempts in a row.
    pub attempts: u32,
    /// When it may be tried again.
    pub retry_at: Instant,
    /// This attempt is the first after [`STUCK_AFTER`].
    pub now_stuck: bool,
    /// The last failed attempt.
    last: Instant,
    backoff: Backoff,
}

/// One event's queue.
#[derive(Default)]
struct Lane {
    batches: VecDeque<Batch>,
    failing: Option<Streak>,
}

impl Lane {
    fn ready(&self, now: Instant) -> bool {
        !self.batches.is_empty() && self.failing.as_ref().is_none_or(|f| f.retry_at <= now)
    }
}

/// A writer's queues, by event.
pub struct Schedule {
    lanes: HashMap<String, Lane>,
    /// Events with queued batches, in the order they get their turn.
    turn: VecDeque<String>,
    /// Most entries merged into one group.
    max_merge: usize,
}

impl Schedule {
    /// No batch yet; groups of up to `max_merge` entries.
    pub fn new(max_merge: usize) -> Schedule {
        Schedule {
            lanes: HashMap::new(),
            turn: VecDeque::new(),
            max_merge,
        }
    }

    /// Queues `b` behind its event's batches, unless the event is failing.
    pub fn admit(&mut self, b: Batch) -> Admitted {
        let lane = self.lanes.entry(b.event.clone()).or_default();
        if lane.failing.is_some() {
            if let Some(held) = lane.batches.back() {
                return Admitted::Dropped { rewind: held.end() };
            }
        }
        let event = b.event.clone();
        lane.batches.push_back(b);
        self.next_turn(&event);
        Admitted::Queued
    }

    /// The next group to write at `now`: the batches of the first event in
    /// turn that may be tried, each read right after the one before, up to
    /// `max_merge` entries. The event's turn ends; [`Schedule::succeeded`],
    /// [`Schedule::failed`] or [`Schedule::put_back`] gives it the next.
    pub fn next(&mut self, now: Instant) -> Option<Batch> {
        let at = self
            .turn
            .iter()
            .position(|e| self.lanes.get(e).is_some_and(|l| l.ready(now)))?;
        let event = self.turn.remove(at)?;
        let lane = self.lanes.get_mut(&event)?;
        let mut group = lane.batches.pop_front()?;
        while group.entries.len() < self.max_merge {
            match lane.batches.front() {
                Some(b) if b.after == group.end() => {}
                _ => break,
            }
            if let Some(b) = lane.batches.pop_front() {
                group.entries.extend(b.entries);
            }
        }
        Some(group)
    }

    /// When an event may be tried next: now when one is ready, else the
    /// earliest retry; None when nothing is queued.
    pub fn next_due(&self, now: Instant) -> Option<Instant> {
        self.lanes
            .values()
            .filter(|l| !l.batches.is_empty())
            .map(|l| l.failing.as_ref().map_or(now, |f| f.retry_at.max(now)))
            .min()
    }

    /// Entries queued for events that are not failing: what the writer
    /// bounds before it takes more from the reader.
    pub fn healthy_entries(&self) -> usize {
        let healthy = self.lanes.values().filter(|l| l.failing.is_none());
        healthy
            .flat_map(|l| &l.batches)
            .map(|b| b.entries.len())
            .sum()
    }

    /// `event`'s group committed (or was refused as a whole): the event is
    /// healthy again. The run of failures it ends, if any.
    pub fn succeeded(&mut self, event: &str) -> Option<Streak> {
        let lane = self.lanes.get_mut(event)?;
        let ended = lane.failing.take();
        self.next_turn(event);
        ended
    }

    /// `group` failed at `now`: back at the head of its event's queue,
    /// which waits out its own backoff (`r`: the jitter, in `[0, 1)`).
    pub fn failed(&mut self, group: Batch, now: Instant, r: f64) -> Streak {
        let event = group.event.clone();
        let lane = self.lanes.entry(event.clone()).or_default();
        let f = lane.failing.get_or_insert_with(|| Streak {
            since: now,
            attempts: 0,
            retry_at: now,
            now_stuck: false,
            last: now,
            backoff: Backoff::standard(),
        });
        let was_stuck = f.last.duration_since(f.since) >= STUCK_AFTER;
        f.attempts += 1;
        f.last = now;
        f.retry_at = now + f.backoff.next_with(r);
        f.now_stuck = !was_stuck && now.duration_since(f.since) >= STUCK_AFTER;
        let streak = f.clone();
        lane.batches.push_front(group);
        self.next_turn(&event);
        streak
    }

    /// `group` was not tried (no connection): back at the head of its
    /// queue, its event's state unchanged.
    pub fn put_back(&mut self, group: Batch) {
        let event = group.event.clone();
        let lane = self.lanes.entry(event.clone()).or_default();
        lane.batches.push_front(group);
        self.next_turn(&event);
    }

    /// Gives `event` its next turn if it has batches left, and forgets it
    /// when it has none and is healthy.
    fn next_turn(&mut self, event: &str) {
        let Some(lane) = self.lanes.get(event) else {
            return;
        };
        if !lane.batches.is_empty() {
            if !self.turn.iter().any(|e| e == event) {
                self.turn.push_back(event.to_owned());
            }
        } else if lane.failing.is_none() {
            self.lanes.remove(event);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::{Op, Record};

    fn batch(event: &str, after: u64, ids: std::ops::RangeInclusive<u64>) -> Batch {
        let entries = ids
            .map(|ms| {
                let rec = Ok(Record {
                    op: Op::Open,
                    at: ms as i64,
                });
                Entry::new(StreamId::new(ms, 0), rec)
            })
            .collect();
        Batch {
            event: event.into(),
            after: StreamId::new(after, 0),
            entries,
        }
    }

    /// (event, after, entry ids) of a group.
    fn shape(b: &Batch) -> (String, u64, Vec<u64>) {
        let ids = b.entries.iter().map(|e| e.id.ms).collect();
        (b.event.clone(), b.after.ms, ids)
    }

    #[test]
    fn merges_only_batches_read_one_after_the_other_in_turns() {
        let mut s = Schedule::new(100);
        let now = Instant::now();
        for b in [
            batch("a", 0, 1..=2),
            batch("b", 0, 1..=2),
            batch("a", 2, 3..=4),
            // read after a rewind: not a continuation of a's group
            batch("a", 0, 1..=4),
            batch("a", 4, 5..=5),
        ] {
            assert_eq!(s.admit(b), Admitted::Queued);
        }
        let g = s.next(now).map(|g| shape(&g));
        assert_eq!(g, Some(("a".into(), 0, vec![1, 2, 3, 4])));
        assert_eq!(s.succeeded("a").map(|f| f.attempts), None);
        let g = s.next(now).map(|g| shape(&g));
        assert_eq!(g, Some(("b".into(), 0, vec![1, 2])));
        s.succeeded("b");
        let g = s.next(now).map(|g| shape(&g));
        assert_eq!(g, Some(("a".into(), 0, vec![1, 2, 3, 4, 5])));
        s.succeeded("a");
        assert!(s.next(now).is_none());
        assert_eq!((s.next_due(now), s.healthy_entries()), (None, 0));
    }

    #[test]
    fn a_failing_event_waits_its_backoff_while_the_others_go_on() {
        let mut s = Schedule::new(100);
        let t0 = Instant::now();
        s.admit(batch("stuck", 0, 1..=3));
        s.admit(batch("ok", 0, 1..=1));
        let g = s.next(t0).expect("stuck's turn");
        let f = s.failed(g, t0, 0.0);
        assert_eq!(f.attempts, 1);
        assert!(f.retry_at > t0);
        // its entries are its own: they hold back no one
        assert_eq!(s.healthy_entries(), 1);
        // while it waits, a batch of it is handed back, to be read again
        // after what it holds; the other event is written
        let more = s.admit(batch("stuck", 3, 4..=6));
        assert_eq!(
            more,
            Admitted::Dropped {
                rewind: StreamId::new(3, 0)
            }
        );
        let g = s.next(t0).map(|g| shape(&g));
        assert_eq!(g, Some(("ok".into(), 0, vec![1])));
        s.succeeded("ok");
        s.admit(batch("ok", 1, 2..=2));
        assert_eq!(s.next(t0).map(|g| g.event), Some("ok".into()));
        s.succeeded("ok");
        assert!(s.next(t0).is_none(), "stuck waits");
        assert_eq!(s.next_due(t0), Some(f.retry_at));
        // once due, the same group again, from the same place
        let g = s.next(f.retry_at).map(|g| shape(&g));
        assert_eq!(g, Some(("stuck".into(), 0, vec![1, 2, 3])));
        let ended = s.succeeded("stuck").map(|f| f.attempts);
        assert_eq!(ended, Some(1));
        assert_eq!(s.admit(batch("stuck", 3, 4..=6)), Admitted::Queued);
    }

    #[test]
    fn the_backoff_grows_and_a_long_run_is_called_stuck_once() {
        let mut s = Schedule::new(100);
        let t0 = Instant::now();
        s.admit(batch("e", 0, 1..=1));
        let (mut waits, mut stuck_at) = (Vec::new(), Vec::new());
        let mut now = t0;
        for _ in 0..14 {
            let g = s.next(now).expect("due");
            let f = s.failed(g, now, 1.0);
            waits.push(f.retry_at.duration_since(now).as_millis());
            if f.now_stuck {
                stuck_at.push(f.attempts);
            }
            now = f.retry_at;
        }
        assert_eq!(&waits[..7], [100, 200, 400, 800, 1600, 3200, 5000]);
        assert_eq!(stuck_at.len(), 1, "{stuck_at:?}");
        // the first attempt at or after 30 s of failing (31.3 s)
        assert_eq!(stuck_at, [12]);
    }

    #[test]
    fn an_untried_group_keeps_its_place_and_state() {
        let mut s = Schedule::new(2);
        let t0 = Instant::now();
        s.admit(batch("e", 0, 1..=2));
        s.admit(batch("e", 2, 3..=3));
        let g = s.next(t0).expect("turn");
        assert_eq!(shape(&g).2, [1, 2], "max_merge entries");
        s.put_back(g);
        assert_eq!(s.healthy_entries(), 3);
        assert_eq!(s.next(t0).map(|g| shape(&g).2), Some(vec![1, 2]));
    }
}
