//! The ticket-pool state machine: what every `TICKET.*` command does to an
//! event, written against the [`Store`] trait so it runs unchanged over Redis
//! keys (`redis_store`) and over [`MemoryStore`] in unit and property tests.
//!
//! Every function reads and validates first, then decides one state change
//! and hands it to [`commit`]: [`crate::apply`] performs its writes (the
//! same code a replica runs for the replicated effect) and the store
//! replicates it as one `TICKET._APPLY`. So an error never leaves partial
//! state behind, and a replica cannot decide differently. The pool is lazy:
//! it holds only the lowest free numbers; `minted` is the highest number ever
//! put into it, and every unminted number is greater than every pooled one,
//! so the lowest free number is always the pool's minimum (or `minted + 1`
//! when it is empty).
//!
//! Checkout: a user's order is one or more tickets, sold, or held until a
//! deadline. Time enters only as `now`: a claim, confirm or cancel first
//! expires the event's holds due at `now` ([`expire_holds`], one
//! `op=expire` each, the same function the sweep runs), so a hold is free
//! from its deadline on;
//! reads take an [`ExpiredFrom`] that says whether to count due holds as
//! free (a primary) or as held (a replica, which waits for its primary).
//!
//! Waiting list (DESIGN.md "Waiting list"): after every change that may free
//! tickets (a cancel, an expiry, an open, a wait or a leave) [`offer_waiting`]
//! offers the head of the FIFO list its `count` lowest free numbers as a
//! held order (`op=offer`). Strict FIFO: while the head cannot be served,
//! nobody behind it is. A head that wants more than are free gets nothing
//! until enough are free — or until it has waited a full offer period since
//! it joined, from when it is offered what is free (at least one ticket).
//! While anyone waits, a claim by a user without tickets is `SOLDOUT`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ops::RangeInclusive;

use protocol::effect::{Checkout, Effect, WAIT_COUNT_SPAN};
use protocol::record::{Incarnation, Op, Record, Tickets};
use protocol::restore::{Begin, Order};
use protocol::StreamId;

use crate::apply;
use crate::error::TicketError;

/// Whether an event accepts claims (subject to its `opens_at`/`closes_at`),
/// or is being restored (`TICKET.RESTORE`: every command but STATUS, DROP
/// and the restore's own steps answers `TRYAGAIN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
    Restoring,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Restoring => "restoring",
            Status::Open => protocol::record::Status::Open.as_str(),
            Status::Closed => protocol::record::Status::Closed.as_str(),
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "restoring" => Some(Status::Restoring),
            s => protocol::record::Status::parse(s).map(Status::from),
        }
    }
}

impl From<protocol::record::Status> for Status {
    fn from(status: protocol::record::Status) -> Status {
        match status {
            protocol::record::Status::Open => Status::Open,
            protocol::record::Status::Closed => Status::Closed,
        }
    }
}

/// What a restore keeps in the meta hash until its commit (the fields
/// `restore_status`, `restore_orders`, `restore_from`, `restore_sum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Staging {
    /// The status the event gets at the commit.
    pub status: protocol::record::Status,
    /// How many orders the snapshot has.
    pub orders: i64,
    /// The MySQL offset the snapshot was taken at.
    pub from: StreamId,
    /// The sum of every ticket number restored so far, held or free: at the
    /// commit it must be `1 + 2 + ... + minted`, so that no number is both
    /// held and free while another is missing.
    pub sum: i64,
}

/// The event's meta hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub total: i64,
    pub minted: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
    /// Tickets in held orders, including holds past their deadline that are
    /// not expired yet.
    pub held: i64,
    /// Tickets holders have beyond their first (so the holders hash's length
    /// plus `extra` is the number of tickets out, without reading it).
    pub extra: i64,
    /// How long an offer of the waiting list is held, in ms.
    pub offer: i64,
    /// The `seq` of the latest place in the waiting list (0 = nobody ever
    /// waited, so the list's key is not even looked at). A new place's `seq`
    /// is `max(now, waitseq + 1)`: increasing, and never before the time the
    /// user joined.
    pub waitseq: i64,
    /// Which incarnation of the event this is (`None`: made before 0.3).
    pub incarnation: Option<Incarnation>,
}

/// Storage of one event. Reads may fail (wrong types, corrupt values); writes
/// happen only after every read succeeded and cannot fail.
pub trait Store {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError>;
    /// The user's tickets, held or sold.
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError>;
    /// The deadline of the user's held order; `None` when sold or absent.
    fn hold_until(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// Whether some hold of the event may be due at `now`: a cheap hint that
    /// may say yes wrongly, never no wrongly.
    fn maybe_due(&mut self, now: i64) -> bool;
    /// Up to `max` users whose hold's deadline is at or before `now`,
    /// earliest first (users with equal deadlines in byte order).
    fn due_holds(&mut self, now: i64, max: usize) -> Result<Vec<String>, TicketError>;
    /// The smallest number in the pool, without removing it.
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError>;
    /// Up to `n` of the smallest numbers in the pool, ascending.
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError>;
    fn free_count(&mut self) -> Result<i64, TicketError>;
    fn holder_count(&mut self) -> Result<i64, TicketError>;
    fn log_len(&mut self) -> Result<i64, TicketError>;
    /// Whether the log key exists (it does from `TICKET.INIT` on: trimming
    /// empties a stream but keeps it).
    fn log_exists(&mut self) -> Result<bool, TicketError>;
    /// Whether any of the event's keys besides the log exists.
    fn any_state(&mut self) -> Result<bool, TicketError>;

    fn create_meta(&mut self, meta: &Meta, created_at: i64);
    fn set_status(&mut self, status: Status);
    fn set_minted(&mut self, minted: i64);
    /// Adds `held` and `extra` to the meta hash's counters of the same names.
    fn add_counts(&mut self, held: i64, extra: i64);
    fn take_free(&mut self, ticket: i64);
    fn add_free(&mut self, tickets: RangeInclusive<i64>);
    fn set_holder(&mut self, user: &str, tickets: &Tickets);
    fn remove_holder(&mut self, user: &str);
    /// Marks the user's order as held until `until`.
    fn set_hold(&mut self, user: &str, until: i64);
    /// Unmarks the user's order as held; returns whether it was.
    fn remove_hold(&mut self, user: &str) -> bool;
    /// The waiting list's length.
    fn waiting_len(&mut self) -> Result<i64, TicketError>;
    /// The user's place in the waiting list.
    fn waiting_place(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// The user's 0-based rank in the waiting list (O(log n)).
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// The head of the waiting list and its place.
    fn waiting_head(&mut self) -> Result<Option<(String, i64)>, TicketError>;
    /// Puts `user` into the waiting list at `place`; sets `waitseq`.
    fn add_waiting(&mut self, user: &str, place: i64);
    /// Takes `user` out of the waiting list; returns whether it was in it.
    fn remove_waiting(&mut self, user: &str) -> bool;
    /// Announces that `user` was offered tickets (the primary's pub/sub).
    fn announce_offer(&mut self, user: &str);
    /// Appends `record` to the log at `id`, or at an id the store picks
    /// (the primary's auto id) when `None`; returns the id used.
    fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId;
    /// Deletes every key of the event but its log; returns how many existed.
    fn delete_state(&mut self) -> i64;
    /// Deletes the log (unlinked: freed in the background).
    fn delete_log(&mut self);
    /// The id the log's last entry got, even when trimmed away since
    /// (its `last-generated-id`); `None` without a log.
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError>;
    /// Whether `ticket` is in the pool.
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError>;
    /// The staging fields of a restore in progress.
    fn staging(&mut self) -> Result<Option<Staging>, TicketError>;
    /// Writes the staging fields (and resets `held`, `extra`, `waitseq`).
    fn set_staging(&mut self, staging: &Staging);
    /// Adds `sum` to the staging field `restore_sum`.
    fn add_staged_sum(&mut self, sum: i64);
    /// Removes the staging fields.
    fn clear_staging(&mut self);
    /// Propagates one state change to replicas and the AOF.
    fn replicate(&mut self, effect: &Effect<&str>);
}

/// Performs a decided change and replicates it as one effect.
fn commit(store: &mut impl Store, record: Record<&str>, minted: Option<i64>) {
    let id = apply::append(store, &record, minted, None);
    store.replicate(&Effect::Append { id, record, minted });
}

/// Longest hold, in ms (7 days).
pub const MAX_HOLD_MS: i64 = 7 * 24 * 3600 * 1000;

/// Most tickets one user may hold, whatever the event's `LIMIT` says.
pub const MAX_LIMIT: i64 = protocol::record::MAX_TICKETS as i64;

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// New tickets, sold at once.
    New(Tickets),
    /// New tickets, held until the order is confirmed or expires.
    Held(Tickets),
    /// The tickets the user already held; nothing changed.
    Repeat(Tickets),
}

impl Claim {
    pub fn tickets(&self) -> &Tickets {
        match self {
            Claim::New(t) | Claim::Held(t) | Claim::Repeat(t) => t,
        }
    }

    /// The user's lowest ticket (the reply without `COUNT`).
    pub fn ticket(&self) -> i64 {
        self.tickets().lowest()
    }
}

/// The options of one claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClaimOptions {
    /// How many tickets (`COUNT`, default 1).
    pub count: Option<i64>,
    /// How long to hold them, overriding the event's default (`HOLD`).
    pub hold: Option<i64>,
}

/// What `TICKET.STATUS` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub total: i64,
    pub remaining: i64,
    /// Tickets held or sold.
    pub claimed: i64,
    /// Tickets in live holds.
    pub held: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    pub unsynced: i64,
    /// The waiting list's length.
    pub waiting: i64,
    pub incarnation: Option<Incarnation>,
}

/// What `TICKET.ORDER` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderReport {
    pub tickets: Tickets,
    /// The held order's deadline; `None` when sold.
    pub expires_at: Option<i64>,
}

/// When reads on this server count holds past their deadline as free: on the
/// primary at `now` (`Some(now)`), never on a replica (`None`), which waits
/// for its primary's expiry.
pub type ExpiredFrom = Option<i64>;

fn existing_meta(store: &mut impl Store, event: &str) -> Result<Meta, TicketError> {
    store
        .meta()?
        .ok_or_else(|| TicketError::NoEvent(event.to_owned()))
}

/// The meta of an event that is not being restored (`TRYAGAIN` while it is).
fn live_meta(store: &mut impl Store, event: &str) -> Result<Meta, TicketError> {
    let meta = existing_meta(store, event)?;
    match meta.status {
        Status::Restoring => Err(TicketError::Restoring(event.to_owned())),
        _ => Ok(meta),
    }
}

/// `TICKET.INIT`: creates the meta hash (the pool stays empty until the first
/// claim mints a chunk, so any size inits in O(1)) of incarnation
/// `incarnation` (drawn by the command: this stays pure).
pub fn init(
    store: &mut impl Store,
    event: &str,
    window: (i64, i64, i64),
    checkout: Checkout,
    incarnation: Incarnation,
    now: i64,
) -> Result<(), TicketError> {
    if store.meta()?.is_some() || store.any_state()? {
        return Err(TicketError::Exists(event.to_owned()));
    }
    // Type-check the log before the first write.
    store.log_len()?;
    let (total, opens_at, closes_at) = window;
    let op = Op::Init {
        total,
        opens_at,
        closes_at,
        checkout,
        incarnation: Some(incarnation),
    };
    commit(store, Record { op, at: now }, None);
    Ok(())
}

/// `TICKET.CLAIM`: the user's existing tickets, or the `count` lowest free
/// ones, sold at once or held.
pub fn claim(
    store: &mut impl Store,
    event: &str,
    user: &str,
    options: ClaimOptions,
    now: i64,
    chunk: i64,
) -> Result<Claim, TicketError> {
    let meta = prepare(store, event, now)?;
    if let Some(tickets) = store.holder(user)? {
        return Ok(Claim::Repeat(tickets));
    }
    let count = within_limit(event, &meta, options.count)?;
    if meta.status == Status::Closed || (meta.closes_at > 0 && now >= meta.closes_at) {
        return Err(TicketError::Closed(event.to_owned()));
    }
    if now < meta.opens_at {
        return Err(TicketError::NotOpen {
            event: event.to_owned(),
            opens_at: meta.opens_at,
        });
    }
    // No queue jumping (the offer step has served whoever it could).
    if meta.waitseq > 0 && store.waiting_len()? > 0 {
        return Err(TicketError::SoldOut(event.to_owned()));
    }
    // check_consistent has type-checked every key, so no write fails.
    let (tickets, minted) = lowest_free(store, event, &meta, count, chunk)?;
    let hold = options.hold.unwrap_or(meta.hold);
    let op = match hold {
        0 => Op::Claim {
            user,
            tickets: tickets.clone(),
        },
        _ => Op::Hold {
            user,
            tickets: tickets.clone(),
            until: now.saturating_add(hold),
        },
    };
    commit(store, Record { op, at: now }, minted);
    Ok(match hold {
        0 => Claim::New(tickets),
        _ => Claim::Held(tickets),
    })
}

/// `count` (default 1), or `LIMIT` when it is above the event's limit.
fn within_limit(event: &str, meta: &Meta, count: Option<i64>) -> Result<i64, TicketError> {
    let count = count.unwrap_or(1);
    if count > meta.limit {
        return Err(TicketError::Limit {
            event: event.to_owned(),
            limit: meta.limit,
            asked: count,
        });
    }
    Ok(count)
}

/// The `count` lowest free numbers and the event's new `minted` when some
/// had to be minted, or `SOLDOUT` when fewer are free.
fn lowest_free(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    chunk: i64,
) -> Result<(Tickets, Option<i64>), TicketError> {
    let sold_out = || TicketError::SoldOut(event.to_owned());
    if count == 1 {
        // The hot path: one number, no allocation.
        return match store.lowest_free()? {
            Some(ticket) => Ok((Tickets::One(ticket), None)),
            None if meta.minted < meta.total => {
                let (ticket, minted) = mint(meta.total, meta.minted, 1, chunk);
                Ok((Tickets::One(ticket), minted))
            }
            None => Err(sold_out()),
        };
    }
    let mut numbers = store.lowest_free_n(count as usize)?;
    let missing = count - numbers.len() as i64;
    if missing == 0 {
        return Ok((Tickets::from_sorted(numbers), None));
    }
    if meta.total - meta.minted < missing {
        return Err(sold_out());
    }
    let (first, minted) = mint(meta.total, meta.minted, missing, chunk);
    numbers.extend(first..first + missing);
    Ok((Tickets::from_sorted(numbers), minted))
}

/// Every number up to `minted` is either held or in the pool, and the log
/// exists. Reading the three also type-checks every key of the event. The keys disagree only while a cluster slot migration has moved
/// some of an event's keys and not yet the others (the command is redirected
/// to the importing node by its event argument, which is not itself a key),
/// or after hand edits. Writing then could hand out a number twice, so the
/// command answers `TRYAGAIN` (cluster clients retry it) and changes nothing.
fn check_consistent(store: &mut impl Store, event: &str, meta: &Meta) -> Result<(), TicketError> {
    let accounted = store.holder_count()? + meta.extra + store.free_count()?;
    if accounted != meta.minted || !store.log_exists()? {
        return Err(TicketError::TryAgain(event.to_owned()));
    }
    Ok(())
}

/// Mints the next chunk of numbers, at least `count`: the first `count`
/// go to the claimant directly (they would be popped right away, so they
/// never enter the pool). Returns the first new ticket and the new `minted`.
fn mint(total: i64, minted: i64, count: i64, chunk: i64) -> (i64, Option<i64>) {
    let last = minted
        .saturating_add(chunk.max(1))
        .max(minted + count)
        .min(total);
    (minted + 1, Some(last))
}

/// Expires up to `max` holds of the event whose deadline is at or before
/// `now`, each logged and replicated as one `op=expire`; returns how many.
/// Claims, confirms and cancels run this first (with no bound), so from its
/// deadline on a hold is free for whatever the command does; the sweep
/// runs it for events nobody writes to.
pub fn expire_holds(store: &mut impl Store, now: i64, max: usize) -> Result<usize, TicketError> {
    // Read everything before the first write, so an error changes nothing.
    let mut due = Vec::new();
    for user in store.due_holds(now, max)? {
        let tickets = store.holder(&user)?;
        due.push((user, tickets));
    }
    for (user, tickets) in &due {
        match tickets {
            Some(tickets) => {
                let op = Op::Expire {
                    user: user.as_str(),
                    tickets: tickets.clone(),
                };
                commit(store, Record { op, at: now }, None);
            }
            // A hold without tickets (hand edits): drop the stray mark.
            None => {
                store.remove_hold(user);
            }
        }
    }
    Ok(due.len())
}

/// [`expire_holds`] with no bound, then the meta as it is afterwards.
fn expire_due(
    store: &mut impl Store,
    event: &str,
    meta: Meta,
    now: i64,
) -> Result<Meta, TicketError> {
    if !store.maybe_due(now) {
        return Ok(meta);
    }
    match expire_holds(store, now, usize::MAX)? {
        0 => Ok(meta),
        _ => existing_meta(store, event),
    }
}

/// What every write command does first: the meta, after checking the keys
/// agree, expiring due holds and serving the waiting list.
fn prepare(store: &mut impl Store, event: &str, now: i64) -> Result<Meta, TicketError> {
    let meta = live_meta(store, event)?;
    check_consistent(store, event, &meta)?;
    settle(store, event, meta, now)
}

/// [`expire_due`], then the offer step when anyone may be waiting.
fn settle(store: &mut impl Store, event: &str, meta: Meta, now: i64) -> Result<Meta, TicketError> {
    let meta = expire_due(store, event, meta, now)?;
    match meta.waitseq {
        0 => Ok(meta),
        _ => offer_waiting(store, event, meta, now),
    }
}

/// Whether the event accepts claims (and so offers) at `now`.
fn accepts_claims(meta: &Meta, now: i64) -> bool {
    meta.status == Status::Open
        && (meta.closes_at == 0 || now < meta.closes_at)
        && now >= meta.opens_at
}

/// The offer step: while the event accepts claims and its list's head can
/// be served, offers the head its lowest free numbers as a held order until
/// `now + offer` (`op=offer`, which also takes the head off the list) and
/// announces it. Returns the meta as it is afterwards.
pub fn offer_waiting(
    store: &mut impl Store,
    event: &str,
    mut meta: Meta,
    now: i64,
) -> Result<Meta, TicketError> {
    while meta.waitseq > 0 && accepts_claims(&meta, now) {
        let Some((user, place)) = store.waiting_head()? else {
            break;
        };
        if store.holder(&user)?.is_some() {
            // Only hand edits get here (WAIT refuses holders): drop the place.
            store.remove_waiting(&user);
            store.replicate(&Effect::Leave { user: &user });
            continue;
        }
        let free = store.free_count()? + meta.total - meta.minted;
        let Some(count) = offer_size(&meta, place, free, now) else {
            break;
        };
        // Minting only what the offer takes keeps the pool as it was.
        let (tickets, minted) = lowest_free(store, event, &meta, count, 1)?;
        let until = now.saturating_add(meta.offer);
        let op = Op::Offer {
            user: user.as_str(),
            tickets,
            until,
        };
        commit(store, Record { op, at: now }, minted);
        store.announce_offer(&user);
        meta = existing_meta(store, event)?;
    }
    Ok(meta)
}

/// [`settle`] with the meta as it is now.
fn settle_now(store: &mut impl Store, event: &str, now: i64) -> Result<(), TicketError> {
    let meta = existing_meta(store, event)?;
    settle(store, event, meta, now).map(|_| ())
}

/// How many tickets the head at `place` is offered when `free` are free:
/// all it asked for, or what is free once it has waited a full offer
/// period; `None` when it must wait on.
fn offer_size(meta: &Meta, place: i64, free: i64, now: i64) -> Option<i64> {
    let (seq, wanted) = (place / WAIT_COUNT_SPAN, (place % WAIT_COUNT_SPAN).max(1));
    if free >= wanted {
        Some(wanted)
    } else if free > 0 && now >= seq.saturating_add(meta.offer) {
        Some(free)
    } else {
        None
    }
}

/// `TICKET.WAIT`: joins the waiting list for `count` tickets (idempotent:
/// a user already in it keeps the place and count). Returns the 1-based
/// position, or 0 when the user was offered tickets at once.
pub fn wait(
    store: &mut impl Store,
    event: &str,
    user: &str,
    count: Option<i64>,
    now: i64,
) -> Result<i64, TicketError> {
    let meta = prepare(store, event, now)?;
    if store.holder(user)?.is_some() {
        return Err(TicketError::Holding {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    }
    let count = within_limit(event, &meta, count)?;
    if store.waiting_place(user)?.is_none() {
        let seq = now.max(meta.waitseq + 1);
        let place = seq.saturating_mul(WAIT_COUNT_SPAN).saturating_add(count);
        store.add_waiting(user, place);
        store.replicate(&Effect::Wait { user, place });
        settle_now(store, event, now)?;
    }
    Ok(store.waiting_rank(user)?.map_or(0, |rank| rank + 1))
}

/// `TICKET.LEAVE`: takes the user off the waiting list; returns whether the
/// user was on it. The next in line may be served now.
pub fn leave(
    store: &mut impl Store,
    event: &str,
    user: &str,
    now: i64,
) -> Result<bool, TicketError> {
    let meta = prepare(store, event, now)?;
    if store.waiting_place(user)?.is_none() {
        return Ok(false);
    }
    store.remove_waiting(user);
    store.replicate(&Effect::Leave { user });
    offer_waiting(store, event, meta, now)?;
    Ok(true)
}

/// `TICKET.POSITION`: the user's 1-based position in the waiting list.
pub fn position(
    store: &mut impl Store,
    event: &str,
    user: &str,
) -> Result<Option<i64>, TicketError> {
    live_meta(store, event)?;
    Ok(store.waiting_rank(user)?.map(|rank| rank + 1))
}

/// The sweep of one event: expires up to `max` of its due holds, unless
/// the event is gone or its keys disagree (a slot migration in progress).
pub fn sweep(
    store: &mut impl Store,
    event: &str,
    now: i64,
    max: usize,
) -> Result<usize, TicketError> {
    let Some(meta) = store.meta()? else {
        return Ok(0);
    };
    if meta.status == Status::Restoring {
        return Ok(0);
    }
    check_consistent(store, event, &meta)?;
    let expired = expire_holds(store, now, max)?;
    if expired > 0 {
        settle_now(store, event, now)?;
    }
    Ok(expired)
}

/// `TICKET.CONFIRM`: the user's held order becomes sold; returns how many
/// tickets the user holds. A sold order is confirmed already (no change).
pub fn confirm(
    store: &mut impl Store,
    event: &str,
    user: &str,
    now: i64,
) -> Result<i64, TicketError> {
    prepare(store, event, now)?;
    let Some(tickets) = store.holder(user)? else {
        return Err(TicketError::NoHold {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    };
    let count = tickets.as_slice().len() as i64;
    if store.hold_until(user)?.is_some() {
        let op = Op::Confirm { user, tickets };
        commit(store, Record { op, at: now }, None);
    }
    Ok(count)
}

/// `TICKET.CANCEL`: returns all the user's tickets (held or sold) to the
/// pool; replies with the lowest.
pub fn cancel(
    store: &mut impl Store,
    event: &str,
    user: &str,
    now: i64,
) -> Result<Option<i64>, TicketError> {
    prepare(store, event, now)?;
    let Some(tickets) = store.holder(user)? else {
        return Ok(None);
    };
    let lowest = tickets.lowest();
    // check_consistent has type-checked every key, so no write fails.
    let op = Op::Cancel { user, tickets };
    commit(store, Record { op, at: now }, None);
    settle_now(store, event, now)?;
    Ok(Some(lowest))
}

/// `TICKET.ORDER`: the user's tickets and whether they are held or sold.
pub fn order(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<OrderReport>, TicketError> {
    live_meta(store, event)?;
    let Some(tickets) = store.holder(user)? else {
        return Ok(None);
    };
    let expires_at = store.hold_until(user)?;
    match (expires_at, expired_from) {
        (Some(until), Some(now)) if until <= now => Ok(None),
        _ => Ok(Some(OrderReport {
            tickets,
            expires_at,
        })),
    }
}

/// `TICKET.HOLDER`: the user's lowest ticket, if any.
pub fn holder(
    store: &mut impl Store,
    event: &str,
    user: &str,
    expired_from: ExpiredFrom,
) -> Result<Option<i64>, TicketError> {
    Ok(order(store, event, user, expired_from)?.map(|o| o.tickets.lowest()))
}

/// `TICKET.OPEN` / `TICKET.CLOSE`: sets the status; logs only a real change.
pub fn set_status(
    store: &mut impl Store,
    event: &str,
    status: Status,
    now: i64,
) -> Result<(), TicketError> {
    let meta = live_meta(store, event)?;
    if meta.status == status {
        return Ok(());
    }
    store.log_len()?;
    // Opening serves the waiting list, which writes tickets: check first.
    let serve = status == Status::Open && meta.waitseq > 0;
    if serve {
        check_consistent(store, event, &meta)?;
    }
    let op = match status {
        Status::Open => Op::Open,
        Status::Closed | Status::Restoring => Op::Close,
    };
    commit(store, Record { op, at: now }, None);
    if serve {
        settle_now(store, event, now)?;
    }
    Ok(())
}

/// `TICKET.STATUS`; holds past their deadline count as free on the primary.
pub fn report(
    store: &mut impl Store,
    event: &str,
    expired_from: ExpiredFrom,
) -> Result<Report, TicketError> {
    let meta = existing_meta(store, event)?;
    let mut lapsed = 0;
    // A restore in progress expires nothing, not even in what it reports.
    let expired_from = expired_from.filter(|_| meta.status != Status::Restoring);
    if let Some(now) = expired_from.filter(|now| store.maybe_due(*now)) {
        for user in store.due_holds(now, usize::MAX)? {
            lapsed += store
                .holder(&user)?
                .map_or(0, |t| t.as_slice().len() as i64);
        }
    }
    Ok(Report {
        total: meta.total,
        remaining: store.free_count()? + meta.total - meta.minted + lapsed,
        claimed: store.holder_count()? + meta.extra - lapsed,
        held: meta.held - lapsed,
        status: meta.status,
        opens_at: meta.opens_at,
        closes_at: meta.closes_at,
        unsynced: store.log_len()?,
        waiting: store.waiting_len()?,
        incarnation: meta.incarnation,
    })
}

/// Reads every key of the event, so that a wrong type is an error before
/// anything is deleted (`any_state` stops at the first key that exists, so
/// the pool and holders are checked on their own); returns the log's length.
fn type_check_all(store: &mut impl Store) -> Result<i64, TicketError> {
    store.any_state()?;
    store.free_count()?;
    store.holder_count()?;
    store.due_holds(0, 1)?;
    store.waiting_len()?;
    store.log_len()
}

/// `TICKET.DROP`: deletes the event's keys but its log, and appends
/// `op=drop` to the log (the trace that tells the sidecar a drop from a
/// loss); refuses while the log is not drained unless `force`. Returns how
/// many keys were deleted (the log not counted); an event without any key
/// is left alone (0, nothing logged).
pub fn drop_event(
    store: &mut impl Store,
    event: &str,
    force: bool,
    now: i64,
) -> Result<i64, TicketError> {
    let entries = type_check_all(store)?;
    if entries > 0 && !force {
        return Err(TicketError::Unsynced {
            event: event.to_owned(),
            entries,
        });
    }
    let deleted = store.delete_state();
    if deleted > 0 || store.log_exists()? {
        commit(
            store,
            Record {
                op: Op::Drop,
                at: now,
            },
            None,
        );
    }
    Ok(deleted)
}

/// The meta and staging fields of an event being restored (`NOTRESTORING`
/// otherwise).
fn restoring(store: &mut impl Store, event: &str) -> Result<(Meta, Staging), TicketError> {
    let not = || TicketError::NotRestoring(event.to_owned());
    let meta = store.meta()?.ok_or_else(not)?;
    if meta.status != Status::Restoring {
        return Err(not());
    }
    let staging = store.staging()?.ok_or_else(|| {
        TicketError::Corrupt(format!(
            "the meta hash of event '{event}' says restoring but has no restore fields"
        ))
    })?;
    Ok((meta, staging))
}

/// `TICKET.RESTORE E BEGIN`: replaces the event's state (not its log) by an
/// empty one being restored. Refuses an event that exists and is not being
/// restored, unless `force`; restarts a restore in progress.
pub fn restore_begin(
    store: &mut impl Store,
    event: &str,
    begin: &Begin,
    force: bool,
) -> Result<(), TicketError> {
    type_check_all(store)?;
    let restarting = match store.meta() {
        Ok(Some(meta)) => meta.status == Status::Restoring,
        Ok(None) => true,
        // A corrupt meta hash is replaced only when forced.
        Err(e) if !force => return Err(e),
        Err(_) => false,
    };
    if !restarting && !force {
        return Err(TicketError::Exists(event.to_owned()));
    }
    apply::restore_begin(store, begin);
    store.replicate(&Effect::RestoreBegin(begin.clone()));
    Ok(())
}

/// `TICKET.RESTORE E ORDERS`: restores orders; returns how many are
/// restored so far. Refused, with nothing changed, for a user restored
/// already (or twice in the call), a ticket above `minted`, free, or in two
/// orders of the call, or more orders than `BEGIN` announced.
pub fn restore_orders(
    store: &mut impl Store,
    event: &str,
    orders: &[Order<&str>],
) -> Result<i64, TicketError> {
    let (meta, staging) = restoring(store, event)?;
    store.due_holds(0, 1)?;
    store.free_count()?;
    let so_far = store.holder_count()?;
    let invalid = |why: String| TicketError::Invalid(format!("TICKET.RESTORE ORDERS: {why}"));
    if so_far + orders.len() as i64 > staging.orders {
        return Err(invalid(format!(
            "{} orders restored already, {} more would exceed the {} that BEGIN announced",
            so_far,
            orders.len(),
            staging.orders
        )));
    }
    let mut users = HashSet::with_capacity(orders.len());
    let mut tickets = HashSet::new();
    for (i, order) in orders.iter().enumerate() {
        let named = || {
            format!(
                "order {} (user {})",
                i + 1,
                crate::error::quote(order.user.as_bytes())
            )
        };
        if !users.insert(order.user) || store.holder(order.user)?.is_some() {
            return Err(invalid(format!(
                "{}: the user is restored already",
                named()
            )));
        }
        for &t in order.tickets.as_slice() {
            let problem = if t > meta.minted {
                Some(format!("is above minted ({})", meta.minted))
            } else if !tickets.insert(t) {
                Some("is in two orders".to_owned())
            } else if store.is_free(t)? {
                Some("is restored as free already".to_owned())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(invalid(format!("{}: ticket {t} {problem}", named())));
            }
        }
    }
    apply::restore_orders(store, orders);
    store.replicate(&Effect::RestoreOrders(orders.to_vec()));
    store.holder_count()
}

/// `TICKET.RESTORE E FREE`: puts numbers into the pool; returns how many
/// are in it. Refused, with nothing changed, for a number above `minted`,
/// in the pool already, or given twice.
pub fn restore_free(
    store: &mut impl Store,
    event: &str,
    free: &[RangeInclusive<i64>],
) -> Result<i64, TicketError> {
    let (meta, _) = restoring(store, event)?;
    store.free_count()?;
    let invalid = |why: String| TicketError::Invalid(format!("TICKET.RESTORE FREE: {why}"));
    let mut sorted = free.to_vec();
    sorted.sort_by_key(|r| *r.start());
    for pair in sorted.windows(2) {
        if pair[1].start() <= pair[0].end() {
            return Err(invalid(format!(
                "{} is given twice",
                pair[1].start().max(pair[0].start())
            )));
        }
    }
    for range in &sorted {
        if *range.end() > meta.minted {
            return Err(invalid(format!(
                "{} is above minted ({})",
                range.end(),
                meta.minted
            )));
        }
        for n in range.clone() {
            if store.is_free(n)? {
                return Err(invalid(format!("{n} is in the pool already")));
            }
        }
    }
    apply::restore_free(store, free);
    store.replicate(&Effect::RestoreFree(free.to_vec()));
    store.free_count()
}

/// `TICKET.RESTORE E COMMIT`: once every order and every free number is
/// restored, replaces the log by one whose first entry is `op=restore` at
/// `max(now-0, next(from), next(the old log's last id))` and gives the event
/// its status; returns that id.
pub fn restore_commit(
    store: &mut impl Store,
    event: &str,
    now: i64,
) -> Result<StreamId, TicketError> {
    let (meta, staging) = restoring(store, event)?;
    let (holders, free) = (store.holder_count()?, store.free_count()?);
    let accounted = holders + meta.extra + free;
    let sum = meta.minted * (meta.minted + 1) / 2;
    let detail = if holders != staging.orders {
        Some(format!("{holders} of {} orders restored", staging.orders))
    } else if accounted != meta.minted {
        Some(format!(
            "{accounted} of the {} numbers up to minted restored (held or free)",
            meta.minted
        ))
    } else if staging.sum != sum {
        Some(
            "the numbers restored are not 1 to minted once each: some number is both held and free"
                .to_owned(),
        )
    } else {
        None
    };
    if let Some(detail) = detail {
        return Err(TicketError::Incomplete {
            event: event.to_owned(),
            detail,
        });
    }
    let incarnation = meta.incarnation.ok_or_else(|| {
        TicketError::Corrupt(format!(
            "the meta hash of event '{event}' has no incarnation"
        ))
    })?;
    let after = |id: Option<StreamId>| id.and_then(StreamId::next).unwrap_or_default();
    let id = StreamId::new(now.max(0) as u64, 0)
        .max(after(Some(staging.from)))
        .max(after(store.last_log_id()?));
    let op = Op::Restore {
        incarnation,
        status: staging.status,
        from: staging.from,
    };
    let record = Record { op, at: now };
    apply::append(store, &record, None, Some(id));
    store.replicate(&Effect::Append {
        id,
        record,
        minted: None,
    });
    Ok(id)
}

/// An in-memory [`Store`] for tests: one event, plain collections.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    pub meta: Option<Meta>,
    pub pool: BTreeSet<i64>,
    pub holders: HashMap<String, Tickets>,
    /// Held orders: user -> deadline.
    pub holds: BTreeMap<String, i64>,
    pub log: Vec<(StreamId, Record)>,
    /// What [`Store::replicate`] was given, in order.
    pub effects: Vec<Effect>,
    /// The waiting list: user -> place.
    pub waiting: BTreeMap<String, i64>,
    /// The users announced as offered, in order (not replicated state).
    pub offered: Vec<String>,
    /// Whether the log key exists (an emptied stream still does).
    pub log_key: bool,
    /// The id of the log's last entry ever (its `last-generated-id`).
    pub last_id: Option<StreamId>,
    /// The staging fields of a restore in progress.
    pub staging: Option<Staging>,
}

impl MemoryStore {
    /// The waiting list in FIFO order.
    pub fn waiting_order(&self) -> Vec<(String, i64)> {
        let mut list: Vec<(String, i64)> =
            self.waiting.iter().map(|(u, p)| (u.clone(), *p)).collect();
        list.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        list
    }
}

impl Store for MemoryStore {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        Ok(self.meta.clone())
    }
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        Ok(self.holders.get(user).cloned())
    }
    fn hold_until(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        Ok(self.holds.get(user).copied())
    }
    fn maybe_due(&mut self, now: i64) -> bool {
        self.holds.values().any(|until| *until <= now)
    }
    fn due_holds(&mut self, now: i64, max: usize) -> Result<Vec<String>, TicketError> {
        let mut due: Vec<(i64, &String)> = self
            .holds
            .iter()
            .filter(|(_, until)| **until <= now)
            .map(|(user, until)| (*until, user))
            .collect();
        due.sort();
        Ok(due.into_iter().take(max).map(|(_, u)| u.clone()).collect())
    }
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        Ok(self.pool.first().copied())
    }
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        Ok(self.pool.iter().take(n).copied().collect())
    }
    fn free_count(&mut self) -> Result<i64, TicketError> {
        Ok(self.pool.len() as i64)
    }
    fn holder_count(&mut self) -> Result<i64, TicketError> {
        Ok(self.holders.len() as i64)
    }
    fn log_len(&mut self) -> Result<i64, TicketError> {
        Ok(self.log.len() as i64)
    }
    fn log_exists(&mut self) -> Result<bool, TicketError> {
        Ok(self.log_key)
    }
    fn any_state(&mut self) -> Result<bool, TicketError> {
        Ok(self.meta.is_some() || !self.pool.is_empty() || !self.holders.is_empty())
    }
    fn create_meta(&mut self, meta: &Meta, _created_at: i64) {
        self.meta = Some(meta.clone());
    }
    fn delete_state(&mut self) -> i64 {
        let existed = [
            self.meta.take().is_some(),
            !std::mem::take(&mut self.pool).is_empty(),
            !std::mem::take(&mut self.holders).is_empty(),
            !std::mem::take(&mut self.holds).is_empty(),
            !std::mem::take(&mut self.waiting).is_empty(),
        ];
        self.staging = None;
        existed.iter().filter(|&&e| e).count() as i64
    }
    fn delete_log(&mut self) {
        self.log.clear();
        self.log_key = false;
        self.last_id = None;
    }
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        Ok(self.last_id.filter(|_| self.log_key))
    }
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        Ok(self.pool.contains(&ticket))
    }
    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        Ok(self.staging)
    }
    fn set_staging(&mut self, staging: &Staging) {
        self.staging = Some(*staging);
        if let Some(meta) = &mut self.meta {
            (meta.held, meta.extra, meta.waitseq) = (0, 0, 0);
        }
    }
    fn add_staged_sum(&mut self, sum: i64) {
        if let Some(staging) = &mut self.staging {
            staging.sum += sum;
        }
    }
    fn clear_staging(&mut self) {
        self.staging = None;
    }
    fn set_status(&mut self, status: Status) {
        if let Some(meta) = &mut self.meta {
            meta.status = status;
        }
    }
    fn set_minted(&mut self, minted: i64) {
        if let Some(meta) = &mut self.meta {
            meta.minted = minted;
        }
    }
    fn add_counts(&mut self, held: i64, extra: i64) {
        if let Some(meta) = &mut self.meta {
            meta.held += held;
            meta.extra += extra;
        }
    }
    fn take_free(&mut self, ticket: i64) {
        self.pool.remove(&ticket);
    }
    fn add_free(&mut self, tickets: RangeInclusive<i64>) {
        self.pool.extend(tickets);
    }
    fn set_holder(&mut self, user: &str, tickets: &Tickets) {
        self.holders.insert(user.to_owned(), tickets.clone());
    }
    fn remove_holder(&mut self, user: &str) {
        self.holders.remove(user);
    }
    fn set_hold(&mut self, user: &str, until: i64) {
        self.holds.insert(user.to_owned(), until);
    }
    fn remove_hold(&mut self, user: &str) -> bool {
        self.holds.remove(user).is_some()
    }
    fn waiting_len(&mut self) -> Result<i64, TicketError> {
        Ok(self.waiting.len() as i64)
    }
    fn waiting_place(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        Ok(self.waiting.get(user).copied())
    }
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        let order = self.waiting_order();
        Ok(order.iter().position(|(u, _)| u == user).map(|r| r as i64))
    }
    fn waiting_head(&mut self) -> Result<Option<(String, i64)>, TicketError> {
        Ok(self.waiting_order().into_iter().next())
    }
    fn add_waiting(&mut self, user: &str, place: i64) {
        self.waiting.insert(user.to_owned(), place);
        if let Some(meta) = &mut self.meta {
            meta.waitseq = meta.waitseq.max(place / WAIT_COUNT_SPAN);
        }
    }
    fn remove_waiting(&mut self, user: &str) -> bool {
        self.waiting.remove(user).is_some()
    }
    fn announce_offer(&mut self, user: &str) {
        self.offered.push(user.to_owned());
    }
    fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId {
        let id = id.unwrap_or_else(|| {
            let after = self.last_id.and_then(StreamId::next);
            after.unwrap_or(StreamId::new(1, 1))
        });
        if self.last_id.is_some_and(|last| id <= last) {
            // What Redis refuses (a replica whose log differs).
            return id;
        }
        self.log.push((id, record.owned()));
        self.log_key = true;
        self.last_id = Some(id);
        id
    }
    fn replicate(&mut self, effect: &Effect<&str>) {
        self.effects.push(effect.owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A claim without options by the user, as `TICKET.CLAIM E user`.
    fn plain(s: &mut MemoryStore, user: &str, now: i64, chunk: i64) -> Result<Claim, TicketError> {
        claim(s, "e", user, ClaimOptions::default(), now, chunk)
    }

    fn event(total: i64) -> MemoryStore {
        let mut s = MemoryStore::default();
        init(
            &mut s,
            "e",
            (total, 0, 0),
            Checkout::default(),
            Incarnation(1),
            1,
        )
        .unwrap();
        s
    }

    #[test]
    fn claims_hand_out_lowest_first_and_sell_out() {
        let mut s = event(3);
        let got: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|u| plain(&mut s, u, 2, 2).unwrap())
            .collect();
        assert_eq!(
            got,
            [
                Claim::New(Tickets::One(1)),
                Claim::New(Tickets::One(2)),
                Claim::New(Tickets::One(3))
            ]
        );
        assert_eq!(
            plain(&mut s, "d", 2, 2),
            Err(TicketError::SoldOut("e".into()))
        );
        assert_eq!(plain(&mut s, "b", 2, 2), Ok(Claim::Repeat(Tickets::One(2))));
        assert_eq!(
            s.log.len(),
            4,
            "init + 3 claims; loser and repeat log nothing"
        );
    }

    #[test]
    fn cancelled_numbers_are_reissued_first() {
        let mut s = event(10);
        for u in ["a", "b", "c"] {
            plain(&mut s, u, 2, 4).unwrap();
        }
        assert_eq!(cancel(&mut s, "e", "b", 3), Ok(Some(2)));
        assert_eq!(cancel(&mut s, "e", "b", 3), Ok(None));
        assert_eq!(plain(&mut s, "d", 4, 4), Ok(Claim::New(Tickets::One(2))));
        assert_eq!(plain(&mut s, "b", 4, 4), Ok(Claim::New(Tickets::One(4))));
    }

    #[test]
    fn the_pool_only_holds_one_chunk() {
        let mut s = event(10_000_000);
        assert!(s.pool.is_empty());
        plain(&mut s, "a", 2, 1024).unwrap();
        assert_eq!(s.pool.len(), 1023);
        assert_eq!(s.meta.as_ref().unwrap().minted, 1024);
        assert_eq!(report(&mut s, "e", None).unwrap().remaining, 9_999_999);
    }

    #[test]
    fn windows_and_status_gate_new_claims_but_not_repeats() {
        let mut s = MemoryStore::default();
        init(
            &mut s,
            "e",
            (5, 100, 200),
            Checkout::default(),
            Incarnation(1),
            1,
        )
        .unwrap();
        assert!(matches!(
            plain(&mut s, "a", 99, 8),
            Err(TicketError::NotOpen { opens_at: 100, .. })
        ));
        assert_eq!(plain(&mut s, "a", 100, 8), Ok(Claim::New(Tickets::One(1))));
        assert_eq!(
            plain(&mut s, "b", 200, 8),
            Err(TicketError::Closed("e".into()))
        );
        assert_eq!(
            plain(&mut s, "a", 300, 8),
            Ok(Claim::Repeat(Tickets::One(1)))
        );
        let mut s = event(5);
        set_status(&mut s, "e", Status::Closed, 2).unwrap();
        set_status(&mut s, "e", Status::Closed, 2).unwrap();
        assert_eq!(
            plain(&mut s, "a", 3, 8),
            Err(TicketError::Closed("e".into()))
        );
        set_status(&mut s, "e", Status::Open, 4).unwrap();
        assert_eq!(plain(&mut s, "a", 5, 8), Ok(Claim::New(Tickets::One(1))));
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(ops, ["init", "close", "open", "claim"]);
    }

    #[test]
    fn errors_change_nothing() {
        let mut s = event(1);
        plain(&mut s, "a", 2, 8).unwrap();
        let before = format!("{s:?}");
        assert!(plain(&mut s, "b", 2, 8).is_err());
        assert!(init(
            &mut s,
            "e",
            (5, 0, 0),
            Checkout::default(),
            Incarnation(2),
            3
        )
        .is_err());
        assert!(drop_event(&mut s, "e", false, 3).is_err());
        assert_eq!(before, format!("{s:?}"));
    }

    #[test]
    fn keys_that_disagree_refuse_writes_and_change_nothing() {
        let mut s = event(10);
        for u in ["a", "b", "c"] {
            plain(&mut s, u, 2, 1).unwrap();
        }
        // As if a slot migration had moved the meta hash but not the holders.
        s.holders.remove("b");
        let before = format!("{s:?}");
        let again = TicketError::TryAgain("e".into());
        assert_eq!(plain(&mut s, "d", 3, 1), Err(again.clone()));
        assert_eq!(cancel(&mut s, "e", "a", 3), Err(again.clone()));
        assert_eq!(confirm(&mut s, "e", "a", 3), Err(again));
        assert_eq!(before, format!("{s:?}"));
    }

    #[test]
    fn unknown_event() {
        let mut s = MemoryStore::default();
        let no = TicketError::NoEvent("e".into());
        assert_eq!(plain(&mut s, "a", 1, 8), Err(no.clone()));
        assert_eq!(cancel(&mut s, "e", "a", 1), Err(no.clone()));
        assert_eq!(confirm(&mut s, "e", "a", 1), Err(no.clone()));
        assert_eq!(holder(&mut s, "e", "a", None), Err(no.clone()));
        assert_eq!(order(&mut s, "e", "a", None), Err(no.clone()));
        assert_eq!(set_status(&mut s, "e", Status::Open, 1), Err(no));
        assert_eq!(drop_event(&mut s, "e", false, 1), Ok(0));
        assert!(
            s.log.is_empty() && !s.log_key,
            "no key at all: nothing logged"
        );
    }

    #[test]
    fn drop_waits_for_the_log_unless_forced() {
        let mut s = event(5);
        assert_eq!(
            drop_event(&mut s, "e", false, 2),
            Err(TicketError::Unsynced {
                event: "e".into(),
                entries: 1
            })
        );
        s.log.clear();
        assert_eq!(drop_event(&mut s, "e", false, 2), Ok(1));
        let mut s = event(5);
        plain(&mut s, "a", 2, 8).unwrap();
        assert_eq!(
            drop_event(&mut s, "e", true, 3),
            Ok(3),
            "meta, pool, holders"
        );
        assert!(s.meta.is_none());
    }

    #[test]
    fn a_drop_keeps_the_log_as_its_trace_and_a_new_init_continues_it() {
        let mut s = event(5);
        plain(&mut s, "a", 2, 8).unwrap();
        assert_eq!(drop_event(&mut s, "e", true, 3), Ok(3));
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(ops, ["init", "claim", "drop"]);
        let (id, _) = s.log[2];
        assert!(matches!(
            s.effects.last(),
            Some(Effect::Append { record: Record { op: Op::Drop, at: 3 }, id: i, .. }) if *i == id
        ));
        // Trimmed by the sidecar: only the (empty) log is left.
        s.log.clear();
        assert_eq!(drop_event(&mut s, "e", false, 4), Ok(0));
        assert_eq!(s.log.len(), 1, "dropped again: logged again");
        s.log.clear();
        init(
            &mut s,
            "e",
            (5, 0, 0),
            Checkout::default(),
            Incarnation(9),
            5,
        )
        .unwrap();
        let (new, _) = s.log[0];
        assert!(new > id, "the ids keep growing: {new} > {id}");
        assert_eq!(plain(&mut s, "b", 6, 8), Ok(Claim::New(Tickets::One(1))));
    }

    /// A [`MemoryStore`] whose pool or holders key holds the wrong type.
    struct Clobbered {
        inner: MemoryStore,
        pool: bool,
    }

    impl Clobbered {
        fn wrong(&self) -> TicketError {
            let part = if self.pool { "pool" } else { "holders" };
            TicketError::WrongType {
                key: format!("ticket:{{e}}:{part}"),
                expected: if self.pool { "zset" } else { "hash" },
            }
        }
    }

    impl Store for Clobbered {
        fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
            self.inner.meta()
        }
        fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
            match self.pool {
                true => self.inner.holder(user),
                false => Err(self.wrong()),
            }
        }
        fn hold_until(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
            self.inner.hold_until(user)
        }
        fn maybe_due(&mut self, now: i64) -> bool {
            self.inner.maybe_due(now)
        }
        fn due_holds(&mut self, now: i64, max: usize) -> Result<Vec<String>, TicketError> {
            self.inner.due_holds(now, max)
        }
        fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
            match self.pool {
                true => Err(self.wrong()),
                false => self.inner.lowest_free(),
            }
        }
        fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
            match self.pool {
                true => Err(self.wrong()),
                false => self.inner.lowest_free_n(n),
            }
        }
        fn free_count(&mut self) -> Result<i64, TicketError> {
            match self.pool {
                true => Err(self.wrong()),
                false => self.inner.free_count(),
            }
        }
        fn holder_count(&mut self) -> Result<i64, TicketError> {
            match self.pool {
                true => self.inner.holder_count(),
                false => Err(self.wrong()),
            }
        }
        fn log_len(&mut self) -> Result<i64, TicketError> {
            self.inner.log_len()
        }
        fn log_exists(&mut self) -> Result<bool, TicketError> {
            self.inner.log_exists()
        }
        fn any_state(&mut self) -> Result<bool, TicketError> {
            // Like the Redis store: stops at the meta hash when it exists.
            match self.inner.meta.is_some() {
                true => Ok(true),
                false => Err(self.wrong()),
            }
        }
        fn create_meta(&mut self, meta: &Meta, created_at: i64) {
            self.inner.create_meta(meta, created_at)
        }
        fn set_status(&mut self, status: Status) {
            self.inner.set_status(status)
        }
        fn set_minted(&mut self, minted: i64) {
            self.inner.set_minted(minted)
        }
        fn add_counts(&mut self, held: i64, extra: i64) {
            self.inner.add_counts(held, extra)
        }
        fn take_free(&mut self, ticket: i64) {
            self.inner.take_free(ticket)
        }
        fn add_free(&mut self, tickets: RangeInclusive<i64>) {
            self.inner.add_free(tickets)
        }
        fn set_holder(&mut self, user: &str, tickets: &Tickets) {
            self.inner.set_holder(user, tickets)
        }
        fn remove_holder(&mut self, user: &str) {
            self.inner.remove_holder(user)
        }
        fn set_hold(&mut self, user: &str, until: i64) {
            self.inner.set_hold(user, until)
        }
        fn remove_hold(&mut self, user: &str) -> bool {
            self.inner.remove_hold(user)
        }
        fn waiting_len(&mut self) -> Result<i64, TicketError> {
            self.inner.waiting_len()
        }
        fn waiting_place(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
            self.inner.waiting_place(user)
        }
        fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
            self.inner.waiting_rank(user)
        }
        fn waiting_head(&mut self) -> Result<Option<(String, i64)>, TicketError> {
            self.inner.waiting_head()
        }
        fn add_waiting(&mut self, user: &str, place: i64) {
            self.inner.add_waiting(user, place)
        }
        fn remove_waiting(&mut self, user: &str) -> bool {
            self.inner.remove_waiting(user)
        }
        fn announce_offer(&mut self, user: &str) {
            self.inner.announce_offer(user)
        }
        fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId {
            self.inner.append(record, id)
        }
        fn delete_state(&mut self) -> i64 {
            self.inner.delete_state()
        }
        fn delete_log(&mut self) {
            self.inner.delete_log()
        }
        fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
            self.inner.last_log_id()
        }
        fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
            self.inner.is_free(ticket)
        }
        fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
            self.inner.staging()
        }
        fn set_staging(&mut self, staging: &Staging) {
            self.inner.set_staging(staging)
        }
        fn add_staged_sum(&mut self, sum: i64) {
            self.inner.add_staged_sum(sum)
        }
        fn clear_staging(&mut self) {
            self.inner.clear_staging()
        }
        fn replicate(&mut self, effect: &Effect<&str>) {
            self.inner.replicate(effect)
        }
    }

    #[test]
    fn drop_type_checks_pool_and_holders_even_when_meta_exists() {
        for pool in [true, false] {
            let mut inner = event(5);
            plain(&mut inner, "a", 2, 8).unwrap();
            let mut s = Clobbered { inner, pool };
            for force in [false, true] {
                assert!(
                    matches!(
                        drop_event(&mut s, "e", force, 3),
                        Err(TicketError::WrongType { .. })
                    ),
                    "pool={pool} force={force}"
                );
                assert!(s.inner.meta.is_some(), "nothing may be deleted");
            }
        }
    }

    fn checkout_event(total: i64, hold: i64, limit: i64) -> MemoryStore {
        let mut s = MemoryStore::default();
        let offer = protocol::effect::default_offer(hold);
        init(
            &mut s,
            "e",
            (total, 0, 0),
            Checkout { hold, limit, offer },
            Incarnation(1),
            1,
        )
        .unwrap();
        s
    }

    fn with(count: Option<i64>, hold: Option<i64>) -> ClaimOptions {
        ClaimOptions { count, hold }
    }

    #[test]
    fn a_hold_is_confirmed_or_expires_and_its_numbers_go_back_lowest_first() {
        let mut s = checkout_event(10, 1000, 4);
        let got = claim(&mut s, "e", "a", with(Some(3), None), 10, 1);
        assert_eq!(got, Ok(Claim::Held(Tickets::Many(vec![1, 2, 3]))));
        assert_eq!(
            claim(&mut s, "e", "a", with(Some(2), None), 20, 1),
            Ok(Claim::Repeat(Tickets::Many(vec![1, 2, 3]))),
            "a holder gets the same tickets back, whatever COUNT says"
        );
        assert_eq!(plain(&mut s, "b", 20, 1), Ok(Claim::Held(Tickets::One(4))));
        assert_eq!(confirm(&mut s, "e", "b", 30), Ok(1));
        assert_eq!(confirm(&mut s, "e", "b", 31), Ok(1), "a repeat is a no-op");
        let r = report(&mut s, "e", Some(500)).unwrap();
        assert_eq!((r.remaining, r.held, r.claimed), (6, 3, 4));
        // From its deadline on, a's hold is free: before any sweep.
        let r = report(&mut s, "e", Some(1010)).unwrap();
        assert_eq!((r.remaining, r.held, r.claimed), (9, 0, 1));
        assert_eq!(order(&mut s, "e", "a", Some(1010)), Ok(None));
        assert!(
            order(&mut s, "e", "a", None).unwrap().is_some(),
            "a replica waits"
        );
        assert_eq!(
            claim(&mut s, "e", "c", with(Some(2), Some(0)), 1010, 1),
            Ok(Claim::New(Tickets::Many(vec![1, 2])))
        );
        assert_eq!(
            confirm(&mut s, "e", "a", 1011),
            Err(TicketError::NoHold {
                event: "e".into(),
                user: "a".into()
            })
        );
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(ops, ["init", "hold", "hold", "confirm", "expire", "claim"]);
        assert_eq!(cancel(&mut s, "e", "c", 1012), Ok(Some(1)));
        assert_eq!(
            s.pool.iter().take(3).copied().collect::<Vec<_>>(),
            [1, 2, 3]
        );
    }

    #[test]
    fn count_is_all_or_nothing_and_bounded_by_limit() {
        let mut s = checkout_event(3, 0, 2);
        assert_eq!(
            claim(&mut s, "e", "a", with(Some(3), None), 2, 1),
            Err(TicketError::Limit {
                event: "e".into(),
                limit: 2,
                asked: 3
            })
        );
        claim(&mut s, "e", "a", with(Some(2), None), 2, 1).unwrap();
        assert_eq!(
            claim(&mut s, "e", "a", with(Some(3), None), 2, 1),
            Ok(Claim::Repeat(Tickets::Many(vec![1, 2]))),
            "a holder gets the tickets back, whatever COUNT says"
        );
        let before = format!("{s:?}");
        assert_eq!(
            claim(&mut s, "e", "b", with(Some(2), None), 2, 1),
            Err(TicketError::SoldOut("e".into()))
        );
        assert_eq!(before, format!("{s:?}"), "a refused claim takes nothing");
        assert_eq!(plain(&mut s, "b", 2, 1), Ok(Claim::New(Tickets::One(3))));
    }

    #[test]
    fn the_sweep_is_bounded_and_resumes() {
        let mut s = checkout_event(100, 50, 1);
        for u in 0..10 {
            plain(&mut s, &format!("u{u}"), 5, 1).unwrap();
        }
        assert_eq!(expire_holds(&mut s, 54, 3), Ok(0));
        assert_eq!(expire_holds(&mut s, 55, 3), Ok(3));
        assert_eq!(expire_holds(&mut s, 55, 30), Ok(7));
        assert_eq!(expire_holds(&mut s, 56, 30), Ok(0));
        assert_eq!(s.meta.as_ref().map(|m| m.held), Some(0));
    }

    #[test]
    fn returned_tickets_go_to_the_head_of_the_list_in_order() {
        let mut s = checkout_event(2, 0, 3);
        plain(&mut s, "a", 2, 1).unwrap();
        plain(&mut s, "b", 2, 1).unwrap();
        assert_eq!(wait(&mut s, "e", "w1", Some(2), 3), Ok(1));
        assert_eq!(wait(&mut s, "e", "w2", None, 3), Ok(2));
        assert_eq!(wait(&mut s, "e", "w1", None, 4), Ok(1), "idempotent");
        assert_eq!(
            wait(&mut s, "e", "a", None, 4),
            Err(TicketError::Holding {
                event: "e".into(),
                user: "a".into()
            })
        );
        assert_eq!(position(&mut s, "e", "w2"), Ok(Some(2)));
        // One ticket back: w1 wants two, so nobody is served (strict FIFO)
        // and nobody may claim it past the list.
        cancel(&mut s, "e", "a", 5).unwrap();
        assert!(s.offered.is_empty());
        assert_eq!(
            plain(&mut s, "x", 6, 1),
            Err(TicketError::SoldOut("e".into()))
        );
        cancel(&mut s, "e", "b", 7).unwrap();
        assert_eq!(s.offered, ["w1"]);
        assert_eq!(position(&mut s, "e", "w1"), Ok(None));
        assert_eq!(
            plain(&mut s, "w1", 8, 1),
            Ok(Claim::Repeat(Tickets::Many(vec![1, 2]))),
            "an offer is claimed back"
        );
        // The offer expires (10 min, HOLD is 0): w2 is next.
        assert_eq!(sweep(&mut s, "e", 7 + 600_000, 10), Ok(1));
        assert_eq!(s.offered, ["w1", "w2"]);
        assert_eq!(
            order(&mut s, "e", "w2", None).unwrap().map(|o| o.tickets),
            Some(Tickets::One(1))
        );
        assert_eq!(leave(&mut s, "e", "w2", 7 + 600_000), Ok(false));
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(ops[5..], ["offer", "expire", "offer"]);
    }

    #[test]
    fn a_head_that_waited_a_full_offer_period_gets_what_is_free() {
        let mut s = checkout_event(2, 100, 3);
        plain(&mut s, "a", 2, 1).unwrap();
        plain(&mut s, "b", 2, 1).unwrap();
        confirm(&mut s, "e", "a", 2).unwrap();
        confirm(&mut s, "e", "b", 2).unwrap();
        wait(&mut s, "e", "w1", Some(3), 10).unwrap();
        wait(&mut s, "e", "w2", None, 10).unwrap();
        cancel(&mut s, "e", "a", 50).unwrap();
        assert!(s.offered.is_empty(), "w1 asked for 3");
        assert_eq!(leave(&mut s, "e", "nobody", 110), Ok(false));
        assert_eq!(s.offered, ["w1"], "after 100 ms w1 gets the one free");
        assert_eq!(s.holders.get("w1"), Some(&Tickets::One(1)));
    }

    #[test]
    fn a_closed_event_offers_nothing_until_it_opens() {
        let mut s = checkout_event(1, 0, 1);
        plain(&mut s, "a", 2, 1).unwrap();
        set_status(&mut s, "e", Status::Closed, 3).unwrap();
        assert_eq!(wait(&mut s, "e", "w", None, 4), Ok(1));
        cancel(&mut s, "e", "a", 5).unwrap();
        assert!(s.offered.is_empty(), "closed: the list waits");
        set_status(&mut s, "e", Status::Open, 6).unwrap();
        assert_eq!(s.offered, ["w"]);
        assert_eq!(report(&mut s, "e", Some(6)).map(|r| r.waiting), Ok(0));
    }

    #[test]
    fn a_holder_found_in_the_list_is_dropped_from_it_not_offered() {
        let mut s = checkout_event(2, 0, 1);
        plain(&mut s, "a", 2, 1).unwrap();
        plain(&mut s, "b", 2, 1).unwrap();
        wait(&mut s, "e", "w", None, 3).unwrap();
        // As if edited by hand: a holder put at the head of the list.
        s.waiting.insert("a".into(), WAIT_COUNT_SPAN + 1);
        cancel(&mut s, "e", "b", 4).unwrap();
        assert_eq!(s.offered, ["w"], "a is skipped, w is served");
        assert!(s.waiting.is_empty());
        assert!(s.effects.contains(&Effect::Leave { user: "a".into() }));
    }

    #[derive(Debug, Clone)]
    enum Action {
        Claim {
            user: u8,
            count: Option<i64>,
            hold: Option<i64>,
        },
        Confirm(u8),
        Cancel(u8),
        Close,
        Open,
        /// Advance the clock by this many ms.
        Wait(i64),
        /// Sweep at most this many holds.
        Sweep(usize),
        /// `TICKET.WAIT` with an optional `COUNT`.
        Join(u8, Option<i64>),
        Leave(u8),
    }

    fn action() -> impl Strategy<Value = Action> {
        let claim = (
            0u8..30,
            proptest::option::of(1i64..5),
            proptest::option::of(prop_oneof![Just(0i64), 1i64..40]),
        )
            .prop_map(|(user, count, hold)| Action::Claim { user, count, hold });
        prop_oneof![
            8 => claim,
            2 => (0u8..30).prop_map(Action::Confirm),
            2 => (0u8..30).prop_map(Action::Cancel),
            1 => Just(Action::Close),
            1 => Just(Action::Open),
            3 => (0i64..25).prop_map(Action::Wait),
            2 => (1usize..4).prop_map(Action::Sweep),
            4 => (0u8..30, proptest::option::of(1i64..4)).prop_map(|(u, n)| Action::Join(u, n)),
            1 => (0u8..30).prop_map(Action::Leave),
        ]
    }

    /// The simple model: free numbers, each user's order (tickets and, while
    /// held, its deadline), and the clock. Holds past their deadline count
    /// as free wherever the model looks.
    #[derive(Default)]
    struct Model {
        free: BTreeSet<i64>,
        orders: HashMap<String, (Vec<i64>, Option<i64>)>,
        open: bool,
        now: i64,
        hold: i64,
        limit: i64,
        offer: i64,
        /// The waiting list in order: user, seq, count.
        waiting: Vec<(String, i64, i64)>,
        waitseq: i64,
        /// Users offered tickets, in order.
        offered: Vec<String>,
    }

    impl Model {
        /// The offer step (after the lapse of due holds).
        fn offer_step(&mut self) {
            self.lapse();
            while self.open {
                let Some((user, seq, wanted)) = self.waiting.first().cloned() else {
                    break;
                };
                let free = self.free.len() as i64;
                let n = if free >= wanted {
                    wanted
                } else if free > 0 && self.now >= seq + self.offer {
                    free
                } else {
                    break;
                };
                let tickets: Vec<i64> = (0..n).filter_map(|_| self.free.pop_first()).collect();
                let until = Some(self.now + self.offer);
                self.orders.insert(user.clone(), (tickets, until));
                self.waiting.remove(0);
                self.offered.push(user);
            }
        }

        fn within_limit(&self, n: i64) -> Result<(), TicketError> {
            match n > self.limit {
                true => Err(TicketError::Limit {
                    event: "e".into(),
                    limit: self.limit,
                    asked: n,
                }),
                false => Ok(()),
            }
        }

        fn position(&self, user: &str) -> Option<i64> {
            let rank = self.waiting.iter().position(|(u, _, _)| u == user)?;
            Some(rank as i64 + 1)
        }

        fn wait(&mut self, user: &str, count: Option<i64>) -> Result<i64, TicketError> {
            self.offer_step();
            if self.orders.contains_key(user) {
                return Err(TicketError::Holding {
                    event: "e".into(),
                    user: user.into(),
                });
            }
            let n = count.unwrap_or(1);
            self.within_limit(n)?;
            if self.position(user).is_none() {
                self.waitseq = self.now.max(self.waitseq + 1);
                self.waiting.push((user.to_owned(), self.waitseq, n));
                self.offer_step();
            }
            Ok(self.position(user).unwrap_or(0))
        }

        fn leave(&mut self, user: &str) -> bool {
            self.offer_step();
            let before = self.waiting.len();
            self.waiting.retain(|(u, _, _)| u != user);
            let left = self.waiting.len() < before;
            if left {
                self.offer_step();
            }
            left
        }

        /// After the offer step: nobody waits who could be served.
        fn nobody_servable_waits(&self) -> bool {
            match self.waiting.first() {
                Some((_, seq, wanted)) if self.open => {
                    let free = self.free.len() as i64;
                    free < *wanted && (free == 0 || self.now < seq + self.offer)
                }
                _ => true,
            }
        }

        /// Frees every hold due at `now` (what commands see first).
        fn lapse(&mut self) {
            let now = self.now;
            let due: Vec<String> = self
                .orders
                .iter()
                .filter(|(_, (_, until))| until.is_some_and(|u| u <= now))
                .map(|(u, _)| u.clone())
                .collect();
            for user in due {
                if let Some((tickets, _)) = self.orders.remove(&user) {
                    self.free.extend(tickets);
                }
            }
        }

        fn claim(
            &mut self,
            user: &str,
            count: Option<i64>,
            hold: Option<i64>,
        ) -> Result<Claim, TicketError> {
            self.offer_step();
            if let Some((tickets, _)) = self.orders.get(user) {
                return Ok(Claim::Repeat(Tickets::from_sorted(tickets.clone())));
            }
            let n = count.unwrap_or(1);
            self.within_limit(n)?;
            if !self.open {
                return Err(TicketError::Closed("e".into()));
            }
            if !self.waiting.is_empty() || (self.free.len() as i64) < n {
                return Err(TicketError::SoldOut("e".into()));
            }
            let tickets: Vec<i64> = (0..n).filter_map(|_| self.free.pop_first()).collect();
            let hold = hold.unwrap_or(self.hold);
            let until = (hold > 0).then_some(self.now + hold);
            self.orders
                .insert(user.to_owned(), (tickets.clone(), until));
            let tickets = Tickets::from_sorted(tickets);
            Ok(if until.is_some() {
                Claim::Held(tickets)
            } else {
                Claim::New(tickets)
            })
        }

        fn confirm(&mut self, user: &str) -> Result<i64, TicketError> {
            self.offer_step();
            match self.orders.get_mut(user) {
                Some((tickets, until)) => {
                    *until = None;
                    Ok(tickets.len() as i64)
                }
                None => Err(TicketError::NoHold {
                    event: "e".into(),
                    user: user.into(),
                }),
            }
        }

        fn cancel(&mut self, user: &str) -> Option<i64> {
            self.offer_step();
            let (tickets, _) = self.orders.remove(user)?;
            self.free.extend(&tickets);
            self.offer_step();
            tickets.first().copied()
        }
    }

    /// The invariants of DESIGN.md "Checkout" at one instant.
    fn check_invariants(s: &mut MemoryStore, m: &Model, total: i64) -> Result<(), TestCaseError> {
        let mut seen = BTreeSet::new();
        for tickets in s.holders.values() {
            prop_assert!(tickets.as_slice().len() as i64 <= m.limit, "above LIMIT");
            for t in tickets.as_slice() {
                prop_assert!(seen.insert(*t), "number {} held twice", t);
                prop_assert!((1..=total).contains(t));
            }
        }
        prop_assert!(seen.is_disjoint(&s.pool), "a number both held and free");
        let r = report(s, "e", Some(m.now)).unwrap();
        let held: i64 = m
            .orders
            .values()
            .filter(|(_, u)| u.is_some_and(|u| u > m.now))
            .map(|(t, _)| t.len() as i64)
            .sum();
        let sold: i64 = m
            .orders
            .values()
            .filter(|(_, u)| u.is_none())
            .map(|(t, _)| t.len() as i64)
            .sum();
        prop_assert_eq!((r.held, r.claimed - r.held), (held, sold));
        prop_assert_eq!(r.remaining + r.claimed, total, "free + held + sold = total");
        Ok(())
    }

    proptest! {
        #[test]
        fn pool_matches_the_model(
            total in 1i64..30,
            chunk in 1i64..8,
            hold in prop_oneof![Just(0i64), 1i64..30],
            limit in 1i64..4,
            actions in proptest::collection::vec(action(), 0..150),
        ) {
            let mut s = checkout_event(total, hold, limit);
            let offer = protocol::effect::default_offer(hold);
            let mut m = Model { free: (1..=total).collect(), open: true, now: 1, hold, limit, offer, ..Model::default() };
            for a in actions {
                let settles = !matches!(a, Action::Wait(_) | Action::Close | Action::Sweep(_) | Action::Open);
                match a {
                    Action::Claim { user, count, hold } => {
                        let user = format!("u{user}");
                        let got = claim(&mut s, "e", &user, with(count, hold), m.now, chunk);
                        prop_assert_eq!(got, m.claim(&user, count, hold));
                    }
                    Action::Confirm(u) => {
                        let user = format!("u{u}");
                        prop_assert_eq!(confirm(&mut s, "e", &user, m.now), m.confirm(&user));
                    }
                    Action::Cancel(u) => {
                        let user = format!("u{u}");
                        prop_assert_eq!(cancel(&mut s, "e", &user, m.now), Ok(m.cancel(&user)));
                    }
                    Action::Close => { set_status(&mut s, "e", Status::Closed, m.now).unwrap(); m.open = false; }
                    Action::Open => {
                        set_status(&mut s, "e", Status::Open, m.now).unwrap();
                        if !m.open && m.waitseq > 0 {
                            m.open = true;
                            m.offer_step();
                        }
                        m.open = true;
                    }
                    Action::Wait(ms) => m.now += ms,
                    Action::Sweep(max) => {
                        // The sweep only ever expires what is due.
                        let due = s.holds.values().filter(|u| **u <= m.now).count();
                        prop_assert_eq!(sweep(&mut s, "e", m.now, max), Ok(due.min(max)));
                        if due > 0 {
                            m.offer_step();
                        }
                    }
                    Action::Join(u, count) => {
                        let user = format!("u{u}");
                        prop_assert_eq!(wait(&mut s, "e", &user, count, m.now), m.wait(&user, count));
                        prop_assert_eq!(position(&mut s, "e", &user), Ok(m.position(&user)));
                    }
                    Action::Leave(u) => {
                        let user = format!("u{u}");
                        prop_assert_eq!(leave(&mut s, "e", &user, m.now), Ok(m.leave(&user)));
                    }
                }
                // The list is the model's, in order; offers went in list order.
                let list: Vec<String> = s.waiting_order().into_iter().map(|(u, _)| u).collect();
                let model_list: Vec<String> = m.waiting.iter().map(|(u, _, _)| u.clone()).collect();
                prop_assert_eq!(list, model_list);
                prop_assert_eq!(&s.offered, &m.offered);
                prop_assert_eq!(report(&mut s, "e", Some(m.now)).unwrap().waiting, m.waiting.len() as i64);
                for user in s.waiting.keys() {
                    prop_assert!(!s.holders.contains_key(user), "{} holds and waits", user);
                }
                if settles {
                    prop_assert!(m.nobody_servable_waits(), "a servable head waits");
                }
                // A live hold is never handed out: its numbers are its user's.
                for (user, (tickets, until)) in &m.orders {
                    if until.is_none_or(|u| u > m.now) {
                        prop_assert_eq!(s.holders.get(user).map(|t| t.as_slice().to_vec()), Some(tickets.clone()));
                    }
                }
                check_invariants(&mut s, &m, total)?;
                prop_assert!(s.pool.len() as i64 <= chunk.max(1) + 40, "the pool stays near one chunk");
            }
            // The log replays to the holders.
            let mut replay: HashMap<String, Tickets> = HashMap::new();
            for (_, r) in &s.log {
                match &r.op {
                    Op::Claim { user, tickets } | Op::Hold { user, tickets, .. } | Op::Offer { user, tickets, .. } => { prop_assert!(replay.insert(user.clone(), tickets.clone()).is_none()); }
                    Op::Cancel { user, tickets } | Op::Expire { user, tickets } => { let removed = replay.remove(user); prop_assert_eq!(removed.as_ref(), Some(tickets)); }
                    Op::Confirm { user, tickets } => { prop_assert_eq!(replay.get(user), Some(tickets)); }
                    _ => {}
                }
            }
            prop_assert_eq!(&replay, &s.holders);
            // A replica that applies the effects reaches the same state.
            let mut replica = MemoryStore::default();
            for effect in &s.effects {
                apply::apply(&mut replica, &effect.borrowed());
            }
            prop_assert_eq!(format!("{:?}", (&replica.meta, &replica.pool, &replica.log)), format!("{:?}", (&s.meta, &s.pool, &s.log)));
            prop_assert_eq!(&replica.holders, &s.holders);
            prop_assert_eq!(&replica.holds, &s.holds);
            prop_assert_eq!(&replica.waiting, &s.waiting);
        }
    }

    /// What MySQL would say about `s` (as `rebuild` reads it): its live
    /// orders, `minted` = the highest live number, the other numbers up to
    /// it free.
    fn snapshot_of(
        s: &MemoryStore,
        from: StreamId,
    ) -> (Begin, Vec<Order>, Vec<RangeInclusive<i64>>) {
        let meta = s.meta.clone().unwrap();
        let mut orders: Vec<Order> = s
            .holders
            .iter()
            .map(|(user, tickets)| Order {
                user: user.clone(),
                tickets: tickets.clone(),
                until: s.holds.get(user).copied().unwrap_or(0),
            })
            .collect();
        orders.sort_by(|a, b| a.user.cmp(&b.user));
        let mut live: Vec<i64> = orders
            .iter()
            .flat_map(|o| o.tickets.as_slice().to_vec())
            .collect();
        live.sort_unstable();
        let minted = live.last().copied().unwrap_or(0);
        let begin = Begin {
            incarnation: meta.incarnation.unwrap_or(Incarnation(7)),
            total: meta.total,
            minted,
            status: protocol::record::Status::Open,
            opens_at: meta.opens_at,
            closes_at: meta.closes_at,
            checkout: Checkout {
                hold: meta.hold,
                limit: meta.limit,
                offer: meta.offer,
            },
            orders: orders.len() as i64,
            from,
        };
        (begin, orders, protocol::restore::free_spans(minted, &live))
    }

    /// Restores a snapshot into `s` through the pool's own steps, in chunks
    /// of `chunk` tickets; returns the commit's id.
    fn restore_into(
        s: &mut MemoryStore,
        (begin, orders, free): &(Begin, Vec<Order>, Vec<RangeInclusive<i64>>),
        chunk: usize,
        now: i64,
    ) -> Result<StreamId, TicketError> {
        let steps = protocol::restore::steps(begin.clone(), true, orders, free, chunk);
        let mut id = Err(TicketError::Internal("no commit".into()));
        for step in steps {
            match step {
                protocol::restore::Step::Begin { begin, force } => {
                    restore_begin(s, "e", &begin, force)?
                }
                protocol::restore::Step::Orders(orders) => {
                    let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
                    restore_orders(s, "e", &orders)?;
                }
                protocol::restore::Step::Free(free) => {
                    restore_free(s, "e", &free)?;
                }
                protocol::restore::Step::Commit => id = restore_commit(s, "e", now),
            }
        }
        id
    }

    /// An event with sold orders, a multi-ticket order, a live hold, a
    /// past-deadline hold and a cancelled number (a hole below minted).
    fn sold_and_held() -> MemoryStore {
        let mut s = checkout_event(20, 0, 3);
        for (user, count, hold) in [
            ("sold1", 1, None),
            ("multi", 3, None),
            ("gone", 1, None),
            ("held", 2, Some(1_000)),
            ("late", 1, Some(10)),
            ("sold2", 1, None),
        ] {
            claim(&mut s, "e", user, with(Some(count), hold), 2, 1).unwrap();
        }
        cancel(&mut s, "e", "gone", 3).unwrap();
        s
    }

    #[test]
    fn a_restore_installs_the_snapshot_and_claims_never_hand_out_a_restored_number() {
        let original = sold_and_held();
        let snapshot = snapshot_of(&original, StreamId::new(1, 5));
        assert_eq!(snapshot.0.minted, 9);
        assert_eq!(snapshot.2, [5..=5]);
        let mut s = MemoryStore::default();
        let id = restore_into(&mut s, &snapshot, 2, 100).unwrap();
        assert_eq!(id, StreamId::new(100, 0));
        assert_eq!(s.log.len(), 1);
        assert!(matches!(s.log[0].1.op, Op::Restore { from, .. } if from == StreamId::new(1, 5)));
        for user in ["sold1", "multi", "held", "late", "sold2"] {
            assert_eq!(s.holders.get(user), original.holders.get(user), "{user}");
            assert_eq!(s.holds.get(user), original.holds.get(user), "{user}");
        }
        let meta = s.meta.clone().unwrap();
        assert_eq!((meta.status, meta.held, meta.extra), (Status::Open, 3, 3));
        assert!(s.staging.is_none());
        // At 20 the hold of `late` (until 12) is past: claims take 5, then
        // late's 8, then 10, 11, ... above minted; never a restored number.
        let r = report(&mut s, "e", Some(20)).unwrap();
        assert_eq!((r.remaining, r.claimed, r.held), (13, 7, 2));
        let got: Vec<i64> = (0..12)
            .map(|i| plain(&mut s, &format!("n{i}"), 20, 1).unwrap().ticket())
            .collect();
        assert_eq!(got, [5, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        assert_eq!(plain(&mut s, "n12", 20, 1).unwrap().ticket(), 20);
        assert_eq!(
            plain(&mut s, "n13", 20, 1),
            Err(TicketError::SoldOut("e".into()))
        );
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(
            ops[..2],
            ["restore", "expire"],
            "the past hold expires first"
        );
    }

    #[test]
    fn while_restoring_the_event_answers_tryagain_and_expires_nothing() {
        let original = sold_and_held();
        let (begin, orders, _) = snapshot_of(&original, StreamId::ZERO);
        let mut s = original.clone();
        let before = format!("{s:?}");
        assert_eq!(
            restore_begin(&mut s, "e", &begin, false),
            Err(TicketError::Exists("e".into()))
        );
        assert_eq!(before, format!("{s:?}"), "EXISTS changes nothing");
        restore_begin(&mut s, "e", &begin, true).unwrap();
        assert_eq!(s.log.len(), original.log.len(), "BEGIN keeps the log");
        let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
        restore_orders(&mut s, "e", &orders).unwrap();
        let again = TicketError::Restoring("e".into());
        let snapshot = format!("{s:?}");
        assert_eq!(plain(&mut s, "x", 50, 1), Err(again.clone()));
        assert_eq!(cancel(&mut s, "e", "sold1", 50), Err(again.clone()));
        assert_eq!(confirm(&mut s, "e", "held", 50), Err(again.clone()));
        assert_eq!(holder(&mut s, "e", "sold1", Some(50)), Err(again.clone()));
        assert_eq!(order(&mut s, "e", "sold1", Some(50)), Err(again.clone()));
        assert_eq!(wait(&mut s, "e", "x", None, 50), Err(again.clone()));
        assert_eq!(leave(&mut s, "e", "x", 50), Err(again.clone()));
        assert_eq!(position(&mut s, "e", "x"), Err(again.clone()));
        assert_eq!(
            set_status(&mut s, "e", Status::Closed, 50),
            Err(again.clone())
        );
        assert_eq!(sweep(&mut s, "e", 5_000, 10), Ok(0), "the sweep skips it");
        let r = report(&mut s, "e", Some(5_000)).unwrap();
        assert_eq!((r.status, r.held), (Status::Restoring, 3), "nothing lapses");
        assert_eq!(snapshot, format!("{s:?}"));
        // Incomplete: the free number 5 is missing.
        assert!(matches!(
            restore_commit(&mut s, "e", 60),
            Err(TicketError::Incomplete { .. })
        ));
        assert_eq!(snapshot, format!("{s:?}"));
        // BEGIN again restarts it without FORCE; DROP abandons it.
        restore_begin(&mut s, "e", &begin, false).unwrap();
        assert!(s.holders.is_empty());
        assert_eq!(drop_event(&mut s, "e", true, 70), Ok(1));
        for e in [
            restore_orders(&mut s, "e", &orders).unwrap_err(),
            restore_free(&mut s, "e", &[5..=5]).unwrap_err(),
            restore_commit(&mut s, "e", 80).unwrap_err(),
        ] {
            assert_eq!(e, TicketError::NotRestoring("e".into()));
        }
    }

    #[test]
    fn bad_restore_steps_are_refused_and_change_nothing() {
        let original = sold_and_held();
        let (begin, orders, _) = snapshot_of(&original, StreamId::ZERO);
        let mut s = MemoryStore::default();
        restore_begin(&mut s, "e", &begin, false).unwrap();
        let orders: Vec<Order<&str>> = orders.iter().map(Order::borrowed).collect();
        restore_orders(&mut s, "e", &orders[..2]).unwrap();
        restore_free(&mut s, "e", &[5..=5]).unwrap();
        let before = format!("{s:?}");
        let order = |user: &'static str, tickets: Vec<i64>| Order {
            user,
            tickets: Tickets::from_sorted(tickets),
            until: 0,
        };
        let cases: Vec<(Result<i64, TicketError>, &str)> = vec![
            (
                restore_orders(&mut s, "e", &orders[..1]),
                "restored already",
            ),
            (
                restore_orders(&mut s, "e", &[order("x", vec![10])]),
                "ticket 10 is above minted (9)",
            ),
            (
                restore_orders(&mut s, "e", &[order("x", vec![5])]),
                "ticket 5 is restored as free",
            ),
            (
                restore_orders(&mut s, "e", &[order("x", vec![6]), order("y", vec![6])]),
                "ticket 6 is in two orders",
            ),
            (
                restore_orders(&mut s, "e", &[order("x", vec![6]), order("x", vec![7])]),
                "order 2 (user 'x'): the user is restored already",
            ),
            (
                restore_orders(
                    &mut s,
                    "e",
                    &[
                        order("x", vec![6]),
                        order("y", vec![7]),
                        order("z", vec![8]),
                        order("w", vec![9]),
                    ],
                ),
                "would exceed the 5",
            ),
            (
                restore_free(&mut s, "e", &[5..=5]),
                "5 is in the pool already",
            ),
            (
                restore_free(&mut s, "e", &[6..=7, 7..=7]),
                "7 is given twice",
            ),
            (restore_free(&mut s, "e", &[9..=10]), "10 is above minted"),
        ];
        for (got, want) in cases {
            let e = got.unwrap_err().to_string();
            assert!(e.starts_with("ERR ") && e.contains(want), "{want}: {e}");
        }
        assert_eq!(before, format!("{s:?}"));
        // Numbers held and free at once, another missing: the counts add up
        // but the sum does not.
        restore_orders(&mut s, "e", &orders[2..]).unwrap();
        let mut t = s.clone();
        t.pool.clear();
        t.pool.insert(1);
        t.staging.as_mut().unwrap().sum += 1 - 5;
        assert!(
            matches!(restore_commit(&mut t, "e", 9), Err(TicketError::Incomplete { detail, .. }) if detail.contains("both held and free"))
        );
        assert!(restore_commit(&mut s, "e", 9).is_ok());
    }

    proptest! {
        #[test]
        fn restored_state_and_claims_never_hand_out_a_number_twice(
            total in 1i64..40,
            limit in 1i64..4,
            actions in proptest::collection::vec((0u8..6, 0u8..12, 1i64..4, 0i64..3), 0..60),
            chunk in 1usize..6,
            later in 0i64..40,
        ) {
            let mut s = checkout_event(total, 0, limit);
            let mut now = 1;
            for (kind, user, count, hold) in actions {
                let user = format!("u{user}");
                now += 1;
                let hold = (hold > 0).then_some(hold * 10);
                let _ = match kind {
                    0..=2 => claim(&mut s, "e", &user, with(Some(count.min(limit)), hold), now, 2).map(|_| ()),
                    3 => cancel(&mut s, "e", &user, now).map(|_| ()),
                    4 => confirm(&mut s, "e", &user, now).map(|_| ()),
                    _ => sweep(&mut s, "e", now, 3).map(|_| ()),
                };
            }
            let last = s.log.last().map(|(id, _)| *id).unwrap_or_default();
            let snapshot = snapshot_of(&s, last);
            let mut r = s.clone();
            let id = restore_into(&mut r, &snapshot, chunk, now).unwrap();
            prop_assert!(id > last);
            // The restored orders are the original's.
            prop_assert_eq!(&r.holders, &s.holders);
            prop_assert_eq!(&r.holds, &s.holds);
            // A replica applying the effects of the restore reaches the same state.
            let mut replica = s.clone();
            let from = s.effects.len();
            for effect in &r.effects[from..] {
                apply::apply(&mut replica, &effect.borrowed());
            }
            prop_assert_eq!(format!("{:?}", (&replica.meta, &replica.pool, &replica.log, &replica.holds)),
                format!("{:?}", (&r.meta, &r.pool, &r.log, &r.holds)));
            prop_assert_eq!(&replica.holders, &r.holders);
            // Claims until sold out: every number once, none a restored one
            // (unless its hold lapsed), the free ones first.
            let now = now + later;
            let live: BTreeSet<i64> = r.holders.iter()
                .filter(|(u, _)| r.holds.get(*u).is_none_or(|until| *until > now))
                .flat_map(|(_, t)| t.as_slice().to_vec())
                .collect();
            let mut taken = BTreeSet::new();
            for i in 0.. {
                match plain(&mut r, &format!("new{i}"), now, 1) {
                    Ok(c) => {
                        let t = c.ticket();
                        prop_assert!(!live.contains(&t), "restored number {} handed out", t);
                        prop_assert!(taken.insert(t), "number {} handed out twice", t);
                        prop_assert!((1..=total).contains(&t));
                    }
                    Err(TicketError::SoldOut(_)) => break,
                    Err(e) => prop_assert!(false, "{}", e),
                }
            }
            prop_assert_eq!(taken.len() + live.len(), total as usize, "every number is held or handed out");
        }
    }
}
