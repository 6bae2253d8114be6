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
        transfer_until: None,
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
            allocate("kill", &[4], Some(UNTIL)),
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
            ("kill".into(), 1, Some(UNTIL), false)
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
            allocate("kill", &[4], None),     // the ended kill starts again
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
    assert_eq!(mysql_view(&db, event).unwrap().remaining, Some(0));
    let live: Vec<(String, i64, bool)> = allocations(&db, event)
        .into_iter()
        .map(|a| (a.0, a.1, a.3))
        .collect();
    assert_eq!(
        live,
        [
            ("fan".into(), 0, false),
            ("kill".into(), 1, false),
            ("late".into(), 6, false)
        ]
    );
    // started again: the new release time, not the ended one's
    assert_eq!(allocations(&db, event)[1].2, None);
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

// ---- Through the module's own commands ----

/// Runs a command; its reply.
fn run<T: redis::FromRedisValue>(c: &mut redis::Connection, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(c)
        .unwrap_or_else(|e| panic!("{}: {e}", args.join(" ")))
}

/// Waits until `event`'s log is trimmed empty: everything in MySQL.
fn drained(c: &mut redis::Connection, event: &str, sc: &Sidecar) {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let len: i64 = run(c, &["XLEN", &format!("ticket:{{{event}}}:log")]);
        if len == 0 {
            return;
        }
        assert!(
            std::time::Instant::now() < end,
            "{event}: {len} entries left\n{}",
            sc.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// (name, free) of `TICKET.ALLOCATIONS`, against MySQL's live rows.
fn same_allocations(c: &mut redis::Connection, db: &str, event: &str) {
    let redis: Vec<(String, i64, i64, Option<i64>)> = run(c, &["TICKET.ALLOCATIONS", event]);
    let redis: Vec<(String, i64, Option<i64>)> =
        redis.into_iter().map(|(n, f, _, r)| (n, f, r)).collect();
    let mysql: Vec<(String, i64, Option<i64>)> = allocations(db, event)
        .into_iter()
        .filter(|a| !a.3)
        .map(|a| (a.0, a.1, a.2))
        .collect();
    assert_eq!(redis, mysql, "{event}");
}

/// `reconcile --event E`: exit code and output.
fn reconcile(redis: &RedisServer, db: &str, event: &str) -> (Option<i32>, String) {
    let args = ["reconcile", "--event", event, "--wait", "10"];
    let (st, out) = sidecar_cmd(&redis.url(), db, &args);
    (st.code(), out)
}

/// A general-admission and a seated sale through ALLOCATE, CLAIM FROM
/// with a KEY, a hold FROM that expires back into its allocation, public
/// claims and a RELEASE: MySQL's rows and stocks match Redis's, and
/// `reconcile` finds no drift (and finds it once MySQL's allocation is
/// edited); `audit-seats` passes the seated sale; `rebuild` refuses.
#[test]
fn module_sales_with_allocations_reach_mysql_and_reconcile() {
    const VENUE: &str = r#"{"sections":[{"name":"A","category":"front","rows":[{"name":"1","seats":10},{"name":"2","seats":10}]},{"name":"B","rows":[{"name":"1","seats":20}]}]}"#;
    let redis = RedisServer::start();
    let mut c = redis.conn();
    let db = fresh_database("sc_alloc_module");
    migrate(&db);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let release = (now_ms() + 3_600_000).to_string();
    run::<()>(&mut c, &["TICKET.INIT", "mg", "20", "LIMIT", "4"]);
    let promoter: Vec<i64> = run(
        &mut c,
        &[
            "TICKET.ALLOCATE",
            "mg",
            "promoter",
            "COUNT",
            "3",
            "KEY",
            "pw",
            "RELEASE",
            &release,
        ],
    );
    assert_eq!(promoter, [1, 2, 3]);
    run::<Vec<i64>>(&mut c, &["TICKET.ALLOCATE", "mg", "kill", "COUNT", "1"]);
    let from = ["FROM", "promoter", "KEY", "pw"];
    let p1: i64 = run(&mut c, &[&["TICKET.CLAIM", "mg", "p1"][..], &from].concat());
    assert_eq!(p1, 1);
    run::<i64>(
        &mut c,
        &[&["TICKET.CLAIM", "mg", "p2", "HOLD", "300"][..], &from].concat(),
    );
    for u in ["u1", "u2", "u3"] {
        run::<Vec<i64>>(&mut c, &["TICKET.CLAIM", "mg", u, "COUNT", "2"]);
    }
    // the seated sale meanwhile
    run::<()>(
        &mut c,
        &["TICKET.INIT", "ms", "40", "LIMIT", "4", "SEATS", VENUE],
    );
    run::<Vec<i64>>(
        &mut c,
        &[
            "TICKET.ALLOCATE",
            "ms",
            "house",
            "SEATS",
            "4",
            "5",
            "6",
            "7",
            "KEY",
            "k",
        ],
    );
    let house = ["FROM", "house", "KEY", "k"];
    let partner: Vec<i64> = run(
        &mut c,
        &[&["TICKET.CLAIM", "ms", "partner", "COUNT", "2"][..], &house].concat(),
    );
    let rest: Vec<String> = [4, 5, 6, 7]
        .into_iter()
        .filter(|s| !partner.contains(s))
        .map(|s: i64| s.to_string())
        .collect();
    let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
    run::<redis::Value>(&mut c, &["TICKET.CLAIM", "ms", "q1", "COUNT", "3"]);
    run::<redis::Value>(
        &mut c,
        &[
            &["TICKET.CLAIM", "ms", "p3", "HOLD", "300"][..],
            &house,
            &["SEATS"],
            &rest,
        ]
        .concat(),
    );
    // both holds expire back into their allocations (the sweep logs it)
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while run::<Vec<(String, i64, i64, Option<i64>)>>(&mut c, &["TICKET.ALLOCATIONS", "ms"])[0].1
        < 2
        || run::<Vec<(String, i64, i64, Option<i64>)>>(&mut c, &["TICKET.ALLOCATIONS", "mg"])
            .iter()
            .any(|a| a.0 == "promoter" && a.1 < 2)
    {
        assert!(std::time::Instant::now() < end, "the holds never expired");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        run::<i64>(&mut c, &["TICKET.RELEASE", "mg", "promoter", "COUNT", "1"]),
        1
    );
    assert_eq!(
        run::<i64>(&mut c, &["TICKET.RELEASE", "ms", "house", "COUNT", "1"]),
        1
    );
    for event in ["mg", "ms"] {
        drained(&mut c, event, &sc);
        assert_eq!(reasons(&db, event), Vec::<String>::new(), "{}", sc.log());
        same_allocations(&mut c, &db, event);
        assert_eq!(conserved(&db, event).0, conserved(&db, event).1);
        let (code, out) = reconcile(&redis, &db, event);
        assert_eq!(code, Some(0), "{out}");
    }
    let expired: Vec<(String, Option<String>)> = my(&db)
        .exec(
            "SELECT user_id, allocation FROM ticket_participation WHERE status = 'expired' ORDER BY user_id",
            (),
        )
        .unwrap();
    assert_eq!(
        expired,
        [
            ("p2".into(), Some("promoter".into())),
            ("p3".into(), Some("house".into())),
            ("p3".into(), Some("house".into()))
        ]
    );
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", "ms"]);
    assert_eq!(st.code(), Some(0), "{out}");
    // rebuild's plan names each allocation it would restore, locked
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["rebuild", "--event", "mg"]);
    assert_eq!(st.code(), Some(0), "{out}");
    assert!(out.contains("allocation kill: 1 free"), "{out}");
    assert!(out.contains("restored locked"), "{out}");
    // MySQL's allocation edited by hand: drift, named
    my(&db)
        .exec_drop(
            "UPDATE ticket_allocation SET remaining_stock = remaining_stock + 1 WHERE event_id = 'mg' AND name = 'kill'",
            (),
        )
        .unwrap();
    let (code, out) = reconcile(&redis, &db, "mg");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("allocation \"kill\" differs: Redis 1 free MySQL 2 free"),
        "{out}"
    );
    assert!(out.contains("allocated differs"), "{out}");
}

/// 2,000 public parties beside 3 partners claiming FROM their
/// allocations with their keys, on 11 connections, while the sidecar
/// drains: no public order took an allocated seat in MySQL, each
/// partner's only its own, MySQL == Redis (`reconcile`), `audit-seats`
/// passes.
#[test]
fn a_burst_of_public_and_partner_claims_drains_and_audits() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    let db = fresh_database("sc_alloc_burst");
    migrate(&db);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let rows: Vec<String> = (1..=30)
        .map(|r| format!(r#"{{"name":"{r}","seats":80}}"#))
        .collect();
    let layout = format!(
        r#"{{"sections":[{{"name":"A","rows":[{}]}}]}}"#,
        rows.join(",")
    );
    run::<()>(
        &mut c,
        &["TICKET.INIT", "b", "2400", "LIMIT", "4", "SEATS", &layout],
    );
    let mut given: std::collections::BTreeMap<String, std::collections::BTreeSet<i64>> =
        Default::default();
    for (i, name) in ["p0", "p1", "p2"].iter().enumerate() {
        let key = format!("key{i}");
        let seats: Vec<i64> = run(
            &mut c,
            &["TICKET.ALLOCATE", "b", name, "COUNT", "150", "KEY", &key],
        );
        given.insert((*name).to_owned(), seats.into_iter().collect());
    }
    let url = redis.url();
    let mut threads = Vec::new();
    for t in 0..8 {
        let url = url.clone();
        threads.push(std::thread::spawn(move || {
            let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
            for i in (t..2000).step_by(8) {
                let (user, count) = (format!("u{i}"), (1 + i % 2).to_string());
                let _ = redis::cmd("TICKET.CLAIM")
                    .arg("b")
                    .arg(&user)
                    .arg("COUNT")
                    .arg(&count)
                    .query::<redis::Value>(&mut c);
            }
        }));
    }
    for (i, name) in ["p0", "p1", "p2"].into_iter().enumerate() {
        let url = url.clone();
        threads.push(std::thread::spawn(move || {
            let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
            for n in 0..400 {
                let count = 1 + n % 3;
                let reply = redis::cmd("TICKET.CLAIM")
                    .arg("b")
                    .arg(format!("{name}-{n}"))
                    .arg("FROM")
                    .arg(name)
                    .arg("KEY")
                    .arg(format!("key{i}"))
                    .arg("COUNT")
                    .arg(count)
                    .query::<redis::Value>(&mut c);
                if reply.is_err() && count == 1 {
                    break; // its allocation is gone
                }
            }
        }));
    }
    for t in threads {
        t.join().unwrap();
    }
    drained(&mut c, "b", &sc);
    assert_eq!(reasons(&db, "b"), Vec::<String>::new(), "{}", sc.log());
    let rows: Vec<(String, i64, Option<String>)> = my(&db)
        .exec(
            "SELECT user_id, ticket_number, allocation FROM ticket_participation WHERE event_id = 'b' AND live_ticket IS NOT NULL",
            (),
        )
        .unwrap();
    let allocated: std::collections::BTreeSet<i64> = given.values().flatten().copied().collect();
    let mut partners = 0;
    for (user, seat, from) in &rows {
        match from {
            None => assert!(
                !allocated.contains(seat),
                "public {user} has allocated seat {seat}"
            ),
            Some(p) => {
                partners += 1;
                assert!(
                    user.starts_with(p.as_str()) && given[p].contains(seat),
                    "{user} of {p}: seat {seat}"
                );
            }
        }
    }
    assert_eq!(partners, 450, "the partners sold their allocations out");
    same_allocations(&mut c, &db, "b");
    let (code, out) = reconcile(&redis, &db, "b");
    assert_eq!(code, Some(0), "{out}");
    let (st, out) = sidecar_cmd(&redis.url(), &db, &["audit-seats", "--event", "b"]);
    assert_eq!(st.code(), Some(0), "{out}");
    assert!(out.contains("from allocations"), "{out}");
}
