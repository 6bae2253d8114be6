//! Target `layout`: a seated event's layout JSON, as `TICKET.INIT ...
//! SEATS` and `TICKET.RESTORE ... BEGIN ... SEATS` hand it to
//! `protocol::seats::Layout::parse` (the module takes only UTF-8 there).
//!
//! Beyond "no panic", for every layout the module would store
//! (`Layout::stored`, what `INIT` and `RESTORE` check): its stored form
//! (what the meta hash, the init record and `TICKET.LAYOUT` carry) parses
//! back to the same layout, so a stored layout is always usable again
//! (docs/design.md "Safety inside Redis": limits hold for what is stored);
//! every seat id maps to a seat and back; and no two seats share a name
//! (`<section>-<row>-<label>`).

use std::collections::HashMap;

use protocol::seats::layout::Spot;
use protocol::seats::Layout;

use crate::check::cut;

/// The target's body.
pub fn run(data: &[u8]) {
    let Ok(json) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(layout) = Layout::parse(json) else {
        return;
    };
    let Ok(stored) = Layout::stored(json, i64::from(layout.total)) else {
        return; // refused whole: too large once stored
    };
    stored_form_round_trips(&layout, &stored);
    ids_map_to_seats(&layout);
    names_are_unique(&layout);
}

fn stored_form_round_trips(layout: &Layout, stored: &str) {
    match Layout::parse(stored) {
        Ok(again) => assert!(
            again == *layout,
            "the stored form {} parses to another layout",
            cut(stored)
        ),
        Err(e) => panic!(
            "the stored form ({} bytes) of a layout that parsed does not parse: {}",
            stored.len(),
            cut(&e.0)
        ),
    }
}

/// Seat ids `1..=total`, in layout order: each is a seat of its row, and
/// the row gives the id back.
fn ids_map_to_seats(layout: &Layout) {
    let seats: u32 = layout.rows.iter().map(|r| r.seats).sum();
    assert_eq!(seats, layout.total, "the rows' seats add up to the total");
    assert!(layout.check_total(i64::from(layout.total)).is_ok());
    for id in 1..=layout.total {
        let place = layout
            .place(id)
            .unwrap_or_else(|| panic!("seat {id} has no place"));
        let row = &layout.rows[place.row as usize];
        assert_ne!(
            row.spot(place.position),
            Spot::Blocked,
            "seat {id} is blocked"
        );
        assert_eq!(
            row.id_at(place.position),
            id,
            "seat {id} maps back to another id"
        );
    }
    assert!(layout.place(0).is_none() && layout.place(layout.total + 1).is_none());
}

fn names_are_unique(layout: &Layout) {
    let mut seen: HashMap<String, u32> = HashMap::new();
    for id in 1..=layout.total {
        if let Some(other) = seen.insert(layout.seat_name(id), id) {
            panic!(
                "seats {other} and {id} share the name {:?}",
                layout.seat_name(id)
            );
        }
    }
}
