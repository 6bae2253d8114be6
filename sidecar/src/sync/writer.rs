//! The writer threads: each applies the batches of its events in order,
//! retrying each until it commits (or the gate refuses it), so the reader's
//! cursor never runs past an unapplied entry. An event always hashes to
//! the same writer. Consecutive queued batches of one event are merged into
//! one transaction ([`merge`]); `batch::commit_batch` is the one place a
//! batch meets MySQL. A refused batch (a quarantined event) goes back to the
//! reader as a rewind; a committed offset goes to the trimmer.

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

/// One read of one event's log: the entries after `after`.
pub struct Batch {
    pub event: String,
    pub after: StreamId,
    pub entries: Vec<Entry>,
}

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
    conn: Option<mysql::Conn>,
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
            conn: None,
            backoff: Backoff::standard(),
        }
    }

    /// Applies batches until `stop` is set or the reader is gone.
    pub fn run(mut self) {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            let first = match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok(b) => b,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => return,
            };
            for batch in merge(first, &self.rx, self.max_merge) {
                if !self.apply(batch) {
                    return;
                }
            }
        }
    }

    /// Applies `batch`, retrying (backoff + jitter) until it commits;
    /// false when `stop` was set meanwhile.
    fn apply(&mut self, batch: Batch) -> bool {
        loop {
            if let Some(c) = self.connection() {
                let started = Instant::now();
                match commit_batch(c, &batch.event, batch.after, &batch.entries) {
                    Ok(o) => {
                        self.backoff.reset();
                        self.out.metrics.set_up("mysql", true);
                        self.out
                            .report(&batch.event, batch.entries.len(), &o, started);
                        return true;
                    }
                    Err(e) => {
                        log::warn!(
                            "writer-{}: event {}: batch not applied, will retry: {e}",
                            self.idx,
                            batch.event
                        );
                        self.out.metrics.error("mysql");
                        self.conn = None;
                    }
                }
            }
            if sleep_unless(&self.stop, self.backoff.next_delay()) {
                return false;
            }
        }
    }

    /// The connection, opened if needed (a failure is logged and counted).
    fn connection(&mut self) -> Option<&mut mysql::Conn> {
        if self.conn.is_none() {
            match db::connect(&self.url) {
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
            let _ = out
                .rewind
                .send_timeout((event.to_owned(), offset), Duration::from_secs(1));
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

/// `first` and the batches queued behind it (up to `max_merge` entries),
/// merged per event, each event's order kept. A batch joins its event's
/// latest group only when it was read right after it; one read after a
/// rewind starts a group of its own.
fn merge(first: Batch, rx: &Receiver<Batch>, max_merge: usize) -> Vec<Batch> {
    let mut groups: Vec<Batch> = Vec::new();
    let mut total = 0;
    let mut next = Some(first);
    while let Some(b) = next.take() {
        total += b.entries.len();
        let latest = groups.iter_mut().rev().find(|g| g.event == b.event);
        match latest {
            Some(g) if g.entries.last().map(|e| e.id) == Some(b.after) => {
                g.entries.extend(b.entries)
            }
            _ => groups.push(b),
        }
        if total < max_merge {
            next = rx.try_recv().ok();
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(event: &str, after: u64, ids: std::ops::RangeInclusive<u64>) -> Batch {
        let entries = ids
            .map(|ms| {
                Entry::new(
                    StreamId::new(ms, 0),
                    Ok(protocol::record::Record {
                        op: protocol::record::Op::Open,
                        at: ms as i64,
                    }),
                )
            })
            .collect();
        Batch {
            event: event.into(),
            after: StreamId::new(after, 0),
            entries,
        }
    }

    #[test]
    fn merges_only_batches_read_one_after_the_other() {
        let (tx, rx) = crossbeam_channel::bounded(8);
        for b in [
            batch("b", 0, 1..=2),
            batch("a", 2, 3..=4),
            // read after a rewind: not a continuation of a's group
            batch("a", 0, 1..=4),
            batch("a", 4, 5..=5),
        ] {
            tx.send(b).unwrap();
        }
        let groups = merge(batch("a", 0, 1..=2), &rx, 100);
        let shape: Vec<(&str, u64, Vec<u64>)> = groups
            .iter()
            .map(|g| {
                let ids = g.entries.iter().map(|e| e.id.ms).collect();
                (g.event.as_str(), g.after.ms, ids)
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("a", 0, vec![1, 2, 3, 4]),
                ("b", 0, vec![1, 2]),
                ("a", 0, vec![1, 2, 3, 4, 5]),
            ]
        );
    }
}
