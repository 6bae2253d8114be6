//! The shipped `redis.conf` loads the module: started from the workspace
//! root exactly as the README says (with only the port moved to a free one
//! and persistence off, so the test writes nothing into the checkout; a
//! `--dir` override would move the working directory before the relative
//! `loadmodule` path is resolved), Redis lists the module, applies the
//! config's `ticket.pool-chunk` and answers `TICKET.*` commands.

use std::process::{Command, Stdio};
use std::time::Duration;

use ticketgate_tests::{free_port, module_path, wait_until, workspace_root};

#[test]
fn shipped_redis_conf_loads_the_module() {
    // The config points at target/release/libticketgate.so relative to the root.
    assert!(module_path().exists());
    let port = free_port();
    let mut child = Command::new("redis-server")
        .current_dir(workspace_root())
        .arg("redis.conf")
        .args(["--port", &port.to_string()])
        .args(["--appendonly", "no", "--save", ""])
        .args(["--daemonize", "no", "--logfile", ""])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server on PATH");
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).expect("url");
    wait_until(
        Duration::from_secs(10),
        "redis-server with redis.conf answers PING",
        || {
            client
                .get_connection()
                .and_then(|mut c| redis::cmd("PING").query::<String>(&mut c))
                .is_ok()
        },
    );
    let mut con = client.get_connection().expect("connection");

    let modules: redis::Value = redis::cmd("MODULE")
        .arg("LIST")
        .query(&mut con)
        .expect("MODULE LIST");
    assert!(format!("{modules:?}").contains("ticket"), "{modules:?}");
    let chunk: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("ticket.pool-chunk")
        .query(&mut con)
        .expect("CONFIG GET");
    assert_eq!(chunk, ["ticket.pool-chunk", "1"]);
    let sweep: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("ticket.sweep-*")
        .query(&mut con)
        .expect("CONFIG GET");
    assert_eq!(
        sweep
            .chunks(2)
            .map(|kv| kv.join(" "))
            .collect::<std::collections::BTreeSet<_>>(),
        ["ticket.sweep-interval 100", "ticket.sweep-max 1000"]
            .map(String::from)
            .into(),
    );
    let fsync: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendfsync")
        .query(&mut con)
        .expect("CONFIG GET");
    assert_eq!(fsync, ["appendfsync", "everysec"]);

    let _: () = redis::cmd("TICKET.INIT")
        .arg("conf")
        .arg(2)
        .query(&mut con)
        .expect("INIT");
    let first: i64 = redis::cmd("TICKET.CLAIM")
        .arg("conf")
        .arg("alice")
        .query(&mut con)
        .expect("CLAIM");
    assert_eq!(first, 1);

    let _ = child.kill();
    let _ = child.wait();
}
