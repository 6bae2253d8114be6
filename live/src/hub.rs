//! The fan-out: one poller task per watched event, started by its first
//! subscriber and ended at the first tick after its last one left. Each
//! tick costs Redis what its [`Reader`] reads once (one `TICKET.STATUS` for
//! the stock, one `TICKET.SEATMAP` for the seat map), whatever the number of
//! subscribers; the result goes out through a `tokio::sync::watch` channel,
//! which holds only the newest value, so a slow subscriber skips to it
//! instead of queueing messages.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::watch;
use tokio::time::MissedTickBehavior;

use crate::feed::{next_feed, Feed, Poll};
use crate::metrics::Metrics;
use crate::source::{ReadError, Source};
use crate::stock::{next_id, parse_status};

/// What a hub's pollers do: the value published before the first read, and
/// one tick's read and decision.
pub trait Reader: Send + Sync + 'static {
    /// The value subscribers watch (cheap to clone: shared parts in `Arc`s).
    type Feed: Clone + Send + Sync + 'static;
    /// What a poller remembers between ticks besides the published value.
    type Memory: Default + Send + 'static;

    /// The value before any read has finished.
    fn pending(&self) -> Self::Feed;

    /// Reads `event` once and returns what to publish (None: nothing).
    fn tick(
        &self,
        event: &str,
        current: &Self::Feed,
        memory: &mut Self::Memory,
    ) -> impl Future<Output = Option<Self::Feed>> + Send;
}

type Feeds<F> = HashMap<String, Arc<watch::Sender<F>>>;

/// Every watched event's feed of one kind.
pub struct Hub<R: Reader> {
    reader: R,
    metrics: Metrics,
    tick: Duration,
    feeds: Mutex<Feeds<R::Feed>>,
}

/// Unix time in ms (0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

impl<R: Reader> Hub<R> {
    /// A hub whose pollers call `reader` once per `tick`.
    pub fn new(reader: R, metrics: Metrics, tick: Duration) -> Arc<Hub<R>> {
        Arc::new(Hub {
            reader,
            metrics,
            tick,
            feeds: Mutex::new(HashMap::new()),
        })
    }

    fn feeds(&self) -> MutexGuard<'_, Feeds<R::Feed>> {
        self.feeds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A receiver of `event`'s feed, starting its poller if none runs.
    pub fn subscribe(self: &Arc<Self>, event: &str) -> watch::Receiver<R::Feed> {
        let mut feeds = self.feeds();
        if let Some(tx) = feeds.get(event) {
            return tx.subscribe();
        }
        let (tx, rx) = watch::channel(self.reader.pending());
        let tx = Arc::new(tx);
        feeds.insert(event.to_owned(), tx.clone());
        // A gauge shared by the stock and the seat-map hubs: counted, not set.
        self.metrics.events_watched.inc();
        tokio::spawn(self.clone().poll(event.to_owned(), tx));
        rx
    }

    /// Removes `event`'s feed if nobody receives it any more. Runs under
    /// the lock [`Hub::subscribe`] takes, so no subscriber can join a
    /// poller that is about to end.
    fn release_if_unwatched(&self, event: &str, tx: &watch::Sender<R::Feed>) -> bool {
        let mut feeds = self.feeds();
        if tx.receiver_count() > 0 {
            return false;
        }
        feeds.remove(event);
        self.metrics.events_watched.dec();
        true
    }

    async fn poll(self: Arc<Self>, event: String, tx: Arc<watch::Sender<R::Feed>>) {
        let mut ticker = tokio::time::interval(self.tick);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut memory = R::Memory::default();
        log::debug!("watching {event}");
        loop {
            ticker.tick().await;
            if self.release_if_unwatched(&event, &tx) {
                log::debug!("no one watches {event} any more");
                return;
            }
            // A clone, so no borrow of the channel is held across the read.
            let current = tx.borrow().clone();
            if let Some(feed) = self.reader.tick(&event, &current, &mut memory).await {
                tx.send_replace(feed);
            }
        }
    }
}

/// The stock poller: one `TICKET.STATUS` a tick, published by [`next_feed`].
pub struct StockReader(pub Arc<Source>);

impl Reader for StockReader {
    type Feed = Feed;
    type Memory = Poll;

    fn pending(&self) -> Feed {
        Feed::Pending
    }

    async fn tick(&self, event: &str, current: &Feed, memory: &mut Poll) -> Option<Feed> {
        let read = match self.0.status(event).await {
            Ok(reply) => parse_status(event, &reply, now_ms()).map_err(|e| {
                log::warn!("{event}: {e}");
                ReadError::Unavailable(e)
            }),
            Err(e) => Err(e),
        };
        let (publish, next) = next_feed(current, *memory, read, || next_id(now_ms()));
        *memory = next;
        publish
    }
}

/// The stock hub.
pub type StockHub = Hub<StockReader>;
