//! `ticketgate-sidecar run`: the daemon's threads wired together, watched,
//! and stopped. Above every layer it starts: the sync threads
//! ([`crate::sync`]), the verifier ([`crate::loss::verify`]) and the
//! metrics endpoint.
//!
//! ```text
//!  subscriber --(event ids)--> reader --(batches, per event)--> writer[i] --(offsets)--> trimmer
//!  SUBSCRIBE ticket:events     XREAD from in-memory cursors    MySQL tx per batch        XTRIM MINID
//! ```
//!
//! - **Quarantine**: a writer refuses every batch of a quarantined event
//!   (nothing written, offset unchanged) and tells the reader to rewind that
//!   event's cursor to the committed offset and leave it alone for a
//!   second, so no entry is ever skipped and a quarantined log is re-read
//!   about once a second. The verifier checks every synced event against
//!   Redis every `--verify-interval` and after every connect of the reader,
//!   which waits for that round (up to 30 s) before it reads.
//! - **Cluster**: given any node of a Redis Cluster, reads and trims go
//!   through a cluster connection (routed by key, following `MOVED`/`ASK`
//!   and slot migrations), one XREAD per hash slot, and discovery SCANs
//!   every master listed by `CLUSTER NODES` (re-read at each rescan).
//! - Channels are bounded: a slow MySQL stalls the reader (back-pressure)
//!   instead of growing memory; Redis keeps the backlog in the logs.
//! - **Stop** (SIGTERM/SIGINT): the reader stops reading, each writer
//!   finishes and commits the batch in hand, the trimmer trims what was
//!   committed, and `run` returns `Ok` (exit 0). A thread that ends on its
//!   own (a panic) stops everything with an error, so the supervisor
//!   restarts a whole process.

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crossbeam_channel::{bounded, Receiver, Sender};

use crate::io::metrics::{self, Metrics};
use crate::io::rounds::Rounds;
use crate::loss::verify;
use crate::sync::reader::{self, Discovery, Links, Reader};
use crate::sync::subscriber::Subscriber;
use crate::sync::trimmer::Trimmer;
use crate::sync::writer::{Batch, Outputs, Writer};
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

/// The daemon's threads.
struct Threads {
    reader: JoinHandle<()>,
    writers: Vec<JoinHandle<()>>,
    trimmer: JoinHandle<()>,
    verifier: JoinHandle<()>,
    subscriber: JoinHandle<()>,
}

/// Both ends of a channel.
type Pipe<T> = (Sender<T>, Receiver<T>);

/// The channels between the threads (bounded: back-pressure, not memory).
struct Channels {
    discovered: Pipe<String>,
    /// Committed offsets, writers to trimmer.
    trims: Pipe<(String, StreamId)>,
    /// Refused batches, writers to reader.
    rewind: Pipe<(String, StreamId)>,
}

/// The writers' queues (for the reader) and thread handles.
type Writers = (Vec<Sender<Batch>>, Vec<JoinHandle<()>>);

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, String> {
    thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map_err(|e| e.to_string())
}

/// Runs the daemon until `stop` is set; `Ok` after a clean stop.
pub fn run(cfg: Config, stop: Arc<AtomicBool>) -> Result<(), String> {
    let metrics = Metrics::new();
    // The metrics server stops last, with its own flag.
    let metrics_stop = Arc::new(AtomicBool::new(false));
    let metrics_handle = serve_metrics(&cfg, &metrics, &metrics_stop)?;
    // main() connected to MySQL before calling run(); Redis is marked up
    // by the reader's first successful connection.
    metrics.set_up("mysql", true);
    let threads = Threads::start(&cfg, &metrics, &stop)?;
    if let Err(e) = threads.watch(&stop) {
        metrics_stop.store(true, Ordering::Relaxed);
        return Err(e);
    }
    log::info!("stopping: finishing batches in flight");
    threads.join();
    metrics_stop.store(true, Ordering::Relaxed);
    if let Some(h) = metrics_handle {
        let _ = h.join();
    }
    log::info!("stopped cleanly");
    Ok(())
}

/// Starts the `/metrics` server when `--metrics-addr` is given.
fn serve_metrics(
    cfg: &Config,
    metrics: &Arc<Metrics>,
    stop: &Arc<AtomicBool>,
) -> Result<Option<JoinHandle<()>>, String> {
    let Some(addr) = &cfg.metrics_addr else {
        return Ok(None);
    };
    let listener = TcpListener::bind(addr)
        .map_err(|e| format!("cannot listen on --metrics-addr {addr}: {e}"))?;
    log::info!(
        "metrics on http://{}/metrics",
        listener
            .local_addr()
            .map(|a| a.to_string())
            .unwrap_or_default()
    );
    let (m, s) = (metrics.clone(), stop.clone());
    spawn("metrics", move || metrics::serve(listener, m, s)).map(Some)
}

impl Threads {
    /// Starts every thread of the daemon.
    fn start(
        cfg: &Config,
        metrics: &Arc<Metrics>,
        stop: &Arc<AtomicBool>,
    ) -> Result<Threads, String> {
        let ch = Channels {
            discovered: bounded(1024),
            trims: bounded(4096),
            rewind: bounded(4096),
        };
        let (batch_txs, writers) = start_writers(cfg, &ch, metrics, stop)?;
        let verify = Arc::new(Rounds::default());
        let verifier = start_verifier(cfg, &verify, metrics, stop)?;
        let discovery = Discovery::new();
        let subscriber = Subscriber {
            url: cfg.redis_url.clone(),
            tx: ch.discovered.0,
            discovery: discovery.clone(),
            metrics: metrics.clone(),
            stop: stop.clone(),
        };
        let subscriber = spawn("subscriber", move || subscriber.run())?;
        let known = Arc::new(Mutex::new(Vec::new()));
        let links = Links {
            discovered: ch.discovered.1,
            discovery,
            writers: batch_txs,
            rewind: ch.rewind.1,
            known: known.clone(),
            verify,
            metrics: metrics.clone(),
            stop: stop.clone(),
        };
        let reader = Reader::new(reader_settings(cfg), links);
        let reader = spawn("reader", move || reader.run())?;
        let trimmer = Trimmer::new(
            cfg.redis_url.clone(),
            cfg.cluster,
            ch.trims.1,
            known,
            metrics.clone(),
        );
        let trimmer = spawn("trimmer", move || trimmer.run())?;
        Ok(Threads {
            reader,
            writers,
            trimmer,
            verifier,
            subscriber,
        })
    }

    /// Waits for `stop`; an error when a thread ended on its own first (a
    /// bug, a panic): then everything is told to stop and the process
    /// exits non-zero so the supervisor restarts a whole sidecar.
    fn watch(&self, stop: &AtomicBool) -> Result<(), String> {
        while !stop.load(Ordering::Relaxed) {
            thread::sleep(Duration::from_millis(50));
            if let Some(name) = self.dead() {
                if !stop.swap(true, Ordering::Relaxed) {
                    return Err(format!("{name} thread ended unexpectedly; exiting so the supervisor restarts the sidecar"));
                }
            }
        }
        Ok(())
    }

    /// The first thread found finished, if any (the subscriber is not
    /// watched: the reader scans without it).
    fn dead(&self) -> Option<&'static str> {
        if self.reader.is_finished() {
            Some("reader")
        } else if self.trimmer.is_finished() {
            Some("trimmer")
        } else if self.verifier.is_finished() {
            Some("verifier")
        } else if self.writers.iter().any(JoinHandle::is_finished) {
            Some("writer")
        } else {
            None
        }
    }

    /// Joins the threads in the order they finish their work: the reader
    /// stops reading, the writers commit, the trimmer trims.
    fn join(self) {
        let _ = self.reader.join();
        for h in self.writers {
            let _ = h.join();
        }
        let _ = self.trimmer.join();
        let _ = self.verifier.join();
        if self.subscriber.join().is_err() {
            log::error!("subscriber thread panicked");
        }
    }
}

/// Starts the writers; their queues (for the reader) and handles. The
/// writers hold the only senders of trims and rewinds, so the trimmer
/// sees the channel close when the last writer is gone.
fn start_writers(
    cfg: &Config,
    ch: &Channels,
    metrics: &Arc<Metrics>,
    stop: &Arc<AtomicBool>,
) -> Result<Writers, String> {
    let max_merge = cfg.batch_size.saturating_mul(4).max(1);
    let mut queues = Vec::new();
    let mut handles = Vec::new();
    for i in 0..cfg.writers.max(1) {
        let (tx, rx) = bounded::<Batch>(4);
        queues.push(tx);
        let out = Outputs {
            trims: ch.trims.0.clone(),
            rewind: ch.rewind.0.clone(),
            metrics: metrics.clone(),
        };
        let writer = Writer::new(i, cfg.mysql_url.clone(), rx, out, stop.clone(), max_merge);
        handles.push(spawn(&format!("writer-{i}"), move || writer.run())?);
    }
    Ok((queues, handles))
}

/// Starts the verifier, which serves the reader's rounds in `verify`.
fn start_verifier(
    cfg: &Config,
    verify: &Arc<Rounds>,
    metrics: &Arc<Metrics>,
    stop: &Arc<AtomicBool>,
) -> Result<JoinHandle<()>, String> {
    let settings = verify::Settings {
        redis_url: cfg.redis_url.clone(),
        mysql_url: cfg.mysql_url.clone(),
        cluster: cfg.cluster,
        interval: cfg.verify_interval,
    };
    let (v, m, s) = (verify.clone(), metrics.clone(), stop.clone());
    spawn("verifier", move || verify::verifier(settings, v, m, s))
}

fn reader_settings(cfg: &Config) -> reader::Settings {
    reader::Settings {
        redis_url: cfg.redis_url.clone(),
        mysql_url: cfg.mysql_url.clone(),
        cluster: cfg.cluster,
        batch_size: cfg.batch_size,
        block_ms: cfg.block_ms,
        rescan_interval: cfg.rescan_interval,
    }
}
