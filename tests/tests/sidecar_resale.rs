//! Face-value resale drained to MySQL (migration V11, docs/design.md
//! "After the sale"), against real servers. A sold-out seated hall whose
//! 200 listings go to 400 waiting parties that confirm, cancel or let
//! their short offers expire, with the sidecar draining: no conflict row,
//! each listed seat resold at most once and every `resold` of Redis's log
//! a `ticket_resold` row a generation up (and a `ticket_owner` row), the
//! stock unmoved, MySQL's live orders equal to Redis's, the listings left
//! equal to Redis's `resale`, and `audit-seats` passing. A GA event: a
//! party's claim and an expiring hold of free and listed tickets (the free
//! ones back in stock, the listed one relisted), an expiry, a cancel, an
//! unlist. A seated party of free seats and a listed one.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use msupport::{
    int, int_array, int_or_nil, key, ok, order, resale_hall, rows_of_seats, status_int,
};
use mysql::prelude::Queryable;
use redis::Connection;
use support::*;
use ticketgate_tests::{fresh_database, RedisServer};

/// The resold tickets by Redis: (ticket, seller, buyer) for each ticket a
/// generation up (`gens`; no transfers here), the seller from `sellers`
/// (who listed it), the buyer its owner now.
fn resold(
    c: &mut Connection,
    event: &str,
    sellers: &BTreeMap<i64, String>,
) -> Vec<(i64, String, String)> {
    let gens: BTreeMap<i64, i64> = redis::cmd("HGETALL")
        .arg(key(event, "gens"))
        .query(c)
        .expect("HGETALL gens");
    let mut owner = BTreeMap::new();
    for (user, (tickets, _)) in redis_orders(c, event) {
        for t in tickets {
            owner.insert(t, user.clone());
        }
    }
    let up = gens.into_iter().filter(|(_, g)| *g > 1).map(|(t, g)| {
        assert_eq!(g, 2, "ticket {t} resold twice");
        (t, sellers[&t].clone(), owner[&t].clone())
    });
    up.collect()
}

/// Redis's orders: user -> (tickets, state), from the holders hash.
fn redis_orders(c: &mut Connection, event: &str) -> BTreeMap<String, (Vec<i64>, String)> {
    let users: BTreeMap<String, String> = redis::cmd("HGETALL")
        .arg(key(event, "holders"))
        .query(c)
        .expect("HGETALL holders");
    let mut out = BTreeMap::new();
    for user in users.keys() {
        let (tickets, state, _) = order(c, event, user).expect("an order");
        let state = if state == "held" { "held" } else { "active" };
        out.insert(user.clone(), (tickets, state.to_string()));
    }
    out
}

/// MySQL's live orders: user -> (tickets, status).
fn mysql_orders(my: &mut mysql::Conn, event: &str) -> BTreeMap<String, (Vec<i64>, String)> {
    let rows: Vec<(String, i64, String)> = my
        .exec(
            "SELECT user_id, ticket_number, CAST(status AS CHAR) FROM ticket_participation WHERE event_id = ? AND live_ticket IS NOT NULL ORDER BY ticket_number",
            (event,),
        )
        .unwrap();
    let mut out: BTreeMap<String, (Vec<i64>, String)> = BTreeMap::new();
    for (user, t, status) in rows {
        let o = out.entry(user).or_insert((Vec::new(), status));
        o.0.push(t);
    }
    out
}

/// Waits until the sidecar applied the whole log (`unsynced` 0).
fn drained(c: &mut Connection, event: &str, sc: &Sidecar) {
    let end = Instant::now() + Duration::from_secs(60);
    while status_int(c, event, "unsynced") > 0 {
        assert!(
            Instant::now() < end,
            "not drained:\n{}",
            tail(&sc.log(), 40)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A Redis server, a fresh migrated database `name` and a sidecar
/// draining one into the other.
fn draining(name: &str) -> (RedisServer, String, Sidecar) {
    let server = RedisServer::start();
    let db = fresh_database(name);
    migrate(&db);
    let sc = Sidecar::start(&server.url(), &db, &["--verify-interval", "3600"]);
    (server, db, sc)
}

/// Waits until `user`'s hold has run out.
fn gone(c: &mut Connection, event: &str, user: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while order(c, event, user).is_some() {
        assert!(Instant::now() < deadline, "{user}'s hold never ran out");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// What MySQL holds of the event's resale: no conflict, the `resold`
/// records as `ticket_resold` (and `ticket_owner`) rows at generation 2,
/// the live orders Redis's, the stock `remaining`, `listed` still listed.
fn check_mysql(
    c: &mut Connection,
    (db, event): (&str, &str),
    sellers: &BTreeMap<i64, String>,
    sc: &Sidecar,
) -> usize {
    drained(c, event, sc);
    let my = &mut mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap();
    let conflicts: Vec<(String, String)> = my
        .exec(
            "SELECT reason, detail FROM ticket_conflict WHERE event_id = ?",
            (event,),
        )
        .unwrap();
    assert!(
        conflicts.is_empty(),
        "{conflicts:?}\n{}",
        tail(&sc.log(), 40)
    );
    let want = resold(c, event, sellers);
    let got: Vec<(i64, String, String, i64)> = my
        .exec(
            "SELECT ticket_number, seller, buyer, gen FROM ticket_resold WHERE event_id = ? ORDER BY ticket_number",
            (event,),
        )
        .unwrap();
    let got_pairs: Vec<(i64, String, String)> = got
        .iter()
        .map(|(t, s, b, _)| (*t, s.clone(), b.clone()))
        .collect();
    assert_eq!(got_pairs, want);
    assert!(got.iter().all(|r| r.3 == 2), "{got:?}");
    let owners: Option<i64> = my
        .exec_first(
            "SELECT COUNT(*) FROM ticket_owner WHERE event_id = ? AND gen = 2",
            (event,),
        )
        .unwrap();
    assert_eq!(owners, Some(want.len() as i64));
    assert_eq!(mysql_orders(my, event), redis_orders(c, event));
    let remaining: Option<i64> = my
        .exec_first(
            "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
            (event,),
        )
        .unwrap();
    assert_eq!(remaining, Some(status_int(c, event, "remaining")));
    let listed: Option<i64> = my
        .exec_first(
            "SELECT COUNT(*) FROM ticket_listing WHERE event_id = ? AND state = 'listed' AND buyer IS NULL",
            (event,),
        )
        .unwrap();
    let in_redis = msupport::status(c, event)
        .get("resale")
        .map_or(0, |v| redis::from_redis_value::<i64>(v.clone()).unwrap());
    assert_eq!(listed, Some(in_redis));
    want.len()
}

#[test]
fn a_sold_out_hall_resells_through_the_sidecar() {
    let (server, db, sc) = draining("sc_resale_hall");
    let c = &mut server.conn();
    let sellers = resale_hall(c, "h", 44);
    assert_eq!(status_int(c, "h", "remaining"), 0, "the stock moved");
    let sold = check_mysql(c, (&db, "h"), &sellers, &sc);
    assert!(sold > 0, "nobody bought");
    let (st, out) = sidecar_cmd(&server.url(), &db, &["audit-seats", "--event", "h"]);
    assert_eq!(st.code(), Some(0), "{out}");
}

#[test]
fn ga_resale_claims_holds_expiries_and_unlists_reach_mysql() {
    let (server, db, sc) = draining("sc_resale_ga");
    let c = &mut server.conn();
    ok(c, &["TICKET.INIT", "g", "6", "LIMIT", "4", "HOLD", "200"]);
    let sold = |c: &mut Connection, user: &str, n: &str| {
        int_array(c, &["TICKET.CLAIM", "g", user, "COUNT", n, "HOLD", "0"])
    };
    assert_eq!(sold(c, "alice", "2"), [1, 2]);
    assert_eq!(sold(c, "bob", "2"), [3, 4]);
    assert_eq!(int(c, &["TICKET.RESELL", "g", "alice", "TICKETS", "2"]), 1);
    assert_eq!(int(c, &["TICKET.RESELL", "g", "bob"]), 2);
    // fred's hold of 5, 6 and listed 2 runs out: 5 and 6 back in stock,
    // 2 back on alice's list.
    let held = int_array(c, &["TICKET.CLAIM", "g", "fred", "COUNT", "3"]);
    assert_eq!(held, [2, 5, 6]);
    gone(c, "g", "fred");
    assert_eq!(status_int(c, "g", "remaining"), 2);
    // A party of 3: the house's 5 and 6, then listed 2 (sold at once).
    assert_eq!(sold(c, "carl", "3"), [2, 5, 6]);
    // dora's hold of 3 runs out: back on bob's list.
    assert_eq!(int(c, &["TICKET.CLAIM", "g", "dora"]), 3);
    // eve's hold of 4 is cancelled; then she holds it again and confirms.
    assert_eq!(
        int_array(c, &["TICKET.CLAIM", "g", "eve", "COUNT", "1"]),
        [4]
    );
    assert_eq!(int_or_nil(c, &["TICKET.CANCEL", "g", "eve"]), Some(4));
    gone(c, "g", "dora");
    assert_eq!(
        int_array(c, &["TICKET.CLAIM", "g", "eve", "COUNT", "1"]),
        [3]
    );
    assert!(int(c, &["TICKET.CONFIRM", "g", "eve"]) > 0);
    // bob takes back 4, unheld.
    assert_eq!(int(c, &["TICKET.UNLIST", "g", "bob"]), 1);
    assert_eq!(status_int(c, "g", "remaining"), 0);
    let sellers = BTreeMap::from([(2, "alice".into()), (3, "bob".into()), (4, "bob".into())]);
    assert_eq!(check_mysql(c, (&db, "g"), &sellers, &sc), 2);
    let my = &mut mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let states: Vec<(i64, String)> = my
        .exec(
            "SELECT ticket_number, CAST(state AS CHAR) FROM ticket_listing WHERE event_id = 'g' ORDER BY id",
            (),
        )
        .unwrap();
    let want = [(2, "sold"), (3, "sold"), (4, "unlisted")];
    let want: Vec<(i64, String)> = want.iter().map(|(t, s)| (*t, s.to_string())).collect();
    assert_eq!(states, want);
}

/// A seated party taking free seats and a listed one in one order: the
/// free ones from stock, the listed one the seller's until resold; MySQL
/// equals Redis and `audit-seats` passes.
#[test]
fn a_seated_party_of_free_and_listed_seats_reaches_mysql() {
    let (server, db, sc) = draining("sc_resale_mixed");
    let c = &mut server.conn();
    let layout = rows_of_seats("A", 1, 6);
    ok(
        c,
        &["TICKET.INIT", "m", "6", "LIMIT", "4", "SEATS", &layout],
    );
    let pick = |c: &mut Connection, user: &str, seats: [&str; 2]| {
        let ask = [
            "TICKET.CLAIM",
            "m",
            user,
            "HOLD",
            "0",
            "SEATS",
            seats[0],
            seats[1],
        ];
        int_array(c, &ask)
    };
    assert_eq!(pick(c, "s", ["1", "2"]), [1, 2]);
    assert_eq!(pick(c, "t", ["5", "6"]), [5, 6]);
    assert_eq!(int(c, &["TICKET.RESELL", "m", "s", "TICKETS", "2"]), 1);
    let party = ["TICKET.CLAIM", "m", "b", "COUNT", "3", "HOLD", "0"];
    assert_eq!(int_array(c, &party), [2, 3, 4]);
    assert_eq!(status_int(c, "m", "remaining"), 0);
    let sellers = BTreeMap::from([(2, "s".into())]);
    assert_eq!(check_mysql(c, (&db, "m"), &sellers, &sc), 1);
    let (st, out) = sidecar_cmd(&server.url(), &db, &["audit-seats", "--event", "m"]);
    assert_eq!(st.code(), Some(0), "{out}");
}

/// While a buyer holds a listed ticket, Redis counts it in the seller's
/// sold order and the buyer's held one, MySQL on the seller's row and the
/// listing: `reconcile` must read both as the same, and name a drift (of
/// the buyer, or of the listing itself).
#[test]
fn reconcile_counts_a_buyers_hold_of_a_listed_ticket() {
    let (server, db, sc) = draining("sc_resale_reconcile");
    let c = &mut server.conn();
    ok(c, &["TICKET.INIT", "r", "2", "HOLD", "600000"]);
    for user in ["ann", "bea"] {
        assert!(int(c, &["TICKET.CLAIM", "r", user, "HOLD", "0"]) > 0);
    }
    assert_eq!(int(c, &["TICKET.RESELL", "r", "ann"]), 1);
    assert_eq!(int(c, &["TICKET.CLAIM", "r", "cy"]), 1, "cy holds ann's 1");
    drained(c, "r", &sc);
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile", "--event", "r"]);
    assert!(st.success(), "{out}");
    let my = &mut mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    my.query_drop("UPDATE ticket_listing SET buyer = 'dee' WHERE event_id = 'r'")
        .unwrap();
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile", "--event", "r"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(out.contains("dee") && out.contains("cy"), "{out}");
    // A listing MySQL lost (the buyer put right): the ticket is named.
    my.query_drop(
        "UPDATE ticket_listing SET buyer = 'cy', state = 'unlisted' WHERE event_id = 'r'",
    )
    .unwrap();
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile", "--event", "r"]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(
        out.contains(r#"ticket 1 is listed by "ann" in Redis but not listed in MySQL"#),
        "{out}"
    );
}

/// A rebuild does not restore listings: its plan says so, the tickets
/// come back as their sellers' sold ones, MySQL ends the listing rows at
/// the restore, and a seller lists again without a conflict.
#[test]
fn a_rebuild_ends_the_listings_and_a_seller_lists_again() {
    let (server, db, sc) = draining("sc_resale_rebuild");
    let c = &mut server.conn();
    ok(c, &["TICKET.INIT", "rb", "2", "HOLD", "600000"]);
    for user in ["ann", "bea"] {
        assert!(int(c, &["TICKET.CLAIM", "rb", user, "HOLD", "0"]) > 0);
    }
    assert_eq!(int(c, &["TICKET.RESELL", "rb", "ann"]), 1);
    assert_eq!(int(c, &["TICKET.RESELL", "rb", "bea"]), 1);
    assert_eq!(int(c, &["TICKET.CLAIM", "rb", "cy"]), 1, "cy holds ann's 1");
    drained(c, "rb", &sc);
    let rebuild = |args: &[&str]| {
        let mut all = vec!["rebuild", "--event", "rb"];
        all.extend_from_slice(args);
        sidecar_cmd(&server.url(), &db, &all)
    };
    let (st, plan) = rebuild(&[]);
    assert!(st.success(), "{plan}");
    assert!(
        plan.contains("2 resale listings are not restored"),
        "{plan}"
    );
    let (st, out) = rebuild(&["--apply", "--force"]);
    assert!(st.success(), "{out}");
    assert_eq!(order(c, "rb", "ann").map(|o| o.0), Some(vec![1]));
    assert_eq!(order(c, "rb", "cy"), None, "a buyer's hold is not restored");
    drained(c, "rb", &sc);
    let my = &mut mysql::Conn::new(mysql::Opts::from_url(&db).unwrap()).unwrap();
    let live: Option<i64> = my
        .exec_first(
            "SELECT COUNT(*) FROM ticket_listing WHERE event_id = 'rb' AND state = 'listed'",
            (),
        )
        .unwrap();
    assert_eq!(live, Some(0));
    assert_eq!(int(c, &["TICKET.RESELL", "rb", "ann"]), 1);
    drained(c, "rb", &sc);
    let conflicts: Option<i64> = my
        .exec_first(
            "SELECT COUNT(*) FROM ticket_conflict WHERE event_id = 'rb'",
            (),
        )
        .unwrap();
    assert_eq!(conflicts, Some(0), "{}", tail(&sc.log(), 30));
    let (st, out) = sidecar_cmd(&server.url(), &db, &["reconcile", "--event", "rb"]);
    assert!(st.success(), "{out}");
}
