//! `ticketgate-sidecar rebuild --event E [--apply] [--force] [--chunk N]`:
//! puts an event back into Redis from MySQL, the truth for everything synced.
//!
//! Pure planning first: the MySQL rows ([`EventRow`], the live orders) become
//! a [`Snapshot`] — incarnation, total, status, window, checkout settings,
//! each live order (held with its deadline, or sold), each live allocation
//! ([`AllocationRows`]: its free tickets, the users whose orders came from
//! it, its release time), `minted` (the highest live or allocated number)
//! and the free numbers below it — and the snapshot becomes [`Step`]s:
//! `TICKET.RESTORE E BEGIN`, `ORDERS` in chunks of at most N tickets (so
//! Redis is never blocked long), one `ALLOCATION` each, `FREE` in chunks,
//! `AFTER` (generations, scans, the transfer deadline) when MySQL has any,
//! `COMMIT`.
//!
//! MySQL keeps a general-admission allocation's free stock as a count, not
//! as numbers (numbers are interchangeable there): the snapshot gives the
//! allocations the lowest numbers in no live order, in name order. A seated
//! event's allocated seats are `ticket_seat.allocation`. MySQL never has an
//! allocation's key: the module restores it locked (docs/commands.md).
//!
//! The I/O ([`run`]): the plan is printed (what MySQL says; what Redis has
//! now: its meta, the log entries after the offset that will be discarded,
//! the waiting list that will be lost). With `--apply`: refuse a live Redis
//! event unless `--force`; quarantine the event in MySQL (reason
//! `rebuild_in_progress`, unless already quarantined) and read the snapshot
//! in the same transaction, under the offset row lock, so the sidecar
//! writes nothing more of it until the restore; BEGIN; record the log
//! entries after the offset as `ticket_conflict` rows `discarded_by_rebuild`
//! (idempotently: a rerun adds none twice); ORDERS/FREE; COMMIT. The module
//! then logs `op=restore` in a new log, and the sidecar lifts the quarantine
//! when it writes it.

use std::collections::{BTreeSet, HashMap};
use std::ops::RangeInclusive;
use std::process::ExitCode;
use std::time::Instant;

use mysql::prelude::Queryable;
use mysql::TxOpts;
use redis::ConnectionLike;

use crate::batch::lock_offset;
use crate::io::mysql as db;
use crate::io::redis::connect::Conn;
use crate::io::redis::inspect::{entries_after, read_status, StatusReply};
use crate::io::redis::reply::text;
use crate::model::time::datetime;
use crate::model::{Conflict, Entry, Evidence, Live, Reason};
use protocol::record::{default_offer, Checkout, Incarnation, Status, Tickets};
use protocol::restore::{self, free_spans, Begin, Step, RESTORE_COMMAND};
use protocol::restore_after::AfterSale;
use protocol::StreamId;

/// A restored order (user, tickets, deadline or 0 = sold).
pub type Order = restore::Order;

/// The `ticket_event` row of the event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EventRow {
    pub total: i64,
    /// `open`, `closed` or `dropped`.
    pub status: String,
    /// Unix ms, 0 = no bound.
    pub opens_at: i64,
    pub closes_at: i64,
    pub incarnation: Option<String>,
    pub hold: i64,
    pub limit: i64,
    /// None = the default.
    pub offer: Option<i64>,
    pub dropped: bool,
    /// `quarantine_reason`, when quarantined.
    pub quarantine: Option<String>,
    /// A draw event (`draw_commitment` set).
    pub draw: bool,
    /// A seated event's layout (`seat_layout`, as its init record had it).
    pub layout: Option<String>,
}

/// What MySQL has of the event's live allocations (migrations/V8).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocationRows {
    /// Each `ticket_allocation` row not released: name, free stock
    /// (`remaining_stock`), release time (unix ms).
    pub live: Vec<(String, i64, Option<i64>)>,
    /// (user, allocation) of each user whose live order came from a live
    /// allocation since it (re)started.
    pub users: Vec<(String, String)>,
    /// A seated event's free allocated seats (seat, allocation).
    pub seats: Vec<(i64, String)>,
}

/// Why a draw event is not rebuilt: TICKET.RESTORE puts back orders and
/// free tickets, not the draw's seed, entrants and waiting list.
pub const DRAW_REFUSED: &str = "a draw event (TICKET.INIT ... DRAW): rebuild restores orders and free tickets only, not the draw's seed, its entrants and the waiting list, so it refuses; MySQL keeps the entrants, the seed and the offers (ticketgate-sidecar audit-draw still checks them)";

/// What Redis will hold after the restore: BEGIN's values, the orders
/// (by user id) and the free numbers up to `minted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub begin: Begin,
    pub orders: Vec<Order>,
    pub allocations: Vec<restore::Allocation>,
    pub free: Vec<RangeInclusive<i64>>,
    /// Generations, scans and the transfer deadline (`AFTER`).
    pub after: AfterSale,
    /// Live resale listings: not restored (MySQL ends them at the restore).
    pub listings: usize,
}

impl Snapshot {
    /// Tickets (sold, held) over all orders.
    pub fn counts(&self) -> (usize, usize) {
        self.orders.iter().fold((0, 0), |(s, h), o| {
            let n = o.tickets.as_slice().len();
            match o.until {
                0 => (s + n, h),
                _ => (s, h + n),
            }
        })
    }

    /// Free numbers below `minted`.
    pub fn free_count(&self) -> i64 {
        self.free.iter().map(|r| r.end() - r.start() + 1).sum()
    }
}

/// The snapshot of an event from its row, its live tickets by user, its
/// live allocations and its offset; `fresh` draws an incarnation for an
/// event from before 0.3.
pub fn snapshot(
    row: &EventRow,
    live: HashMap<String, Live>,
    allocs: &AllocationRows,
    from: StreamId,
    fresh: impl FnOnce() -> Incarnation,
) -> Result<Snapshot, String> {
    if row.dropped || row.status == "dropped" {
        return Err("the event was dropped (TICKET.DROP); there is nothing to rebuild".into());
    }
    if row.draw {
        return Err(DRAW_REFUSED.into());
    }
    let status = match row.status.as_str() {
        "open" => Status::Open,
        // 'closed': what a heal's undone open wrote before this release.
        "close" | "closed" => Status::Closed,
        other => return Err(format!("MySQL status {other:?} is neither open nor closed")),
    };
    let (orders, mut taken) = live_orders(live, row.total)?;
    let allocations = allocations(row, &orders, &taken, allocs)?;
    taken.extend(allocations.iter().flat_map(|a| a.free.iter().copied()));
    // A seated event's seats all exist from the start (minted = total), and
    // those in no order or allocation are free without being named.
    let minted = match row.layout {
        Some(_) => row.total,
        None => taken.last().copied().unwrap_or(0),
    };
    let taken: Vec<i64> = taken.into_iter().collect();
    let incarnation = row.incarnation.as_deref().and_then(Incarnation::parse);
    let begin = Begin {
        incarnation: incarnation.unwrap_or_else(fresh),
        total: row.total,
        minted,
        status,
        opens_at: row.opens_at,
        closes_at: row.closes_at,
        checkout: Checkout {
            hold: row.hold,
            limit: row.limit,
            offer: row.offer.unwrap_or_else(|| default_offer(row.hold)),
        },
        orders: orders.len() as i64,
        from,
        layout: row.layout.clone(),
    };
    let free = match row.layout {
        Some(_) => Vec::new(),
        None => free_spans(minted, &taken),
    };
    Ok(Snapshot {
        begin,
        orders,
        allocations,
        free,
        after: AfterSale::default(),
        listings: 0,
    })
}

/// The live allocations as `ALLOCATION` restores them: claimed by their
/// users' live orders (`orders`, holding `taken`); a seated one's free
/// seats as MySQL marks them, a general-admission one's free stock as the
/// lowest numbers in no order (MySQL keeps a count: numbers are
/// interchangeable there), in name order.
fn allocations(
    row: &EventRow,
    orders: &[Order],
    taken: &BTreeSet<i64>,
    allocs: &AllocationRows,
) -> Result<Vec<restore::Allocation>, String> {
    let mut lowest = (1..=row.total).filter(|t| !taken.contains(t));
    let mut out = Vec::with_capacity(allocs.live.len());
    for (name, free, release) in &allocs.live {
        let mut users: Vec<String> = allocs
            .users
            .iter()
            .filter(|(_, a)| a == name)
            .map(|(u, _)| u.clone())
            .collect();
        users.sort();
        users.dedup();
        let claimed = users
            .iter()
            .map(
                |u| match orders.binary_search_by(|o| o.user.as_str().cmp(u)) {
                    Ok(i) => Ok(orders[i].tickets.as_slice().len() as i64),
                    Err(_) => Err(format!(
                        "user {u:?} of allocation {name:?} has no live order in MySQL"
                    )),
                },
            )
            .sum::<Result<i64, String>>()?;
        let tickets: Vec<i64> = match row.layout {
            Some(_) => allocs
                .seats
                .iter()
                .filter(|(_, a)| a == name)
                .map(|(seat, _)| *seat)
                .collect(),
            None => lowest
                .by_ref()
                .take(usize::try_from(*free).unwrap_or(0))
                .collect(),
        };
        if tickets.len() as i64 != *free {
            return Err(format!(
                "allocation {name:?} has remaining_stock {free} in MySQL, but {} free {} to restore",
                tickets.len(),
                if row.layout.is_some() { "seats are marked in ticket_seat" } else { "numbers are left" }
            ));
        }
        if let Some(t) = tickets.iter().find(|t| taken.contains(t)) {
            return Err(format!(
                "ticket {t} is both in allocation {name:?} and in a live order in MySQL"
            ));
        }
        let mut free = tickets;
        free.sort_unstable();
        out.push(restore::Allocation {
            name: name.clone(),
            free,
            claimed,
            release: *release,
            users,
        });
    }
    Ok(out)
}

/// MySQL's live orders by user, and every ticket they hold (each in
/// `1..=total` and in one order only).
fn live_orders(
    live: HashMap<String, Live>,
    total: i64,
) -> Result<(Vec<Order>, BTreeSet<i64>), String> {
    let mut orders = Vec::with_capacity(live.len());
    let mut taken = BTreeSet::new();
    for (user, l) in live {
        let order = order_of(user, l)?;
        for t in order.tickets.as_slice() {
            if !(1..=total).contains(t) || !taken.insert(*t) {
                return Err(format!("ticket {t} is out of range or live twice in MySQL"));
            }
        }
        orders.push(order);
    }
    orders.sort_by(|a, b| a.user.cmp(&b.user));
    Ok((orders, taken))
}

/// A user's live tickets as one order (held or sold, never both).
fn order_of(user: String, l: Live) -> Result<Order, String> {
    let (tickets, until) = match (l.sold.is_empty(), l.held.is_empty(), l.held_until) {
        (false, true, _) => (l.sold, 0),
        (true, false, Some(until)) if until > 0 => (l.held, until),
        _ => {
            return Err(format!(
                "user {user:?} has both held and sold tickets, or a hold without deadline, in MySQL"
            ))
        }
    };
    Ok(Order {
        user,
        tickets: Tickets::from_sorted(tickets),
        until,
    })
}

/// The `TICKET.RESTORE` calls of `s`: chunks of at most `chunk` tickets.
pub fn steps(s: &Snapshot, force: bool, chunk: usize) -> Vec<Step> {
    let mut all = restore::steps(
        s.begin.clone(),
        force,
        &s.orders,
        &s.allocations,
        &s.free,
        chunk,
    );
    // before COMMIT (the last step); none for an event without any, so an
    // older module restores it as before
    let commit = all.pop();
    all.extend(s.after.chunks().into_iter().map(Step::After));
    all.extend(commit);
    all
}

/// `step` as a command line (`TICKET.RESTORE E ...`).
pub fn command(event: &str, step: &Step) -> Vec<String> {
    let args = step.args(event);
    let values = args.as_slice().iter().map(|v| v.to_string());
    std::iter::once(RESTORE_COMMAND.to_owned())
        .chain(values)
        .collect()
}

/// What Redis has of the event now.
#[derive(Debug, Clone, Default)]
pub struct RedisNow {
    pub meta: Option<StatusReply>,
    /// Log entries after the offset: id and a rendering.
    pub discarded: Vec<(StreamId, String)>,
}

impl RedisNow {
    /// True when a rebuild would overwrite an event in use (not one being
    /// restored, which BEGIN restarts).
    pub fn live(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.status != "restoring")
    }
}

/// The plan, one line each.
pub fn describe(event: &str, s: &Snapshot, now: &RedisNow) -> Vec<String> {
    let (sold, held) = s.counts();
    let b = &s.begin;
    let time = |ms: i64| if ms == 0 { "none".into() } else { datetime(ms) };
    let mut out = vec![
        format!("rebuild of event {event} from MySQL:"),
        format!(
            "  MySQL: incarnation {}, total {}, status {}, opens {}, closes {}, hold {} ms, limit {}, offer {} ms",
            b.incarnation, b.total, b.status.as_str(), time(b.opens_at), time(b.closes_at),
            b.checkout.hold, b.checkout.limit, b.checkout.offer
        ),
        format!(
            "  MySQL: {} orders ({sold} tickets sold, {held} held), minted {}, {} free below it, offset {}",
            s.orders.len(), b.minted, s.free_count(), b.from
        ),
    ];
    if b.layout.is_some() {
        out.push("  MySQL: seated: every seat in no order is free; the layout is restored as MySQL has it".into());
    }
    for a in &s.allocations {
        let release = a.release.map_or("none".into(), datetime);
        out.push(format!(
            "  MySQL: allocation {}: {} free, {} claimed by {} orders, release {release}; restored locked (its key is not in MySQL: TICKET.ALLOCATE {event} {} [KEY k] sets it)",
            a.name, a.free.len(), a.claimed, a.users.len(), a.name
        ));
    }
    let a = &s.after;
    if a.transfer_until.is_some() || !a.tickets.is_empty() {
        let moved = a.tickets.iter().filter(|t| t.gen > 1).count();
        let scanned = a.tickets.iter().filter(|t| t.scan.is_some()).count();
        let until = a.transfer_until.map_or("closes".into(), datetime);
        out.push(format!(
            "  MySQL: after the sale: {moved} tickets transferred (generation above 1), {scanned} scanned; transfers until {until}"
        ));
    }
    if s.listings > 0 {
        out.push(format!(
            "  MySQL: {} resale listings are not restored (nor buyers' holds of them): the tickets come back as their sellers' sold ones, to be listed again",
            s.listings
        ));
    }
    for o in s.orders.iter().filter(|o| o.until > 0).take(10) {
        out.push(format!(
            "    held: {:?} tickets {:?} until {}",
            o.user,
            o.tickets.as_slice(),
            datetime(o.until)
        ));
    }
    out.push(match &now.meta {
        None => "  Redis: no meta (the event is gone from Redis)".into(),
        Some(m) => format!(
            "  Redis: status {}, incarnation {}, {} tickets claimed, waiting list {} (it will be lost)",
            m.status,
            m.incarnation.as_deref().unwrap_or("none"),
            m.claimed,
            m.waiting
        ),
    });
    out.push(format!(
        "  Redis: {} log entries after the offset will be discarded (recorded as ticket_conflict discarded_by_rebuild)",
        now.discarded.len()
    ));
    for (id, what) in now.discarded.iter().take(10) {
        out.push(format!("    discard {id}: {what}"));
    }
    out
}

/// Flags of `rebuild`.
#[derive(Debug, Clone)]
pub struct Args {
    pub event: String,
    pub apply: bool,
    pub force: bool,
    pub chunk: usize,
}

/// Most log entries `rebuild` reads after the offset.
const MAX_DISCARDED: usize = 1_000_000;

/// Runs `rebuild`: prints the plan; with `--apply` restores the event.
pub fn run(my: &mut mysql::Conn, rc: &mut Conn, args: &Args) -> Result<ExitCode, String> {
    let event = args.event.as_str();
    let redis_err = |e: redis::RedisError| format!("Redis, event {event}: {e}");
    let my_err = |e: mysql::Error| format!("MySQL, event {event}: {e}");
    let Some(row) = read_row(my, event).map_err(my_err)? else {
        println!("{event}: unknown to MySQL; nothing to rebuild it from");
        return Ok(ExitCode::from(1));
    };
    if row.dropped {
        println!("{event}: dropped (TICKET.DROP); rebuild refuses a dropped event. If Redis has the id again (a new TICKET.INIT), that sale is quarantined: TICKET.DROP {event} FORCE it and give the sale a new id (its entries become reused_after_drop conflicts)");
        return Ok(ExitCode::from(1));
    }
    if row.draw {
        println!("{event}: {DRAW_REFUSED}");
        return Ok(ExitCode::from(1));
    }
    let before = RedisNow {
        meta: read_status(rc.as_dyn(), event).map_err(redis_err)?,
        discarded: Vec::new(),
    };
    if args.apply && before.live() && !args.force {
        let status = before.meta.as_ref().map_or("", |m| m.status.as_str());
        println!("{event}: the event is live in Redis (status {status}); rebuild refuses to overwrite it without --force");
        return Ok(ExitCode::from(1));
    }
    let snap = match locked_snapshot(my, event, args.apply).map_err(my_err)? {
        Ok(s) => s,
        Err(why) => {
            println!("{event}: {why}");
            return Ok(ExitCode::from(1));
        }
    };
    let now = redis_now(rc.as_dyn(), event, snap.begin.from).map_err(redis_err)?;
    for line in describe(event, &snap, &now) {
        println!("{line}");
    }
    if !args.apply {
        println!("(plan only: run with --apply to restore)");
        return Ok(ExitCode::SUCCESS);
    }
    restore(my, rc, args, &snap)
}

/// Drives BEGIN, the discarded entries, ORDERS/FREE and COMMIT.
fn restore(
    my: &mut mysql::Conn,
    rc: &mut Conn,
    args: &Args,
    snap: &Snapshot,
) -> Result<ExitCode, String> {
    let event = args.event.as_str();
    let all = steps(snap, args.force, args.chunk);
    let mut longest = 0u128;
    let mut restore_id = String::new();
    for (i, step) in all.iter().enumerate() {
        let started = Instant::now();
        let reply = match send(rc.as_dyn(), &command(event, step)) {
            Ok(r) => r,
            Err(e) if e.code() == Some("EXISTS") => {
                println!("{event}: Redis refused BEGIN ({e}); rerun with --force to overwrite the live event");
                return Ok(ExitCode::from(1));
            }
            Err(e) => return Err(format!("TICKET.RESTORE {event} step {i}: {e}")),
        };
        match step {
            Step::Begin { .. } => record_discarded(my, rc.as_dyn(), snap, event)?,
            Step::Commit => restore_id = text(&reply).unwrap_or_default(),
            _ => longest = longest.max(started.elapsed().as_millis()),
        }
    }
    println!(
        "{event}: restored: {} commands, restore id {restore_id}, longest chunk {longest} ms",
        all.len()
    );
    Ok(ExitCode::SUCCESS)
}

fn send(conn: &mut dyn ConnectionLike, args: &[String]) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd(RESTORE_COMMAND);
    for a in args.iter().skip(1) {
        cmd.arg(a);
    }
    cmd.query(conn)
}

/// Records the log entries after the snapshot's offset as conflicts
/// `discarded_by_rebuild`, each at most once. (After BEGIN the log only
/// grows by a drop, so the list is complete.)
fn record_discarded(
    my: &mut mysql::Conn,
    rc: &mut dyn ConnectionLike,
    snap: &Snapshot,
    event: &str,
) -> Result<(), String> {
    let from = snap.begin.from;
    let entries = entries_after(rc, event, from, MAX_DISCARDED)
        .map_err(|e| format!("Redis, event {event}: {e}"))?;
    let my_err = |e: mysql::Error| format!("MySQL, event {event}: {e}");
    let mut tx = my.start_transaction(TxOpts::default()).map_err(my_err)?;
    let mut added = 0;
    for e in &entries {
        let c = discarded(event, e);
        added += usize::from(db::record_conflict_once(&mut tx, event, &c).map_err(my_err)?);
    }
    tx.commit().map_err(my_err)?;
    println!(
        "{event}: {} log entries after {from} discarded ({added} new ticket_conflict rows)",
        entries.len()
    );
    Ok(())
}

/// The `discarded_by_rebuild` conflict of log entry `e`.
fn discarded(event: &str, e: &Entry) -> Conflict {
    let detail = format!("discarded by rebuild: {}", render(event, e));
    Conflict::about(e, "discarded_by_rebuild", detail)
}

/// A log entry as its fields (`op=claim user=u1 ticket=3 at=...`).
fn render(event: &str, e: &Entry) -> String {
    match &e.rec {
        Ok(r) => {
            let fields = r.borrowed();
            let fields: Vec<String> = fields
                .fields(event)
                .filter(|(name, _)| *name != "event")
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            fields.join(" ")
        }
        Err(m) => format!("malformed: {}", m.raw),
    }
}

/// Redis's meta and the entries after `from`.
fn redis_now(
    conn: &mut dyn ConnectionLike,
    event: &str,
    from: StreamId,
) -> redis::RedisResult<RedisNow> {
    let meta = read_status(conn, event)?;
    let discarded = entries_after(conn, event, from, MAX_DISCARDED)?
        .iter()
        .map(|e| (e.id, render(event, e)))
        .collect();
    Ok(RedisNow { meta, discarded })
}

/// The snapshot, read under the offset row lock; with `quarantine` the
/// event is quarantined (`rebuild_in_progress`) in the same transaction.
fn locked_snapshot(
    my: &mut mysql::Conn,
    event: &str,
    quarantine: bool,
) -> Result<Result<Snapshot, String>, mysql::Error> {
    let mut tx = my.start_transaction(TxOpts::default())?;
    let from = lock_offset(&mut tx, event)?;
    let Some(row) = read_row(&mut tx, event)? else {
        return Ok(Err("unknown to MySQL".into()));
    };
    let live = db::live_users(&mut tx, event)?;
    let allocs = allocation_rows(&mut tx, event, row.layout.is_some())?;
    let after = super::after_sale::restored(&mut tx, event)?;
    let listings = db::live_listings(&mut tx, event)?;
    let snap = snapshot(&row, live, &allocs, from, fresh_incarnation).map(|s| Snapshot {
        after,
        listings,
        ..s
    });
    if quarantine && snap.is_ok() && row.quarantine.is_none() {
        let why = Evidence {
            reason: Reason::Rebuilding,
            text: format!("event {event}: ticketgate-sidecar rebuild --apply is restoring it"),
        };
        db::quarantine(&mut tx, event, &why)?;
    }
    tx.commit()?;
    Ok(snap)
}

/// The event's live allocations, the users whose live orders came from
/// one since it (re)started (an order of an ended allocation of the same
/// name is not its; nor one holding a transferred ticket, which the module
/// unmarks), and (`seated`) its free allocated seats.
fn allocation_rows(
    my: &mut impl Queryable,
    event: &str,
    seated: bool,
) -> Result<AllocationRows, mysql::Error> {
    let live = db::live_allocations(my, event)?;
    if live.is_empty() {
        return Ok(AllocationRows::default());
    }
    let users = my.exec(
        "SELECT DISTINCT p.user_id, p.allocation FROM ticket_participation p JOIN ticket_allocation a \
         ON a.event_id = p.event_id AND a.name = p.allocation AND a.released_at IS NULL \
         WHERE p.event_id = ? AND p.live_ticket IS NOT NULL AND p.claimed_at >= a.created_at \
         AND NOT EXISTS (SELECT 1 FROM ticket_participation q WHERE q.event_id = p.event_id AND q.user_id = p.user_id AND q.live_ticket IS NOT NULL AND q.gen > 1)",
        (event,),
    )?;
    let seats = match seated {
        true => my.exec(
            "SELECT seat_id, allocation FROM ticket_seat WHERE event_id = ? AND allocation IS NOT NULL ORDER BY seat_id",
            (event,),
        )?,
        false => Vec::new(),
    };
    Ok(AllocationRows { live, users, seats })
}

/// A random non-zero incarnation.
fn fresh_incarnation() -> Incarnation {
    Incarnation(rand::random::<u64>().max(1))
}

/// The event's `ticket_event` row.
fn read_row(my: &mut impl Queryable, event: &str) -> Result<Option<EventRow>, mysql::Error> {
    type Row = (
        i64,
        String,
        Option<i64>,
        Option<i64>,
        Option<String>,
        i64,
        i64,
        Option<i64>,
        bool,
        Option<String>,
        bool,
        Option<String>,
    );
    let row: Option<Row> = my.exec_first(
        "SELECT total, status, CAST(ROUND(UNIX_TIMESTAMP(opens_at) * 1000) AS SIGNED), \
         CAST(ROUND(UNIX_TIMESTAMP(closes_at) * 1000) AS SIGNED), incarnation, hold_ms, ticket_limit, \
         offer_ms, dropped_at IS NOT NULL, quarantine_reason, draw_commitment IS NOT NULL, seat_layout FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    Ok(row.map(|r| EventRow {
        total: r.0,
        status: r.1,
        opens_at: r.2.unwrap_or(0),
        closes_at: r.3.unwrap_or(0),
        incarnation: r.4,
        hold: r.5,
        limit: r.6,
        offer: r.7,
        dropped: r.8,
        quarantine: r.9,
        draw: r.10,
        layout: r.11,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row() -> EventRow {
        EventRow {
            total: 10,
            status: "open".into(),
            incarnation: Some("00000000000000aa".into()),
            limit: 3,
            ..EventRow::default()
        }
    }

    fn live(v: &[(&str, &[i64], Option<i64>)]) -> HashMap<String, Live> {
        v.iter()
            .map(|(u, t, until)| {
                let l = match until {
                    Some(x) => Live {
                        held: t.to_vec(),
                        held_until: Some(*x),
                        ..Live::default()
                    },
                    None => Live {
                        sold: t.to_vec(),
                        ..Live::default()
                    },
                };
                (u.to_string(), l)
            })
            .collect()
    }

    fn none() -> AllocationRows {
        AllocationRows::default()
    }

    fn never() -> Incarnation {
        unreachable!("the event has an incarnation")
    }

    #[test]
    fn snapshot_of_sold_and_held_orders() {
        let l = live(&[
            ("b", &[2, 3], Some(5000)),
            ("a", &[1], None),
            ("c", &[7], None),
        ]);
        let s = snapshot(&row(), l, &none(), StreamId::new(9, 1), never).unwrap();
        assert_eq!(s.begin.minted, 7);
        assert_eq!(s.free, [4..=6]);
        assert_eq!(s.counts(), (2, 2));
        assert_eq!(s.orders[0].user, "a");
        assert_eq!(s.orders[1].until, 5000);
        assert_eq!(
            s.begin.checkout.offer, 600_000,
            "default offer when hold is 0"
        );
        let steps = steps(&s, true, 10_000);
        assert_eq!(steps.len(), 4);
        assert_eq!(
            command("e", &steps[0]).join(" "),
            "TICKET.RESTORE e BEGIN 00000000000000aa 10 7 open 0 0 0 3 600000 3 9-1 FORCE"
        );
        assert_eq!(
            command("e", &steps[1]).join(" "),
            "TICKET.RESTORE e ORDERS a 1 0 b 2,3 5000 c 7 0"
        );
        assert_eq!(
            command("e", &steps[2]).join(" "),
            "TICKET.RESTORE e FREE 4-6"
        );
        assert_eq!(command("e", &steps[3]).join(" "), "TICKET.RESTORE e COMMIT");
        // a closed event in MySQL ('close', as every release stored it)
        let closed = EventRow {
            status: "close".into(),
            ..row()
        };
        let s = snapshot(&closed, HashMap::new(), &none(), StreamId::ZERO, never).unwrap();
        assert_eq!(s.begin.status, Status::Closed);
    }

    #[test]
    fn a_seated_snapshot_carries_its_layout_and_no_free_calls() {
        let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":10}]}]}"#;
        let seated = EventRow {
            layout: Some(layout.into()),
            ..row()
        };
        let l = live(&[("a", &[4, 5], None), ("b", &[7], Some(9000))]);
        let s = snapshot(&seated, l, &none(), StreamId::new(9, 1), never).unwrap();
        assert_eq!((s.begin.minted, s.free_count()), (10, 0));
        let steps = steps(&s, false, 10_000);
        assert_eq!(steps.len(), 3, "BEGIN, ORDERS, COMMIT: {steps:?}");
        assert_eq!(
            command("e", &steps[0]).join(" "),
            format!("TICKET.RESTORE e BEGIN 00000000000000aa 10 10 open 0 0 0 3 600000 2 9-1 SEATS {layout}")
        );
        assert!(describe("e", &s, &RedisNow::default())
            .join("\n")
            .contains("seated: every seat in no order is free"));
    }

    #[test]
    fn refuses_what_cannot_be_restored() {
        let dropped = EventRow {
            dropped: true,
            ..row()
        };
        assert!(snapshot(&dropped, HashMap::new(), &none(), StreamId::ZERO, never).is_err());
        let draw = EventRow {
            draw: true,
            ..row()
        };
        let why = snapshot(&draw, HashMap::new(), &none(), StreamId::ZERO, never).unwrap_err();
        assert!(why.contains("draw event"), "{why}");
        let both = HashMap::from([(
            "a".to_string(),
            Live {
                sold: vec![1],
                held: vec![2],
                held_until: Some(9),
            },
        )]);
        assert!(snapshot(&row(), both, &none(), StreamId::ZERO, never).is_err());
        let twice = live(&[("a", &[1], None), ("b", &[1], None)]);
        assert!(snapshot(&row(), twice, &none(), StreamId::ZERO, never).is_err());
        let beyond = live(&[("a", &[11], None)]);
        assert!(snapshot(&row(), beyond, &none(), StreamId::ZERO, never).is_err());
        // a pre-0.3 event gets a fresh incarnation; an empty one mints nothing
        let old = EventRow {
            incarnation: None,
            ..row()
        };
        let s = snapshot(&old, HashMap::new(), &none(), StreamId::ZERO, || {
            Incarnation(0xff)
        })
        .unwrap();
        assert_eq!(
            (s.begin.incarnation, s.begin.minted),
            (Incarnation(0xff), 0)
        );
        assert!(s.free.is_empty());
        assert_ne!(fresh_incarnation(), Incarnation(0));
    }

    #[test]
    fn allocations_are_restored_with_their_users_and_lowest_free_numbers() {
        let l = live(&[
            ("f1", &[2], None),
            ("f2", &[5, 6], Some(9000)),
            ("p", &[1], None),
        ]);
        let allocs = AllocationRows {
            live: vec![("fan".into(), 2, None), ("kill".into(), 1, Some(4000))],
            users: vec![("f2".into(), "fan".into()), ("f1".into(), "fan".into())],
            seats: Vec::new(),
        };
        let s = snapshot(&row(), l.clone(), &allocs, StreamId::new(9, 1), never).unwrap();
        // The lowest numbers in no order: 3, 4 to fan, 7 to kill; minted 7.
        let got: Vec<_> = s
            .allocations
            .iter()
            .map(|a| {
                (
                    a.name.as_str(),
                    a.free.clone(),
                    a.claimed,
                    a.release,
                    a.users.clone(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    "fan",
                    vec![3, 4],
                    3,
                    None,
                    vec!["f1".to_string(), "f2".to_string()]
                ),
                ("kill", vec![7], 0, Some(4000), vec![]),
            ]
        );
        assert_eq!((s.begin.minted, s.free_count()), (7, 0));
        let all: Vec<String> = steps(&s, false, 100)
            .iter()
            .map(|x| command("e", x).join(" "))
            .collect();
        assert_eq!(all[2], "TICKET.RESTORE e ALLOCATION fan 3,4 3 - f1 f2");
        assert_eq!(all[3], "TICKET.RESTORE e ALLOCATION kill 7 0 4000");
        let text = describe("e", &s, &RedisNow::default()).join("\n");
        assert!(
            text.contains(
                "allocation fan: 2 free, 3 claimed by 2 orders, release none; restored locked"
            ),
            "{text}"
        );
        // A seated event's seats as MySQL marks them; a count that disagrees is refused.
        let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":10}]}]}"#;
        let seated = EventRow {
            layout: Some(layout.into()),
            ..row()
        };
        let marked = AllocationRows {
            seats: vec![(8, "fan".into()), (9, "fan".into()), (10, "kill".into())],
            ..allocs.clone()
        };
        let s = snapshot(&seated, l.clone(), &marked, StreamId::ZERO, never).unwrap();
        assert_eq!(
            (s.allocations[0].free.clone(), s.allocations[1].free.clone()),
            (vec![8, 9], vec![10])
        );
        let short = AllocationRows {
            seats: vec![(8, "fan".into())],
            ..allocs.clone()
        };
        let why = snapshot(&seated, l.clone(), &short, StreamId::ZERO, never).unwrap_err();
        assert!(why.contains("remaining_stock 2"), "{why}");
        let both = AllocationRows {
            seats: vec![(1, "fan".into()), (8, "fan".into()), (10, "kill".into())],
            ..allocs.clone()
        };
        let why = snapshot(&seated, l.clone(), &both, StreamId::ZERO, never).unwrap_err();
        assert!(why.contains("ticket 1 is both"), "{why}");
        // More allocated than free, or a user with no live order: refused.
        let over = AllocationRows {
            live: vec![("fan".into(), 7, None)],
            ..AllocationRows::default()
        };
        assert!(snapshot(&row(), l.clone(), &over, StreamId::ZERO, never).is_err());
        let ghost = AllocationRows {
            users: vec![("zz".into(), "fan".into())],
            ..allocs
        };
        let why = snapshot(&row(), l, &ghost, StreamId::ZERO, never).unwrap_err();
        assert!(why.contains("\"zz\""), "{why}");
    }

    #[test]
    fn describe_names_what_is_lost() {
        let s = snapshot(
            &row(),
            live(&[("a", &[1], Some(9))]),
            &none(),
            StreamId::new(3, 0),
            never,
        )
        .unwrap();
        let now = RedisNow {
            meta: Some(StatusReply {
                status: "open".into(),
                incarnation: Some("00000000000000bb".into()),
                waiting: 4,
                claimed: 2,
            }),
            discarded: vec![(StreamId::new(4, 0), "Claim".into())],
        };
        assert!(now.live());
        let text = describe("e", &s, &now).join("\n");
        for want in [
            "incarnation 00000000000000aa",
            "waiting list 4",
            "1 log entries",
            "discard 4-0",
            "held: \"a\"",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
    }

    #[test]
    fn discarded_entries_are_shown_as_their_fields() {
        let claim = Entry::new(
            StreamId::new(7, 1),
            Ok(protocol::record::Record {
                op: protocol::record::Op::Claim {
                    from: None,
                    pick: None,
                    user: "u1".into(),
                    tickets: Tickets::One(3),
                },
                at: 5,
            }),
        );
        assert_eq!(render("e", &claim), "op=claim user=u1 ticket=3 at=5");
        let c = discarded("e", &claim);
        assert_eq!(
            (c.reason, c.user.as_deref(), c.ticket),
            ("discarded_by_rebuild", Some("u1"), Some(3))
        );
        assert!(
            c.detail.ends_with("op=claim user=u1 ticket=3 at=5"),
            "{}",
            c.detail
        );
    }

    fn arb_orders() -> impl Strategy<Value = (i64, HashMap<String, Live>)> {
        let picks = proptest::collection::vec((0..40usize, any::<bool>()), 0..60);
        (1..300i64, picks).prop_map(|(total, picks)| {
            let mut free: Vec<i64> = (1..=total).collect();
            let mut out = HashMap::new();
            for (i, (k, held)) in picks.into_iter().enumerate() {
                let k = (k % 3 + 1).min(free.len());
                if k == 0 {
                    break;
                }
                let idx = (i * 7919) % (free.len() - k + 1);
                let t: Vec<i64> = free.drain(idx..idx + k).collect();
                let l = match held {
                    true => Live {
                        held: t,
                        held_until: Some(99),
                        ..Live::default()
                    },
                    false => Live {
                        sold: t,
                        ..Live::default()
                    },
                };
                out.insert(format!("u{i}"), l);
            }
            (total, out)
        })
    }

    proptest! {
        /// Every number 1..=minted is exactly once in an order or free, and
        /// the calls carry each order exactly once.
        #[test]
        fn calls_partition_the_snapshot(
            (total, l) in arb_orders(),
            chunk in 1..50usize,
            (fa, fb, marks) in (0..20i64, 0..20i64, proptest::collection::vec(0..3u8, 60)),
        ) {
            let r = EventRow { total, ..row() };
            let free = total - l.values().map(|x| (x.sold.len() + x.held.len()) as i64).sum::<i64>();
            let (fa, fb) = (fa.min(free), fb.min(free - fa.min(free)));
            let mut users: Vec<&String> = l.keys().collect();
            users.sort();
            let marked: Vec<(String, String)> = users.iter().zip(&marks)
                .filter(|(_, m)| **m > 0)
                .map(|(u, m)| ((*u).clone(), if *m == 1 { "a" } else { "b" }.to_string()))
                .collect();
            let allocs = AllocationRows {
                live: vec![("a".into(), fa, None), ("b".into(), fb, Some(7))],
                users: marked.clone(),
                seats: Vec::new(),
            };
            let held = |u: &String| (l[u].sold.len() + l[u].held.len()) as i64;
            let claimed = |name: &str| marked.iter().filter(|m| m.1 == name).map(|m| held(&m.0)).sum::<i64>();
            let s = snapshot(&r, l.clone(), &allocs, StreamId::ZERO, never).unwrap();
            prop_assert_eq!(s.allocations.iter().map(|a| (a.free.len() as i64, a.claimed)).collect::<Vec<_>>(),
                vec![(fa, claimed("a")), (fb, claimed("b"))]);
            let mut seen = BTreeSet::new();
            let mut orders = 0;
            for step in steps(&s, false, chunk) {
                // One ALLOCATION an allocation (at most 1000 tickets).
                prop_assert!(step.tickets() <= chunk || matches!(&step, Step::Orders(v) if v.len() == 1) || matches!(&step, Step::Allocation(_)));
                match step {
                    Step::Orders(v) => {
                        orders += v.len();
                        for o in v { for t in o.tickets.as_slice() { prop_assert!(seen.insert(*t)); } }
                    }
                    Step::Free(v) => {
                        for r in v { for t in r { prop_assert!(seen.insert(t)); } }
                    }
                    Step::Allocation(a) => {
                        for t in a.free { prop_assert!(seen.insert(t)); }
                    }
                    _ => {}
                }
            }
            prop_assert_eq!(orders, s.orders.len());
            prop_assert_eq!(seen, (1..=s.begin.minted).collect::<BTreeSet<i64>>());
        }
    }
}
