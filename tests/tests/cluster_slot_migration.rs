//! Valkey 9's atomic slot migration (`CLUSTER MIGRATESLOTS`) of selling
//! events, on a real Valkey 9.1 cluster of three masters with a replica
//! each (`ticketgate_tests::valkey9_server`, whatever server the other
//! tests run on):
//!
//! * while writers claim, confirm and cancel with `WAIT 1`, two events'
//!   slots move to another master: every acknowledged write is on the new
//!   owner, no ticket is held twice, holds and a waiting-list offer made
//!   (and an allocation's release time) before the move expire on the new
//!   owner by themselves (its sweep does
//!   it: its `INFO ticket` counts them), the old owner answers `MOVED`, and
//!   the sidecar follows with no conflict (`reconcile` exits 0);
//! * a migration cancelled half-way (`CLUSTER CANCELSLOTMIGRATIONS`) leaves
//!   the source whole: it still owns and sells the event, the target has
//!   nothing of it, and holds made while the import ran were expired once,
//!   by the source alone (the target's sweep leaves importing slots be).

#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use msupport::{info_int, users_of_op};
use redis::{Connection, Value};
use support::{migrate, sidecar_cmd, Sidecar};
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::{fresh_database, valkey9_server, wait_until};

/// A direct connection to whichever master owns an event, following
/// `MOVED` (so `WAIT 1` goes to the node that took the write).
struct Owner {
    cluster_ports: Vec<u16>,
    port: u16,
    conn: Connection,
}

impl Owner {
    fn new(cluster: &Cluster, node: usize) -> Owner {
        Owner {
            cluster_ports: cluster.ports(),
            port: cluster.node(node).port(),
            conn: cluster.conn(node),
        }
    }

    /// Runs `cmd`, following `MOVED` to the new owner (a few times).
    fn run(&mut self, cmd: &redis::Cmd) -> redis::RedisResult<Value> {
        for _ in 0..5 {
            match cmd.query::<Value>(&mut self.conn) {
                Err(e) if e.code() == Some("MOVED") => self.follow(&e),
                other => return other,
            }
        }
        cmd.query(&mut self.conn)
    }

    fn follow(&mut self, moved: &redis::RedisError) {
        let port = moved
            .redirect_node()
            .and_then(|(addr, _)| addr.rsplit(':').next()?.parse::<u16>().ok())
            .unwrap_or_else(|| panic!("MOVED without a node: {moved}"));
        assert!(self.cluster_ports.contains(&port), "MOVED to {port}");
        self.port = port;
        self.conn = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .and_then(|c| c.get_connection())
            .unwrap_or_else(|e| panic!("connect to {port}: {e}"));
    }

    /// `WAIT 1` on the owner: whether a replica acknowledged.
    fn acknowledged(&mut self) -> bool {
        matches!(
            redis::cmd("WAIT").arg(1).arg(5000).query::<i64>(&mut self.conn),
            Ok(n) if n >= 1
        )
    }
}

fn cmd(parts: &[&str]) -> redis::Cmd {
    let mut c = redis::cmd(parts[0]);
    for p in &parts[1..] {
        c.arg(*p);
    }
    c
}

fn ok(owner: &mut Owner, parts: &[&str]) -> Value {
    owner
        .run(&cmd(parts))
        .unwrap_or_else(|e| panic!("{parts:?}: {e}"))
}

fn node_id(cluster: &Cluster, i: usize) -> String {
    redis::cmd("CLUSTER")
        .arg("MYID")
        .query(&mut cluster.conn(i))
        .unwrap()
}

/// The state of the newest migration job `node` knows of (`success`,
/// `failed`, `cancelled`, or a state under way).
fn migration_state(cluster: &Cluster, node: usize) -> String {
    let jobs: Vec<Value> = redis::cmd("CLUSTER")
        .arg("GETSLOTMIGRATIONS")
        .query(&mut cluster.conn(node))
        .unwrap();
    let Some(Value::Array(fields)) = jobs.first() else {
        return String::new();
    };
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        other => format!("{other:?}"),
    };
    fields
        .chunks(2)
        .find(|kv| text(&kv[0]) == "state")
        .map(|kv| text(&kv[1]))
        .unwrap_or_default()
}

/// Moves `slots` from master `from` to master `to`; returns once the job
/// ends, with its final state.
fn migrate_slots(cluster: &Cluster, from: usize, to: usize, slots: &[u16]) -> String {
    let mut c = redis::cmd("CLUSTER");
    c.arg("MIGRATESLOTS").arg("SLOTSRANGE");
    for s in slots {
        c.arg(*s).arg(*s);
    }
    c.arg("NODE").arg(node_id(cluster, to));
    let () = c
        .query(&mut cluster.conn(from))
        .unwrap_or_else(|e| panic!("CLUSTER MIGRATESLOTS: {e}"));
    let mut state = String::new();
    wait_until(Duration::from_secs(60), "the migration ends", || {
        state = migration_state(cluster, from);
        matches!(state.as_str(), "success" | "failed" | "cancelled")
    });
    state
}

/// An event id whose slot master `owner` serves, and no other event of
/// `taken` shares.
fn event_on(cluster: &Cluster, owner: usize, prefix: &str, taken: &[u16]) -> String {
    (0..)
        .map(|i| format!("{prefix}-{i}"))
        .find(|e| {
            let slot = protocol::keys::slot_of(e);
            !taken.contains(&slot) && cluster.owner_of_slot(slot) == owner
        })
        .unwrap_or_default()
}

fn int(v: &Value) -> i64 {
    redis::FromRedisValue::from_redis_value(v.clone()).unwrap_or(-1)
}

/// What a writer was acknowledged: user -> (ticket, state) the new owner
/// must show, `None` for a cancelled order; a confirm answered but not
/// acknowledged leaves "held" or "sold" both possible (`"?"`).
type Acked = HashMap<String, Option<(i64, &'static str)>>;

/// One writer: claims (sold), holds then confirms, holds then cancels,
/// holds left held (10 minutes), each step followed by `WAIT 1`, until
/// `stop`.
fn writer(
    cluster_ports: Vec<u16>,
    port: u16,
    event: &str,
    t: usize,
    stop: &AtomicBool,
    done: &AtomicUsize,
) -> Acked {
    let conn = redis::Client::open(format!("redis://127.0.0.1:{port}/"))
        .and_then(|c| c.get_connection())
        .unwrap();
    let mut owner = Owner {
        cluster_ports,
        port,
        conn,
    };
    let mut acked = Acked::new();
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let user = format!("w{t}-{n}");
        let kind = n % 4;
        n += 1;
        let hold = if kind == 0 { "0" } else { "600000" };
        let claimed = owner.run(&cmd(&["TICKET.CLAIM", event, &user, "HOLD", hold]));
        let Ok(ticket) = claimed.map(|v| int(&v)) else {
            continue;
        };
        if !owner.acknowledged() {
            continue;
        }
        let state = if kind == 0 { "sold" } else { "held" };
        acked.insert(user.clone(), Some((ticket, state)));
        let second = match kind {
            1 => Some(("TICKET.CONFIRM", Some((ticket, "sold")))),
            2 => Some(("TICKET.CANCEL", None)),
            _ => None,
        };
        if let Some((command, after)) = second {
            let answered = owner.run(&cmd(&[command, event, &user])).is_ok();
            match (answered, owner.acknowledged()) {
                (true, true) => acked.insert(user, after),
                _ => acked.insert(user, Some((ticket, "?"))),
            };
        }
        done.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(2));
    }
    acked
}

/// Sets its flag when dropped, also while unwinding.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `ORDER` of `user` on `c`: (tickets, state), or None.
fn order(c: &mut Connection, event: &str, user: &str) -> Option<(Vec<i64>, String)> {
    let v: Value = redis::cmd("TICKET.ORDER")
        .arg(event)
        .arg(user)
        .query(c)
        .unwrap();
    let Value::Array(fields) = v else { return None };
    let mut tickets = Vec::new();
    let mut state = String::new();
    for kv in fields.chunks(2) {
        match (&kv[0], &kv[1]) {
            (Value::BulkString(k), Value::Array(ts)) if k == b"tickets" => {
                tickets = ts.iter().map(int).collect()
            }
            (Value::BulkString(k), Value::BulkString(s)) if k == b"state" => {
                state = String::from_utf8_lossy(s).into_owned()
            }
            _ => {}
        }
    }
    Some((tickets, state))
}

#[test]
fn a_selling_events_slot_moves_atomically_and_loses_nothing() {
    let cluster = Cluster::start_on(&valkey9_server(), 3, 1);
    let db = fresh_database("asm_move");
    migrate(&db);
    let masters = cluster.masters();
    let (src, dst) = (masters[0], masters[1]);
    let event = event_on(&cluster, src, "asm", &[]);
    let queued = event_on(&cluster, src, "asmq", &[protocol::keys::slot_of(&event)]);
    let mut p = Owner::new(&cluster, src);
    ok(&mut p, &["TICKET.INIT", &event, "100000"]);
    // Sold out with two in line: c0's cancel offers w0 its ticket for 6 s.
    ok(&mut p, &["TICKET.INIT", &queued, "2", "OFFER", "6000"]);
    for u in ["c0", "c1"] {
        ok(&mut p, &["TICKET.CLAIM", &queued, u]);
    }
    for w in ["w0", "w1"] {
        ok(&mut p, &["TICKET.WAIT", &queued, w]);
    }
    let sidecar = Sidecar::start(&cluster.node(src).url(), &db, &[]);

    let stop = AtomicBool::new(false);
    let done = AtomicUsize::new(0);
    let acked: Vec<Acked> = std::thread::scope(|s| {
        // A failed assertion below must stop the writers, or the scope
        // would wait for them forever.
        let _stop_writers = StopOnDrop(&stop);
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let (ports, port) = (cluster.ports(), cluster.node(src).port());
                let (event, stop, done) = (&event, &stop, &done);
                s.spawn(move || writer(ports, port, event, t, stop, done))
            })
            .collect();
        wait_until(Duration::from_secs(60), "200 acknowledged steps", || {
            done.load(Ordering::Relaxed) >= 200
        });
        // Made just before the move, due after it and after the writers
        // stop: expired by the new owner's sweep, or nobody's.
        let due = Instant::now() + Duration::from_secs(6);
        for i in 0..20 {
            ok(
                &mut p,
                &["TICKET.CLAIM", &event, &format!("short{i}"), "HOLD", "6000"],
            );
        }
        ok(&mut p, &["TICKET.CANCEL", &queued, "c0"]);
        // An allocation releasing itself at the holds' deadline: by the
        // new owner's deadline index, once.
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let release = (unix_ms + 6000).to_string();
        let allocate = ["TICKET.ALLOCATE", &event, "kill", "COUNT", "3"];
        ok(&mut p, &[&allocate[..], &["RELEASE", &release]].concat());
        assert!(p.acknowledged());
        let moved_at = Instant::now();
        let slots = [
            protocol::keys::slot_of(&event),
            protocol::keys::slot_of(&queued),
        ];
        let state = migrate_slots(&cluster, src, dst, &slots);
        assert_eq!(state, "success");
        assert!(
            moved_at.elapsed() < Duration::from_secs(5),
            "the move took {:?}: the holds were due before it ended",
            moved_at.elapsed()
        );
        let after = done.load(Ordering::Relaxed);
        wait_until(
            Duration::from_secs(60),
            "200 more steps on the new owner",
            || done.load(Ordering::Relaxed) >= after + 200,
        );
        stop.store(true, Ordering::Relaxed);
        let acked = writers.into_iter().map(|w| w.join().unwrap()).collect();
        assert!(
            Instant::now() < due,
            "the writers ran past the holds' deadline: their claims, not the sweep, may have expired them"
        );
        acked
    });

    assert_eq!(cluster.owner_of_event(&event), dst);
    assert_eq!(cluster.owner_of_event(&queued), dst);
    let moved: redis::RedisResult<Value> =
        cmd(&["TICKET.STATUS", &event]).query(&mut cluster.conn(src));
    assert_eq!(
        moved
            .err()
            .and_then(|e| e.code().map(str::to_owned))
            .as_deref(),
        Some("MOVED")
    );

    let mut d = cluster.conn(dst);
    // Every acknowledged write is on the new owner.
    let all: Acked = acked.into_iter().flatten().collect();
    assert!(all.len() >= 400, "{} acknowledged users", all.len());
    for (user, want) in &all {
        let got = order(&mut d, &event, user);
        match want {
            None => assert_eq!(got, None, "{user} cancelled"),
            Some((ticket, "?")) => {
                let (tickets, state) = got.unwrap_or_else(|| panic!("{user} lost"));
                assert_eq!(
                    (tickets, state == "held" || state == "sold"),
                    (vec![*ticket], true)
                );
            }
            Some((ticket, state)) => {
                assert_eq!(got, Some((vec![*ticket], state.to_string())), "{user}")
            }
        }
    }
    // No ticket twice.
    let holders: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{event}}}:holders"))
        .query(&mut d)
        .unwrap();
    let tickets: HashSet<&String> = holders.values().collect();
    assert_eq!(tickets.len(), holders.len(), "a ticket held twice");

    // The holds and the offer made before the move expire on the new owner
    // (its sweep, or its next command): the old one expired nothing.
    wait_until(
        Duration::from_secs(30),
        "the new owner expired 21 orders",
        || info_int(&mut d, "ticket_expired") >= 21,
    );
    assert_eq!(info_int(&mut cluster.conn(src), "ticket_expired"), 0);
    for i in 0..20 {
        assert_eq!(order(&mut d, &event, &format!("short{i}")), None);
    }
    assert_eq!(order(&mut d, &queued, "w0"), None);
    wait_until(
        Duration::from_secs(30),
        "the new owner released the allocation",
        || matches!(cmd(&["TICKET.ALLOCATIONS", &event]).query(&mut d), Ok(Value::Array(a)) if a.is_empty()),
    );

    // The sidecar followed: nothing in conflict, MySQL equals Redis.
    let (status, out) = sidecar_cmd(
        &cluster.node(dst).url(),
        &db,
        &["reconcile", "--wait", "90"],
    );
    assert!(
        status.success(),
        "reconcile after the move:\n{out}\n--- sidecar ---\n{}",
        sidecar.log()
    );
    let conflicts: Vec<(String, String)> = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap())
        .and_then(|mut c| {
            mysql::prelude::Queryable::query(&mut c, "SELECT event_id, reason FROM ticket_conflict")
        })
        .unwrap();
    assert_eq!(conflicts, vec![], "no conflicts");
    // MySQL saw the new owner's expiries and its offer to the next in line.
    let rows: Vec<(String, String)> = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap())
        .and_then(|mut c| {
            mysql::prelude::Queryable::exec(
                &mut c,
                "SELECT user_id, CAST(status AS CHAR) FROM ticket_participation \
                 WHERE (event_id = ? AND user_id LIKE 'short%') OR (event_id = ? AND user_id = 'w1')",
                (&event, &queued),
            )
        })
        .unwrap();
    let expired = rows
        .iter()
        .filter(|(u, st)| u.starts_with("short") && st == "expired");
    assert_eq!(expired.count(), 20, "{rows:?}");
    assert!(
        rows.iter().any(|(u, _)| u == "w1"),
        "w1 was offered: {rows:?}"
    );
    let releases: Vec<(String, i64)> = mysql::Conn::new(mysql::Opts::from_url(&db).unwrap())
        .and_then(|mut c| {
            mysql::prelude::Queryable::exec(
                &mut c,
                "SELECT CAST(kind AS CHAR), tickets FROM ticket_allocation_step WHERE event_id = ? ORDER BY id",
                (&event,),
            )
        })
        .unwrap();
    let want = [("allocate".to_owned(), 3), ("release".to_owned(), 3)];
    assert_eq!(releases, want, "released once, after the move");
}

#[test]
fn a_migration_cancelled_half_way_leaves_the_source_whole() {
    let cluster = Cluster::start_on(&valkey9_server(), 3, 1);
    let masters = cluster.masters();
    let (src, dst) = (masters[0], masters[1]);
    let event = event_on(&cluster, src, "stay", &[]);
    let mut p = Owner::new(&cluster, src);
    ok(&mut p, &["TICKET.INIT", &event, "1000"]);
    for i in 0..10 {
        ok(&mut p, &["TICKET.CLAIM", &event, &format!("before{i}")]);
    }
    let mut s = cluster.conn(src);
    // The migration streams on and never hands over until told.
    let () = cmd(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "1"])
        .query(&mut s)
        .unwrap();
    let mut c = redis::cmd("CLUSTER");
    c.arg("MIGRATESLOTS")
        .arg("SLOTSRANGE")
        .arg(protocol::keys::slot_of(&event))
        .arg(protocol::keys::slot_of(&event))
        .arg("NODE")
        .arg(node_id(&cluster, dst));
    let () = c.query(&mut s).unwrap();
    wait_until(Duration::from_secs(30), "the import streams", || {
        migration_state(&cluster, src) == "waiting-to-pause"
    });
    // Holds made while the import runs reach the target as effects, and
    // its expiry index learns their deadlines: only the source, the owner,
    // may expire them. The source's sweep waits until the deadlines are
    // long past, so the target's sweep would get there first.
    let sweep_every = |c: &mut Connection, ms: &str| {
        let () = cmd(&["CONFIG", "SET", "ticket.sweep-interval", ms])
            .query(c)
            .unwrap();
    };
    sweep_every(&mut s, "60000");
    for i in 0..10 {
        ok(
            &mut p,
            &["TICKET.CLAIM", &event, &format!("during{i}"), "HOLD", "300"],
        );
    }
    assert!(p.acknowledged());
    std::thread::sleep(Duration::from_millis(1500)); // many sweeps on the target
    let mut d = cluster.conn(dst);
    assert_eq!(
        info_int(&mut d, "ticket_expired"),
        0,
        "the target expired nothing it was importing"
    );
    let held: i64 = redis::cmd("ZCARD")
        .arg(format!("ticket:{{{event}}}:holds"))
        .query(&mut s)
        .unwrap();
    assert_eq!(held, 10, "nobody swept the holds yet");
    sweep_every(&mut s, "100");
    wait_until(
        Duration::from_secs(20),
        "the source expired the holds",
        || users_of_op(&mut s, &event, "expire").len() == 10,
    );

    let () = cmd(&["CLUSTER", "CANCELSLOTMIGRATIONS"])
        .query(&mut s)
        .unwrap();
    wait_until(
        Duration::from_secs(30),
        "the migration is cancelled",
        || migration_state(&cluster, src) == "cancelled",
    );
    let () = cmd(&["DEBUG", "SLOTMIGRATION", "PREVENT-PAUSE", "0"])
        .query(&mut s)
        .unwrap();
    assert_eq!(cluster.owner_of_event(&event), src);
    wait_until(
        Duration::from_secs(30),
        "the target dropped what it imported",
        || redis::cmd("DBSIZE").query::<i64>(&mut d).unwrap() == 0,
    );
    // The source is whole and sells on.
    let holders: HashMap<String, i64> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{event}}}:holders"))
        .query(&mut s)
        .unwrap();
    let want: HashMap<String, i64> = (0..10).map(|i| (format!("before{i}"), i + 1)).collect();
    assert_eq!(holders, want);
    assert_eq!(int(&ok(&mut p, &["TICKET.CLAIM", &event, "after"])), 11);
    let status: Value = ok(&mut p, &["TICKET.STATUS", &event]);
    let Value::Array(fields) = status else {
        panic!("{status:?}")
    };
    let remaining = fields
        .chunks(2)
        .find(|kv| matches!(&kv[0], Value::BulkString(k) if k == b"remaining"))
        .map(|kv| int(&kv[1]));
    assert_eq!(remaining, Some(1000 - 11));
}
