//! `TICKET.DROP`: it waits for the log unless forced, keeps the log as the
//! event's trace, and type-checks the pool and holders keys (through
//! [`Clobbered`], a store whose key holds the wrong type).

use std::ops::RangeInclusive;

use protocol::effect::Effect;
use protocol::record::{Op, Record, Tickets};

use super::*;
use crate::pool::store::{After, MetaWrite, Part, Scope, Set};

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

    /// Whether reading `part` fails.
    fn clobbered(&self, part: Part) -> bool {
        matches!(
            (part, self.pool),
            (Part::Pool, true) | (Part::Holders, false)
        )
    }
}

impl Committed for Clobbered {
    fn commit(&mut self, out: &Effects<'_>) {
        self.inner.commit(out)
    }
}

impl Store for Clobbered {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        self.inner.meta()
    }
    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        self.inner.staging()
    }
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        match self.clobbered(Part::Holders) {
            false => self.inner.holder(user),
            true => Err(self.wrong()),
        }
    }
    fn score(&mut self, set: Set, user: &str) -> Result<Option<i64>, TicketError> {
        self.inner.score(set, user)
    }
    fn lowest(
        &mut self,
        set: Set,
        highest: i64,
        max: usize,
    ) -> Result<Vec<(String, i64)>, TicketError> {
        self.inner.lowest(set, highest, max)
    }
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.inner.waiting_rank(user)
    }
    fn wants(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.inner.wants(user)
    }
    fn alloc_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        self.inner.alloc_field(field)
    }
    fn alloc_fields(&mut self) -> Result<Vec<(String, String)>, TicketError> {
        self.inner.alloc_fields()
    }
    fn after_field(&mut self, hash: After, ticket: i64) -> Result<Option<String>, TicketError> {
        self.inner.after_field(hash, ticket)
    }
    fn set_after_field(&mut self, hash: After, ticket: i64, value: Option<&str>) {
        self.inner.set_after_field(hash, ticket, value)
    }
    fn after_fields(&mut self, hash: After) -> Result<Vec<(i64, String)>, TicketError> {
        self.inner.after_fields(hash)
    }
    fn set_alloc_field(&mut self, field: &str, value: Option<&str>) {
        self.inner.set_alloc_field(field, value)
    }
    fn set_wants(&mut self, user: &str, count: Option<i64>) {
        self.inner.set_wants(user, count)
    }
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        match self.clobbered(Part::Pool) {
            true => Err(self.wrong()),
            false => self.inner.lowest_free(),
        }
    }
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        match self.clobbered(Part::Pool) {
            true => Err(self.wrong()),
            false => self.inner.lowest_free_n(n),
        }
    }
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        self.inner.is_free(ticket)
    }
    fn seating<T>(
        &mut self,
        f: impl FnOnce(&protocol::seats::Layout, &protocol::seats::SeatState) -> T,
    ) -> Result<Option<T>, TicketError> {
        self.inner.seating(f)
    }
    fn layout_json(&mut self) -> Result<Option<String>, TicketError> {
        self.inner.layout_json()
    }
    fn create_seating(&mut self, layout: &str) {
        self.inner.create_seating(layout)
    }
    fn set_seats(&mut self, ids: &[i64], seat: protocol::seats::Seat) {
        self.inner.set_seats(ids, seat)
    }
    fn len(&mut self, part: Part) -> Result<i64, TicketError> {
        match self.clobbered(part) {
            true => Err(self.wrong()),
            false => self.inner.len(part),
        }
    }
    fn exists(&mut self, part: Part) -> Result<bool, TicketError> {
        match self.clobbered(part) {
            true => Err(self.wrong()),
            false => self.inner.exists(part),
        }
    }
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        self.inner.last_log_id()
    }
    fn log_since(
        &mut self,
        since: StreamId,
        max: usize,
    ) -> Result<Option<Vec<protocol::record::Record>>, TicketError> {
        self.inner.log_since(since, max)
    }
    fn note_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        self.inner.note_field(field)
    }
    fn note_len(&mut self) -> Result<i64, TicketError> {
        self.inner.note_len()
    }
    fn write_meta(&mut self, write: MetaWrite<'_>) {
        self.inner.write_meta(write)
    }
    fn set_holder(&mut self, user: &str, tickets: Option<&Tickets>) {
        self.inner.set_holder(user, tickets)
    }
    fn set_score(&mut self, set: Set, user: &str, score: Option<i64>) -> bool {
        self.inner.set_score(set, user, score)
    }
    fn set_free(&mut self, numbers: RangeInclusive<i64>, free: bool) {
        self.inner.set_free(numbers, free)
    }
    fn append<U: AsRef<str>>(&mut self, record: &Record<U>, id: Option<StreamId>) -> StreamId {
        self.inner.append(record, id)
    }
    fn delete(&mut self, scope: Scope) -> i64 {
        self.inner.delete(scope)
    }
    fn note_add(&mut self, fields: &[String]) {
        self.inner.note_add(fields)
    }
    fn note_close(&mut self, term: i64) {
        self.inner.note_close(term)
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
