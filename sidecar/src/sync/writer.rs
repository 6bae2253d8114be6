//! The writer threads: each applies the batches of its events, each
//! event's in log order, so the reader's cursor never runs past an
//! unapplied entry. An event always hashes to the same writer. Its
//! [`Schedule`] keeps a queue per event and gives them turns, merging an
//! event's batches read one after the other into one transaction;
//! `batch::commit_batch` is the one place a batch meets MySQL. A batch
//! that fails is retried with its event's own backoff while the writer
//! goes on with the other events (a stuck event is logged and in the
//! metrics: `ticketgate_stuck_events`, `..._event_stuck_seconds`); a batch
//! of a failing event that arrives meanwhile goes back to the reader as a
//! rewind, as does a refused batch (a quarantined event); a committed
//! offset goes to the trimmer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::batch::commit_batch;
use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::metrics::Metrics;
use crate::io::mysql as db;
use crate::model::Outcome;
use crate::sync::schedule::{Admitted, Schedule, Streak};
use protocol::StreamId;

pub use crate::sync::schedule::Batch;

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

    /// Applies batches until `stop` is set or the reader is gone.
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
        for (op, k) in &o.applied {
            m.applied(op, *k);
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
