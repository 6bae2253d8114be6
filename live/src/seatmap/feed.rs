//! What a seat-map poller publishes, and the pure rule deciding it: a new
//! version of the map only when a seat changed — once per tick at most,
//! which coalesces a burst to `--max-rate` messages a second — carrying
//! both the whole map and the changes from the version before, so each
//! subscriber is sent the changes when it has that version and the whole
//! map when it skipped some (a slow reader) or just connected.

use std::sync::Arc;

use super::diff::{changes_json, diff, map_json, MERGE_GAP};
use crate::source::ReadError;

/// One version of an event's seat map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Map {
    /// The SSE message id of this version.
    pub id: u64,
    /// The layout as `TICKET.LAYOUT` returned it; one allocation shared by
    /// every version of the same layout.
    pub layout: Arc<str>,
    /// The seat states, one byte per seat id.
    pub seats: Arc<[u8]>,
    /// The whole-map message's JSON (serialised once, not per subscriber).
    pub whole: Arc<str>,
    /// The changes from the version before, when that one had the same
    /// layout and the changes are smaller than the whole map.
    pub changes: Option<Changes>,
}

/// The changes from version `base` to this one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changes {
    pub base: u64,
    pub json: Arc<str>,
}

/// The newest state of one watched event's seat map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapFeed {
    /// No read has finished yet.
    Pending,
    /// Redis was unreachable for every read so far.
    Down(String),
    /// Redis answered `-NOEVENT`.
    Missing {
        id: u64,
    },
    /// The event exists but is not seated (general admission).
    Unseated {
        id: u64,
    },
    Map(Arc<Map>),
}

/// What one tick read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MapRead {
    /// `TICKET.SEATMAP`'s states, and `TICKET.LAYOUT`'s JSON when this tick
    /// read it (see [`needs_layout`]).
    Seated {
        seats: Vec<u8>,
        layout: Option<String>,
    },
    /// A nil reply: the event is not seated.
    Unseated,
}

/// A seat-map poller's memory between ticks besides the published feed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct MapPoll {
    /// A read failed since the last publication: re-read the layout and
    /// publish the next good read even when nothing changed.
    pub stale: bool,
}

/// Whether this tick must read the layout too: when no map of this length
/// is published yet (first read, an event that came back, or another
/// number of seats) or after a failed read (the event may have been
/// recreated meanwhile). Otherwise the layout read once is kept: one
/// `TICKET.SEATMAP` a tick is all a watched event costs.
pub fn needs_layout(current: &MapFeed, poll: MapPoll, seats: usize) -> bool {
    poll.stale || !matches!(current, MapFeed::Map(m) if m.seats.len() == seats)
}

/// Given the published feed and this tick's read, what to publish (None:
/// nothing) and the poller's new memory. `at` is the read time (unix ms);
/// `new_id` is called only when something is published.
pub fn next_map(
    event: &str,
    current: &MapFeed,
    poll: MapPoll,
    read: Result<MapRead, ReadError>,
    at: u64,
    new_id: impl FnOnce() -> u64,
) -> (Option<MapFeed>, MapPoll) {
    let fresh = MapPoll { stale: false };
    match read {
        Ok(MapRead::Seated { seats, layout }) => {
            let map = next_version(event, current, poll, seats, layout, at, new_id);
            (map.map(|m| MapFeed::Map(Arc::new(m))), fresh)
        }
        Ok(MapRead::Unseated) => match current {
            MapFeed::Unseated { .. } if !poll.stale => (None, poll),
            _ => (Some(MapFeed::Unseated { id: new_id() }), fresh),
        },
        Err(ReadError::Missing) => match current {
            MapFeed::Missing { .. } if !poll.stale => (None, poll),
            _ => (Some(MapFeed::Missing { id: new_id() }), fresh),
        },
        Err(ReadError::Unavailable(why)) => {
            let stale = MapPoll { stale: true };
            match current {
                MapFeed::Pending | MapFeed::Down(_) => (Some(MapFeed::Down(why)), stale),
                _ => (None, stale),
            }
        }
    }
}

/// The next version of a seated event's map, or None when nothing changed.
fn next_version(
    event: &str,
    current: &MapFeed,
    poll: MapPoll,
    seats: Vec<u8>,
    layout: Option<String>,
    at: u64,
    new_id: impl FnOnce() -> u64,
) -> Option<Map> {
    let before = match current {
        MapFeed::Map(m) => Some(m),
        _ => None,
    };
    // The same layout keeps its allocation, which tells subscribers that
    // it need not be sent again.
    let layout: Arc<str> = match (layout, before) {
        (Some(l), Some(m)) if *m.layout == *l => m.layout.clone(),
        (Some(l), _) => Arc::from(l),
        (None, Some(m)) => m.layout.clone(),
        // needs_layout() asks for it whenever there is no map yet.
        (None, None) => return None,
    };
    let same = before.filter(|m| Arc::ptr_eq(&m.layout, &layout));
    let runs = same.and_then(|m| diff(&m.seats, &seats, MERGE_GAP));
    if runs.as_ref().is_some_and(Vec::is_empty) && !poll.stale {
        return None;
    }
    let id = new_id();
    let whole: Arc<str> = Arc::from(map_json(event, at, &seats));
    let changes = match (same, runs) {
        (Some(m), Some(runs)) => {
            let json = changes_json(event, at, m.id, &seats, &runs);
            (json.len() < whole.len()).then(|| Changes {
                base: m.id,
                json: Arc::from(json),
            })
        }
        _ => None,
    };
    Some(Map {
        id,
        layout,
        seats: Arc::from(seats),
        whole,
        changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: &str = r#"{"sections":[]}"#;

    fn seated(seats: &[u8], layout: Option<&str>) -> Result<MapRead, ReadError> {
        Ok(MapRead::Seated {
            seats: seats.to_vec(),
            layout: layout.map(str::to_owned),
        })
    }

    fn map(feed: Option<MapFeed>) -> Arc<Map> {
        match feed {
            Some(MapFeed::Map(m)) => m,
            other => panic!("not a map: {other:?}"),
        }
    }

    fn first(seats: &[u8]) -> Arc<Map> {
        let (f, _) = next_map(
            "e",
            &MapFeed::Pending,
            MapPoll::default(),
            seated(seats, Some(LAYOUT)),
            1,
            || 10,
        );
        map(f)
    }

    /// 60 free seats but those given: (1-based id, state).
    fn seats(taken: &[(usize, u8)]) -> Vec<u8> {
        let mut s = vec![b'.'; 60];
        for (id, b) in taken {
            s[id - 1] = *b;
        }
        s
    }

    #[test]
    fn the_first_read_is_a_whole_map_and_the_next_change_a_diff() {
        let m = first(&seats(&[]));
        assert_eq!((m.id, m.changes.as_ref()), (10, None));
        let dots = ".".repeat(60);
        assert_eq!(
            &*m.whole,
            format!(r#"{{"event":"e","at":1,"seats":"{dots}"}}"#)
        );
        let cur = MapFeed::Map(m.clone());
        assert!(!needs_layout(&cur, MapPoll::default(), 60));
        let read = seated(&seats(&[(2, b's'), (3, b's')]), None);
        let (f, _) = next_map("e", &cur, MapPoll::default(), read, 2, || 11);
        let next = map(f);
        assert!(Arc::ptr_eq(&next.layout, &m.layout));
        let changes = next.changes.clone().expect("changes");
        assert_eq!(changes.base, 10);
        assert_eq!(
            &*changes.json,
            r#"{"event":"e","at":2,"base":10,"runs":[[2,"ss"]]}"#
        );
    }

    #[test]
    fn nothing_changed_publishes_nothing_unless_after_an_outage() {
        let held = seats(&[(2, b'h')]);
        let cur = MapFeed::Map(first(&held));
        let (f, p) = next_map(
            "e",
            &cur,
            MapPoll::default(),
            seated(&held, None),
            2,
            || panic!("no id"),
        );
        assert_eq!((f, p), (None, MapPoll::default()));
        let down = Err(ReadError::Unavailable("refused".into()));
        let (f, p) = next_map("e", &cur, p, down, 3, || panic!("no id"));
        assert_eq!(f, None, "subscribers keep the last map");
        assert!(p.stale && needs_layout(&cur, p, 60));
        let (f, p) = next_map("e", &cur, p, seated(&held, Some(LAYOUT)), 4, || 12);
        let again = map(f);
        assert_eq!(again.id, 12, "the same map, published again");
        assert!(again
            .changes
            .as_ref()
            .is_some_and(|c| c.json.contains("\"runs\":[]")));
        assert!(!p.stale);
    }

    #[test]
    fn a_new_layout_or_length_has_no_changes() {
        let cur = MapFeed::Map(first(b"...."));
        assert!(needs_layout(&cur, MapPoll::default(), 5));
        let (f, _) = next_map(
            "e",
            &cur,
            MapPoll::default(),
            seated(b".....", Some("{}")),
            2,
            || 11,
        );
        let m = map(f);
        assert_eq!((m.changes.clone(), &*m.layout), (None, "{}"));
        let (f, _) = next_map(
            "e",
            &cur,
            MapPoll::default(),
            seated(b"s...", Some("{}")),
            2,
            || 11,
        );
        assert_eq!(map(f).changes, None, "same length, other layout");
    }

    #[test]
    fn changes_bigger_than_the_map_are_not_kept() {
        let cur = MapFeed::Map(first(b".s.s.s"));
        let (f, _) = next_map(
            "e",
            &cur,
            MapPoll::default(),
            seated(b"s.s.s.", None),
            2,
            || 11,
        );
        let m = map(f);
        assert_eq!(m.changes, None, "{}", m.whole);
    }

    #[test]
    fn unseated_missing_and_down_are_published_once() {
        let (f, p) = next_map(
            "e",
            &MapFeed::Pending,
            MapPoll::default(),
            Ok(MapRead::Unseated),
            1,
            || 3,
        );
        let f = f.unwrap();
        assert_eq!(f, MapFeed::Unseated { id: 3 });
        assert_eq!(next_map("e", &f, p, Ok(MapRead::Unseated), 1, || 4).0, None);
        let (m, _) = next_map("e", &f, p, Err(ReadError::Missing), 1, || 5);
        let m = m.unwrap();
        assert_eq!(m, MapFeed::Missing { id: 5 });
        assert_eq!(
            next_map("e", &m, p, Err(ReadError::Missing), 1, || 6).0,
            None
        );
        let down = || Err(ReadError::Unavailable("x".into()));
        let (d, _) = next_map("e", &MapFeed::Pending, p, down(), 1, || 7);
        assert_eq!(d, Some(MapFeed::Down("x".into())));
        assert_eq!(next_map("e", &m, p, down(), 1, || 7).0, None);
    }

    #[test]
    fn no_layout_and_no_map_publishes_nothing() {
        let (f, _) = next_map(
            "e",
            &MapFeed::Pending,
            MapPoll::default(),
            seated(b"..", None),
            1,
            || 1,
        );
        assert_eq!(f, None);
    }
}
