//! A real, private Redis Cluster for end-to-end tests.
//!
//! [`Cluster::start`] starts `masters * (1 + replicas_per_master)`
//! [`RedisServer`]s (each with the module loaded, in its own temporary
//! directory, on a free port whose `+10000` cluster bus port is free too) with
//!
//! ```text
//! --cluster-enabled yes --cluster-config-file nodes.conf
//! --cluster-node-timeout 2000 --appendonly yes --repl-diskless-sync-delay 0
//! ```
//!
//! joins them with `redis-cli --cluster create ... --cluster-replicas R
//! --cluster-yes`, and waits until the cluster is healthy
//! ([`Cluster::wait_healthy`]): `cluster_state:ok` with all 16384 slots
//! served on every node, every node seeing the same number of masters and
//! replicas with no failure flags, and every replica's link up and its
//! initial sync finished. Node indexes are stable for the lifetime of the
//! value; roles are not (a failover swaps them), so the role accessors
//! ask the servers. Dropping the value SIGKILLs every node.

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::Value;

use crate::tls::TestPki;
use crate::{wait_until, RedisServer};

/// Cluster node timeout (ms) of the test clusters: small, so that failure
/// detection and failovers are quick.
pub const NODE_TIMEOUT_MS: u64 = 2000;

/// How long [`Cluster::start`] waits for a healthy cluster.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running Redis Cluster of private servers.
pub struct Cluster {
    nodes: Vec<RedisServer>,
    masters: usize,
    replicas_per_master: usize,
}

/// One line of `CLUSTER NODES`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeLine {
    pub id: String,
    /// Port of the node's address (`ip:port@cport`).
    pub port: u16,
    pub flags: Vec<String>,
    /// Id of the master of a replica, `-` for a master.
    pub master_id: String,
    pub link_connected: bool,
    /// True if the line lists any slot (or slot range).
    pub has_slots: bool,
}

impl NodeLine {
    pub fn is_master(&self) -> bool {
        self.flags.iter().any(|f| f == "master")
    }
    pub fn is_replica(&self) -> bool {
        self.flags.iter().any(|f| f == "slave")
    }
    /// `fail`, `fail?`, `handshake` or `noaddr`.
    pub fn is_troubled(&self) -> bool {
        self.flags
            .iter()
            .any(|f| matches!(f.as_str(), "fail" | "fail?" | "handshake" | "noaddr"))
    }
}

/// Parses `CLUSTER NODES` output.
pub fn parse_cluster_nodes(text: &str) -> Vec<NodeLine> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 8 {
                return None;
            }
            let port = f[1]
                .split(['@', ','])
                .next()?
                .rsplit(':')
                .next()?
                .parse()
                .ok()?;
            Some(NodeLine {
                id: f[0].to_string(),
                port,
                flags: f[2].split(',').map(str::to_string).collect(),
                master_id: f[3].to_string(),
                link_connected: f[7] == "connected",
                has_slots: f.len() > 8,
            })
        })
        .collect()
}

/// `field:value` lines of an `INFO`/`CLUSTER INFO` reply.
pub fn info_fields(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// A connection to `node`, or `None` if none can be made within 2 s.
fn quick_conn(node: &RedisServer) -> Option<redis::Connection> {
    node.client()
        .get_connection_with_timeout(Duration::from_secs(2))
        .ok()
}

/// The `field:value` lines of an `INFO`-style reply to `command` (empty if
/// the command fails).
fn info_of(c: &mut redis::Connection, command: &[&str]) -> HashMap<String, String> {
    let mut cmd = redis::cmd(command[0]);
    cmd.arg(&command[1..]);
    cmd.query::<String>(c)
        .map(|t| info_fields(&t))
        .unwrap_or_default()
}

/// `redis-cli` flags for TLS with the CA and client certificate of `pki`.
fn redis_cli_tls_args(pki: &TestPki) -> Vec<String> {
    let client = pki.client();
    let mut args = vec!["--tls".to_owned()];
    for (flag, path) in [
        ("--cacert", &client.ca),
        ("--cert", &client.cert),
        ("--key", &client.key),
    ] {
        args.extend([flag.to_owned(), path.display().to_string()]);
    }
    args
}

impl Cluster {
    /// Starts and joins a cluster of `masters` masters (at least 3, as
    /// `redis-cli --cluster create` requires) with `replicas_per_master`
    /// replicas each; returns once it is healthy. Panics (with the
    /// `redis-cli` output or the unhealthy view) if it cannot be set up.
    pub fn start(masters: usize, replicas_per_master: usize) -> Cluster {
        Cluster::start_secured(masters, replicas_per_master, None, None)
    }

    /// Like [`Cluster::start`], every node running the server binary
    /// `server` (e.g. [`crate::valkey9_server`]'s).
    pub fn start_on(
        server: &std::path::Path,
        masters: usize,
        replicas_per_master: usize,
    ) -> Cluster {
        Cluster::start_secured(masters, replicas_per_master, None, Some(server))
    }

    /// Like [`Cluster::start`], every node on TLS only (see
    /// [`RedisServer::start_secure`]), cluster bus and replication included
    /// (`--tls-cluster yes --tls-replication yes`); clients of the harness
    /// verify the nodes against `pki`'s CA and show its client certificate.
    pub fn start_tls(masters: usize, replicas_per_master: usize, pki: &TestPki) -> Cluster {
        Cluster::start_secured(masters, replicas_per_master, Some(pki), None)
    }

    fn start_secured(
        masters: usize,
        replicas_per_master: usize,
        pki: Option<&TestPki>,
        server: Option<&std::path::Path>,
    ) -> Cluster {
        assert!(
            masters >= 3,
            "redis-cli --cluster create needs at least 3 masters, got {masters}"
        );
        let timeout = NODE_TIMEOUT_MS.to_string();
        let mut args = vec![
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            timeout.as_str(),
            "--appendonly",
            "yes",
            // the default waits 5 s before an initial (diskless) full sync
            "--repl-diskless-sync-delay",
            "0",
        ];
        if pki.is_some() {
            args.extend(["--tls-cluster", "yes", "--tls-replication", "yes"]);
        }
        let total = masters * (1 + replicas_per_master);
        let nodes: Vec<RedisServer> = (0..total)
            .map(|_| match server {
                Some(server) => RedisServer::start_on(server, &args),
                None => RedisServer::start_secure(pki, None, &args),
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port()))
            .collect();
        let out = Command::new("redis-cli")
            .args(pki.map(redis_cli_tls_args).unwrap_or_default())
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .arg("--cluster-replicas")
            .arg(replicas_per_master.to_string())
            .arg("--cluster-yes")
            .output()
            .unwrap_or_else(|e| panic!("run redis-cli --cluster create (is it on PATH?): {e}"));
        assert!(
            out.status.success(),
            "redis-cli --cluster create {addrs:?} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Cluster {
            nodes,
            masters,
            replicas_per_master,
        };
        cluster.wait_healthy(START_TIMEOUT);
        cluster
    }

    /// All nodes, in start order (indexes are stable).
    pub fn nodes(&self) -> &[RedisServer] {
        &self.nodes
    }

    /// Node `i`.
    pub fn node(&self, i: usize) -> &RedisServer {
        &self.nodes[i]
    }

    /// Node `i`, mutable (to stop, kill or restart it).
    pub fn node_mut(&mut self, i: usize) -> &mut RedisServer {
        &mut self.nodes[i]
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: a cluster has at least 3 nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Ports of all nodes, in index order.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }

    /// `redis://127.0.0.1:<port>` of all nodes, in index order.
    pub fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// Index of the node listening on `port`.
    pub fn index_of_port(&self, port: u16) -> Option<usize> {
        self.nodes.iter().position(|n| n.port() == port)
    }

    /// A plain (non-cluster) connection to node `i`.
    pub fn conn(&self, i: usize) -> redis::Connection {
        self.nodes[i].conn()
    }

    /// A cluster client seeded with every node (routes by key, follows
    /// `MOVED`/`ASK` and topology changes), with short timeouts and short
    /// retry waits (the defaults wait from 1.28 s up to minutes between
    /// retries), so that a test notices a failover quickly.
    pub fn client(&self) -> ClusterClient {
        let mut builder = ClusterClient::builder(self.urls());
        if let Some(certs) = self.nodes[0].tls_certificates() {
            builder = builder.certs(certs);
        }
        builder
            .connection_timeout(Duration::from_secs(2))
            .response_timeout(Duration::from_secs(5))
            .retries(6)
            .min_retry_wait(20)
            .max_retry_wait(500)
            .build()
            .unwrap_or_else(|e| panic!("build a cluster client for {:?}: {e}", self.urls()))
    }

    /// A new cluster connection (see [`Cluster::client`]).
    pub fn cluster_conn(&self) -> ClusterConnection {
        self.client()
            .get_connection()
            .unwrap_or_else(|e| panic!("connect to the cluster {:?}: {e}", self.urls()))
    }

    /// `ROLE` of node `i`: `"master"` or `"slave"` (or the error text).
    pub fn role(&self, i: usize) -> String {
        let Some(mut c) = quick_conn(&self.nodes[i]) else {
            return "unreachable".to_string();
        };
        match redis::cmd("ROLE").query::<Value>(&mut c) {
            Ok(Value::Array(items)) => match items.first() {
                Some(Value::BulkString(b)) => String::from_utf8_lossy(b).into_owned(),
                Some(Value::SimpleString(s)) => s.clone(),
                other => format!("unexpected ROLE reply {other:?}"),
            },
            Ok(other) => format!("unexpected ROLE reply {other:?}"),
            Err(e) => format!("ROLE failed: {e}"),
        }
    }

    /// Indexes of the nodes that currently say they are masters.
    pub fn masters(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.role(i) == "master")
            .collect()
    }

    /// Indexes of the nodes that currently say they are replicas.
    pub fn replicas(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.role(i) == "slave")
            .collect()
    }

    /// Indexes of the replicas of master `master`, as node `master` sees
    /// its cluster (`CLUSTER NODES`).
    pub fn replicas_of(&self, master: usize) -> Vec<usize> {
        let lines = self.cluster_nodes(master);
        let Some(me) = lines.iter().find(|l| l.port == self.nodes[master].port()) else {
            return Vec::new();
        };
        let mut out: Vec<usize> = lines
            .iter()
            .filter(|l| l.is_replica() && l.master_id == me.id)
            .filter_map(|l| self.index_of_port(l.port))
            .collect();
        out.sort_unstable();
        out
    }

    /// `CLUSTER NODES` as node `i` sees it (empty if it cannot be asked).
    pub fn cluster_nodes(&self, i: usize) -> Vec<NodeLine> {
        let Some(mut c) = quick_conn(&self.nodes[i]) else {
            return Vec::new();
        };
        redis::cmd("CLUSTER")
            .arg("NODES")
            .query::<String>(&mut c)
            .map(|t| parse_cluster_nodes(&t))
            .unwrap_or_default()
    }

    /// Hash slot of `key` (`CLUSTER KEYSLOT`, asked of a live node).
    pub fn keyslot(&self, key: &str) -> u16 {
        for n in &self.nodes {
            let Some(mut c) = quick_conn(n) else {
                continue;
            };
            if let Ok(slot) = redis::cmd("CLUSTER")
                .arg("KEYSLOT")
                .arg(key)
                .query::<u16>(&mut c)
            {
                return slot;
            }
        }
        panic!("no node answered CLUSTER KEYSLOT {key}");
    }

    /// Hash slot of every key of `event` (`ticket:{E}:meta`).
    pub fn event_slot(&self, event: &str) -> u16 {
        self.keyslot(&format!("ticket:{{{event}}}:meta"))
    }

    /// Index of the master serving `slot`, from `CLUSTER SLOTS` of a node
    /// that is a master itself (its view is authoritative for its slots).
    pub fn owner_of_slot(&self, slot: u16) -> usize {
        for i in self.masters() {
            let mut c = self.conn(i);
            let Ok(Value::Array(ranges)) =
                redis::cmd("CLUSTER").arg("SLOTS").query::<Value>(&mut c)
            else {
                continue;
            };
            for r in ranges {
                let Value::Array(parts) = r else { continue };
                let (Some(Value::Int(lo)), Some(Value::Int(hi)), Some(Value::Array(master))) =
                    (parts.first(), parts.get(1), parts.get(2))
                else {
                    continue;
                };
                if !(*lo..=*hi).contains(&i64::from(slot)) {
                    continue;
                }
                if let Some(Value::Int(port)) = master.get(1) {
                    if let Some(idx) = u16::try_from(*port)
                        .ok()
                        .and_then(|p| self.index_of_port(p))
                    {
                        return idx;
                    }
                }
            }
        }
        panic!("no master serves slot {slot}");
    }

    /// Index of the master serving `event`.
    pub fn owner_of_event(&self, event: &str) -> usize {
        self.owner_of_slot(self.event_slot(event))
    }

    /// One line per problem that keeps the cluster from being healthy
    /// (empty when healthy; see the module documentation).
    pub fn health_problems(&self) -> Vec<String> {
        let total = self.len();
        let want_replicas = self.masters * self.replicas_per_master;
        let mut problems = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let Some(mut c) = quick_conn(n) else {
                problems.push(format!("node {i} (:{}) unreachable", n.port()));
                continue;
            };
            let info = info_of(&mut c, &["CLUSTER", "INFO"]);
            for (field, want) in [
                ("cluster_state", "ok".to_string()),
                ("cluster_slots_ok", "16384".to_string()),
                ("cluster_known_nodes", total.to_string()),
            ] {
                let got = info.get(field).map(String::as_str).unwrap_or("?");
                if got != want {
                    problems.push(format!("node {i}: {field}:{got} (want {want})"));
                }
            }
            let lines = self.cluster_nodes(i);
            let masters = lines
                .iter()
                .filter(|l| l.is_master() && l.has_slots)
                .count();
            let replicas = lines.iter().filter(|l| l.is_replica()).count();
            if masters != self.masters || replicas != want_replicas {
                problems.push(format!(
                    "node {i} sees {masters} masters with slots and {replicas} replicas \
                     (want {} and {want_replicas})",
                    self.masters
                ));
            }
            for l in lines
                .iter()
                .filter(|l| l.is_troubled() || !l.link_connected)
            {
                problems.push(format!("node {i} sees :{} as {:?}", l.port, l.flags));
            }
            let repl = info_of(&mut c, &["INFO", "replication"]);
            match repl.get("role").map(String::as_str) {
                Some("slave") => {
                    let link = repl.get("master_link_status").map(String::as_str);
                    let syncing = repl.get("master_sync_in_progress").map(String::as_str);
                    if link != Some("up") || syncing != Some("0") {
                        problems.push(format!(
                            "replica {i}: master_link_status {link:?}, sync in progress {syncing:?}"
                        ));
                    }
                }
                Some("master") => {
                    let online = repl
                        .iter()
                        .filter(|(k, v)| k.starts_with("slave") && v.contains("state=online"))
                        .count();
                    let serves_slots = lines
                        .iter()
                        .any(|l| l.port == n.port() && l.is_master() && l.has_slots);
                    if serves_slots && online != self.replicas_per_master {
                        problems.push(format!(
                            "master {i}: {online} online replicas (want {})",
                            self.replicas_per_master
                        ));
                    }
                }
                other => problems.push(format!("node {i}: role {other:?}")),
            }
        }
        problems
    }

    /// Waits until [`Cluster::health_problems`] is empty; panics with the
    /// last problems after `timeout`.
    pub fn wait_healthy(&self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            let problems = self.health_problems();
            if problems.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "cluster on ports {:?} not healthy after {timeout:?}:\n{}",
                    self.ports(),
                    problems.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `CLUSTER FAILOVER` (the coordinated, lossless manual failover) on
    /// replica `replica`; waits until it is a master serving slots and the
    /// whole cluster is healthy again (its old master now its replica).
    pub fn failover(&self, replica: usize, timeout: Duration) {
        let mut c = self.conn(replica);
        let reply: redis::RedisResult<()> = redis::cmd("CLUSTER").arg("FAILOVER").query(&mut c);
        if let Err(e) = reply {
            panic!("CLUSTER FAILOVER on node {replica}: {e}");
        }
        let port = self.nodes[replica].port();
        wait_until(
            timeout,
            "the replica has taken over its master's slots",
            || {
                self.role(replica) == "master"
                    && self
                        .cluster_nodes(replica)
                        .iter()
                        .any(|l| l.port == port && l.is_master() && l.has_slots)
            },
        );
        self.wait_healthy(timeout);
    }
}

impl Cluster {
    /// SIGSTOPs node `i` (it keeps its sockets but answers nothing: to
    /// other nodes it looks like a network partition of that node).
    pub fn pause(&self, i: usize) {
        self.signal(i, libc::SIGSTOP);
    }

    /// SIGCONTs node `i` after [`Cluster::pause`].
    pub fn resume(&self, i: usize) {
        self.signal(i, libc::SIGCONT);
    }

    fn signal(&self, i: usize, sig: libc::c_int) {
        let pid = self.nodes[i]
            .pid()
            .unwrap_or_else(|| panic!("node {i} is not running"));
        let pid = libc::pid_t::try_from(pid).unwrap_or_else(|e| panic!("pid {pid}: {e}"));
        // SAFETY: kill(2) on the pid of a child we have not reaped (the
        // RedisServer still owns it), so the pid cannot have been reused.
        unsafe {
            libc::kill(pid, sig);
        }
    }

    /// Waits until every node that answers reports `cluster_state:ok` with
    /// all 16384 slots served (nodes that are down are skipped, unlike
    /// [`Cluster::wait_healthy`]); panics after `timeout`.
    pub fn wait_serving(&self, timeout: Duration) {
        let mut last = Vec::new();
        let deadline = Instant::now() + timeout;
        loop {
            last.clear();
            for (i, n) in self.nodes.iter().enumerate() {
                if n.pid().is_none() {
                    continue;
                }
                let Some(mut c) = quick_conn(n) else {
                    last.push(format!("node {i} unreachable"));
                    continue;
                };
                let info = info_of(&mut c, &["CLUSTER", "INFO"]);
                let state = info.get("cluster_state").map(String::as_str);
                let ok = info.get("cluster_slots_ok").map(String::as_str);
                if state != Some("ok") || ok != Some("16384") {
                    last.push(format!("node {i}: state {state:?}, slots ok {ok:?}"));
                }
            }
            if last.is_empty() {
                return;
            }
            if Instant::now() >= deadline {
                panic!(
                    "cluster not serving all slots after {timeout:?}:\n{}",
                    last.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cluster_nodes() {
        let text = "\
07c3 127.0.0.1:30004@40004 slave e7d1 0 1426238317239 4 connected
67ed 127.0.0.1:30002@40002,host-b master - 0 1426238316232 2 connected 5461-10922
6ec2 127.0.0.1:30005@40005 master,fail? - 0 1426238316232 5 disconnected
e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460";
        let lines = parse_cluster_nodes(text);
        assert_eq!(lines.len(), 4);
        assert!(lines[0].is_replica() && !lines[0].has_slots);
        assert_eq!(lines[0].master_id, "e7d1");
        assert_eq!(lines[1].port, 30002);
        assert!(lines[1].is_master() && lines[1].has_slots && !lines[1].is_troubled());
        assert!(lines[2].is_troubled() && !lines[2].link_connected);
        assert!(lines[3].is_master() && lines[3].flags.contains(&"myself".to_string()));
    }

    #[test]
    fn parses_info_fields() {
        let f = info_fields("# Cluster\r\ncluster_state:ok\r\nslave0:ip=1,port=2,state=online\r\n");
        assert_eq!(f.get("cluster_state").map(String::as_str), Some("ok"));
        assert_eq!(
            f.get("slave0").map(String::as_str),
            Some("ip=1,port=2,state=online")
        );
    }
}
