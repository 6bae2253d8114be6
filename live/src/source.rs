//! Redis I/O of ticketgate-live: one connection shared by every poller — a
//! multiplexed connection to a single server (a primary or a replica) or a
//! cluster connection when the node given says `cluster_enabled:1` — opened
//! lazily, dropped on a connection error and reopened with exponential
//! backoff, so a Redis restart costs a few failed reads, never a crash.
//! Given a Sentinel URL, each (re)connect asks the sentinels for a replica
//! and falls back to the master when none answers ([`conn::sentinel`]).

use std::time::{Duration, Instant};

use conn::sentinel::{Lookup, SentinelAuth, SentinelUrl};
use conn::RedisTls;
use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::cluster_read_routing::RandomReplicaStrategy;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{AsyncConnectionConfig, RedisError, Value};
use tokio::sync::Mutex;

use crate::metrics::Metrics;

/// Timeout of one connection attempt and of one command.
const TIMEOUT: Duration = Duration::from_secs(2);
/// First and largest wait between reconnection attempts.
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// Why a read gave no stock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// `-NOEVENT`: Redis answered, the event does not exist.
    Missing,
    /// Redis is unreachable or answered with another error.
    Unavailable(String),
}

#[derive(Clone)]
enum Conn {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl Conn {
    /// Runs `cmd`; in a cluster, a command with a `key` goes to a replica of
    /// the key's shard when it has one (module commands are not on the
    /// client's list of read-only commands, so it would pick the primary).
    async fn query(&mut self, cmd: &redis::Cmd, key: Option<&str>) -> Result<Value, RedisError> {
        match (self, key) {
            (Conn::Single(c), _) => c.req_packed_command(cmd).await,
            (Conn::Cluster(c), None) => c.req_packed_command(cmd).await,
            (Conn::Cluster(c), Some(key)) => {
                let route = Route::with_key(key, SlotAddr::ReplicaOptional);
                let routing = RoutingInfo::SingleNode(SingleNodeRoutingInfo::SpecificNode(route));
                c.route_command(cmd.clone(), routing).await
            }
        }
    }
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    failures: u32,
    retry_at: Option<Instant>,
}

/// The Redis every poller reads from.
pub struct Source {
    url: String,
    /// CA and client certificate for a `rediss://` URL (none: the URL alone,
    /// and for TLS the built-in web PKI roots).
    tls: RedisTls,
    /// The sentinels, for a Sentinel URL.
    sentinels: Option<Lookup>,
    state: Mutex<State>,
    metrics: Metrics,
}

/// The wait before reconnection attempt `failures` (1-based): doubling from
/// [`BACKOFF_MIN`], capped at [`BACKOFF_MAX`].
pub fn backoff(failures: u32) -> Duration {
    let factor = 1u32 << failures.saturating_sub(1).min(16);
    BACKOFF_MIN.saturating_mul(factor).min(BACKOFF_MAX)
}

impl Source {
    /// A source for `url` (`auth`: the sentinels' own credentials, for a
    /// Sentinel URL); nothing is connected until the first read.
    pub fn new(
        url: String,
        tls: RedisTls,
        auth: SentinelAuth,
        metrics: Metrics,
    ) -> Result<Source, String> {
        let sentinels = match conn::sentinel::is_sentinel_url(&url) {
            true => Some(Lookup::new(SentinelUrl::parse(&url)?, auth, tls.certs())),
            false => None,
        };
        Ok(Source {
            url,
            tls,
            sentinels,
            state: Mutex::new(State::default()),
            metrics,
        })
    }

    /// `TICKET.STATUS event`: the raw reply, routed by the event in a cluster.
    pub async fn status(&self, event: &str) -> Result<Value, ReadError> {
        self.read("TICKET.STATUS", event).await
    }

    /// `command event` (a read-only module command: `TICKET.STATUS`,
    /// `TICKET.SEATMAP`, `TICKET.LAYOUT`): the raw reply, routed by the
    /// event in a cluster.
    pub async fn read(&self, command: &str, event: &str) -> Result<Value, ReadError> {
        let mut cmd = redis::cmd(command);
        cmd.arg(event);
        self.metrics.redis_reads.inc();
        let result = self.run(&cmd, Some(event)).await;
        if !matches!(result, Ok(_) | Err(ReadError::Missing)) {
            self.metrics.redis_errors.inc();
        }
        result
    }

    /// True when Redis answers `PING`.
    pub async fn ping(&self) -> bool {
        self.run(&redis::cmd("PING"), None).await.is_ok()
    }

    async fn run(&self, cmd: &redis::Cmd, key: Option<&str>) -> Result<Value, ReadError> {
        let mut conn = self.connection().await?;
        match conn.query(cmd, key).await {
            Ok(Value::ServerError(e)) if e.code() == "NOEVENT" => Err(ReadError::Missing),
            Ok(Value::ServerError(e)) => Err(ReadError::Unavailable(e.to_string())),
            Ok(v) => Ok(v),
            Err(e) if e.code() == Some("NOEVENT") => Err(ReadError::Missing),
            Err(e) => {
                if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
                    self.forget(&e.to_string()).await;
                }
                Err(ReadError::Unavailable(e.to_string()))
            }
        }
    }

    /// The open connection, or a new one unless the backoff says wait.
    async fn connection(&self) -> Result<Conn, ReadError> {
        let mut st = self.state.lock().await;
        if let Some(c) = &st.conn {
            return Ok(c.clone());
        }
        if st.retry_at.is_some_and(|t| Instant::now() < t) {
            return Err(ReadError::Unavailable("reconnecting to redis".into()));
        }
        match self.connect().await {
            Ok(c) => {
                if st.failures > 0 {
                    log::info!("redis is back after {} failed attempts", st.failures);
                }
                *st = State {
                    conn: Some(c.clone()),
                    ..State::default()
                };
                Ok(c)
            }
            Err(e) => {
                st.failures += 1;
                st.retry_at = Some(Instant::now() + backoff(st.failures));
                self.metrics.redis_errors.inc();
                log::warn!("cannot connect to redis (attempt {}): {e}", st.failures);
                Err(ReadError::Unavailable(e.to_string()))
            }
        }
    }

    /// Drops the connection after an I/O error; the next read reconnects.
    async fn forget(&self, why: &str) {
        let mut st = self.state.lock().await;
        if st.conn.take().is_some() {
            log::warn!("redis connection lost: {why}");
            st.failures = 1;
            st.retry_at = Some(Instant::now() + backoff(1));
        }
    }
}

impl Source {
    /// Connects to the URL, or for a Sentinel URL to a replica the
    /// sentinels list, else their master.
    async fn connect(&self) -> Result<Conn, RedisError> {
        let Some(sentinels) = &self.sentinels else {
            return connect(&self.url, &self.tls).await;
        };
        let node = match sentinels.replica().await {
            Ok(addr) => {
                log::info!("reading the replica {addr} the sentinels list");
                addr
            }
            Err(e) => {
                let addr = sentinels.master().await.map_err(|m| {
                    RedisError::from((
                        redis::ErrorKind::Io,
                        "no replica and no master from the sentinels",
                        format!("replica: {e}; master: {m}"),
                    ))
                })?;
                log::warn!("no replica from the sentinels ({e}); reading the master {addr}");
                addr
            }
        };
        connect(&sentinels.url.node_url(&node), &self.tls).await
    }
}

/// Connects to `url`: asks the node whether it is part of a cluster and
/// opens a cluster connection (reading from replicas) if so.
async fn connect(url: &str, tls: &RedisTls) -> Result<Conn, RedisError> {
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(TIMEOUT))
        .set_response_timeout(Some(TIMEOUT));
    let client = tls.client(url)?;
    let mut single = client
        .get_multiplexed_async_connection_with_config(&config)
        .await?;
    let info: String = redis::cmd("INFO")
        .arg("cluster")
        .query_async(&mut single)
        .await?;
    if !is_cluster(&info) {
        return Ok(Conn::Single(single));
    }
    let mut builder = redis::cluster::ClusterClient::builder(vec![url.to_owned()])
        .read_routing_strategy(RandomReplicaStrategy)
        .connection_timeout(TIMEOUT)
        .response_timeout(TIMEOUT)
        .retries(2);
    if let Some(certs) = tls.certs() {
        builder = builder.certs(certs);
    }
    Ok(Conn::Cluster(
        builder.build()?.get_async_connection().await?,
    ))
}

/// True when an `INFO cluster` reply says cluster mode is on.
pub fn is_cluster(info: &str) -> bool {
    info.lines().any(|l| l.trim() == "cluster_enabled:1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        assert_eq!(backoff(1), Duration::from_millis(100));
        assert_eq!(backoff(2), Duration::from_millis(200));
        assert_eq!(backoff(4), Duration::from_millis(800));
        assert_eq!(backoff(7), BACKOFF_MAX);
        assert_eq!(backoff(u32::MAX), BACKOFF_MAX);
    }

    #[test]
    fn cluster_mode_is_read_from_info() {
        assert!(is_cluster("# Cluster\r\ncluster_enabled:1\r\n"));
        assert!(!is_cluster("# Cluster\r\ncluster_enabled:0\r\n"));
        assert!(!is_cluster(""));
    }
}
