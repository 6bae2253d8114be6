//! The heal planner against a model: whole unplanned failovers (random
//! histories, a replica cut at a random point, the new primary's own writes
//! with colliding ids, writes racing the heal, refusals by the module, a
//! heal that died after re-applying) and further failovers after a heal.
//! After each heal, MySQL's model must equal the new primary's model
//! exactly, with no conflict, and every lost write must be re-applied or
//! undone. The event is a draw event too: entrants enter and leave, the
//! draw is made once (the seed is the init's, so every primary reveals the
//! same one), and MySQL's queue steps must leave the same entrants and the
//! same draw as the new primary. Sellers list and unlist their sold
//! tickets (resale without buyers: the model's claims take free tickets
//! only), and MySQL's listings must be the new primary's.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;

use super::*;
use protocol::record::{Record, Tickets};

const USERS: u8 = 4;
const TICKETS: i64 = 5;

/// The module's state of one event (every number minted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Redis {
    /// user -> (tickets, held)
    holders: BTreeMap<String, (Vec<i64>, bool)>,
    closed: bool,
    /// Entrants of the draw still waiting.
    entrants: BTreeSet<String>,
    drawn: bool,
    /// Listed ticket -> seller.
    listed: BTreeMap<i64, String>,
}

/// The model's seed (the init's: the same on every primary).
const SEED: [u8; 32] = [7; 32];

impl Redis {
    fn free(&self) -> Vec<i64> {
        let out: Vec<i64> = self.holders.values().flat_map(|(t, _)| t.clone()).collect();
        (1..=TICKETS).filter(|t| !out.contains(t)).collect()
    }

    fn apply(&mut self, r: &Record) {
        match &r.op {
            Op::Claim { user, tickets, .. } => {
                self.holders
                    .insert(user.clone(), (tickets.as_slice().to_vec(), false));
            }
            Op::Hold { user, tickets, .. } | Op::Offer { user, tickets, .. } => {
                self.holders
                    .insert(user.clone(), (tickets.as_slice().to_vec(), true));
            }
            Op::Confirm { user, .. } => {
                if let Some(h) = self.holders.get_mut(user) {
                    h.1 = false;
                }
            }
            Op::Cancel { user, .. } | Op::Expire { user, .. } => {
                self.holders.remove(user);
            }
            Op::Resell { user, tickets } => {
                for t in tickets.as_slice() {
                    self.listed.insert(*t, user.clone());
                }
            }
            Op::Unlist { tickets, .. } => {
                for t in tickets.as_slice() {
                    self.listed.remove(t);
                }
            }
            Op::Open => self.closed = false,
            Op::Close => self.closed = true,
            Op::Enter { user, .. } => {
                self.entrants.insert(user.clone());
            }
            Op::Leave { user } => {
                self.entrants.remove(user);
            }
            Op::Draw { .. } => self.drawn = true,
            _ => {}
        }
    }

    /// The module's own decision for a command: the record it logs.
    fn command(&self, choice: u8, user: u8, at: i64) -> Option<Record> {
        let user = format!("u{user}");
        let held = self.holders.get(&user).cloned();
        let op = match (choice % 11, held) {
            (0 | 1, None) if !self.closed => {
                let t = *self.free().first()?;
                let tickets = Tickets::One(t);
                match choice % 2 {
                    0 => Op::Claim {
                        from: None,
                        pick: None,
                        user,
                        tickets,
                    },
                    _ => Op::Hold {
                        from: None,
                        pick: None,
                        user,
                        tickets,
                        until: at + 10,
                    },
                }
            }
            (2, Some((t, true))) => Op::Confirm {
                user,
                tickets: Tickets::from_sorted(t),
            },
            (3, Some((t, true))) => Op::Expire {
                from: None,
                user,
                tickets: Tickets::from_sorted(t),
            },
            (4, Some((t, _))) if self.listed_of(&user).is_empty() => Op::Cancel {
                from: None,
                user,
                tickets: Tickets::from_sorted(t),
            },
            (5, _) => match self.closed {
                true => Op::Open,
                false => Op::Close,
            },
            (6, None) if !self.drawn && !self.entrants.contains(&user) => Op::Enter {
                user,
                count: 1,
                rank: None,
            },
            (7, _) if self.entrants.contains(&user) => Op::Leave { user },
            (8, _) if !self.drawn => Op::Draw { seed: SEED },
            (9, Some((t, false))) if self.listed_of(&user).is_empty() => Op::Resell {
                user,
                tickets: Tickets::from_sorted(t),
            },
            (10, _) if !self.listed_of(&user).is_empty() => Op::Unlist {
                tickets: Tickets::from_sorted(self.listed_of(&user)),
                user,
            },
            _ => return None,
        };
        Some(Record { op, at })
    }

    /// The tickets `user` lists, ascending.
    fn listed_of(&self, user: &str) -> Vec<i64> {
        let mine = self.listed.iter().filter(|(_, s)| *s == user);
        mine.map(|(t, _)| *t).collect()
    }

    /// `TICKET.REAPPLY`'s condition (module/src/reapply.rs).
    fn may_reapply(&self, r: &Record) -> bool {
        let holds = |u: &String, t: &Tickets| {
            self.holders.get(u).map(|h| (h.0.as_slice(), h.1)) == Some((t.as_slice(), true))
        };
        match &r.op {
            Op::Claim { user, tickets, .. }
            | Op::Hold { user, tickets, .. }
            | Op::Offer { user, tickets, .. } => {
                !self.holders.contains_key(user)
                    && tickets.as_slice().iter().all(|t| self.free().contains(t))
            }
            Op::Confirm { user, tickets }
            | Op::Expire {
                from: _,
                user,
                tickets,
            } => holds(user, tickets),
            Op::Cancel {
                from: _,
                user,
                tickets,
            } => {
                self.holders.get(user).map(|h| h.0.as_slice()) == Some(tickets.as_slice())
                    && self.listed_of(user).is_empty()
            }
            // resale::resell_checked and unlist_checked: sold, not listed;
            // listed by the seller
            Op::Resell { user, tickets } => {
                let sold = self.holders.get(user).filter(|h| !h.1);
                tickets
                    .as_slice()
                    .iter()
                    .all(|t| sold.is_some_and(|h| h.0.contains(t)) && !self.listed.contains_key(t))
            }
            Op::Unlist { user, tickets } => tickets
                .as_slice()
                .iter()
                .all(|t| self.listed.get(t) == Some(user)),
            Op::Open | Op::Close => true,
            // module/src/pool/reapply.rs: enter only before the draw, by a
            // user who neither waits nor holds; leave only by an entrant
            // still waiting; the draw only once, with the stored seed.
            Op::Enter { user, .. } => {
                !self.drawn && !self.entrants.contains(user) && !self.holders.contains_key(user)
            }
            Op::Leave { user } => self.entrants.contains(user),
            Op::Draw { seed } => !self.drawn && *seed == SEED,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowStatus {
    Held,
    Active,
    Cancelled,
    Expired,
    Lost,
}

#[derive(Debug, Clone)]
struct Row {
    order: StreamId,
    user: String,
    ticket: i64,
    status: RowStatus,
    stream: StreamId,
    held_until: bool,
    confirmed: bool,
}

impl Row {
    fn live(&self) -> bool {
        matches!(self.status, RowStatus::Held | RowStatus::Active)
    }
}

/// MySQL's rows of the event, written as the sidecar's slow path does.
#[derive(Debug, Clone)]
struct Mysql {
    rows: Vec<Row>,
    stock: i64,
    closed: bool,
    conflicts: usize,
    /// ticket_draw_step: (id, op, lost).
    steps: Vec<(StreamId, Op, bool)>,
    /// ticket_event.draw_stream_id (the seed stored).
    drawn: Option<StreamId>,
    listings: Vec<Listing>,
}

/// A `ticket_listing` row.
#[derive(Debug, Clone)]
struct Listing {
    ticket: i64,
    seller: String,
    /// state = 'listed'
    live: bool,
    listed_by: StreamId,
    ended_by: Option<StreamId>,
    lost: bool,
}

impl Mysql {
    fn new() -> Mysql {
        Mysql {
            rows: Vec::new(),
            stock: TICKETS,
            closed: false,
            conflicts: 0,
            steps: Vec::new(),
            drawn: None,
            listings: Vec::new(),
        }
    }

    fn write(&mut self, e: &Logged) {
        let Some(r) = &e.rec else {
            self.conflicts += 1;
            return;
        };
        match &r.op {
            Op::Claim { user, tickets, .. }
            | Op::Hold { user, tickets, .. }
            | Op::Offer { user, tickets, .. } => {
                let taken = self.rows.iter().any(|w| {
                    w.live() && (&w.user == user || tickets.as_slice().contains(&w.ticket))
                });
                if taken {
                    self.conflicts += 1;
                    return;
                }
                let held = !matches!(r.op, Op::Claim { .. });
                for t in tickets.as_slice() {
                    self.rows.push(Row {
                        order: e.id,
                        user: user.clone(),
                        ticket: *t,
                        status: if held {
                            RowStatus::Held
                        } else {
                            RowStatus::Active
                        },
                        stream: e.id,
                        held_until: held,
                        confirmed: false,
                    });
                }
                self.stock -= tickets.as_slice().len() as i64;
            }
            Op::Open => self.closed = false,
            Op::Close => self.closed = true,
            Op::Enter { .. } | Op::Leave { .. } | Op::Draw { .. } => self.step(e.id, &r.op),
            Op::Resell { user, tickets } => self.resell(e.id, user, tickets.as_slice()),
            Op::Unlist { user, tickets } => self.unlist(e.id, user, tickets.as_slice()),
            op => self.change(e.id, op),
        }
    }

    /// `batch::resale`'s resell: the seller's sold rows, none listed.
    fn resell(&mut self, id: StreamId, seller: &str, tickets: &[i64]) {
        let sold = |t: &i64| {
            let row = |w: &&Row| w.live() && w.user == seller && w.ticket == *t;
            self.rows
                .iter()
                .find(row)
                .is_some_and(|w| w.status == RowStatus::Active)
        };
        let listed = |t: &i64| self.listings.iter().any(|l| l.live && l.ticket == *t);
        if !tickets.iter().all(|t| sold(t) && !listed(t)) {
            self.conflicts += 1;
            return;
        }
        for &ticket in tickets {
            self.listings.push(Listing {
                ticket,
                seller: seller.to_owned(),
                live: true,
                listed_by: id,
                ended_by: None,
                lost: false,
            });
        }
    }

    /// `batch::resale`'s unlist: every ticket on the seller's list.
    fn unlist(&mut self, id: StreamId, seller: &str, tickets: &[i64]) {
        let mine = |l: &Listing| l.live && l.seller == seller && tickets.contains(&l.ticket);
        if self.listings.iter().filter(|l| mine(l)).count() != tickets.len() {
            self.conflicts += 1;
            return;
        }
        for l in self.listings.iter_mut().filter(|l| mine(l)) {
            (l.live, l.ended_by) = (false, Some(id));
        }
    }

    /// A queue step, as `batch::queue` admits it: an enter only before the
    /// draw, the draw only once.
    fn step(&mut self, id: StreamId, op: &Op) {
        let refused = match op {
            Op::Enter { .. } => self.drawn.is_some(),
            Op::Draw { .. } => self.drawn.is_some(),
            _ => false,
        };
        if refused {
            self.conflicts += 1;
            return;
        }
        if let Op::Draw { .. } = op {
            self.drawn = Some(id);
        }
        self.steps.push((id, op.clone(), false));
    }

    fn lose_step(&mut self, id: StreamId) {
        if let Some(s) = self.steps.iter_mut().find(|s| s.0 == id && !s.2) {
            s.2 = true;
        }
    }

    fn change(&mut self, id: StreamId, op: &Op) {
        let (Some(kind), Some((user, tickets, _))) = (ChangeKind::of(op), op.order()) else {
            return;
        };
        let live: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].live() && &self.rows[i].user == user)
            .collect();
        let mut got: Vec<i64> = live.iter().map(|&i| self.rows[i].ticket).collect();
        got.sort();
        let status_ok = live.iter().all(|&i| match kind {
            ChangeKind::Confirm | ChangeKind::Expire => self.rows[i].status == RowStatus::Held,
            ChangeKind::Cancel => true,
        });
        if live.is_empty() || got != tickets.as_slice() || !status_ok {
            self.conflicts += 1;
            return;
        }
        for &i in &live {
            let w = &mut self.rows[i];
            w.stream = id;
            match kind {
                ChangeKind::Confirm => (w.status, w.confirmed) = (RowStatus::Active, true),
                ChangeKind::Expire => w.status = RowStatus::Expired,
                ChangeKind::Cancel => w.status = RowStatus::Cancelled,
            }
        }
        if kind.releases() {
            self.stock += live.len() as i64;
        }
    }

    /// The SQL of `loss::heal::executor`, on the model.
    fn undo(&mut self, step: &Undo) {
        match step {
            // (the model's histories have no allocations, transfers, scans
            // or buyers of listed tickets)
            Undo::Move { .. } | Undo::Transfer { .. } | Undo::Scan { .. } | Undo::Resold { .. } => {
            }
            Undo::Resell { resell } => {
                for l in self.listings.iter_mut() {
                    if l.listed_by == *resell && !l.lost {
                        (l.live, l.lost) = (false, true);
                    }
                }
            }
            Undo::Unlist { unlist } => {
                for l in self.listings.iter_mut() {
                    if l.ended_by == Some(*unlist) && !l.live {
                        (l.live, l.ended_by) = (true, None);
                    }
                }
            }
            Undo::Order { order, .. } => {
                let mut n = 0;
                for w in self
                    .rows
                    .iter_mut()
                    .filter(|w| w.order == *order && w.live())
                {
                    w.status = RowStatus::Lost;
                    n += 1;
                }
                self.stock += n;
            }
            Undo::Change {
                change,
                kind,
                user,
                previous,
                ..
            } => {
                let target = match kind {
                    ChangeKind::Confirm => RowStatus::Active,
                    ChangeKind::Expire => RowStatus::Expired,
                    ChangeKind::Cancel => RowStatus::Cancelled,
                };
                let mut n = 0;
                for w in self
                    .rows
                    .iter_mut()
                    .filter(|w| &w.user == user && w.stream == *change && w.status == target)
                {
                    n += 1;
                    w.stream = previous.unwrap_or(w.order);
                    w.status = match kind {
                        ChangeKind::Confirm => RowStatus::Held,
                        _ if w.held_until && !w.confirmed => RowStatus::Held,
                        _ => RowStatus::Active,
                    };
                    if *kind == ChangeKind::Confirm {
                        w.confirmed = false;
                    }
                }
                if kind.releases() {
                    self.stock -= n;
                }
            }
            Undo::SetStatus { to } => self.closed = *to == "close",
            Undo::Step { step } => self.lose_step(*step),
            Undo::Draw { draw } => {
                if self.drawn == Some(*draw) {
                    self.drawn = None;
                }
                self.lose_step(*draw);
            }
        }
    }

    /// What Redis would hold if it were this MySQL.
    fn as_redis(&self) -> Redis {
        let mut holders: BTreeMap<String, (Vec<i64>, bool)> = BTreeMap::new();
        for w in self.rows.iter().filter(|w| w.live()) {
            let h = holders.entry(w.user.clone()).or_default();
            h.0.push(w.ticket);
            h.1 = w.status == RowStatus::Held;
        }
        holders.values_mut().for_each(|h| h.0.sort());
        let mut entrants = BTreeSet::new();
        for (_, op, _) in self.steps.iter().filter(|s| !s.2) {
            match op {
                Op::Enter { user, .. } => entrants.insert(user.clone()),
                Op::Leave { user } => entrants.remove(user),
                _ => false,
            };
        }
        let listed = self.listings.iter().filter(|l| l.live);
        Redis {
            holders,
            closed: self.closed,
            entrants,
            drawn: self.drawn.is_some(),
            listed: listed.map(|l| (l.ticket, l.seller.clone())).collect(),
        }
    }
}

fn logged(id: StreamId, r: Record) -> Logged {
    let entry = crate::model::Entry::new(id, Ok(r.clone()));
    Logged {
        id,
        text: crate::model::entry::text("e", &entry),
        rec: Some(r),
    }
}

fn anchor_of(e: &Logged) -> (StreamId, String) {
    (e.id, crate::model::entry::digest(&e.text))
}

fn replay(hist: &[Logged]) -> Redis {
    let mut r = Redis::default();
    hist.iter()
        .filter_map(|e| e.rec.as_ref())
        .for_each(|rec| r.apply(rec));
    r
}

/// Runs `cmds` on the primary whose history is `hist`, appending entries.
fn run(hist: &mut Vec<Logged>, cmds: &[(u8, u8)], clock: &mut i64) {
    let mut state = replay(hist);
    for &(choice, user) in cmds {
        *clock += 1;
        if let Some(rec) = state.command(choice, user % USERS, *clock) {
            let id = StreamId::new(hist.last().map_or(1, |e| e.id.ms + 1), 0);
            state.apply(&rec);
            hist.push(logged(id, rec));
        }
    }
}

/// One failover, in numbers drawn by proptest.
#[derive(Debug, Clone)]
struct Round {
    before: Vec<(u8, u8)>,
    written: usize,
    cut: usize,
    anchor: usize,
    after: Vec<(u8, u8)>,
    racing: Vec<(u8, u8)>,
    crashed: bool,
}

fn round() -> impl Strategy<Value = Round> {
    let cmds = || proptest::collection::vec((0u8..11, 0u8..8), 0..14);
    (
        cmds(),
        any::<usize>(),
        any::<usize>(),
        any::<usize>(),
        cmds(),
        cmds(),
        any::<bool>(),
    )
        .prop_map(
            |(before, written, cut, anchor, after, racing, crashed)| Round {
                before,
                written,
                cut,
                anchor,
                after,
                racing,
                crashed,
            },
        )
}

/// The world: the primary's full history, MySQL, its journal (a window of
/// what it wrote) and how much of the history MySQL wrote.
struct World {
    hist: Vec<Logged>,
    mysql: Mysql,
    journal: Vec<Logged>,
    written: usize,
    clock: i64,
    reapplied: usize,
    undone: usize,
    /// Lost resells and unlists re-applied, undone.
    resale: (usize, usize),
}

impl World {
    fn new() -> World {
        let mut w = World {
            hist: Vec::new(),
            mysql: Mysql::new(),
            journal: Vec::new(),
            written: 0,
            clock: 0,
            reapplied: 0,
            undone: 0,
            resale: (0, 0),
        };
        w.clock += 1;
        w.hist.push(logged(
            StreamId::new(1, 0),
            Record {
                op: Op::Open,
                at: 1,
            },
        ));
        w.mysql_to(1);
        w
    }

    /// MySQL writes the history up to `upto` the normal way.
    fn mysql_to(&mut self, upto: usize) {
        for e in &self.hist[self.written..upto] {
            self.mysql.write(e);
            self.journal.push(e.clone());
        }
        self.written = upto;
    }

    fn failover(&mut self, r: &Round) -> Result<(), TestCaseError> {
        run(&mut self.hist, &r.before, &mut self.clock);
        let written = self.written + r.written % (self.hist.len() - self.written + 1);
        self.mysql_to(written);
        prop_assert_eq!(self.mysql.conflicts, 0, "a plain drain conflicts");
        // The replica got a prefix of the history; the trims it got keep
        // its log starting at an entry MySQL wrote.
        let start = self.hist.len() - self.journal.len().min(self.hist.len());
        let first = self
            .hist
            .iter()
            .position(|e| e == &self.journal[0])
            .unwrap_or(start);
        let cut = first + 1 + r.cut % (self.hist.len() - first);
        let anchor = first + r.anchor % (cut.min(written) - first);
        let mut new_hist = self.hist[..cut].to_vec();
        run(&mut new_hist, &r.after, &mut self.clock);
        if r.crashed {
            // A heal that died after its TICKET.REAPPLYs, before MySQL
            // committed (a failover during the heal): its re-applications
            // stay in the new primary's log; the next heal must see them.
            let log: Vec<Logged> = new_hist[anchor + 1..].to_vec();
            let key = anchor_of(&new_hist[anchor]);
            let meet = place(&self.journal, (key.0, &key.1), &log).map_err(TestCaseError::fail)?;
            let lost = self.journal[meet.journal + 1..].to_vec();
            let fates = decide(&lost, &log[meet.log..]);
            self.execute(&lost, fates, &mut new_hist);
        }
        let log: Vec<Logged> = new_hist[anchor + 1..].to_vec();
        let key = anchor_of(&new_hist[anchor]);
        let meet = place(&self.journal, (key.0, &key.1), &log).map_err(TestCaseError::fail)?;
        let lost = self.journal[meet.journal + 1..].to_vec();
        let fates = decide(&lost, &log[meet.log..]);
        // Writes race the heal on the new primary.
        run(&mut new_hist, &r.racing, &mut self.clock);
        let fates = self.execute(&lost, fates, &mut new_hist);
        let steps = undo_steps(&lost, &fates, &self.journal[..=meet.journal]);
        steps.iter().for_each(|s| self.mysql.undo(s));
        let d = anchor + meet.log;
        for e in &new_hist[d + 1..] {
            self.mysql.write(e);
        }
        prop_assert_eq!(self.mysql.conflicts, 0, "heal conflicts; fates {:?}", fates);
        prop_assert_eq!(self.mysql.as_redis(), replay(&new_hist));
        let free = replay(&new_hist).free().len() as i64;
        prop_assert_eq!(self.mysql.stock, free);
        self.journal.truncate(meet.journal + 1);
        self.journal.extend(new_hist[d + 1..].iter().cloned());
        self.hist = new_hist;
        self.written = self.hist.len();
        Ok(())
    }

    /// The executor on the model: TICKET.REAPPLY in order; a refusal, or a
    /// lost write following a refused one, is undone.
    fn execute(&mut self, lost: &[Logged], fates: Vec<Fate>, hist: &mut Vec<Logged>) -> Vec<Fate> {
        let mut refused: Vec<Touch> = Vec::new();
        let mut out = Vec::new();
        for (l, fate) in lost.iter().zip(fates) {
            let fate = match (fate, &l.rec) {
                (Fate::Try, Some(rec)) => {
                    let mine = Touch::of(&rec.op);
                    let follows = refused.iter().any(|t| mine.shared(t).is_some());
                    if !follows && replay(hist).may_reapply(rec) {
                        let id = StreamId::new(hist.last().map_or(1, |e| e.id.ms + 1), 0);
                        hist.push(logged(id, rec.clone()));
                        Fate::Reapplied { by: id }
                    } else {
                        refused.push(mine);
                        Fate::Undo("refused".into())
                    }
                }
                (Fate::Undo(why), Some(rec)) => {
                    refused.push(Touch::of(&rec.op));
                    Fate::Undo(why)
                }
                (f, _) => f,
            };
            let resale = matches!(
                l.rec.as_ref().map(|r| &r.op),
                Some(Op::Resell { .. } | Op::Unlist { .. })
            );
            match fate {
                Fate::Reapplied { .. } => {
                    self.reapplied += 1;
                    self.resale.0 += usize::from(resale);
                }
                Fate::Undo(_) => {
                    self.undone += 1;
                    self.resale.1 += usize::from(resale);
                }
                _ => {}
            }
            out.push(fate);
        }
        out
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// One to three failovers in a row, each healed: MySQL equals the new
    /// primary, with no conflict, every time.
    #[test]
    fn healed_mysql_follows_the_new_primary(rounds in proptest::collection::vec(round(), 1..4)) {
        let mut w = World::new();
        for r in &rounds {
            w.failover(r)?;
        }
    }
}

#[test]
fn a_lost_claim_retaken_and_returned_on_the_new_primary_comes_back_in_order() {
    // u1 claimed 1 (lost); on the new primary u2 claims 1 and cancels it.
    let open = logged(
        StreamId::new(1, 0),
        Record {
            op: Op::Open,
            at: 1,
        },
    );
    let claim = |u: &str, at| Record {
        op: Op::Claim {
            from: None,
            pick: None,
            user: u.into(),
            tickets: Tickets::One(1),
        },
        at,
    };
    let lost = vec![logged(StreamId::new(2, 0), claim("u1", 2))];
    let cancel = Record {
        op: Op::Cancel {
            from: None,
            user: "u2".into(),
            tickets: Tickets::One(1),
        },
        at: 4,
    };
    let new = vec![
        logged(StreamId::new(2, 0), claim("u2", 3)),
        logged(StreamId::new(3, 0), cancel),
    ];
    let journal = [open.clone(), lost[0].clone()];
    let key = anchor_of(&open);
    let meet = place(&journal, (key.0, &key.1), &new).unwrap();
    assert_eq!(meet, Meet { journal: 0, log: 0 });
    let fates = decide(&lost, &new);
    assert!(
        matches!(&fates[0], Fate::Undo(why) if why.contains("ticket 1")),
        "{fates:?}"
    );
    // MySQL: u1's claim undone before u2's claim is written: no collision.
    let mut m = Mysql::new();
    m.write(&journal[0]);
    m.write(&journal[1]);
    for s in undo_steps(&lost, &fates, &journal[..1]) {
        m.undo(&s);
    }
    new.iter().for_each(|e| m.write(e));
    assert_eq!(m.conflicts, 0);
    assert_eq!(m.stock, TICKETS);
    assert!(m
        .rows
        .iter()
        .any(|r| r.user == "u1" && r.status == RowStatus::Lost));
}

#[test]
fn a_log_that_cannot_be_placed_is_refused() {
    let e = |ms, at| logged(StreamId::new(ms, 0), Record { op: Op::Open, at });
    let journal = [e(5, 1), e(6, 2), e(7, 3)];
    // the anchor's id is in the journal, but with other content
    let other = anchor_of(&e(5, 9));
    assert!(place(&journal, (other.0, &other.1), &[]).is_err());
    // an anchor older than the journal
    let old = anchor_of(&e(1, 0));
    assert!(place(&journal, (old.0, &old.1), &[e(5, 1)]).is_err());
    assert!(place(&[], (old.0, &old.1), &[]).is_err());
    // the common run ends where content differs, even with equal ids
    let key = anchor_of(&e(5, 1));
    let m = place(&journal, (key.0, &key.1), &[e(6, 2), e(7, 8)]).unwrap();
    assert_eq!(m, Meet { journal: 1, log: 1 });
}

#[test]
fn the_model_sees_both_outcomes_and_colliding_ids() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let (mut reapplied, mut undone, mut resale) = (0, 0, (0, 0));
    for _ in 0..300 {
        let rounds = proptest::collection::vec(round(), 1..4)
            .new_tree(&mut runner)
            .unwrap()
            .current();
        let mut w = World::new();
        for r in &rounds {
            w.failover(r).unwrap();
        }
        reapplied += w.reapplied;
        undone += w.undone;
        resale = (resale.0 + w.resale.0, resale.1 + w.resale.1);
    }
    assert!(
        reapplied > 50 && undone > 50,
        "reapplied {reapplied}, undone {undone}"
    );
    assert!(
        resale.0 > 20 && resale.1 > 20,
        "resells and unlists reapplied, undone: {resale:?}"
    );
}

#[test]
fn a_lost_seated_init_journaled_as_a_stand_in_is_unhealable() {
    use crate::model::entry::{self, MAX_TEXT_BYTES};
    let id = StreamId::new(9, 0);
    let init = crate::model::Entry::test_init(9, Some(MAX_TEXT_BYTES));
    let text = entry::text("e", &init);
    // as the heal reads it back from the journal: no record, only its op
    let lost = Logged {
        id,
        rec: entry::record_of("e", &text),
        text,
    };
    assert!(lost.rec.is_none());
    let fates = decide(&[lost], &[]);
    assert!(
        matches!(&fates[..], [Fate::Unhealable(why)] if why.contains("op=init 9-0")),
        "{fates:?}"
    );
}

/// A lost entry that moved allocated stock is undone, never re-applied,
/// and its undo puts the stock back where it came from: an allocate's
/// and a release's as a move, a claim `FROM` an allocation's into it.
#[test]
fn a_lost_allocation_move_is_undone() {
    let at = |ms| StreamId::new(ms, 0);
    let allocate = Record {
        op: Op::Allocate {
            name: "fan".into(),
            tickets: Tickets::from_sorted(vec![1, 2]),
            release: None,
            key: None,
        },
        at: 1,
    };
    let claim = Record {
        op: Op::Claim {
            from: Some("fan".into()),
            pick: None,
            user: "u1".into(),
            tickets: Tickets::One(1),
        },
        at: 2,
    };
    let public = Record {
        op: Op::Claim {
            from: None,
            pick: None,
            user: "u2".into(),
            tickets: Tickets::One(3),
        },
        at: 3,
    };
    let lost = [
        logged(at(1), allocate.clone()),
        logged(at(2), claim),
        logged(at(3), public),
    ];
    let fates = decide(&lost, &[]);
    for f in &fates[..2] {
        assert!(
            matches!(f, Fate::Undo(why) if why.contains("allocated stock")),
            "{fates:?}"
        );
    }
    assert_eq!(fates[2], Fate::Try);
    let steps = undo_steps(&lost, &fates, &[]);
    let fan = Allocated {
        name: "fan".into(),
        tickets: vec![1],
    };
    assert_eq!(
        steps,
        vec![
            Undo::Order {
                order: at(3),
                from: None
            },
            Undo::Order {
                order: at(2),
                from: Some(fan)
            },
            Undo::Move {
                step: at(1),
                op: allocate.op
            },
        ]
    );
}

/// A lost public claim of tickets a lost, undone release had given back
/// is undone too: it follows a write that could not be re-applied.
#[test]
fn a_claim_of_released_tickets_follows_the_undone_release() {
    let at = |ms| StreamId::new(ms, 0);
    let release = Record {
        op: Op::Release {
            name: "fan".into(),
            tickets: Some(Tickets::from_sorted(vec![4, 5])),
        },
        at: 1,
    };
    let claim = Record {
        op: Op::Claim {
            from: None,
            pick: None,
            user: "u1".into(),
            tickets: Tickets::One(5),
        },
        at: 2,
    };
    let fates = decide(&[logged(at(1), release), logged(at(2), claim)], &[]);
    assert!(
        matches!(&fates[1], Fate::Undo(why) if why.contains("1-0")),
        "{fates:?}"
    );
}

/// A lost transfer and scan are tried again when nothing since touched
/// them (no quarantine), undone in MySQL first either way (their entries
/// come back as the new primary's); a scan of a ticket the new primary
/// moved since, or following an undone transfer, is undone.
#[test]
fn lost_transfers_and_scans_are_tried_or_undone() {
    let at = |ms| StreamId::new(ms, 0);
    let transfer = |from: &str, to: &str, t: i64| Record {
        op: Op::Transfer {
            user: from.into(),
            to: to.into(),
            tickets: Tickets::One(t),
        },
        at: 1,
    };
    let scan = |ticket, gen| Record {
        op: Op::Scan {
            ticket,
            gen,
            gate: None,
        },
        at: 1,
    };
    let lost = [
        logged(at(1), transfer("a", "b", 1)),
        logged(at(2), scan(1, 2)),
        logged(at(3), scan(4, 1)),
        logged(at(4), transfer("c", "d", 5)),
        logged(at(5), scan(5, 2)),
    ];
    // the new primary moved ticket 4 (to e): the scan of 4 is undone, and
    // the claim by d undoes the transfer to d and the scan that follows
    let new = [
        logged(at(9), transfer("x", "e", 4)),
        logged(
            at(10),
            Record {
                op: Op::Claim {
                    from: None,
                    pick: None,
                    user: "d".into(),
                    tickets: Tickets::One(3),
                },
                at: 2,
            },
        ),
    ];
    let fates = decide(&lost, &new);
    assert_eq!(fates[..2], [Fate::Try, Fate::Try]);
    for (i, why) in [(2, "ticket 4"), (3, "user \"d\""), (4, "4-0")] {
        assert!(
            matches!(&fates[i], Fate::Undo(w) if w.contains(why)),
            "{i}: {fates:?}"
        );
    }
    let steps = undo_steps(&lost, &fates, &[]);
    assert_eq!(
        steps,
        vec![
            Undo::Scan { scan: at(5) },
            Undo::Transfer {
                transfer: at(4),
                from: "c".into(),
                to: "d".into()
            },
            Undo::Scan { scan: at(3) },
            Undo::Scan { scan: at(2) },
            Undo::Transfer {
                transfer: at(1),
                from: "a".into(),
                to: "b".into()
            },
        ]
    );
}

/// A lost resell and unlist are tried again when nothing since touched
/// their seller or tickets, else undone; a buyer's lost hold of a listed
/// ticket is an order's undo (its listing back on the list).
#[test]
fn lost_resells_and_unlists_are_tried_or_undone() {
    let at = |ms| StreamId::new(ms, 0);
    let resale = |unlist: bool, seller: &str, t: i64| Record {
        op: match unlist {
            false => Op::Resell {
                user: seller.into(),
                tickets: Tickets::One(t),
            },
            true => Op::Unlist {
                user: seller.into(),
                tickets: Tickets::One(t),
            },
        },
        at: 1,
    };
    let hold = |user: &str, t: i64| Record {
        op: Op::Hold {
            from: None,
            pick: None,
            user: user.into(),
            tickets: Tickets::One(t),
            until: 9,
        },
        at: 1,
    };
    let lost = [
        logged(at(1), resale(true, "c", 3)),
        logged(at(2), hold("u", 4)),
        logged(at(3), resale(false, "a", 1)),
        logged(at(4), resale(false, "b", 2)),
    ];
    // the new primary: v holds 3 (still listed there), b lists 2 again
    let new = [
        logged(at(9), hold("v", 3)),
        logged(
            at(10),
            Record {
                at: 5,
                ..resale(false, "b", 2)
            },
        ),
    ];
    let fates = decide(&lost, &new);
    assert_eq!(fates[1..3], [Fate::Try, Fate::Try]);
    for (i, why) in [(0, "ticket 3"), (3, "user \"b\"")] {
        assert!(
            matches!(&fates[i], Fate::Undo(w) if w.contains(why)),
            "{i}: {fates:?}"
        );
    }
    assert_eq!(
        undo_steps(&lost, &fates, &[]),
        vec![
            Undo::Resell { resell: at(4) },
            Undo::Resell { resell: at(3) },
            Undo::Order {
                order: at(2),
                from: None
            },
            Undo::Unlist { unlist: at(1) },
        ]
    );
}

/// A lost confirm and the `resold` it logged are tried together (the
/// re-applied confirm logs the resold again) or undone together: the
/// resold's rows back to the seller, then the confirm.
#[test]
fn a_lost_resold_goes_with_its_confirm() {
    let at = |ms| StreamId::new(ms, 0);
    let lost = [
        logged(
            at(1),
            Record {
                op: Op::Confirm {
                    user: "b".into(),
                    tickets: Tickets::One(2),
                },
                at: 3,
            },
        ),
        logged(
            at(2),
            Record {
                op: Op::Resold {
                    user: "a".into(),
                    to: "b".into(),
                    tickets: Tickets::One(2),
                },
                at: 3,
            },
        ),
    ];
    assert_eq!(decide(&lost, &[]), [Fate::Try, Fate::Try]);
    let cancel = Record {
        op: Op::Cancel {
            from: None,
            user: "b".into(),
            tickets: Tickets::One(2),
        },
        at: 4,
    };
    let fates = decide(&lost, &[logged(at(9), cancel)]);
    assert!(
        fates.iter().all(|f| matches!(f, Fate::Undo(_))),
        "{fates:?}"
    );
    let steps = undo_steps(&lost, &fates, &[]);
    assert_eq!(
        steps[0],
        Undo::Resold {
            resold: at(2),
            from: "a".into(),
            to: "b".into()
        }
    );
    assert!(matches!(&steps[1], Undo::Change { change, .. } if *change == at(1)));
}

/// An undone expiry or cancel of a hold names the hold (its entry,
/// tickets and deadline), so MySQL puts it back on the listings of its
/// listed tickets; one of a sold order, or a confirm, names none.
#[test]
fn an_undone_cancel_of_a_hold_names_the_hold() {
    let at = |ms| StreamId::new(ms, 0);
    let rec = |op| Record { op, at: 1 };
    let hold = logged(
        at(1),
        rec(Op::Hold {
            from: None,
            pick: None,
            user: "u".into(),
            tickets: Tickets::One(2),
            until: 90,
        }),
    );
    let cancel = |ms| {
        logged(
            at(ms),
            rec(Op::Cancel {
                from: None,
                user: "u".into(),
                tickets: Tickets::One(2),
            }),
        )
    };
    let confirm = logged(
        at(2),
        rec(Op::Confirm {
            user: "u".into(),
            tickets: Tickets::One(2),
        }),
    );
    let undo = |lost: &[Logged], before: &[Logged]| {
        let fates = vec![Fate::Undo("test".into()); lost.len()];
        undo_steps(lost, &fates, before)
    };
    let reheld = |steps: &[Undo]| match steps.first() {
        Some(Undo::Change { rehold, .. }) => rehold.clone(),
        other => panic!("{other:?}"),
    };
    let held = Rehold {
        order: at(1),
        tickets: vec![2],
        until: 90,
    };
    let one = std::slice::from_ref;
    assert_eq!(reheld(&undo(&[cancel(3)], one(&hold))), Some(held));
    assert_eq!(reheld(&undo(one(&confirm), one(&hold))), None);
    assert_eq!(reheld(&undo(&[cancel(3)], &[hold, confirm])), None);
}
