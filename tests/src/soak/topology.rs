//! The soak's two Redis nodes: a primary and its replica, each with its own
//! directory and port for the whole run (`appendonly yes`, `appendfsync
//! always`), and the moves the nemesis makes with them: crashes, restarts,
//! planned and unplanned failovers. Roles swap; ports never change, so a
//! restarted node keeps its clients' URL.
//!
//! Every node is started as a primary (no `--replicaof` argument, so a
//! restart from its own AOF needs no argument change) and made a replica
//! with `REPLICAOF` at run time.

use std::sync::{Arc, RwLock};
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::Connection;
use tempfile::TempDir;

use crate::sentinel::{Sentinels, FAILOVER_TIMEOUT_MS};
use crate::RedisServer;

const NODE_ARGS: &[&str] = &[
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    "--save",
    "",
    "--repl-diskless-sync",
    "yes",
    "--repl-diskless-sync-delay",
    "0",
    "--propagation-error-behavior",
    "panic",
];

/// The URL writers and checks use to reach the current primary.
#[derive(Clone, Default)]
pub struct PrimaryAddress(Arc<RwLock<String>>);

impl PrimaryAddress {
    pub fn get(&self) -> String {
        self.0.read().map(|s| s.clone()).unwrap_or_default()
    }

    /// Points the clients at `url` (a follower of the sentinels does).
    pub fn set(&self, url: String) {
        if let Ok(mut s) = self.0.write() {
            *s = url;
        }
    }
}

/// A connection with short timeouts, so no call blocks a writer for long.
pub fn connect(url: &str) -> redis::RedisResult<Connection> {
    let conn = redis::Client::open(url)?.get_connection_with_timeout(Duration::from_secs(1))?;
    conn.set_read_timeout(Some(Duration::from_secs(3)))?;
    conn.set_write_timeout(Some(Duration::from_secs(3)))?;
    Ok(conn)
}

struct Node {
    server: RedisServer,
    _dir: TempDir,
}

/// The primary, its replica and the address clients follow.
pub struct Topology {
    nodes: [Node; 2],
    primary: usize,
    pub address: PrimaryAddress,
    /// Three sentinels, in the `sentinel` menu.
    sentinels: Option<Sentinels>,
    /// When the sentinels last failed the primary over.
    last_sentinel_failover: Option<Instant>,
}

impl Topology {
    /// Node 0 the primary, node 1 its replica, in sync.
    pub fn start() -> Topology {
        let node = || {
            let dir = tempfile::Builder::new()
                .prefix("tg-soak-redis-")
                .tempdir()
                .expect("tempdir for a soak node");
            let server = RedisServer::start_in(dir.path(), NODE_ARGS);
            Node { server, _dir: dir }
        };
        let topology = Topology {
            nodes: [node(), node()],
            primary: 0,
            address: PrimaryAddress::default(),
            sentinels: None,
            last_sentinel_failover: None,
        };
        topology.address.set(topology.primary().url());
        topology
            .point_replica()
            .expect("REPLICAOF on the new replica");
        assert!(
            topology.wait_in_sync(Duration::from_secs(20)),
            "the replica did not sync"
        );
        topology
    }

    /// Three sentinels (quorum 2) watching the primary as `tg`.
    pub fn start_sentinels(&mut self) {
        let sentinels = Sentinels::start("tg", self.primary().port(), 3, 2);
        sentinels.wait_replicas(1, Duration::from_secs(60));
        self.sentinels = Some(sentinels);
    }

    /// The URL the sidecar is given: the sentinels', or the primary's.
    pub fn sidecar_url(&self) -> String {
        match &self.sentinels {
            Some(s) => s.url(),
            None => self.address.get(),
        }
    }

    /// True once every sentinel sees a healthy replica (waits up to `timeout`).
    pub fn sentinels_ready(&self, timeout: Duration) -> bool {
        let Some(s) = &self.sentinels else {
            return false;
        };
        let deadline = Instant::now() + timeout;
        while s.healthy_replicas_everywhere() != Some(1) {
            if Instant::now() >= deadline {
                return false;
            }
            sleep(Duration::from_millis(100));
        }
        true
    }

    /// After a kill of the primary: waits until the sentinels name the
    /// replica (a sentinel fails the same master over again only after
    /// twice the failover timeout), then takes note of it.
    pub fn wait_sentinel_promotion(&mut self, timeout: Duration) -> Result<(), String> {
        let Some(s) = &self.sentinels else {
            return Err("no sentinels".into());
        };
        let want = self.replica().port();
        let deadline = Instant::now() + timeout;
        while s.master_port() != Some(want) {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the sentinels did not promote {want} within {timeout:?}"
                ));
            }
            sleep(Duration::from_millis(20));
        }
        self.last_sentinel_failover = Some(Instant::now());
        self.promoted_elsewhere();
        Ok(())
    }

    /// Sleeps until the sentinels may fail the primary over again.
    pub fn wait_sentinel_cooldown(&self) {
        if let Some(last) = self.last_sentinel_failover {
            let again = last + Duration::from_millis(2 * FAILOVER_TIMEOUT_MS + 500);
            sleep(again.saturating_duration_since(Instant::now()));
        }
    }

    pub fn primary(&self) -> &RedisServer {
        &self.nodes[self.primary].server
    }

    pub fn replica(&self) -> &RedisServer {
        &self.nodes[1 - self.primary].server
    }

    /// `REPLICAOF 127.0.0.1 <primary port>` on the replica.
    pub fn point_replica(&self) -> redis::RedisResult<()> {
        let mut c = connect(&self.replica().url())?;
        redis::cmd("REPLICAOF")
            .arg("127.0.0.1")
            .arg(self.primary().port())
            .query(&mut c)
    }

    /// Waits until the replica's link is up and no full sync is running.
    pub fn wait_in_sync(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if self.in_sync().unwrap_or(false) {
                return true;
            }
            sleep(Duration::from_millis(50));
        }
        false
    }

    fn in_sync(&self) -> redis::RedisResult<bool> {
        let replica = info(&self.replica().url(), "replication")?;
        let primary = info(&self.primary().url(), "replication")?;
        let link_up = field(&replica, "master_link_status") == Some("up");
        let syncing = field(&replica, "master_sync_in_progress") != Some("0");
        Ok(link_up && !syncing && field(&primary, "role") == Some("master"))
    }

    /// kill -9 of the primary (clients get connection errors).
    pub fn kill_primary(&mut self) {
        self.nodes[self.primary].server.kill();
    }

    /// kill -9 of the replica (after a promotion: the old primary).
    pub fn kill_replica(&mut self) {
        self.nodes[1 - self.primary].server.kill();
    }

    /// Starts the (killed) primary again from its AOF, on its port.
    pub fn restart_primary(&mut self) {
        self.nodes[self.primary].server.start_again();
    }

    /// kill -9 of the replica, then the same node again, following the primary.
    pub fn restart_replica(&mut self, down: Duration) -> redis::RedisResult<()> {
        let replica = 1 - self.primary;
        self.nodes[replica].server.kill();
        sleep(down);
        self.nodes[replica].server.start_again();
        self.point_replica()
    }

    /// `REPLICAOF NO ONE` on the replica: it is the primary now, clients follow.
    pub fn promote_replica(&mut self) -> redis::RedisResult<()> {
        let mut c = connect(&self.replica().url())?;
        redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query::<()>(&mut c)?;
        self.primary = 1 - self.primary;
        self.address.set(self.primary().url());
        Ok(())
    }

    /// Takes note that the replica was promoted by someone else (the
    /// sentinels): it is the primary now, clients follow.
    pub fn promoted_elsewhere(&mut self) {
        self.primary = 1 - self.primary;
        self.address.set(self.primary().url());
    }

    /// Brings the killed old primary back (now the replica) following the new one.
    pub fn rejoin_old_primary(&mut self) -> redis::RedisResult<()> {
        let old = 1 - self.primary;
        self.nodes[old].server.start_again();
        self.point_replica()
    }

    /// A planned switchover by hand, without `CLIENT PAUSE`: waits until the
    /// replica has every byte the primary had written a moment ago, promotes
    /// it and makes the old primary its replica. Writes the old primary
    /// takes after the promotion are never acknowledged by `WAIT` (no
    /// replica left), and are lost when it resyncs.
    pub fn switchover(&mut self, timeout: Duration) -> Result<(), String> {
        let offset = |url: &str, name: &str| -> Option<u64> {
            field(&info(url, "replication").ok()?, name)?.parse().ok()
        };
        let target = offset(&self.primary().url(), "master_repl_offset")
            .ok_or("no master_repl_offset on the primary")?;
        let deadline = Instant::now() + timeout;
        while offset(&self.replica().url(), "slave_repl_offset").unwrap_or(0) < target {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the replica did not reach offset {target} in {timeout:?}"
                ));
            }
            sleep(Duration::from_millis(10));
        }
        self.promote_replica()
            .map_err(|e| format!("REPLICAOF NO ONE: {e}"))?;
        self.point_replica()
            .map_err(|e| format!("REPLICAOF on the old primary: {e}"))
    }

    /// `FAILOVER TO <replica>`; waits until the replica is the primary.
    pub fn planned_failover(&mut self, timeout: Duration) -> Result<(), String> {
        let mut c = connect(&self.primary().url()).map_err(|e| e.to_string())?;
        redis::cmd("FAILOVER")
            .arg("TO")
            .arg("127.0.0.1")
            .arg(self.replica().port())
            .arg("TIMEOUT")
            .arg(timeout.as_millis() as u64)
            .query::<()>(&mut c)
            .map_err(|e| format!("FAILOVER refused: {e}"))?;
        let deadline = Instant::now() + timeout + Duration::from_secs(2);
        while Instant::now() < deadline {
            let role = info(&self.replica().url(), "replication")
                .ok()
                .and_then(|i| field(&i, "role").map(str::to_owned));
            if role.as_deref() == Some("master") {
                self.primary = 1 - self.primary;
                self.address.set(self.primary().url());
                return Ok(());
            }
            sleep(Duration::from_millis(20));
        }
        Err("FAILOVER did not complete in time".into())
    }

    /// Copies both nodes' logs into `dir` (`primary.log`, `replica.log`).
    pub fn save_logs(&self, dir: &std::path::Path) -> std::io::Result<()> {
        std::fs::copy(self.primary().log_path(), dir.join("primary.log"))?;
        std::fs::copy(self.replica().log_path(), dir.join("replica.log"))?;
        Ok(())
    }

    /// The current primary's server log tail, for failure messages.
    pub fn logs(&self) -> String {
        let tail = |s: &RedisServer| {
            let log = s.log();
            let lines: Vec<&str> = log.lines().collect();
            lines[lines.len().saturating_sub(15)..].join("\n")
        };
        format!(
            "--- primary {} ---\n{}\n--- replica {} ---\n{}",
            self.primary().port(),
            tail(self.primary()),
            self.replica().port(),
            tail(self.replica())
        )
    }
}

/// `INFO section` of the server at `url`.
pub fn info(url: &str, section: &str) -> redis::RedisResult<String> {
    let mut c = connect(url)?;
    redis::cmd("INFO").arg(section).query(&mut c)
}

/// The value of `name:value` in an INFO text.
pub fn field<'a>(info: &'a str, name: &str) -> Option<&'a str> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}
