//! The scripted unplanned failover the heal's end-to-end tests share
//! (`sidecar_heal_answers.rs`, `sidecar_heal_races.rs`,
//! `sidecar_heal_allocations.rs`): a primary and a
//! replica (AOF on), MySQL and the sidecar; the replica cut off (frozen,
//! its link dropped); then the sidecar stopped, the primary killed, the
//! stale replica promoted and given a new, strict replica; the sidecar
//! started on it to heal; and the checks that follow every heal.
#![allow(dead_code)]

use std::collections::HashMap;
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use redis::Connection;

use crate::msupport;
use crate::support::*;
use ticketgate_tests::{fresh_database, wait_until, RedisServer};

pub const LONG: Duration = Duration::from_secs(60);

/// The servers of one scripted failover.
pub struct Failover {
    /// The old primary until [`Failover::promote`], then the promoted one.
    pub primary: RedisServer,
    pub replica: Option<RedisServer>,
    pub strict: Option<RedisServer>,
    pub db: String,
    pub sidecar: Sidecar,
}

fn sidecar(redis: &RedisServer, db: &str) -> Sidecar {
    let args = ["--verify-interval", "1", "--metrics-addr", "127.0.0.1:0"];
    Sidecar::start(&redis.url(), db, &args)
}

/// Runs `parts` and `WAIT 1`; asserts how many replicas acknowledged it.
pub fn acked<T: redis::FromRedisValue>(c: &mut Connection, parts: &[&str], acks: i64) -> T {
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
    pub fn start(name: &str, init: &[&str]) -> Failover {
        let (primary, replica) = msupport::primary_and_aof_replica();
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

    pub fn conn(&self) -> Connection {
        self.primary.conn()
    }

    /// Waits until the log is drained and MySQL's live rows (held or
    /// sold) and buyers' holds of listed tickets are Redis's holders.
    pub fn synced(&mut self) {
        let mut c = self.conn();
        let mut seen = String::new();
        let mut done = |seen: &mut String| {
            let r = redis_view(&mut c, "e");
            let mut m: HashMap<String, i64> = self.rows().into_iter().map(|r| (r.0, r.1)).collect();
            m.extend(self.listing_holds());
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
    pub fn cut_off(&mut self) {
        self.synced();
        let mut p = self.conn();
        msupport::replicate_all(&mut p);
        let replica = self.replica.as_ref().expect("a replica");
        msupport::cut_off(replica, &mut p);
    }

    /// The sidecar stops, the primary dies, the stale replica is promoted
    /// and gets a new, strict replica. MySQL has the lost writes.
    pub fn promote(&mut self) {
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
    pub fn heal(&mut self) {
        self.sidecar = sidecar(&self.primary, &self.db);
        wait_until(LONG, "the sidecar heals the event", || {
            self.sidecar.log().contains("event e: HEALED")
        });
        self.synced();
    }

    /// The conflicts: (user, ticket, reason, detail).
    pub fn conflicts(&self) -> Vec<(String, i64, String, String)> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&self.db).unwrap()).unwrap();
        c.exec(
            "SELECT COALESCE(user_id, ''), COALESCE(ticket_number, 0), reason, detail FROM ticket_conflict WHERE event_id = ? ORDER BY id",
            ("e",),
        )
        .unwrap()
    }

    /// MySQL's live rows: (user, ticket, status: `active` sold, `held`).
    pub fn rows(&self) -> Vec<(String, i64, String)> {
        let all = rows_of(&self.db, "e").unwrap();
        all.into_iter()
            .filter(|r| r.2 == "active" || r.2 == "held")
            .collect()
    }

    /// The buyers holding listed tickets in MySQL: (buyer, ticket).
    fn listing_holds(&self) -> Vec<(String, i64)> {
        let mut c = mysql::Conn::new(mysql::Opts::from_url(&self.db).unwrap()).unwrap();
        c.query("SELECT buyer, ticket_number FROM ticket_listing WHERE event_id = 'e' AND state = 'listed' AND buyer IS NOT NULL")
            .unwrap()
    }

    /// Redis == MySQL, `reconcile` clean, the strict replica and an AOF
    /// reload at the new primary's digest, the note closed by the heal.
    pub fn consistent(&mut self) {
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

/// One integer MySQL answers `sql` with (0 for none).
pub fn mysql_int(db: &str, sql: &str) -> i64 {
    let mut c = mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    c.query_first(sql).unwrap().unwrap_or(0)
}

/// (tickets, "held"/"sold") of `user` in Redis.
pub fn order(c: &mut Connection, user: &str) -> Option<(Vec<i64>, String)> {
    msupport::order(c, "e", user).map(|(t, state, _)| (t, state))
}

/// The conflict naming `user`, asserting there is exactly one.
pub fn conflict_of<'a>(
    all: &'a [(String, i64, String, String)],
    user: &str,
) -> &'a (String, i64, String, String) {
    let mine: Vec<_> = all.iter().filter(|c| c.0 == user).collect();
    assert_eq!(mine.len(), 1, "one conflict names {user}: {all:?}");
    assert_eq!(mine[0].2, "lost_in_failover", "{all:?}");
    mine[0]
}
