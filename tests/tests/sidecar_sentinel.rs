//! End-to-end: the sidecar and `ticketgate-live` on a Sentinel URL
//! (docs/operations.md "Redis Sentinel").
//!
//! Three `redis-server --sentinel` processes (quorum 2, a master is down
//! after 1 s) watch a primary and a replica with the module. Six writers
//! claim, confirm and cancel with `WAIT 1` after each write, following the
//! master the sentinels name; the primary is killed -9, the sentinels
//! promote the replica, the sidecar follows with no restart, and MySQL
//! follows the new primary within 5 s (measured and printed). The old
//! primary comes back as a replica and a second failover goes the other
//! way; a third, `SENTINEL FAILOVER`, demotes a primary that stays up, and
//! the sidecar sends it nothing more. At the end every acknowledged write is in Redis and MySQL (the
//! soak's history checker) and `reconcile` over the Sentinel URL exits 0.
//! Then: one sentinel down, two down (no quorum: the sidecar keeps
//! draining the master it has and says so in its log and metrics), live
//! reading a replica the sentinels list, and a wrong master name (a clear
//! error at start).

#[path = "support/live.rs"]
mod lsupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, sleep, JoinHandle};
use std::time::{Duration, Instant};

use support::{metric, migrate, mysql_view, sidecar_cmd, tail, Sidecar};
use ticketgate_tests::sentinel::{Sentinels, FAILOVER_TIMEOUT_MS};
use ticketgate_tests::soak::history::{Op, States};
use ticketgate_tests::soak::rng::Rng;
use ticketgate_tests::soak::state;
use ticketgate_tests::soak::topology::{connect, PrimaryAddress, Topology};
use ticketgate_tests::soak::writers::{events, now_ms, Writer};
use ticketgate_tests::soak::{self, checker};
use ticketgate_tests::{fresh_database, wait_until};

const NAME: &str = "tg";
/// The event of the follow markers (kept out of the writers' history).
const MARK: &str = "mark";
const LONG: Duration = Duration::from_secs(60);

/// The servers of one test.
struct Setup {
    topology: Topology,
    sentinels: Sentinels,
    db: String,
}

impl Setup {
    fn start(prefix: &str) -> Setup {
        let topology = Topology::start();
        let sentinels = Sentinels::start(NAME, topology.primary().port(), 3, 2);
        sentinels.wait_replicas(1, LONG);
        let db = fresh_database(prefix);
        migrate(&db);
        let mut c = connect(&topology.primary().url()).unwrap();
        for spec in events() {
            redis::cmd("TICKET.INIT")
                .arg(spec.name)
                .arg(spec.init_args())
                .query::<()>(&mut c)
                .unwrap();
        }
        redis::cmd("TICKET.INIT")
            .arg(MARK)
            .arg(10_000)
            .query::<()>(&mut c)
            .unwrap();
        let acked: i64 = redis::cmd("WAIT").arg(1).arg(5000).query(&mut c).unwrap();
        assert_eq!(acked, 1);
        Setup {
            topology,
            sentinels,
            db,
        }
    }

    fn sidecar(&self) -> Sidecar {
        let args = ["--verify-interval", "1", "--metrics-addr", "127.0.0.1:0"];
        Sidecar::start(&self.sentinels.url(), &self.db, &args)
    }

    /// Claims `user` in the marker event on the current primary and
    /// returns how long MySQL took to have it (at most 5 s).
    fn follow(&self, user: &str, sc: &Sidecar) -> Duration {
        let mut c = connect(&self.topology.primary().url()).unwrap();
        let _: i64 = redis::cmd("TICKET.CLAIM")
            .arg(MARK)
            .arg(user)
            .query(&mut c)
            .unwrap_or_else(|e| panic!("claim {user} on the new primary: {e}"));
        let t = Instant::now();
        wait_until(LONG, &format!("{user} reaches MySQL"), || {
            mysql_view(&self.db, MARK).is_ok_and(|v| v.active.contains_key(user))
        });
        let took = t.elapsed();
        assert!(
            took < Duration::from_secs(5),
            "MySQL followed the new primary only after {took:?}:\n{}",
            tail(&sc.log(), 30)
        );
        took
    }
}

/// Keeps `address` on the master the sentinels name, as a Sentinel client
/// does (every 20 ms).
fn follower(sentinels: Vec<u16>, address: PrimaryAddress, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            for port in &sentinels {
                let ask = || -> redis::RedisResult<(String, u16)> {
                    let mut c = connect(&format!("redis://127.0.0.1:{port}/"))?;
                    redis::cmd("SENTINEL")
                        .arg("GET-MASTER-ADDR-BY-NAME")
                        .arg(NAME)
                        .query(&mut c)
                };
                if let Ok((host, p)) = ask() {
                    address.set(format!("redis://{host}:{p}"));
                    break;
                }
            }
            sleep(Duration::from_millis(20));
        }
    })
}

/// kill -9 of the primary; waits until every sentinel names the replica
/// and returns when that was seen.
fn fail_over(s: &mut Setup, sc: &mut Sidecar, round: usize) -> Instant {
    let (old, new) = (s.topology.primary().port(), s.topology.replica().port());
    let killed = Instant::now();
    s.topology.kill_primary();
    s.sentinels.wait_master(new, Duration::from_secs(30));
    let promoted = Instant::now();
    s.topology.promoted_elsewhere();
    eprintln!(
        "failover {round}: {old} killed, the sentinels named {new} after {:?}",
        promoted - killed
    );
    assert!(sc.running(), "the sidecar exited:\n{}", tail(&sc.log(), 30));
    promoted
}

/// Brings the killed node back as a replica of the new primary, in sync
/// and seen healthy by every sentinel.
fn rejoin(s: &mut Setup) {
    s.topology.rejoin_old_primary().unwrap();
    assert!(
        s.topology.wait_in_sync(LONG),
        "the old primary did not sync"
    );
    s.sentinels.wait_replicas(1, LONG);
}

#[test]
fn the_sidecar_follows_two_sentinel_failovers_and_keeps_every_acknowledged_write() {
    let mut s = Setup::start("sentinel_fo");
    let mut sc = s.sidecar();
    let pid = sc.child.id();
    let stop = Arc::new(AtomicBool::new(false));
    let follow = follower(
        s.sentinels.ports(),
        s.topology.address.clone(),
        stop.clone(),
    );
    let writers = start_writers(&s, &stop);
    sleep(Duration::from_secs(2));

    let first = fail_over(&mut s, &mut sc, 1);
    let took = s.follow("after-first", &sc);
    eprintln!(
        "failover 1: MySQL follows the new primary {:?} after the sentinels named it ({took:?} after the marker claim)",
        first.elapsed()
    );
    rejoin(&mut s);
    // A sentinel waits twice the failover timeout before it fails the same
    // master over again.
    let again = first + Duration::from_millis(2 * FAILOVER_TIMEOUT_MS + 500);
    sleep(
        again
            .saturating_duration_since(Instant::now())
            .max(Duration::from_secs(1)),
    );

    let second = fail_over(&mut s, &mut sc, 2);
    let took = s.follow("after-second", &sc);
    eprintln!(
        "failover 2: MySQL follows the new primary {:?} after the sentinels named it ({took:?} after the marker claim)",
        second.elapsed()
    );
    rejoin(&mut s);
    planned_switch(&mut s, &sc);
    stop.store(true, Ordering::Relaxed);
    let history: Vec<Op> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    follow.join().unwrap();

    assert_eq!(sc.child.id(), pid);
    assert!(
        sc.running(),
        "the sidecar restarted or exited:\n{}",
        tail(&sc.log(), 30)
    );
    let log = sc.log();
    assert_eq!(
        log.matches("sentinel: the master tg moved from").count(),
        3,
        "{}",
        tail(&log, 40)
    );
    let port = sc.metrics_port();
    assert_eq!(
        metric(
            port,
            "ticketgate_sentinel_master_switches_total{master=\"tg\"}"
        ),
        3
    );
    check_history(&s, &history, &sc);
    let (st, out) = sidecar_cmd(&s.sentinels.url(), &s.db, &["reconcile", "--wait", "20"]);
    assert!(st.success(), "reconcile over the Sentinel URL:\n{out}");
}

/// `SENTINEL FAILOVER`: the old primary stays up and is demoted. Once it
/// is a replica, the sidecar sends it no `XTRIM` (a replica refuses it with
/// `READONLY` and counts the refusal; the `XTRIM`s it runs come from its
/// new primary's replication stream) while it trims on the new primary.
fn planned_switch(s: &mut Setup, sc: &Sidecar) {
    let (old, new) = (s.topology.primary().url(), s.topology.replica().port());
    s.sentinels
        .query(0, &["SENTINEL", "FAILOVER", NAME])
        .expect("SENTINEL FAILOVER");
    s.sentinels.wait_master(new, Duration::from_secs(30));
    s.topology.promoted_elsewhere();
    let took = s.follow("after-planned", sc);
    eprintln!("failover 3 (SENTINEL FAILOVER): MySQL follows {took:?} after the marker claim");
    wait_until(LONG, "the old primary is demoted", || {
        info_field(&old, "replication", "role").as_deref() == Some("slave")
    });
    let trims = |url: &str, stat: &str| -> u64 {
        let stats = info_field(url, "commandstats", "cmdstat_xtrim").unwrap_or_default();
        stats
            .split(',')
            .find_map(|kv| kv.strip_prefix(stat)?.strip_prefix('=')?.parse().ok())
            .unwrap_or(0)
    };
    let new_url = s.topology.primary().url();
    let new_before = trims(&new_url, "calls");
    sleep(Duration::from_secs(2));
    assert_eq!(
        trims(&old, "rejected_calls"),
        0,
        "XTRIM sent to the demoted primary"
    );
    assert!(
        trims(&new_url, "calls") > new_before,
        "no XTRIM on the new primary"
    );
    assert!(s.topology.wait_in_sync(LONG));
    s.sentinels.wait_replicas(1, LONG);
}

/// The value of `name:` in `INFO section` of the server at `url`.
fn info_field(url: &str, section: &str, name: &str) -> Option<String> {
    let info = ticketgate_tests::soak::topology::info(url, section).ok()?;
    ticketgate_tests::soak::topology::field(&info, name).map(str::to_owned)
}

fn start_writers(s: &Setup, stop: &Arc<AtomicBool>) -> Vec<JoinHandle<Vec<Op>>> {
    let rng = Rng::new(27);
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut handles = Vec::new();
    for (e, spec) in events().into_iter().enumerate() {
        for w in 0..2 {
            let id = e * 2 + w;
            let writer = Writer::new(
                spec.clone(),
                id,
                12,
                rng.fork(1 + id as u64),
                s.topology.address.clone(),
            );
            let stop = stop.clone();
            handles.push(thread::spawn(move || writer.run(&stop, deadline)));
        }
    }
    handles
}

/// Waits until the logs are drained and MySQL equals Redis, then runs the
/// soak's history checker: every acknowledged write kept.
fn check_history(s: &Setup, history: &[Op], sc: &Sidecar) {
    let users = soak::users_of(history);
    let acked = history.iter().filter(|o| o.acked).count();
    assert!(acked > 50, "only {acked} acknowledged writes");
    let url = s.topology.primary().url();
    let mut last = (States::new(), States::new());
    let drained = (0..300).any(|_| {
        if let Some((backlog, redis, mut mysql)) = soak::read_end_state(&url, &s.db, &users) {
            mysql.retain(|(e, _), _| e != MARK);
            let done = backlog == 0 && orders(&redis) == orders(&mysql);
            last = (redis, mysql);
            if done {
                return true;
            }
        }
        sleep(Duration::from_millis(200));
        false
    });
    assert!(
        drained,
        "not drained, or MySQL != Redis:\n{}",
        tail(&sc.log(), 40)
    );
    let mut my = mysql::Conn::new(mysql::Opts::from_url(&s.db).unwrap()).unwrap();
    let conflicts = state::conflicts(&mut my).unwrap();
    let findings = checker::check(&checker::Input {
        history,
        redis: &last.0,
        mysql: &last.1,
        conflicts: &conflicts,
        now_ms: now_ms(),
    });
    eprintln!(
        "writes: {} acknowledged, {} not; {} unacknowledged lost",
        findings.acked_writes,
        findings.unacked_writes,
        findings.lost_unacked.len()
    );
    assert!(findings.violations.is_empty(), "{:#?}", findings.violations);
}

fn orders(
    states: &States,
) -> HashMap<&(String, String), &(Vec<i64>, ticketgate_tests::soak::history::OrderState)> {
    states
        .iter()
        .filter_map(|(k, s)| Some((k, s.order.as_ref()?)))
        .collect()
}

/// A claim in the marker event on the primary reaches MySQL.
fn drains(s: &Setup, user: &str) {
    let mut c = connect(&s.topology.primary().url()).unwrap();
    let _: i64 = redis::cmd("TICKET.CLAIM")
        .arg(MARK)
        .arg(user)
        .query(&mut c)
        .unwrap();
    wait_until(LONG, &format!("{user} reaches MySQL"), || {
        mysql_view(&s.db, MARK).is_ok_and(|v| v.active.contains_key(user))
    });
}

#[test]
fn sentinels_down_and_no_quorum_keep_the_drain_going_and_say_so() {
    let mut s = Setup::start("sentinel_q");
    let sc = s.sidecar();
    let port = sc.metrics_port();
    let series = |name: &str| format!("ticketgate_{name}{{master=\"tg\"}}");
    wait_until(LONG, "3 sentinels reachable, quorum", || {
        metric(port, &series("sentinels_reachable")) == 3
            && metric(port, &series("sentinel_quorum")) == 1
    });
    drains(&s, "all-up");

    // live reads a replica the sentinels list.
    let live = lsupport::Live::start(&s.sentinels.url(), &[]);
    let replica = format!(
        "reading the replica 127.0.0.1:{}",
        s.topology.replica().port()
    );
    let stock = live.subscribe(MARK, None).stock(Duration::from_secs(10));
    assert_eq!(stock.int("claimed"), 1);
    assert!(live.log().contains(&replica), "{}", live.log());

    s.sentinels.kill(0);
    wait_until(LONG, "2 sentinels reachable, quorum kept", || {
        metric(port, &series("sentinels_reachable")) == 2
            && metric(port, &series("sentinel_quorum")) == 1
    });
    drains(&s, "one-down");
    assert!(
        sc.log()
            .contains("2 of 3 sentinels answer for tg (down: 127.0.0.1:"),
        "{}",
        tail(&sc.log(), 20)
    );

    s.sentinels.kill(1);
    wait_until(LONG, "1 sentinel reachable, no quorum", || {
        metric(port, &series("sentinels_reachable")) == 1
            && metric(port, &series("sentinel_quorum")) == 0
    });
    drains(&s, "no-quorum");
    let primary = s.topology.primary().port();
    let said = "NO QUORUM for tg: 1 of 3 sentinels answer";
    let log = sc.log();
    assert!(
        log.contains(said)
            && log.contains(&format!(
                "still draining the master it has, 127.0.0.1:{primary}"
            )),
        "{}",
        tail(&log, 20)
    );

    // All three down: the master is kept.
    s.sentinels.kill(2);
    wait_until(LONG, "no sentinel reachable", || {
        metric(port, &series("sentinels_reachable")) == 0
    });
    drains(&s, "none-up");

    for i in 0..3 {
        s.sentinels.start_again(i);
    }
    wait_until(LONG, "the quorum is back", || {
        metric(port, &series("sentinel_quorum")) == 1
    });
    assert!(sc
        .log()
        .contains("3 of 3 sentinels answer for tg; quorum reachable"));
    drains(&s, "back");
}

#[test]
fn a_wrong_master_name_or_a_bad_sentinel_url_is_a_clear_error_at_start() {
    let primary = ticketgate_tests::RedisServer::start();
    let sentinels = Sentinels::start(NAME, primary.port(), 3, 2);
    let db = fresh_database("sentinel_name");
    migrate(&db);
    let started = Instant::now();
    let (st, out) = sidecar_cmd(&sentinels.url_for("nope"), &db, &["run"]);
    assert_eq!(st.code(), Some(2), "{out}");
    assert!(
        out.contains("monitors a master named \"nope\" (they monitor: tg)")
            && out.contains("<master-name>"),
        "{out}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "not at once: {:?}",
        started.elapsed()
    );
    let (st, out) = sidecar_cmd("redis+sentinel://127.0.0.1:1,/tg", &db, &["reconcile"]);
    assert_eq!(st.code(), Some(2), "{out}");
    assert!(
        out.contains("invalid Sentinel URL") && out.contains("empty sentinel address"),
        "{out}"
    );
    // The right name works (reconcile of an empty database: consistent).
    let (st, out) = sidecar_cmd(&sentinels.url(), &db, &["reconcile"]);
    assert!(st.success(), "{out}");
}

/// `deploy/sentinel/sentinel.conf` and `redis-node.conf` as shipped load
/// on a real server (paths, addresses and the port put local).
#[test]
fn the_shipped_sentinel_and_node_configuration_load() {
    let root = ticketgate_tests::workspace_root().join("deploy/sentinel");
    let node_conf = std::fs::read_to_string(root.join("redis-node.conf")).unwrap();
    let mut args: Vec<String> = Vec::new();
    for line in node_conf.lines().map(str::trim) {
        let skip = ["loadmodule", "aclfile", "masteruser", "masterauth"];
        if line.is_empty() || line.starts_with('#') || skip.iter().any(|k| line.starts_with(k)) {
            continue;
        }
        let (k, v) = line.split_once(' ').unwrap();
        args.extend([format!("--{k}"), v.to_owned()]);
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let node = ticketgate_tests::RedisServer::start_with(&refs);
    let mut c = node.conn();
    let got: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("min-replicas-to-write")
        .query(&mut c)
        .unwrap();
    assert_eq!(got, ["min-replicas-to-write", "1"]);

    let dir = tempfile::tempdir().unwrap();
    let port = ticketgate_tests::free_port();
    let conf = std::fs::read_to_string(root.join("sentinel.conf"))
        .unwrap()
        .replace("/var/lib/redis", &dir.path().display().to_string())
        .replace("/var/log/redis", &dir.path().display().to_string())
        .replace("port 26379", &format!("port {port}"))
        .replace("bind 0.0.0.0", "bind 127.0.0.1")
        .replace("announce-ip 10.0.0.11", "announce-ip 127.0.0.1")
        .replace("supervised systemd", "supervised no")
        .replace("10.0.0.1 6379", &format!("127.0.0.1 {}", node.port()));
    let path = dir.path().join("sentinel.conf");
    std::fs::write(&path, conf).unwrap();
    let child = std::process::Command::new(ticketgate_tests::redis_server_bin())
        .arg(&path)
        .arg("--sentinel")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _killed_on_drop = KillOnDrop(child);
    let url = format!("redis://:change-me-sentinel@127.0.0.1:{port}/");
    let mut master = HashMap::new();
    wait_until(
        Duration::from_secs(10),
        "the shipped sentinel answers",
        || {
            let ask = || -> redis::RedisResult<HashMap<String, String>> {
                let mut s = redis::Client::open(url.as_str())?.get_connection()?;
                redis::cmd("SENTINEL").arg("MASTER").arg("tg").query(&mut s)
            };
            ask().map(|m| master = m).is_ok()
        },
    );
    assert_eq!(master.get("quorum").map(String::as_str), Some("2"));
    assert_eq!(
        master.get("down-after-milliseconds").map(String::as_str),
        Some("5000")
    );
    assert_eq!(master.get("port"), Some(&node.port().to_string()));
}

/// A child process, killed when dropped (also on a failed assertion).
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
