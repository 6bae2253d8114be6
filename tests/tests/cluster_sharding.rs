//! End-to-end on a real three-master Redis Cluster (`ticketgate_tests::cluster`):
//!
//! * a cluster client routes `TICKET.*` by the event argument: 36 events
//!   spread over all three masters, all four keys of an event in its slot on
//!   its master, `MOVED` from every other node;
//! * bursts on twelve events at once from eight threads (each with its own
//!   cluster connection), drained by one sidecar that was given a single
//!   node's URL: MySQL equals Redis exactly, no conflicts, `reconcile` exits 0.

#[path = "support/cluster.rs"]
mod csupport;
#[path = "support/sidecar.rs"]
mod support;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use csupport::*;
use redis::{ConnectionLike, Value};
use support::{migrate, sidecar_cmd, Sidecar};
use ticketgate_tests::cluster::Cluster;
use ticketgate_tests::fresh_database;

fn claim(conn: &mut dyn ConnectionLike, event: &str, user: &str) -> redis::RedisResult<i64> {
    redis::cmd("TICKET.CLAIM").arg(event).arg(user).query(conn)
}

#[test]
fn cluster_client_routes_by_event_and_wrong_node_moves() {
    let started = Instant::now();
    let cluster = Cluster::start(3, 0);
    let masters = cluster.masters();
    assert_eq!(masters.len(), 3, "three masters, no replicas");
    let mut cc = cluster.cluster_conn();

    let events: Vec<String> = (0..36).map(|i| format!("route-{i}")).collect();
    let mut owners: HashMap<String, usize> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(100)
            .query(&mut cc)
            .unwrap_or_else(|err| panic!("TICKET.INIT {e} via the cluster client: {err}"));
        let k = 1 + i % 4;
        for u in 0..k {
            let t = claim(&mut cc, e, &format!("u{u}")).unwrap();
            assert_eq!(t, u as i64 + 1, "{e}: lowest free number first");
        }
        assert_eq!(claim(&mut cc, e, "u0").unwrap(), 1, "{e}: repeat claim");
        // a returned ticket puts a number into the (lazily minted) pool
        assert_eq!(claim(&mut cc, e, "x").unwrap(), k as i64 + 1);
        let back: Option<i64> = redis::cmd("TICKET.CANCEL")
            .arg(e)
            .arg("x")
            .query(&mut cc)
            .unwrap();
        assert_eq!(back, Some(k as i64 + 1), "{e}: cancel");
        let holder: Option<i64> = redis::cmd("TICKET.HOLDER")
            .arg(e)
            .arg(format!("u{}", k - 1))
            .query(&mut cc)
            .unwrap();
        assert_eq!(holder, Some(k as i64));
        let st = status(&mut cc, e);
        assert_eq!(st.get("total").map(String::as_str), Some("100"), "{st:?}");
        assert_eq!(st.get("claimed"), Some(&k.to_string()), "{e}: {st:?}");
        assert_eq!(
            st.get("remaining"),
            Some(&(100 - k).to_string()),
            "{e}: {st:?}"
        );
        owners.insert(e.clone(), cluster.owner_of_event(e));
    }
    let used: BTreeSet<usize> = owners.values().copied().collect();
    assert_eq!(
        used,
        masters.iter().copied().collect::<BTreeSet<_>>(),
        "every master owns at least one of the 36 events: {owners:?}"
    );

    for e in &events {
        let owner = owners[e];
        let slot = cluster.event_slot(e);
        for part in ["meta", "pool", "holders", "log"] {
            assert_eq!(cluster.keyslot(&key(e, part)), slot, "{e} {part}");
        }
        // All four keys exist on the owner, through a plain connection.
        let mut own = cluster.conn(owner);
        let n: i64 = redis::cmd("EXISTS")
            .arg(key(e, "meta"))
            .arg(key(e, "pool"))
            .arg(key(e, "holders"))
            .arg(key(e, "log"))
            .query(&mut own)
            .unwrap();
        assert_eq!(n, 4, "{e}: all four keys on its master {owner}");
        let in_slot: i64 = redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query(&mut own)
            .unwrap();
        assert!(in_slot >= 4, "{e}: slot {slot} holds {in_slot} keys");
        // Every other node redirects every command to the owner.
        let moved = format!("{slot} 127.0.0.1:{}", cluster.node(owner).port());
        for other in masters.iter().copied().filter(|&m| m != owner) {
            let mut c = cluster.conn(other);
            let local: i64 = redis::cmd("CLUSTER")
                .arg("COUNTKEYSINSLOT")
                .arg(slot)
                .query(&mut c)
                .unwrap();
            assert_eq!(local, 0, "{e}: node {other} holds keys of slot {slot}");
            for parts in [
                vec!["TICKET.CLAIM", e.as_str(), "intruder"],
                vec!["TICKET.STATUS", e.as_str()],
                vec!["TICKET.HOLDER", e.as_str(), "u0"],
                vec!["TICKET.INIT", e.as_str(), "5"],
            ] {
                let mut cmd = redis::cmd(parts[0]);
                for a in &parts[1..] {
                    cmd.arg(*a);
                }
                let err = cmd
                    .query::<Value>(&mut c)
                    .expect_err("a node that does not own the event must redirect");
                assert_eq!(
                    err.code(),
                    Some("MOVED"),
                    "{parts:?} on node {other}: {err}"
                );
                assert_eq!(
                    err.detail(),
                    Some(moved.as_str()),
                    "{parts:?} on node {other}"
                );
            }
        }
    }
    // The redirected attempts changed nothing.
    for (i, e) in events.iter().enumerate() {
        assert_eq!(status_num(&mut cc, e, "claimed"), 1 + (i % 4) as i64, "{e}");
        assert_eq!(holders(&mut cc, e).get("intruder"), None, "{e}");
    }
    eprintln!("routing test took {:?}", started.elapsed());
}

#[test]
fn bursts_on_many_events_drain_exactly_into_mysql() {
    let started = Instant::now();
    const EVENTS: usize = 12;
    const TOTAL: i64 = 300;
    const THREADS: usize = 8;
    const USERS_PER_THREAD: usize = 50; // 400 users per event for 300 tickets

    let cluster = Cluster::start(3, 0);
    let db = fresh_database("cl_burst");
    migrate(&db);
    let mut cc = cluster.cluster_conn();
    let events: Vec<String> = (0..EVENTS).map(|i| format!("burst-{i}")).collect();
    let owners: BTreeSet<usize> = events.iter().map(|e| cluster.owner_of_event(e)).collect();
    assert_eq!(owners.len(), 3, "the events span all three masters");

    // Half the events exist before the sidecar starts (found by SCAN of
    // every master), half are created while it runs (ticket:events).
    let init = |cc: &mut dyn ConnectionLike, e: &str| {
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(TOTAL)
            .query(cc)
            .unwrap_or_else(|err| panic!("TICKET.INIT {e}: {err}"));
    };
    for e in &events[..EVENTS / 2] {
        init(&mut cc, e);
    }
    let sidecar = Sidecar::start(&cluster.node(1).url(), &db, &[]);
    for e in &events[EVENTS / 2..] {
        init(&mut cc, e);
    }

    let barrier = Arc::new(Barrier::new(THREADS));
    let events = Arc::new(events);
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let client = cluster.client();
            let barrier = barrier.clone();
            let events = events.clone();
            std::thread::spawn(move || {
                let mut c = client
                    .get_connection()
                    .unwrap_or_else(|e| panic!("thread {t}: cluster connection: {e}"));
                let (mut won, mut soldout, mut cancels) = (0u64, 0u64, 0u64);
                barrier.wait();
                for j in 0..USERS_PER_THREAD {
                    for k in 0..events.len() {
                        let e = &events[(k + t) % events.len()];
                        let user = format!("t{t}-u{j}");
                        match claim(&mut c, e, &user) {
                            Ok(_) => won += 1,
                            Err(err) if err.code() == Some("SOLDOUT") => soldout += 1,
                            Err(err) => panic!("thread {t}: claim {e} {user}: {err}"),
                        }
                        // now and then: a repeat claim, and a cancel of an
                        // earlier user (its number goes back to the pool)
                        if j % 7 == 3 {
                            let _ = claim(&mut c, e, &user);
                        }
                        if j % 10 == 5 {
                            let r: Option<i64> = redis::cmd("TICKET.CANCEL")
                                .arg(e)
                                .arg(format!("t{t}-u{}", j - 5))
                                .query(&mut c)
                                .unwrap_or_else(|err| panic!("thread {t}: cancel: {err}"));
                            cancels += u64::from(r.is_some());
                        }
                    }
                }
                (won, soldout, cancels)
            })
        })
        .collect();
    let (mut won, mut soldout, mut cancels) = (0, 0, 0);
    for h in handles {
        let (w, s, c) = h.join().expect("a claim thread panicked");
        won += w;
        soldout += s;
        cancels += c;
    }
    eprintln!(
        "burst: {won} claims won, {soldout} sold out, {cancels} cancels in {:?}",
        started.elapsed()
    );
    assert!(soldout > 0, "400 users on 300 tickets must sell out");
    assert!(cancels > 0);

    wait_drained(&mut cc, &db, &events, Duration::from_secs(90), &|| {
        sidecar.log()
    });
    for e in events.iter() {
        let h = holders(&mut cc, e);
        assert!(doubled_tickets(&h).is_empty(), "{e}: {h:?}");
        assert!(h.values().all(|t| (1..=TOTAL).contains(t)), "{e}");
        assert_eq!(status_num(&mut cc, e, "remaining"), TOTAL - h.len() as i64);
        assert_eq!(mysql_active(&db, e).unwrap(), h, "{e}");
        assert_eq!(
            mysql_remaining(&db, e).unwrap(),
            Some(TOTAL - h.len() as i64),
            "{e}"
        );
    }
    assert!(mysql_doubled_tickets(&db).is_empty());
    assert_eq!(conflicts(&db), vec![], "no conflicts");
    // reconcile, given yet another node
    let (st, out) = sidecar_cmd(&cluster.node(2).url(), &db, &["reconcile"]);
    assert!(st.success(), "reconcile found drift:\n{out}");
    assert!(out.contains(&format!("{EVENTS} event(s)")), "{out}");
    eprintln!("burst + drain test took {:?}", started.elapsed());
}

/// `redis-cli --cluster reshard` moves every slot of one master to another
/// while claims run on its events from several threads (cluster clients
/// follow `ASK`/`MOVED`; a claim that lands on the target before the keys
/// do gets `-NOEVENT` and is retried) and the sidecar drains. Every slot's
/// keys move in one `MIGRATE` (at most 10 keys per slot here, the default
/// `--cluster-pipeline`). Afterwards every answered claim is in Redis and
/// MySQL, no number is held twice, and reconcile exits 0.
#[test]
fn resharding_a_master_away_during_claims_loses_nothing() {
    let started = Instant::now();
    let cluster = Cluster::start(3, 0);
    let db = fresh_database("cl_reshard");
    migrate(&db);
    let mut cc = cluster.cluster_conn();
    let events: Vec<String> = (0..9).map(|i| format!("move-{i}")).collect();
    for e in &events {
        let _: () = redis::cmd("TICKET.INIT")
            .arg(e)
            .arg(1_000_000)
            .query(&mut cc)
            .unwrap_or_else(|err| panic!("TICKET.INIT {e}: {err}"));
    }
    let src = cluster.owner_of_event(&events[0]);
    let dst = cluster
        .masters()
        .into_iter()
        .find(|&m| m != src)
        .unwrap_or_else(|| panic!("a second master"));
    let moving: Vec<String> = events
        .iter()
        .filter(|e| cluster.owner_of_event(e) == src)
        .cloned()
        .collect();
    let sidecar = Sidecar::start(&cluster.node(src).url(), &db, &[]);

    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let events = Arc::new(events);
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let (client, events, stop, answered) = (
                cluster.client(),
                events.clone(),
                stop.clone(),
                answered.clone(),
            );
            std::thread::spawn(move || {
                use std::sync::atomic::Ordering::Relaxed;
                let mut c = client
                    .get_connection()
                    .unwrap_or_else(|e| panic!("thread {t}: cluster connection: {e}"));
                let mut got: Vec<(String, String, i64)> = Vec::new();
                let mut errors: HashMap<String, usize> = HashMap::new();
                let mut n = 0;
                while !stop.load(Relaxed) && n < 50_000 {
                    let e = &events[(n + t) % events.len()];
                    let user = format!("t{t}-u{n}");
                    let deadline = Instant::now() + Duration::from_secs(30);
                    loop {
                        match claim(&mut c, e, &user) {
                            Ok(ticket) => {
                                got.push((e.clone(), user, ticket));
                                answered.fetch_add(1, Relaxed);
                                break;
                            }
                            Err(err) => {
                                *errors
                                    .entry(err.code().unwrap_or("io").to_string())
                                    .or_default() += 1;
                                assert!(
                                    Instant::now() < deadline,
                                    "thread {t}: claim {e} {user} keeps failing: {err}"
                                );
                                std::thread::sleep(Duration::from_millis(5));
                            }
                        }
                    }
                    n += 1;
                    // paced, so that claims run before, during and after
                    std::thread::sleep(Duration::from_millis(1));
                }
                (got, errors)
            })
        })
        .collect();

    ticketgate_tests::wait_until(Duration::from_secs(60), "300 claims", || {
        answered.load(std::sync::atomic::Ordering::Relaxed) >= 300
    });
    let id = |i: usize| -> String {
        redis::cmd("CLUSTER")
            .arg("MYID")
            .query(&mut cluster.conn(i))
            .unwrap()
    };
    let t_reshard = Instant::now();
    let out = std::process::Command::new("redis-cli")
        .arg("--cluster")
        .arg("reshard")
        .arg(format!("127.0.0.1:{}", cluster.node(src).port()))
        .args(["--cluster-from", &id(src), "--cluster-to", &id(dst)])
        .args(["--cluster-slots", "16384", "--cluster-yes"])
        .output()
        .expect("run redis-cli --cluster reshard");
    assert!(
        out.status.success(),
        "reshard failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let reshard_time = t_reshard.elapsed();
    for e in &moving {
        assert_eq!(cluster.owner_of_event(e), dst, "{e} moved");
    }
    let before = answered.load(std::sync::atomic::Ordering::Relaxed);
    ticketgate_tests::wait_until(Duration::from_secs(60), "200 more claims", || {
        answered.load(std::sync::atomic::Ordering::Relaxed) >= before + 200
            || handles.iter().all(|h| h.is_finished())
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut got = Vec::new();
    let mut errors: HashMap<String, usize> = HashMap::new();
    for h in handles {
        let (g, e) = h.join().expect("a claim thread panicked");
        got.extend(g);
        for (k, v) in e {
            *errors.entry(k).or_default() += v;
        }
    }
    eprintln!(
        "reshard of {} events' master took {reshard_time:?}; {} claims answered, retried errors {errors:?}",
        moving.len(),
        got.len()
    );

    let mut cc = cluster.cluster_conn();
    wait_drained(&mut cc, &db, &events, Duration::from_secs(90), &|| {
        sidecar.log()
    });
    let mut by_event: HashMap<String, HashMap<String, i64>> = HashMap::new();
    for e in events.iter() {
        let h = holders(&mut cc, e);
        assert!(doubled_tickets(&h).is_empty(), "{e}");
        by_event.insert(e.clone(), h);
    }
    for (e, u, t) in &got {
        assert_eq!(
            by_event[e].get(u),
            Some(t),
            "{e} {u}: answered claim in Redis"
        );
    }
    assert!(mysql_doubled_tickets(&db).is_empty());
    assert_eq!(conflicts(&db), vec![], "no conflicts");
    let (st, out) = sidecar_cmd(&cluster.node(dst).url(), &db, &["reconcile"]);
    assert!(st.success(), "reconcile after the reshard:\n{out}");
    eprintln!("reshard test took {:?}", started.elapsed());
}
