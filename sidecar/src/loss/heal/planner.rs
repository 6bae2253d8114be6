//! The heal's plan, pure: MySQL's written history (the journal) and the new
//! primary's log in, what to re-apply, what to undo and what to apply out.
//!
//! 1. [`place`]: the last common entry D, by id **and content** (the new
//!    primary's ids continue from its own clock and may equal lost ones).
//!    The new primary's anchor (the last written entry the trimmer named
//!    in Redis before trimming up to it: see [`super::journal`]) must be
//!    in the journal, and its log holds every entry after the anchor.
//!    Otherwise the log cannot be placed and the event is quarantined, as
//!    before.
//! 2. [`decide`]: the journal's entries after D are the **lost
//!    writes**. Each is already re-applied (a new entry after D has its
//!    very content: a heal that crashed after `TICKET.REAPPLY`), or is
//!    tried again in Redis when no new entry after D and no undone lost
//!    write touched its user, its tickets (or, for open/close and a draw,
//!    the status; an entrant's enter or leave touches its user; a transfer
//!    both its users and its tickets, a scan its ticket, a resell or
//!    unlist its seller and tickets, a resold both users and its tickets;
//!    a resold is never sent itself: the re-applied confirm before it
//!    logs it again, see the executor), or must
//!    be undone. An entry that moved allocated stock (an allocate, a
//!    release, a claim, hold, expiry or cancel `FROM` an allocation) is
//!    always undone: `TICKET.REAPPLY` does not take it. `init`, `drop`
//!    and `restore` cannot be healed (quarantine; a seated init's journal
//!    text is a stand-in that names its op); a malformed or too-large
//!    entry had no effect.
//! 3. [`undo_steps`]: MySQL reverts **every** lost write, newest first
//!    (the re-applied ones come back as the new primary's entries, in their
//!    place in its log, so MySQL follows that log exactly: a lost claim of
//!    43 by u1, then u2 claiming and cancelling 43 on the new primary, then
//!    u1's re-applied claim, are applied in that order, no collision).
//!
//! The property tests run whole failovers against a model of Redis and of
//! MySQL: random histories, random divergences, colliding ids, refusals by
//! the module, and a second failover after (or during) a heal.

use crate::batch::order::ChangeKind;
use crate::model::entry::stand_in_op;
pub use crate::model::entry::Logged;
use protocol::record::Op;
pub use protocol::touch::Touch;
use protocol::StreamId;

/// Where the new primary's log meets MySQL's journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meet {
    /// Index of D in the journal.
    pub journal: usize,
    /// How many of the log's entries after the anchor are D and before
    /// it (the new entries are `log[meet.log..]`).
    pub log: usize,
}

/// Finds D, the last entry the journal and the new primary's log have in
/// common: the new primary's anchor `(id, digest)` (`ticket:{E}:synced`)
/// must be in the journal, and `log` holds its entries after the anchor.
pub fn place(journal: &[Logged], anchor: (StreamId, &str), log: &[Logged]) -> Result<Meet, String> {
    let first = journal
        .first()
        .ok_or("MySQL's journal holds no entry of the event")?;
    let (id, digest) = anchor;
    let Some(at) = journal
        .iter()
        .position(|e| e.id == id && super::entry::digest(&e.text) == digest)
    else {
        return Err(format!(
            "the new primary's anchor {id} is not in MySQL's journal (from {} on): its log cannot be placed",
            first.id
        ));
    };
    let mut meet = Meet {
        journal: at,
        log: 0,
    };
    while meet.journal + 1 < journal.len()
        && meet.log < log.len()
        && journal[meet.journal + 1] == log[meet.log]
    {
        meet.journal += 1;
        meet.log += 1;
    }
    Ok(meet)
}

/// What becomes of one lost write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    /// A new entry after D has its content: it was re-applied already.
    Reapplied { by: StreamId },
    /// Try `TICKET.REAPPLY`; nothing since touched it.
    Try,
    /// Undo it in MySQL and report it, with why.
    Undo(String),
    /// A malformed entry: it was a conflict, it changed nothing.
    NoEffect,
    /// It cannot be healed (init, drop, restore): quarantine.
    Unhealable(String),
}

/// Decides the fate of each lost write (`lost`: the journal after D;
/// `new`: the log after D).
pub fn decide(lost: &[Logged], new: &[Logged]) -> Vec<Fate> {
    let mut matched = vec![false; new.len()];
    let mut fates: Vec<Option<Fate>> = lost
        .iter()
        .map(|l| {
            let i = (0..new.len()).find(|&i| !matched[i] && new[i].text == l.text)?;
            matched[i] = true;
            Some(Fate::Reapplied { by: new[i].id })
        })
        .collect();
    let mut changed_since = Touch::default();
    let mut first_change: Vec<(&Logged, Touch)> = Vec::new();
    for (e, _) in new.iter().zip(&matched).filter(|(_, m)| !**m) {
        if let Some(r) = &e.rec {
            changed_since.add(&r.op);
            first_change.push((e, Touch::of(&r.op)));
        }
    }
    let mut undone: Vec<(StreamId, Touch)> = Vec::new();
    for (l, fate) in lost.iter().zip(fates.iter_mut()) {
        if fate.is_some() {
            continue;
        }
        *fate = Some(fate_of(l, &changed_since, &first_change, &undone));
        if let (Some(Fate::Undo(_)), Some(r)) = (fate.as_ref(), &l.rec) {
            undone.push((l.id, Touch::of(&r.op)));
        }
    }
    fates
        .into_iter()
        .map(|f| f.unwrap_or(Fate::NoEffect))
        .collect()
}

fn fate_of(
    l: &Logged,
    changed_since: &Touch,
    new: &[(&Logged, Touch)],
    undone: &[(StreamId, Touch)],
) -> Fate {
    // A seated init's journal text is a stand-in: it names only its op.
    let op = l.rec.as_ref().map(|r| r.op.name());
    if let Some(name @ ("init" | "drop" | "restore")) = op.or(stand_in_op(&l.text)) {
        return Fate::Unhealable(format!("op={name} {} was lost", l.id));
    }
    let Some(r) = &l.rec else {
        return Fate::NoEffect;
    };
    if r.op.from().is_some() || matches!(r.op, Op::Allocate { .. } | Op::Release { .. }) {
        // A box office's move or a partner's order: rare, and its
        // re-application would have to re-check the allocation on the new
        // primary; it is undone and reported, as any write the new primary
        // cannot take back.
        return Fate::Undo("it moved allocated stock, which the heal does not re-apply".into());
    }
    let mine = Touch::of(&r.op);
    if let Some(what) = mine.shared(changed_since) {
        let by = new.iter().find(|(_, t)| mine.shared(t).is_some());
        let by = by.map_or(String::new(), |(e, _)| {
            let op = e.rec.as_ref().map_or("?", |r| r.op.name());
            format!(" (first by op={op} {})", e.id)
        });
        return Fate::Undo(format!("the new primary changed {what} since{by}"));
    }
    match undone.iter().find(|(_, t)| mine.shared(t).is_some()) {
        Some((id, _)) => Fate::Undo(format!(
            "it follows lost write {id}, which could not be re-applied"
        )),
        None => Fate::Try,
    }
}

/// How MySQL reverts one lost write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undo {
    /// The live rows of the order the entry created become
    /// `lost_in_failover` (history; a re-applied write comes back as a new
    /// entry with rows of its own); their tickets go back to stock, or to
    /// the allocation the order was taken `from`; the listed tickets it
    /// took (written on their listings) go back on the list.
    Order {
        order: StreamId,
        from: Option<Allocated>,
    },
    /// The rows a confirm, expire or cancel changed go back to what they
    /// were (held or sold), `stream_id` back to `previous`; an expiry or
    /// cancel that gave its tickets back to an allocation (`from`) takes
    /// them out of it again, one of a hold (`rehold`) puts the hold back
    /// on the listings of its listed tickets.
    Change {
        change: StreamId,
        kind: ChangeKind,
        user: String,
        previous: Option<StreamId>,
        from: Option<Allocated>,
        rehold: Option<Rehold>,
    },
    /// An allocate or release: the allocation's row, the public stock
    /// and the seats back to what they were before it.
    Move { step: StreamId, op: Op<String> },
    /// An open or close: the status goes back to `to`.
    SetStatus { to: &'static str },
    /// A draw event's enter or leave: its `ticket_draw_step` row is marked
    /// lost (history; a re-applied one comes back as a new entry).
    Step { step: StreamId },
    /// A transfer: its rows back to the giver a generation down, its
    /// `ticket_owner` rows marked lost.
    Transfer {
        transfer: StreamId,
        from: String,
        to: String,
    },
    /// A scan: its `ticket_scan` row marked lost.
    Scan { scan: StreamId },
    /// A resell: the listing rows it inserted end, marked lost (history;
    /// a re-applied one comes back as a new entry with rows of its own).
    Resell { resell: StreamId },
    /// An unlist: the listings it ended are listed again.
    Unlist { unlist: StreamId },
    /// A resold: its rows back to the seller a generation down (as a
    /// transfer's), its listings listed again with their buyer, its
    /// `ticket_resold` rows marked lost (no refund owed).
    Resold {
        resold: StreamId,
        from: String,
        to: String,
    },
    /// A draw: the event is not drawn any more (seed, drawn_at cleared),
    /// its step row is marked lost; the new primary's draw (the same seed,
    /// kept from the init) comes back as a new entry.
    Draw { draw: StreamId },
}

/// The hold an undone expiry or cancel ended: its order (the hold's or
/// offer's entry), tickets and deadline. MySQL keeps a buyer's hold of a
/// listed ticket on the listing, which the expiry or cancel cleared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rehold {
    pub order: StreamId,
    pub tickets: Vec<i64>,
    pub until: i64,
}

/// The allocation an order was taken from, or an expiry or cancel gave
/// back to, and its tickets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocated {
    pub name: String,
    pub tickets: Vec<i64>,
}

impl Allocated {
    fn of(op: &Op<String>) -> Option<Allocated> {
        let name = op.from()?;
        let (_, tickets, _) = op.order()?;
        Some(Allocated {
            name: name.to_owned(),
            tickets: tickets.as_slice().to_vec(),
        })
    }
}

/// The undo of every lost write, newest first; `journal_before` is the
/// journal up to D (to find what a change's rows pointed to before).
pub fn undo_steps(lost: &[Logged], fates: &[Fate], journal_before: &[Logged]) -> Vec<Undo> {
    let mut steps = Vec::new();
    for (i, (l, fate)) in lost.iter().zip(fates).enumerate().rev() {
        let Some(r) = &l.rec else { continue };
        if matches!(fate, Fate::NoEffect | Fate::Unhealable(_)) {
            continue;
        }
        let step = match &r.op {
            Op::Claim { .. } | Op::Hold { .. } | Op::Offer { .. } => Undo::Order {
                order: l.id,
                from: Allocated::of(&r.op),
            },
            Op::Allocate { .. } | Op::Release { .. } => Undo::Move {
                step: l.id,
                op: r.op.clone(),
            },
            Op::Open | Op::Close => Undo::SetStatus {
                to: previous_status(journal_before.iter().chain(&lost[..i]), &r.op),
            },
            Op::Enter { .. } | Op::Leave { .. } => Undo::Step { step: l.id },
            Op::Draw { .. } => Undo::Draw { draw: l.id },
            Op::Transfer { user, to, .. } => Undo::Transfer {
                transfer: l.id,
                from: user.clone(),
                to: to.to_string(),
            },
            Op::Scan { .. } => Undo::Scan { scan: l.id },
            Op::Resell { .. } => Undo::Resell { resell: l.id },
            Op::Unlist { .. } => Undo::Unlist { unlist: l.id },
            Op::Resold { user, to, .. } => Undo::Resold {
                resold: l.id,
                from: user.clone(),
                to: to.to_string(),
            },
            op => match (ChangeKind::of(op), op.order()) {
                (Some(kind), Some((user, tickets, _))) => {
                    let earlier = journal_before.iter().chain(&lost[..i]);
                    let previous = previous_touch(earlier, user, tickets.as_slice());
                    Undo::Change {
                        change: l.id,
                        kind,
                        user: user.clone(),
                        previous: previous.map(|e| e.id),
                        from: Allocated::of(op),
                        rehold: previous.and_then(|e| rehold(e, kind)),
                    }
                }
                _ => continue,
            },
        };
        steps.push(step);
    }
    steps
}

/// The status before a lost open or close: the last open or close before
/// it (a re-applied status change may repeat the status it found: a close
/// of a closed event), else the other one.
fn previous_status<'a>(
    earlier: impl DoubleEndedIterator<Item = &'a Logged>,
    lost: &Op<String>,
) -> &'static str {
    let last = earlier
        .rev()
        .find_map(|e| match e.rec.as_ref().map(|r| &r.op) {
            Some(Op::Open) => Some("open"),
            Some(Op::Close) => Some("close"),
            _ => None,
        });
    last.unwrap_or(match lost {
        Op::Open => "close",
        _ => "open",
    })
}

/// The last entry before a change that created or confirmed `user`'s
/// order of `tickets` (what the rows' `stream_id` said before it).
fn previous_touch<'a>(
    earlier: impl DoubleEndedIterator<Item = &'a Logged>,
    user: &str,
    tickets: &[i64],
) -> Option<&'a Logged> {
    earlier.rev().find(|e| {
        let Some((r, (u, t, _))) = e.rec.as_ref().and_then(|r| Some((r, r.op.order()?))) else {
            return false;
        };
        let creates_or_confirms = !matches!(r.op, Op::Cancel { .. } | Op::Expire { .. });
        u == user && t.as_slice() == tickets && creates_or_confirms
    })
}

/// The hold an expiry or cancel (`kind`) ended, when `previous`, the
/// entry before it, is a hold or an offer (a deadline).
fn rehold(previous: &Logged, kind: ChangeKind) -> Option<Rehold> {
    let (_, tickets, until) = previous.rec.as_ref()?.op.order()?;
    (kind.releases() && until > 0).then(|| Rehold {
        order: previous.id,
        tickets: tickets.as_slice().to_vec(),
        until,
    })
}

#[cfg(test)]
#[path = "planner_tests.rs"]
mod tests;
