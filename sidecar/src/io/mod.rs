//! The sidecar's I/O layer, above [`crate::model`]: Redis ([`redis`]: one
//! file per job, from connecting to reading and trimming the logs), MySQL
//! ([`mysql`]: connect, migrate, the queries every layer above shares),
//! the Prometheus endpoint ([`metrics`]), retry pacing ([`backoff`]) and
//! the verification rounds the threads signal each other by ([`rounds`]).

pub mod backoff;
pub mod metrics;
pub mod mysql;
pub mod redis;
pub mod rounds;
