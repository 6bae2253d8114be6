//! The sidecar over Redis Sentinel: connections to the master the
//! sentinels name ([`conn::sentinel::Watcher`]), checked with `ROLE`, and
//! guarded so that none is used after the master moved.
//!
//! A [`Guarded`] connection remembers the master's generation it was opened
//! on; once the watcher has seen a switch (`+switch-master`, or a round
//! that found another master), every command on it fails at once without
//! being sent — so nothing is ever written to a demoted primary, even one
//! still reachable — and the caller's usual reconnect finds the new master.
//! A connection error or a `READONLY` reply makes the watcher ask the
//! sentinels again at once.

use std::sync::Arc;
use std::time::Duration;

use conn::sentinel::{Addr, Watcher};
use redis::{Connection, ConnectionLike, RedisError, RedisResult, Value};

use super::node::connect_node;

/// How long a connect waits for the sentinels to name a master (the
/// startup's retry loop and the daemon's reconnects go round it).
const WAIT_MASTER: Duration = Duration::from_secs(2);

/// A connection to the master of generation `generation`.
pub struct Guarded {
    conn: Connection,
    watcher: Arc<Watcher>,
    generation: u64,
    addr: Addr,
}

/// Connects to the master the sentinels of `url` name, with `io_timeout`
/// on reads and writes; an error (and a re-ask) when the node is not a
/// master.
pub fn connect_master(url: &str, io_timeout: Duration) -> RedisResult<Guarded> {
    let watcher = conn::sentinel::watcher(url).map_err(config_error)?;
    let (addr, generation) = watcher.wait_master(WAIT_MASTER).map_err(config_error)?;
    let node = watcher.url().node_url(&addr);
    let mut c = match connect_node(&node, io_timeout) {
        Ok(c) => c,
        Err(e) => {
            watcher.reask();
            return Err(e);
        }
    };
    let role: Value = redis::cmd("ROLE").query(&mut c)?;
    if !is_master(&role) {
        watcher.reask();
        return Err(io_error(format!(
            "{addr} is not a master any more (ROLE); asked the sentinels again"
        )));
    }
    Ok(Guarded {
        conn: c,
        watcher,
        generation,
        addr,
    })
}

impl Guarded {
    /// The plain connection (for pub/sub).
    pub fn into_inner(self) -> Connection {
        self.conn
    }

    /// An error without sending when the master moved since the connect.
    fn check(&self) -> RedisResult<()> {
        if self.watcher.generation() == self.generation {
            return Ok(());
        }
        Err(io_error(format!(
            "the sentinels moved the master away from {}; reconnecting",
            self.addr
        )))
    }

    /// Re-asks the sentinels after an error that may mean a failover.
    fn after<T>(&self, result: RedisResult<T>, replies: impl Fn(&T) -> bool) -> RedisResult<T> {
        let suspicious = match &result {
            Err(e) => e.is_io_error() || e.is_connection_dropped() || e.code() == Some("READONLY"),
            Ok(v) => replies(v),
        };
        if suspicious {
            self.watcher.reask();
        }
        result
    }
}

impl ConnectionLike for Guarded {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.check()?;
        let r = self.conn.req_packed_command(cmd);
        self.after(r, readonly)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.check()?;
        let r = self.conn.req_packed_commands(cmd, offset, count);
        self.after(r, |vs| vs.iter().any(readonly))
    }

    fn get_db(&self) -> i64 {
        self.conn.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.check().is_ok() && self.conn.check_connection()
    }

    fn is_open(&self) -> bool {
        self.check().is_ok() && self.conn.is_open()
    }
}

/// True for a `READONLY` error reply.
fn readonly(v: &Value) -> bool {
    matches!(v, Value::ServerError(e) if e.code() == "READONLY")
}

/// True when a `ROLE` reply says `master`.
pub fn is_master(role: &Value) -> bool {
    match role {
        Value::Array(parts) => {
            matches!(
                parts.first(),
                Some(Value::BulkString(b)) if b.as_slice() == b"master"
            ) || matches!(parts.first(), Some(Value::SimpleString(s)) if s == "master")
        }
        _ => false,
    }
}

/// An I/O error: callers drop the connection and reconnect.
fn io_error(msg: String) -> RedisError {
    RedisError::from(std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        msg,
    ))
}

/// A Sentinel problem (a bad URL, a wrong master name, no answer yet) as a
/// Redis error carrying its sentence.
fn config_error(msg: String) -> RedisError {
    RedisError::from((redis::ErrorKind::InvalidClientConfig, "Sentinel", msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_replies() {
        let bs = |s: &str| Value::BulkString(s.as_bytes().to_vec());
        assert!(is_master(&Value::Array(vec![bs("master"), Value::Int(0)])));
        assert!(!is_master(&Value::Array(vec![bs("slave"), bs("h")])));
        assert!(!is_master(&Value::Nil));
    }
}
