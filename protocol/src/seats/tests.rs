//! Property tests: the fast rules ([`super::rule`]) give exactly what the
//! brute-force model gives, on random small layouts and random histories.

use proptest::prelude::*;

use super::layout::Layout;
use super::rule::{self, reference, Request};
use super::state::{Seat, SeatState};

/// A random small layout as JSON: 1-3 sections of 1-3 rows of 1-12
/// positions, some blocked, some accessible, ranks often tied, centers
/// anywhere.
fn any_layout() -> impl Strategy<Value = String> {
    let row = (1u32..=12, any::<u16>(), any::<u16>(), 0i64..4, any::<u8>(), any::<bool>()).prop_map(
        |(seats, blocked, accessible, rank, center, cat)| {
            let pick = |mask: u16, skip: &[u32]| -> Vec<u32> {
                (1..=seats)
                    .filter(|p| mask & (1 << (p % 16)) != 0 && mask.is_multiple_of(3) && !skip.contains(p))
                    .collect()
            };
            let blocked = pick(blocked, &[]);
            let accessible = pick(accessible.rotate_left(3), &blocked);
            let center = 1.0 + f64::from(center % (2 * seats as u8 - 1).max(1)) / 2.0;
            let cat = if cat { r#","category":"vip""# } else { "" };
            format!(
                r#"{{"name":"R","seats":{seats},"blocked":{blocked:?},"accessible":{accessible:?},"rank":{rank},"center":{center}{cat}}}"#
            )
        },
    );
    let section = proptest::collection::vec(row, 1..=3);
    proptest::collection::vec(section, 1..=3).prop_map(|sections| {
        let sections: Vec<String> = sections
            .into_iter()
            .enumerate()
            .map(|(i, rows)| {
                let rows: Vec<String> = rows
                    .into_iter()
                    .enumerate()
                    .map(|(j, r)| r.replacen("\"R\"", &format!("\"{j}\""), 1))
                    .collect();
                format!(r#"{{"name":"S{i}","rows":[{}]}}"#, rows.join(","))
            })
            .collect();
        format!(r#"{{"sections":[{}]}}"#, sections.join(","))
    })
}

/// A layout, then a history: seats taken (held or sold) and freed.
fn any_state(layout: &Layout, history: &[(u16, u8)]) -> SeatState {
    let mut state = SeatState::new(layout);
    if layout.total == 0 {
        return state;
    }
    for &(seat, what) in history {
        let id = u32::from(seat) % layout.total + 1;
        let seat = match what % 4 {
            0 | 1 => Seat::Sold,
            2 => Seat::Held,
            _ => Seat::Free,
        };
        state.set(layout, &[id], seat);
    }
    state
}

fn request(
    layout: &Layout,
    (count, section, category, accessible, split): (u32, u8, u8, u8, bool),
) -> Request {
    let sections = layout.sections.len() as u32;
    Request {
        count,
        section: section
            .is_multiple_of(3)
            .then_some(u32::from(section) % sections),
        category: category
            .is_multiple_of(3)
            .then_some(u32::from(category) % layout.categories.len() as u32),
        accessible: accessible
            .is_multiple_of(4)
            .then_some(u32::from(accessible / 4) % count + 1),
        split,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn best_is_the_brute_force_best(
        json in any_layout(),
        history in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..40),
        asks in proptest::collection::vec((1u32..=6, any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>()), 1..6),
    ) {
        let Ok(layout) = Layout::parse(&json) else { return Ok(()) };
        prop_assume!(layout.total > 0);
        let mut state = any_state(&layout, &history);
        // A sale: each request takes what the rule gives, so the next one
        // runs on the state the previous one left.
        for ask in asks {
            let req = request(&layout, ask);
            let fast = rule::best(&layout, &state, &req);
            prop_assert_eq!(&fast, &reference::best(&layout, &state, &req), "{:?}", req);
            if let Ok(chosen) = fast {
                prop_assert_eq!(chosen.ids.len() as u32, req.count);
                prop_assert!(chosen.ids.iter().all(|id| state.is_free(*id)));
                state.set(&layout, &chosen.ids, Seat::Held);
            }
        }
        // The summaries are what a fresh computation gives.
        let rebuilt = SeatState::from_packed(&layout, &state.packed());
        prop_assert_eq!(rebuilt, Ok(state));
    }

    #[test]
    fn impossible_is_exactly_an_empty_venue_refusing(
        json in any_layout(),
        ask in (1u32..=8, any::<u8>(), any::<u8>(), any::<u8>(), any::<bool>()),
    ) {
        let Ok(layout) = Layout::parse(&json) else { return Ok(()) };
        prop_assume!(layout.total > 0);
        let req = request(&layout, ask);
        let empty = SeatState::new(&layout);
        let refused = reference::best(&layout, &empty, &req).is_err();
        prop_assert_eq!(rule::impossible(&layout, &req).is_some(), refused, "{:?}", req);
    }

    #[test]
    fn check_pick_is_the_brute_force_rule(
        json in any_layout(),
        history in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..40),
        picks in proptest::collection::vec(any::<u16>(), 1..5),
    ) {
        let Ok(layout) = Layout::parse(&json) else { return Ok(()) };
        prop_assume!(layout.total > 0);
        let state = any_state(&layout, &history);
        let ids: Vec<u32> = picks.iter().map(|p| u32::from(*p) % (layout.total + 1)).collect();
        prop_assert_eq!(rule::check_pick(&layout, &state, &ids), reference::check_pick(&layout, &state, &ids));
    }

    #[test]
    fn the_stored_form_round_trips(json in any_layout()) {
        if let Ok(layout) = Layout::parse(&json) {
            prop_assert_eq!(Layout::parse(&layout.to_json()), Ok(layout));
        }
    }

    #[test]
    fn parsing_never_panics(json in "[\\[\\]{}\":,a-z0-9. ]{0,80}") {
        let _ = Layout::parse(&json);
    }
}

/// The spec's worked cases on a hand-made row of 10 (center 5.5).
#[test]
fn orphans_rank_and_center_decide_in_that_order() {
    let layout = Layout::parse(
        r#"{"sections":[{"name":"A","rows":[
            {"name":"1","seats":10,"accessible":[10]},
            {"name":"2","seats":10}]}]}"#,
    )
    .unwrap();
    let mut state = SeatState::new(&layout);
    let two = Request {
        count: 2,
        ..Request::default()
    };
    // Empty: row 1, centered: positions 5..6.
    assert_eq!(rule::best(&layout, &state, &two).unwrap().ids, [5, 6]);
    // Row 1 sold but 1, 2, 4, 5: either pair leaves no single, (1,2) is
    // nearer the center? |3-11|=8 vs |9-11|=2: (4,5).
    let sold: Vec<u32> = [3, 6, 7, 8, 9].to_vec();
    state.set(&layout, &sold, Seat::Sold);
    assert_eq!(rule::best(&layout, &state, &two).unwrap().ids, [4, 5]);
    // Three together: row 1 has none (10 is accessible), row 2 does.
    let three = Request {
        count: 3,
        ..Request::default()
    };
    assert_eq!(
        rule::best(&layout, &state, &three).unwrap().ids,
        [14, 15, 16]
    );
    // A wheelchair space goes only to who asks.
    let acc = Request {
        count: 1,
        accessible: Some(1),
        ..Request::default()
    };
    assert_eq!(rule::best(&layout, &state, &acc).unwrap().ids, [10]);
    // A pick of 5 leaves 4 alone, but no single seat of row 1 would leave
    // none: the lenient rule lets it pass.
    assert_eq!(rule::check_pick(&layout, &state, &[5]), Ok(()));
    // In the empty row 2, a pick of its second seat leaves its first alone
    // while its fifth (nearest the center) would leave none.
    assert_eq!(
        rule::check_pick(&layout, &state, &[12]),
        Err(rule::PickError::Orphan {
            lone: 11,
            from: 15,
            to: 15
        })
    );
    assert_eq!(rule::check_pick(&layout, &state, &[11, 12]), Ok(()));
    assert_eq!(
        rule::check_pick(&layout, &state, &[3]),
        Err(rule::PickError::Taken(3))
    );
}

/// The bench's venue: 40 sections x 40 rows x 50 seats.
pub fn arena_json() -> String {
    let rows: Vec<String> = (1..=40)
        .map(|r| format!(r#"{{"name":"{r}","seats":50}}"#))
        .collect();
    let rows = rows.join(",");
    let sections: Vec<String> = (1..=40)
        .map(|s| format!(r#"{{"name":"S{s}","rows":[{rows}]}}"#))
        .collect();
    format!(r#"{{"sections":[{}]}}"#, sections.join(","))
}

#[test]
fn the_arena_parses_and_fills_fast_enough() {
    let json = arena_json();
    let started = std::time::Instant::now();
    let layout = Layout::parse(&json).unwrap();
    let stored = layout.to_json();
    let again = Layout::parse(&stored).unwrap();
    let mut state = SeatState::new(&again);
    let four = Request {
        count: 4,
        ..Request::default()
    };
    let first = rule::best(&again, &state, &four).unwrap();
    state.set(&again, &first.ids, Seat::Sold);
    let took = started.elapsed();
    eprintln!(
        "arena: parse, store, parse the stored form and claim: {took:?}, stored {} bytes",
        stored.len()
    );
    assert_eq!(layout.total, 80_000);
    assert_eq!(first.ids, [24, 25, 26, 27]);
    // Generous: a debug build on a busy machine.
    assert!(took < std::time::Duration::from_secs(2), "{took:?}");
}
