//! Pure: the seat string of `TICKET.SEATMAP` (one byte per seat id, `.`
//! free, `h` held, `s` sold, `a` free in an allocation, `r` listed for
//! resale), what changed between two of them as *runs*
//! (a first seat id and the new states of it and the ids after it), and
//! the JSON of the two messages a seat-map stream carries: the whole map
//! and the changes.
//!
//! Runs rather than one `[id, state]` pair per seat because a party's seats
//! are adjacent ids: a claim of 6 is one run of 6 bytes. Two runs closer
//! than [`MERGE_GAP`] seats become one (the unchanged seats between them
//! are sent with their current state, which applying leaves as they are):
//! a run costs about 10 bytes of JSON framing, more than a few seat bytes.

use std::fmt::Write;

/// Runs separated by at most this many unchanged seats are merged.
pub const MERGE_GAP: usize = 8;

/// A seat state byte.
pub fn valid_state(b: u8) -> bool {
    matches!(b, b'.' | b'h' | b's' | b'a' | b'r')
}

/// Checks a `TICKET.SEATMAP` reply: every byte a known state.
pub fn check_seats(seats: &[u8]) -> Result<(), String> {
    match seats.iter().position(|b| !valid_state(*b)) {
        None => Ok(()),
        Some(i) => Err(format!(
            "TICKET.SEATMAP byte {:?} for seat {} is not one of . h s a r",
            char::from(seats[i]),
            i + 1
        )),
    }
}

/// A run of changed seats: `ids first..first + len` (1-based seat ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub first: u32,
    pub len: u32,
}

/// The runs that turn `old` into `new` (same length), gaps of at most
/// `merge_gap` unchanged seats merged; empty when they are equal. None
/// when the lengths differ (a different event: send the whole map).
pub fn diff(old: &[u8], new: &[u8], merge_gap: usize) -> Option<Vec<Run>> {
    if old.len() != new.len() {
        return None;
    }
    let mut runs: Vec<Run> = Vec::new();
    // (start, end) of the open run, 0-based, end exclusive.
    let mut open: Option<(usize, usize)> = None;
    for i in (0..new.len()).filter(|&i| old[i] != new[i]) {
        open = match open {
            Some((start, end)) if i - end <= merge_gap => Some((start, i + 1)),
            Some(done) => {
                runs.push(to_run(done));
                Some((i, i + 1))
            }
            None => Some((i, i + 1)),
        };
    }
    runs.extend(open.map(to_run));
    Some(runs)
}

fn to_run((start, end): (usize, usize)) -> Run {
    Run {
        first: start as u32 + 1,
        len: (end - start) as u32,
    }
}

/// Appends `"event":<json string>,"at":<ms>` (the fields every message has).
fn head(out: &mut String, event: &str, at: u64) {
    // An event id is 1-64 bytes of [A-Za-z0-9_.:-]: nothing to escape.
    let _ = write!(out, "{{\"event\":\"{event}\",\"at\":{at}");
}

/// The whole-map message: `{"event":E,"at":ms,"seats":"..hs"}`.
pub fn map_json(event: &str, at: u64, seats: &[u8]) -> String {
    let mut out = String::with_capacity(seats.len() + 64);
    head(&mut out, event, at);
    out.push_str(",\"seats\":\"");
    // Checked states are ASCII and need no escaping.
    out.push_str(&String::from_utf8_lossy(seats));
    out.push_str("\"}");
    out
}

/// The changes message: `{"event":E,"at":ms,"base":id,"runs":[[id,"ss"],...]}`,
/// `base` being the id of the message these changes apply to.
pub fn changes_json(event: &str, at: u64, base: u64, new: &[u8], runs: &[Run]) -> String {
    let mut out = String::with_capacity(runs.len() * 16 + 64);
    head(&mut out, event, at);
    let _ = write!(out, ",\"base\":{base},\"runs\":[");
    for (i, run) in runs.iter().enumerate() {
        let start = run.first as usize - 1;
        let states = &new[start..start + run.len as usize];
        let sep = if i > 0 { "," } else { "" };
        let _ = write!(
            out,
            "{sep}[{},\"{}\"]",
            run.first,
            String::from_utf8_lossy(states)
        );
    }
    out.push_str("]}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Writes `runs` onto `seats` with their states from `new` (what a viewer
    /// does with a changes message; the tests' model of the page).
    fn apply(seats: &mut [u8], runs: &[(u32, Vec<u8>)]) {
        for (first, states) in runs {
            let start = *first as usize - 1;
            seats[start..start + states.len()].copy_from_slice(states);
        }
    }

    fn runs_of(new: &[u8], runs: &[Run]) -> Vec<(u32, Vec<u8>)> {
        runs.iter()
            .map(|r| {
                let s = r.first as usize - 1;
                (r.first, new[s..s + r.len as usize].to_vec())
            })
            .collect()
    }

    #[test]
    fn a_party_is_one_run_and_far_changes_are_two() {
        let old = b"..........................";
        let new = b"..ssss..............h.....";
        let runs = diff(old, new, MERGE_GAP).unwrap();
        assert_eq!(
            runs,
            vec![Run { first: 3, len: 4 }, Run { first: 21, len: 1 }]
        );
        assert_eq!(
            changes_json("e", 5, 9, new, &runs),
            r#"{"event":"e","at":5,"base":9,"runs":[[3,"ssss"],[21,"h"]]}"#
        );
    }

    #[test]
    fn near_changes_merge_and_carry_the_seats_between() {
        let old = b"s........";
        let new = b"h..s.....";
        let runs = diff(old, new, 2).unwrap();
        assert_eq!(runs, vec![Run { first: 1, len: 4 }]);
        assert_eq!(runs_of(new, &runs), vec![(1, b"h..s".to_vec())]);
        assert_eq!(diff(old, new, 1).unwrap().len(), 2);
    }

    #[test]
    fn equal_maps_have_no_runs_and_other_lengths_no_diff() {
        assert_eq!(diff(b"..s", b"..s", MERGE_GAP), Some(vec![]));
        assert_eq!(diff(b"..s", b"..s.", MERGE_GAP), None);
        assert_eq!(
            changes_json("e", 1, 2, b"", &[]),
            r#"{"event":"e","at":1,"base":2,"runs":[]}"#
        );
    }

    #[test]
    fn the_whole_map_and_unknown_states() {
        assert_eq!(
            map_json("gig", 7, b".hs"),
            r#"{"event":"gig","at":7,"seats":".hs"}"#
        );
        assert!(check_seats(b"..hsa").is_ok());
        let err = check_seats(b"..x").unwrap_err();
        assert!(err.contains("'x'") && err.contains("seat 3"), "{err}");
    }

    fn seat_map(len: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(b'.'), Just(b'h'), Just(b's'), Just(b'a'), Just(b'r')],
            len,
        )
    }

    proptest! {
        /// Applying the runs to the old map gives the new one, runs are
        /// ascending and apart, and no seat outside them changed.
        #[test]
        fn applying_the_runs_gives_the_new_map(
            (old, new) in (0usize..300).prop_flat_map(|n| (seat_map(n), seat_map(n))),
            gap in 0usize..12,
        ) {
            let runs = diff(&old, &new, gap).unwrap();
            let mut seen = old.clone();
            apply(&mut seen, &runs_of(&new, &runs));
            prop_assert_eq!(&seen, &new);
            for w in runs.windows(2) {
                prop_assert!(w[0].first + w[0].len + (gap as u32) < w[1].first);
            }
            let json: serde_json::Value =
                serde_json::from_str(&changes_json("e", 1, 2, &new, &runs)).unwrap();
            prop_assert_eq!(json["runs"].as_array().unwrap().len(), runs.len());
        }
    }
}
