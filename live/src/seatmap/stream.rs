//! Pure: what one seat-map subscriber is sent for each feed it sees. It
//! gets the layout and the whole map at connect; then, for each version,
//! only the changes when it has the version they apply to, else the whole
//! map (it read slowly and skipped versions; the watch channel keeps only
//! the newest, so nothing queues behind it); the layout again only when it
//! changed.

use std::sync::Arc;

use super::feed::MapFeed;

/// What a subscriber was last sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub id: u64,
    pub layout: Arc<str>,
}

/// One SSE message of a seat-map stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Out {
    /// `event: layout`, the layout JSON as stored.
    Layout(Arc<str>),
    /// `event: seats`, the whole map.
    Whole { id: u64, json: Arc<str> },
    /// `event: changes`, the runs since the version it was sent last.
    Changes { id: u64, json: Arc<str> },
    /// `event: missing`: the event does not exist (any more).
    Missing { id: u64 },
    /// `event: unseated`: the event is general admission.
    Unseated { id: u64 },
}

/// The messages for `feed` given what was `sent` before (updated).
pub fn to_send(sent: &mut Option<Sent>, feed: &MapFeed) -> Vec<Out> {
    match feed {
        MapFeed::Pending | MapFeed::Down(_) => Vec::new(),
        MapFeed::Missing { id } => {
            *sent = None;
            vec![Out::Missing { id: *id }]
        }
        MapFeed::Unseated { id } => {
            *sent = None;
            vec![Out::Unseated { id: *id }]
        }
        MapFeed::Map(map) => {
            let before = sent.take();
            *sent = Some(Sent {
                id: map.id,
                layout: map.layout.clone(),
            });
            let same_layout = before
                .as_ref()
                .is_some_and(|s| Arc::ptr_eq(&s.layout, &map.layout));
            let changes = map
                .changes
                .as_ref()
                .filter(|c| same_layout && before.as_ref().is_some_and(|s| s.id == c.base));
            if let Some(c) = changes {
                return vec![Out::Changes {
                    id: map.id,
                    json: c.json.clone(),
                }];
            }
            let whole = Out::Whole {
                id: map.id,
                json: map.whole.clone(),
            };
            if same_layout {
                vec![whole]
            } else {
                vec![Out::Layout(map.layout.clone()), whole]
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seatmap::feed::{next_map, MapPoll, MapRead};

    /// Publishes `seats` after `current` (reading the layout when asked).
    fn publish(current: &MapFeed, seats: &[u8], id: u64) -> MapFeed {
        let layout = match current {
            MapFeed::Map(_) => None,
            _ => Some("{\"sections\":[]}".to_owned()),
        };
        let read = Ok(MapRead::Seated {
            seats: seats.to_vec(),
            layout,
        });
        let (f, _) = next_map("e", current, MapPoll::default(), read, 1, || id);
        f.expect("published")
    }

    fn kinds(outs: &[Out]) -> Vec<&'static str> {
        outs.iter()
            .map(|o| match o {
                Out::Layout(_) => "layout",
                Out::Whole { .. } => "whole",
                Out::Changes { .. } => "changes",
                Out::Missing { .. } => "missing",
                Out::Unseated { .. } => "unseated",
            })
            .collect()
    }

    const EMPTY: &[u8] = &[b'.'; 200];

    fn with_sold(n: usize) -> Vec<u8> {
        let mut s = EMPTY.to_vec();
        s[..n].fill(b's');
        s
    }

    #[test]
    fn connect_gets_layout_and_map_then_only_changes() {
        let v1 = publish(&MapFeed::Pending, EMPTY, 1);
        let mut sent = None;
        assert_eq!(kinds(&to_send(&mut sent, &v1)), ["layout", "whole"]);
        let v2 = publish(&v1, &with_sold(4), 2);
        assert_eq!(kinds(&to_send(&mut sent, &v2)), ["changes"]);
        assert_eq!(sent.as_ref().map(|s| s.id), Some(2));
    }

    #[test]
    fn a_subscriber_that_skipped_a_version_gets_the_whole_map() {
        let v1 = publish(&MapFeed::Pending, EMPTY, 1);
        let v2 = publish(&v1, &with_sold(4), 2);
        let v3 = publish(&v2, &with_sold(8), 3);
        let mut slow = None;
        to_send(&mut slow, &v1);
        // v2 was never seen: v3's changes apply to v2, not to v1.
        let outs = to_send(&mut slow, &v3);
        assert_eq!(kinds(&outs), ["whole"]);
        let MapFeed::Map(m3) = &v3 else {
            unreachable!()
        };
        assert_eq!(
            outs[0],
            Out::Whole {
                id: 3,
                json: m3.whole.clone()
            }
        );
    }

    #[test]
    fn a_gone_event_resends_the_layout_when_it_comes_back() {
        let v1 = publish(&MapFeed::Pending, EMPTY, 1);
        let mut sent = None;
        to_send(&mut sent, &v1);
        let gone = MapFeed::Missing { id: 2 };
        assert_eq!(to_send(&mut sent, &gone), [Out::Missing { id: 2 }]);
        let back = publish(&gone, EMPTY, 3);
        assert_eq!(kinds(&to_send(&mut sent, &back)), ["layout", "whole"]);
        assert_eq!(
            to_send(&mut sent, &MapFeed::Unseated { id: 4 }),
            [Out::Unseated { id: 4 }]
        );
        assert!(to_send(&mut sent, &MapFeed::Down("x".into())).is_empty());
    }
}
