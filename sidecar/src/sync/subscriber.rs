//! The subscriber thread: `SUBSCRIBE ticket:events`, forwarding every event
//! id the module announces at `TICKET.INIT` (and at a restore's `COMMIT`)
//! to the reader. It reconnects with backoff and asks for a rescan after
//! every (re)subscription: events may have been created while it was not
//! listening.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{Sender, TrySendError};

use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::metrics::Metrics;
use crate::io::redis::connect::connect;
use crate::sync::reader::Discovery;
use protocol::keys::{valid_event, EVENTS_CHANNEL};

/// The subscriber: where it listens and whom it tells.
pub struct Subscriber {
    pub url: String,
    /// Event ids, to the reader.
    pub tx: Sender<String>,
    /// The flags it shares with the reader.
    pub discovery: Discovery,
    pub metrics: Arc<Metrics>,
    pub stop: Arc<AtomicBool>,
}

impl Subscriber {
    /// Listens until `stop` is set.
    pub fn run(self) {
        let mut backoff = Backoff::standard();
        while !self.stop.load(Ordering::Relaxed) {
            let mut conn = match connect(&self.url, Duration::from_secs(5)) {
                Ok(c) => c,
                Err(e) => {
                    self.failed(&format!("cannot connect to Redis: {e}"), &mut backoff);
                    continue;
                }
            };
            let mut ps = conn.as_pubsub();
            if let Err(e) = ps
                .subscribe(EVENTS_CHANNEL)
                .and_then(|_| ps.set_read_timeout(Some(Duration::from_millis(250))))
            {
                self.failed(&format!("SUBSCRIBE failed: {e}"), &mut backoff);
                continue;
            }
            log::debug!("subscribed to {}", EVENTS_CHANNEL);
            backoff.reset();
            self.discovery.rescan.store(true, Ordering::Relaxed);
            self.discovery.subscribed.store(true, Ordering::Relaxed);
            self.listen(&mut ps);
        }
    }

    fn failed(&self, what: &str, backoff: &mut Backoff) {
        log::warn!("subscriber: {what}");
        self.metrics.error("redis");
        sleep_unless(&self.stop, backoff.next_delay());
    }

    /// Forwards messages until the connection is lost or `stop` is set.
    fn listen(&self, ps: &mut redis::PubSub<'_>) {
        while !self.stop.load(Ordering::Relaxed) {
            match ps.get_message() {
                Ok(msg) => self.forward(msg.get_payload_bytes()),
                Err(e) if e.is_timeout() => {}
                Err(e) => {
                    log::warn!("subscriber: connection lost: {e}");
                    self.metrics.error("redis");
                    return;
                }
            }
        }
    }

    /// Hands one announced event id to the reader (a full queue: rescan).
    fn forward(&self, payload: &[u8]) {
        let event = String::from_utf8_lossy(payload).into_owned();
        if !valid_event(&event) {
            log::warn!("ignoring invalid event id {event:?} on {}", EVENTS_CHANNEL);
            return;
        }
        log::debug!("discovered event {event} by notification");
        if let Err(TrySendError::Full(_)) = self.tx.try_send(event) {
            self.discovery.rescan.store(true, Ordering::Relaxed);
        }
    }
}
