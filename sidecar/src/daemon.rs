//! `ticketgate-sidecar run`: the threads of the daemon and how they stop.
//!
//! ```text
//!  subscriber --(event ids)--> reader --(batches, per event)--> writer[i] --(offsets)--> trimmer
//!  SUBSCRIBE ticket:events     XREAD from in-memory cursors    MySQL tx per batch        XTRIM MINID
//! ```
//!
//! - **Discovery**: the subscriber forwards every event id the module
//!   publishes at `TICKET.INIT`; the reader SCANs for `ticket:{*}:log` once
//!   the subscription is live (so nothing falls in between) and then every
//!   `--rescan-interval` seconds as a safety net — never every second.
//! - **Reading** starts each log found by SCAN after its committed offset in
//!   `ticket_sync_offset` (a log announced by `TICKET.INIT` starts at `0-0`).
//!   The cursor is only a read position: the writer re-checks every entry
//!   against the locked offset row, so MySQL stays the truth for progress.
//! - **Writers**: an event always hashes to the same writer, so its batches
//!   are applied in order; a writer retries a batch (backoff + jitter) until
//!   it commits, so the reader's cursor never runs past an unapplied entry.
//!   Consecutive queued batches of one event are merged into one transaction.
//! - **Trimmer**: trims only committed offsets and reports the lag.
//! - **Quarantine**: a writer refuses every batch of a quarantined event
//!   (nothing applied, offset unchanged) and tells the reader to rewind that
//!   event's cursor to the committed offset and leave it alone for a
//!   second, so no entry is ever skipped and a quarantined log is re-read
//!   about once a second. The verifier ([`crate::verify`]) checks every
//!   synced event against Redis every `--verify-interval` and after every
//!   connect of the reader, which waits for that round (up to 30 s) before
//!   it reads: entries of an event Redis lost are not applied before the
//!   check had a chance to quarantine it.
//! - **Cluster**: given any node of a Redis Cluster, reads and trims go
//!   through a cluster connection (routed by key, following `MOVED`/`ASK`
//!   and slot migrations), one XREAD per hash slot, and discovery SCANs
//!   every master listed by `CLUSTER NODES` (re-read at each rescan).
//! - Channels are bounded: a slow MySQL stalls the reader (back-pressure)
//!   instead of growing memory; Redis keeps the backlog in the logs.
//! - **Stop** (SIGTERM/SIGINT): the reader stops reading, each writer
//!   finishes and commits the batch in hand, the trimmer trims what was
//!   committed, and `run` returns `Ok` (exit 0).

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{
    bounded, Receiver, RecvTimeoutError, SendTimeoutError, Sender, TrySendError,
};

use crate::backoff::Backoff;
use crate::db;
use crate::metrics::Metrics;
use crate::plan::Entry;
use crate::redisio;
use crate::timefmt::now_ms;
use crate::verify::Rounds;
use protocol::keys::{valid_event, Part, EVENTS_CHANNEL};
use protocol::StreamId;

/// Settings of `run`.
#[derive(Debug, Clone)]
pub struct Config {
    /// Redis URL.
    pub redis_url: String,
    /// MySQL URL.
    pub mysql_url: String,
    /// Entries per XREAD per stream (and per batch).
    pub batch_size: usize,
    /// Writer threads (one MySQL connection each).
    pub writers: usize,
    /// XREAD BLOCK in ms.
    pub block_ms: u64,
    /// Seconds between safety-net SCANs.
    pub rescan_interval: Duration,
    /// Prometheus endpoint.
    pub metrics_addr: Option<String>,
    /// The Redis URL points at a Redis Cluster node.
    pub cluster: bool,
    /// Between two rounds of the verifier.
    pub verify_interval: Duration,
}

/// How long the reader waits for the verifier after connecting to Redis.
const VERIFY_WAIT: Duration = Duration::from_secs(30);

/// How long the reader leaves an event alone after a refused batch.
const REFUSED_PAUSE: Duration = Duration::from_secs(1);

/// Discovery state shared by the subscriber, the reader and the trimmer.
struct Discovery {
    /// Set when a SCAN is needed (after a (re)subscription, or a full queue).
    rescan: Arc<AtomicBool>,
    /// Set once the subscription is live (the first SCAN waits for it).
    subscribed: Arc<AtomicBool>,
    /// The events being drained (the trimmer reports their lag).
    known: Arc<Mutex<Vec<String>>>,
    /// Asked at every (re)connect of the reader: the verifier runs a round.
    verify: Arc<Rounds>,
    /// From the writers: (event, committed offset) of a refused batch.
    rewind: Receiver<(String, StreamId)>,
}

/// One read of one event's log: the entries after `after`.
struct Batch {
    event: String,
    after: StreamId,
    entries: Vec<Entry>,
}

/// Sleeps `d` in small slices; returns early (true) once `stop` is set.
pub fn sleep_unless(stop: &AtomicBool, d: Duration) -> bool {
    let end = Instant::now() + d;
    while Instant::now() < end {
        if stop.load(Ordering::Relaxed) {
            return true;
        }
        thread::sleep(Duration::from_millis(20).min(end.saturating_duration_since(Instant::now())));
    }
    stop.load(Ordering::Relaxed)
}

fn writer_of(event: &str, n: usize) -> usize {
    let mut h = DefaultHasher::new();
    event.hash(&mut h);
    (h.finish() % n.max(1) as u64) as usize
}

/// Runs the daemon until `stop` is set; `Ok` after a clean stop.
pub fn run(cfg: Config, stop: Arc<AtomicBool>) -> Result<(), String> {
    let metrics = Metrics::new();
    let mut handles: Vec<(&str, JoinHandle<()>)> = Vec::new();
    // The metrics server stops last, with its own flag.
    let metrics_stop = Arc::new(AtomicBool::new(false));
    let mut metrics_handle = None;
    if let Some(addr) = &cfg.metrics_addr {
        let listener = TcpListener::bind(addr)
            .map_err(|e| format!("cannot listen on --metrics-addr {addr}: {e}"))?;
        log::info!(
            "metrics on http://{}/metrics",
            listener
                .local_addr()
                .map(|a| a.to_string())
                .unwrap_or_default()
        );
        let (m, s) = (metrics.clone(), metrics_stop.clone());
        metrics_handle = Some(
            thread::Builder::new()
                .name("metrics".into())
                .spawn(move || crate::metrics::serve(listener, m, s))
                .map_err(|e| e.to_string())?,
        );
    }

    // main() connected to MySQL before calling run(); Redis is marked up
    // by the reader's first successful connection.
    metrics.set_up("mysql", true);
    let writers = cfg.writers.max(1);
    let (disc_tx, disc_rx) = bounded::<String>(1024);
    let rescan = Arc::new(AtomicBool::new(true));
    let subscribed = Arc::new(AtomicBool::new(false));
    let (trim_tx, trim_rx) = bounded::<(String, StreamId)>(4096);
    let (rewind_tx, rewind_rx) = bounded::<(String, StreamId)>(4096);
    let verify = Arc::new(Rounds::default());
    let mut batch_txs = Vec::new();
    let mut writer_handles = Vec::new();
    for i in 0..writers {
        let (tx, rx) = bounded::<Batch>(4);
        batch_txs.push(tx);
        let out = Outputs {
            trims: trim_tx.clone(),
            rewind: rewind_tx.clone(),
            metrics: metrics.clone(),
        };
        let (url, s) = (cfg.mysql_url.clone(), stop.clone());
        let max_merge = cfg.batch_size.saturating_mul(4).max(1);
        writer_handles.push(
            thread::Builder::new()
                .name(format!("writer-{i}"))
                .spawn(move || writer(i, url, rx, out, s, max_merge))
                .map_err(|e| e.to_string())?,
        );
    }
    drop((trim_tx, rewind_tx));
    let verifier_handle = {
        let settings = crate::verify::Settings {
            redis_url: cfg.redis_url.clone(),
            mysql_url: cfg.mysql_url.clone(),
            cluster: cfg.cluster,
            interval: cfg.verify_interval,
        };
        let (v, m, s) = (verify.clone(), metrics.clone(), stop.clone());
        thread::Builder::new()
            .name("verifier".into())
            .spawn(move || crate::verify::verifier(settings, v, m, s))
            .map_err(|e| e.to_string())?
    };
    {
        let (url, tx, s, r, sub, m) = (
            cfg.redis_url.clone(),
            disc_tx,
            stop.clone(),
            rescan.clone(),
            subscribed.clone(),
            metrics.clone(),
        );
        handles.push((
            "subscriber",
            thread::Builder::new()
                .name("subscriber".into())
                .spawn(move || subscriber(url, tx, s, r, sub, m))
                .map_err(|e| e.to_string())?,
        ));
    }
    let known = Arc::new(Mutex::new(Vec::new()));
    let reader_handle = {
        let (c, s, m, k) = (cfg.clone(), stop.clone(), metrics.clone(), known.clone());
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || {
                reader(
                    c,
                    disc_rx,
                    batch_txs,
                    Discovery {
                        rescan,
                        subscribed,
                        known: k,
                        verify,
                        rewind: rewind_rx,
                    },
                    m,
                    s,
                )
            })
            .map_err(|e| e.to_string())?
    };
    let trimmer_handle = {
        let (url, m, cluster) = (cfg.redis_url.clone(), metrics.clone(), cfg.cluster);
        thread::Builder::new()
            .name("trimmer".into())
            .spawn(move || trimmer(url, cluster, trim_rx, known, m))
            .map_err(|e| e.to_string())?
    };

    while !stop.load(Ordering::Relaxed) {
        thread::sleep(Duration::from_millis(50));
        // A thread that ends on its own is a bug (a panic): stop everything
        // and exit non-zero so the supervisor restarts a whole process.
        let dead = if reader_handle.is_finished() {
            Some("reader")
        } else if trimmer_handle.is_finished() {
            Some("trimmer")
        } else if verifier_handle.is_finished() {
            Some("verifier")
        } else if writer_handles.iter().any(JoinHandle::is_finished) {
            Some("writer")
        } else {
            None
        };
        if let Some(name) = dead {
            if !stop.swap(true, Ordering::Relaxed) {
                metrics_stop.store(true, Ordering::Relaxed);
                return Err(format!("{name} thread ended unexpectedly; exiting so the supervisor restarts the sidecar"));
            }
        }
    }
    log::info!("stopping: finishing batches in flight");
    let _ = reader_handle.join();
    for h in writer_handles {
        let _ = h.join();
    }
    let _ = trimmer_handle.join();
    let _ = verifier_handle.join();
    for (name, h) in handles {
        if h.join().is_err() {
            log::error!("{name} thread panicked");
        }
    }
    metrics_stop.store(true, Ordering::Relaxed);
    if let Some(h) = metrics_handle {
        let _ = h.join();
    }
    log::info!("stopped cleanly");
    Ok(())
}

/// SUBSCRIBE ticket:events; forwards event ids; reconnects with backoff and
/// asks for a rescan after every (re)subscription (events may have been
/// created while it was not listening).
fn subscriber(
    url: String,
    tx: Sender<String>,
    stop: Arc<AtomicBool>,
    rescan: Arc<AtomicBool>,
    subscribed: Arc<AtomicBool>,
    metrics: Arc<Metrics>,
) {
    let mut backoff = Backoff::standard();
    while !stop.load(Ordering::Relaxed) {
        let mut conn = match redisio::connect(&url, Duration::from_secs(5)) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("subscriber: cannot connect to Redis: {e}");
                metrics.error("redis");
                sleep_unless(&stop, backoff.next_delay());
                continue;
            }
        };
        let mut ps = conn.as_pubsub();
        if let Err(e) = ps
            .subscribe(EVENTS_CHANNEL)
            .and_then(|_| ps.set_read_timeout(Some(Duration::from_millis(250))))
        {
            log::warn!("subscriber: SUBSCRIBE failed: {e}");
            metrics.error("redis");
            sleep_unless(&stop, backoff.next_delay());
            continue;
        }
        log::debug!("subscribed to {}", EVENTS_CHANNEL);
        backoff.reset();
        rescan.store(true, Ordering::Relaxed);
        subscribed.store(true, Ordering::Relaxed);
        while !stop.load(Ordering::Relaxed) {
            match ps.get_message() {
                Ok(msg) => {
                    let event = String::from_utf8_lossy(msg.get_payload_bytes()).into_owned();
                    if !valid_event(&event) {
                        log::warn!("ignoring invalid event id {event:?} on {}", EVENTS_CHANNEL);
                        continue;
                    }
                    log::debug!("discovered event {event} by notification");
                    if let Err(TrySendError::Full(_)) = tx.try_send(event) {
                        rescan.store(true, Ordering::Relaxed);
                    }
                }
                Err(e) if e.is_timeout() => {}
                Err(e) => {
                    log::warn!("subscriber: connection lost: {e}");
                    metrics.error("redis");
                    break;
                }
            }
        }
    }
}

/// Reads all known logs from in-memory cursors and feeds the writers.
fn reader(
    cfg: Config,
    disc: Receiver<String>,
    writers: Vec<Sender<Batch>>,
    shared: Discovery,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
) {
    let Discovery {
        rescan,
        subscribed,
        known,
        verify,
        rewind,
    } = shared;
    let mut cursors: BTreeMap<String, StreamId> = BTreeMap::new();
    let mut paused: HashMap<String, Instant> = HashMap::new();
    let mut conn: Option<redisio::Conn> = None;
    let mut backoff = Backoff::standard();
    let mut last_scan: Option<Instant> = None;
    let started = Instant::now();
    const KEYS_PER_XREAD: usize = 256;
    while !stop.load(Ordering::Relaxed) {
        if conn.is_none() {
            let io = Duration::from_millis(cfg.block_ms + 5000);
            match redisio::Conn::open(&cfg.redis_url, io, cfg.cluster) {
                Ok(c) => {
                    conn = Some(c);
                    metrics.set_up("redis", true);
                    let round = verify.ask();
                    if !verify.wait(round, VERIFY_WAIT, &stop) && !stop.load(Ordering::Relaxed) {
                        log::warn!("reader: no verifier round finished within {VERIFY_WAIT:?} of connecting to Redis; reading anyway");
                    }
                }
                Err(e) => {
                    log::warn!("reader: cannot connect to Redis: {e}");
                    metrics.error("redis");
                    sleep_unless(&stop, backoff.next_delay());
                    continue;
                }
            }
        }
        let Some(c) = conn.as_mut() else { continue };
        while let Ok(event) = disc.try_recv() {
            if let std::collections::btree_map::Entry::Vacant(slot) = cursors.entry(event) {
                log::info!("now draining event {}", slot.key());
                slot.insert(StreamId::ZERO);
            }
        }
        publish_known(&known, &cursors, &metrics);
        let scan_due = last_scan.is_none_or(|t| t.elapsed() >= cfg.rescan_interval)
            || rescan.load(Ordering::Relaxed);
        // The first scan waits for the subscription (so no INIT falls between
        // the two), but not forever: a broken pub/sub must not stop draining.
        let may_scan = last_scan.is_some()
            || subscribed.load(Ordering::Relaxed)
            || started.elapsed() > Duration::from_secs(2);
        if scan_due && may_scan {
            rescan.store(false, Ordering::Relaxed);
            match redisio::scan_all(&cfg.redis_url, c, Part::Log, "stream") {
                Ok(found) => {
                    let found: std::collections::BTreeSet<String> = found.into_iter().collect();
                    // Forget logs that are gone (TICKET.DROP). EXISTS guards
                    // against a log created while the SCAN was running.
                    let missing: Vec<String> = cursors
                        .keys()
                        .filter(|e| !found.contains(*e))
                        .cloned()
                        .collect();
                    for event in missing {
                        let exists: redis::RedisResult<bool> = redis::cmd("EXISTS")
                            .arg(redisio::log_key(&event))
                            .query(c.as_dyn());
                        if let Ok(false) = exists {
                            log::info!(
                                "event {event}: log is gone, no longer draining it (the verifier tells a loss from a drop)"
                            );
                            cursors.remove(&event);
                            metrics.forget(&event);
                        }
                    }
                    // Start new logs at their committed offset (one query for
                    // all of them); 0-0 when MySQL cannot say, which is
                    // merely slower: the writer skips what is applied.
                    let offsets = if found.iter().any(|e| !cursors.contains_key(e)) {
                        committed_offsets(&cfg.mysql_url)
                    } else {
                        HashMap::new()
                    };
                    for event in found {
                        if let std::collections::btree_map::Entry::Vacant(slot) =
                            cursors.entry(event)
                        {
                            let from = offsets.get(slot.key()).copied().unwrap_or(StreamId::ZERO);
                            log::info!("now draining event {} after {from}", slot.key());
                            slot.insert(from);
                        }
                    }
                    last_scan = Some(Instant::now());
                    publish_known(&known, &cursors, &metrics);
                }
                Err(e) => {
                    log::warn!("reader: SCAN failed: {e}");
                    metrics.error("redis");
                    conn = None;
                    sleep_unless(&stop, backoff.next_delay());
                    continue;
                }
            }
        }
        if cursors.is_empty() {
            sleep_unless(&stop, Duration::from_millis(100));
            continue;
        }
        take_rewinds(&rewind, &mut cursors, &mut paused);
        let list: Vec<(String, StreamId)> = cursors
            .iter()
            .filter(|(e, _)| !paused.contains_key(*e))
            .map(|(e, id)| (e.clone(), *id))
            .collect();
        // In a cluster a multi-key XREAD must stay within one hash slot.
        let chunks: Vec<Vec<(String, StreamId)>> = if cfg.cluster {
            let mut by_slot: BTreeMap<u16, Vec<(String, StreamId)>> = BTreeMap::new();
            for item in list {
                by_slot
                    .entry(redisio::key_slot(&item.0))
                    .or_default()
                    .push(item);
            }
            by_slot.into_values().collect()
        } else {
            list.chunks(KEYS_PER_XREAD).map(<[_]>::to_vec).collect()
        };
        let block = (chunks.len() == 1).then_some(cfg.block_ms);
        let mut got_any = false;
        let mut failed = false;
        for chunk in chunks {
            match redisio::xread(c.as_dyn(), &chunk, cfg.batch_size, block) {
                Ok(streams) => {
                    metrics.set_up("redis", true);
                    backoff.reset();
                    for (event, entries) in streams {
                        let Some(last) = entries.last().map(|e| e.id) else {
                            continue;
                        };
                        got_any = true;
                        let w = writer_of(&event, writers.len());
                        let after = cursors.get(&event).copied().unwrap_or(StreamId::ZERO);
                        let mut batch = Batch {
                            event: event.clone(),
                            after,
                            entries,
                        };
                        // Blocks while the writer is behind (back-pressure),
                        // but keeps an eye on the stop flag.
                        loop {
                            match writers[w].send_timeout(batch, Duration::from_millis(100)) {
                                Ok(()) => {
                                    cursors.insert(event, last);
                                    break;
                                }
                                Err(SendTimeoutError::Timeout(b)) => {
                                    if stop.load(Ordering::Relaxed) {
                                        return;
                                    }
                                    batch = b;
                                }
                                Err(SendTimeoutError::Disconnected(_)) => return,
                            }
                        }
                    }
                }
                Err(e) => {
                    log::warn!("reader: XREAD failed: {e}");
                    metrics.error("redis");
                    // A log key that is not a stream (WRONGTYPE) would fail
                    // every XREAD of its chunk forever: stop reading it.
                    if e.code() == Some("WRONGTYPE") {
                        for (event, _) in &chunk {
                            let t: redis::RedisResult<String> = redis::cmd("TYPE")
                                .arg(redisio::log_key(event))
                                .query(c.as_dyn());
                            if let Ok(t) = t {
                                if t != "stream" && t != "none" {
                                    log::error!(
                                        "event {event}: {} is a {t}, not a stream; not draining it",
                                        redisio::log_key(event)
                                    );
                                    cursors.remove(event);
                                    metrics.forget(event);
                                }
                            }
                        }
                        publish_known(&known, &cursors, &metrics);
                        continue;
                    }
                    failed = true;
                    break;
                }
            }
        }
        if failed {
            conn = None;
            sleep_unless(&stop, backoff.next_delay());
        } else if !got_any && block.is_none() {
            sleep_unless(&stop, Duration::from_millis(cfg.block_ms.min(100)));
        }
    }
}

/// Applies the writers' rewinds (a refused batch: read the event again
/// from its committed offset, in a second) and ends pauses that are over.
fn take_rewinds(
    rewind: &Receiver<(String, StreamId)>,
    cursors: &mut BTreeMap<String, StreamId>,
    paused: &mut HashMap<String, Instant>,
) {
    while let Ok((event, offset)) = rewind.try_recv() {
        if let Some(cursor) = cursors.get_mut(&event) {
            *cursor = offset;
            paused.insert(event, Instant::now() + REFUSED_PAUSE);
        }
    }
    paused.retain(|_, until| Instant::now() < *until);
}

/// Every event's committed offset from `ticket_sync_offset`; empty (and a
/// warning) when MySQL is unreachable.
fn committed_offsets(mysql_url: &str) -> HashMap<String, StreamId> {
    match db::connect(mysql_url).and_then(|mut c| db::offsets(&mut c)) {
        Ok(m) => m,
        Err(e) => {
            log::warn!("reader: cannot read offsets from MySQL ({e}); reading new logs from 0-0");
            HashMap::new()
        }
    }
}

/// Shares the list of drained events with the trimmer (for lag gauges).
fn publish_known(
    known: &Mutex<Vec<String>>,
    cursors: &BTreeMap<String, StreamId>,
    metrics: &Metrics,
) {
    if let Ok(mut k) = known.lock() {
        if k.len() != cursors.len() || !k.iter().eq(cursors.keys()) {
            *k = cursors.keys().cloned().collect();
            metrics.set_events(k.len() as u64);
        }
    }
}

/// Where a writer sends what it did.
struct Outputs {
    /// Committed offsets, for the trimmer.
    trims: Sender<(String, StreamId)>,
    /// Refused batches, for the reader.
    rewind: Sender<(String, StreamId)>,
    metrics: Arc<Metrics>,
}

/// Applies batches of its events in order, retrying each until it commits
/// (or the gate refuses it).
fn writer(
    idx: usize,
    url: String,
    rx: Receiver<Batch>,
    out: Outputs,
    stop: Arc<AtomicBool>,
    max_merge: usize,
) {
    let mut conn: Option<mysql::Conn> = None;
    let mut backoff = Backoff::standard();
    loop {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let first = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(b) => b,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        for Batch {
            event,
            after,
            entries,
        } in merge(first, &rx, max_merge)
        {
            loop {
                if conn.is_none() {
                    match db::connect(&url) {
                        Ok(c) => {
                            out.metrics.set_up("mysql", true);
                            conn = Some(c);
                        }
                        Err(e) => {
                            log::warn!("writer-{idx}: cannot connect to MySQL: {e}");
                            out.metrics.error("mysql");
                            if sleep_unless(&stop, backoff.next_delay()) {
                                return;
                            }
                            continue;
                        }
                    }
                }
                let Some(c) = conn.as_mut() else { continue };
                let started = Instant::now();
                match db::apply_batch(c, &event, after, &entries) {
                    Ok(o) => {
                        backoff.reset();
                        out.metrics.set_up("mysql", true);
                        report(&event, entries.len(), &o, started, &out);
                        break;
                    }
                    Err(e) => {
                        log::warn!(
                            "writer-{idx}: event {event}: batch not applied, will retry: {e}"
                        );
                        out.metrics.error("mysql");
                        conn = None;
                        if sleep_unless(&stop, backoff.next_delay()) {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// `first` and the batches queued behind it (up to `max_merge` entries),
/// merged per event, each event's order kept. A batch joins its event's
/// latest group only when it was read right after it; one read after a
/// rewind starts a group of its own.
fn merge(first: Batch, rx: &Receiver<Batch>, max_merge: usize) -> Vec<Batch> {
    let mut groups: Vec<Batch> = Vec::new();
    let mut total = 0;
    let mut next = Some(first);
    while let Some(b) = next.take() {
        total += b.entries.len();
        let latest = groups.iter_mut().rev().find(|g| g.event == b.event);
        match latest {
            Some(g) if g.entries.last().map(|e| e.id) == Some(b.after) => {
                g.entries.extend(b.entries)
            }
            _ => groups.push(b),
        }
        if total < max_merge {
            next = rx.try_recv().ok();
        }
    }
    groups
}

/// Metrics, logs, trims and rewinds after one batch of `event`.
fn report(event: &str, n: usize, o: &db::Outcome, started: Instant, out: &Outputs) {
    let m = &out.metrics;
    for cf in &o.conflicts {
        m.conflict(cf.reason);
    }
    if let Some(ev) = &o.quarantined {
        log::error!(
            "event {event}: QUARANTINED ({}): {} -- nothing more of it is applied; repair: ticketgate-sidecar rebuild --event {event} --apply [--force]",
            ev.reason.code(),
            ev.text
        );
        m.quarantine(event, ev.reason.code());
    }
    if let Some(id) = o.discarded {
        log::warn!(
            "event {event}: the re-created id of this dropped event was dropped again at {id}: its {} entries are reused_after_drop conflicts; the quarantine is lifted",
            o.conflicts.len()
        );
        m.release(event);
    }
    let Some(offset) = o.offset else { return };
    if o.refused {
        log::debug!("event {event}: {n} entries refused (quarantined); re-reading after {offset}");
        let _ = out
            .rewind
            .send_timeout((event.to_owned(), offset), Duration::from_secs(1));
        return;
    }
    if let Some(id) = o.restored {
        log::info!("event {event}: restore {id} applied; the quarantine is lifted");
        m.release(event);
    }
    m.batch(o.path, started.elapsed().as_secs_f64());
    for (op, k) in &o.applied {
        m.applied(op, *k);
    }
    log::debug!(
        "event {event}: {n} entries via {} path, offset {offset}",
        o.path
    );
    let _ = out
        .trims
        .send_timeout((event.to_owned(), offset), Duration::from_secs(1));
}

/// Trims committed offsets (coalesced per event) and refreshes lag gauges.
/// Exits when every writer is gone, after a last trim.
fn trimmer(
    url: String,
    cluster: bool,
    rx: Receiver<(String, StreamId)>,
    known: Arc<Mutex<Vec<String>>>,
    metrics: Arc<Metrics>,
) {
    let mut pending: HashMap<String, StreamId> = HashMap::new();
    let mut conn: Option<redisio::Conn> = None;
    let mut backoff = Backoff::standard();
    let mut open = true;
    let mut failures_after_close = 0;
    let mut last_lag: Option<Instant> = None;
    loop {
        if open {
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((e, id)) => {
                    let slot = pending.entry(e).or_insert(id);
                    *slot = (*slot).max(id);
                    while let Ok((e, id)) = rx.try_recv() {
                        let slot = pending.entry(e).or_insert(id);
                        *slot = (*slot).max(id);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
        }
        if !pending.is_empty() {
            if conn.is_none() {
                match redisio::Conn::open(&url, Duration::from_secs(5), cluster) {
                    Ok(c) => conn = Some(c),
                    Err(e) => log::warn!("trimmer: cannot connect to Redis: {e}"),
                }
            }
            if let Some(c) = conn.as_mut() {
                let mut ok = true;
                let events: Vec<(String, StreamId)> =
                    pending.iter().map(|(e, id)| (e.clone(), *id)).collect();
                for (event, offset) in events {
                    // heal hook: name the anchor in Redis before trimming up to it.
                    let digest = crate::heal::journal::digest_of(&event, offset);
                    let res =
                        crate::heal::journal::trim(c.as_dyn(), &event, offset, digest.as_deref())
                            .and_then(|_| redisio::lag(c.as_dyn(), &event, now_ms()));
                    match res {
                        Ok((len, age)) => {
                            metrics.set_lag(&event, len, age);
                            pending.remove(&event);
                        }
                        Err(e) => {
                            log::warn!("trimmer: XTRIM {event}: {e}");
                            metrics.error("redis");
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    backoff.reset();
                } else {
                    conn = None;
                }
            }
            if !pending.is_empty() {
                if !open {
                    failures_after_close += 1;
                    if failures_after_close > 3 {
                        log::warn!(
                            "trimmer: giving up on {} trims at exit; the next run trims them",
                            pending.len()
                        );
                        return;
                    }
                }
                thread::sleep(backoff.next_delay());
            }
        }
        if !open && pending.is_empty() {
            return;
        }
        // Lag gauges straight from Redis every second, for every event, so
        // they keep growing while MySQL is down and the writers are stuck.
        if open && last_lag.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
            last_lag = Some(Instant::now());
            let names: Vec<String> = known.lock().map(|k| k.clone()).unwrap_or_default();
            if conn.is_none() && !names.is_empty() {
                conn = redisio::Conn::open(&url, Duration::from_secs(5), cluster).ok();
            }
            if let Some(c) = conn.as_mut() {
                for chunk in names.chunks(256) {
                    match redisio::lag_all(c.as_dyn(), chunk, now_ms(), !cluster) {
                        Ok(lags) => {
                            for (e, (len, age)) in chunk.iter().zip(lags) {
                                metrics.set_lag(e, len, age);
                            }
                        }
                        Err(e) => {
                            log::warn!("trimmer: lag query failed: {e}");
                            conn = None;
                            break;
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(event: &str, after: u64, ids: std::ops::RangeInclusive<u64>) -> Batch {
        let entries = ids
            .map(|ms| Entry {
                id: StreamId::new(ms, 0),
                rec: Ok(protocol::record::Record {
                    op: protocol::record::Op::Open,
                    at: ms as i64,
                }),
            })
            .collect();
        Batch {
            event: event.into(),
            after: StreamId::new(after, 0),
            entries,
        }
    }

    #[test]
    fn merges_only_batches_read_one_after_the_other() {
        let (tx, rx) = bounded(8);
        for b in [
            batch("b", 0, 1..=2),
            batch("a", 2, 3..=4),
            // read after a rewind: not a continuation of a's group
            batch("a", 0, 1..=4),
            batch("a", 4, 5..=5),
        ] {
            tx.send(b).unwrap();
        }
        let groups = merge(batch("a", 0, 1..=2), &rx, 100);
        let shape: Vec<(&str, u64, Vec<u64>)> = groups
            .iter()
            .map(|g| {
                let ids = g.entries.iter().map(|e| e.id.ms).collect();
                (g.event.as_str(), g.after.ms, ids)
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("a", 0, vec![1, 2, 3, 4]),
                ("b", 0, vec![1, 2]),
                ("a", 0, vec![1, 2, 3, 4, 5]),
            ]
        );
    }
}
