//! The ticket-pool state machine: what every `TICKET.*` command does to an
//! event, written against the [`Store`] trait so it runs unchanged over Redis
//! keys (`redis_store`) and over [`MemoryStore`] in unit and property tests.
//!
//! Every function reads and validates first, then decides one state change
//! and hands it to [`commit`]: [`crate::apply`] performs its writes (the
//! same code a replica runs for the replicated effect) and the store
//! replicates it as one `TICKET._APPLY`. So an error never leaves partial
//! state behind, and a replica cannot decide differently. The pool is lazy: it holds only the
//! lowest free numbers; `minted` is the highest number ever put into it, and
//! every unminted number is greater than every pooled one, so the lowest free
//! number is always the pool's minimum (or `minted + 1` when it is empty).

use std::collections::{BTreeSet, HashMap};
use std::ops::RangeInclusive;

use protocol::effect::Effect;
use protocol::record::{Op, Record, Tickets};
use protocol::StreamId;

use crate::apply;
use crate::error::TicketError;

/// Whether an event accepts claims (subject to its `opens_at`/`closes_at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "open" => Some(Status::Open),
            "closed" => Some(Status::Closed),
            _ => None,
        }
    }
}

/// The event's meta hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub total: i64,
    pub minted: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
}

/// Storage of one event. Reads may fail (wrong types, corrupt values); writes
/// happen only after every read succeeded and cannot fail.
pub trait Store {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError>;
    fn holder(&mut self, user: &str) -> Result<Option<i64>, TicketError>;
    /// The smallest number in the pool, without removing it.
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError>;
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
    fn take_free(&mut self, ticket: i64);
    fn add_free(&mut self, tickets: RangeInclusive<i64>);
    fn set_holder(&mut self, user: &str, ticket: i64);
    fn remove_holder(&mut self, user: &str);
    /// Appends `record` to the log at `id`, or at an id the store picks
    /// (the primary's auto id) when `None`; returns the id used.
    fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId;
    /// Deletes every key of the event; returns how many existed.
    fn delete_all(&mut self) -> i64;
    /// Propagates one state change to replicas and the AOF.
    fn replicate(&mut self, effect: &Effect<&str>);
}

/// Performs a decided change and replicates it as one effect.
fn commit(store: &mut impl Store, record: Record<&str>, minted: Option<i64>) {
    let id = apply::append(store, &record, minted, None);
    store.replicate(&Effect::Append { id, record, minted });
}

/// The answer to a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// A new ticket, popped from the pool.
    New(i64),
    /// The ticket the user already held; nothing changed.
    Repeat(i64),
}

impl Claim {
    pub fn ticket(self) -> i64 {
        match self {
            Claim::New(t) | Claim::Repeat(t) => t,
        }
    }
}

/// What `TICKET.STATUS` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub total: i64,
    pub remaining: i64,
    pub claimed: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    pub unsynced: i64,
}

fn existing_meta(store: &mut impl Store, event: &str) -> Result<Meta, TicketError> {
    store
        .meta()?
        .ok_or_else(|| TicketError::NoEvent(event.to_owned()))
}

/// `TICKET.INIT`: creates the meta hash (the pool stays empty until the first
/// claim mints a chunk, so any size inits in O(1)).
pub fn init(
    store: &mut impl Store,
    event: &str,
    total: i64,
    opens_at: i64,
    closes_at: i64,
    now: i64,
) -> Result<(), TicketError> {
    if store.meta()?.is_some() || store.any_state()? {
        return Err(TicketError::Exists(event.to_owned()));
    }
    // Type-check the log before the first write.
    store.log_len()?;
    let op = Op::Init {
        total,
        opens_at,
        closes_at,
    };
    commit(store, Record { op, at: now }, None);
    Ok(())
}

/// `TICKET.CLAIM`: the user's existing ticket, or the lowest free one.
pub fn claim(
    store: &mut impl Store,
    event: &str,
    user: &str,
    now: i64,
    chunk: i64,
) -> Result<Claim, TicketError> {
    let meta = existing_meta(store, event)?;
    check_consistent(store, event, &meta)?;
    if let Some(ticket) = store.holder(user)? {
        return Ok(Claim::Repeat(ticket));
    }
    if meta.status == Status::Closed || (meta.closes_at > 0 && now >= meta.closes_at) {
        return Err(TicketError::Closed(event.to_owned()));
    }
    if now < meta.opens_at {
        return Err(TicketError::NotOpen {
            event: event.to_owned(),
            opens_at: meta.opens_at,
        });
    }
    // check_consistent has type-checked every key, so no write fails.
    let (ticket, minted) = match store.lowest_free()? {
        Some(ticket) => (ticket, None),
        None if meta.minted < meta.total => mint_chunk(meta.total, meta.minted, chunk),
        None => return Err(TicketError::SoldOut(event.to_owned())),
    };
    let op = Op::Claim {
        user,
        tickets: Tickets::One(ticket),
    };
    commit(store, Record { op, at: now }, minted);
    Ok(Claim::New(ticket))
}

/// Every number up to `minted` is either held or in the pool, and the log
/// exists. Reading the three also type-checks every key of the event. The keys disagree only while a cluster slot migration has moved
/// some of an event's keys and not yet the others (the command is redirected
/// to the importing node by its event argument, which is not itself a key),
/// or after hand edits. Writing then could hand out a number twice, so the
/// command answers `TRYAGAIN` (cluster clients retry it) and changes nothing.
fn check_consistent(store: &mut impl Store, event: &str, meta: &Meta) -> Result<(), TicketError> {
    let accounted = store.holder_count()? + store.free_count()?;
    if accounted != meta.minted || !store.log_exists()? {
        return Err(TicketError::TryAgain(event.to_owned()));
    }
    Ok(())
}

/// Mints the next chunk of numbers: its first one goes to the claimant
/// directly (it would be popped right away, so it never enters the pool).
/// Returns the ticket and the new `minted`.
fn mint_chunk(total: i64, minted: i64, chunk: i64) -> (i64, Option<i64>) {
    let last = minted.saturating_add(chunk.max(1)).min(total);
    (minted + 1, Some(last))
}

/// `TICKET.CANCEL`: returns the user's ticket to the pool.
pub fn cancel(
    store: &mut impl Store,
    event: &str,
    user: &str,
    now: i64,
) -> Result<Option<i64>, TicketError> {
    let meta = existing_meta(store, event)?;
    check_consistent(store, event, &meta)?;
    let Some(ticket) = store.holder(user)? else {
        return Ok(None);
    };
    // check_consistent has type-checked every key, so no write fails.
    let op = Op::Cancel {
        user,
        tickets: Tickets::One(ticket),
    };
    commit(store, Record { op, at: now }, None);
    Ok(Some(ticket))
}

/// `TICKET.HOLDER`: the user's ticket, if any.
pub fn holder(store: &mut impl Store, event: &str, user: &str) -> Result<Option<i64>, TicketError> {
    existing_meta(store, event)?;
    store.holder(user)
}

/// `TICKET.OPEN` / `TICKET.CLOSE`: sets the status; logs only a real change.
pub fn set_status(
    store: &mut impl Store,
    event: &str,
    status: Status,
    now: i64,
) -> Result<(), TicketError> {
    let meta = existing_meta(store, event)?;
    if meta.status == status {
        return Ok(());
    }
    store.log_len()?;
    let op = match status {
        Status::Open => Op::Open,
        Status::Closed => Op::Close,
    };
    commit(store, Record { op, at: now }, None);
    Ok(())
}

/// `TICKET.STATUS`.
pub fn report(store: &mut impl Store, event: &str) -> Result<Report, TicketError> {
    let meta = existing_meta(store, event)?;
    Ok(Report {
        total: meta.total,
        remaining: store.free_count()? + meta.total - meta.minted,
        claimed: store.holder_count()?,
        status: meta.status,
        opens_at: meta.opens_at,
        closes_at: meta.closes_at,
        unsynced: store.log_len()?,
    })
}

/// `TICKET.DROP`: deletes the event, refusing while the log is not drained.
pub fn drop_event(store: &mut impl Store, event: &str, force: bool) -> Result<i64, TicketError> {
    // Type-check every key before deleting any (`any_state` stops at the
    // first key that exists, so the pool and holders are checked on their own).
    store.any_state()?;
    store.free_count()?;
    store.holder_count()?;
    let entries = store.log_len()?;
    if entries > 0 && !force {
        return Err(TicketError::Unsynced {
            event: event.to_owned(),
            entries,
        });
    }
    let deleted = store.delete_all();
    if deleted > 0 {
        store.replicate(&Effect::Drop);
    }
    Ok(deleted)
}

/// An in-memory [`Store`] for tests: one event, plain collections.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    pub meta: Option<Meta>,
    pub pool: BTreeSet<i64>,
    pub holders: HashMap<String, i64>,
    pub log: Vec<(StreamId, Record)>,
    /// What [`Store::replicate`] was given, in order.
    pub effects: Vec<Effect>,
    /// The next auto id's sequence number.
    pub next_seq: u64,
}

impl Store for MemoryStore {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        Ok(self.meta.clone())
    }
    fn holder(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        Ok(self.holders.get(user).copied())
    }
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        Ok(self.pool.first().copied())
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
        Ok(self.meta.is_some() || !self.log.is_empty())
    }
    fn any_state(&mut self) -> Result<bool, TicketError> {
        Ok(self.meta.is_some() || !self.pool.is_empty() || !self.holders.is_empty())
    }
    fn create_meta(&mut self, meta: &Meta, _created_at: i64) {
        self.meta = Some(meta.clone());
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
    fn take_free(&mut self, ticket: i64) {
        self.pool.remove(&ticket);
    }
    fn add_free(&mut self, tickets: RangeInclusive<i64>) {
        self.pool.extend(tickets);
    }
    fn set_holder(&mut self, user: &str, ticket: i64) {
        self.holders.insert(user.to_owned(), ticket);
    }
    fn remove_holder(&mut self, user: &str) {
        self.holders.remove(user);
    }
    fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId {
        let id = id.unwrap_or_else(|| {
            self.next_seq += 1;
            StreamId::new(1, self.next_seq)
        });
        self.log.push((id, record.owned()));
        id
    }
    fn delete_all(&mut self) -> i64 {
        let existed = [
            self.meta.is_some(),
            !self.pool.is_empty(),
            !self.holders.is_empty(),
            !self.log.is_empty(),
        ];
        let effects = std::mem::take(&mut self.effects);
        *self = MemoryStore {
            effects,
            ..MemoryStore::default()
        };
        existed.iter().filter(|&&e| e).count() as i64
    }
    fn replicate(&mut self, effect: &Effect<&str>) {
        self.effects.push(effect.owned());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn event(total: i64) -> MemoryStore {
        let mut s = MemoryStore::default();
        init(&mut s, "e", total, 0, 0, 1).unwrap();
        s
    }

    #[test]
    fn claims_hand_out_lowest_first_and_sell_out() {
        let mut s = event(3);
        let got: Vec<_> = ["a", "b", "c"]
            .iter()
            .map(|u| claim(&mut s, "e", u, 2, 2).unwrap())
            .collect();
        assert_eq!(got, [Claim::New(1), Claim::New(2), Claim::New(3)]);
        assert_eq!(
            claim(&mut s, "e", "d", 2, 2),
            Err(TicketError::SoldOut("e".into()))
        );
        assert_eq!(claim(&mut s, "e", "b", 2, 2), Ok(Claim::Repeat(2)));
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
            claim(&mut s, "e", u, 2, 4).unwrap();
        }
        assert_eq!(cancel(&mut s, "e", "b", 3), Ok(Some(2)));
        assert_eq!(cancel(&mut s, "e", "b", 3), Ok(None));
        assert_eq!(claim(&mut s, "e", "d", 4, 4), Ok(Claim::New(2)));
        assert_eq!(claim(&mut s, "e", "b", 4, 4), Ok(Claim::New(4)));
    }

    #[test]
    fn the_pool_only_holds_one_chunk() {
        let mut s = event(10_000_000);
        assert!(s.pool.is_empty());
        claim(&mut s, "e", "a", 2, 1024).unwrap();
        assert_eq!(s.pool.len(), 1023);
        assert_eq!(s.meta.as_ref().unwrap().minted, 1024);
        assert_eq!(report(&mut s, "e").unwrap().remaining, 9_999_999);
    }

    #[test]
    fn windows_and_status_gate_new_claims_but_not_repeats() {
        let mut s = MemoryStore::default();
        init(&mut s, "e", 5, 100, 200, 1).unwrap();
        assert!(matches!(
            claim(&mut s, "e", "a", 99, 8),
            Err(TicketError::NotOpen { opens_at: 100, .. })
        ));
        assert_eq!(claim(&mut s, "e", "a", 100, 8), Ok(Claim::New(1)));
        assert_eq!(
            claim(&mut s, "e", "b", 200, 8),
            Err(TicketError::Closed("e".into()))
        );
        assert_eq!(claim(&mut s, "e", "a", 300, 8), Ok(Claim::Repeat(1)));
        let mut s = event(5);
        set_status(&mut s, "e", Status::Closed, 2).unwrap();
        set_status(&mut s, "e", Status::Closed, 2).unwrap();
        assert_eq!(
            claim(&mut s, "e", "a", 3, 8),
            Err(TicketError::Closed("e".into()))
        );
        set_status(&mut s, "e", Status::Open, 4).unwrap();
        assert_eq!(claim(&mut s, "e", "a", 5, 8), Ok(Claim::New(1)));
        let ops: Vec<_> = s.log.iter().map(|(_, r)| r.op.name()).collect();
        assert_eq!(ops, ["init", "close", "open", "claim"]);
    }

    #[test]
    fn errors_change_nothing() {
        let mut s = event(1);
        claim(&mut s, "e", "a", 2, 8).unwrap();
        let before = format!("{s:?}");
        assert!(claim(&mut s, "e", "b", 2, 8).is_err());
        assert!(init(&mut s, "e", 5, 0, 0, 3).is_err());
        assert!(drop_event(&mut s, "e", false).is_err());
        assert_eq!(before, format!("{s:?}"));
    }

    #[test]
    fn keys_that_disagree_refuse_writes_and_change_nothing() {
        let mut s = event(10);
        for u in ["a", "b", "c"] {
            claim(&mut s, "e", u, 2, 1).unwrap();
        }
        // As if a slot migration had moved the meta hash but not the holders.
        s.holders.remove("b");
        let before = format!("{s:?}");
        let again = Err(TicketError::TryAgain("e".into()));
        assert_eq!(claim(&mut s, "e", "d", 3, 1), again.clone().map(Claim::New));
        assert_eq!(cancel(&mut s, "e", "a", 3), again.map(Some));
        assert_eq!(before, format!("{s:?}"));
    }

    #[test]
    fn unknown_event() {
        let mut s = MemoryStore::default();
        let no = Err(TicketError::NoEvent("e".into()));
        assert_eq!(claim(&mut s, "e", "a", 1, 8), no.clone().map(Claim::New));
        assert_eq!(cancel(&mut s, "e", "a", 1), no.clone().map(Some));
        assert_eq!(holder(&mut s, "e", "a"), no.clone().map(Some));
        assert_eq!(
            set_status(&mut s, "e", Status::Open, 1),
            no.clone().map(|_: i64| ())
        );
        assert_eq!(drop_event(&mut s, "e", false), Ok(0));
    }

    #[test]
    fn drop_waits_for_the_log_unless_forced() {
        let mut s = event(5);
        assert_eq!(
            drop_event(&mut s, "e", false),
            Err(TicketError::Unsynced {
                event: "e".into(),
                entries: 1
            })
        );
        s.log.clear();
        assert_eq!(drop_event(&mut s, "e", false), Ok(1));
        let mut s = event(5);
        claim(&mut s, "e", "a", 2, 8).unwrap();
        assert_eq!(drop_event(&mut s, "e", true), Ok(4));
        assert!(s.meta.is_none());
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
        fn holder(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
            match self.pool {
                true => self.inner.holder(user),
                false => Err(self.wrong()),
            }
        }
        fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
            match self.pool {
                true => Err(self.wrong()),
                false => self.inner.lowest_free(),
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
        fn take_free(&mut self, ticket: i64) {
            self.inner.take_free(ticket)
        }
        fn add_free(&mut self, tickets: RangeInclusive<i64>) {
            self.inner.add_free(tickets)
        }
        fn set_holder(&mut self, user: &str, ticket: i64) {
            self.inner.set_holder(user, ticket)
        }
        fn remove_holder(&mut self, user: &str) {
            self.inner.remove_holder(user)
        }
        fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId {
            self.inner.append(record, id)
        }
        fn delete_all(&mut self) -> i64 {
            self.inner.delete_all()
        }
        fn replicate(&mut self, effect: &Effect<&str>) {
            self.inner.replicate(effect)
        }
    }

    #[test]
    fn drop_type_checks_pool_and_holders_even_when_meta_exists() {
        for pool in [true, false] {
            let mut inner = event(5);
            claim(&mut inner, "e", "a", 2, 8).unwrap();
            let mut s = Clobbered { inner, pool };
            for force in [false, true] {
                assert!(
                    matches!(
                        drop_event(&mut s, "e", force),
                        Err(TicketError::WrongType { .. })
                    ),
                    "pool={pool} force={force}"
                );
                assert!(s.inner.meta.is_some(), "nothing may be deleted");
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Action {
        Claim(u8),
        Cancel(u8),
        Close,
        Open,
    }

    fn action() -> impl Strategy<Value = Action> {
        prop_oneof![
            6 => (0u8..40).prop_map(Action::Claim),
            2 => (0u8..40).prop_map(Action::Cancel),
            1 => Just(Action::Close),
            1 => Just(Action::Open),
        ]
    }

    /// The simple model: a set of free numbers 1..=total and a holder map.
    #[derive(Default)]
    struct Model {
        free: BTreeSet<i64>,
        holders: HashMap<String, i64>,
        open: bool,
    }

    proptest! {
        #[test]
        fn pool_matches_the_model(total in 1i64..30, chunk in 1i64..8, actions in proptest::collection::vec(action(), 0..120)) {
            let mut s = event(total);
            let mut m = Model { free: (1..=total).collect(), open: true, ..Model::default() };
            for a in actions {
                match a {
                    Action::Claim(u) => {
                        let user = format!("u{u}");
                        let got = claim(&mut s, "e", &user, 5, chunk);
                        let want = match m.holders.get(&user) {
                            Some(&t) => Ok(Claim::Repeat(t)),
                            None if !m.open => Err(TicketError::Closed("e".into())),
                            None => match m.free.pop_first() {
                                Some(t) => { m.holders.insert(user.clone(), t); Ok(Claim::New(t)) }
                                None => Err(TicketError::SoldOut("e".into())),
                            },
                        };
                        prop_assert_eq!(got, want);
                    }
                    Action::Cancel(u) => {
                        let user = format!("u{u}");
                        let want = m.holders.remove(&user);
                        if let Some(t) = want { m.free.insert(t); }
                        prop_assert_eq!(cancel(&mut s, "e", &user, 5), Ok(want));
                    }
                    Action::Close => { set_status(&mut s, "e", Status::Closed, 5).unwrap(); m.open = false; }
                    Action::Open => { set_status(&mut s, "e", Status::Open, 5).unwrap(); m.open = true; }
                }
                // Invariants after every step.
                let held: BTreeSet<i64> = s.holders.values().copied().collect();
                prop_assert_eq!(held.len(), s.holders.len(), "a number is held twice");
                prop_assert!(s.holders.len() as i64 <= total);
                prop_assert!(held.iter().all(|t| (1..=total).contains(t)));
                prop_assert!(held.is_disjoint(&s.pool));
                let r = report(&mut s, "e").unwrap();
                prop_assert_eq!(r.remaining + r.claimed, total);
                prop_assert!(s.pool.len() as i64 <= chunk.max(1) + 40, "the pool stays near one chunk");
            }
            // The log replays to the holders.
            let mut replay: HashMap<String, i64> = HashMap::new();
            for (_, r) in &s.log {
                match &r.op {
                    Op::Claim { user, tickets: Tickets::One(ticket) } => { prop_assert!(replay.insert(user.clone(), *ticket).is_none()); }
                    Op::Cancel { user, tickets: Tickets::One(ticket) } => { prop_assert_eq!(replay.remove(user), Some(*ticket)); }
                    _ => {}
                }
            }
            prop_assert_eq!(replay, s.holders.clone());
            // A replica that applies the effects reaches the same state.
            let mut replica = MemoryStore::default();
            for effect in &s.effects {
                apply::apply(&mut replica, &effect.borrowed());
            }
            prop_assert_eq!(format!("{:?}", (&replica.meta, &replica.pool, &replica.log)), format!("{:?}", (&s.meta, &s.pool, &s.log)));
            prop_assert_eq!(&replica.holders, &s.holders);
        }
    }
}
