//! End-to-end (issue 30): the heal never takes back an answer the new
//! primary gave (docs/design.md "Healing after an unplanned failover").
//!
//! Each test scripts one history: a primary and a replica, the replica cut
//! off (frozen, its link dropped), unacknowledged writes the sidecar
//! applies to MySQL, then the sidecar stopped, the primary killed, the
//! stale replica promoted and given a new (strict) replica; the new
//! primary answers a user with a reply `WAIT 1` acknowledges but that
//! logs nothing; then the sidecar starts and heals. That answer stands:
//! the lost writes it contradicts are undone in MySQL and reported,
//! Redis equals MySQL, `reconcile` is clean, the strict replica and an AOF
//! reload reach the same `DEBUG DIGEST`, and the new primary's note of
//! answers is closed.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use redis::Connection;
use support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

const LONG: Duration = Duration::from_secs(60);

/// The servers of one scripted failover.
struct Failover {
    /// The old primary until [`Failover::promote`], then the promoted one.
    primary: RedisServer,
    replica: Option<RedisServer>,
    strict: Option<RedisServer>,
    db: String,
    sidecar: Sidecar,
}

fn sidecar(redis: &RedisServer, db: &str) -> Sidecar {
    let args = ["--verify-interval", "1", "--metrics-addr", "127.0.0.1:0"];
    Sidecar::start(&redis.url(), db, &args)
}

/// Runs `parts` and `WAIT 1`; asserts how many replicas acknowledged it.
fn acked<T: redis::FromRedisValue>(c: &mut Connection, parts: &[&str], acks: i64) -> T {
    let reply: T = msupport::cmd(parts)
        .query(c)
        .unwrap_or_else(|e| panic!("{parts:?}: {e}"));
    let timeout = if acks > 0 { 5000 } else { 300 };
    let got: i64 = redis::cmd("WAIT").arg(1).arg(timeout).query(c).unwrap();
    assert_eq!(got, acks, "WAIT 1 after {parts:?}");
    reply
}

impl Failover {
    /// A primary with a replica (AOF on: it is promoted later), MySQL
    /// and the sidecar; `init` creates the event `e`.
    fn start(name: &str, init: &[&str]) -> Failover {
        let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
        let replica = RedisServer::start_with(&[
            "--replicaof",
            "127.0.0.1",
            &primary.port().to_string(),
            "--appendonly",
            "yes",
            "--repl-diskless-sync-delay",
            "0",
        ]);
        msupport::wait_for_link(&replica);
        let db = fresh_database(name);
        migrate(&db);
        let sidecar = sidecar(&primary, &db);
        let mut p = primary.conn();
        msupport::ok(&mut p, init);
        Failover {
            primary,
            replica: Some(replica),
            strict: None,
            db,
            sidecar,
        }
    }

    fn conn(&self) -> Connection {
        self.primary.conn()
    }

    /// Waits until the log is drained and MySQL's live rows (held or
    /// sold) are Redis's holders.
    fn synced(&mut self) {
        let mut c = self.conn();
        let mut seen = String::new();
        let mut done = |seen: &mut String| {
            let r = redis_view(&mut c, "e");
            let m: HashMap<String, i64> = self.rows().into_iter().map(|r| (r.0, r.1)).collect();
            *seen = format!("Redis {r:?}, MySQL {m:?}");
            r.unsynced == 0 && r.holders == m
        };
        let end = Instant::now() + LONG;
        while !done(&mut seen) {
            assert!(
                Instant::now() < end,
                "not in sync: {seen}\n{}",
                tail(&self.sidecar.log(), 40)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The replica has everything so far; then it is cut off.
    fn cut_off(&mut self) {
        self.synced();
        let mut p = self.conn();
        msupport::replicate_all(&mut p);
        let replica = self.replica.as_ref().expect("a replica");
        msupport::cut_off(replica, &mut p);
    }

    /// The sidecar stops, the primary dies, the stale replica is promoted
    /// and gets a new, strict replica. MySQL has the lost writes.
    fn promote(&mut self) {
        self.synced();
        self.sidecar.kill9();
        // Killed before the replica thaws: it must not resync the lost
        // writes from it.
        self.primary.kill();
        let replica = self.replica.take().expect("a replica");
        msupport::signal(&replica, libc::SIGCONT);
        self.primary = replica;
        let mut r = self.conn();
        msupport::ok(&mut r, &["REPLICAOF", "NO", "ONE"]);
        self.strict = Some(msupport::strict_replica_of(
            &self.primary.port().to_string(),
        ));
    }

    /// The sidecar starts on the new primary and heals the event.
    fn heal(&mut self) {
        self.sidecar = sidecar(&self.primary, &self.db);
        wait_until(LONG, "the sidecar heals the event", || {
            self.sidecar.log().contains("event e: HEALED")
        });
        self.synced();
    }

    /// The conflicts: (user, ticket, reason, detail).
    fn conflicts(&self) -> Vec<(String, i64, String, String)> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&self.db).unwrap()).unwrap();
        c.exec(
            "SELECT COALESCE(user_id, ''), COALESCE(ticket_number, 0), reason, detail FROM ticket_conflict WHERE event_id = ? ORDER BY id",
            ("e",),
        )
        .unwrap()
    }

    /// MySQL's live rows: (user, ticket, status: `active` sold, `held`).
    fn rows(&self) -> Vec<(String, i64, String)> {
        let all = rows_of(&self.db, "e").unwrap();
        all.into_iter()
            .filter(|r| r.2 == "active" || r.2 == "held")
            .collect()
    }

    /// Redis == MySQL, `reconcile` clean, the strict replica and an AOF
    /// reload at the new primary's digest, the note closed by the heal.
    fn consistent(&mut self) {
        let (st, out) = sidecar_cmd(&self.primary.url(), &self.db, &["reconcile"]);
        assert!(st.success(), "reconcile:\n{out}");
        let mut r = self.conn();
        let note: Vec<String> = redis::cmd("HKEYS")
            .arg("ticket:{e}:answered")
            .query(&mut r)
            .unwrap();
        assert_eq!(note, ["closed"], "the heal closed the note");
        msupport::wait_replicated(&mut r, 1);
        let mut s = self.strict.as_ref().expect("a strict replica").conn();
        assert_eq!(msupport::digest(&mut s), msupport::digest(&mut r));
        let before = msupport::digest(&mut r);
        msupport::ok(&mut r, &["DEBUG", "LOADAOF"]);
        assert_eq!(msupport::digest(&mut r), before);
    }
}

/// (tickets, "held"/"sold") of `user` in Redis.
fn order(c: &mut Connection, user: &str) -> Option<(Vec<i64>, String)> {
    msupport::order(c, "e", user).map(|(t, state, _)| (t, state))
}

/// The conflict naming `user`, asserting there is exactly one.
fn conflict_of<'a>(
    all: &'a [(String, i64, String, String)],
    user: &str,
) -> &'a (String, i64, String, String) {
    let mine: Vec<_> = all.iter().filter(|c| c.0 == user).collect();
    assert_eq!(mine.len(), 1, "one conflict names {user}: {all:?}");
    assert_eq!(mine[0].2, "lost_in_failover", "{all:?}");
    mine[0]
}

/// The history of the issue: u's lost cancel of 1, v's lost claim of it,
/// u's repeat claim answered 1 by the new primary: u keeps 1.
#[test]
fn a_repeat_claim_answered_by_the_new_primary_keeps_its_ticket() {
    let mut f = Failover::start("heal_ans_claim", &["TICKET.INIT", "e", "10"]);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "u"], 0),
        Some(1)
    );
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "v"], 0), 1);
    f.promote();
    let mut r = f.conn();
    let told: i64 = acked(&mut r, &["TICKET.CLAIM", "e", "u"], 1);
    assert_eq!(told, 1, "the new primary tells u: your ticket is 1");
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(order(&mut r, "v"), None);
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    assert_eq!(all.len(), 2, "{all:?}");
    let u = conflict_of(&all, "u");
    assert!(
        u.3.starts_with("cancel of ticket(s) 1 by user \"u\""),
        "{u:?}"
    );
    assert!(u.3.contains("answered user \"u\""), "{u:?}");
    let v = conflict_of(&all, "v");
    assert!(
        v.3.starts_with("claim of ticket(s) 1 by user \"v\""),
        "{v:?}"
    );
    f.consistent();
}

/// u holds ticket 1, sold (acknowledged); then the replica is cut off and
/// u's cancel of it is answered but never replicated: a lost write.
fn sold_then_lost_cancel(name: &str) -> (Failover, Connection) {
    let init = ["TICKET.INIT", "e", "10", "HOLD", "600000"];
    let mut f = Failover::start(name, &init);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 1), 1);
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "u"], 0),
        Some(1)
    );
    (f, p)
}

/// u's order was sold; its lost cancel is undone because the new primary
/// answered u's confirm (of the sold order: nothing logged).
#[test]
fn a_confirm_answered_by_the_new_primary_undoes_a_lost_cancel() {
    let (mut f, _p) = sold_then_lost_cancel("heal_ans_confirm");
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(conflict_of(&all, "u").3.contains("answered user \"u\""));
    f.consistent();
}

/// A lost cancel, a lost short hold of the same ticket and its lost
/// expiry; the new primary answers u's confirm of the sold order. The
/// expiry must not win: u keeps 1, sold.
#[test]
fn an_expiry_lost_after_an_acknowledged_confirm_does_not_win() {
    let (mut f, mut p) = sold_then_lost_cancel("heal_ans_expiry");
    let short = ["TICKET.CLAIM", "e", "u", "HOLD", "300"];
    assert_eq!(acked::<i64>(&mut p, &short, 0), 1);
    wait_until(LONG, "the old primary expires the short hold", || {
        msupport::status_int(&mut p, "e", "held") == 0
    });
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.CONFIRM", "e", "u"], 1), 1);
    f.heal();

    assert_eq!(order(&mut r, "u"), Some((vec![1], "sold".into())));
    assert_eq!(f.rows(), [("u".into(), 1, "active".into())]);
    let all = f.conflicts();
    // the cancel and the hold are u's writes; the expiry is the module's
    assert_eq!(all.len(), 2, "{all:?}");
    assert!(all.iter().all(|c| c.0 == "u" && c.2 == "lost_in_failover"));
    assert!(f.sidecar.log().contains("lost expiry"), "the expiry undone");
    f.consistent();
}

/// h's lost cancel offered the ticket to w, the head of the waiting list;
/// the new primary answered w's leave. The offer must not come back.
#[test]
fn an_offer_lost_after_an_acknowledged_leave_does_not_come_back() {
    let init = ["TICKET.INIT", "e", "1", "HOLD", "600000", "OFFER", "600000"];
    let mut f = Failover::start("heal_ans_offer", &init);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "h"], 1), 1);
    assert_eq!(acked::<i64>(&mut p, &["TICKET.WAIT", "e", "w"], 1), 1);
    f.cut_off();
    assert_eq!(
        acked::<Option<i64>>(&mut p, &["TICKET.CANCEL", "e", "h"], 0),
        Some(1)
    );
    assert_eq!(
        order(&mut p, "w"),
        Some((vec![1], "held".into())),
        "offered"
    );
    f.promote();
    let mut r = f.conn();
    assert_eq!(acked::<i64>(&mut r, &["TICKET.LEAVE", "e", "w"], 1), 1);
    f.heal();

    // h's cancel (nobody answered h since) is re-applied; w's offer is not.
    assert_eq!(order(&mut r, "w"), None);
    assert_eq!(order(&mut r, "h"), None);
    assert_eq!(
        msupport::int_or_nil(&mut r, &["TICKET.POSITION", "e", "w"]),
        None
    );
    assert!(f.rows().is_empty(), "{:?}", f.rows());
    assert!(
        f.conflicts().is_empty(),
        "an offer is the module's decision"
    );
    let log = f.sidecar.log();
    assert!(log.contains("lost offer"), "{}", tail(&log, 20));
    assert!(log.contains("answered user \"w\""), "{}", tail(&log, 20));
    f.consistent();
}
