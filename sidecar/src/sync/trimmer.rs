//! The trimmer thread: trims each event's log up to its committed offset
//! (`XTRIM MINID`, coalesced per event: only what MySQL has) and refreshes
//! the lag gauges from Redis every second, for every drained event, so they
//! keep growing while MySQL is down and the writers are stuck. It ends when
//! every writer is gone, after a last trim.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use crate::batch::journal;
use crate::io::backoff::Backoff;
use crate::io::metrics::Metrics;
use crate::io::redis::connect::Conn;
use crate::io::redis::trim::{lag, lag_all};
use crate::model::time::now_ms;
use protocol::StreamId;

/// Attempts at the last trims after the writers are gone.
const TRIES_AFTER_CLOSE: u32 = 3;

/// The trimmer and the trims it still has to do.
pub struct Trimmer {
    url: String,
    cluster: bool,
    rx: Receiver<(String, StreamId)>,
    /// The drained events (from the reader), for the lag gauges.
    known: Arc<Mutex<Vec<String>>>,
    metrics: Arc<Metrics>,
    /// The highest committed offset per event, not trimmed yet.
    pending: HashMap<String, StreamId>,
    conn: Option<Conn>,
    backoff: Backoff,
    /// False once every writer is gone.
    open: bool,
    failures_after_close: u32,
    last_lag: Option<Instant>,
}

impl Trimmer {
    /// A trimmer of the committed offsets on `rx`.
    pub fn new(
        url: String,
        cluster: bool,
        rx: Receiver<(String, StreamId)>,
        known: Arc<Mutex<Vec<String>>>,
        metrics: Arc<Metrics>,
    ) -> Trimmer {
        Trimmer {
            url,
            cluster,
            rx,
            known,
            metrics,
            pending: HashMap::new(),
            conn: None,
            backoff: Backoff::standard(),
            open: true,
            failures_after_close: 0,
            last_lag: None,
        }
    }

    /// Trims until the writers are gone and nothing is pending.
    pub fn run(mut self) {
        loop {
            if self.open {
                self.receive();
            }
            if !self.pending.is_empty() {
                self.trim_pending();
                if !self.pending.is_empty() {
                    if self.give_up() {
                        return;
                    }
                    thread::sleep(self.backoff.next_delay());
                }
            }
            if !self.open && self.pending.is_empty() {
                return;
            }
            if self.open
                && self
                    .last_lag
                    .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
            {
                self.last_lag = Some(Instant::now());
                self.refresh_lag();
            }
        }
    }

    /// Takes the committed offsets queued (waiting up to 100 ms for one).
    fn receive(&mut self) {
        match self.rx.recv_timeout(Duration::from_millis(100)) {
            Ok((e, id)) => {
                self.note(e, id);
                while let Ok((e, id)) = self.rx.try_recv() {
                    self.note(e, id);
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => self.open = false,
        }
    }

    fn note(&mut self, event: String, id: StreamId) {
        let slot = self.pending.entry(event).or_insert(id);
        *slot = (*slot).max(id);
    }

    /// Trims every pending event (and reads its lag); a failure drops the
    /// connection and leaves the rest pending.
    fn trim_pending(&mut self) {
        if self.conn.is_none() {
            match Conn::open(&self.url, Duration::from_secs(5), self.cluster) {
                Ok(c) => self.conn = Some(c),
                Err(e) => log::warn!("trimmer: cannot connect to Redis: {e}"),
            }
        }
        let Some(c) = self.conn.as_mut() else { return };
        let events: Vec<(String, StreamId)> = self
            .pending
            .iter()
            .map(|(e, id)| (e.clone(), *id))
            .collect();
        for (event, offset) in events {
            // Names the anchor in Redis before trimming up to it.
            let digest = journal::digest_of(&event, offset);
            let res = journal::trim(c.as_dyn(), &event, offset, digest.as_deref())
                .and_then(|_| lag(c.as_dyn(), &event, now_ms()));
            match res {
                Ok((len, age)) => {
                    self.metrics.set_lag(&event, len, age);
                    self.pending.remove(&event);
                }
                Err(e) => {
                    log::warn!("trimmer: XTRIM {event}: {e}");
                    self.metrics.error("redis");
                    self.conn = None;
                    return;
                }
            }
        }
        self.backoff.reset();
    }

    /// After the writers are gone, a few more tries, then the next run
    /// trims what is left; true when giving up.
    fn give_up(&mut self) -> bool {
        if self.open {
            return false;
        }
        self.failures_after_close += 1;
        if self.failures_after_close <= TRIES_AFTER_CLOSE {
            return false;
        }
        log::warn!(
            "trimmer: giving up on {} trims at exit; the next run trims them",
            self.pending.len()
        );
        true
    }

    /// Lag gauges straight from Redis, for every drained event.
    fn refresh_lag(&mut self) {
        let names: Vec<String> = self.known.lock().map(|k| k.clone()).unwrap_or_default();
        if self.conn.is_none() && !names.is_empty() {
            self.conn = Conn::open(&self.url, Duration::from_secs(5), self.cluster).ok();
        }
        let Some(c) = self.conn.as_mut() else { return };
        for chunk in names.chunks(256) {
            match lag_all(c.as_dyn(), chunk, now_ms(), !self.cluster) {
                Ok(lags) => {
                    for (e, (len, age)) in chunk.iter().zip(lags) {
                        self.metrics.set_lag(e, len, age);
                    }
                }
                Err(e) => {
                    log::warn!("trimmer: lag query failed: {e}");
                    self.conn = None;
                    return;
                }
            }
        }
    }
}
