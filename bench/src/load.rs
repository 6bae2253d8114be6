//! Load drivers over the raw RESP client:
//!
//! * [`closed_loop`]: every connection sends its commands one at a time
//!   (a user's request, then the next), all connections starting together
//!   behind a barrier; per-request latency from send to reply. A few client
//!   threads each poll(2) over their share of the connections, so 1,000
//!   connections really do send at the same instant without 1,000 threads
//!   fighting for two cores.
//! * [`pipelined`]: each connection keeps `pipeline` commands in flight;
//!   returns the claims per second and every ticket handed out.
//! * [`scheduled`]: users that act over time (claim, think, confirm, retry):
//!   each client thread runs an [`Actor`] over its connections and sends
//!   every action when it is due on the next idle connection, urgent ones
//!   first, until told to stop.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use indicatif::ProgressBar;

use crate::report::{latency_histogram, Latency};
use crate::resp::{poll_readable, RawConn, RedisAddr, Reply};

/// A closed loop fails when no reply at all arrives for this long.
const STALL_TIMEOUT: Duration = Duration::from_secs(120);

/// One request: who sends it, and the encoded command.
pub struct Request {
    pub user: String,
    pub bytes: Vec<u8>,
}

impl Request {
    /// `TICKET.CLAIM event user COUNT n`: a party's best-available claim on
    /// a seated event (the lowest `n` numbers on a general-admission one).
    pub fn claim_count(event: &str, user: String, n: u64) -> Request {
        let n = n.to_string();
        let mut bytes = Vec::new();
        let args: [&[u8]; 5] = [
            b"TICKET.CLAIM",
            event.as_bytes(),
            user.as_bytes(),
            b"COUNT",
            n.as_bytes(),
        ];
        crate::resp::encode(&mut bytes, &args);
        Request { user, bytes }
    }
}

/// What a request got back.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub user: String,
    /// `Ok(Some(ticket))`, `Ok(None)` for nil, `Err(error text)`.
    pub reply: Result<Option<i64>, String>,
}

pub struct ClosedLoopResult {
    pub outcomes: Vec<Outcome>,
    pub latency: Option<Latency>,
    /// When the barrier released (earliest thread).
    pub start: Instant,
    /// When the last reply arrived.
    pub end: Instant,
}

/// Callback run for every reply, on the client thread that read it.
pub type OnReply<'a> = &'a (dyn Fn(&str, &Reply) + Sync);

struct ThreadOut {
    outcomes: Vec<Outcome>,
    hist: hdrhistogram::Histogram<u64>,
    start: Instant,
    end: Instant,
}

/// Runs `per_conn[i]` sequentially on connection `i`, all connections at once.
pub fn closed_loop(
    addr: &RedisAddr,
    per_conn: Vec<Vec<Request>>,
    threads: usize,
    on_reply: OnReply,
    progress: &ProgressBar,
) -> Result<ClosedLoopResult> {
    // Connect everything first (connecting is not part of the measurement).
    let conns = per_conn
        .into_iter()
        .map(|reqs| Ok((RawConn::connect(addr)?, reqs)))
        .collect::<Result<Vec<_>>>()?;
    let work = |g| closed_loop_thread(g, on_reply, progress);
    let (outs, _) = on_threads(deal(conns, threads), work);
    let mut hist = latency_histogram();
    let mut outcomes = Vec::new();
    let mut start: Option<Instant> = None;
    let mut end: Option<Instant> = None;
    for o in outs {
        let o = o?;
        hist.add(&o.hist).context("merge histograms")?;
        outcomes.extend(o.outcomes);
        start = Some(start.map_or(o.start, |s| s.min(o.start)));
        end = Some(end.map_or(o.end, |e| e.max(o.end)));
    }
    let now = Instant::now();
    Ok(ClosedLoopResult {
        outcomes,
        latency: Latency::from_histogram(&hist),
        start: start.unwrap_or(now),
        end: end.unwrap_or(now),
    })
}

fn closed_loop_thread(
    mut conns: Vec<(RawConn, Vec<Request>)>,
    on_reply: OnReply,
    progress: &ProgressBar,
) -> Result<ThreadOut> {
    let mut hist = latency_histogram();
    let mut outcomes = Vec::new();
    let mut next = vec![0usize; conns.len()];
    let mut sent_at = Vec::with_capacity(conns.len());
    let start = Instant::now();
    for (c, reqs) in conns.iter_mut() {
        if let Some(r) = reqs.first() {
            c.send(&r.bytes)?;
        }
        sent_at.push(Instant::now());
    }
    let mut active: Vec<usize> = (0..conns.len())
        .filter(|&i| !conns[i].1.is_empty())
        .collect();
    let mut end = start;
    let mut done_since_tick = 0u64;
    while !active.is_empty() {
        let fds: Vec<_> = active.iter().map(|&i| conns[i].0.fd()).collect();
        let ready = poll_readable(&fds, 10_000)?;
        if ready.is_empty() {
            if end.max(start).elapsed() > STALL_TIMEOUT {
                bail!(
                    "no reply from Redis for {STALL_TIMEOUT:?} ({} connections still waiting)",
                    active.len()
                );
            }
            continue;
        }
        let mut finished = Vec::new();
        for k in ready {
            let i = active[k];
            let (conn, reqs) = &mut conns[i];
            conn.fill()?;
            while let Some(reply) = conn.try_reply()? {
                let now = Instant::now();
                let us = now.duration_since(sent_at[i]).as_micros().max(1) as u64;
                hist.record(us.min(3_600_000_000))
                    .context("record latency")?;
                let req = &reqs[next[i]];
                on_reply(&req.user, &reply);
                outcomes.push(Outcome {
                    user: req.user.clone(),
                    reply: reply.ticket(),
                });
                end = now;
                done_since_tick += 1;
                next[i] += 1;
                if next[i] < reqs.len() {
                    conn.send(&reqs[next[i]].bytes)?;
                    sent_at[i] = Instant::now();
                } else {
                    finished.push(k);
                    break;
                }
            }
        }
        if done_since_tick >= 256 {
            progress.inc(done_since_tick);
            done_since_tick = 0;
        }
        if !finished.is_empty() {
            finished.sort_unstable();
            for k in finished.into_iter().rev() {
                active.swap_remove(k);
            }
        }
    }
    progress.inc(done_since_tick);
    Ok(ThreadOut {
        outcomes,
        hist,
        start,
        end,
    })
}

/// Result of a pipelined run.
pub struct PipelinedResult {
    pub elapsed: Duration,
    pub tickets: Vec<i64>,
    pub nils: u64,
    pub error_count: u64,
    /// The first few error replies.
    pub errors: Vec<String>,
}

impl PipelinedResult {
    pub fn per_sec(&self) -> f64 {
        self.tickets.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Sends commands `0..total` (encoded by `encode(buf, i)`) over `conns`
/// connections from `threads` threads, `pipeline` in flight per connection.
pub fn pipelined(
    addr: &RedisAddr,
    conns: usize,
    threads: usize,
    pipeline: usize,
    total: u64,
    encode: &(dyn Fn(&mut Vec<u8>, u64) + Sync),
    progress: &ProgressBar,
) -> Result<PipelinedResult> {
    let pipeline = pipeline.max(1) as u64;
    let conns = (0..conns.max(1))
        .map(|_| RawConn::connect(addr))
        .collect::<Result<Vec<_>>>()?;
    let counter = AtomicU64::new(0);
    let work = |g| pipelined_thread(g, &counter, pipeline, total, encode, progress);
    let (outs, elapsed) = on_threads(deal(conns, threads), work);
    let mut res = PipelinedResult {
        elapsed,
        tickets: Vec::with_capacity(total as usize),
        nils: 0,
        error_count: 0,
        errors: Vec::new(),
    };
    for o in outs {
        let (t, n, ec, e) = o?;
        res.tickets.extend(t);
        res.nils += n;
        res.error_count += ec;
        res.errors.extend(e);
    }
    Ok(res)
}

fn pipelined_thread(
    mut conns: Vec<RawConn>,
    counter: &AtomicU64,
    pipeline: u64,
    total: u64,
    encode: &(dyn Fn(&mut Vec<u8>, u64) + Sync),
    progress: &ProgressBar,
) -> Result<ThreadTally> {
    let mut tickets = Vec::new();
    let mut nils = 0u64;
    let mut error_count = 0u64;
    let mut errors = Vec::new();
    let mut buf = Vec::with_capacity(4096);
    let mut in_flight = vec![0u64; conns.len()];
    // Sends the next chunk of commands on one connection; 0 when none are left.
    let mut refill = |c: &mut RawConn| -> Result<u64> {
        let from = counter.fetch_add(pipeline, Ordering::Relaxed);
        if from >= total {
            return Ok(0);
        }
        let to = (from + pipeline).min(total);
        buf.clear();
        for k in from..to {
            encode(&mut buf, k);
        }
        c.send(&buf)?;
        Ok(to - from)
    };
    for (i, c) in conns.iter_mut().enumerate() {
        in_flight[i] = refill(c)?;
    }
    // Round robin: read a connection's replies, refill it at once, next.
    while in_flight.iter().any(|&n| n > 0) {
        let mut done = 0;
        for (i, c) in conns.iter_mut().enumerate() {
            if in_flight[i] == 0 {
                continue;
            }
            for _ in 0..in_flight[i] {
                match c.read_reply()?.ticket() {
                    Ok(Some(t)) => tickets.push(t),
                    Ok(None) => nils += 1,
                    Err(e) => {
                        error_count += 1;
                        if errors.len() < 10 {
                            errors.push(e);
                        }
                    }
                }
            }
            done += in_flight[i];
            in_flight[i] = refill(c)?;
        }
        progress.inc(done);
    }
    Ok((tickets, nils, error_count, errors))
}

/// Tickets, nil replies, error count, first errors.
type ThreadTally = (Vec<i64>, u64, u64, Vec<String>);

/// A command an [`Actor`] wants sent for one of its users, at `at` or later.
pub struct Action {
    pub at: Instant,
    /// Urgent actions go before every due normal one (a checkout's confirm
    /// must not wait behind a crowd of retried claims).
    pub urgent: bool,
    pub user: usize,
    pub bytes: Vec<u8>,
}

/// The users of one client thread of [`scheduled`].
pub trait Actor: Send {
    /// The first actions.
    fn start(&mut self, now: Instant) -> Vec<Action>;
    /// What `user` does after `reply` (sent at `sent`); `None`: nothing.
    fn on_reply(
        &mut self,
        user: usize,
        reply: Reply,
        sent: Instant,
        now: Instant,
    ) -> Option<Action>;
}

/// Actions by due time (then push order): (at, seq, user, bytes).
type Heap = BinaryHeap<Reverse<(Instant, u64, usize, Vec<u8>)>>;

/// Due-time ordered actions, urgent ones in their own heap.
#[derive(Default)]
struct Queue {
    urgent: Heap,
    normal: Heap,
    seq: u64,
}

impl Queue {
    fn push(&mut self, a: Action) {
        self.seq += 1;
        let item = Reverse((a.at, self.seq, a.user, a.bytes));
        match a.urgent {
            true => self.urgent.push(item),
            false => self.normal.push(item),
        }
    }

    /// The next due action, urgent first.
    fn pop_due(&mut self, now: Instant) -> Option<(usize, Vec<u8>)> {
        for heap in [&mut self.urgent, &mut self.normal] {
            if heap.peek().is_some_and(|Reverse(a)| a.0 <= now) {
                return heap.pop().map(|Reverse((_, _, user, bytes))| (user, bytes));
            }
        }
        None
    }

    fn next_due(&self) -> Option<Instant> {
        let due = |h: &Heap| h.peek().map(|r| r.0 .0);
        match (due(&self.urgent), due(&self.normal)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn is_empty(&self) -> bool {
        self.urgent.is_empty() && self.normal.is_empty()
    }
}

/// Runs each actor on its own thread over `conns_per_actor` connections,
/// all starting together, until `stop` is set, `deadline` passes or no
/// actor has anything left to do; the replies in flight are read before
/// it returns the actors.
pub fn scheduled<A: Actor>(
    addr: &RedisAddr,
    actors: Vec<A>,
    conns_per_actor: usize,
    stop: &AtomicBool,
    deadline: Instant,
) -> Result<Vec<A>> {
    let mut groups = Vec::new();
    for a in actors {
        let conns = (0..conns_per_actor.max(1))
            .map(|_| RawConn::connect(addr))
            .collect::<Result<Vec<_>>>()?;
        groups.push((a, conns));
    }
    let work = |(a, conns)| scheduled_thread(a, conns, stop, deadline);
    on_threads(groups, work).0.into_iter().collect()
}

/// `items` dealt round robin over at most `threads` groups (one per thread).
fn deal<T>(items: Vec<T>, threads: usize) -> Vec<Vec<T>> {
    let threads = threads.clamp(1, items.len().max(1));
    let mut groups: Vec<Vec<T>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, item) in items.into_iter().enumerate() {
        groups[i % threads].push(item);
    }
    groups
}

/// Runs `work` on one thread per group, all released at once; returns what
/// each returned (a panic becomes an error) and the time from the release
/// until the last one finished.
fn on_threads<G: Send, T: Send>(
    groups: Vec<G>,
    work: impl Fn(G) -> Result<T> + Sync,
) -> (Vec<Result<T>>, Duration) {
    let barrier = Barrier::new(groups.len() + 1);
    thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|g| {
                let (barrier, work) = (&barrier, &work);
                s.spawn(move || {
                    barrier.wait();
                    work(g)
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        let panicked = |_| Err(anyhow!("client thread panicked"));
        let outs = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(panicked))
            .collect();
        (outs, t0.elapsed())
    })
}

/// Sends due actions on the idle connections, urgent ones first.
fn dispatch(
    queue: &mut Queue,
    conns: &mut [RawConn],
    busy: &mut [Option<(usize, Instant)>],
    now: Instant,
) -> Result<()> {
    for (c, b) in conns.iter_mut().zip(busy.iter_mut()) {
        if b.is_none() {
            let Some((user, bytes)) = queue.pop_due(now) else {
                break;
            };
            c.send(&bytes)?;
            *b = Some((user, now));
        }
    }
    Ok(())
}

fn scheduled_thread<A: Actor>(
    mut actor: A,
    mut conns: Vec<RawConn>,
    stop: &AtomicBool,
    deadline: Instant,
) -> Result<A> {
    let mut queue = Queue::default();
    // The user and send time of the one command in flight per connection.
    let mut busy: Vec<Option<(usize, Instant)>> = conns.iter().map(|_| None).collect();
    let mut last_reply = Instant::now();
    actor
        .start(last_reply)
        .into_iter()
        .for_each(|a| queue.push(a));
    loop {
        let now = Instant::now();
        let stopping = stop.load(Ordering::Relaxed) || now >= deadline;
        if !stopping {
            dispatch(&mut queue, &mut conns, &mut busy, now)?;
        }
        let waiting: Vec<usize> = (0..conns.len()).filter(|&i| busy[i].is_some()).collect();
        if waiting.is_empty() && (stopping || queue.is_empty()) {
            return Ok(actor);
        }
        let wait_ms = match queue.next_due() {
            Some(t) if !stopping => t.saturating_duration_since(now).as_millis().min(10) as i32,
            _ => 10,
        };
        let fds: Vec<_> = waiting.iter().map(|&i| conns[i].fd()).collect();
        let ready = match fds.is_empty() {
            true => {
                thread::sleep(Duration::from_millis(wait_ms as u64));
                Vec::new()
            }
            false => poll_readable(&fds, wait_ms)?,
        };
        for k in ready {
            let i = waiting[k];
            conns[i].fill()?;
            if let Some(reply) = conns[i].try_reply()? {
                let (user, sent) = busy[i].take().context("a reply nobody waited for")?;
                last_reply = Instant::now();
                if let Some(a) = actor.on_reply(user, reply, sent, last_reply) {
                    queue.push(a);
                }
            }
        }
        if !waiting.is_empty() && last_reply.elapsed() > STALL_TIMEOUT {
            bail!("no reply from Redis for {STALL_TIMEOUT:?}");
        }
    }
}
