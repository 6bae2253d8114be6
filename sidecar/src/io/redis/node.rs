//! One Redis server: a plain connection with bounded connect and I/O
//! timeouts and the installed TLS settings. The Sentinel and cluster
//! connections ([`super::sentinel`], [`super::connect`]) are built on it.

use std::time::Duration;

use redis::{Connection, RedisResult};

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Connects to the one server at `url`, with `io_timeout` on reads and
/// writes.
pub fn connect_node(url: &str, io_timeout: Duration) -> RedisResult<Connection> {
    let client = conn::installed().redis.client(url)?;
    let conn = client.get_connection_with_timeout(CONNECT_TIMEOUT)?;
    conn.set_read_timeout(Some(io_timeout))?;
    conn.set_write_timeout(Some(io_timeout))?;
    Ok(conn)
}
