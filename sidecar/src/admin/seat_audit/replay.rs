//! The replay behind `audit-seats`, pure: a seated event's orders (as
//! MySQL holds them) put back in log order and checked against the rules
//! of `protocol::seats` — the very code the module decided with.
//!
//! Each order is taken at the entry that created it and given back at the
//! cancel or expiry that ended it (a confirm changes nothing a rule reads).
//! At each take, on the state the earlier entries left: no seat may be
//! held already; a `best` order must have exactly the seats
//! [`protocol::seats::best`] gives for its count and filters, a `split`
//! one exactly what the rule's SPLIT step gives (and only when no
//! candidate together existed); a `seats` pick must pass
//! [`protocol::seats::check_pick`] (the orphan rule). An order the heal
//! re-applied was chosen on a history that was lost: it is checked for
//! "no seat twice" only, and counted. After a rebuild's `restore` the
//! replay simply goes on: the restored state is the orders MySQL kept.
//!
//! With allocations ([`replay_allocated`]), their moves (allocate,
//! release, a held order given back into one) are replayed in the same
//! order: a public order must take no seat free in an allocation, an
//! order `FROM` one only seats free in it, by the rules over its free
//! seats alone.

use protocol::record::{Pick, PickHow as How};
use protocol::seats::{best, check_pick, Layout, NoFit, PickError, Request, Seat, SeatState};
use protocol::StreamId;

/// One order of the event, as the replay needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    /// The claim, hold or offer that created it.
    pub id: StreamId,
    pub user: String,
    /// Its seat ids, ascending.
    pub seats: Vec<u32>,
    /// How its seats were chosen; None: MySQL holds no `seat_pick`.
    pub pick: Option<Pick>,
    /// Created by an entry the heal re-applied.
    pub reapplied: bool,
    /// The cancel or expiry that gave its seats back.
    pub released: Option<StreamId>,
    /// The allocation its seats came from (None: public sale).
    pub from: Option<String>,
}

/// Seats moved into or out of an allocation other than by a claim
/// (`ticket_allocation_step`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Move {
    /// The entry.
    pub id: StreamId,
    pub name: String,
    /// Into the allocation (an allocate, or a held order of it given
    /// back), or out of it to public sale (a release).
    pub into: bool,
    pub seats: Vec<u32>,
}

/// What a clean replay saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub orders: usize,
    pub seats: usize,
    pub best: usize,
    pub split: usize,
    pub picked: usize,
    /// Orders the heal re-applied (checked for "no seat twice" only).
    pub reapplied: usize,
    /// Orders given back (cancel or expiry).
    pub released: usize,
    /// Orders from an allocation.
    pub allocated: usize,
}

/// The first thing wrong; `order` indexes the replayed orders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// `seat` was taken while `holder` (maybe the same order) held it.
    SeatTwice {
        order: usize,
        seat: u32,
        holder: usize,
    },
    /// `seat` is no seat of the layout.
    UnknownSeat { order: usize, seat: u32 },
    /// The order carries no `seat_pick`.
    NoPick { order: usize },
    /// A filter names no section or category of the layout.
    UnknownFilter {
        order: usize,
        what: &'static str,
        name: String,
    },
    /// A best or split order has other seats than the rule gives.
    NotTheRule {
        order: usize,
        rule: Result<Vec<u32>, NoFit>,
    },
    /// A pick the orphan rule refuses.
    Orphan {
        order: usize,
        lone: u32,
        from: u32,
        to: u32,
    },
    /// A public order took a seat free in an allocation, or an order from
    /// an allocation a seat not free in it (`allocation`: where the seat
    /// was, None: not in one).
    Allocated {
        order: usize,
        seat: u32,
        allocation: Option<String>,
    },
}

impl Violation {
    /// The order the violation is about.
    pub fn order(&self) -> usize {
        match self {
            Violation::SeatTwice { order, .. }
            | Violation::UnknownSeat { order, .. }
            | Violation::NoPick { order }
            | Violation::UnknownFilter { order, .. }
            | Violation::NotTheRule { order, .. }
            | Violation::Orphan { order, .. }
            | Violation::Allocated { order, .. } => *order,
        }
    }
}

/// Replays `orders` (any order) on `layout`, an event without
/// allocations: a summary, or the first violation in log order.
#[cfg(test)]
pub fn replay(layout: &Layout, orders: &[Order]) -> Result<Summary, Violation> {
    replay_allocated(layout, orders, &[])
}

/// `replay` with the event's allocation `moves`: a public order must
/// take no seat free in an allocation, an order from one only seats free
/// in it, chosen by the rules over its free seats alone (as the module's
/// claim `FROM` sees them).
pub fn replay_allocated(
    layout: &Layout,
    orders: &[Order],
    moves: &[Move],
) -> Result<Summary, Violation> {
    let steps = in_log_order(orders, moves);
    let mut state = SeatState::new(layout);
    // holder[seat] = 1 + the order holding it, 0 = free
    let mut holder = vec![0usize; layout.total as usize + 1];
    // in[seat]: the allocation the seat is free in
    let mut within: Vec<Option<&str>> = vec![None; layout.total as usize + 1];
    let mut summary = Summary::default();
    for (_, kind, i) in steps {
        if kind == 2 {
            let m = &moves[i];
            for &s in &apply_move(layout, &mut state, m) {
                within[s as usize] = m.into.then_some(m.name.as_str());
            }
            continue;
        }
        let o = &orders[i];
        if kind == 0 {
            release(layout, &mut state, &mut holder, i, o);
            summary.released += 1;
            continue;
        }
        let view = match &o.from {
            None => {
                allocated(i, o, &within, None)?;
                None
            }
            Some(name) => {
                allocated(i, o, &within, Some(name))?;
                let free: Vec<u32> = (1..=layout.total)
                    .filter(|s| within[*s as usize] == Some(name.as_str()))
                    .collect();
                Some(SeatState::only(layout, &free))
            }
        };
        let seen = view.as_ref().unwrap_or(&state);
        take(layout, seen, &holder, i, o)?;
        if !o.reapplied {
            check_rule(layout, seen, i, o)?;
        }
        for &s in &o.seats {
            holder[s as usize] = i + 1;
            if let Some(w) = within.get_mut(s as usize) {
                *w = None;
            }
        }
        state.set(layout, &o.seats, Seat::Held);
        count(&mut summary, o);
    }
    Ok(summary)
}

/// Order `i` takes only seats free where it takes from: in the
/// allocation `from`, or (None) in none.
fn allocated(
    i: usize,
    o: &Order,
    within: &[Option<&str>],
    from: Option<&str>,
) -> Result<(), Violation> {
    for &seat in &o.seats {
        let here = within.get(seat as usize).copied().flatten();
        if here != from {
            return Err(Violation::Allocated {
                order: i,
                seat,
                allocation: here.map(str::to_owned),
            });
        }
    }
    Ok(())
}

/// Every take and give-back of `orders`, and every allocation move, in
/// log order: (entry, 0 = release / 1 = take / 2 = move, order or
/// move). Releases never share an entry with a take; a move after the
/// release of its entry (a held order given back into its allocation).
fn in_log_order(orders: &[Order], moves: &[Move]) -> Vec<(StreamId, u8, usize)> {
    let mut steps: Vec<(StreamId, u8, usize)> = Vec::with_capacity(orders.len() * 2 + moves.len());
    for (i, o) in orders.iter().enumerate() {
        steps.push((o.id, 1, i));
        if let Some(at) = o.released {
            steps.push((at, 0, i));
        }
    }
    steps.extend(moves.iter().enumerate().map(|(i, m)| (m.id, 2, i)));
    steps.sort_unstable();
    steps
}

/// Move `m`'s seats (those of the layout) allocated or free again; which.
fn apply_move(layout: &Layout, state: &mut SeatState, m: &Move) -> Vec<u32> {
    let seats: Vec<u32> = m
        .seats
        .iter()
        .copied()
        .filter(|s| layout.place(*s).is_some())
        .collect();
    let seat = if m.into { Seat::Allocated } else { Seat::Free };
    state.set(layout, &seats, seat);
    seats
}

/// The seats as they were just before a log entry, for `audit-draw` on a
/// seated draw: the orders' takes and give-backs (and allocation moves:
/// an offer never gets an allocated seat) replayed in log order up to it,
/// without checks (`audit-seats` makes those). Entries must be asked for
/// in log order.
pub struct Timeline<'a> {
    layout: &'a Layout,
    orders: &'a [Order],
    moves: &'a [Move],
    steps: Vec<(StreamId, u8, usize)>,
    next: usize,
    state: SeatState,
}

impl<'a> Timeline<'a> {
    pub fn new(layout: &'a Layout, orders: &'a [Order], moves: &'a [Move]) -> Timeline<'a> {
        Timeline {
            layout,
            orders,
            moves,
            steps: in_log_order(orders, moves),
            next: 0,
            state: SeatState::new(layout),
        }
    }

    /// Whether a party of `count` found seats together (the offer rule: no
    /// filters) just before entry `id`.
    pub fn fits(&mut self, id: StreamId, count: u32) -> bool {
        while let Some(&(at, kind, i)) = self.steps.get(self.next) {
            if at >= id {
                break;
            }
            match kind {
                2 => {
                    apply_move(self.layout, &mut self.state, &self.moves[i]);
                }
                _ => {
                    let seat = if kind == 0 { Seat::Free } else { Seat::Held };
                    self.state.set(self.layout, &self.orders[i].seats, seat);
                }
            }
            self.next += 1;
        }
        let request = Request {
            count,
            ..Request::default()
        };
        best(self.layout, &self.state, &request).is_ok()
    }
}

fn count(summary: &mut Summary, o: &Order) {
    summary.orders += 1;
    summary.allocated += usize::from(o.from.is_some());
    summary.seats += o.seats.len();
    match (o.reapplied, o.pick.as_ref().map(|p| p.how)) {
        (true, _) => summary.reapplied += 1,
        (false, Some(How::Best)) => summary.best += 1,
        (false, Some(How::Split)) => summary.split += 1,
        (false, Some(How::Seats)) => summary.picked += 1,
        (false, None) => {}
    }
}

/// "No seat twice": every seat of order `i` exists and is free.
fn take(
    layout: &Layout,
    state: &SeatState,
    holder: &[usize],
    i: usize,
    o: &Order,
) -> Result<(), Violation> {
    for (k, &seat) in o.seats.iter().enumerate() {
        if layout.place(seat).is_none() {
            return Err(Violation::UnknownSeat { order: i, seat });
        }
        let twice_here = o.seats[..k].contains(&seat);
        if twice_here || !state.is_free(seat) {
            let holder = match twice_here {
                true => i,
                false => holder[seat as usize].saturating_sub(1),
            };
            return Err(Violation::SeatTwice {
                order: i,
                seat,
                holder,
            });
        }
    }
    Ok(())
}

/// Frees the seats order `i` still holds.
fn release(layout: &Layout, state: &mut SeatState, holder: &mut [usize], i: usize, o: &Order) {
    let mine: Vec<u32> = o
        .seats
        .iter()
        .copied()
        .filter(|s| holder.get(*s as usize) == Some(&(i + 1)))
        .collect();
    for &s in &mine {
        holder[s as usize] = 0;
    }
    state.set(layout, &mine, Seat::Free);
}

/// The rule order `i` was chosen by, on `state` (the seats before it).
fn check_rule(layout: &Layout, state: &SeatState, i: usize, o: &Order) -> Result<(), Violation> {
    let pick = o.pick.as_ref().ok_or(Violation::NoPick { order: i })?;
    if pick.how == How::Seats {
        return match check_pick(layout, state, &o.seats) {
            Ok(()) => Ok(()),
            Err(PickError::Orphan { lone, from, to }) => Err(Violation::Orphan {
                order: i,
                lone,
                from,
                to,
            }),
            // Unknown, given twice or taken: `take` refused those already.
            Err(PickError::Unknown(_) | PickError::Twice(_) | PickError::Taken(_)) => Ok(()),
        };
    }
    let split = pick.how == How::Split;
    let request = request(layout, i, o.seats.len(), pick, split)?;
    match best(layout, state, &request) {
        Ok(c) if c.ids == o.seats && c.split == split => Ok(()),
        other => Err(Violation::NotTheRule {
            order: i,
            rule: other.map(|c| c.ids),
        }),
    }
}

/// The best-available request of `count` seats order `i` made.
fn request(
    layout: &Layout,
    i: usize,
    count: usize,
    pick: &Pick,
    split: bool,
) -> Result<Request, Violation> {
    let unknown = |what, name: &String| Violation::UnknownFilter {
        order: i,
        what,
        name: name.clone(),
    };
    let section = match &pick.section {
        Some(s) => Some(
            layout
                .section_index(s)
                .ok_or_else(|| unknown("section", s))?,
        ),
        None => None,
    };
    let category = match &pick.category {
        Some(c) => Some(
            layout
                .category_index(c)
                .ok_or_else(|| unknown("category", c))?,
        ),
        None => None,
    };
    Ok(Request {
        count: count as u32,
        section,
        category,
        accessible: pick
            .accessible
            .map(|a| a.clamp(0, i64::from(u32::MAX)) as u32),
        split,
    })
}

/// At most 12 seat names of `ids`, comma-separated.
pub fn names(layout: &Layout, ids: &[u32]) -> String {
    let mut shown: Vec<String> = ids
        .iter()
        .take(12)
        .map(|id| layout.seat_name(*id))
        .collect();
    if ids.len() > 12 {
        shown.push(format!("... ({} seats)", ids.len()));
    }
    shown.join(", ")
}

/// A violation in words: the entry, the user, the seats taken and what
/// the rule gives.
pub fn describe(layout: &Layout, orders: &[Order], v: &Violation) -> String {
    let o = &orders[v.order()];
    let head = format!(
        "entry {}: user {:?} took {}",
        o.id,
        o.user,
        names(layout, &o.seats)
    );
    match v {
        Violation::SeatTwice { seat, holder, .. } if *holder == v.order() => {
            format!(
                "{head}: seat {} twice in one order",
                layout.seat_name(*seat)
            )
        }
        Violation::SeatTwice { seat, holder, .. } => {
            let h = &orders[*holder];
            format!(
                "{head}: seat {} was held twice (user {:?} held it since entry {})",
                layout.seat_name(*seat),
                h.user,
                h.id
            )
        }
        Violation::UnknownSeat { seat, .. } => {
            format!("{head}: seat id {seat} is no seat of the layout")
        }
        Violation::NoPick { .. } => format!("{head}: MySQL holds no seat_pick for it"),
        Violation::UnknownFilter { what, name, .. } => {
            format!("{head}: its {what} {name:?} is not in the layout")
        }
        Violation::NotTheRule { rule, .. } => {
            let rule = match rule {
                Ok(ids) => names(layout, ids),
                Err(NoFit::NotTogether { free }) => {
                    format!("no seats together ({free} free): NOTOGETHER")
                }
                Err(NoFit::SoldOut) => "none: SOLDOUT".into(),
            };
            format!("{head}; the rule gives {rule}")
        }
        Violation::Allocated {
            seat, allocation, ..
        } => {
            let taken = match &o.from {
                Some(f) => format!("from allocation {f:?}"),
                None => "in public sale".to_owned(),
            };
            let was = match allocation {
                Some(a) => format!("free in allocation {a:?}"),
                None => "in no allocation".to_owned(),
            };
            format!(
                "{head} {taken}, but seat {} was {was}",
                layout.seat_name(*seat)
            )
        }
        Violation::Orphan { lone, from, to, .. } => format!(
            "{head}: the pick leaves {} alone, and {}..{} would leave none (the orphan rule)",
            layout.seat_name(*lone),
            layout.seat_name(*from),
            layout.seat_name(*to)
        ),
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
