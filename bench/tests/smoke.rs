//! Smoke tests: the real binary against private servers, tiny sizes.
//! No timed assertions — only that every scenario ran and nothing was
//! oversold, duplicated or out of sync. Needs the module, the sidecar and
//! ticketgate-live built first: `cargo build --release --workspace`.

use std::process::Command;

use serde_json::Value;

fn bench() -> Command {
    let root = ticketgate_tests::workspace_root();
    for p in [
        "target/release/libticketgate.so",
        "target/release/ticketgate-sidecar",
        "target/release/ticketgate-live",
    ] {
        assert!(
            root.join(p).is_file(),
            "{p} missing: run `cargo build --release --workspace` first"
        );
    }
    Command::new(env!("CARGO_BIN_EXE_ticketgate-bench"))
}

#[test]
fn all_quick_reports_every_scenario_without_violations() {
    let dir = tempfile::tempdir().unwrap();
    let chart = dir.path().join("chart.svg");
    let out = bench()
        .args(["all", "--quick", "--json", "--no-progress", "--chart"])
        .arg(&chart)
        .output()
        .expect("run ticketgate-bench");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {}: {stderr}", out.status);
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}); stderr:\n{stderr}"));
    assert_eq!(json["violations"], 0, "{stderr}");
    assert_eq!(json["run"]["quick"], true);
    let scenarios = json["scenarios"].as_array().expect("scenarios array");
    let names: Vec<&str> = scenarios
        .iter()
        .map(|s| s["scenario"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "burst",
            "coupon",
            "throughput",
            "drain",
            "big-event",
            "live",
            "checkout",
            "waitlist",
            "restore",
            "draw",
            "seats"
        ],
        "{stderr}"
    );
    for s in scenarios {
        let name = s["scenario"].as_str().unwrap_or("");
        assert_eq!(s["violations"], Value::Array(vec![]), "{name}: {stderr}");
        assert!(
            !s["rows"].as_array().unwrap().is_empty(),
            "{name} has no rows"
        );
        assert!(
            !s["targets"].as_array().unwrap().is_empty(),
            "{name} has no targets"
        );
    }
    // Every path of burst and coupon sold exactly min(tickets, users), no oversell.
    for s in &scenarios[..2] {
        let rows = s["rows"].as_array().unwrap();
        let winners: Vec<f64> = rows
            .iter()
            .filter_map(|r| r["metrics"]["winners"].as_f64())
            .collect();
        assert_eq!(winners.len(), 3, "{}", s["scenario"]);
        assert!(winners.windows(2).all(|w| w[0] == w[1]), "{winners:?}");
        for r in rows {
            if let Some(o) = r["metrics"]["oversell"].as_f64() {
                assert_eq!(o, 0.0);
                assert_eq!(r["metrics"]["duplicates"].as_f64(), Some(0.0));
            }
        }
    }
    // Checkout sold every ticket on both paths and measured release lateness.
    let checkout = scenarios[6]["rows"].as_array().unwrap();
    assert_eq!(checkout.len(), 2, "{stderr}");
    for r in checkout {
        assert_eq!(r["metrics"]["sold"].as_f64(), Some(200.0), "{r}");
        assert!(
            r["metrics"]["claims_per_s"].as_f64().unwrap_or(0.0) > 0.0,
            "{r}"
        );
    }
    let svg = std::fs::read_to_string(&chart).expect("chart written");
    assert!(svg.contains("<svg") && svg.contains("claims per second"));
}

#[test]
fn demo_agrees_between_redis_and_mysql() {
    let out = bench()
        .args([
            "demo",
            "--no-progress",
            "--burst-users",
            "300",
            "--burst-tickets",
            "30",
        ])
        .output()
        .expect("run ticketgate-bench demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "exit {}:\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("result: OK"), "{stdout}");
    assert!(
        stdout.contains("winners                  30  OK"),
        "{stdout}"
    );
    assert!(
        stdout.contains("sold-out replies         270  OK"),
        "{stdout}"
    );
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

/// A sidecar wrapper that runs the real sidecar but also slips an intruder
/// row into MySQL for every event: the bench must report the mismatch as a
/// violation and exit 1.
#[test]
fn mysql_tampered_behind_the_sidecar_is_a_violation() {
    let real = ticketgate_tests::workspace_root().join("target/release/ticketgate-sidecar");
    let dir = tempfile::tempdir().unwrap();
    let wrapper = dir.path().join("tampering-sidecar");
    let script = r#"#!/bin/sh
real="$REAL_SIDECAR"
if [ "$1" != run ]; then exec "$real" "$@"; fi
url="$TICKETGATE_MYSQL_URL"
port=${url##*:}; port=${port%%/*}
db=${url##*/}
me=$$
( while kill -0 "$me" 2>/dev/null; do
    mariadb -h 127.0.0.1 -P "$port" -u root "$db" -e "INSERT IGNORE INTO ticket_participation (event_id, user_id, ticket_number, status, claimed_at, stream_id) SELECT event_id, 'intruder', 1000000, 'active', NOW(3), '' FROM ticket_stock" 2>/dev/null
    sleep 0.01
  done ) &
"$real" "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT
wait "$pid"
wait "$pid"
exit $?
"#;
    std::fs::write(&wrapper, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = bench()
        .args(["coupon", "--quick", "--no-progress", "--sidecar"])
        .arg(&wrapper)
        .env("REAL_SIDECAR", &real)
        .output()
        .expect("run ticketgate-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("VIOLATION: ticketgate: 1 users hold a ticket in MySQL but not in Redis"),
        "{stdout}\n{stderr}"
    );
    assert!(stderr.contains("correctness violation"), "{stderr}");
}
