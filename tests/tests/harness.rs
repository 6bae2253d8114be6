//! Tests of the test harness itself: the private Redis and MariaDB servers
//! start, answer, persist what they should, and never outlive the tests.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use mysql::prelude::Queryable;
use redis::Commands;
use ticketgate_tests::{
    free_port, fresh_database, shared_mariadb, wait_until, MariaDb, RedisServer,
};

fn config_get(conn: &mut redis::Connection, name: &str) -> String {
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query(conn)
        .unwrap_or_else(|e| panic!("CONFIG GET {name}: {e}"));
    assert_eq!(pair.len(), 2, "CONFIG GET {name} returned {pair:?}");
    pair[1].clone()
}

fn process_alive(pid: u32) -> bool {
    // A reaped process has no /proc entry; a zombie would still count, but the
    // harness always reaps its children.
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn redis_starts_with_the_ticket_module_loaded() {
    let server = RedisServer::start();
    let mut conn = server.conn();
    let modules: Vec<Vec<redis::Value>> = redis::cmd("MODULE")
        .arg("LIST")
        .query(&mut conn)
        .expect("MODULE LIST");
    let names: Vec<String> = modules
        .iter()
        .filter_map(|fields| {
            fields.chunks(2).find_map(|kv| match kv {
                [redis::Value::BulkString(k), redis::Value::BulkString(v)] if k == b"name" => {
                    Some(String::from_utf8_lossy(v).into_owned())
                }
                _ => None,
            })
        })
        .collect();
    assert!(
        names.iter().any(|n| n == "ticket"),
        "module `ticket` not in MODULE LIST: {names:?}\n{}",
        server.log()
    );
    // Defaults of start(): no persistence, debug command enabled, private dir.
    assert_eq!(config_get(&mut conn, "appendonly"), "no");
    assert_eq!(config_get(&mut conn, "save"), "");
    assert_eq!(
        Path::new(&config_get(&mut conn, "dir")).canonicalize().ok(),
        server.dir().canonicalize().ok()
    );
    let digest: String = redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(&mut conn)
        .expect("DEBUG DIGEST (needs --enable-debug-command yes)");
    assert_eq!(digest.len(), 40, "digest {digest:?}");
    assert_ne!(server.port(), 6379);
    assert_eq!(server.url(), format!("redis://127.0.0.1:{}", server.port()));
    assert!(server.log().contains("Ready to accept connections"));
}

#[test]
fn redis_start_with_passes_extra_arguments() {
    let server = RedisServer::start_with(&["--appendonly", "yes", "--maxmemory", "123mb"]);
    let mut conn = server.conn();
    assert_eq!(config_get(&mut conn, "appendonly"), "yes");
    assert_eq!(
        config_get(&mut conn, "maxmemory"),
        (123u64 << 20).to_string()
    );
}

#[test]
fn redis_replica_follows_master() {
    let master = RedisServer::start();
    let port = master.port().to_string();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let mut m = master.conn();
    let () = m.set("replicated", "yes").expect("SET on master");
    let mut r = replica.conn();
    wait_until(Duration::from_secs(10), "the replica has the key", || {
        r.get::<_, Option<String>>("replicated")
            .ok()
            .flatten()
            .as_deref()
            == Some("yes")
    });
}

#[test]
fn redis_aof_survives_stop_and_restart_in_the_same_dir() {
    let dir = tempfile::tempdir().expect("temp dir");
    let args = [
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "",
    ];
    let mut server = RedisServer::start_in(dir.path(), &args);
    let () = server.conn().set("k", "v1").expect("SET");
    server.stop();
    assert!(server.pid().is_none());
    drop(server);
    assert!(
        dir.path().exists(),
        "start_in must leave the caller's dir alone"
    );

    let mut server = RedisServer::start_in(dir.path(), &args);
    let v: Option<String> = server.conn().get("k").expect("GET");
    assert_eq!(v.as_deref(), Some("v1"), "{}", server.log());

    // A crash (SIGKILL) with appendfsync always loses nothing either, and
    // start_again comes back on the same port.
    let port = server.port();
    let () = server.conn().set("k", "v2").expect("SET");
    server.kill();
    server.start_again();
    assert_eq!(server.port(), port);
    let v: Option<String> = server.conn().get("k").expect("GET after restart");
    assert_eq!(v.as_deref(), Some("v2"), "{}", server.log());
}

#[test]
fn redis_drop_kills_the_server_and_removes_its_dir() {
    let server = RedisServer::start();
    let pid = server.pid().expect("running server has a pid");
    let dir = server.dir().to_path_buf();
    assert!(process_alive(pid));
    drop(server);
    assert!(!process_alive(pid), "redis-server {pid} survived drop");
    assert!(!dir.exists(), "{} not removed", dir.display());
}

#[test]
#[should_panic(expected = "redis-server exited early")]
fn redis_start_panics_with_log_when_the_server_cannot_start() {
    let _ = RedisServer::start_with(&["--no-such-directive", "1"]);
}

#[test]
fn servers_die_with_the_test_process() {
    let out = Command::new(env!("CARGO_BIN_EXE_leak-redis-server"))
        .stdin(Stdio::null())
        .output()
        .expect("run child test process");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find_map(|l| l.find("LEAKED ").map(|i| &l[i..]))
        .unwrap_or_else(|| {
            panic!(
                "child did not report its server:\n{stdout}\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    let mut pid = None;
    let mut dir = None;
    for part in line.split_whitespace() {
        if let Some(p) = part.strip_prefix("pid=") {
            pid = p.parse::<u32>().ok();
        } else if let Some(d) = part.strip_prefix("dir=") {
            dir = Some(d.to_string());
        }
    }
    let pid = pid.expect("pid in child report");
    let dir = dir.expect("dir in child report");
    wait_until(
        Duration::from_secs(10),
        "the leaked redis-server is killed by its watchdog",
        || !process_alive(pid) || is_zombie(pid),
    );
    wait_until(
        Duration::from_secs(10),
        "the leaked server's temp dir is removed",
        || !Path::new(&dir).exists(),
    );
}

/// An orphan killed by the watchdog is reaped by init (or a subreaper); until
/// then it is a zombie, which is dead enough for us.
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                .unwrap_or(false)
        })
        .unwrap_or(true)
}

#[test]
fn free_ports_are_distinct_and_bindable() {
    let a = free_port();
    let b = free_port();
    assert_ne!(a, b);
    for p in [a, b] {
        std::net::TcpListener::bind(("127.0.0.1", p))
            .unwrap_or_else(|e| panic!("port {p} from free_port() not bindable: {e}"));
    }
}

#[test]
fn mariadb_starts_and_root_logs_in_over_tcp_and_socket() {
    let db = MariaDb::start();
    assert!(db.url().starts_with("mysql://root@127.0.0.1:"));
    assert_ne!(db.port(), 3306);
    // The mysql crate would silently switch to the unix socket for 127.0.0.1.
    let tcp = mysql::OptsBuilder::from_opts(mysql::Opts::from_url(&db.url()).expect("url"))
        .prefer_socket(false);
    let mut conn =
        mysql::Conn::new(tcp).unwrap_or_else(|e| panic!("connect {}: {e}\n{}", db.url(), db.log()));
    let user: Option<String> = conn.query_first("SELECT CURRENT_USER()").expect("query");
    assert!(
        matches!(user.as_deref(), Some("root@127.0.0.1") | Some("root@%")),
        "{user:?}"
    );
    conn.query_drop("CREATE DATABASE probe")
        .expect("root may create databases");
    let charset: Option<String> = conn
        .query_first("SELECT @@character_set_server")
        .expect("query");
    assert_eq!(charset.as_deref(), Some("utf8mb4"));

    let socket = db.socket_path();
    let opts = mysql::OptsBuilder::new()
        .user(Some("root"))
        .socket(Some(socket.to_string_lossy().into_owned()));
    let mut sconn = mysql::Conn::new(opts).expect("connect over the unix socket");
    let dbs: Vec<String> = sconn.query("SHOW DATABASES").expect("SHOW DATABASES");
    assert!(dbs.iter().any(|d| d == "probe"), "{dbs:?}");
    assert!(!dbs.iter().any(|d| d == "test"), "--skip-test-db: {dbs:?}");
}

#[test]
fn mariadb_keeps_data_across_stop_kill_and_start_again() {
    let mut db = MariaDb::start();
    let port = db.port();
    let pid = db.pid().expect("pid");
    let mut conn = db.conn();
    conn.query_drop("CREATE DATABASE d").expect("create db");
    conn.query_drop("CREATE TABLE d.t (id INT PRIMARY KEY) ENGINE=InnoDB")
        .expect("create table");
    conn.query_drop("INSERT INTO d.t VALUES (1), (2)")
        .expect("insert");
    drop(conn);

    db.stop();
    assert!(db.pid().is_none());
    assert!(
        !process_alive(pid),
        "mariadbd {pid} still running after stop"
    );
    assert!(
        mysql::Conn::new(mysql::Opts::from_url(&db.url()).expect("url")).is_err(),
        "server still accepts connections after stop"
    );

    db.start_again();
    assert_eq!(db.port(), port, "start_again must reuse the port");
    let mut conn = db.conn();
    let n: Option<i64> = conn.query_first("SELECT COUNT(*) FROM d.t").expect("count");
    assert_eq!(n, Some(2), "{}", db.log());

    // A committed row survives a crash too.
    conn.query_drop("INSERT INTO d.t VALUES (3)")
        .expect("insert");
    drop(conn);
    db.kill();
    db.start_again();
    let n: Option<i64> = db
        .conn()
        .query_first("SELECT COUNT(*) FROM d.t")
        .expect("count after crash");
    assert_eq!(n, Some(3), "{}", db.log());
}

#[test]
fn mariadb_drop_kills_the_server_and_removes_its_dir() {
    let db = MariaDb::start();
    let pid = db.pid().expect("pid");
    let dir = db.dir().to_path_buf();
    drop(db);
    assert!(!process_alive(pid), "mariadbd {pid} survived drop");
    assert!(!dir.exists(), "{} not removed", dir.display());
}

#[test]
fn fresh_database_gives_distinct_empty_databases() {
    let a = fresh_database("harness");
    let b = fresh_database("harness");
    assert_ne!(a, b);
    let name_a = a.rsplit('/').next().expect("db name").to_string();
    assert!(name_a.starts_with("harness_"), "{a}");

    let mut ca = mysql::Conn::new(mysql::Opts::from_url(&a).expect("url a")).expect("connect a");
    let mut cb = mysql::Conn::new(mysql::Opts::from_url(&b).expect("url b")).expect("connect b");
    let current: Option<String> = ca.query_first("SELECT DATABASE()").expect("query");
    assert_eq!(current.as_deref(), Some(name_a.as_str()));
    let tables: Vec<String> = ca.query("SHOW TABLES").expect("show tables");
    assert!(tables.is_empty(), "{tables:?}");

    ca.query_drop("CREATE TABLE only_in_a (x INT)")
        .expect("create");
    let tables_b: Vec<String> = cb.query("SHOW TABLES").expect("show tables");
    assert!(
        tables_b.is_empty(),
        "database b sees a's table: {tables_b:?}"
    );

    // Without TICKETGATE_TEST_MYSQL_URL both live on the shared private server.
    if std::env::var_os(ticketgate_tests::MYSQL_URL_ENV).is_none() {
        let shared = shared_mariadb();
        assert!(a.starts_with(&shared.url()), "{a} vs {}", shared.url());
    }
}
