//! The state of every seat of a seated event (free, held, sold) and, per
//! row, the summary the search skips rows by (docs/design.md "Reserved
//! seating: the data structure").
//!
//! One byte per seat in memory, plus 16 bytes per row: how many seats are
//! free (and how many of those are accessible), and the longest run of
//! adjacent free seats (all of them, and the non-accessible ones). A claim
//! of `n` visits only rows whose run is at least `n`, so in a nearly sold
//! venue it reads a few thousand summaries instead of every seat. A change
//! recomputes the summary of its row only (`O(positions in the row)`).
//!
//! What Redis stores is the packed form ([`SeatState::packed`]): 2 bits per
//! seat, 4 seats a byte, so the key costs a quarter byte per seat.

use super::layout::{Layout, Spot};

/// One seat's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seat {
    Free = 0,
    Held = 1,
    Sold = 2,
    /// In an allocation, free for its claims only (docs/design.md
    /// "Allocations").
    Allocated = 3,
}

impl Seat {
    /// Its byte in `TICKET.SEATMAP`: `.` free, `h` held, `s` sold, `a`
    /// free in an allocation.
    pub fn map_byte(self) -> u8 {
        match self {
            Seat::Free => b'.',
            Seat::Held => b'h',
            Seat::Sold => b's',
            Seat::Allocated => b'a',
        }
    }

    /// From its 2 bits in the packed form.
    pub fn from_bits(bits: u8) -> Option<Seat> {
        match bits {
            0 => Some(Seat::Free),
            1 => Some(Seat::Held),
            2 => Some(Seat::Sold),
            3 => Some(Seat::Allocated),
            _ => None,
        }
    }
}

/// The bytes of the packed form of `total` seats.
pub fn packed_len(total: u32) -> usize {
    (total as usize).div_ceil(4)
}

/// Where seat `id` lives in the packed form: its byte and the shift of its
/// 2 bits in it.
pub fn packed_slot(id: u32) -> (usize, u32) {
    let i = id as usize - 1;
    (i / 4, (i % 4) as u32 * 2)
}

/// What the search knows of a row without reading its seats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowSummary {
    /// Free seats, accessible ones included.
    pub free: u32,
    /// Free accessible seats.
    pub free_accessible: u32,
    /// The longest run of adjacent free non-accessible seats.
    pub run_plain: u32,
    /// The longest run of adjacent free seats.
    pub run_any: u32,
}

/// Every seat's state and every row's summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatState {
    /// By seat id - 1.
    seats: Vec<Seat>,
    rows: Vec<RowSummary>,
    free: u32,
}

impl SeatState {
    /// Every seat free.
    pub fn new(layout: &Layout) -> SeatState {
        let mut state = SeatState {
            seats: vec![Seat::Free; layout.total as usize],
            rows: vec![RowSummary::default(); layout.rows.len()],
            free: layout.total,
        };
        (0..layout.rows.len()).for_each(|r| state.summarize(layout, r));
        state
    }

    /// From the packed form Redis stores; `Err` when it does not fit the
    /// layout (wrong length, a state that is none).
    pub fn from_packed(layout: &Layout, packed: &[u8]) -> Result<SeatState, String> {
        if packed.len() != packed_len(layout.total) {
            return Err(format!(
                "has {} bytes, not the {} of {} seats",
                packed.len(),
                packed_len(layout.total),
                layout.total
            ));
        }
        let mut seats = Vec::with_capacity(layout.total as usize);
        for id in 1..=layout.total {
            let (byte, shift) = packed_slot(id);
            let bits = (packed[byte] >> shift) & 3;
            seats.push(Seat::from_bits(bits).ok_or_else(|| format!("seat {id} has state 3"))?);
        }
        let free = seats.iter().filter(|s| **s == Seat::Free).count() as u32;
        let mut state = SeatState {
            seats,
            rows: vec![RowSummary::default(); layout.rows.len()],
            free,
        };
        (0..layout.rows.len()).for_each(|r| state.summarize(layout, r));
        Ok(state)
    }

    /// Only `ids` free (valid ids), every other seat taken: what the
    /// rules see of an allocation's free seats.
    pub fn only(layout: &Layout, ids: &[u32]) -> SeatState {
        let mut state = SeatState {
            seats: vec![Seat::Sold; layout.total as usize],
            rows: vec![RowSummary::default(); layout.rows.len()],
            free: 0,
        };
        state.set(layout, ids, Seat::Free);
        state
    }

    /// The packed form: 2 bits per seat, seat 1 in the low bits of byte 0.
    pub fn packed(&self) -> Vec<u8> {
        let mut out = vec![0u8; packed_len(self.seats.len() as u32)];
        for (i, seat) in self.seats.iter().enumerate() {
            let (byte, shift) = packed_slot(i as u32 + 1);
            out[byte] |= (*seat as u8) << shift;
        }
        out
    }

    /// One byte per seat: `.` free, `h` held, `s` sold.
    pub fn seat_map(&self) -> Vec<u8> {
        self.seats.iter().map(|s| s.map_byte()).collect()
    }

    /// Seat `id`'s state (a valid id).
    #[inline]
    pub fn get(&self, id: u32) -> Seat {
        self.seats[id as usize - 1]
    }

    /// Seat `id`'s state, `None` for an id the event does not have.
    pub fn state_of(&self, id: u32) -> Option<Seat> {
        self.seats.get((id as usize).wrapping_sub(1)).copied()
    }

    #[inline]
    pub fn is_free(&self, id: u32) -> bool {
        self.seats
            .get((id as usize).wrapping_sub(1))
            .is_some_and(|s| *s == Seat::Free)
    }

    /// Free seats in the event.
    pub fn free(&self) -> u32 {
        self.free
    }

    /// Row `row`'s summary.
    #[inline]
    pub fn row(&self, row: u32) -> RowSummary {
        self.rows[row as usize]
    }

    /// Sets the state of `ids` (valid ids), then the summaries of their rows.
    pub fn set(&mut self, layout: &Layout, ids: &[u32], seat: Seat) {
        let mut touched: Vec<u32> = Vec::new();
        for &id in ids {
            let Some(slot) = self.seats.get_mut((id as usize).wrapping_sub(1)) else {
                continue;
            };
            let was_free = *slot == Seat::Free;
            *slot = seat;
            match (was_free, seat == Seat::Free) {
                (true, false) => self.free -= 1,
                (false, true) => self.free += 1,
                _ => continue,
            }
            if let Some(place) = layout.place(id) {
                if touched.last() != Some(&place.row) {
                    touched.push(place.row);
                }
            }
        }
        touched.dedup();
        for row in touched {
            self.summarize(layout, row as usize);
        }
    }

    /// Recomputes row `r`'s summary from its seats.
    fn summarize(&mut self, layout: &Layout, r: usize) {
        let row = &layout.rows[r];
        let mut s = RowSummary::default();
        let (mut run_any, mut run_plain, mut id) = (0, 0, row.first_id);
        for &spot in &row.spots {
            if spot == Spot::Blocked {
                (run_any, run_plain) = (0, 0);
                continue;
            }
            if self.seats[id as usize - 1] == Seat::Free {
                s.free += 1;
                run_any += 1;
                match spot {
                    Spot::Accessible => {
                        s.free_accessible += 1;
                        run_plain = 0;
                    }
                    _ => run_plain += 1,
                }
            } else {
                (run_any, run_plain) = (0, 0);
            }
            s.run_any = s.run_any.max(run_any);
            s.run_plain = s.run_plain.max(run_plain);
            id += 1;
        }
        self.rows[r] = s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hall() -> Layout {
        Layout::parse(
            r#"{"sections":[{"name":"A","rows":[
                {"name":"1","seats":6,"blocked":[3],"accessible":[6]},
                {"name":"2","seats":5}]}]}"#,
        )
        .unwrap()
    }

    #[test]
    fn summaries_follow_every_change() {
        let l = hall();
        let mut s = SeatState::new(&l);
        let r = s.row(0);
        assert_eq!(
            (r.free, r.free_accessible, r.run_plain, r.run_any),
            (5, 1, 2, 3)
        );
        // Row 1: positions 1 2 | 4 5 6a (ids 1 2 3 4 5).
        s.set(&l, &[4], Seat::Held);
        let r = s.row(0);
        assert_eq!((r.free, r.run_plain, r.run_any), (4, 2, 2));
        s.set(&l, &[1, 2], Seat::Sold);
        assert_eq!(s.row(0).run_plain, 1);
        assert_eq!(s.row(0).run_any, 1);
        assert_eq!(s.free(), 2 + 5);
        assert_eq!(
            s.seat_map(),
            b"ss.h.".iter().chain(b".....").copied().collect::<Vec<_>>()
        );
        s.set(&l, &[1, 2, 4], Seat::Free);
        assert_eq!(s, SeatState::new(&l));
    }

    #[test]
    fn the_packed_form_round_trips_and_is_checked() {
        let l = hall();
        let mut s = SeatState::new(&l);
        s.set(&l, &[2], Seat::Held);
        s.set(&l, &[5, 10], Seat::Sold);
        let packed = s.packed();
        assert_eq!(packed.len(), 3);
        assert_eq!(packed[0], 0b0000_0100);
        assert_eq!(SeatState::from_packed(&l, &packed), Ok(s));
        assert!(SeatState::from_packed(&l, &packed[..2]).is_err());
        let allocated = SeatState::from_packed(&l, &[3, 0, 0]).unwrap();
        assert_eq!((allocated.get(1), allocated.free()), (Seat::Allocated, 9));
        assert_eq!(allocated.seat_map()[..2], *b"a.");
        let only = SeatState::only(&l, &[2, 9]);
        assert_eq!(
            (only.free(), only.is_free(9), only.is_free(1)),
            (2, true, false)
        );
    }
}
