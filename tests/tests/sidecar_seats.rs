//! End-to-end: a seated event's log reaches MySQL through the sidecar —
//! the layout, one row per seat, a stock per category, each order's pick —
//! and `ticketgate-sidecar audit-seats` checks it from MySQL alone: it
//! passes an honest sale and names a party moved to worse seats and a seat
//! held twice. A category's stock cannot go negative: a record that would
//! take it below zero is a `category_oversell` conflict row, the rest of
//! the batch applies.
//!
//! The first tests write the log as the module writes it (fields from
//! `protocol::record::Record::fields`), choosing seats with the module's
//! own rule code (`protocol::seats`), so every pick is what the test means
//! it to be; the burst goes through the real module.

#[path = "support/sidecar.rs"]
mod support;

use mysql::prelude::Queryable;
use protocol::record::{Checkout, Incarnation, Op, Pick, PickHow, Tickets};
use protocol::seats::{best, check_pick, Layout, Request, Seat, SeatState};
use support::*;
use ticketgate_tests::{fresh_database, RedisServer};

/// Section A (category front): rows 1 and 2 of 10, row 2 has a wheelchair
/// space at position 10 and an aisle at 5 (seats 1-19); section B
/// (general): 2 rows of 20 labelled from 101 (seats 20-59).
const VENUE: &str = r#"{"sections":[
  {"name":"A","category":"front","rows":[{"name":"1","seats":10},
    {"name":"2","seats":10,"blocked":[5],"accessible":[10]}]},
  {"name":"B","rows":[{"name":"1","seats":20,"first":101},{"name":"2","seats":20,"first":101}]}]}"#;

/// The sidecar, with the verifier off (these logs have no event meta).
fn sidecar(redis: &RedisServer, db: &str) -> Sidecar {
    Sidecar::start(
        &redis.url(),
        db,
        &["--verify-interval", "3600", "--rescan-interval", "1"],
    )
}

/// A sale made with the rule code, logged as the module logs it.
struct Sale {
    layout: Layout,
    stored: String,
    state: SeatState,
    ops: Vec<Op<&'static str>>,
    /// (user, seats) of every order, in log order.
    orders: Vec<(&'static str, Vec<i64>)>,
}

fn pick(how: PickHow, category: Option<&str>) -> Option<Box<Pick>> {
    Some(Box::new(Pick {
        how,
        section: None,
        category: category.map(String::from),
        accessible: None,
    }))
}

impl Sale {
    fn new(json: &str) -> Sale {
        let layout = Layout::parse(json).unwrap();
        let stored = layout.to_json();
        let state = SeatState::new(&layout);
        let init = Op::Init {
            transfer_until: None,
            total: i64::from(layout.total),
            opens_at: 0,
            closes_at: 0,
            checkout: Checkout {
                hold: 60_000,
                limit: 8,
                offer: 60_000,
            },
            incarnation: Some(Incarnation(0x5ea7)),
            draw: None,
            layout: Some(stored.clone()),
        };
        Sale {
            layout,
            stored,
            state,
            ops: vec![init],
            orders: Vec::new(),
        }
    }

    fn take(&mut self, user: &'static str, ids: &[u32], held: bool, p: Option<Box<Pick>>) {
        self.state.set(&self.layout, ids, Seat::Held);
        let seats: Vec<i64> = ids.iter().map(|i| i64::from(*i)).collect();
        let tickets = Tickets::from_sorted(seats.clone());
        self.ops.push(match held {
            true => Op::Hold {
                from: None,
                user,
                tickets,
                until: now_ms() + 60_000,
                pick: p,
            },
            false => Op::Claim {
                from: None,
                user,
                tickets,
                pick: p,
            },
        });
        self.orders.push((user, seats));
    }

    /// Best available (SPLIT when `split`), in `category` if given.
    fn best(
        &mut self,
        user: &'static str,
        n: u32,
        category: Option<&str>,
        split: bool,
        held: bool,
    ) {
        let request = Request {
            count: n,
            category: category.and_then(|c| self.layout.category_index(c)),
            split,
            ..Request::default()
        };
        let chosen = best(&self.layout, &self.state, &request).expect("the rule gives seats");
        let how = if chosen.split {
            PickHow::Split
        } else {
            PickHow::Best
        };
        self.take(user, &chosen.ids, held, pick(how, category));
    }

    fn pick(&mut self, user: &'static str, ids: &[u32]) {
        check_pick(&self.layout, &self.state, ids).expect("a legal pick");
        self.take(user, ids, false, pick(PickHow::Seats, None));
    }

    /// A cancel (or an expiry) of `user`'s order.
    fn release(&mut self, user: &'static str, expire: bool) {
        let (_, seats) = self
            .orders
            .iter()
            .rev()
            .find(|o| o.0 == user)
            .unwrap()
            .clone();
        let ids: Vec<u32> = seats.iter().map(|s| *s as u32).collect();
        self.state.set(&self.layout, &ids, Seat::Free);
        let tickets = Tickets::from_sorted(seats);
        self.ops.push(match expire {
            true => Op::Expire {
                from: None,
                user,
                tickets,
            },
            false => Op::Cancel {
                from: None,
                user,
                tickets,
            },
        });
    }

    /// Free seats by category name, as MySQL's stock should show them.
    fn free_by_category(&self) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = self
            .layout
            .categories
            .iter()
            .map(|c| (c.clone(), 0))
            .collect();
        for id in 1..=self.layout.total {
            if self.state.is_free(id) {
                let c = self.layout.row_of(id).unwrap().category as usize;
                out[c].1 += 1;
            }
        }
        out.sort();
        out
    }
}

fn my(db: &str) -> mysql::Conn {
    mysql::Conn::new(mysql::Opts::from_url(db).unwrap()).unwrap()
}

fn conflicts(db: &str, event: &str) -> Vec<(String, String)> {
    my(db)
        .exec(
            "SELECT reason, detail FROM ticket_conflict WHERE event_id = ? ORDER BY id",
            (event,),
        )
        .unwrap()
}

fn stocks(db: &str, event: &str) -> Vec<(String, i64)> {
    my(db)
        .exec(
            "SELECT category, remaining FROM ticket_seat_stock WHERE event_id = ? ORDER BY category",
            (event,),
        )
        .unwrap()
}

fn audit(redis: &RedisServer, db: &str, event: &str) -> (Option<i32>, String) {
    let (st, out) = sidecar_cmd(&redis.url(), db, &["audit-seats", "--event", event]);
    (st.code(), out)
}

/// The sale of the first test: parties by the rule, a category filter, a
/// hold confirmed, a hold expired, a pick, a split, and a cancel last.
fn honest_sale() -> Sale {
    let mut s = Sale::new(VENUE);
    s.best("ann", 4, None, false, false);
    s.best("bob", 3, Some("general"), false, false);
    s.best("cy", 2, None, false, true);
    s.ops.push(Op::Confirm {
        user: "cy",
        tickets: Tickets::from_sorted(s.orders[2].1.clone()),
    });
    s.best("dee", 6, None, false, true);
    s.release("dee", true);
    s.best("eve", 3, Some("front"), false, false);
    s.pick("fay", &[20, 21]);
    s.best("gus", 8, Some("general"), false, false);
    // one more than the longest run of general seats: split
    let general = s.layout.category_index("general");
    let longest = (0..s.layout.rows.len() as u32)
        .filter(|r| Some(s.layout.rows[*r as usize].category) == general)
        .map(|r| s.state.row(r).run_plain)
        .max()
        .unwrap();
    s.best("hal", longest + 1, Some("general"), true, false);
    s.release("bob", false);
    s
}

#[test]
fn a_seated_sale_reaches_mysql_and_audit_seats_checks_it() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_seats");
    migrate(&db);
    let sc = sidecar(&redis, &db);
    let event = "st";
    let mut sale = honest_sale();
    let ops = std::mem::take(&mut sale.ops);
    let last = log(&mut r, event, ops);
    wait_applied(&db, event, &last, &sc);
    assert_eq!(conflicts(&db, event), [], "{}", sc.log());

    let mut m = my(&db);
    let stored: Option<String> = m
        .exec_first(
            "SELECT seat_layout FROM ticket_event WHERE event_id = ?",
            (event,),
        )
        .unwrap();
    assert_eq!(stored.as_deref(), Some(sale.stored.as_str()));
    let seats: (i64, i64) = m
        .exec_first(
            "SELECT COUNT(*), CAST(SUM(`accessible`) AS SIGNED) FROM ticket_seat WHERE event_id = ?",
            (event,),
        )
        .unwrap()
        .unwrap();
    assert_eq!(seats, (i64::from(sale.layout.total), 1));
    assert_eq!(stocks(&db, event), sale.free_by_category());
    // every order joins to its seat names
    let ann: Vec<String> = m
        .exec(
            "SELECT s.seat_name FROM ticket_participation p JOIN ticket_seat s \
             ON s.event_id = p.event_id AND s.seat_id = p.ticket_number \
             WHERE p.event_id = ? AND p.user_id = 'ann' ORDER BY s.seat_id",
            (event,),
        )
        .unwrap();
    assert_eq!(ann, ["A-1-4", "A-1-5", "A-1-6", "A-1-7"]);
    let picks: Vec<(String, Option<String>, Option<String>)> = m
        .exec(
            "SELECT user_id, CAST(seat_pick AS CHAR), seat_category FROM ticket_participation \
             WHERE event_id = ? AND order_lead = 1 ORDER BY id",
            (event,),
        )
        .unwrap();
    assert_eq!(picks.len(), sale.orders.len());
    assert!(picks.contains(&("hal".into(), Some("split".into()), Some("general".into()))));
    assert!(picks.contains(&("fay".into(), Some("seats".into()), None)));

    let (code, out) = audit(&redis, &db, event);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("8 orders")
            && out.contains("6 best available, 1 split, 1 picked, 2 given back"),
        "{out}"
    );

    // Tampered: ann's party moved to the back row of B.
    let ann_rows: Vec<i64> = m
        .exec(
            "SELECT id FROM ticket_participation WHERE event_id = ? AND user_id = 'ann' ORDER BY ticket_number",
            (event,),
        )
        .unwrap();
    let worse: Vec<u32> = (1..=sale.layout.total)
        .rev()
        .filter(|id| sale.state.is_free(*id) && !sale.layout.is_accessible(*id))
        .take(4)
        .collect();
    for (row, seat) in ann_rows.iter().zip(&worse) {
        m.exec_drop(
            "UPDATE ticket_participation SET ticket_number = ? WHERE id = ?",
            (seat, row),
        )
        .unwrap();
    }
    let (code, out) = audit(&redis, &db, event);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("AUDIT FAILED: entry "), "{out}");
    assert!(
        out.contains("user \"ann\" took B-")
            && out.contains("the rule gives A-1-4, A-1-5, A-1-6, A-1-7"),
        "{out}"
    );
    for (row, seat) in ann_rows.iter().zip(&sale.orders[0].1) {
        m.exec_drop(
            "UPDATE ticket_participation SET ticket_number = ? WHERE id = ?",
            (seat, row),
        )
        .unwrap();
    }
    assert_eq!(audit(&redis, &db, event).0, Some(0));

    // Tampered: one of eve's seats becomes one bob held when she claimed
    // (bob canceled after her): the unique index cannot see it (bob's row
    // is canceled now), the replay can.
    let bob_seat = sale.orders[1].1[0];
    m.exec_drop(
        "UPDATE ticket_participation SET ticket_number = ? WHERE event_id = ? AND user_id = 'eve' ORDER BY ticket_number LIMIT 1",
        (bob_seat, event),
    )
    .unwrap();
    let (code, out) = audit(&redis, &db, event);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("user \"eve\"")
            && out.contains("was held twice (user \"bob\" held it since entry"),
        "{out}"
    );
}

/// A category's stock below what a record takes (MySQL drifted, or Redis
/// was wrong): the record is a `category_oversell` conflict, the event's
/// stock and rows untouched, the rest of the batch applied; a seat that is
/// no seat of the layout is an `unknown_seat` conflict.
#[test]
fn a_category_stock_cannot_go_negative() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_seats_cat");
    migrate(&db);
    let sc = sidecar(&redis, &db);
    let event = "sc";
    let mut sale = Sale::new(VENUE);
    let ops = std::mem::take(&mut sale.ops);
    let first = log(&mut r, event, ops);
    wait_applied(&db, event, &first, &sc);
    my(&db)
        .exec_drop(
            "UPDATE ticket_seat_stock SET remaining = 1 WHERE event_id = ? AND category = 'front'",
            (event,),
        )
        .unwrap();
    sale.best("ann", 2, Some("front"), false, false);
    sale.best("bob", 3, Some("general"), false, false);
    sale.ops.push(Op::Claim {
        from: None,
        user: "zed",
        tickets: Tickets::from_sorted(vec![1, 99]),
        pick: pick(PickHow::Seats, None),
    });
    sale.best("cy", 1, Some("front"), false, false);
    let ops = std::mem::take(&mut sale.ops);
    let last = log(&mut r, event, ops);
    wait_applied(&db, event, &last, &sc);
    let reasons: Vec<String> = conflicts(&db, event).into_iter().map(|c| c.0).collect();
    assert_eq!(
        reasons,
        ["category_oversell", "unknown_seat"],
        "{}",
        sc.log()
    );
    let detail = &conflicts(&db, event)[0].1;
    assert!(detail.contains("'front'"), "{detail}");
    let mut m = my(&db);
    let users: Vec<String> = m
        .exec(
            "SELECT DISTINCT user_id FROM ticket_participation WHERE event_id = ? ORDER BY user_id",
            (event,),
        )
        .unwrap();
    assert_eq!(users, ["bob", "cy"]);
    let stock: Option<i64> = m
        .exec_first(
            "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
            (event,),
        )
        .unwrap();
    assert_eq!(stock, Some(i64::from(sale.layout.total) - 4));
    let front = stocks(&db, event).into_iter().find(|s| s.0 == "front");
    assert_eq!(front, Some(("front".into(), 0)));
}

/// 10 sections x 20 rows x 50 seats (10,000); sections 1-3 are category
/// front, each row 1 has wheelchair spaces at both ends.
fn burst_venue() -> String {
    let rows: Vec<String> = (1..=20)
        .map(|r| match r {
            1 => r#"{"name":"1","seats":50,"accessible":[1,50]}"#.to_string(),
            r => format!(r#"{{"name":"{r}","seats":50}}"#),
        })
        .collect();
    let sections: Vec<String> = (1..=10)
        .map(|s| {
            let category = if s <= 3 { "front" } else { "general" };
            format!(
                r#"{{"name":"S{s}","category":"{category}","rows":[{}]}}"#,
                rows.join(",")
            )
        })
        .collect();
    format!(r#"{{"sections":[{}]}}"#, sections.join(","))
}

/// What one party's claim answered: its seats, or the error code.
type Answer = (String, Result<Vec<i64>, String>);

/// `parties` claims of 1-8 seats from `connections` connections at once,
/// by users `<prefix><connection>-<i>`.
fn burst(
    redis: &RedisServer,
    event: &str,
    prefix: &str,
    parties: usize,
    connections: usize,
) -> Vec<Answer> {
    let per = parties / connections;
    let handles: Vec<_> = (0..connections)
        .map(|c| {
            let mut conn = redis.conn();
            let event = event.to_string();
            let prefix = prefix.to_string();
            std::thread::spawn(move || {
                (0..per)
                    .map(|i| {
                        let user = format!("{prefix}{c}-{i}");
                        let n = 1 + (c * 7 + i * 13) % 8;
                        let reply: redis::RedisResult<Vec<i64>> = redis::cmd("TICKET.CLAIM")
                            .arg(&event)
                            .arg(&user)
                            .arg("COUNT")
                            .arg(n)
                            .query(&mut conn);
                        let answer = reply.map_err(|e| e.code().unwrap_or("?").to_string());
                        (user, answer)
                    })
                    .collect::<Vec<Answer>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().expect("a claiming thread"))
        .collect()
}

/// Whether `seats` are adjacent positions of one row of `layout`.
fn together(layout: &Layout, seats: &[i64]) -> bool {
    let places: Vec<_> = seats
        .iter()
        .filter_map(|s| layout.place(u32::try_from(*s).ok()?))
        .collect();
    places.len() == seats.len()
        && places
            .windows(2)
            .all(|w| w[0].row == w[1].row && w[0].position + 1 == w[1].position)
}

/// Checks a burst's answers: each party together, no seat twice (across
/// `sold`), every refusal NOTOGETHER or SOLDOUT; (parties seated, seats,
/// refusals).
fn check_answers(
    layout: &Layout,
    answers: &[Answer],
    sold: &mut std::collections::HashSet<i64>,
) -> (usize, usize, usize) {
    let (mut seated, mut seats, mut refused) = (0, 0, 0);
    for (user, answer) in answers {
        match answer {
            Ok(s) => {
                assert!(together(layout, s), "{user} got {s:?}, not together");
                for seat in s {
                    assert!(sold.insert(*seat), "seat {seat} sold twice ({user})");
                }
                seated += 1;
                seats += s.len();
            }
            Err(code) => {
                assert!(code == "NOTOGETHER" || code == "SOLDOUT", "{user}: {code}");
                refused += 1;
            }
        }
    }
    (seated, seats, refused)
}

/// The contract's burst: 2,000 parties of 1-8 from 50 connections on
/// 10,000 seats, through the real module and the sidecar into MySQL; then
/// 200 of them cancel and 600 more parties rush the seats left. Each party
/// sits together or gets a clear NOTOGETHER/SOLDOUT, no seat is sold twice,
/// MySQL equals Redis (reconcile, categories included), and audit-seats
/// replays the sale and passes.
#[test]
fn a_burst_of_parties_sits_together_and_the_audit_passes() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_seats_burst");
    migrate(&db);
    let sc = Sidecar::start(&redis.url(), &db, &[]);
    let event = "arena";
    let venue = burst_venue();
    let layout = Layout::parse(&venue).unwrap();
    let _: () = redis::cmd("TICKET.INIT")
        .arg(event)
        .arg(layout.total)
        .arg("LIMIT")
        .arg(8)
        .arg("SEATS")
        .arg(&venue)
        .query(&mut r)
        .expect("INIT SEATS");
    let started = std::time::Instant::now();
    let answers = burst(&redis, event, "p", 2000, 50);
    let took = started.elapsed();
    let mut sold = std::collections::HashSet::new();
    let (seated, seats, _) = check_answers(&layout, &answers, &mut sold);
    eprintln!(
        "burst: {} parties ({seated} seated, {seats} seats) in {took:?}: {:.0} parties/s, {:.0} seats/s",
        answers.len(),
        answers.len() as f64 / took.as_secs_f64(),
        seats as f64 / took.as_secs_f64()
    );
    assert_eq!(answers.len(), 2000);
    assert!(
        seated > 1500 && seats > 8000,
        "{seated} parties, {seats} seats"
    );
    // every tenth seated party cancels: its seats are free again
    let canceled: Vec<&Answer> = answers.iter().filter(|a| a.1.is_ok()).step_by(10).collect();
    for (user, got) in &canceled {
        let _: redis::Value = redis::cmd("TICKET.CANCEL")
            .arg(event)
            .arg(user)
            .query(&mut r)
            .expect("CANCEL");
        for seat in got.as_ref().unwrap() {
            sold.remove(seat);
        }
    }
    let rush = burst(&redis, event, "q", 600, 50);
    let (seated2, seats2, refused) = check_answers(&layout, &rush, &mut sold);
    assert!(
        refused > 0,
        "600 more parties on ~2,000 free seats: some are refused"
    );
    let seated = seated - canceled.len() + seated2;
    let given_back: usize = canceled.iter().map(|a| a.1.as_ref().unwrap().len()).sum();
    let seats = seats - given_back + seats2;
    assert_eq!(sold.len(), seats);
    let (st, out) = sidecar_cmd(
        &redis.url(),
        &db,
        &["reconcile", "--event", event, "--wait", "60"],
    );
    assert!(st.success(), "{out}\n{}", sc.log());
    assert_eq!(conflicts(&db, event), [], "{}", sc.log());
    let live: i64 = my(&db)
        .exec_first(
            "SELECT COUNT(*) FROM ticket_participation WHERE event_id = ? AND live_ticket IS NOT NULL",
            (event,),
        )
        .unwrap()
        .unwrap();
    assert_eq!(live as usize, seats);
    let started = std::time::Instant::now();
    let (code, out) = audit(&redis, &db, event);
    assert_eq!(code, Some(0), "{out}");
    let orders = seated + canceled.len();
    assert!(
        out.contains(&format!("{orders} orders ({} seats)", seats + given_back))
            && out.contains(&format!("{} given back", canceled.len())),
        "{out}"
    );
    eprintln!("audit-seats: {:?}: {out}", started.elapsed());
}

/// The daemon drains a seated sale with only SELECT, INSERT and UPDATE on
/// ticketgate's tables (V6's `ticket_seat` and `ticket_seat_stock`,
/// V8's allocations, V10's and V11's after-sale tables among them), as `deploy/mysql-grants.sql`'s stricter variant grants.
#[test]
fn a_seated_sale_needs_only_select_insert_update() {
    let redis = RedisServer::start();
    let mut r = redis.conn();
    let db = fresh_database("sc_seats_grants");
    migrate(&db);
    let mut m = my(&db);
    let dbname: String = m.query_first("SELECT DATABASE()").unwrap().unwrap();
    let user = format!("tgs_{}", std::process::id());
    m.query_drop(format!(
        "CREATE USER '{user}'@'127.0.0.1' IDENTIFIED BY 'pw'"
    ))
    .unwrap();
    for t in [
        "ticket_event",
        "ticket_stock",
        "ticket_participation",
        "ticket_sync_offset",
        "ticket_conflict",
        "ticket_journal",
        "ticket_heal",
        "ticket_draw_step",
        "ticket_seat",
        "ticket_seat_stock",
        "ticket_allocation",
        "ticket_allocation_step",
        "ticket_owner",
        "ticket_scan",
        "ticket_listing",
        "ticket_resold",
    ] {
        m.query_drop(format!(
            "GRANT SELECT, INSERT, UPDATE ON `{dbname}`.`{t}` TO '{user}'@'127.0.0.1'"
        ))
        .unwrap();
    }
    let port: u16 = m.query_first("SELECT @@port").unwrap().unwrap();
    let url = format!("mysql://{user}:pw@127.0.0.1:{port}/{dbname}");
    let sc = sidecar(&redis, &url);
    let event = "gr";
    let mut sale = honest_sale();
    let ops = std::mem::take(&mut sale.ops);
    let last = log(&mut r, event, ops);
    wait_applied(&db, event, &last, &sc);
    assert_eq!(conflicts(&db, event), [], "{}", sc.log());
    assert_eq!(stocks(&db, event), sale.free_by_category());
    let (code, out) = audit(&redis, &url, event);
    assert_eq!(code, Some(0), "{out}");
}
