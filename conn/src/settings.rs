//! The process-wide connection settings ([`Tls`]): installed once at
//! startup, read by every connection the process opens later.

use std::sync::OnceLock;

#[cfg(feature = "mysql")]
use crate::mysql::MysqlTls;
use crate::redis::RedisTls;
use crate::sentinel::SentinelAuth;

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
