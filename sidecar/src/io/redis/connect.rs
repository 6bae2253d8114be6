//! Connecting to Redis, whatever the URL names: one server, the master a
//! set of sentinels names ([`super::sentinel`]), or a Redis Cluster
//! ([`super::cluster`]). [`Conn`] is the connection every thread and admin
//! command talks through.

use std::time::Duration;

use redis::cluster::ClusterConnection;
use redis::{Connection, ConnectionLike, RedisResult};

use super::cluster::connect_cluster;
use super::node::connect_node;
use super::sentinel::{connect_master, Guarded};

/// Opens a plain connection with bounded connect and I/O timeouts; for a
/// Sentinel URL, to the master the sentinels name (see [`Conn::open`] for
/// a connection that also stops at a failover).
pub fn connect(url: &str, io_timeout: Duration) -> RedisResult<Connection> {
    if conn::sentinel::is_sentinel_url(url) {
        return connect_master(url, io_timeout).map(Guarded::into_inner);
    }
    connect_node(url, io_timeout)
}

/// A connection to a single Redis, to the master of a Sentinel URL, or to
/// a Redis Cluster. In cluster mode every command is routed by its key
/// (following `MOVED`/`ASK` and topology changes), so a multi-key command
/// must keep its keys in one slot.
pub enum Conn {
    /// One server.
    Single(Connection),
    /// The master the sentinels name; unusable once they name another.
    Sentinel(Box<Guarded>),
    /// A cluster, reached through any of its nodes.
    Cluster(Box<ClusterConnection>),
}

impl Conn {
    /// Connects to `url`, as a cluster client when `cluster` is set.
    pub fn open(url: &str, io_timeout: Duration, cluster: bool) -> RedisResult<Conn> {
        if conn::sentinel::is_sentinel_url(url) {
            return connect_master(url, io_timeout).map(|g| Conn::Sentinel(Box::new(g)));
        }
        match cluster {
            true => connect_cluster(url, io_timeout).map(|c| Conn::Cluster(Box::new(c))),
            false => connect_node(url, io_timeout).map(Conn::Single),
        }
    }

    /// The connection for `Cmd::query`.
    pub fn as_dyn(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Conn::Single(c) => c,
            Conn::Sentinel(c) => c.as_mut(),
            Conn::Cluster(c) => c.as_mut(),
        }
    }
}

/// True if the server at `url` runs with `cluster-enabled yes`.
pub fn detect_cluster(url: &str) -> RedisResult<bool> {
    let mut c = connect(url, Duration::from_secs(5))?;
    let info: String = redis::cmd("INFO").arg("cluster").query(&mut c)?;
    Ok(info.lines().any(|l| l.trim() == "cluster_enabled:1"))
}
