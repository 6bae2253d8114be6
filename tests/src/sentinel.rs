//! Redis Sentinel for tests: three (or more) `redis-server --sentinel`
//! processes in temp dirs on free ports, monitoring one master under a
//! name, with short timeouts so a failover takes about two seconds
//! (`down-after-milliseconds` 1000, `failover-timeout` 3000). Each sentinel
//! can be killed and started again on its port (its rewritten config
//! keeps what it learnt). Dropping the value kills them all.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::Value;
use tempfile::TempDir;

use crate::{free_port, redis_server_bin, Guarded};

/// `sentinel down-after-milliseconds`: how long a master may be silent.
pub const DOWN_AFTER_MS: u64 = 1000;
/// `sentinel failover-timeout` (a second failover of the same master by
/// the same sentinel waits twice this).
pub const FAILOVER_TIMEOUT_MS: u64 = 3000;

struct Node {
    port: u16,
    dir: TempDir,
    process: Option<Guarded>,
}

/// The sentinels of one master.
pub struct Sentinels {
    nodes: Vec<Node>,
    /// The name they monitor the master under.
    pub name: String,
}

impl Sentinels {
    /// `count` sentinels monitoring `127.0.0.1:<master_port>` as `name`
    /// with `quorum`; waits until each knows the others and the replicas.
    pub fn start(name: &str, master_port: u16, count: usize, quorum: usize) -> Sentinels {
        let mut nodes = Vec::new();
        for _ in 0..count {
            let dir = tempfile::Builder::new()
                .prefix("tg-sentinel-")
                .tempdir()
                .expect("tempdir for a sentinel");
            let port = free_port();
            let conf = format!(
                "port {port}\nbind 127.0.0.1\ndir {dir}\nlogfile {dir}/sentinel.log\n\
                 sentinel resolve-hostnames no\n\
                 sentinel monitor {name} 127.0.0.1 {master_port} {quorum}\n\
                 sentinel down-after-milliseconds {name} {DOWN_AFTER_MS}\n\
                 sentinel failover-timeout {name} {FAILOVER_TIMEOUT_MS}\n\
                 sentinel parallel-syncs {name} 1\n",
                dir = dir.path().display()
            );
            fs::write(dir.path().join("sentinel.conf"), conf).expect("write sentinel.conf");
            nodes.push(Node {
                port,
                dir,
                process: None,
            });
        }
        let mut s = Sentinels {
            nodes,
            name: name.to_owned(),
        };
        for i in 0..count {
            s.start_again(i);
        }
        s.wait_until(
            Duration::from_secs(30),
            "the sentinels know each other",
            |s| (0..count).all(|i| s.field(i, "num-other-sentinels") == Some(count as i64 - 1)),
        );
        s
    }

    /// Starts sentinel `i` (again) on its port, from its own config file.
    pub fn start_again(&mut self, i: usize) {
        self.kill(i);
        let node = &mut self.nodes[i];
        let conf: PathBuf = node.dir.path().join("sentinel.conf");
        let child = Command::new(redis_server_bin())
            .arg(&conf)
            .arg("--sentinel")
            .current_dir(node.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn redis-server --sentinel: {e}"));
        node.process = Some(Guarded::new(child, None));
        let port = node.port;
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.query(i, &["PING"]).is_err() {
            assert!(
                Instant::now() < deadline,
                "sentinel on {port} did not answer:\n{}",
                self.log(i)
            );
            sleep(Duration::from_millis(20));
        }
    }

    /// kill -9 of sentinel `i`.
    pub fn kill(&mut self, i: usize) {
        if let Some(g) = self.nodes[i].process.take() {
            g.kill();
        }
    }

    /// `redis+sentinel://127.0.0.1:P1,...,/<name>`.
    pub fn url(&self) -> String {
        self.url_for(&self.name)
    }

    /// The Sentinel URL of these sentinels with another master name.
    pub fn url_for(&self, name: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+sentinel://{}/{name}", hosts.join(","))
    }

    /// The ports of the sentinels.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(|n| n.port).collect()
    }

    /// A command on sentinel `i`.
    pub fn query(&self, i: usize, args: &[&str]) -> redis::RedisResult<Value> {
        let url = format!("redis://127.0.0.1:{}/", self.nodes[i].port);
        let mut c =
            redis::Client::open(url)?.get_connection_with_timeout(Duration::from_secs(1))?;
        c.set_read_timeout(Some(Duration::from_secs(2)))?;
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c)
    }

    /// The master's port as the first live sentinel names it.
    pub fn master_port(&self) -> Option<u16> {
        (0..self.nodes.len()).find_map(|i| {
            let v = self
                .query(i, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", &self.name])
                .ok()?;
            let (_, port): (String, u16) = redis::from_redis_value(v).ok()?;
            Some(port)
        })
    }

    /// Waits until every live sentinel names `port` as the master.
    pub fn wait_master(&self, port: u16, timeout: Duration) {
        self.wait_until(timeout, &format!("the sentinels name {port}"), |s| {
            (0..s.nodes.len())
                .filter(|i| s.nodes[*i].process.is_some())
                .all(|i| {
                    s.query(i, &["SENTINEL", "GET-MASTER-ADDR-BY-NAME", &s.name])
                        .ok()
                        .and_then(|v| redis::from_redis_value::<(String, u16)>(v).ok())
                        .is_some_and(|(_, p)| p == port)
                })
        });
    }

    /// Waits until every live sentinel lists `n` replicas it does not
    /// consider down (a failover needs one).
    pub fn wait_replicas(&self, n: i64, timeout: Duration) {
        self.wait_until(timeout, &format!("{n} healthy replicas known"), |s| {
            (0..s.nodes.len())
                .filter(|i| s.nodes[*i].process.is_some())
                .all(|i| s.healthy_replicas(i) == n)
        });
    }

    /// The healthy replicas every live sentinel agrees on, if they agree.
    pub fn healthy_replicas_everywhere(&self) -> Option<i64> {
        let counts: Vec<i64> = (0..self.nodes.len())
            .filter(|i| self.nodes[*i].process.is_some())
            .map(|i| self.healthy_replicas(i))
            .collect();
        let first = *counts.first()?;
        counts.iter().all(|c| *c == first).then_some(first)
    }

    fn healthy_replicas(&self, i: usize) -> i64 {
        let Ok(Value::Array(replicas)) = self.query(i, &["SENTINEL", "REPLICAS", &self.name])
        else {
            return -1;
        };
        replicas
            .iter()
            .filter(|r| {
                let flags = fields(r).get("flags").cloned().unwrap_or_default();
                !flags.contains("down") && !flags.contains("disconnected")
            })
            .count() as i64
    }

    /// A numeric field of `SENTINEL MASTER <name>` on sentinel `i`.
    pub fn field(&self, i: usize, name: &str) -> Option<i64> {
        let v = self.query(i, &["SENTINEL", "MASTER", &self.name]).ok()?;
        fields(&v).get(name)?.parse().ok()
    }

    fn wait_until(&self, timeout: Duration, what: &str, f: impl Fn(&Sentinels) -> bool) {
        let deadline = Instant::now() + timeout;
        while !f(self) {
            assert!(
                Instant::now() < deadline,
                "timed out after {timeout:?} waiting until {what}\n{}",
                self.logs()
            );
            sleep(Duration::from_millis(50));
        }
    }

    /// Sentinel `i`'s log.
    pub fn log(&self, i: usize) -> String {
        fs::read_to_string(self.nodes[i].dir.path().join("sentinel.log")).unwrap_or_default()
    }

    /// The tails of every sentinel's log, for failure messages.
    pub fn logs(&self) -> String {
        (0..self.nodes.len())
            .map(|i| {
                let log = self.log(i);
                let lines: Vec<&str> = log.lines().collect();
                let tail = lines[lines.len().saturating_sub(12)..].join("\n");
                format!("--- sentinel {} ---\n{tail}\n", self.nodes[i].port)
            })
            .collect()
    }
}

impl Drop for Sentinels {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
    }
}

/// The field/value pairs of a RESP2 flat array or a RESP3 map, as text.
fn fields(v: &Value) -> std::collections::HashMap<String, String> {
    let text = |v: &Value| redis::from_redis_value::<String>(v.clone()).ok();
    match v {
        Value::Array(a) => a
            .chunks(2)
            .filter_map(|c| Some((text(c.first()?)?, text(c.get(1)?)?)))
            .collect(),
        Value::Map(m) => m
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
            .collect(),
        _ => Default::default(),
    }
}
