//! The content of a log entry, as the heal compares it: one canonical text
//! per entry and its 64-bit digest. Pure.
//!
//! A decoded record is written as its fields in the log format's order
//! (`op=claim␟event=E␟user=u␟ticket=43␟at=…`, `␟` = U+001F, which no
//! field can contain: user ids have no control characters); an entry that
//! did not decode as `malformed␟<its raw rendering>`. Two entries are the
//! same write when id and content are equal; the new primary's ids may
//! equal lost ones, so the content decides. The text is what MySQL's
//! journal stores, and [`record_of`] reads a record back from it (for
//! `TICKET.REAPPLY`). Here, in the model, because the writer's journal
//! (`sync`) and the heal (`loss`) both need it.

use super::Entry;
use protocol::record::{decode, Record};
use protocol::StreamId;

/// One log entry as the heal sees it: id, canonical content, record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logged {
    pub id: StreamId,
    pub text: String,
    /// None for an entry that did not decode.
    pub rec: Option<Record>,
}

/// Separates fields in the canonical text.
const SEP: char = '\u{1f}';

/// The canonical text of `entry` of `event`.
pub fn text(event: &str, entry: &Entry) -> String {
    let mut out = String::new();
    write_text(&mut out, event, entry);
    out
}

/// Appends the canonical text of `entry` of `event` to `out` (the
/// journal writes a batch's texts into one buffer).
pub fn write_text(out: &mut String, event: &str, entry: &Entry) {
    use std::fmt::Write;
    // Writing into a String cannot fail.
    let _ = match &entry.rec {
        Ok(r) => r.fields(event).enumerate().try_for_each(|(i, (k, v))| {
            if i > 0 {
                out.push(SEP);
            }
            write!(out, "{k}={v}")
        }),
        Err(m) => write!(out, "malformed{SEP}{}", m.raw),
    };
}

/// FNV-1a 64 of the canonical text, as 16 hex digits (the anchor stored
/// with MySQL's offset).
pub fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The field pairs of a canonical text (none for a malformed entry).
pub fn pairs(text: &str) -> Vec<(String, String)> {
    if text.starts_with(&format!("malformed{SEP}")) {
        return Vec::new();
    }
    text.split(SEP)
        .filter_map(|f| f.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// The record a canonical text of `event` holds, if it decodes.
pub fn record_of(event: &str, text: &str) -> Option<Record> {
    let raw: Vec<(Vec<u8>, Vec<u8>)> = pairs(text)
        .into_iter()
        .map(|(k, v)| (k.into_bytes(), v.into_bytes()))
        .collect();
    match raw.is_empty() {
        true => None,
        false => decode(event, &raw).ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::{Malformed, Op, Tickets};
    use protocol::StreamId;

    fn entry(op: Op) -> Entry {
        Entry::new(StreamId::new(5, 0), Ok(Record { op, at: 77 }))
    }

    #[test]
    fn records_round_trip_through_their_text() {
        let ops = [
            Op::Claim {
                pick: None,
                user: "a=b c".into(),
                tickets: Tickets::One(43),
            },
            Op::Hold {
                pick: None,
                user: "ü".into(),
                tickets: Tickets::Many(vec![1, 2]),
                until: 99,
            },
            Op::Close,
        ];
        for op in ops {
            let e = entry(op);
            let t = text("e1", &e);
            assert_eq!(record_of("e1", &t).as_ref(), e.rec.as_ref().ok(), "{t}");
        }
    }

    #[test]
    fn content_tells_writes_apart_and_malformed_never_decodes() {
        let a = text(
            "e",
            &entry(Op::Claim {
                pick: None,
                user: "u1".into(),
                tickets: Tickets::One(43),
            }),
        );
        let b = text(
            "e",
            &entry(Op::Claim {
                pick: None,
                user: "u2".into(),
                tickets: Tickets::One(43),
            }),
        );
        assert_ne!(digest(&a), digest(&b));
        assert_eq!(digest(&a), digest(&a.clone()));
        assert_eq!(digest(&a).len(), 16);
        let bad = Entry::new(
            StreamId::new(1, 0),
            Err(Malformed {
                reason: "x".into(),
                user: None,
                ticket: None,
                raw: "op=claim user=u".into(),
            }),
        );
        let t = text("e", &bad);
        assert!(record_of("e", &t).is_none());
        assert!(pairs(&t).is_empty());
    }
}
