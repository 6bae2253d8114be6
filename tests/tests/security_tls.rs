//! End-to-end TLS: the sidecar drains a TLS-only Redis (client certificate
//! required), and a TLS-only Redis Cluster, into a TLS-only MariaDB, with
//! certificates made by the test;
//! a wrong CA, a plain client to a TLS-only server and a TLS client to a
//! plain server are refused at once, with an error naming what to check.

#[path = "support/sidecar.rs"]
mod support;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::*;
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::tls::TestPki;
use ticketgate_tests::{fresh_database, fresh_database_on, MariaDb, RedisServer};

/// One CA for the test process and a MariaDB that accepts TLS only.
fn tls_mariadb() -> &'static (TestPki, MariaDb) {
    static SHARED: OnceLock<(TestPki, MariaDb)> = OnceLock::new();
    SHARED.get_or_init(|| {
        let pki = TestPki::generate();
        let db = MariaDb::start_tls(&pki.server(), true);
        (pki, db)
    })
}

/// A fresh, migrated database on the TLS-only MariaDB: (plain URL for
/// the sidecar, URL verifying the CA for the test's own reads).
fn tls_database(prefix: &str) -> (String, String) {
    let (pki, db) = tls_mariadb();
    let url = fresh_database_on(db, prefix);
    let ca = path(&pki.ca());
    let (st, out) = sidecar_cmd(
        "redis://127.0.0.1:1/",
        &url,
        &["migrate", "--mysql-ca", &ca],
    );
    assert!(st.success(), "migrate over TLS failed: {out}");
    let verified = format!("{url}?root_cert_path={ca}");
    (url, verified)
}

fn path(p: &std::path::Path) -> String {
    p.display().to_string()
}

fn pki() -> &'static TestPki {
    &tls_mariadb().0
}

/// The certificate flags of a sidecar that trusts `ca` (client certificate included).
fn tls_flags(ca: &std::path::Path) -> Vec<String> {
    let client = pki().client();
    [
        ("--redis-ca", ca),
        ("--redis-cert", &client.cert),
        ("--redis-key", &client.key),
        ("--mysql-ca", &pki().ca()),
    ]
    .iter()
    .flat_map(|(flag, p)| [flag.to_string(), path(p)])
    .collect()
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Runs `args` and asserts a quick exit 2 whose output has every one of `wanted`.
fn assert_refused(redis_url: &str, mysql_url: &str, args: &[&str], wanted: &[&str]) {
    let started = Instant::now();
    let (st, out) = sidecar_cmd(redis_url, mysql_url, args);
    assert_eq!(st.code(), Some(2), "{args:?} should fail: {out}");
    for w in wanted {
        assert!(out.contains(w), "{args:?}: no {w:?} in:\n{out}");
    }
    // A configuration error is not retried for the 10 s startup timeout.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{args:?} retried: {out}"
    );
}

#[test]
fn sidecar_drains_over_tls_on_redis_and_mysql() {
    let redis = RedisServer::start_secure(Some(pki()), None, &["--tls-auth-clients", "yes"]);
    let mut r = redis.conn();
    let (db, db_verified) = tls_database("tls_drain");
    init_event(&mut r, "early", 10);
    claim_users(&mut r, "early", 0..4);
    let mut flags = tls_flags(&pki().ca());
    flags.extend(["--rescan-interval".into(), "3600".into()]);
    let sc = Sidecar::start(&redis.url(), &db, &strs(&flags));
    wait_synced(
        &mut r,
        &db_verified,
        "early",
        Duration::from_secs(30),
        &|| sc.log(),
    );

    // Created while the sidecar runs: found through the (TLS) subscriber.
    init_event(&mut r, "late", 5);
    claim_users(&mut r, "late", 0..5);
    let _: Option<i64> = redis::cmd("TICKET.CANCEL")
        .arg("late")
        .arg("u2")
        .query(&mut r)
        .unwrap();
    wait_synced(
        &mut r,
        &db_verified,
        "late",
        Duration::from_secs(30),
        &|| sc.log(),
    );
    let view = mysql_view(&db_verified, "late").unwrap();
    assert_eq!(view.active.len(), 4);
    assert_eq!(view.remaining, Some(1));

    let mut args = vec!["reconcile".to_string()];
    args.extend(tls_flags(&pki().ca()));
    let (st, out) = sidecar_cmd(&redis.url(), &db, &strs(&args));
    assert!(st.success(), "reconcile over TLS: {out}");
    assert!(out.contains("consistent: 2 event(s) checked"), "{out}");
}

#[test]
fn sidecar_drains_a_tls_cluster() {
    let cluster = Cluster::start_tls(3, 0, pki());
    let (db, db_verified) = tls_database("tls_cluster");
    let mut c = cluster.cluster_conn();
    let events = ["a", "b", "c", "d", "e", "f"];
    for e in events {
        init_event(&mut c, e, 5);
        claim_users(&mut c, e, 0..3);
    }
    let sc = Sidecar::start(&cluster.urls()[0], &db, &strs(&tls_flags(&pki().ca())));
    for e in events {
        let mut node = cluster.conn(cluster.owner_of_event(e));
        wait_synced(&mut node, &db_verified, e, Duration::from_secs(40), &|| {
            sc.log()
        });
    }
    assert!(sc.log().contains("(Redis Cluster)"), "{}", sc.log());
}

#[test]
fn a_wrong_ca_is_refused_with_a_clear_error() {
    let redis = RedisServer::start_secure(Some(pki()), None, &[]);
    let (db, _) = tls_database("tls_wrong_ca");
    let mut args = vec!["run".to_string()];
    args.extend(tls_flags(&pki().other_ca()));
    assert_refused(
        &redis.url(),
        &db,
        &strs(&args),
        &[
            "certificate verify failed",
            "--redis-ca",
            "cannot connect to Redis",
        ],
    );
    let other = path(&pki().other_ca());
    assert_refused(
        "redis://127.0.0.1:1/",
        &db,
        &["migrate", "--mysql-ca", &other],
        &[
            "certificate verify failed",
            "--mysql-ca",
            "cannot connect to MySQL",
        ],
    );
}

#[test]
fn plain_clients_of_tls_only_servers_are_refused() {
    let redis = RedisServer::start_secure(Some(pki()), None, &[]);
    let (db, _) = tls_database("tls_plain");
    let ca = path(&pki().ca());
    // MySQL without --mysql-ca: the server wants TLS.
    assert_refused(
        "redis://127.0.0.1:1/",
        &db,
        &["migrate", "--startup-timeout", "2"],
        &["Access denied", "TLS connections only", "--mysql-ca"],
    );
    // Redis over plain TCP to the TLS port.
    let plain = format!("redis://127.0.0.1:{}/", redis.port());
    assert_refused(
        &plain,
        &db,
        &["run", "--mysql-ca", &ca, "--startup-timeout", "2"],
        &["TLS connections only", "rediss://"],
    );
    // A certificate flag with a plain URL is a mistake, said at once.
    assert_refused(
        &plain,
        &db,
        &["run", "--mysql-ca", &ca, "--redis-ca", &ca],
        &["need a rediss:// or rediss+sentinel:// URL"],
    );
}

#[test]
fn tls_clients_of_plain_servers_are_refused() {
    let plain_redis = RedisServer::start();
    let (db, _) = tls_database("tls_to_plain");
    let ca = path(&pki().ca());
    let url = format!("rediss://127.0.0.1:{}/", plain_redis.port());
    assert_refused(
        &url,
        &db,
        &[
            "run",
            "--mysql-ca",
            &ca,
            "--redis-ca",
            &ca,
            "--startup-timeout",
            "2",
        ],
        &["TLS handshake", "redis:// URL"],
    );
    let plain_db = fresh_database("tls_to_plain_my");
    assert_refused(
        "redis://127.0.0.1:1/",
        &plain_db,
        &["migrate", "--mysql-ca", &ca],
        &["does not speak TLS", "--mysql-ca"],
    );
}
