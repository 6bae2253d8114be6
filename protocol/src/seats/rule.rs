//! The best-available rule and the pick rule (docs/design.md "Reserved
//! seating"), pure over a [`Layout`] and a [`SeatState`]: the module
//! decides with them, `audit-seats` replays them, and [`mod@reference`] is the
//! brute-force model the property tests hold them to.
//!
//! Best available, for a party of `n`:
//! 1. a candidate is `n` adjacent positions `p..q` of one allowed row, all
//!    free seats; without `ACCESSIBLE` none accessible, with `ACCESSIBLE a`
//!    at least `a` accessible;
//! 2. `orphans` counts the free runs of exactly one seat it leaves at
//!    either side;
//! 3. the candidate with the smallest `(orphans, rank, |p + q - 2c|, first
//!    seat id)` wins;
//! 4. none: `SPLIT` takes the `n` free non-accessible seats of the allowed
//!    rows with the smallest `(rank, |2p - 2c|, id)`; else `NOTOGETHER`
//!    when the allowed rows hold at least `n` seats this claim could take,
//!    or `SOLDOUT`.
//!
//! The search visits rows by rank and skips those whose summary says they
//! hold no run of `n`; it stops after the rank of a candidate that leaves
//! no single seat, since no later rank can beat it.

use super::layout::{Layout, Row, Spot};
use super::state::SeatState;

/// What a best-available claim asks for (section and category as indices).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Request {
    pub count: u32,
    pub section: Option<u32>,
    pub category: Option<u32>,
    /// `ACCESSIBLE a`: at least `a` of the seats are wheelchair spaces.
    pub accessible: Option<u32>,
    pub split: bool,
}

/// The seats a claim gets, ascending, and whether they were split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub ids: Vec<u32>,
    pub split: bool,
}

/// Why a best-available claim got nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFit {
    /// No `n` seats together, though `free` (at least `n`) could be taken.
    NotTogether {
        free: u32,
    },
    SoldOut,
}

/// Why a pick is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickError {
    /// Not a seat id of the layout.
    Unknown(u32),
    /// Given twice.
    Twice(u32),
    Taken(u32),
    /// The pick leaves `lone` alone, and `from..=to` would leave nobody.
    Orphan {
        lone: u32,
        from: u32,
        to: u32,
    },
}

/// Why no state of the event could ever seat a request: the layout itself
/// refuses it (docs/design.md "Hostile input": an `ERR`, not `SOLDOUT` or
/// `NOTOGETHER`, which are for seats that exist but are taken).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impossible {
    /// `SECTION` and `CATEGORY` together allow no row.
    NoRow,
    /// `ACCESSIBLE a`: the allowed rows have only `have` wheelchair spaces.
    Accessible { have: u32 },
    /// `ACCESSIBLE a`: the spaces exist, but never `a` of them among `n`
    /// adjacent seats.
    AccessibleApart,
    /// No `n` adjacent seats without a wheelchair space exist in the
    /// allowed rows: the longest such block has `longest`.
    NotTogether { longest: u32 },
    /// `SPLIT`: the allowed rows have only `have` seats a claim may take.
    Capacity { have: u32 },
}

/// Whether `request` could never be seated, whatever is taken: exactly
/// when [`best`] finds nothing in the empty venue. Checked only after
/// [`best`] found nothing now (the failure path pays for it).
pub fn impossible(layout: &Layout, request: &Request) -> Option<Impossible> {
    let rows: Vec<&Row> = layout.rows.iter().filter(|r| request.allows(r)).collect();
    if rows.is_empty() {
        return Some(Impossible::NoRow);
    }
    let n = request.count;
    if let Some(a) = request.accessible {
        let have = rows.iter().map(|r| r.accessible.len() as u32).sum();
        return match (have < a, rows.iter().any(|r| window_fits(r, n, a))) {
            (true, _) => Some(Impossible::Accessible { have }),
            (false, true) => None,
            (false, false) => Some(Impossible::AccessibleApart),
        };
    }
    let longest = rows
        .iter()
        .map(|r| longest_plain_block(r))
        .max()
        .unwrap_or(0);
    if longest >= n {
        return None;
    }
    if !request.split {
        return Some(Impossible::NotTogether { longest });
    }
    let have: u32 = rows
        .iter()
        .map(|r| r.seats - r.accessible.len() as u32)
        .sum();
    (have < n).then_some(Impossible::Capacity { have })
}

/// The stretches of an empty `row`'s seats between blocked positions, as
/// the spots of each.
fn stretches(row: &Row) -> impl Iterator<Item = &[Spot]> {
    row.spots
        .split(|s| *s == Spot::Blocked)
        .filter(|stretch| !stretch.is_empty())
}

/// The most adjacent seats of an empty `row` that are no wheelchair space.
fn longest_plain_block(row: &Row) -> u32 {
    stretches(row)
        .flat_map(|stretch| stretch.split(|s| *s == Spot::Accessible))
        .map(|block| block.len() as u32)
        .max()
        .unwrap_or(0)
}

/// Whether `n` adjacent seats of an empty `row` hold `a` wheelchair spaces.
fn window_fits(row: &Row, n: u32, a: u32) -> bool {
    let n = n as usize;
    stretches(row)
        .filter(|stretch| stretch.len() >= n)
        .any(|stretch| {
            stretch
                .windows(n)
                .any(|w| w.iter().filter(|s| **s == Spot::Accessible).count() as u32 >= a)
        })
}

/// A candidate's place in the rule's order: `(orphans, rank, distance,
/// first id)`.
type Key = (u8, i64, i64, u32);

impl Request {
    fn allows(&self, row: &Row) -> bool {
        self.section.is_none_or(|s| row.section == s)
            && self.category.is_none_or(|c| row.category == c)
    }

    /// Seats of the row this request could take.
    fn takeable(&self, state: &SeatState, r: u32) -> u32 {
        let s = state.row(r);
        match self.accessible {
            Some(_) => s.free,
            None => s.free - s.free_accessible,
        }
    }
}

/// The best candidate of `n` in row `r` by `(orphans, distance, id)`, as a
/// rule key; `need` is `ACCESSIBLE`'s `a`.
pub fn best_in_row(
    layout: &Layout,
    state: &SeatState,
    r: u32,
    n: u32,
    need: Option<u32>,
) -> Option<Key> {
    let row = &layout.rows[r as usize];
    let mut best: Option<Key> = None;
    let mut run: Option<(u32, u32)> = None;
    let mut id = row.first_id;
    for pos in 1..=row.positions + 1 {
        let spot = (pos <= row.positions).then(|| row.spot(pos));
        let free = spot.is_some_and(|s| s != Spot::Blocked) && state.is_free(id);
        match (free, run) {
            (true, None) => run = Some((pos, id)),
            (false, Some((a, first))) => {
                run = None;
                windows(row, (a, pos - 1, first), n, need, &mut best);
            }
            _ => {}
        }
        if spot.is_some_and(|s| s != Spot::Blocked) {
            id += 1;
        }
    }
    best
}

/// The candidates of `n` inside the free run `a..=b` (first id `first`).
fn windows(
    row: &Row,
    (a, b, first): (u32, u32, u32),
    n: u32,
    need: Option<u32>,
    best: &mut Option<Key>,
) {
    if n == 0 || b + 1 - a < n {
        return;
    }
    let accessible = |p: u32| u32::from(row.spot(p) == Spot::Accessible);
    let mut inside: u32 = (a..a + n).map(accessible).sum();
    for p in a..=b + 1 - n {
        let q = p + n - 1;
        if p > a {
            inside = inside + accessible(q) - accessible(p - 1);
        }
        let fits = match need {
            None => inside == 0,
            Some(k) => inside >= k,
        };
        if !fits {
            continue;
        }
        let orphans = u8::from(p - a == 1) + u8::from(b - q == 1);
        let distance = (i64::from(p + q) - row.center2).abs();
        let key = (orphans, row.rank, distance, first + p - a);
        if best.is_none_or(|b| key < b) {
            *best = Some(key);
        }
    }
}

/// The seats best available for `request` (docs/design.md's steps 1-4).
pub fn best(layout: &Layout, state: &SeatState, request: &Request) -> Result<Chosen, NoFit> {
    let n = request.count;
    let mut found: Option<Key> = None;
    for &r in &layout.by_rank {
        let row = &layout.rows[r as usize];
        if found.is_some_and(|k| k.0 == 0 && k.1 < row.rank) {
            break;
        }
        if !request.allows(row) || !may_fit(state, r, n, request.accessible) {
            continue;
        }
        if let Some(key) = best_in_row(layout, state, r, n, request.accessible) {
            if found.is_none_or(|k| key < k) {
                found = Some(key);
            }
        }
    }
    if let Some((_, _, _, first)) = found {
        return Ok(Chosen {
            ids: (first..first + n).collect(),
            split: false,
        });
    }
    let free: u32 = (0..layout.rows.len() as u32)
        .filter(|r| request.allows(&layout.rows[*r as usize]))
        .map(|r| request.takeable(state, r))
        .sum();
    match (free >= n, request.split && request.accessible.is_none()) {
        (true, true) => Ok(split(layout, state, request)),
        (true, false) => Err(NoFit::NotTogether { free }),
        (false, _) => Err(NoFit::SoldOut),
    }
}

/// The `n` free non-accessible seats of the allowed rows in `SPLIT` order
/// (an allocation's `COUNT`), or how many there are when fewer.
pub fn split_seats(layout: &Layout, state: &SeatState, request: &Request) -> Result<Vec<u32>, u32> {
    let plain = Request {
        accessible: None,
        ..*request
    };
    let free: u32 = (0..layout.rows.len() as u32)
        .filter(|r| plain.allows(&layout.rows[*r as usize]))
        .map(|r| plain.takeable(state, r))
        .sum();
    match free >= plain.count {
        true => Ok(split(layout, state, &plain).ids),
        false => Err(free),
    }
}

/// Whether row `r`'s summary allows a candidate of `n`.
#[inline]
fn may_fit(state: &SeatState, r: u32, n: u32, need: Option<u32>) -> bool {
    let s = state.row(r);
    match need {
        None => s.run_plain >= n,
        Some(k) => s.run_any >= n && s.free_accessible >= k,
    }
}

/// Step 4 with `SPLIT`: the `n` free non-accessible seats of the allowed
/// rows with the smallest `(rank, |2p - 2c|, id)` (at least `n` are free).
fn split(layout: &Layout, state: &SeatState, request: &Request) -> Chosen {
    let n = request.count as usize;
    let mut seats: Vec<(i64, i64, u32)> = Vec::new();
    let mut i = 0;
    while i < layout.by_rank.len() && seats.len() < n {
        // One rank at a time: a later rank cannot beat a full earlier one.
        let rank = layout.rows[layout.by_rank[i] as usize].rank;
        while let Some(&r) = layout.by_rank.get(i) {
            let row = &layout.rows[r as usize];
            if row.rank != rank {
                break;
            }
            if request.allows(row) {
                free_plain_seats(row, state, &mut seats);
            }
            i += 1;
        }
    }
    seats.sort_unstable();
    let mut ids: Vec<u32> = seats.iter().take(n).map(|s| s.2).collect();
    ids.sort_unstable();
    Chosen { ids, split: true }
}

/// The row's free non-accessible seats as `(rank, |2p - 2c|, id)`.
fn free_plain_seats(row: &Row, state: &SeatState, out: &mut Vec<(i64, i64, u32)>) {
    let mut id = row.first_id;
    for pos in 1..=row.positions {
        match row.spot(pos) {
            Spot::Blocked => continue,
            Spot::Seat if state.is_free(id) => {
                let distance = (2 * i64::from(pos) - row.center2).abs();
                out.push((row.rank, distance, id));
            }
            _ => {}
        }
        id += 1;
    }
}

/// Whether a pick of `ids` (any order) may be taken: every seat exists,
/// is given once and is free, and it leaves no single seat alone next to
/// it where the same row has as many adjacent free non-accessible seats
/// whose taking would leave none (the lenient orphan rule).
pub fn check_pick(layout: &Layout, state: &SeatState, ids: &[u32]) -> Result<(), PickError> {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    if let Some(&id) = sorted.iter().find(|id| layout.place(**id).is_none()) {
        return Err(PickError::Unknown(id));
    }
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(PickError::Twice(w[0]));
    }
    if let Some(&id) = sorted.iter().find(|id| !state.is_free(**id)) {
        return Err(PickError::Taken(id));
    }
    let mut i = 0;
    while i < sorted.len() {
        let row = layout.place(sorted[i]).map_or(0, |p| p.row);
        let end = i + sorted[i..]
            .iter()
            .take_while(|id| layout.place(**id).is_some_and(|p| p.row == row))
            .count();
        orphan_in_row(layout, state, row, &sorted[i..end])?;
        i = end;
    }
    Ok(())
}

/// The orphan rule in one row, for the picked seats `picked` of it.
fn orphan_in_row(
    layout: &Layout,
    state: &SeatState,
    r: u32,
    picked: &[u32],
) -> Result<(), PickError> {
    let row = &layout.rows[r as usize];
    let free_after = |pos: u32| -> Option<u32> {
        if pos == 0 || pos > row.positions || row.spot(pos) == Spot::Blocked {
            return None;
        }
        let id = row.id_at(pos);
        (state.is_free(id) && picked.binary_search(&id).is_err()).then_some(id)
    };
    let mut lone: Option<u32> = None;
    for &id in picked {
        let pos = layout.place(id).map_or(0, |p| p.position);
        for q in [pos.wrapping_sub(1), pos + 1] {
            if let Some(single) = free_after(q) {
                let alone = free_after(q.wrapping_sub(1)).is_none() && free_after(q + 1).is_none();
                if alone && lone.is_none_or(|l| single < l) {
                    lone = Some(single);
                }
            }
        }
    }
    let Some(lone) = lone else { return Ok(()) };
    let k = picked.len() as u32;
    match best_in_row(layout, state, r, k, None) {
        Some((0, _, _, from)) => Err(PickError::Orphan {
            lone,
            from,
            to: from + k - 1,
        }),
        _ => Ok(()),
    }
}

/// The brute-force model: every candidate enumerated, no summaries, no
/// early stop (for the property tests, and a reader checking the rule).
pub mod reference {
    use super::*;

    /// Whether position `pos` of `row` is a free seat.
    fn free(row: &Row, state: &SeatState, pos: u32) -> bool {
        pos >= 1
            && pos <= row.positions
            && row.spot(pos) != Spot::Blocked
            && state.is_free(row.id_at(pos))
    }

    /// The free run length from `pos` going by `step` (-1 or +1).
    fn run(row: &Row, state: &SeatState, pos: u32, step: i64) -> u32 {
        let mut n = 0;
        let mut p = i64::from(pos) + step;
        while p >= 1 && free(row, state, p as u32) {
            n += 1;
            p += step;
        }
        n
    }

    /// Every candidate of the request with its key.
    pub fn candidates(layout: &Layout, state: &SeatState, request: &Request) -> Vec<Key> {
        let n = request.count;
        let mut out = Vec::new();
        for row in layout.rows.iter().filter(|r| request.allows(r)) {
            for p in 1..=row.positions {
                let q = p + n - 1;
                if n == 0 || q > row.positions || !(p..=q).all(|x| free(row, state, x)) {
                    continue;
                }
                let acc = (p..=q).filter(|x| row.spot(*x) == Spot::Accessible).count() as u32;
                if !request.accessible.map_or(acc == 0, |k| acc >= k) {
                    continue;
                }
                let (l, r) = (run(row, state, p, -1), run(row, state, q, 1));
                let orphans = u8::from(l == 1) + u8::from(r == 1);
                let d = (i64::from(p + q) - row.center2).abs();
                out.push((orphans, row.rank, d, row.id_at(p)));
            }
        }
        out
    }

    pub fn best(layout: &Layout, state: &SeatState, request: &Request) -> Result<Chosen, NoFit> {
        let n = request.count;
        if let Some(k) = candidates(layout, state, request).into_iter().min() {
            return Ok(Chosen {
                ids: (k.3..k.3 + n).collect(),
                split: false,
            });
        }
        let mut seats = Vec::new();
        let mut takeable = 0;
        for row in layout.rows.iter().filter(|r| request.allows(r)) {
            for p in (1..=row.positions).filter(|p| free(row, state, *p)) {
                let accessible = row.spot(p) == Spot::Accessible;
                if !accessible || request.accessible.is_some() {
                    takeable += 1;
                }
                if !accessible {
                    let d = (2 * i64::from(p) - row.center2).abs();
                    seats.push((row.rank, d, row.id_at(p)));
                }
            }
        }
        if takeable < n {
            return Err(NoFit::SoldOut);
        }
        if !request.split || request.accessible.is_some() {
            return Err(NoFit::NotTogether { free: takeable });
        }
        seats.sort_unstable();
        let mut ids: Vec<u32> = seats.iter().take(n as usize).map(|s| s.2).collect();
        ids.sort_unstable();
        Ok(Chosen { ids, split: true })
    }

    /// The lowest position of `row` left free and alone, next to one of
    /// the picked positions `mine`, in the state `after` the pick.
    fn lone_in_row(row: &Row, after: &SeatState, mine: &[u32]) -> Option<u32> {
        (1..=row.positions).find(|p| {
            free(row, after, *p)
                && run(row, after, *p, -1) == 0
                && run(row, after, *p, 1) == 0
                && mine.iter().any(|m| m.abs_diff(*p) == 1)
        })
    }

    /// The pick rule, row by row over every position.
    pub fn check_pick(layout: &Layout, state: &SeatState, ids: &[u32]) -> Result<(), PickError> {
        let mut sorted = ids.to_vec();
        sorted.sort_unstable();
        for &id in &sorted {
            if layout.place(id).is_none() {
                return Err(PickError::Unknown(id));
            }
        }
        for w in sorted.windows(2) {
            if w[0] == w[1] {
                return Err(PickError::Twice(w[0]));
            }
        }
        for &id in &sorted {
            if !state.is_free(id) {
                return Err(PickError::Taken(id));
            }
        }
        let mut after = state.clone();
        after.set(layout, &sorted, super::super::state::Seat::Held);
        for (r, row) in layout.rows.iter().enumerate() {
            let mine: Vec<u32> = (1..=row.positions)
                .filter(|p| row.spot(*p) != Spot::Blocked && sorted.contains(&row.id_at(*p)))
                .collect();
            if mine.is_empty() {
                continue;
            }
            let lone = lone_in_row(row, &after, &mine);
            let Some(lone) = lone else { continue };
            let k = mine.len() as u32;
            let only_row = Request {
                count: k,
                ..Request::default()
            };
            let clean = candidates(layout, state, &only_row)
                .into_iter()
                .filter(|c| c.0 == 0 && layout.place(c.3).map(|p| p.row) == Some(r as u32))
                .min_by_key(|c| (c.2, c.3));
            if let Some(c) = clean {
                return Err(PickError::Orphan {
                    lone: row.id_at(lone),
                    from: c.3,
                    to: c.3 + k - 1,
                });
            }
        }
        Ok(())
    }
}
