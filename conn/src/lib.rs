//! `ticketgate-conn` (imported as `conn`): the TLS options of every connection ticketgate's
//! programs open — the certificate flags and their environment variables,
//! the loading and checking of the PEM files, the Redis and MySQL
//! connection builders that use them, and the hint that turns a TLS failure
//! into a sentence naming the flag to check. `ticketgate-sidecar` and
//! `ticketgate-live` both take their flags from here, so the two cannot
//! drift apart.
//!
//! - [`redis`]: `--redis-ca`, `--redis-cert`, `--redis-key` ([`RedisTlsArgs`])
//!   and the clients built with them ([`RedisTls`]).
//! - [`mysql`] (feature `mysql`): `--mysql-ca` ([`MysqlTlsArgs`], [`MysqlTls`]).
//! - [`hint`]: what a failed connection attempt says about TLS.
//! - [`sentinel`]: Sentinel URLs, the sentinels' credentials
//!   ([`SentinelArgs`]) and the watcher that follows the master.
//! - [`settings`]: [`install`] / [`installed`], the process-wide settings,
//!   read once at startup, so no connection opened later can forget them;
//!   [`files`]: reading a certificate file, with an error naming its flag.
//!
//! The TLS work itself is done by the `redis` (`tls-rustls`) and `mysql`
//! (`rustls-tls-ring`) crates: the server certificate is always verified
//! against the given CA (or the built-in web PKI roots without one),
//! including its host name.

pub mod files;
pub mod hint;
#[cfg(feature = "mysql")]
pub mod mysql;
pub mod redis;
pub mod sentinel;
pub mod settings;

pub use crate::hint::{hint, Hint, Server};
#[cfg(feature = "mysql")]
pub use crate::mysql::{MysqlTls, MysqlTlsArgs};
pub use crate::redis::{RedisTls, RedisTlsArgs};
pub use crate::sentinel::{SentinelArgs, SentinelAuth};
pub use crate::settings::{install, installed, Tls};
