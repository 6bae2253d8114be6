//! The soak's seated sale: a small venue (two sections of five rows of ten
//! seats, 100 seats, LIMIT 4) where each user is a party of 1-4 that asks
//! for the best seats together (`COUNT n`) or picks seats by id (`SEATS`),
//! held for a while, then confirmed or cancelled. A refusal of the seat
//! rules (`NOTOGETHER`, `TAKEN`, `ORPHAN`) wrote nothing, like `SOLDOUT`.

use super::rng::Rng;

/// Seats per row, rows per section, sections.
const SEATS: i64 = 10;
const ROWS: i64 = 5;
const SECTIONS: i64 = 2;

/// The venue's seats (the event's `total`).
pub const TOTAL: i64 = SEATS * ROWS * SECTIONS;

/// The layout given to `TICKET.INIT ... SEATS`: sections `A` (category
/// `front`) and `B` (`back`), rows `1`-`5`, seat 1 of each first row a
/// wheelchair space.
pub fn layout() -> String {
    let rows = (1..=ROWS)
        .map(|r| {
            let accessible = if r == 1 { "[1]" } else { "[]" };
            format!(r#"{{"name":"{r}","seats":{SEATS},"accessible":{accessible}}}"#)
        })
        .collect::<Vec<_>>()
        .join(",");
    format!(
        r#"{{"sections":[{{"name":"A","category":"front","rows":[{rows}]}},{{"name":"B","category":"back","rows":[{rows}]}}]}}"#
    )
}

/// A party's claim: its size, and, one time in five, the seat ids it picks
/// (a run of adjacent ids inside one row, which may be taken or strand a
/// seat: the module refuses those).
pub fn party(rng: &mut Rng) -> (i64, Option<Vec<i64>>) {
    let size = rng.between(1, 4) as i64;
    if !rng.percent(20) {
        return (size, None);
    }
    let row_start = rng.below((TOTAL / SEATS) as u64) as i64 * SEATS + 1;
    let first = row_start + rng.below((SEATS - size + 1) as u64) as i64;
    (size, Some((first..first + size).collect()))
}

/// Error codes of the seat rules: refusals that leave the party with nothing.
pub fn refused_for_seats(code: &str) -> bool {
    matches!(code, "NOTOGETHER" | "TAKEN" | "ORPHAN")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_has_total_seats_and_picks_stay_in_a_row() {
        let json = layout();
        assert_eq!(json.matches(r#""seats":10"#).count() as i64 * SEATS, TOTAL);
        let mut rng = Rng::new(7);
        for _ in 0..1000 {
            let (size, pick) = party(&mut rng);
            assert!((1..=4).contains(&size));
            if let Some(ids) = pick {
                assert_eq!(ids.len() as i64, size);
                let row = |id: &i64| (id - 1) / SEATS;
                assert!(ids.iter().all(|id| row(id) == row(&ids[0]) && *id <= TOTAL));
            }
        }
    }
}
