//! The MySQL side of the baselines (all in the baseline database, which has
//! the sidecar's schema but is never drained by it):
//!
//! * the **MySQL-only path** (the first reference design without Redis): one
//!   transaction per request — conditional `UPDATE ticket_stock ... WHERE
//!   remaining_stock >= 1`, read the new stock to number the ticket, unique
//!   `INSERT` into `ticket_participation`, commit;
//! * the **Lua path's writer** (the coupon gate's "then write to MySQL"): for
//!   each winner the Lua script returned, the same UPDATE + INSERT in one
//!   transaction, from a pool of writer threads.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::Instant;

use anyhow::{anyhow, Context, Result};
use indicatif::ProgressBar;
use mysql::prelude::Queryable;
use mysql::TxOpts;

use crate::env::mysql_conn;
use crate::report::{latency_histogram, Latency};

/// Result of one MySQL-only claim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    Won(i64),
    SoldOut,
    /// The user already has a row (unique index refused the INSERT).
    Duplicate,
}

const UPDATE_STOCK: &str = "UPDATE ticket_stock SET remaining_stock = remaining_stock - 1 \
                            WHERE event_id = ? AND remaining_stock >= 1";
const INSERT_ROW: &str = "INSERT INTO ticket_participation \
                          (event_id, user_id, ticket_number, status, claimed_at, stream_id) \
                          VALUES (?, ?, ?, 'active', NOW(3), '')";

fn is_duplicate(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(m) if m.code == 1062)
}

/// One MySQL-only claim: a transaction with the conditional UPDATE and the
/// unique INSERT. The ticket number is `total - remaining` after the
/// decrement (the UPDATE holds the row lock until commit, so numbers are
/// unique and gap-free).
pub fn mysql_only_claim(c: &mut mysql::Conn, event: &str, user: &str, total: u64) -> Result<Claim> {
    let mut tx = c.start_transaction(TxOpts::default())?;
    tx.exec_drop(UPDATE_STOCK, (event,))?;
    if tx.affected_rows() == 0 {
        tx.rollback()?;
        return Ok(Claim::SoldOut);
    }
    let remaining: i64 = tx
        .exec_first(
            "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
            (event,),
        )?
        .ok_or_else(|| anyhow!("stock row of {event} vanished"))?;
    let ticket = total as i64 - remaining;
    match tx.exec_drop(INSERT_ROW, (event, user, ticket)) {
        Ok(()) => {}
        Err(e) if is_duplicate(&e) => {
            tx.rollback()?;
            return Ok(Claim::Duplicate);
        }
        Err(e) => return Err(e.into()),
    }
    tx.commit()?;
    Ok(Claim::Won(ticket))
}

/// Records a winner decided elsewhere (the Lua script): conditional stock
/// UPDATE + INSERT of the given ticket, one transaction.
pub fn write_winner(c: &mut mysql::Conn, event: &str, user: &str, ticket: i64) -> Result<()> {
    let mut tx = c.start_transaction(TxOpts::default())?;
    tx.exec_drop(UPDATE_STOCK, (event,))?;
    if tx.affected_rows() == 0 {
        tx.rollback()?;
        return Err(anyhow!(
            "MySQL refused {user}'s ticket {ticket}: stock exhausted"
        ));
    }
    tx.exec_drop(INSERT_ROW, (event, user, ticket))?;
    tx.commit()?;
    Ok(())
}

pub struct MysqlRun {
    pub winners: HashMap<String, i64>,
    pub sold_out: u64,
    pub duplicates: u64,
    pub latency: Option<Latency>,
    pub start: Instant,
    pub end: Instant,
}

/// The MySQL-only path: `users[i]` are the requests of connection `i`
/// (sequential per connection, all connections starting at a barrier).
pub fn run_mysql_only(
    db: &str,
    event: &str,
    total: u64,
    users: Vec<Vec<String>>,
    progress: &ProgressBar,
) -> Result<MysqlRun> {
    // Connect all first, in parallel (connecting is not measured).
    let n = users.len();
    let barrier = Barrier::new(n + 1);
    /// Claims, latencies, first request sent, last reply.
    type Out = Result<(
        Vec<(String, Claim)>,
        hdrhistogram::Histogram<u64>,
        Instant,
        Instant,
    )>;
    let outs = thread::scope(|s| -> Result<Vec<Out>> {
        let mut handles = Vec::with_capacity(n);
        for list in users {
            let barrier = &barrier;
            let h = thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn_scoped(s, move || -> Out {
                    let conn = mysql_conn(db);
                    barrier.wait();
                    let mut c = conn?;
                    let mut hist = latency_histogram();
                    let mut res = Vec::with_capacity(list.len());
                    let first = Instant::now();
                    let mut last = first;
                    for u in list {
                        let t0 = Instant::now();
                        let claim = mysql_only_claim(&mut c, event, &u, total)?;
                        last = Instant::now();
                        let us = last.duration_since(t0).as_micros().max(1) as u64;
                        hist.record(us.min(3_600_000_000))?;
                        res.push((u, claim));
                        progress.inc(1);
                    }
                    Ok((res, hist, first, last))
                })
                .context("spawn a MySQL client thread")?;
            handles.push(h);
        }
        barrier.wait();
        Ok(handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("MySQL client thread panicked")))
            })
            .collect())
    })?;
    let now = Instant::now();
    let mut hist = latency_histogram();
    let mut run = MysqlRun {
        winners: HashMap::new(),
        sold_out: 0,
        duplicates: 0,
        latency: None,
        start: now,
        end: now,
    };
    let mut first_end = true;
    for o in outs {
        let (res, h, first, last) = o?;
        hist.add(&h)?;
        run.start = run.start.min(first);
        run.end = if first_end { last } else { run.end.max(last) };
        first_end = false;
        for (u, c) in res {
            match c {
                Claim::Won(t) => {
                    run.winners.insert(u, t);
                }
                Claim::SoldOut => run.sold_out += 1,
                Claim::Duplicate => run.duplicates += 1,
            }
        }
    }
    run.latency = Latency::from_histogram(&hist);
    Ok(run)
}

/// Writer threads that put the Lua path's winners into MySQL.
pub struct Writers {
    tx: Option<Sender<(String, i64)>>,
    handles: Vec<thread::JoinHandle<Result<Option<Instant>>>>,
}

impl Writers {
    pub fn start(db: &str, event: &str, threads: usize) -> Result<Writers> {
        let (tx, rx) = std::sync::mpsc::channel::<(String, i64)>();
        let rx: Arc<Mutex<Receiver<(String, i64)>>> = Arc::new(Mutex::new(rx));
        let mut handles = Vec::new();
        for _ in 0..threads.max(1) {
            let mut c = mysql_conn(db)?;
            let rx = rx.clone();
            let event = event.to_string();
            handles.push(thread::spawn(move || -> Result<Option<Instant>> {
                let mut last = None;
                loop {
                    let item = match rx.lock() {
                        Ok(r) => r.recv(),
                        Err(_) => return Err(anyhow!("writer queue poisoned")),
                    };
                    let Ok((user, ticket)) = item else {
                        return Ok(last);
                    };
                    write_winner(&mut c, &event, &user, ticket)?;
                    last = Some(Instant::now());
                }
            }));
        }
        Ok(Writers {
            tx: Some(tx),
            handles,
        })
    }

    /// A sender for the client threads.
    pub fn sender(&self) -> Sender<(String, i64)> {
        self.tx
            .clone()
            .expect("sender taken only by finish(), which consumes self")
    }

    /// Waits until every queued winner is written; the time of the last write.
    pub fn finish(mut self) -> Result<Option<Instant>> {
        self.tx.take();
        let mut last: Option<Instant> = None;
        for h in self.handles.drain(..) {
            let t = h
                .join()
                .unwrap_or_else(|_| Err(anyhow!("writer thread panicked")))?;
            last = last.max(t);
        }
        Ok(last)
    }
}
