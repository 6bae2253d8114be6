//! Redis stream entry ids (`<ms>-<seq>`), parsed and ordered as number pairs.
//!
//! Ids must never be compared as strings: `"9-0" > "10-0"` as text, but
//! `9-0 < 10-0` as ids. The sidecar stores ids as text in MySQL
//! (`ticket_sync_offset.last_stream_id`, `VARCHAR(41)`), parses them back with
//! [`StreamId::parse`], and trims with `XTRIM .. MINID` at [`StreamId::next`].

use std::fmt;

/// A stream entry id. Ordering is `(ms, seq)` lexicographic on the numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part within the millisecond.
    pub seq: u64,
}

impl StreamId {
    /// The id before every real entry (`0-0`); reading "after" it reads all.
    pub const ZERO: StreamId = StreamId { ms: 0, seq: 0 };

    /// Builds an id from its parts.
    pub fn new(ms: u64, seq: u64) -> Self {
        StreamId { ms, seq }
    }

    /// Parses `<ms>-<seq>` (both plain decimal u64). A bare `<ms>` is
    /// accepted as `<ms>-0`, as Redis does for range arguments.
    pub fn parse(text: &str) -> Option<StreamId> {
        match text.split_once('-') {
            Some((ms, seq)) => StreamId::from_parts(ms, seq),
            None => StreamId::from_parts(text, "0"),
        }
    }

    /// Parses an id given as its two numbers, `<ms>` and `<seq>` (plain
    /// decimal u64 each), as an effect carries it.
    pub fn from_parts(ms: &str, seq: &str) -> Option<StreamId> {
        Some(StreamId {
            ms: parse_u64(ms)?,
            seq: parse_u64(seq)?,
        })
    }

    /// The smallest id strictly greater than `self`: `<ms>-<seq+1>`, or
    /// `<ms+1>-0` when the sequence is exhausted. `None` only for the maximal
    /// id. Used as the `MINID` of `XTRIM`, which keeps ids `>= MINID`.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId::new(self.ms, seq)),
            None => self.ms.checked_add(1).map(|ms| StreamId::new(ms, 0)),
        }
    }
}

/// Plain decimal digits (no sign), in one pass: a replica parses two of
/// these per applied claim.
fn parse_u64(text: &str) -> Option<u64> {
    if text.is_empty() {
        return None;
    }
    text.bytes().try_fold(0u64, |n, b| {
        let digit = b.checked_sub(b'0').filter(|d| *d <= 9)?;
        n.checked_mul(10)?.checked_add(u64::from(digit))
    })
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_and_orders_numerically() {
        let a = StreamId::parse("9-0").unwrap();
        let b = StreamId::parse("10-0").unwrap();
        assert!(a < b);
        assert!("9-0" > "10-0", "string order would be wrong");
        assert_eq!(StreamId::parse("5"), Some(StreamId::new(5, 0)));
        assert_eq!(StreamId::parse("1700000000000-12").unwrap().seq, 12);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "", "-", "1-", "-1", "a-1", "1-b", "1-2-3", "+1-0", " 1-0", "1-0 ",
        ] {
            assert_eq!(StreamId::parse(bad), None, "{bad:?}");
        }
        assert_eq!(StreamId::parse("18446744073709551616-0"), None);
        assert_eq!(StreamId::from_parts("7", "3"), Some(StreamId::new(7, 3)));
        for (ms, seq) in [("7", ""), ("", "3"), ("7", "+3"), ("7-3", "0"), ("7", "-3")] {
            assert_eq!(StreamId::from_parts(ms, seq), None, "{ms:?} {seq:?}");
        }
    }

    #[test]
    fn next_rolls_over() {
        assert_eq!(StreamId::new(7, 3).next(), Some(StreamId::new(7, 4)));
        assert_eq!(StreamId::new(7, u64::MAX).next(), Some(StreamId::new(8, 0)));
        assert_eq!(StreamId::new(u64::MAX, u64::MAX).next(), None);
    }

    proptest! {
        #[test]
        fn roundtrip(ms in any::<u64>(), seq in any::<u64>()) {
            let id = StreamId::new(ms, seq);
            prop_assert_eq!(StreamId::parse(&id.to_string()), Some(id));
            prop_assert!(id.to_string().len() <= 41);
        }

        #[test]
        fn order_matches_pairs(a in any::<(u64, u64)>(), b in any::<(u64, u64)>()) {
            let (x, y) = (StreamId::new(a.0, a.1), StreamId::new(b.0, b.1));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
        }

        #[test]
        fn next_is_the_successor(ms in any::<u64>(), seq in any::<u64>(), other in any::<(u64, u64)>()) {
            let id = StreamId::new(ms, seq);
            if let Some(n) = id.next() {
                prop_assert!(n > id);
                let o = StreamId::new(other.0, other.1);
                // nothing lies strictly between id and next(id)
                prop_assert!(!(o > id && o < n));
            }
        }
    }
}
