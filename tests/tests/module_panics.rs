//! No panic crosses into Redis. A build of the module with the
//! `fault-injection` feature (built here into `target/faults`) registers
//! `ticket.fault`, which forces a panic at one kind of entry point at a
//! time: a write command, the expiry sweep, `INFO`, `TICKET._APPLY` on a
//! replica, a keyspace notification. Each time the server lives on, the
//! panic is logged with where it happened and counted in `INFO ticket`
//! (`panics`), a command answers `INTERNAL` and leaves the keyspace as it
//! was (`DEBUG DIGEST`), and once disarmed everything works again.

#[path = "support/module.rs"]
mod support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use redis::Connection;
use support::*;
use ticketgate_tests::{wait_until, workspace_root, RedisServer};

/// The numbers `ticket.fault` takes (`module/src/fault.rs`'s `Point`).
const COMMAND: &str = "1";
const SWEEP: &str = "2";
const INFO: &str = "3";
const APPLY: &str = "4";
const KEY_EVENT: &str = "5";

/// The module built with `fault-injection`, in its own target directory so
/// the release build the other tests load stays as it is. Cargo rebuilds
/// it only when the sources changed.
fn fault_module() -> &'static PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = workspace_root();
        let target = root.join("target/faults");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .current_dir(&root)
            .args(["build", "--release", "-p", "ticketgate"])
            .args(["--features", "fault-injection", "--target-dir"])
            .arg(&target)
            .status()
            .expect("run cargo to build the fault-injection module");
        assert!(status.success(), "cannot build the fault-injection module");
        target.join("release/libticketgate.so")
    })
}

fn start(extra: &[&str]) -> RedisServer {
    RedisServer::start_with_module(fault_module(), extra)
}

fn arm(c: &mut Connection, point: &str) {
    ok(c, &["CONFIG", "SET", "ticket.fault", point]);
}

/// Every line of the server's log that reports a caught panic.
fn panic_lines(server: &RedisServer) -> Vec<String> {
    server
        .log()
        .lines()
        .filter(|l| l.contains("panicked, nothing more of it ran"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_command_that_panics_answers_internal_and_changes_nothing() {
    let server = start(&[]);
    let mut c = server.conn();
    ok(
        &mut c,
        &["TICKET.INIT", "e", "10", "HOLD", "60000", "LIMIT", "2"],
    );
    assert_eq!(claim(&mut c, "e", "a"), 1);
    let before = digest(&mut c);
    arm(&mut c, COMMAND);
    for call in [
        &["TICKET.CLAIM", "e", "b"][..],
        &["TICKET.CONFIRM", "e", "a"],
        &["TICKET.CANCEL", "e", "a"],
        &["TICKET.INIT", "f", "5"],
    ] {
        let error = expect_error(&mut c, call, "INTERNAL");
        let name = call[0].to_ascii_lowercase();
        assert!(error.contains(&format!("{name} panicked")), "{error}");
        assert!(error.contains("please report"), "{error}");
        assert_eq!(digest(&mut c), before, "{call:?} changed the keyspace");
    }
    assert_eq!(info_int(&mut c, "ticket_panics"), 4);
    let lines = panic_lines(&server);
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(lines[0].contains("ticket.claim panicked"), "{lines:?}");
    arm(&mut c, "0");
    assert_eq!(claim(&mut c, "e", "b"), 2);
}

#[test]
fn a_sweep_that_panics_is_counted_and_the_next_one_expires_the_hold() {
    let server = start(&[]);
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "10"]);
    arm(&mut c, SWEEP);
    assert_eq!(int(&mut c, &["TICKET.CLAIM", "e", "a", "HOLD", "50"]), 1);
    wait_until(Duration::from_secs(20), "a sweep panicked", || {
        info_int(&mut c, "ticket_panics") >= 1
    });
    assert_eq!(value_of_ping(&mut c), "PONG");
    assert!(panic_lines(&server)[0].contains("the expiry sweep panicked"));
    // Nothing expired it while every sweep panicked.
    assert_eq!(users_of_op(&mut c, "e", "expire"), Vec::<String>::new());
    arm(&mut c, "0");
    wait_until(Duration::from_secs(20), "the hold is swept", || {
        users_of_op(&mut c, "e", "expire") == ["a"]
    });
}

#[test]
fn info_that_panics_leaves_the_server_answering() {
    let server = start(&[]);
    let mut c = server.conn();
    arm(&mut c, INFO);
    let text: String = redis::cmd("INFO").arg("everything").query(&mut c).unwrap();
    assert!(text.contains("redis_version"), "the rest of INFO is there");
    arm(&mut c, "0");
    assert_eq!(info_int(&mut c, "ticket_panics"), 1);
    assert!(panic_lines(&server)[0].contains("INFO ticket panicked"));
}

#[test]
fn a_replicas_apply_that_panics_leaves_the_replica_serving() {
    let primary = start(&["--repl-diskless-sync-delay", "0"]);
    let port = primary.port().to_string();
    let replica = start(&["--replicaof", "127.0.0.1", &port]);
    wait_for_link(&replica);
    let (mut p, mut r) = (primary.conn(), replica.conn());
    ok(&mut p, &["TICKET.INIT", "e", "10"]);
    wait_replicated(&mut p, 1);
    arm(&mut r, APPLY);
    assert_eq!(claim(&mut p, "e", "a"), 1);
    wait_until(
        Duration::from_secs(20),
        "the replica's apply panicked",
        || info_int(&mut r, "ticket_panics") >= 1,
    );
    assert_eq!(value_of_ping(&mut r), "PONG");
    assert!(panic_lines(&replica)[0].contains("ticket._apply panicked"));
    arm(&mut r, "0");
    assert_eq!(claim(&mut p, "e", "b"), 2);
    wait_replicated(&mut p, 1);
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "e", "b"]), Some(2));
}

#[test]
fn a_keyspace_notification_that_panics_forgets_every_cached_meta() {
    let server = start(&[]);
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "3"]);
    assert_eq!(claim(&mut c, "e", "a"), 1);
    arm(&mut c, KEY_EVENT);
    // A hand edit of the meta hash while its notification panics: the
    // module must not go on with its cached meta.
    let _: () = redis::cmd("HSET")
        .arg(key("e", "meta"))
        .arg("total")
        .arg(1)
        .query(&mut c)
        .unwrap();
    arm(&mut c, "0");
    assert!(info_int(&mut c, "ticket_panics") >= 1);
    expect_error(&mut c, &["TICKET.CLAIM", "e", "b"], "SOLDOUT");
}

fn value_of_ping(c: &mut Connection) -> String {
    redis::cmd("PING").query(c).unwrap()
}
