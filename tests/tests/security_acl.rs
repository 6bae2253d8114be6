//! End-to-end least privilege: with `deploy/users.acl` loaded as is
//! (`--aclfile`), each role does its job and is refused the rest; the real
//! sidecar drains everything as `tg-sidecar` into MySQL as the DML-only user
//! of `deploy/mysql-grants.sql`, after `migrate` ran as the migration user;
//! a replica syncs as `tg-replica`; and the role lines work on a Redis
//! Cluster too.

#[path = "support/sidecar.rs"]
mod support;

use std::time::Duration;

use mysql::prelude::Queryable;
use support::*;
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::{fresh_database, wait_until, workspace_root, RedisServer};

const OPERATOR: (&str, &str) = ("tg-operator", "change-me-tg-operator");

fn acl_file() -> String {
    workspace_root()
        .join("deploy/users.acl")
        .display()
        .to_string()
}

/// A server with deploy/users.acl; the harness logs in as the operator.
fn acl_redis() -> RedisServer {
    RedisServer::start_secure(None, Some(OPERATOR), &["--aclfile", &acl_file()])
}

fn login(redis: &RedisServer, user: &str) -> redis::Connection {
    redis.conn_as(user, &format!("change-me-{user}"))
}

fn run(c: &mut redis::Connection, args: &[&str]) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
}

/// Asserts that every command in `commands` is refused with NOPERM.
fn assert_all_refused(c: &mut redis::Connection, who: &str, commands: &[&[&str]]) {
    for args in commands {
        match run(c, args) {
            Err(e) => assert_eq!(e.code(), Some("NOPERM"), "{who} {args:?}: {e}"),
            Ok(v) => panic!("{who} was allowed {args:?}: {v:?}"),
        }
    }
}

/// Asserts that every command in `commands` succeeds.
fn assert_all_allowed(c: &mut redis::Connection, who: &str, commands: &[&[&str]]) {
    for args in commands {
        if let Err(e) = run(c, args) {
            panic!("{who} was refused {args:?}: {e}");
        }
    }
}

fn log_len(redis: &RedisServer, event: &str) -> i64 {
    redis::cmd("XLEN")
        .arg(format!("ticket:{{{event}}}:log"))
        .query(&mut redis.conn())
        .unwrap()
}

/// A replicated effect as a primary would send it: no client may run it.
const APPLY: &[&str] = &[
    "TICKET._APPLY",
    "1",
    "ev",
    "claim",
    "1700000000000-0",
    "1700000000000",
    "mallory",
    "3",
];

/// What no role may do: forge log entries or effects, delete or overwrite
/// event keys, run scripts, reconfigure the server.
const FORGERIES: &[&[&str]] = &[
    APPLY,
    &[
        "XADD",
        "ticket:{ev}:log",
        "*",
        "op",
        "claim",
        "user",
        "mallory",
        "ticket",
        "3",
    ],
    &["DEL", "ticket:{ev}:meta"],
    &["DEL", "ticket:{ev}:log"],
    &["HSET", "ticket:{ev}:holders", "mallory", "3"],
    &["SET", "ticket:{ev}:meta", "x"],
    &["FLUSHALL"],
    &["CONFIG", "SET", "appendonly", "no"],
    &["EVAL", "return 1", "0"],
    &["PUBLISH", "ticket:events", "ev"],
];

#[test]
fn the_application_claims_cancels_and_reads_and_is_refused_the_rest() {
    let redis = acl_redis();
    init_event(&mut redis.conn(), "ev", 3);
    let mut app = login(&redis, "tg-app");
    let n: i64 = redis::cmd("TICKET.CLAIM")
        .arg("ev")
        .arg("alice")
        .query(&mut app)
        .unwrap();
    assert_eq!(n, 1);
    assert_all_allowed(
        &mut app,
        "tg-app",
        &[
            &["TICKET.CLAIM", "ev", "bob"],
            &["TICKET.CONFIRM", "ev", "bob"],
            &["TICKET.ORDER", "ev", "bob"],
            &["TICKET.RESELL", "ev", "bob"],
            &["TICKET.UNLIST", "ev", "bob"],
            &["TICKET.CANCEL", "ev", "alice"],
            &["TICKET.HOLDER", "ev", "bob"],
            &["TICKET.STATUS", "ev"],
            &["TICKET.WAIT", "ev", "carol"],
            &["TICKET.WAIT", "ev", "dave"],
            &["TICKET.POSITION", "ev", "dave"],
            &["TICKET.LEAVE", "ev", "dave"],
            &["WAIT", "0", "0"],
            &["PING"],
        ],
    );
    // After the sale: bob gives his sold ticket 2 to erin, a generation up,
    // and her credential (ticket 2, generation 2) admits her at the door.
    assert_all_allowed(
        &mut app,
        "tg-app",
        &[
            &["TICKET.TRANSFER", "ev", "bob", "erin"],
            &["TICKET.SCAN", "ev", "2", "2", "GATE", "north"],
        ],
    );
    // A seated event: the application claims best-available and picked
    // seats, and reads the layout and the seat map.
    let hall = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":4}]}]}"#;
    assert_all_allowed(
        &mut redis.conn(),
        "tg-operator",
        &[&["TICKET.INIT", "hall", "4", "SEATS", hall]],
    );
    assert_all_allowed(
        &mut app,
        "tg-app",
        &[
            &["TICKET.CLAIM", "hall", "ann", "SEATS", "1"],
            &["TICKET.CLAIM", "hall", "bob", "SECTION", "A"],
            &["TICKET.LAYOUT", "hall"],
            &["TICKET.SEATMAP", "hall"],
        ],
    );
    let map: String = redis::cmd("TICKET.SEATMAP")
        .arg("hall")
        .query(&mut app)
        .unwrap();
    assert_eq!(map.matches('s').count(), 2, "{map}");
    // Allocations: the operator sets a seat aside, a partner's claim takes it.
    assert_all_allowed(
        &mut redis.conn(),
        "tg-operator",
        &[&["TICKET.ALLOCATE", "hall", "house", "COUNT", "1"]],
    );
    assert_all_allowed(
        &mut app,
        "tg-app",
        &[
            &["TICKET.ALLOCATIONS", "hall"],
            &["TICKET.CLAIM", "hall", "cid", "FROM", "house"],
        ],
    );
    assert_all_refused(&mut app, "tg-app", FORGERIES);
    assert_all_refused(
        &mut app,
        "tg-app",
        &[
            &["TICKET.DROP", "ev", "FORCE"],
            &["TICKET.RESTORE", "ev", "COMMIT"],
            &["TICKET.HEALED", "ev"],
            &["TICKET.INIT", "other", "10"],
            &["TICKET.OPEN", "ev"],
            &["TICKET.CLOSE", "ev"],
            &["TICKET.ALLOCATE", "ev", "p", "COUNT", "1"],
            &["TICKET.RELEASE", "ev", "p"],
            &["HGETALL", "ticket:{ev}:holders"],
            &["XRANGE", "ticket:{ev}:log", "-", "+"],
        ],
    );
    // The ACL itself refuses TICKET._APPLY (the module would refuse a
    // client too, with its own NOPERM message).
    let e = run(&mut app, APPLY).unwrap_err();
    assert!(
        e.to_string()
            .contains("no permissions to run the 'ticket._apply' command"),
        "{e}"
    );
    // init, two claims, a resell and its unlist, one cancel, two offers
    // (carol and dave waited while tickets were free, so they were
    // offered at once), one transfer, one scan: nothing forged or lost.
    assert_eq!(log_len(&redis, "ev"), 10);
}

#[test]
fn live_reads_status_and_is_refused_every_write() {
    let redis = acl_redis();
    init_event(&mut redis.conn(), "ev", 3);
    let mut live = login(&redis, "tg-live");
    let status: Vec<String> = redis::cmd("TICKET.STATUS")
        .arg("ev")
        .query(&mut live)
        .unwrap();
    assert_eq!(status[..4], ["total", "3", "remaining", "3"], "{status:?}");
    assert_all_allowed(
        &mut live,
        "tg-live",
        &[
            &["TICKET.HOLDER", "ev", "u"],
            &["INFO", "ticket"],
            &["TICKET.LAYOUT", "ev"],
            &["TICKET.SEATMAP", "ev"],
        ],
    );
    assert_all_refused(&mut live, "tg-live", FORGERIES);
    assert_all_refused(
        &mut live,
        "tg-live",
        &[
            &["TICKET.CLAIM", "ev", "u"],
            &["TICKET.CANCEL", "ev", "u"],
            &["TICKET.INIT", "other", "1"],
            &["TICKET.CLOSE", "ev"],
            &["TICKET.DROP", "ev", "FORCE"],
            &["XTRIM", "ticket:{ev}:log", "MAXLEN", "0"],
        ],
    );
    assert_eq!(log_len(&redis, "ev"), 1);
}

#[test]
fn the_operator_manages_events_and_writes_no_key_directly() {
    let redis = acl_redis();
    let mut op = redis.conn();
    assert_all_allowed(
        &mut op,
        "tg-operator",
        &[
            &["TICKET.INIT", "ev", "3"],
            &["TICKET.ALLOCATE", "ev", "p", "COUNT", "1"],
            &["TICKET.ALLOCATIONS", "ev"],
            &["TICKET.RELEASE", "ev", "p"],
            &["TICKET.CLOSE", "ev"],
            &["TICKET.OPEN", "ev"],
            &["TICKET.ORDER", "ev", "u"],
            &["HGETALL", "ticket:{ev}:meta"],
            &["XRANGE", "ticket:{ev}:log", "-", "+"],
            &["TICKET.DROP", "ev", "FORCE"],
            // What `ticketgate-sidecar rebuild --apply` sends.
            &[
                "TICKET.RESTORE",
                "ev",
                "BEGIN",
                "00000000000000aa",
                "3",
                "1",
                "open",
                "0",
                "0",
                "0",
                "1",
                "600000",
                "1",
                "0-0",
            ],
            &["TICKET.RESTORE", "ev", "ORDERS", "u", "1", "0"],
            &["TICKET.RESTORE", "ev", "COMMIT"],
        ],
    );
    assert_all_refused(&mut op, "tg-operator", FORGERIES);
    assert_all_refused(
        &mut op,
        "tg-operator",
        &[&["TICKET.CLAIM", "ev", "u"], &["TICKET.CONFIRM", "ev", "u"]],
    );
}

#[test]
fn the_sidecar_user_writes_nothing_but_trims() {
    let redis = acl_redis();
    init_event(&mut redis.conn(), "ev", 3);
    let mut sc = login(&redis, "tg-sidecar");
    assert_all_allowed(
        &mut sc,
        "tg-sidecar",
        &[
            &["TICKET.STATUS", "ev"],
            &["XRANGE", "ticket:{ev}:log", "-", "+"],
            &["HGETALL", "ticket:{ev}:holders"],
            &["SCAN", "0", "MATCH", "ticket:{*}:log", "TYPE", "stream"],
            &["XTRIM", "ticket:{ev}:log", "MAXLEN", "0"],
            // the heal's anchor (set before each trim) and its reads
            &["SET", "ticket:{ev}:synced", "1-0 0123456789abcdef"],
            &["GET", "ticket:{ev}:synced"],
            // the heal is done: the note of answers is closed
            &["TICKET.HEALED", "ev"],
        ],
    );
    // The heal re-applies lost writes: the module checks each one (here
    // the user holds nothing to cancel), the ACL lets the sidecar ask.
    let e = run(
        &mut sc,
        &[
            "TICKET.REAPPLY",
            "ev",
            "op",
            "cancel",
            "event",
            "ev",
            "user",
            "nobody",
            "ticket",
            "1",
            "at",
            "1",
        ],
    )
    .unwrap_err();
    assert!(e.to_string().contains("CHANGED"), "{e}");
    assert_all_refused(&mut sc, "tg-sidecar", FORGERIES);
    assert_all_refused(
        &mut sc,
        "tg-sidecar",
        &[
            &["SET", "ticket:{ev}:log", "x"],
            &["SET", "ticket:{ev}:holders", "x"],
            &["TICKET.CLAIM", "ev", "u"],
            &["TICKET.INIT", "other", "1"],
            &["TICKET.DROP", "ev", "FORCE"],
            &["TICKET.RESTORE", "ev", "COMMIT"],
            &["XTRIM", "ticket:{ev}:holders", "MAXLEN", "0"],
            &["GET", "unrelated"],
        ],
    );
}

#[test]
fn a_replica_syncs_as_tg_replica_which_may_do_nothing_else() {
    let primary = acl_redis();
    let port = primary.port().to_string();
    let replica = RedisServer::start_secure(
        None,
        Some(OPERATOR),
        &[
            "--aclfile",
            &acl_file(),
            "--replicaof",
            "127.0.0.1",
            &port,
            "--masteruser",
            "tg-replica",
            "--masterauth",
            "change-me-tg-replica",
        ],
    );
    init_event(&mut primary.conn(), "ev", 3);
    let mut live = login(&replica, "tg-live");
    wait_until(Duration::from_secs(20), "the replica has the event", || {
        redis::cmd("TICKET.STATUS")
            .arg("ev")
            .query::<Vec<redis::Value>>(&mut live)
            .is_ok()
    });
    let mut repl = login(&primary, "tg-replica");
    assert_all_refused(&mut repl, "tg-replica", FORGERIES);
    assert_all_refused(
        &mut repl,
        "tg-replica",
        &[&["TICKET.STATUS", "ev"], &["GET", "x"], &["INFO"]],
    );
}

/// `url` (`mysql://root@host:port/db`) logging in as `user` instead.
fn mysql_as(url: &str, user: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.rsplit_once('@').map(|(_, h)| h).unwrap_or(rest);
    format!("{scheme}://{user}:change-me-{user}@{host}")
}

/// Runs deploy/mysql-grants.sql as root for the schema of `db_url`.
fn apply_grants(db_url: &str) {
    let schema = db_url.rsplit('/').next().unwrap();
    let script = std::fs::read_to_string(workspace_root().join("deploy/mysql-grants.sql")).unwrap();
    let script = script.replace("`ticketgate`", &format!("`{schema}`"));
    let mut root = mysql::Conn::new(mysql::Opts::from_url(db_url).unwrap()).unwrap();
    let mut sets = root
        .query_iter(script)
        .expect("run deploy/mysql-grants.sql");
    while let Some(set) = sets.iter() {
        for row in set {
            row.expect("a statement of deploy/mysql-grants.sql");
        }
    }
}

/// Asserts that the DML-only user is refused DDL, DELETE and other schemas.
fn assert_dml_only(url: &str) {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(url).unwrap()).unwrap();
    for sql in [
        "CREATE TABLE evil (a INT)",
        "DROP TABLE ticket_event",
        "ALTER TABLE ticket_stock ADD COLUMN x INT",
        "DELETE FROM ticket_participation",
        "SELECT * FROM mysql.user",
    ] {
        match c.query_drop(sql) {
            Err(mysql::Error::MySqlError(e)) => assert!(
                [1142, 1044, 1143].contains(&e.code),
                "{sql}: unexpected error {e}"
            ),
            other => panic!("the sidecar's MySQL user could run {sql}: {other:?}"),
        }
    }
}

#[test]
fn the_sidecar_drains_as_tg_sidecar_into_mysql_as_the_dml_only_user() {
    let mut redis = acl_redis();
    let mut op = redis.conn();
    let mut app = login(&redis, "tg-app");
    let db = fresh_database("acl_drain");
    apply_grants(&db);
    // Only the migration user can create the schema.
    let (st, out) = sidecar_cmd(
        "redis://127.0.0.1:1/",
        &mysql_as(&db, "tg-sidecar"),
        &["migrate"],
    );
    assert!(!st.success(), "the daemon user could migrate: {out}");
    migrate(&mysql_as(&db, "tg-migrate"));
    assert_dml_only(&mysql_as(&db, "tg-sidecar"));

    init_event(&mut op, "early", 10);
    claim_users(&mut app, "early", 0..4);
    let redis_url = redis.url_as("tg-sidecar", "change-me-tg-sidecar");
    let mysql_url = mysql_as(&db, "tg-sidecar");
    let sc = Sidecar::start(&redis_url, &mysql_url, &["--rescan-interval", "3600"]);
    wait_synced(&mut op, &db, "early", Duration::from_secs(30), &|| sc.log());

    // Found through SUBSCRIBE ticket:events (the periodic rescan is off).
    init_event(&mut op, "late", 5);
    claim_users(&mut app, "late", 0..5);
    assert_all_allowed(&mut app, "tg-app", &[&["TICKET.CANCEL", "late", "u1"]]);
    wait_synced(&mut op, &db, "late", Duration::from_secs(30), &|| sc.log());
    assert_eq!(log_len(&redis, "late"), 0, "trimmed by tg-sidecar");
    assert!(!sc.log().contains("NOPERM"), "{}", sc.log());
    assert!(!sc.log().contains("denied"), "{}", sc.log());

    let (st, out) = sidecar_cmd(&redis_url, &mysql_url, &["reconcile"]);
    assert!(st.success(), "reconcile as tg-sidecar: {out}");
    assert!(out.contains("consistent: 2 event(s) checked"), "{out}");

    // Redis (no AOF) restarts empty: the verifier, as tg-sidecar, finds
    // both events lost, and the operator rebuilds them (Redis as
    // tg-operator, MySQL as the DML-only user) without a refused command.
    redis.kill();
    redis.start_again();
    wait_until(Duration::from_secs(60), "both events quarantined", || {
        sc.log().matches("QUARANTINED (vanished)").count() >= 2
    });
    let operator_url = redis.url_as(OPERATOR.0, OPERATOR.1);
    for event in ["early", "late"] {
        let args = ["rebuild", "--event", event, "--apply"];
        let (st, out) = sidecar_cmd(&operator_url, &mysql_url, &args);
        assert!(st.success(), "rebuild {event} as tg-operator: {out}");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while sc.log().matches(": restore ").count() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "both restores applied within 60 s:\n{}",
            sc.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (st, out) = sidecar_cmd(&redis_url, &mysql_url, &["reconcile", "--wait", "30"]);
    assert!(
        st.success(),
        "reconcile after the rebuilds: {out}\n{}",
        sc.log()
    );
    assert!(!sc.log().contains("NOPERM"), "{}", sc.log());
    let mut app = login(&redis, "tg-app");
    assert_all_allowed(&mut app, "tg-app", &[&["TICKET.CLAIM", "late", "u9"]]);
}

/// `ACL SETUSER` arguments of one `user` line of an ACL file: the words,
/// with a parenthesised selector kept as one argument.
fn setuser_args(line: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut in_selector = false;
    for word in line.split_whitespace().skip(1) {
        match out.last_mut() {
            Some(last) if in_selector => {
                last.push(' ');
                last.push_str(word);
            }
            _ => out.push(word.to_owned()),
        }
        if word.starts_with('(') {
            in_selector = true;
        }
        if word.ends_with(')') {
            in_selector = false;
        }
    }
    out
}

/// Creates the users of deploy/users.acl on every node, except `default`
/// (the cluster harness keeps using it).
fn load_roles_into(cluster: &Cluster) {
    let file = std::fs::read_to_string(acl_file()).unwrap();
    for i in 0..cluster.len() {
        let mut c = cluster.conn(i);
        for line in file.lines().filter(|l| l.starts_with("user tg-")) {
            let mut cmd = redis::cmd("ACL");
            cmd.arg("SETUSER").arg(setuser_args(line));
            let () = cmd.query(&mut c).unwrap_or_else(|e| panic!("{line}: {e}"));
        }
    }
}

#[test]
fn the_roles_work_on_a_cluster() {
    let cluster = Cluster::start(3, 0);
    load_roles_into(&cluster);
    let with_user = |user: &str| -> Vec<String> {
        cluster
            .ports()
            .iter()
            .map(|p| format!("redis://{user}:change-me-{user}@127.0.0.1:{p}/"))
            .collect()
    };
    let mut op = redis::cluster::ClusterClient::new(with_user("tg-operator"))
        .unwrap()
        .get_connection()
        .unwrap();
    let mut app = redis::cluster::ClusterClient::new(with_user("tg-app"))
        .unwrap()
        .get_connection()
        .unwrap();
    let db = fresh_database("acl_cluster");
    migrate(&db);
    let events = ["a", "b", "c", "d", "e", "f"];
    for e in events {
        init_event(&mut op, e, 5);
        claim_users(&mut app, e, 0..3);
    }
    let refused = redis::cmd("TICKET.DROP")
        .arg("a")
        .arg("FORCE")
        .query::<i64>(&mut app);
    assert_eq!(refused.unwrap_err().code(), Some("NOPERM"));
    let sidecar_url = &with_user("tg-sidecar")[0];
    let sc = Sidecar::start(sidecar_url, &db, &[]);
    for e in events {
        let mut node = cluster.conn(cluster.owner_of_event(e));
        wait_synced(&mut node, &db, e, Duration::from_secs(40), &|| sc.log());
    }
    assert!(!sc.log().contains("NOPERM"), "{}", sc.log());
}
