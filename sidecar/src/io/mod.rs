//! The sidecar's I/O layer, above [`crate::model`]: Redis ([`redis`]: keys,
//! streams, cluster routing, reads of an event), MySQL ([`mysql`]: connect,
//! migrate, the queries every layer above shares), the Prometheus endpoint
//! ([`metrics`]), retry pacing ([`backoff`]) and the verification rounds
//! the threads signal each other by ([`rounds`]). TLS settings come from
//! the `conn` crate (`ticketgate-conn`).

pub mod backoff;
pub mod metrics;
pub mod mysql;
pub mod redis;
pub mod rounds;
