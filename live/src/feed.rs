//! What a poller publishes, and the pure rule deciding when it publishes:
//! a new value only when something a buyer sees changed — once per poll tick
//! at most, which is what coalesces a burst to `--max-rate` messages per
//! second — plus the same value again after Redis was unreachable, so
//! subscribers learn it is current again.

use std::sync::Arc;

use crate::source::ReadError;
use crate::stock::Stock;

/// The newest state of one watched event, as every subscriber sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feed {
    /// No read has finished yet.
    Pending,
    /// Redis was unreachable for every read so far.
    Down(String),
    /// Redis answered `-NOEVENT`.
    Missing { id: u64 },
    /// The stock, with its message id and its JSON (serialised once, not
    /// once per subscriber).
    Stock {
        id: u64,
        stock: Arc<Stock>,
        json: Arc<str>,
    },
}

impl Feed {
    /// The message id of a published value, if any.
    pub fn id(&self) -> Option<u64> {
        match self {
            Feed::Missing { id } | Feed::Stock { id, .. } => Some(*id),
            Feed::Pending | Feed::Down(_) => None,
        }
    }
}

/// A poller's memory between ticks besides the published feed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Poll {
    /// A read failed since the last publication: publish the next good read
    /// even when it equals the last value.
    pub stale: bool,
}

/// Given the published feed and the result of this tick's read, returns
/// what to publish (None: nothing) and the poller's new memory. `new_id`
/// is called only when something is published.
pub fn next_feed(
    current: &Feed,
    poll: Poll,
    read: Result<Stock, ReadError>,
    new_id: impl FnOnce() -> u64,
) -> (Option<Feed>, Poll) {
    let fresh = Poll { stale: false };
    match read {
        Ok(stock) => {
            let same =
                matches!(current, Feed::Stock { stock: old, .. } if !old.differs_from(&stock));
            if same && !poll.stale {
                return (None, poll);
            }
            let json = Arc::from(stock.to_json());
            let stock = Arc::new(stock);
            (
                Some(Feed::Stock {
                    id: new_id(),
                    stock,
                    json,
                }),
                fresh,
            )
        }
        Err(ReadError::Missing) => {
            if matches!(current, Feed::Missing { .. }) && !poll.stale {
                return (None, poll);
            }
            (Some(Feed::Missing { id: new_id() }), fresh)
        }
        Err(ReadError::Unavailable(why)) => {
            let stale = Poll { stale: true };
            match current {
                Feed::Pending | Feed::Down(_) => (Some(Feed::Down(why)), stale),
                _ => (None, stale),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stock(remaining: i64, at: u64) -> Stock {
        Stock {
            event: "e".into(),
            total: 10,
            remaining,
            held: 0,
            claimed: 10 - remaining,
            status: "open".into(),
            waiting: 0,
            draw: None,
            allocated: 0,
            resale: 0,
            seed: None,
            at,
        }
    }

    fn published(f: Option<Feed>) -> Feed {
        f.expect("something published")
    }

    #[test]
    fn first_read_is_published_and_repeats_are_not() {
        let (f, p) = next_feed(&Feed::Pending, Poll::default(), Ok(stock(5, 1)), || 7);
        let f = published(f);
        assert_eq!(f.id(), Some(7));
        let (again, p2) = next_feed(&f, p, Ok(stock(5, 2)), || panic!("no new id"));
        assert_eq!(again, None);
        assert_eq!(p2, p);
        let (changed, _) = next_feed(&f, p, Ok(stock(4, 3)), || 8);
        assert!(
            matches!(published(changed), Feed::Stock { id: 8, stock, json } if stock.remaining == 4 && json.contains("\"remaining\":4,"))
        );
    }

    #[test]
    fn an_outage_keeps_the_value_then_republishes_it() {
        let current = Feed::Stock {
            id: 3,
            stock: Arc::new(stock(5, 1)),
            json: Arc::from("{}"),
        };
        let down = Err(ReadError::Unavailable("refused".into()));
        let (f, p) = next_feed(&current, Poll::default(), down, || panic!("no id"));
        assert_eq!(f, None, "subscribers keep the last value");
        assert!(p.stale);
        let (f, p) = next_feed(&current, p, Ok(stock(5, 9)), || 4);
        assert_eq!(published(f).id(), Some(4), "same value, sent again");
        assert!(!p.stale);
    }

    #[test]
    fn unreachable_before_any_value_is_down() {
        let down = Err(ReadError::Unavailable("refused".into()));
        let (f, _) = next_feed(&Feed::Pending, Poll::default(), down, || 1);
        assert_eq!(f, Some(Feed::Down("refused".into())));
    }

    #[test]
    fn missing_is_published_once_and_a_recreated_event_comes_back() {
        let (f, p) = next_feed(
            &Feed::Pending,
            Poll::default(),
            Err(ReadError::Missing),
            || 1,
        );
        let f = published(f);
        assert_eq!(f, Feed::Missing { id: 1 });
        let (again, _) = next_feed(&f, p, Err(ReadError::Missing), || 2);
        assert_eq!(again, None);
        let (back, _) = next_feed(&f, p, Ok(stock(10, 5)), || 3);
        assert_eq!(published(back).id(), Some(3));
    }
}
