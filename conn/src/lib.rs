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
//! - [`install`] / [`installed`]: the process-wide settings, read once at
//!   startup, so no connection opened later can forget them.
//!
//! The TLS work itself is done by the `redis` (`tls-rustls`) and `mysql`
//! (`rustls-tls-ring`) crates: the server certificate is always verified
//! against the given CA (or the built-in web PKI roots without one),
//! including its host name.

pub mod hint;
#[cfg(feature = "mysql")]
pub mod mysql;
pub mod redis;
pub mod sentinel;

use std::sync::OnceLock;

pub use crate::hint::{hint, Hint, Server};
#[cfg(feature = "mysql")]
pub use crate::mysql::{MysqlTls, MysqlTlsArgs};
pub use crate::redis::{RedisTls, RedisTlsArgs};
pub use crate::sentinel::{SentinelArgs, SentinelAuth};

/// The loaded connection settings of a process: TLS, and the sentinels'
/// credentials.
#[derive(Default)]
pub struct Tls {
    /// Certificates for `rediss://` connections.
    pub redis: RedisTls,
    /// The sentinels' own user and password (for a Sentinel URL).
    pub sentinel: SentinelAuth,
    /// The CA of the MySQL server.
    #[cfg(feature = "mysql")]
    pub mysql: MysqlTls,
}

static INSTALLED: OnceLock<Tls> = OnceLock::new();

/// Makes `tls` the settings of every connection the process opens from now
/// on; call once, at startup, before connecting.
pub fn install(tls: Tls) -> Result<(), String> {
    INSTALLED
        .set(tls)
        .map_err(|_| "TLS settings initialised twice".to_owned())
}

/// The installed settings (none: plain connections, web PKI roots for
/// `rediss://`).
pub fn installed() -> &'static Tls {
    INSTALLED.get_or_init(Tls::default)
}

/// Reads `path`, the file of `flag`, with an error naming both.
fn read_file(path: &std::path::Path, flag: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {flag} {}: {e}", path.display()))
}
