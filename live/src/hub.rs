//! The fan-out: one poller task per watched event, started by its first
//! subscriber and ended at the first tick after its last one left. Each
//! tick costs Redis one `TICKET.STATUS`, whatever the number of
//! subscribers; the result goes out through a `tokio::sync::watch` channel,
//! which holds only the newest value, so a slow subscriber skips to it
//! instead of queueing messages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tokio::time::MissedTickBehavior;

use crate::feed::{next_feed, Feed, Poll};
use crate::metrics::Metrics;
use crate::source::{ReadError, Source};
use crate::stock::{next_id, parse_status, Stock};

type Feeds = HashMap<String, Arc<watch::Sender<Feed>>>;

/// Every watched event's feed.
pub struct Hub {
    source: Arc<Source>,
    metrics: Metrics,
    tick: Duration,
    feeds: Mutex<Feeds>,
}

/// Unix time in ms (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl Hub {
    /// A hub whose pollers read `source` once per `tick`.
    pub fn new(source: Arc<Source>, metrics: Metrics, tick: Duration) -> Arc<Hub> {
        Arc::new(Hub {
            source,
            metrics,
            tick,
            feeds: Mutex::new(HashMap::new()),
        })
    }

    fn feeds(&self) -> MutexGuard<'_, Feeds> {
        self.feeds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A receiver of `event`'s feed, starting its poller if none runs.
    pub fn subscribe(self: &Arc<Self>, event: &str) -> watch::Receiver<Feed> {
        let mut feeds = self.feeds();
        if let Some(tx) = feeds.get(event) {
            return tx.subscribe();
        }
        let (tx, rx) = watch::channel(Feed::Pending);
        let tx = Arc::new(tx);
        feeds.insert(event.to_owned(), tx.clone());
        self.metrics.events_watched.set(feeds.len() as i64);
        tokio::spawn(self.clone().poll(event.to_owned(), tx));
        rx
    }

    /// Removes `event`'s feed if nobody receives it any more. Runs under
    /// the lock [`Hub::subscribe`] takes, so no subscriber can join a
    /// poller that is about to end.
    fn release_if_unwatched(&self, event: &str, tx: &watch::Sender<Feed>) -> bool {
        let mut feeds = self.feeds();
        if tx.receiver_count() > 0 {
            return false;
        }
        feeds.remove(event);
        self.metrics.events_watched.set(feeds.len() as i64);
        true
    }

    async fn poll(self: Arc<Self>, event: String, tx: Arc<watch::Sender<Feed>>) {
        let mut ticker = tokio::time::interval(self.tick);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut memory = Poll::default();
        log::debug!("watching {event}");
        loop {
            ticker.tick().await;
            if self.release_if_unwatched(&event, &tx) {
                log::debug!("no one watches {event} any more");
                return;
            }
            let read = self.read(&event).await;
            let (publish, next) = next_feed(&tx.borrow(), memory, read, || next_id(now_ms()));
            memory = next;
            if let Some(feed) = publish {
                tx.send_replace(feed);
            }
        }
    }

    async fn read(&self, event: &str) -> Result<Stock, ReadError> {
        let reply = self.source.status(event).await?;
        parse_status(event, &reply, now_ms()).map_err(|e| {
            log::warn!("{event}: {e}");
            ReadError::Unavailable(e)
        })
    }
}
