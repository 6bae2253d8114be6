//! A decided change: applied onto the store at once, and collected for the
//! command layer's commit step (docs/design.md "Effects and replication").
//!
//! The pool applies each change as it decides it (the next decision of the
//! same command reads what the previous one wrote: a claim first expires
//! due holds, then takes the lowest free number) and collects the effect in
//! [`Effects`], handed back to the command layer, whose commit step
//! replicates them, announces offers and notes hold deadlines. The commit
//! step runs whether the command then succeeds or fails: an expiry decided
//! before a claim answered `SOLDOUT` happened all the same. A claim decides
//! one effect, kept inline: collecting it allocates nothing.
//!
//! The writes of a change are shared by the primary and its replicas: the
//! primary's pool calls [`append`] with no stream id (the store appends the
//! log entry at an id it picks); `TICKET._APPLY` on a replica or at AOF
//! load decodes the replicated [`Effect`] and calls [`apply`], which runs
//! the very same writes at the primary's id. Nothing here decides: every
//! value is in the record (the meta counters `held` and `extra` are
//! adjusted by what the record says, and the only thing read, whether a
//! cancelled order was held, is the same on both sides), so the two sides
//! cannot diverge.

use std::borrow::Cow;

use protocol::draw::AFTER_DRAW;
use protocol::effect::{Effect, WAIT_COUNT_SPAN};
use protocol::keys::WANTS_OFFERED;
use protocol::record::{Op, Pick, Record, Tickets};
use protocol::seats::Seat;
use protocol::StreamId;

use protocol::keys::{alloc_field, alloc_user};

use super::listing;
use super::model::{Allocation, Allocs, Draw, Meta, Status};
use super::restore_apply::{restore_allocation, restore_begin, restore_free, restore_orders};
use super::store::{After, MetaWrite, Scope, Set, Store};
use super::writes::{add_counts, count, seated, summarize_allocs, write_allocation};

/// The generations hash's field (no ticket is 0) holding an event's
/// `TRANSFER_UNTIL`, when its init gave one: never read by a claim.
pub const TRANSFER_UNTIL_FIELD: i64 = 0;

/// One decided effect: its user ids borrowed from the command's arguments,
/// or owned when read from the store (an expired hold, an offered head).
pub type Decided<'a> = Effect<Cow<'a, str>>;

/// The effects of one command, in the order they were applied.
#[derive(Debug, Default)]
pub struct Effects<'a> {
    first: Option<Decided<'a>>,
    more: Vec<Decided<'a>>,
    /// Offers made so far (bounded per command by `Clock::offers`).
    offered: usize,
    /// When the event must be visited again (the offer step stopped at its
    /// bound, or the admission rate): the commit step tells the sweep.
    again: Option<i64>,
}

impl<'a> Effects<'a> {
    /// The effects in order.
    pub fn iter(&self) -> impl Iterator<Item = &Decided<'a>> {
        self.first.iter().chain(self.more.iter())
    }

    /// Runs `f` on each effect in order (cheaper than [`Self::iter`] on
    /// the claim path).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(&Decided<'a>)) {
        if let Some(first) = &self.first {
            f(first);
            self.more.iter().for_each(f);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// How many offers the command made.
    pub fn offered(&self) -> usize {
        self.offered
    }

    pub(super) fn count_offer(&mut self) {
        self.offered += 1;
    }

    /// When the sweep should visit the event again, if it should.
    pub fn again(&self) -> Option<i64> {
        self.again
    }

    /// Asks the sweep to visit the event at `at` (the earliest asked wins).
    pub(super) fn visit_again(&mut self, at: i64) {
        self.again = Some(self.again.map_or(at, |t| t.min(at)));
    }

    #[inline]
    fn push(&mut self, effect: Decided<'a>) {
        match self.first {
            None => self.first = Some(effect),
            Some(_) => self.more.push(effect),
        }
    }

    /// Writes `record` (and appends it to the log at `id`, or at an id the
    /// store picks) and collects it; returns the id used.
    #[inline]
    pub(super) fn append(
        &mut self,
        store: &mut impl Store,
        record: Record<Cow<'a, str>>,
        minted: Option<i64>,
        id: Option<StreamId>,
    ) -> StreamId {
        let id = append(store, &record, minted, id);
        self.push(Effect::Append { id, record, minted });
        id
    }

    /// Applies an effect that is not a log entry and collects it.
    pub(super) fn apply(&mut self, store: &mut impl Store, effect: Decided<'a>) {
        apply(store, &effect);
        self.push(effect);
    }
}

/// Performs a replicated effect (an `Append` at its own id).
pub fn apply<U: AsRef<str>>(store: &mut impl Store, effect: &Effect<U>) {
    match effect {
        Effect::Append { id, record, minted } => {
            append(store, record, *minted, Some(*id));
        }
        Effect::DropAll => {
            store.delete(Scope::State);
            store.delete(Scope::Log);
        }
        Effect::RestoreBegin(begin) => restore_begin(store, begin),
        Effect::RestoreOrders(orders) => restore_orders(store, orders),
        Effect::RestoreFree(free) => restore_free(store, free),
        Effect::RestoreAllocation(allocation) => restore_allocation(store, allocation),
        Effect::RestoreAfter(after) => restore_after(store, after),
        Effect::Wait { user, place } => {
            store.set_score(Set::Waiting, user.as_ref(), Some(*place));
            let drawn = matches!(store.meta(), Ok(Some(meta)) if meta.draw.is_some());
            store.write_meta(MetaWrite::RaiseWaitSeq(seq_of(*place, drawn)));
        }
        Effect::Leave { user } => {
            store.set_score(Set::Waiting, user.as_ref(), None);
        }
        Effect::Answered { user, tickets } => {
            let held = tickets.as_ref().map_or(&[][..], Tickets::as_slice);
            store.note_add(&protocol::keys::answered_fields(user.as_ref(), held))
        }
        Effect::Healed { term } => store.note_close(*term),
        Effect::AllocationKey { name, key } => {
            if let Ok(Some(allocation)) = store.allocation(name.as_ref()) {
                let allocation = Allocation {
                    key: *key,
                    ..allocation
                };
                write_allocation(store, name.as_ref(), &allocation);
            }
        }
    }
}

/// The `seq` of a waiting place: in a draw event those who join after the
/// draw queue behind every rank, from `AFTER_DRAW` on.
pub fn seq_of(place: i64, draw_event: bool) -> i64 {
    let place = match draw_event {
        true => place.saturating_sub(AFTER_DRAW as i64),
        false => place,
    };
    place / WAIT_COUNT_SPAN
}

/// Writes the state change `record` describes and appends it to the log (at
/// `id`, or at an id the store picks); returns the id used. `minted` is the
/// event's new `minted` when a claim minted numbers: the claimed tickets
/// above the old `minted` are new, and the numbers above the highest claimed
/// one up to `minted` go into the pool.
pub fn append<U: AsRef<str>>(
    store: &mut impl Store,
    record: &Record<U>,
    minted: Option<i64>,
    id: Option<StreamId>,
) -> StreamId {
    match &record.op {
        Op::Init { .. } => init(store, &record.op, record.at),
        Op::Claim { .. } | Op::Hold { .. } | Op::Offer { .. } => {
            order(store, &record.op, minted, record.at)
        }
        Op::Allocate {
            name,
            tickets,
            release,
            key,
        } => allocate(store, name, tickets, minted, (*release, *key)),
        Op::Release { name, tickets } => release(store, name, tickets.as_ref()),
        Op::Confirm { user, tickets } => {
            store.set_score(Set::Holds, user.as_ref(), None);
            // Bought: no longer an offer.
            store.set_wants(user.as_ref(), None);
            add_counts(store, -count(tickets), 0);
            if seated(store) {
                store.set_seats(tickets.as_slice(), Seat::Sold);
            }
        }
        Op::Expire {
            from,
            user,
            tickets,
        }
        | Op::Cancel {
            from,
            user,
            tickets,
        } => {
            let held = store.set_score(Set::Holds, user.as_ref(), None);
            if held {
                // Only a held order can have been an offer.
                store.set_wants(user.as_ref(), None);
            }
            let gone = give_back(store, user.as_ref(), tickets, held, from.as_deref());
            forget(store, &gone);
        }
        Op::Transfer { user, to, tickets } => transfer(store, user.as_ref(), to, tickets),
        Op::Resell { user, tickets } => listing::list(store, user.as_ref(), tickets.as_slice()),
        Op::Unlist { tickets, .. } => listing::delist(store, tickets.as_slice()),
        Op::Resold { user, to, tickets } => {
            transfer(store, user.as_ref(), to, tickets);
            listing::delist(store, tickets.as_slice());
        }
        Op::Scan { ticket, gen, gate } => {
            let value = format!("{} {gen} {}", record.at, gate.as_deref().unwrap_or("-"));
            store.set_after_field(After::Scans, *ticket, Some(&value));
        }
        Op::Open => store.write_meta(MetaWrite::Status(Status::Open)),
        Op::Close => store.write_meta(MetaWrite::Status(Status::Closed)),
        // The log stays: it is the trace of the drop.
        Op::Drop => {
            store.delete(Scope::State);
        }
        // The snapshot replaces every earlier entry.
        Op::Restore { status, .. } => {
            store.delete(Scope::Log);
            store.write_meta(MetaWrite::Status(Status::from(*status)));
            store.write_meta(MetaWrite::ClearStaging);
        }
        Op::Enter { user, count, rank } => enter(store, user.as_ref(), *count, *rank, record.at),
        Op::Leave { user } => {
            store.set_score(Set::Waiting, user.as_ref(), None);
            store.set_wants(user.as_ref(), None);
        }
        Op::Draw { .. } => store.write_meta(MetaWrite::Drawn(record.at)),
    }
    store.append(record, id)
}

/// A claim (sold), hold or offer (held): its tickets go to its user. An
/// offer is a hold the waiting list decided for its head, who leaves the
/// list with it and is marked offered (`WANTS_OFFERED` in the wants hash,
/// until its confirm, cancel or expiry) so `TICKET.POSITION` answers 0.
fn order<U: AsRef<str>>(store: &mut impl Store, op: &Op<U>, minted: Option<i64>, at: i64) {
    let Some((user, tickets, until)) = op.order() else {
        return;
    };
    let (user, pick) = (user.as_ref(), op.pick());
    if let Some(name) = op.from() {
        took_from(store, name, user, tickets);
    }
    match op {
        Op::Claim { .. } => {
            take(store, user, tickets, minted, pick);
            seats(store, pick, tickets, Seat::Sold);
        }
        Op::Offer { .. } => {
            store.set_score(Set::Waiting, user, None);
            admitted(store, at);
            store.set_wants(user, Some(WANTS_OFFERED));
            hold(store, user, tickets, minted, until, pick);
        }
        _ => hold(store, user, tickets, minted, until, pick),
    }
    // A plain claim stops at this look at the cached meta.
    if store.listed() > 0 {
        listing::bought(store, user, tickets.as_slice());
    }
}

/// An entrant of a draw joins at their rank (always in an effect: a record
/// decoded without it, which only the sidecar reads, changes no place).
/// `waitseq` rises to the entry's time so the offer step looks at the list.
fn enter(store: &mut impl Store, user: &str, count: i64, rank: Option<u64>, at: i64) {
    if let Some(rank) = rank {
        store.set_score(Set::Waiting, user, Some(rank as i64));
    }
    if count > 1 {
        store.set_wants(user, Some(count));
    }
    store.write_meta(MetaWrite::RaiseWaitSeq(at));
}

/// An offer of a draw event with `ADMIT`: the bucket gives one token at the
/// record's time (so a replica's bucket is its primary's).
fn admitted(store: &mut impl Store, at: i64) {
    let Ok(Some(meta)) = store.meta() else {
        return;
    };
    let Some(draw) = meta.draw else {
        return;
    };
    if let Some(bucket) = draw.admission() {
        let after = bucket.take(at, 1);
        store.write_meta(MetaWrite::Admitted {
            second: after.second,
            used: after.used as i64,
        });
    }
}

/// `op=init`: the meta hash of a new event (its pool stays empty until the
/// first claim mints). A draw event without `OPENS` starts closed: it opens,
/// and draws, at `TICKET.OPEN`.
fn init<U>(store: &mut impl Store, op: &Op<U>, at: i64) {
    let Op::Init {
        total,
        opens_at,
        closes_at,
        checkout,
        incarnation,
        draw,
        layout,
        transfer_until,
    } = op
    else {
        return;
    };
    if let Some(until) = transfer_until {
        let until = until.to_string();
        store.set_after_field(After::Gens, TRANSFER_UNTIL_FIELD, Some(&until));
    }
    let status = match draw {
        Some(_) if *opens_at == 0 => Status::Closed,
        _ => Status::Open,
    };
    let meta = Meta {
        total: *total,
        // A seated event's seats all exist from the start.
        minted: if layout.is_some() { *total } else { 0 },
        status,
        opens_at: *opens_at,
        closes_at: *closes_at,
        hold: checkout.hold,
        limit: checkout.limit,
        held: 0,
        extra: 0,
        offer: checkout.offer,
        waitseq: 0,
        incarnation: *incarnation,
        draw: draw.map(|d| Box::new(Draw::new(d.commitment, d.seed, d.admit))),
        seated: layout.is_some(),
        allocs: Allocs::default(),
        listed: 0,
    };
    store.write_meta(MetaWrite::Create {
        meta: &meta,
        created_at: at,
    });
    if let Some(layout) = layout {
        store.create_seating(layout);
    }
}

fn hold(
    store: &mut impl Store,
    user: &str,
    tickets: &Tickets,
    minted: Option<i64>,
    until: i64,
    pick: Option<&Pick>,
) {
    take(store, user, tickets, minted, pick);
    seats(store, pick, tickets, Seat::Held);
    store.set_score(Set::Holds, user, Some(until));
    add_counts(store, count(tickets), 0);
}

/// A seated event's claim, hold or offer (it carries its pick): the seat
/// state of its tickets.
fn seats(store: &mut impl Store, pick: Option<&Pick>, tickets: &Tickets, seat: Seat) {
    if pick.is_some() {
        store.set_seats(tickets.as_slice(), seat);
    }
}

/// Gives `tickets` to `user`, taking them from the pool or from the
/// numbers just minted (a seated event's seats: from the seat state).
fn take(
    store: &mut impl Store,
    user: &str,
    tickets: &Tickets,
    minted: Option<i64>,
    pick: Option<&Pick>,
) {
    take_free(store, tickets, minted, pick.is_some());
    store.set_holder(user, Some(tickets));
    if tickets.as_slice().len() > 1 {
        add_counts(store, 0, count(tickets) - 1);
    }
}

/// Takes `tickets` out of the pool, or from the numbers just minted
/// (`minted`: the new `minted`), whose others go into the pool; a seated
/// event's (`seated`) seat state is written by the caller.
fn take_free(store: &mut impl Store, tickets: &Tickets, minted: Option<i64>, seated: bool) {
    match (tickets, minted) {
        _ if seated => {}
        // The hot path: a single freshly minted ticket was never pooled.
        (Tickets::One(_), Some(_)) => {}
        // Removing a number the pool does not have (a minted one) is a no-op.
        _ => tickets
            .as_slice()
            .iter()
            .for_each(|t| store.set_free(*t..=*t, false)),
    }
    if let Some(minted) = minted {
        let highest = tickets.as_slice().last().copied().unwrap_or(minted);
        if minted > highest {
            store.set_free(highest + 1..=minted, true);
        }
        store.write_meta(MetaWrite::Minted(minted));
    }
}

/// Returns `user`'s `tickets` to the pool, or to the allocation `from`
/// (`held`: they were a held order), but a held ticket listed for resale
/// to its list; returns the tickets that are no longer sold.
fn give_back(
    store: &mut impl Store,
    user: &str,
    tickets: &Tickets,
    held: bool,
    from: Option<&str>,
) -> Vec<i64> {
    store.set_holder(user, None);
    let seated = seated(store);
    let gone = match held {
        true => listing::relist(store, user, tickets.as_slice(), seated),
        false => tickets.as_slice().to_vec(),
    };
    if !returned(store, user, tickets, from, seated) {
        to_public(store, &gone, seated);
    }
    let held = if held { count(tickets) } else { 0 };
    let extra = count(tickets) - 1;
    if held != 0 || extra != 0 {
        add_counts(store, -held, -extra);
    }
    gone
}

/// Tickets that are no longer sold lose their generation and scan: a
/// ticket sold again starts at generation 1.
fn forget(store: &mut impl Store, tickets: &[i64]) {
    for hash in [After::Gens, After::Scans] {
        tickets
            .iter()
            .for_each(|t| store.set_after_field(hash, *t, None));
    }
}

/// `restore-after`: the transfer deadline, the generations above 1 and
/// the scans, as `INIT`, `TRANSFER` and `SCAN` write them.
fn restore_after(store: &mut impl Store, after: &protocol::restore_after::AfterSale) {
    if let Some(until) = after.transfer_until {
        let until = until.to_string();
        store.set_after_field(After::Gens, TRANSFER_UNTIL_FIELD, Some(&until));
    }
    for s in &after.tickets {
        if s.gen > 1 {
            store.set_after_field(After::Gens, s.ticket, Some(&s.gen.to_string()));
        }
        if let Some((at, gate)) = &s.scan {
            let value = format!("{at} {} {}", s.gen, gate.as_deref().unwrap_or("-"));
            store.set_after_field(After::Scans, s.ticket, Some(&value));
        }
    }
}

/// `op=transfer`: `from`'s `tickets` go to `to`'s order (made when `to`
/// has none), each one generation up. The order's count of extra
/// tickets follows.
fn transfer(store: &mut impl Store, from: &str, to: &str, tickets: &Tickets) {
    let moved = tickets.as_slice();
    let mine = store.holder(from).ok().flatten();
    let theirs = store.holder(to).ok().flatten();
    let mine = mine.as_ref().map_or(&[][..], Tickets::as_slice);
    let theirs = theirs.as_ref().map_or(&[][..], Tickets::as_slice);
    let kept: Vec<i64> = mine
        .iter()
        .copied()
        .filter(|t| moved.binary_search(t).is_err())
        .collect();
    let got = merged(theirs, moved);
    let extra = |n: usize| (n as i64 - 1).max(0);
    let delta = extra(kept.len()) + extra(got.len()) - extra(mine.len()) - extra(theirs.len());
    transfer_marks(store, (from, to), (moved.len(), kept.len(), theirs.len()));
    let kept = (!kept.is_empty()).then(|| Tickets::from_sorted(kept));
    store.set_holder(from, kept.as_ref());
    store.set_holder(to, Some(&Tickets::from_sorted(got)));
    if delta != 0 {
        add_counts(store, 0, delta);
    }
    for &ticket in moved {
        let gen = match store.after_field(After::Gens, ticket) {
            Ok(Some(text)) => text.parse::<i64>().unwrap_or(1),
            _ => 1,
        };
        let next = gen.saturating_add(1).to_string();
        store.set_after_field(After::Gens, ticket, Some(&next));
    }
}

/// A transfer and the allocations (events with allocations only): the
/// moved tickets are no longer their giver's allocation's (it counts
/// them claimed no more; a giver left with nothing loses its mark), and a
/// receiver's order from an allocation, now mixed, is no longer its
/// either: a later cancel cannot count tickets off an allocation that
/// never had them.
fn transfer_marks(
    store: &mut impl Store,
    (from, to): (&str, &str),
    (moved, kept, theirs): (usize, usize, usize),
) {
    if !matches!(store.meta(), Ok(Some(meta)) if meta.allocs.count > 0) {
        return;
    }
    uncount(store, from, moved, kept == 0);
    if theirs > 0 {
        uncount(store, to, theirs, true);
    }
}

/// `n` tickets of `user`'s order no longer counted by its allocation
/// (if marked); with `unmark`, the order is not the allocation's any more.
fn uncount(store: &mut impl Store, user: &str, n: usize, unmark: bool) {
    let mark = alloc_user(user);
    let Ok(Some(name)) = store.alloc_field(&mark) else {
        return;
    };
    if unmark {
        store.set_alloc_field(&mark, None);
    }
    let Ok(Some(mut allocation)) = store.allocation(&name) else {
        return;
    };
    allocation.claimed -= n as i64;
    write_allocation(store, &name, &allocation);
}

/// Free tickets back in public sale: into the pool, or free seats.
fn to_public(store: &mut impl Store, tickets: &[i64], seated: bool) {
    if seated {
        store.set_seats(tickets, Seat::Free);
    } else {
        for ticket in tickets {
            store.set_free(*ticket..=*ticket, true);
        }
    }
}

/// `op=allocate`: free tickets into the allocation `name` (made when
/// new, its key then set), out of the pool and the numbers just minted,
/// or seats marked allocated.
fn allocate(
    store: &mut impl Store,
    name: &str,
    tickets: &Tickets,
    minted: Option<i64>,
    (release, key): (Option<i64>, Option<[u8; 32]>),
) {
    let seated = seated(store);
    take_free(store, tickets, minted, seated);
    if seated {
        store.set_seats(tickets.as_slice(), Seat::Allocated);
    }
    let mut allocation = match store.allocation(name) {
        // A restored allocation's key is unknown: its first allocate sets it.
        Ok(Some(a)) if a.key == Some(Allocation::RESTORED_KEY) => Allocation { key, ..a },
        Ok(Some(a)) => a,
        _ => Allocation {
            key,
            ..Allocation::default()
        },
    };
    allocation.free = merged(&allocation.free, tickets.as_slice());
    allocation.release = release.or(allocation.release);
    write_allocation(store, name, &allocation);
}

/// `op=release`: the allocation's `tickets` back in public sale; an
/// allocation left with none free ends, and so do its users' marks.
fn release(store: &mut impl Store, name: &str, tickets: Option<&Tickets>) {
    let Ok(Some(mut allocation)) = store.allocation(name) else {
        return;
    };
    let tickets = tickets.map_or(&[][..], Tickets::as_slice);
    allocation
        .free
        .retain(|t| tickets.binary_search(t).is_err());
    let seated = seated(store);
    to_public(store, tickets, seated);
    if !allocation.free.is_empty() {
        return write_allocation(store, name, &allocation);
    }
    store.set_alloc_field(&alloc_field(name), None);
    let fields = store.alloc_fields().unwrap_or_default();
    for (field, value) in fields {
        if field.starts_with("u:") && value == name {
            store.set_alloc_field(&field, None);
        }
    }
    summarize_allocs(store);
}

/// A claim or hold took `tickets` from the allocation `name`: they are
/// no longer free in it, and `user`'s order is marked as its.
fn took_from(store: &mut impl Store, name: &str, user: &str, tickets: &Tickets) {
    let Ok(Some(mut allocation)) = store.allocation(name) else {
        return;
    };
    let tickets = tickets.as_slice();
    allocation
        .free
        .retain(|t| tickets.binary_search(t).is_err());
    allocation.claimed += tickets.len() as i64;
    store.set_alloc_field(&alloc_user(user), Some(name));
    write_allocation(store, name, &allocation);
}

/// `user`'s order came from an allocation (events with allocations
/// only): its mark goes, the allocation counts it no longer, and a held
/// order's tickets go back to it when the record says so (`from`).
/// Whether they did.
fn returned(
    store: &mut impl Store,
    user: &str,
    tickets: &Tickets,
    from: Option<&str>,
    seated: bool,
) -> bool {
    let allocs = match store.meta() {
        Ok(Some(meta)) => meta.allocs,
        _ => return false,
    };
    if allocs.count == 0 {
        return false;
    }
    let mark = alloc_user(user);
    let Ok(Some(name)) = store.alloc_field(&mark) else {
        return false;
    };
    store.set_alloc_field(&mark, None);
    let Ok(Some(mut allocation)) = store.allocation(&name) else {
        return false;
    };
    let tickets = tickets.as_slice();
    allocation.claimed -= tickets.len() as i64;
    let back = from == Some(name.as_str());
    if back {
        allocation.free = merged(&allocation.free, tickets);
        if seated {
            store.set_seats(tickets, Seat::Allocated);
        }
    }
    write_allocation(store, &name, &allocation);
    back
}

/// Two ascending lists of distinct numbers as one.
fn merged(a: &[i64], b: &[i64]) -> Vec<i64> {
    let mut all: Vec<i64> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    all.dedup();
    all
}
