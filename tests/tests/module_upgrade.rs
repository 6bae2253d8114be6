//! Upgrading from release 0.1, which replicated every write as its own
//! plain command (`HSET`/`ZADD`/`ZREM`/`HDEL`/`DEL`/`XADD <id>` in
//! `MULTI`/`EXEC`), to this one, which replicates one `TICKET._APPLY` per
//! change. `tests/fixtures/aof-v0.1/` holds the AOF release 0.1 wrote for a
//! workload of every command and the `DEBUG DIGEST` it had (made by
//! `tests/fixtures/make-v0.1-aof.sh`). Its incremental file is also exactly
//! the command stream a 0.1 primary sends its replicas.

#[path = "support/module.rs"]
mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use support::*;
use ticketgate_tests::{wait_until, workspace_root, RedisServer};

fn fixture() -> PathBuf {
    workspace_root().join("tests/fixtures/aof-v0.1")
}

fn fixture_digest() -> String {
    let text = fs::read_to_string(fixture().join("digest.txt")).unwrap();
    text.trim().to_string()
}

/// The commands of a RESP file (`*n` arrays of `$len` bulk strings).
fn resp_commands(bytes: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut commands = Vec::new();
    let mut rest = bytes;
    let line = |rest: &mut &[u8]| -> String {
        let end = rest.windows(2).position(|w| w == b"\r\n").expect("CRLF");
        let text = String::from_utf8_lossy(&rest[..end]).into_owned();
        *rest = &rest[end + 2..];
        text
    };
    while !rest.is_empty() {
        let count: usize = line(&mut rest).trim_start_matches('*').parse().unwrap();
        let mut args = Vec::new();
        for _ in 0..count {
            let len: usize = line(&mut rest).trim_start_matches('$').parse().unwrap();
            args.push(rest[..len].to_vec());
            rest = &rest[len + 2..];
        }
        commands.push(args);
    }
    commands
}

fn copy_fixture_aof(dir: &Path) {
    let aof = dir.join("appendonlydir");
    fs::create_dir_all(&aof).unwrap();
    for name in [
        "appendonly.aof.manifest",
        "appendonly.aof.1.base.rdb",
        "appendonly.aof.1.incr.aof",
    ] {
        fs::copy(fixture().join(name), aof.join(name)).unwrap();
    }
}

/// What the fixture's workload left: ev (20 tickets, chunk 3) with u1..u10,
/// u11 on the cancelled 3 and "ü-ß 12" on 11; win with w1..w3.
fn assert_continues_where_0_1_stopped(c: &mut redis::Connection) {
    assert_eq!(int_or_nil(c, &["TICKET.HOLDER", "ev", "u11"]), Some(3));
    assert_eq!(claim(c, "ev", "after-upgrade"), 12);
    assert_eq!(claim(c, "win", "w4"), 4);
    assert_eq!(claim(c, "ev", "u5"), 5, "a repeat claim is still a repeat");
}

#[test]
fn an_aof_written_by_0_1_loads_with_the_same_digest_and_carries_on() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_aof(dir.path());
    let args = [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
    ];
    let mut server = RedisServer::start_in(dir.path(), &args);
    let mut c = server.conn();
    assert_eq!(
        digest(&mut c),
        fixture_digest(),
        "0.1's AOF loaded differently"
    );
    assert_continues_where_0_1_stopped(&mut c);
    // The AOF now mixes 0.1's effects and this release's TICKET._APPLY.
    let after = snapshot(&mut c);
    drop(c);
    server.stop();
    server.start_again();
    assert_eq!(
        snapshot(&mut server.conn()),
        after,
        "mixed AOF reloaded differently"
    );
}

#[test]
fn a_replica_of_this_release_applies_a_0_1_primarys_stream() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut r = replica.conn();
    // The primary forwards exactly what a 0.1 primary propagated.
    let stream = fs::read(fixture().join("appendonly.aof.1.incr.aof")).unwrap();
    let mut p = primary.conn();
    for command in resp_commands(&stream) {
        let parts: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
        let _: redis::Value = cmd_b(&parts).query(&mut p).unwrap();
    }
    let want = fixture_digest();
    assert_eq!(digest(&mut p), want);
    wait_until(
        Duration::from_secs(20),
        "the replica applied the stream",
        || digest(&mut r) == want,
    );
    // The replica reads the 0.1 state, then carries on when promoted.
    assert_eq!(status_int(&mut r, "ev", "claimed"), 11);
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query(&mut r)
        .unwrap();
    assert_continues_where_0_1_stopped(&mut r);
}
