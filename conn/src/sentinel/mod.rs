//! Redis Sentinel: wherever a Redis URL is accepted, a Sentinel URL works
//! too (`redis+sentinel://[user:password@]host:port[,host:port...]/<master-name>`,
//! `rediss+sentinel://` for TLS).
//!
//! - [`url`]: the URL, parsed in one place (pure).
//! - [`lookup`]: asking the sentinels (async, bounded): the master and a
//!   replica through the `redis` crate's Sentinel client, and what it does
//!   not offer (one sentinel's answer, `CKQUORUM`, `+switch-master`).
//! - [`watch`]: the thread that keeps the current master for synchronous
//!   code (the sidecar), follows `+switch-master` and re-asks on demand.
//! - [`SentinelArgs`]: the sentinels' own credentials (`--sentinel-user`,
//!   `--sentinel-password`).

pub mod lookup;
pub mod url;
pub mod watch;

use clap::Args;

pub use lookup::Lookup;
pub use url::{is_sentinel_url, Addr, SentinelAuth, SentinelUrl};
pub use watch::{switches, watcher, watchers, Health, Watcher};

/// The sentinels' own ACL credentials (global: every subcommand takes
/// them). The data nodes' credentials are in the Sentinel URL.
#[derive(Args, Debug, Default, Clone)]
pub struct SentinelArgs {
    /// ACL user for the sentinels themselves (a Sentinel URL's credentials are the data nodes')
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_SENTINEL_USER",
        value_name = "USER"
    )]
    pub sentinel_user: Option<String>,
    /// Password for the sentinels themselves (requirepass or --sentinel-user's)
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_SENTINEL_PASSWORD",
        hide_env_values = true,
        value_name = "PASSWORD"
    )]
    pub sentinel_password: Option<String>,
}

impl SentinelArgs {
    /// The credentials given (empty values count as none).
    pub fn auth(&self) -> SentinelAuth {
        let some = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
        SentinelAuth {
            user: some(&self.sentinel_user),
            password: some(&self.sentinel_password),
        }
    }
}
