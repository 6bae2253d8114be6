//! End-to-end: allocations reach MySQL through the sidecar (migration V8).
//! Each allocation's free stock is its `ticket_allocation` row, public
//! stock stays `ticket_stock` (and a seated event's `ticket_seat_stock`),
//! an order from an allocation carries its name, and every move of seats
//! into or out of one is a `ticket_allocation_step` row that `audit-seats`
//! replays. A record MySQL refuses (an allocation short of stock, an
//! unknown one, a release of "none" while MySQL has some) is a conflict
//! row, and other events keep draining.
//!
//! These tests write the log as the module writes it (fields from
//! `protocol::record::Record::log_fields`), choosing seats with the
//! module's own rule code (`protocol::seats`), so they need no module
//! command beyond the event's existence.

#[path = "support/sidecar.rs"]
mod support;

use mysql::prelude::Queryable;
use protocol::record::{Checkout, Incarnation, Op, Pick, PickHow};
use protocol::seats::{best, Layout, Request, Seat, SeatState};
use support::*;
use ticketgate_tests::{fresh_database, RedisServer};

const UNTIL: i64 = 1_900_000_000_000;

fn my(db: &str) -> mysql::Conn {
    mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap()
}

/// The sidecar, with the verifier off (these logs have no event meta).
fn sidecar(redis: &RedisServer, db: &str) -> Sidecar {
    Sidecar::start(
        &redis.url(),
        db,
        &["--verify-interval", "3600", "--rescan-interval", "1"],
    )
}

fn init(total: i64, layout: Option<String>) -> Op<&'static str> {
    Op::Init {
        total,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout {
            hold: 60_000,
            limit: 8,
            offer: 60_000,
        },
        incarnation: Some(Incarnation(0xa110c)),
        draw: None,
        layout,
    }
}

fn from(name: &str) -> Option<Box<str>> {
    Some(name.into())
}

fn allocate(name: &str, t: &[i64], release: Option<i64>) -> Op<&'static str> {
    Op::Allocate {
        name: name.into(),
        tickets: tickets(t),
        release,
        key: None,
    }
}

fn release(name: &str, t: Option<&[i64]>) -> Op<&'static str> {
    Op::Release {
        name: name.into(),
        tickets: t.map(tickets),
    }
}

fn claim(user: &'static str, t: &[i64], alloc: Option<&str>) -> Op<&'static str> {
    Op::Claim {
        from: alloc.and_then(from),
        pick: None,
        user,
        tickets: tickets(t),
    }
}

/// (name, remaining_stock, release_at, ended) of the event's allocations.
fn allocations(db: &str, event: &str) -> Vec<(String, i64, Option<i64>, bool)> {
    my(db)
        .exec(
            "SELECT name, remaining_stock, release_at, released_at IS NOT NULL FROM ticket_allocation WHERE event_id = ? ORDER BY name",
            (event,),
        )
        .unwrap()
}

/// (user, ticket, status, allocation) of every row of the event.
fn rows(db: &str, event: &str) -> Vec<(String, i64, String, Option<String>)> {
    my(db)
        .exec(
            "SELECT user_id, ticket_number, CAST(status AS CHAR), allocation FROM ticket_participation WHERE event_id = ? ORDER BY id",
            (event,),
        )
        .unwrap()
}

/// (name, kind, tickets) of the event's allocation steps in log order.
fn steps(db: &str, event: &str) -> Vec<(String, String, String)> {
    my(db)
        .exec(
            "SELECT name, CAST(kind AS CHAR), ticket_list FROM ticket_allocation_step WHERE event_id = ? ORDER BY stream_ms, stream_seq, id",
            (event,),
        )
        .unwrap()
}

fn reasons(db: &str, event: &str) -> Vec<String> {
    my(db)
        .exec(
            "SELECT reason FROM ticket_conflict WHERE event_id = ? ORDER BY id",
            (event,),
        )
        .unwrap()
}

/// MySQL's invariant: public free + allocated free + live = total.
fn conserved(db: &str, event: &str) -> (i64, i64) {
    my(db)
        .exec_first(
            "SELECT (SELECT remaining_stock FROM ticket_stock WHERE event_id = e.event_id) \
             + (SELECT COALESCE(SUM(remaining_stock), 0) FROM ticket_allocation WHERE event_id = e.event_id AND released_at IS NULL) \
             + (SELECT COUNT(*) FROM ticket_participation WHERE event_id = e.event_id AND live_ticket IS NOT NULL), e.total \
             FROM ticket_event e WHERE e.event_id = ?",
            (event,),
        )
        .unwrap()
        .unwrap()
}

fn row(u: &str, t: i64, s: &str, a: Option<&str>) -> (String, i64, String, Option<String>) {
    (u.into(), t, s.into(), a.map(String::from))
}

/// A general-admission sale with two allocations: claims and a hold from
/// one (the hold expires back into it), a public claim beside them, a
/// partial release, then every kind of refusal; another event drains
/// meanwhile.
#[test]
fn general_admission_allocations_reach_mysql_and_refusals_are_conflicts() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_alloc_ga");
    migrate(&db);
    let sc = sidecar(&redis, &db);
    let (event, other) = ("ga", "plain");
    let last = log(
        &mut r,
        event,
        vec![
            init(10, None),
            allocate("fan", &[1, 2, 3], Some(UNTIL)),
            allocate("kill", &[4], None),
            claim("u1", &[1], Some("fan")),
            Op::Hold {
                from: from("fan"),
                pick: None,
                user: "u2",
                tickets: tickets(&[2, 3]),
                until: UNTIL,
            },
            Op::Expire {
                from: from("fan"),
                user: "u2",
                tickets: tickets(&[2, 3]),
            },
            claim("u3", &[5], None),
            release("fan", Some(&[3])),
            claim("u4", &[2], Some("fan")),
        ],
    );
    wait_applied(&db, event, &last, &sc);
    assert_eq!(reasons(&db, event), Vec::<String>::new(), "{}", sc.log());
    // 10 - 4 allocated + 1 released - 1 public claim
    assert_eq!(mysql_view(&db, event).unwrap().remaining, Some(6));
    assert_eq!(
        allocations(&db, event),
        [
            ("fan".into(), 0, Some(UNTIL), false),
            ("kill".into(), 1, None, false)
        ]
    );
    assert_eq!(
        rows(&db, event),
        [
            row("u1", 1, "active", Some("fan")),
            row("u2", 2, "expired", Some("fan")),
            row("u2", 3, "expired", Some("fan")),
            row("u3", 5, "active", None),
            row("u4", 2, "active", Some("fan")),
        ]
    );
    let step = |n: &str, k: &str, t: &str| (n.to_string(), k.to_string(), t.to_string());
    assert_eq!(
        steps(&db, event),
        [
            step("fan", "allocate", "1,2,3"),
            step("kill", "allocate", "4"),
            step("fan", "return", "2,3"),
            step("fan", "release", "3"),
        ]
    );
    assert_eq!(conserved(&db, event), (10, 10));

    // Refusals: each a conflict, the valid records between them apply,
    // and another event drains meanwhile.
    let plain = log(&mut r, other, vec![init(5, None), claim("p1", &[1], None)]);
    let last = log(
        &mut r,
        event,
        vec![
            claim("u5", &[3], Some("fan")),   // fan has nothing free
            claim("u6", &[6], Some("ghost")), // no such allocation
            release("kill", None),            // kill has 1 free
            Op::Cancel {
                from: from("fan"),
                user: "u3",
                tickets: tickets(&[5]),
            }, // u3's order is public
            allocate("fan", &[1], None),      // ticket 1 is u1's
            release("kill", Some(&[4])),      // ends kill
            allocate("late", &[3, 6, 7, 8, 9, 10], None), // 7 public: fine
            allocate("more", &[4, 6], None),  // 1 public left
        ],
    );
    wait_applied(&db, event, &last, &sc);
    wait_applied(&db, other, &plain, &sc);
    assert_eq!(
        reasons(&db, event),
        [
            "allocation_oversell",
            "unknown_allocation",
            "allocation_mismatch",
            "allocation_mismatch",
            "collision",
            "oversell"
        ],
        "{}",
        sc.log()
    );
    assert_eq!(mysql_view(&db, event).unwrap().remaining, Some(1));
    let live: Vec<(String, i64, bool)> = allocations(&db, event)
        .into_iter()
        .map(|a| (a.0, a.1, a.3))
        .collect();
    assert_eq!(
        live,
        [
            ("fan".into(), 0, false),
            ("kill".into(), 0, true),
            ("late".into(), 6, false)
        ]
    );
    assert_eq!(conserved(&db, event), (10, 10));
    assert_eq!(mysql_view(&db, other).unwrap().remaining, Some(4));
    assert!(!sc.log().contains("panicked"));
}

/// A seated sale, chosen by the rule code as the module chooses: house
/// seats allocated in the middle of row 1, the public's best parties
/// around them, a partner's best party within them, a partner's hold that
/// expires back into the allocation, a release. MySQL's public category
/// stock leaves the allocated seats out, `ticket_seat.allocation` names
/// them, and `audit-seats` passes; a public order moved onto an allocated
/// seat fails it.
#[test]
fn seated_allocations_reach_mysql_and_audit_seats_checks_them() {
    const VENUE: &str = r#"{"sections":[
      {"name":"A","category":"front","rows":[{"name":"1","seats":10},{"name":"2","seats":10}]},
      {"name":"B","rows":[{"name":"1","seats":20}]}]}"#;
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_alloc_seats");
    migrate(&db);
    let sc = sidecar(&redis, &db);
    let event = "sa";
    let layout = Layout::parse(VENUE).unwrap();
    let mut state = SeatState::new(&layout);
    let mut ops = vec![init(i64::from(layout.total), Some(layout.to_json()))];
    let house: Vec<u32> = vec![4, 5, 6, 7];
    let t = |ids: &[u32]| tickets(&ids.iter().map(|i| i64::from(*i)).collect::<Vec<_>>());
    ops.push(Op::Allocate {
        name: "house".into(),
        tickets: t(&house),
        release: None,
        key: None,
    });
    state.set(&layout, &house, Seat::Allocated);
    let best_pick = || {
        Some(Box::new(Pick {
            how: PickHow::Best,
            section: None,
            category: None,
            accessible: None,
        }))
    };
    let party = |state: &SeatState, n: u32| {
        let request = Request {
            count: n,
            ..Request::default()
        };
        best(&layout, state, &request).unwrap().ids
    };
    // the public's best 3: not the house seats
    let public = party(&state, 3);
    assert!(public.iter().all(|s| !house.contains(s)), "{public:?}");
    state.set(&layout, &public, Seat::Held);
    ops.push(Op::Claim {
        from: None,
        pick: best_pick(),
        user: "pub",
        tickets: t(&public),
    });
    // the partner's best 2 within the allocation
    let mine = party(&SeatState::only(&layout, &house), 2);
    state.set(&layout, &mine, Seat::Held);
    ops.push(Op::Claim {
        from: from("house"),
        pick: best_pick(),
        user: "partner",
        tickets: t(&mine),
    });
    // the rest picked by a second partner, expired back into the allocation
    let rest: Vec<u32> = house
        .iter()
        .copied()
        .filter(|s| !mine.contains(s))
        .collect();
    ops.push(Op::Hold {
        from: from("house"),
        pick: Some(Box::new(Pick {
            how: PickHow::Seats,
            section: None,
            category: None,
            accessible: None,
        })),
        user: "p2",
        tickets: t(&rest),
        until: UNTIL,
    });
    ops.push(Op::Expire {
        from: from("house"),
        user: "p2",
        tickets: t(&rest),
    });
    // one of them released to the public
    ops.push(Op::Release {
        name: "house".into(),
        tickets: Some(t(&rest[..1])),
    });
    state.set(&layout, &rest[..1], Seat::Free);
    let last = log(&mut r, event, ops);
    wait_applied(&db, event, &last, &sc);
    assert_eq!(reasons(&db, event), Vec::<String>::new(), "{}", sc.log());
    assert_eq!(allocations(&db, event), [("house".into(), 1, None, false)]);
    let mut m = my(&db);
    let in_house: Vec<i64> = m
        .exec(
            "SELECT seat_id FROM ticket_seat WHERE event_id = ? AND allocation = 'house'",
            (event,),
        )
        .unwrap();
    assert_eq!(in_house, [i64::from(rest[1])]);
    // front: 20 seats - 3 public - 2 partner - 1 still allocated
    let stocks: Vec<(String, i64)> = m
        .exec(
            "SELECT category, remaining FROM ticket_seat_stock WHERE event_id = ? ORDER BY category",
            (event,),
        )
        .unwrap();
    assert_eq!(stocks, [("front".into(), 14), ("general".into(), 20)]);
    assert_eq!(conserved(&db, event), (40, 40));

    let (st, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", event]);
    assert_eq!(st.code(), Some(0), "{out}");
    assert!(
        out.contains("3 orders") && out.contains("2 from allocations (3 allocation moves)"),
        "{out}"
    );

    // Tampered: the public party moved onto a house seat.
    m.exec_drop(
        "UPDATE ticket_participation SET ticket_number = ? WHERE event_id = ? AND user_id = 'pub' AND ticket_number = ?",
        (i64::from(rest[1]), event, i64::from(public[0])),
    )
    .unwrap();
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", event]);
    assert_eq!(st.code(), Some(1), "{out}");
    assert!(
        out.contains("in public sale, but seat")
            && out.contains("was free in allocation \"house\""),
        "{out}"
    );
}
