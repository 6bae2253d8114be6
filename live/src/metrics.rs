//! Prometheus metrics of ticketgate-live (the `prometheus` crate's registry
//! and text encoder), served on `/metrics`:
//!
//! - `ticketgate_live_subscribers` — open SSE streams (stock and seat map);
//! - `ticketgate_live_events_watched` — pollers (an event's stock and its
//!   seat map count one each);
//! - `ticketgate_live_messages_sent_total` — SSE messages written (not heartbeats);
//! - `ticketgate_live_redis_reads_total` — `TICKET.STATUS`, `TICKET.SEATMAP`
//!   and `TICKET.LAYOUT` calls;
//! - `ticketgate_live_redis_errors_total` — failed reads and connection attempts.

use prometheus::{Encoder, IntCounter, IntGauge, Registry, TextEncoder};

/// The process's series; cheap to clone (every series is shared).
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    pub subscribers: IntGauge,
    pub events_watched: IntGauge,
    pub messages_sent: IntCounter,
    pub redis_reads: IntCounter,
    pub redis_errors: IntCounter,
}

impl Metrics {
    /// A registry holding every series at 0.
    pub fn new() -> Result<Metrics, prometheus::Error> {
        let registry = Registry::new_custom(Some("ticketgate_live".into()), None)?;
        let gauge = |name: &str, help: &str| -> Result<IntGauge, prometheus::Error> {
            let g = IntGauge::new(name, help)?;
            registry.register(Box::new(g.clone()))?;
            Ok(g)
        };
        let counter = |name: &str, help: &str| -> Result<IntCounter, prometheus::Error> {
            let c = IntCounter::new(name, help)?;
            registry.register(Box::new(c.clone()))?;
            Ok(c)
        };
        Ok(Metrics {
            subscribers: gauge("subscribers", "Open SSE streams.")?,
            events_watched: gauge("events_watched", "Events with a poller.")?,
            messages_sent: counter("messages_sent_total", "SSE messages sent.")?,
            redis_reads: counter("redis_reads_total", "TICKET.* reads made.")?,
            redis_errors: counter("redis_errors_total", "Failed Redis reads and connects.")?,
            registry,
        })
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            log::error!("encoding metrics: {e}");
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_series() {
        let m = Metrics::new().unwrap();
        m.subscribers.set(3);
        m.messages_sent.inc_by(5);
        m.redis_reads.inc();
        let text = m.render();
        for want in [
            "ticketgate_live_subscribers 3",
            "ticketgate_live_events_watched 0",
            "ticketgate_live_messages_sent_total 5",
            "ticketgate_live_redis_reads_total 1",
            "ticketgate_live_redis_errors_total 0",
        ] {
            assert!(text.contains(want), "missing {want}\n{text}");
        }
    }
}
