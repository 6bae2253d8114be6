//! The reader thread: reads every known log from in-memory cursors
//! (`XREAD`, the entries decoded by `io::redis::reply`) and hands the
//! entries, one batch per event, to that event's writer.
//!
//! - **Discovery**: the subscriber forwards event ids the module announces;
//!   the reader SCANs for `ticket:{*}:log` once the subscription is live
//!   (so nothing falls in between) and then every `--rescan-interval` as a
//!   safety net. A log found by SCAN starts after its committed offset in
//!   `ticket_sync_offset`; a log announced by `TICKET.INIT` at `0-0`. The
//!   cursor is only a read position: the writer re-checks every entry
//!   against the locked offset row, so MySQL stays the truth for progress.
//! - **Verification first**: at every connect the reader asks the verifier
//!   for a round ([`Rounds`]) and waits for it (up to 30 s), so entries of
//!   an event Redis lost are not written before it could be quarantined.
//! - **Rewinds**: a writer that refused a batch (a quarantined event) sends
//!   back the committed offset; the reader moves the cursor there and leaves
//!   the event alone for a second.
//! - **Cluster**: one XREAD per hash slot (a multi-key XREAD must stay in
//!   one slot); otherwise up to 256 logs per XREAD.
//! - Channels are bounded: a slow writer stalls the reader (back-pressure).

use std::collections::btree_map::Entry as Slot;
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, SendTimeoutError, Sender};
use redis::{ConnectionLike, RedisResult, Value};

use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::metrics::Metrics;
use crate::io::mysql as db;
use crate::io::redis::connect::Conn;
use crate::io::redis::reply::{take_entries, take_xread};
use crate::io::redis::scan::scan_all;
use crate::io::rounds::Rounds;
use crate::model::Entry;
use crate::sync::writer::Batch;
use protocol::keys::{self, Part};
use protocol::StreamId;

/// How long the reader waits for the verifier after connecting to Redis.
const VERIFY_WAIT: Duration = Duration::from_secs(30);

/// How long the reader leaves an event alone after a refused batch.
const REFUSED_PAUSE: Duration = Duration::from_secs(1);

/// Most logs in one XREAD outside a cluster.
const KEYS_PER_XREAD: usize = 256;

/// Flags the subscriber sets for the reader.
#[derive(Clone)]
pub struct Discovery {
    /// Set when a SCAN is needed (after a (re)subscription, or a full queue).
    pub rescan: Arc<AtomicBool>,
    /// Set once the subscription is live (the first SCAN waits for it).
    pub subscribed: Arc<AtomicBool>,
}

impl Discovery {
    /// A SCAN is due at once; nothing is subscribed yet.
    pub fn new() -> Discovery {
        Discovery {
            rescan: Arc::new(AtomicBool::new(true)),
            subscribed: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// Settings of the reader.
#[derive(Debug, Clone)]
pub struct Settings {
    pub redis_url: String,
    pub mysql_url: String,
    pub cluster: bool,
    /// Entries per XREAD per stream (and per batch).
    pub batch_size: usize,
    /// XREAD BLOCK in ms.
    pub block_ms: u64,
    /// Seconds between safety-net SCANs.
    pub rescan_interval: Duration,
}

/// What the reader is connected to: its inputs and outputs.
pub struct Links {
    /// Event ids announced to the subscriber.
    pub discovered: Receiver<String>,
    pub discovery: Discovery,
    /// One queue per writer.
    pub writers: Vec<Sender<Batch>>,
    /// From the writers: (event, committed offset) of a refused batch.
    pub rewind: Receiver<(String, StreamId)>,
    /// The events being drained (the trimmer reports their lag).
    pub known: Arc<Mutex<Vec<String>>>,
    /// Asked at every (re)connect: the verifier runs a round.
    pub verify: Arc<Rounds>,
    pub metrics: Arc<Metrics>,
    pub stop: Arc<AtomicBool>,
}

/// The reader: its links and its cursors.
pub struct Reader {
    cfg: Settings,
    links: Links,
    cursors: BTreeMap<String, StreamId>,
    paused: HashMap<String, Instant>,
    conn: Option<Conn>,
    backoff: Backoff,
    last_scan: Option<Instant>,
    started: Instant,
}

/// How one pass over the logs ended.
enum Pass {
    /// Keep the connection and read on.
    Done,
    /// The connection failed: drop it and back off.
    Lost,
    /// Stop, or the writers are gone.
    Stop,
}

/// The writer that writes every batch of `event`.
pub fn writer_of(event: &str, n: usize) -> usize {
    let mut h = DefaultHasher::new();
    event.hash(&mut h);
    (h.finish() % n.max(1) as u64) as usize
}

impl Reader {
    /// A reader with no cursor yet.
    pub fn new(cfg: Settings, links: Links) -> Reader {
        Reader {
            cfg,
            links,
            cursors: BTreeMap::new(),
            paused: HashMap::new(),
            conn: None,
            backoff: Backoff::standard(),
            last_scan: None,
            started: Instant::now(),
        }
    }

    fn stopped(&self) -> bool {
        self.links.stop.load(Ordering::Relaxed)
    }

    /// Reads until `stop` is set (or the writers are gone).
    pub fn run(mut self) {
        while !self.stopped() {
            let Some(mut c) = self.conn.take().or_else(|| self.connect()) else {
                continue;
            };
            match self.pass(&mut c) {
                Pass::Done => self.conn = Some(c),
                Pass::Lost => {
                    sleep_unless(&self.links.stop, self.backoff.next_delay());
                }
                Pass::Stop => return,
            }
        }
    }

    /// Connects, then waits for a verifier round; None (after a backoff)
    /// when Redis cannot be reached.
    fn connect(&mut self) -> Option<Conn> {
        let io = Duration::from_millis(self.cfg.block_ms + 5000);
        match Conn::open(&self.cfg.redis_url, io, self.cfg.cluster) {
            Ok(c) => {
                self.links.metrics.set_up("redis", true);
                let round = self.links.verify.ask();
                if !self.links.verify.wait(round, VERIFY_WAIT, &self.links.stop) && !self.stopped()
                {
                    log::warn!("reader: no verifier round finished within {VERIFY_WAIT:?} of connecting to Redis; reading anyway");
                }
                Some(c)
            }
            Err(e) => {
                log::warn!("reader: cannot connect to Redis: {e}");
                self.links.metrics.error("redis");
                sleep_unless(&self.links.stop, self.backoff.next_delay());
                None
            }
        }
    }

    /// One pass: take announcements, SCAN when due, read every log once.
    fn pass(&mut self, c: &mut Conn) -> Pass {
        self.take_announced();
        self.publish_known();
        if self.scan_due() {
            self.links.discovery.rescan.store(false, Ordering::Relaxed);
            if let Err(e) = self.scan(c) {
                log::warn!("reader: SCAN failed: {e}");
                self.links.metrics.error("redis");
                return Pass::Lost;
            }
        }
        if self.cursors.is_empty() {
            sleep_unless(&self.links.stop, Duration::from_millis(100));
            return Pass::Done;
        }
        self.take_rewinds();
        let chunks = self.chunks();
        let block = (chunks.len() == 1).then_some(self.cfg.block_ms);
        let mut got_any = false;
        for chunk in chunks {
            match self.read_chunk(c, &chunk, block) {
                Ok(got) => got_any |= got,
                Err(pass) => return pass,
            }
        }
        if !got_any && block.is_none() {
            sleep_unless(
                &self.links.stop,
                Duration::from_millis(self.cfg.block_ms.min(100)),
            );
        }
        Pass::Done
    }

    /// Starts every event the subscriber announced at `0-0`.
    fn take_announced(&mut self) {
        while let Ok(event) = self.links.discovered.try_recv() {
            if let Slot::Vacant(slot) = self.cursors.entry(event) {
                log::info!("now draining event {}", slot.key());
                slot.insert(StreamId::ZERO);
            }
        }
    }

    /// The rescan interval passed, or a rescan was asked for; the first
    /// scan waits for the subscription (so no INIT falls between the two),
    /// but not forever: a broken pub/sub must not stop draining.
    fn scan_due(&self) -> bool {
        let d = &self.links.discovery;
        let due = self
            .last_scan
            .is_none_or(|t| t.elapsed() >= self.cfg.rescan_interval)
            || d.rescan.load(Ordering::Relaxed);
        let may = self.last_scan.is_some()
            || d.subscribed.load(Ordering::Relaxed)
            || self.started.elapsed() > Duration::from_secs(2);
        due && may
    }

    /// SCANs for logs: forgets the ones gone, starts the new ones.
    fn scan(&mut self, c: &mut Conn) -> redis::RedisResult<()> {
        let found = scan_all(&self.cfg.redis_url, c, Part::Log, "stream")?;
        let found: BTreeSet<String> = found.into_iter().collect();
        self.forget_gone(c, &found);
        self.start_found(found);
        self.last_scan = Some(Instant::now());
        self.publish_known();
        Ok(())
    }

    /// Forgets logs that are gone (TICKET.DROP). EXISTS guards against a
    /// log created while the SCAN was running.
    fn forget_gone(&mut self, c: &mut Conn, found: &BTreeSet<String>) {
        let missing: Vec<String> = self
            .cursors
            .keys()
            .filter(|e| !found.contains(*e))
            .cloned()
            .collect();
        for event in missing {
            let exists: redis::RedisResult<bool> = redis::cmd("EXISTS")
                .arg(keys::key(&event, Part::Log))
                .query(c.as_dyn());
            if let Ok(false) = exists {
                log::info!(
                    "event {event}: log is gone, no longer draining it (the verifier tells a loss from a drop)"
                );
                self.cursors.remove(&event);
                self.links.metrics.forget(&event);
            }
        }
    }

    /// Starts new logs at their committed offset (one query for all of
    /// them); 0-0 when MySQL cannot say, which is merely slower: the writer
    /// skips what is written.
    fn start_found(&mut self, found: BTreeSet<String>) {
        let offsets = if found.iter().any(|e| !self.cursors.contains_key(e)) {
            committed_offsets(&self.cfg.mysql_url)
        } else {
            HashMap::new()
        };
        for event in found {
            if let Slot::Vacant(slot) = self.cursors.entry(event) {
                let from = offsets.get(slot.key()).copied().unwrap_or(StreamId::ZERO);
                log::info!("now draining event {} after {from}", slot.key());
                slot.insert(from);
            }
        }
    }

    /// Applies the writers' rewinds (a refused batch: read the event again
    /// from its committed offset, in a second) and ends pauses that are over.
    fn take_rewinds(&mut self) {
        while let Ok((event, offset)) = self.links.rewind.try_recv() {
            if let Some(cursor) = self.cursors.get_mut(&event) {
                *cursor = offset;
                self.paused.insert(event, Instant::now() + REFUSED_PAUSE);
            }
        }
        self.paused.retain(|_, until| Instant::now() < *until);
    }

    /// The cursors not paused, grouped for one XREAD each: by hash slot in
    /// a cluster (a multi-key XREAD must stay within one slot), else by 256.
    fn chunks(&self) -> Vec<Vec<(String, StreamId)>> {
        let list: Vec<(String, StreamId)> = self
            .cursors
            .iter()
            .filter(|(e, _)| !self.paused.contains_key(*e))
            .map(|(e, id)| (e.clone(), *id))
            .collect();
        if !self.cfg.cluster {
            return list.chunks(KEYS_PER_XREAD).map(<[_]>::to_vec).collect();
        }
        let mut by_slot: BTreeMap<u16, Vec<(String, StreamId)>> = BTreeMap::new();
        for item in list {
            by_slot
                .entry(keys::slot_of(&item.0))
                .or_default()
                .push(item);
        }
        by_slot.into_values().collect()
    }

    /// One XREAD, its batches sent to the writers; whether it got entries.
    fn read_chunk(
        &mut self,
        c: &mut Conn,
        chunk: &[(String, StreamId)],
        block: Option<u64>,
    ) -> Result<bool, Pass> {
        let streams = match xread(c.as_dyn(), chunk, self.cfg.batch_size, block) {
            Ok(streams) => streams,
            Err(e) => {
                log::warn!("reader: XREAD failed: {e}");
                self.links.metrics.error("redis");
                // A log key that is not a stream (WRONGTYPE) would fail
                // every XREAD of its chunk forever: stop reading it.
                if e.code() == Some("WRONGTYPE") {
                    self.drop_non_streams(c, chunk);
                    return Ok(false);
                }
                return Err(Pass::Lost);
            }
        };
        self.links.metrics.set_up("redis", true);
        self.backoff.reset();
        let mut got = false;
        for (event, entries) in streams {
            let Some(last) = entries.last().map(|e| e.id) else {
                continue;
            };
            got = true;
            if !self.send(event, entries, last) {
                return Err(Pass::Stop);
            }
        }
        Ok(got)
    }

    /// Hands a batch to its writer and moves the cursor to `last`. Blocks
    /// while the writer is behind (back-pressure), but keeps an eye on the
    /// stop flag; false on stop or when the writer is gone.
    fn send(&mut self, event: String, entries: Vec<Entry>, last: StreamId) -> bool {
        let w = writer_of(&event, self.links.writers.len());
        let after = self.cursors.get(&event).copied().unwrap_or(StreamId::ZERO);
        let mut batch = Batch {
            event: event.clone(),
            after,
            entries,
        };
        loop {
            match self.links.writers[w].send_timeout(batch, Duration::from_millis(100)) {
                Ok(()) => {
                    self.cursors.insert(event, last);
                    return true;
                }
                Err(SendTimeoutError::Timeout(b)) => {
                    if self.stopped() {
                        return false;
                    }
                    batch = b;
                }
                Err(SendTimeoutError::Disconnected(_)) => return false,
            }
        }
    }

    /// Stops draining the events of `chunk` whose log key is not a stream.
    fn drop_non_streams(&mut self, c: &mut Conn, chunk: &[(String, StreamId)]) {
        for (event, _) in chunk {
            let t: redis::RedisResult<String> = redis::cmd("TYPE")
                .arg(keys::key(event, Part::Log))
                .query(c.as_dyn());
            if let Ok(t) = t {
                if t != "stream" && t != "none" {
                    log::error!(
                        "event {event}: {} is a {t}, not a stream; not draining it",
                        keys::key(event, Part::Log)
                    );
                    self.cursors.remove(event);
                    self.links.metrics.forget(event);
                }
            }
        }
        self.publish_known();
    }

    /// Shares the list of drained events with the trimmer (for lag gauges).
    fn publish_known(&self) {
        if let Ok(mut k) = self.links.known.lock() {
            if k.len() != self.cursors.len() || !k.iter().eq(self.cursors.keys()) {
                *k = self.cursors.keys().cloned().collect();
                self.links.metrics.set_events(k.len() as u64);
            }
        }
    }
}

/// `XREAD COUNT count [BLOCK ms] STREAMS k.. id..` over `events` (event,
/// cursor); the decoded entries per event.
fn xread(
    conn: &mut dyn ConnectionLike,
    events: &[(String, StreamId)],
    count: usize,
    block_ms: Option<u64>,
) -> RedisResult<Vec<(String, Vec<Entry>)>> {
    let mut cmd = redis::cmd("XREAD");
    cmd.arg("COUNT").arg(count);
    if let Some(ms) = block_ms {
        cmd.arg("BLOCK").arg(ms);
    }
    cmd.arg("STREAMS");
    for (e, _) in events {
        cmd.arg(keys::key(e, Part::Log));
    }
    for (_, id) in events {
        cmd.arg(id.to_string());
    }
    let reply: Value = cmd.query(conn)?;
    Ok(take_xread(reply)
        .into_iter()
        .filter_map(|(key, v)| {
            let event = keys::event_of_key(key.as_bytes(), Part::Log)?.to_owned();
            let entries = take_entries(&event, v);
            Some((event, entries))
        })
        .collect())
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
