//! A seated event in MySQL's terms, pure: the layout a batch is written
//! with ([`choose_layout`]), the `ticket_seat` rows and the
//! `ticket_seat_stock` rows of a layout, the categories an order's seats
//! fall in, and the peak need of a batch per category (what the one
//! conditional UPDATE per category must find, as the event's stock).

use super::Entry;
use protocol::record::Op;
use protocol::seats::Layout;

/// One `ticket_seat` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeatRow<'a> {
    pub id: u32,
    pub section: &'a str,
    pub row: &'a str,
    pub label: i64,
    pub category: &'a str,
    pub accessible: bool,
}

/// Every seat of `layout`, in id order.
pub fn seat_rows(layout: &Layout) -> impl Iterator<Item = SeatRow<'_>> {
    (1..=layout.total).filter_map(move |id| {
        let place = layout.place(id)?;
        let row = &layout.rows[place.row as usize];
        Some(SeatRow {
            id,
            section: &layout.sections[row.section as usize].name,
            row: &row.name,
            label: row.first + i64::from(place.position) - 1,
            category: &layout.categories[row.category as usize],
            accessible: layout.is_accessible(id),
        })
    })
}

/// Each category's name and number of seats (every category listed).
pub fn category_sizes(layout: &Layout) -> Vec<(&str, i64)> {
    let mut sizes = vec![0i64; layout.categories.len()];
    for row in &layout.rows {
        sizes[row.category as usize] += i64::from(row.seats);
    }
    layout
        .categories
        .iter()
        .map(String::as_str)
        .zip(sizes)
        .collect()
}

/// How many of `tickets` fall in each category (by index); `Err(t)` for
/// the first ticket that is no seat of the layout.
pub fn tally(layout: &Layout, tickets: &[i64]) -> Result<Vec<i64>, i64> {
    let mut out = vec![0i64; layout.categories.len()];
    for &t in tickets {
        let row = u32::try_from(t)
            .ok()
            .and_then(|id| layout.row_of(id))
            .ok_or(t)?;
        out[row.category as usize] += 1;
    }
    Ok(out)
}

/// A batch's takes and give-backs per category, in log order: the net
/// change and the peak of the running total over its prefixes (what the
/// stock must hold before the batch so that no prefix oversells).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CategoryNeed {
    running: Vec<i64>,
    peak: Vec<i64>,
}

impl CategoryNeed {
    /// Seats taken (`sign` 1) or given back (`sign` -1), by category.
    pub fn add(&mut self, counts: &[i64], sign: i64) {
        if self.running.len() < counts.len() {
            self.running.resize(counts.len(), 0);
            self.peak.resize(counts.len(), 0);
        }
        for (c, n) in counts.iter().enumerate() {
            self.running[c] += sign * n;
            self.peak[c] = self.peak[c].max(self.running[c]);
        }
    }

    /// `(category index, need, delta)` of every category the batch
    /// touched: `UPDATE .. SET remaining = remaining - delta WHERE
    /// remaining >= need`.
    pub fn updates(&self) -> Vec<(usize, i64, i64)> {
        self.running
            .iter()
            .zip(&self.peak)
            .enumerate()
            .filter(|(_, (delta, need))| **delta != 0 || **need != 0)
            .map(|(c, (delta, need))| (c, *need, *delta))
            .collect()
    }
}

/// The layout a batch is written with: the one MySQL stores for the
/// event, else (a new event) the one its first entry's `init` carries;
/// None for an unseated event, or an init's layout that is not valid (the
/// slow path makes that init a `bad_layout` conflict).
pub fn choose_layout(stored: Option<String>, todo: &[Entry]) -> Option<Layout> {
    if let Some(json) = stored {
        return Layout::parse(&json).ok();
    }
    let init = todo.first().and_then(|e| e.rec.as_ref().ok());
    match init.map(|r| &r.op) {
        Some(Op::Init {
            layout: Some(json),
            total,
            ..
        }) => init_layout(json, *total).ok(),
        _ => None,
    }
}

/// An init's layout, valid only when it parses and has `total` seats.
pub fn init_layout(json: &str, total: i64) -> Result<Layout, String> {
    let layout = Layout::parse(json).map_err(|e| e.0)?;
    layout.check_total(total).map_err(|e| e.0)?;
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    const VENUE: &str = r#"{"sections":[
      {"name":"A","rows":[{"name":"1","seats":4,"first":101,"blocked":[2]},{"name":"2","seats":3,"accessible":[3]}]},
      {"name":"B","category":"box","rows":[{"name":"1","seats":2}]}]}"#;

    #[test]
    fn rows_stocks_and_tallies_of_a_layout() {
        let layout = Layout::parse(VENUE).unwrap();
        let rows: Vec<SeatRow> = seat_rows(&layout).collect();
        assert_eq!(rows.len(), 8);
        assert_eq!(
            (rows[1].id, rows[1].row, rows[1].label),
            (2, "1", 103),
            "position 2 is blocked: seat 2 is the third position"
        );
        assert!(rows[5].accessible && !rows[4].accessible);
        assert_eq!((rows[7].section, rows[7].category), ("B", "box"));
        assert_eq!(category_sizes(&layout), [("general", 6), ("box", 2)]);
        assert_eq!(tally(&layout, &[1, 7, 8]), Ok(vec![1, 2]));
        assert_eq!(tally(&layout, &[1, 9]), Err(9));
        assert_eq!(tally(&layout, &[-1]), Err(-1));
    }

    #[test]
    fn the_need_is_the_peak_of_the_running_total() {
        let mut need = CategoryNeed::default();
        need.add(&[2, 0], 1);
        need.add(&[0, 1], 1);
        need.add(&[2, 0], -1);
        need.add(&[1, 0], 1);
        assert_eq!(need.updates(), [(0, 2, 1), (1, 1, 1)]);
        let mut back = CategoryNeed::default();
        back.add(&[3], -1);
        assert_eq!(back.updates(), [(0, 0, -3)]);
    }
}
