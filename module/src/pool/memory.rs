//! An in-memory [`Store`] for the unit and property tests: one event, plain
//! collections. Compiled only for tests, never into the shipped module.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ops::RangeInclusive;

use protocol::effect::Effect;
use protocol::record::{Op, Record, Tickets};
use protocol::seats::{Layout, Seat, SeatState};
use protocol::StreamId;

use super::effects::Effects;
use super::model::{Meta, Staging};
use super::store::{After, MetaWrite, Part, Scope, Set, Store};
use crate::error::TicketError;

#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    pub meta: Option<Meta>,
    pub pool: BTreeSet<i64>,
    pub holders: HashMap<String, Tickets>,
    /// Held orders: user -> deadline.
    pub holds: BTreeMap<String, i64>,
    pub log: Vec<(StreamId, Record)>,
    /// The effects committed, in order (what the primary replicates).
    pub effects: Vec<Effect>,
    /// The waiting list: user -> place.
    pub waiting: BTreeMap<String, i64>,
    /// A draw's entrants wanting more than one ticket: user -> count.
    pub wants: BTreeMap<String, i64>,
    /// The users announced as offered, in order (not replicated state).
    pub offered: Vec<String>,
    /// Whether the log key exists (an emptied stream still does).
    pub log_key: bool,
    /// The id of the log's last entry ever (its `last-generated-id`).
    pub last_id: Option<StreamId>,
    /// The staging fields of a restore in progress.
    pub staging: Option<Staging>,
    /// The note of answers: field -> value.
    pub note: BTreeMap<String, String>,
    /// A seated event's stored layout, parsed layout and seat state.
    pub seating: Option<(String, Layout, SeatState)>,
    /// The allocations hash: field -> value.
    pub alloc: BTreeMap<String, String>,
    /// The hashes after the sale: (hash, ticket) -> value.
    pub after: BTreeMap<(After, i64), String>,
}

impl MemoryStore {
    /// The waiting list in FIFO order.
    pub fn waiting_order(&self) -> Vec<(String, i64)> {
        sorted(&self.waiting)
    }

    /// What the command layer's commit step does with a command's effects,
    /// as far as tests see it: keeps them and the users offered tickets.
    pub fn commit(&mut self, out: &Effects<'_>) {
        for effect in out.iter() {
            let effect = effect.borrowed();
            if let Effect::Append { record, .. } = &effect {
                if let Op::Offer { user, .. } = &record.op {
                    self.offered.push((*user).to_owned());
                }
            }
            self.effects.push(effect.owned());
        }
    }

    fn set(&mut self, set: Set) -> &mut BTreeMap<String, i64> {
        match set {
            Set::Holds => &mut self.holds,
            Set::Waiting => &mut self.waiting,
        }
    }

    fn meta_mut(&mut self) -> Option<&mut Meta> {
        self.meta.as_mut()
    }
}

/// Members by (score, member), lowest first.
fn sorted(set: &BTreeMap<String, i64>) -> Vec<(String, i64)> {
    let mut list: Vec<(String, i64)> = set.iter().map(|(u, p)| (u.clone(), *p)).collect();
    list.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
    list
}

impl Store for MemoryStore {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        Ok(self.meta.clone())
    }
    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        Ok(self.staging)
    }
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        Ok(self.holders.get(user).cloned())
    }
    fn score(&mut self, set: Set, user: &str) -> Result<Option<i64>, TicketError> {
        Ok(self.set(set).get(user).copied())
    }
    fn lowest(
        &mut self,
        set: Set,
        highest: i64,
        max: usize,
    ) -> Result<Vec<(String, i64)>, TicketError> {
        let list = sorted(self.set(set)).into_iter();
        Ok(list.filter(|(_, s)| *s <= highest).take(max).collect())
    }
    fn wants(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        Ok(self.wants.get(user).copied())
    }
    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        let order = self.waiting_order();
        Ok(order.iter().position(|(u, _)| u == user).map(|r| r as i64))
    }
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        Ok(self.pool.first().copied())
    }
    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        Ok(self.pool.iter().take(n).copied().collect())
    }
    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        match &self.seating {
            Some((_, _, state)) => Ok(state.is_free(u32::try_from(ticket).unwrap_or(0))),
            None => Ok(self.pool.contains(&ticket)),
        }
    }
    fn seating<T>(
        &mut self,
        f: impl FnOnce(&Layout, &SeatState) -> T,
    ) -> Result<Option<T>, TicketError> {
        Ok(self.seating.as_ref().map(|(_, l, s)| f(l, s)))
    }
    fn layout_json(&mut self) -> Result<Option<String>, TicketError> {
        Ok(self.seating.as_ref().map(|(json, _, _)| json.clone()))
    }
    fn create_seating(&mut self, layout: &str) {
        if let Ok(parsed) = Layout::parse(layout) {
            let state = SeatState::new(&parsed);
            self.seating = Some((layout.to_owned(), parsed, state));
        }
    }
    fn set_seats(&mut self, ids: &[i64], seat: Seat) {
        if let Some((_, layout, state)) = &mut self.seating {
            let ids: Vec<u32> = ids.iter().map(|id| *id as u32).collect();
            state.set(layout, &ids, seat);
        }
    }
    fn len(&mut self, part: Part) -> Result<i64, TicketError> {
        Ok(match part {
            Part::Meta => i64::from(self.meta.is_some()),
            Part::Pool => self.pool.len() as i64,
            Part::Holders => self.holders.len() as i64,
            Part::Log => self.log.len() as i64,
            Part::Holds => self.holds.len() as i64,
            Part::Waiting => self.waiting.len() as i64,
            Part::Wants => self.wants.len() as i64,
            Part::Seats => self
                .seating
                .as_ref()
                .map_or(0, |s| s.2.packed().len() as i64),
        })
    }
    fn exists(&mut self, part: Part) -> Result<bool, TicketError> {
        Ok(match part {
            Part::Log => self.log_key,
            part => self.len(part)? > 0,
        })
    }
    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        Ok(self.last_id.filter(|_| self.log_key))
    }
    fn log_since(
        &mut self,
        since: StreamId,
        max: usize,
    ) -> Result<Option<Vec<Record>>, TicketError> {
        let later: Vec<Record> = self
            .log
            .iter()
            .filter(|(id, _)| *id > since)
            .map(|(_, r)| r.clone())
            .collect();
        Ok((later.len() <= max).then_some(later))
    }
    fn note_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        Ok(self.note.get(field).cloned())
    }
    fn note_len(&mut self) -> Result<i64, TicketError> {
        Ok(self.note.len() as i64)
    }

    fn alloc_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        Ok(self.alloc.get(field).cloned())
    }
    fn alloc_fields(&mut self) -> Result<Vec<(String, String)>, TicketError> {
        Ok(self.alloc.clone().into_iter().collect())
    }
    fn set_alloc_field(&mut self, field: &str, value: Option<&str>) {
        match value {
            Some(v) => self.alloc.insert(field.to_owned(), v.to_owned()),
            None => self.alloc.remove(field),
        };
    }

    fn write_meta(&mut self, write: MetaWrite<'_>) {
        if let MetaWrite::Create { meta, .. } = write {
            self.meta = Some(meta.clone());
        }
        match write {
            MetaWrite::Staging(staging) => self.staging = Some(*staging),
            MetaWrite::AddStagedSum(sum) => {
                if let Some(staging) = &mut self.staging {
                    staging.sum += sum;
                }
            }
            MetaWrite::ClearStaging => self.staging = None,
            _ => {}
        }
        let Some(meta) = self.meta_mut() else {
            return;
        };
        match write {
            MetaWrite::Status(status) => meta.status = status,
            MetaWrite::Minted(minted) => meta.minted = minted,
            MetaWrite::AddCounts { held, extra } => {
                meta.held += held;
                meta.extra += extra;
            }
            MetaWrite::RaiseWaitSeq(seq) => meta.waitseq = meta.waitseq.max(seq),
            MetaWrite::Staging(_) => (meta.held, meta.extra, meta.waitseq) = (0, 0, 0),
            MetaWrite::Drawn(at) => {
                if let Some(draw) = meta.draw.as_mut() {
                    (draw.drawn_at, draw.admit_second, draw.admit_used) = (Some(at), 0, 0);
                }
            }
            MetaWrite::Admitted { second, used } => {
                if let Some(draw) = meta.draw.as_mut() {
                    (draw.admit_second, draw.admit_used) = (second, used);
                }
            }
            MetaWrite::Allocs(allocs) => meta.allocs = allocs,
            MetaWrite::AddListed(n) => meta.listed = (i64::from(meta.listed) + n).max(0) as u32,
            _ => {}
        }
    }
    fn set_holder(&mut self, user: &str, tickets: Option<&Tickets>) {
        match tickets {
            Some(tickets) => self.holders.insert(user.to_owned(), tickets.clone()),
            None => self.holders.remove(user),
        };
    }
    fn set_score(&mut self, set: Set, user: &str, score: Option<i64>) -> bool {
        match score {
            Some(score) => {
                self.set(set).insert(user.to_owned(), score);
                true
            }
            None => self.set(set).remove(user).is_some(),
        }
    }
    fn set_wants(&mut self, user: &str, count: Option<i64>) {
        match count {
            Some(count) => self.wants.insert(user.to_owned(), count),
            None => self.wants.remove(user),
        };
    }
    fn set_free(&mut self, numbers: RangeInclusive<i64>, free: bool) {
        match free {
            true => self.pool.extend(numbers),
            false => numbers.for_each(|n| {
                self.pool.remove(&n);
            }),
        }
    }
    fn append<U: AsRef<str>>(&mut self, record: &Record<U>, id: Option<StreamId>) -> StreamId {
        let id = id.unwrap_or_else(|| {
            let after = self.last_id.and_then(StreamId::next);
            after.unwrap_or(StreamId::new(1, 1))
        });
        if self.last_id.is_some_and(|last| id <= last) {
            // What Redis refuses (a replica whose log differs).
            return id;
        }
        self.log.push((id, record.borrowed().owned()));
        self.log_key = true;
        self.last_id = Some(id);
        id
    }
    fn after_field(&mut self, hash: After, ticket: i64) -> Result<Option<String>, TicketError> {
        Ok(self.after.get(&(hash, ticket)).cloned())
    }
    fn after_fields(&mut self, hash: After) -> Result<Vec<(i64, String)>, TicketError> {
        let range = self.after.range((hash, i64::MIN)..=(hash, i64::MAX));
        Ok(range.map(|((_, t), v)| (*t, v.clone())).collect())
    }
    fn set_after_field(&mut self, hash: After, ticket: i64, value: Option<&str>) {
        let key = (hash, ticket);
        match value {
            Some(v) => self.after.insert(key, v.to_owned()),
            None => self.after.remove(&key),
        };
    }
    fn note_add(&mut self, fields: &[String]) {
        self.note.remove(protocol::keys::ANSWERED_CLOSED);
        for f in fields {
            self.note.insert(f.clone(), "1".to_owned());
        }
    }
    fn note_close(&mut self, term: i64) {
        self.note.clear();
        if term != 0 {
            self.note
                .insert(protocol::keys::ANSWERED_CLOSED.to_owned(), term.to_string());
        }
    }

    fn delete(&mut self, scope: Scope) -> i64 {
        match scope {
            Scope::State => self.delete_state(),
            Scope::Log => {
                let existed = self.log_key;
                self.log.clear();
                self.log_key = false;
                self.last_id = None;
                i64::from(existed)
            }
        }
    }
}

impl MemoryStore {
    fn delete_state(&mut self) -> i64 {
        let existed = [
            self.meta.take().is_some(),
            !std::mem::take(&mut self.pool).is_empty(),
            !std::mem::take(&mut self.holders).is_empty(),
            !std::mem::take(&mut self.holds).is_empty(),
            !std::mem::take(&mut self.waiting).is_empty(),
            !std::mem::take(&mut self.wants).is_empty(),
            self.seating.take().is_some(),
        ];
        self.staging = None;
        self.note.clear();
        self.alloc.clear();
        self.after.clear();
        existed.iter().filter(|&&e| e).count() as i64
    }
}
