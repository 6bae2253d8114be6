//! End-to-end: `ticketgate-live` against a private redis-server with the
//! module — the current stock on connect, every claim, cancel and close
//! pushed with growing ids, `Last-Event-ID` on reconnect, 404 for unknown
//! events, heartbeats, one Redis read per tick whatever the number of
//! subscribers, a Redis restart under open streams, a replica as the only
//! source, an ACL user that may only `PING`, `INFO` and `TICKET.STATUS`,
//! `event: missing` for a dropped event that later comes back, a TLS-only
//! Redis verified against its CA (and refused with another CA), a draw
//! event's commitment, then its seed once drawn, and allocated stock.

#[path = "support/live.rs"]
mod support;

use std::time::Duration;

use support::*;
use ticketgate_tests::{wait_until, RedisServer};

fn claim(c: &mut redis::Connection, event: &str, user: &str) {
    run(c, &["TICKET.CLAIM", event, user]);
}

/// Reads stock messages until one has `remaining == n`; returns it.
fn until_remaining(s: &SseStream, n: i64) -> Message {
    s.until(SOON, &format!("remaining {n}"), |m| {
        m.event == "stock" && m.int("remaining") == n
    })
}

#[test]
fn pushes_current_value_then_claims_cancels_and_close_with_growing_ids() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "show", "5"]);
    claim(&mut c, "show", "early");
    let live = Live::start(&redis.url(), &[]);
    let s = live.subscribe("show", None);
    assert!(
        s.content_type.starts_with("text/event-stream"),
        "{}",
        s.content_type
    );
    assert_eq!(s.headers["x-accel-buffering"], "no");
    assert_eq!(s.headers["cache-control"], "no-cache");

    let first = s.stock(SOON);
    let j = first.json();
    assert_eq!(j["event"], "show");
    assert_eq!(
        (j["total"].as_i64(), j["remaining"].as_i64()),
        (Some(5), Some(4))
    );
    assert_eq!(
        (j["claimed"].as_i64(), j["held"].as_i64()),
        (Some(1), Some(0))
    );
    assert_eq!(
        (j["status"].as_str(), j["waiting"].as_i64()),
        (Some("open"), Some(0))
    );
    assert!(
        j["at"].as_u64().is_some_and(|t| t > 1_600_000_000_000),
        "{j}"
    );

    assert!(
        j.get("allocated").is_none(),
        "no allocations, no field: {j}"
    );

    claim(&mut c, "show", "a");
    let after_claim = until_remaining(&s, 3);
    run(&mut c, &["TICKET.CANCEL", "show", "a"]);
    let after_cancel = until_remaining(&s, 4);
    // Allocated stock leaves `remaining` and shows as `allocated`.
    run(&mut c, &["TICKET.ALLOCATE", "show", "house", "COUNT", "2"]);
    let allocated = until_remaining(&s, 2);
    assert_eq!(allocated.int("allocated"), 2, "{}", allocated.data);
    run(&mut c, &["TICKET.RELEASE", "show", "house"]);
    let released = until_remaining(&s, 4);
    assert!(
        released.json().get("allocated").is_none(),
        "{}",
        released.data
    );
    run(&mut c, &["TICKET.CLOSE", "show"]);
    let closed = s.until(SOON, "status closed", |m| m.json()["status"] == "closed");
    let ids: Vec<u64> = [&first, &after_claim, &after_cancel, &allocated, &closed]
        .iter()
        .map(|m| m.id.expect("every message has an id"))
        .collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids must grow: {ids:?}"
    );
    assert_eq!(closed.int("remaining"), 4);
}

#[test]
fn last_event_id_skips_a_value_already_seen_and_resends_an_older_one() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "resume", "9"]);
    let live = Live::start(&redis.url(), &["--heartbeat", "1"]);
    let keep = live.subscribe("resume", None);
    let current = keep.stock(SOON);
    let id = current.id.expect("id");

    // Reconnecting with the current id: nothing is resent (only heartbeats)...
    let same = live.subscribe("resume", Some(id));
    let got = same.until(SOON, "a heartbeat", |m| {
        m.comment.is_some() || m.event == "stock"
    });
    assert_eq!(
        got.comment.as_deref(),
        Some("heartbeat"),
        "value resent: {got:?}"
    );
    // ...but the next change is.
    claim(&mut c, "resume", "u1");
    let next = until_remaining(&same, 8);
    assert!(next.id.expect("id") > id);

    // An older id gets the current value at once.
    let older = live.subscribe("resume", Some(id));
    let m = older.stock(SOON);
    assert_eq!((m.int("remaining"), m.id), (8, next.id));
}

#[test]
fn unknown_and_invalid_events_are_clear_errors() {
    let redis = RedisServer::start();
    let live = Live::start(&redis.url(), &[]);
    let url = format!("{}/events/nope/stock", live.base());
    let (status, body) = SseStream::open(&url, None).err().expect("no stream");
    assert_eq!(status, 404);
    assert!(body.contains("nope") && body.contains("NOEVENT"), "{body}");
    let (status, body) = live.get("/events/a%7Bb%7D/stock");
    assert_eq!(status, 400, "{body}");
    let (status, page) = live.get("/events/nope");
    assert_eq!(status, 200);
    assert!(
        page.contains("EventSource") && page.contains("aria-live"),
        "{page}"
    );
    assert_eq!(live.get("/healthz"), (200, "ok\n".to_owned()));
}

#[test]
fn redis_load_does_not_grow_with_subscribers() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "crowd", "100"]);
    // Heartbeats every second let the dropped clients' reader threads (and
    // so their connections) end soon.
    let live = Live::start(&redis.url(), &["--max-rate", "10", "--heartbeat", "1"]);
    let streams: Vec<SseStream> = (0..40).map(|_| live.subscribe("crowd", None)).collect();
    for s in &streams {
        assert_eq!(s.stock(SOON).int("remaining"), 100);
    }
    assert_eq!(live.metric("ticketgate_live_subscribers"), 40.0);
    assert_eq!(live.metric("ticketgate_live_events_watched"), 1.0);
    let reads = |live: &Live| live.metric("ticketgate_live_redis_reads_total");
    let before = reads(&live);
    std::thread::sleep(Duration::from_secs(2));
    let per_second = (reads(&live) - before) / 2.0;
    // One poller, 10 reads/s, whatever the 40 subscribers do (slack for timing).
    assert!(
        per_second <= 15.0,
        "{per_second} reads/s for 40 subscribers"
    );
    assert!(
        per_second >= 2.0,
        "the poller stopped: {per_second} reads/s"
    );
    claim(&mut c, "crowd", "u");
    for s in &streams {
        until_remaining(s, 99);
    }
    drop(streams);
    wait_until(SOON, "the poller ends with its last subscriber", || {
        live.metric("ticketgate_live_events_watched") == 0.0
            && live.metric("ticketgate_live_subscribers") == 0.0
    });
}

#[test]
fn streams_survive_a_redis_restart_and_get_the_value_again() {
    let mut redis = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "phoenix", "10"]);
    let live = Live::start(&redis.url(), &["--heartbeat", "1"]);
    let s = live.subscribe("phoenix", None);
    let before = s.stock(SOON);
    drop(c);
    redis.stop();
    wait_until(SOON, "live notices that Redis is gone", || {
        live.get("/healthz").0 == 503
    });
    // The stream stays open meanwhile: heartbeats keep coming.
    s.until(SOON, "a heartbeat while Redis is down", |m| {
        m.comment.is_some()
    });
    redis.start_again();
    let again = s.stock(Duration::from_secs(30));
    assert_eq!(again.int("remaining"), 10, "same value, sent again");
    assert!(again.id > before.id);
    let mut c = redis.conn();
    claim(&mut c, "phoenix", "u1");
    until_remaining(&s, 9);
    assert!(live.metric("ticketgate_live_redis_errors_total") >= 1.0);
    assert_eq!(live.get("/healthz").0, 200);
}

#[test]
fn a_replica_is_enough() {
    let primary = RedisServer::start();
    let port = primary.port().to_string();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    let mut p = primary.conn();
    run(&mut p, &["TICKET.INIT", "mirror", "3"]);
    let mut r = replica.conn();
    wait_until(SOON, "the replica has the event", || {
        redis::cmd("TICKET.STATUS")
            .arg("mirror")
            .query::<redis::Value>(&mut r)
            .is_ok()
    });
    let live = Live::start(&replica.url(), &[]);
    let s = live.subscribe("mirror", None);
    assert_eq!(s.stock(SOON).int("remaining"), 3);
    claim(&mut p, "mirror", "u1");
    claim(&mut p, "mirror", "u2");
    until_remaining(&s, 1);
    let calls = |c: &mut redis::Connection| -> String {
        redis::cmd("INFO").arg("commandstats").query(c).unwrap()
    };
    assert!(
        !calls(&mut p).contains("cmdstat_ticket.status"),
        "the primary served STATUS reads"
    );
    assert!(calls(&mut r).contains("cmdstat_ticket.status"));
}

#[test]
fn a_user_that_may_only_read_status_is_enough() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "acl", "4"]);
    let rules = [
        "on",
        ">live-pw",
        "resetkeys",
        "%R~*",
        "-@all",
        "+ping",
        "+info",
        "+ticket.status",
    ];
    let mut setuser = vec!["ACL", "SETUSER", "live-ro"];
    setuser.extend(rules);
    run(&mut c, &setuser);
    let url = format!("redis://live-ro:live-pw@127.0.0.1:{}/", redis.port());
    let live = Live::start(&url, &[]);
    let s = live.subscribe("acl", None);
    assert_eq!(s.stock(SOON).int("remaining"), 4);
    claim(&mut c, "acl", "u1");
    until_remaining(&s, 3);
    assert_eq!(live.get("/healthz").0, 200);
    assert_eq!(
        live.metric("ticketgate_live_redis_errors_total"),
        0.0,
        "{}",
        live.log()
    );
}

#[test]
fn a_dropped_event_is_reported_missing_and_comes_back_when_recreated() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "phoenix2", "3"]);
    let live = Live::start(&redis.url(), &[]);
    let s = live.subscribe("phoenix2", None);
    let first = s.stock(SOON);
    run(&mut c, &["TICKET.DROP", "phoenix2", "FORCE"]);
    let gone = s.until(SOON, "event: missing", |m| m.event == "missing");
    assert_eq!(gone.json()["event"], "phoenix2");
    assert!(gone.id > first.id);
    run(&mut c, &["TICKET.INIT", "phoenix2", "7"]);
    let back = s.stock(SOON);
    assert_eq!(back.int("total"), 7);
    assert!(back.id > gone.id);
}

#[test]
fn a_tls_only_redis_is_read_over_verified_tls() {
    let pki = ticketgate_tests::tls::TestPki::generate();
    let redis = RedisServer::start_secure(Some(&pki), None, &[]);
    let url = redis.url();
    assert!(url.starts_with("rediss://"), "{url}");
    let mut c = redis.conn();
    run(&mut c, &["TICKET.INIT", "sealed", "2"]);
    let ca = pki.ca();
    let live = Live::start(&url, &["--redis-ca", ca.to_str().unwrap()]);
    let s = live.subscribe("sealed", None);
    assert_eq!(s.stock(SOON).int("remaining"), 2);
    claim(&mut c, "sealed", "u1");
    until_remaining(&s, 1);

    // A CA that did not sign the server's certificate: no connection.
    let other = pki.other_ca();
    let wrong = Live::start(&url, &["--redis-ca", other.to_str().unwrap()]);
    let (status, body) = wrong.get("/events/sealed/stock");
    assert_eq!(status, 503, "{body}");
    assert_eq!(wrong.get("/healthz").0, 503);
}

#[test]
fn a_draw_event_carries_its_commitment_then_its_seed() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    run(
        &mut c,
        &["TICKET.INIT", "lot", "3", "HOLD", "60000", "DRAW"],
    );
    run(&mut c, &["TICKET.INIT", "plain", "3"]);
    let live = Live::start(&redis.url(), &[]);
    let plain = live.subscribe("plain", None).stock(SOON).json();
    assert!(
        plain.get("draw").is_none() && plain.get("seed").is_none(),
        "{plain}"
    );
    let s = live.subscribe("lot", None);
    let before = s.stock(SOON).json();
    let commitment = before["draw"].as_str().expect("the commitment").to_owned();
    assert_eq!(commitment.len(), 64, "{before}");
    assert!(
        before.get("seed").is_none(),
        "secret before the draw: {before}"
    );
    run(&mut c, &["TICKET.WAIT", "lot", "fan0"]);
    run(&mut c, &["TICKET.OPEN", "lot"]);
    let after = s.until(SOON, "the seed", |m| {
        m.event == "stock" && m.json().get("seed").is_some()
    });
    let j = after.json();
    assert_eq!(j["draw"].as_str(), Some(commitment.as_str()));
    let seed = j["seed"].as_str().expect("hex");
    assert_eq!(
        protocol::draw::commitment(&unhex(seed)),
        commitment,
        "SHA-256(seed) = draw"
    );
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len() / 2)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}
