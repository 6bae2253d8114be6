//! One soak run: set up the servers and the seated event's allocations,
//! start the writers and the box office, let the nemesis strike until the
//! time is up, let the sidecar drain, read the end state and check the
//! history against it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, sleep};
use std::time::{Duration, Instant};

use super::box_office::BoxOffice;
use super::door::{self, Door, DoorOp};
use super::gate::Gate;
use super::history::{BookOp, Op, States};
use super::nemesis::{Fault, FaultRecord, Nemesis};
use super::report::Report;
use super::rng::Rng;
use super::sidecar::SidecarProcess;
use super::state;
use super::topology::{connect, Topology};
use super::writers::{events, now_ms, EventSpec, Sale, Writer};
use super::Config;
use super::{alloc_check, checker};
use crate::{fresh_database_on, MariaDb};

/// How long the end waits for the sidecar to drain and MySQL to equal Redis.
const DRAIN_LIMIT: Duration = Duration::from_secs(60);

/// How far into the run the fan club's allocation releases itself.
const TIMED_RELEASE_AT: f64 = 0.4;

/// The seated event (the one with allocations).
fn seated_event() -> &'static str {
    events()
        .into_iter()
        .find(|e| e.sale == Sale::Seated)
        .map_or("soak-seats", |e| e.name)
}

/// Runs the soak `config` describes.
pub fn run(config: &Config) -> Report {
    let started = Instant::now();
    eprintln!("soak: start, replay with {}", config.replay());
    let mariadb = MariaDb::start();
    let mysql_url = fresh_database_on(&mariadb, "soak");
    let mut topology = Topology::start();
    if config.faults.contains(&Fault::SentinelFailover) {
        topology.start_sentinels();
    }
    let specs = events();
    init_events(&topology, &specs);
    let deadline = started + Duration::from_secs(config.secs);
    // The fan club's allocation releases itself this far into the run.
    let timed = started + deadline.duration_since(started).mul_f64(TIMED_RELEASE_AT);
    let release_ms = now_ms() + timed.saturating_duration_since(Instant::now()).as_millis() as i64;
    let gate = Gate::new(config.alloc_gate);
    let mut box_office = BoxOffice::new(seated_event(), topology.address.clone(), gate.clone());
    let house = box_office.before_sale(release_ms);
    let rng = Rng::new(config.seed);
    let mut door = Door::new(topology.address.clone(), rng.fork(999));
    door.before_sale();
    let mut sidecar = SidecarProcess::start(&topology.sidecar_url(), &mysql_url);
    let stop = Arc::new(AtomicBool::new(false));
    let writers = spawn_writers(config, &specs, &rng, &topology, &stop, deadline, &gate);
    let door = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || door.during_sale(&stop, deadline))
    };
    let (on_cut, cuts) = std::sync::mpsc::channel();
    let books = {
        let stop = Arc::clone(&stop);
        thread::spawn(move || {
            box_office.during_sale(&house, (started, timed, deadline), &stop, &cuts)
        })
    };
    let mut nemesis = Nemesis {
        topology: &mut topology,
        sidecar: &mut sidecar,
        mariadb: &mariadb,
        mysql_url: mysql_url.clone(),
        events: specs.iter().map(|e| e.name).collect(),
        rng: rng.fork(0),
        started,
        on_cut: Some(on_cut),
    };
    let faults = strike_until(&mut nemesis, config, deadline, &gate);
    stop.store(true, Ordering::Relaxed);
    let history: Vec<Op> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap_or_default())
        .collect();
    let books = books.join().unwrap_or_default();
    let door = door.join().unwrap_or_default();
    finish(
        config,
        started,
        history,
        (books, door),
        faults,
        &topology,
        &mut sidecar,
        &mysql_url,
    )
}

fn init_events(topology: &Topology, specs: &[EventSpec]) {
    let mut c = connect(&topology.address.get()).expect("connect to the soak's primary");
    for spec in specs {
        redis::cmd("TICKET.INIT")
            .arg(spec.name)
            .arg(spec.init_args())
            .query::<()>(&mut c)
            .unwrap_or_else(|e| panic!("TICKET.INIT {}: {e}", spec.name));
    }
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut c)
        .expect("WAIT");
    assert_eq!(acked, 1, "the replica did not acknowledge the events");
}

fn spawn_writers(
    config: &Config,
    specs: &[EventSpec],
    rng: &Rng,
    topology: &Topology,
    stop: &Arc<AtomicBool>,
    deadline: Instant,
    gate: &Gate,
) -> Vec<thread::JoinHandle<Vec<Op>>> {
    let mut handles = Vec::new();
    for (e, spec) in specs.iter().enumerate() {
        for w in 0..config.writers_per_event {
            let id = e * config.writers_per_event + w;
            let writer = Writer::new(
                spec.clone(),
                id,
                config.users_per_writer,
                rng.fork(1 + id as u64),
                topology.address.clone(),
            )
            .gated(gate.clone());
            let stop = Arc::clone(stop);
            handles.push(thread::spawn(move || writer.run(&stop, deadline)));
        }
    }
    handles
}

/// A fault every 2-5 s until `deadline` (none in the last 5 s, so the end
/// sees a settled topology), each with the allocation `gate` shut.
fn strike_until(
    nemesis: &mut Nemesis,
    config: &Config,
    deadline: Instant,
    gate: &Gate,
) -> Vec<FaultRecord> {
    let mut faults = Vec::new();
    let last_strike = deadline
        .checked_sub(Duration::from_secs(5))
        .unwrap_or(deadline);
    loop {
        let gap = Duration::from_millis(nemesis.rng.between(2000, 5000));
        if Instant::now() + gap >= last_strike {
            break;
        }
        sleep(gap);
        let shut = gate.strike();
        let record = nemesis.strike(&config.faults);
        drop(shut);
        eprintln!(
            "soak: {:6.1}s {} — {}{}",
            record.at_s,
            record.fault.name(),
            record.note,
            record
                .follow
                .as_ref()
                .map(|f| format!("; MySQL follows: {f:?}"))
                .unwrap_or_default()
        );
        faults.push(record);
    }
    if let Some(rest) = deadline.checked_duration_since(Instant::now()) {
        sleep(rest);
    }
    faults
}

#[allow(clippy::too_many_arguments)]
fn finish(
    config: &Config,
    started: Instant,
    history: Vec<Op>,
    (books, door): (Vec<BookOp>, Vec<DoorOp>),
    faults: Vec<FaultRecord>,
    topology: &Topology,
    sidecar: &mut SidecarProcess,
    mysql_url: &str,
) -> Report {
    let url = topology.address.get();
    topology.wait_in_sync(Duration::from_secs(20));
    if sidecar.ensure_running(&topology.sidecar_url()) {
        eprintln!("soak: the sidecar had exited; started again");
    }
    // Short holds and offers expire, and the sweep logs them, before we look.
    sleep(Duration::from_millis(2500));
    let mut users = users_of(&history);
    users.extend(
        door::users(&door)
            .into_iter()
            .map(|u| (door::EVENT.to_owned(), u)),
    );
    let (drained, read_ok, redis, mysql) = settle(&url, mysql_url, &users);
    let now = now_ms();
    let conflict_rows = mysql_conn(mysql_url)
        .and_then(|mut c| state::conflicts(&mut c).ok())
        .unwrap_or_default();
    let (status, out) = sidecar.reconcile(&topology.sidecar_url(), 10);
    let event = seated_event();
    // Conflicts naming no user (a lost allocate or release the heal undid)
    // are the allocation checks' to judge.
    let (of_users, of_allocations): (Vec<_>, Vec<_>) = conflict_rows
        .iter()
        .cloned()
        .partition(|c| c.user.is_some() || c.event != event);
    let mut findings = checker::check(&checker::Input {
        history: &history,
        redis: &redis,
        mysql: &mysql,
        conflicts: &of_users,
        now_ms: now,
    });
    let alloc_end = connect(&url).map_err(|e| e.to_string()).and_then(|mut c| {
        let mut my = mysql_conn(mysql_url).ok_or("no MySQL connection")?;
        state::alloc_end(&mut c, &mut my, event)
    });
    let alloc = match &alloc_end {
        Ok(end) => alloc_check::check(&alloc_check::Input {
            event,
            history: &history,
            books: &books,
            end,
            redis: &redis,
            conflicts: &of_allocations,
            now_ms: now,
        }),
        Err(e) => alloc_check::Findings {
            violations: vec![format!("the allocations could not be read: {e}")],
            ..Default::default()
        },
    };
    findings.violations.extend(alloc.violations.iter().cloned());
    findings.violations.extend(check_door(&url, &door));
    let audit = sidecar.audit_seats(&topology.sidecar_url(), event);
    if !read_ok {
        // Nothing to compare the history with: one failure, not one per user.
        findings.violations = vec!["the end state could not be read from Redis and MySQL".into()];
    }
    let failed = !findings.violations.is_empty()
        || drained.is_err()
        || !status.success()
        || !audit.0.success();
    let saved_logs = if failed {
        save_logs(config, topology, sidecar)
    } else {
        "(not kept: the run passed)".into()
    };
    Report {
        config: config.clone(),
        elapsed: started.elapsed(),
        history,
        books,
        faults,
        findings,
        alloc,
        drained,
        reconcile: (status.success(), format!("{status}\n{out}")),
        audit_seats: (audit.0.success(), format!("{}\n{}", audit.0, audit.1)),
        conflicts: state::conflicts_by_reason(&conflict_rows),
        heals: sidecar.count_lines("HEALED after an unplanned failover"),
        sidecar_log: sidecar.log_tail(40),
        redis_logs: topology.logs(),
        saved_logs,
    }
}

/// The door's violations against Redis's end (issue 43).
fn check_door(url: &str, ops: &[DoorOp]) -> Vec<String> {
    eprintln!("soak: {}", door::summary(ops));
    match connect(url).and_then(|mut c| door::read_end(&mut c, ops)) {
        Ok(end) => door::check(ops, &end),
        Err(e) => vec![format!("door: the end could not be read: {e}")],
    }
}

/// Copies the servers' and the sidecar's logs to `<tmp>/tg-soak-<seed>/`.
fn save_logs(config: &Config, topology: &Topology, sidecar: &SidecarProcess) -> String {
    let dir = std::env::temp_dir().join(format!("tg-soak-{}", config.seed));
    let saved = std::fs::create_dir_all(&dir)
        .and_then(|()| topology.save_logs(&dir))
        .and_then(|()| sidecar.save_log(&dir.join("sidecar.log")));
    match saved {
        Ok(_) => dir.display().to_string(),
        Err(e) => format!("(logs not saved to {}: {e})", dir.display()),
    }
}

/// The (event, user) pairs of a history, sorted, once each.
pub fn users_of(history: &[Op]) -> Vec<(String, String)> {
    let mut users: Vec<(String, String)> = history
        .iter()
        .map(|o| (o.event.clone(), o.user.clone()))
        .collect();
    users.sort();
    users.dedup();
    users
}

fn mysql_conn(url: &str) -> Option<mysql::Conn> {
    mysql::Opts::from_url(url)
        .ok()
        .and_then(|o| mysql::Conn::new(o).ok())
}

/// Polls until every log is drained and MySQL's orders equal Redis's
/// (bounded by DRAIN_LIMIT); returns the last states read either way, and
/// whether any could be read.
fn settle(
    url: &str,
    mysql_url: &str,
    users: &[(String, String)],
) -> (Result<Duration, String>, bool, States, States) {
    let start = Instant::now();
    let mut last = (States::new(), States::new());
    let mut backlog = -1;
    let mut read_ok = false;
    while start.elapsed() < DRAIN_LIMIT {
        if let Some((b, redis, mysql)) = read_end_state(url, mysql_url, users) {
            backlog = b;
            read_ok = true;
            let equal = orders(&redis) == orders(&mysql);
            last = (redis, mysql);
            if backlog == 0 && equal {
                return (Ok(start.elapsed()), true, last.0, last.1);
            }
        }
        sleep(Duration::from_millis(200));
    }
    let why = format!(
        "not drained within {DRAIN_LIMIT:?}: {backlog} log entries left, or MySQL != Redis"
    );
    (Err(why), read_ok, last.0, last.1)
}

/// The logs' backlog and the orders in Redis (of `users`) and MySQL, if
/// both answer.
pub fn read_end_state(
    url: &str,
    mysql_url: &str,
    users: &[(String, String)],
) -> Option<(i64, States, States)> {
    let mut c = connect(url).ok()?;
    let mut backlog = 0;
    // The writers' events, and any other the users name (the door's).
    let mut names: std::collections::BTreeSet<&str> = events().iter().map(|e| e.name).collect();
    names.extend(users.iter().map(|(event, _)| event.as_str()));
    for event in names {
        backlog += state::unsynced(&mut c, event).ok()?;
    }
    let redis = state::redis_states(&mut c, users).ok()?;
    let mysql = state::mysql_states(&mut mysql_conn(mysql_url)?).ok()?;
    Some((backlog, redis, mysql))
}

fn orders(states: &States) -> BTreeMap<&(String, String), &(Vec<i64>, super::history::OrderState)> {
    states
        .iter()
        .filter_map(|(k, s)| Some((k, s.order.as_ref()?)))
        .collect()
}
