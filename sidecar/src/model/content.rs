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
//!
//! The text is bounded, so a journal row always fits a statement: an
//! entry beyond `entry::MAX_ENTRY_BYTES` is `too_large␟bytes=<n>␟sha256=<of
//! the entry as read>`, and a text longer than [`MAX_TEXT_BYTES`] (only a
//! seated init carries that much: its layout) is `stand_in␟op=<op>␟
//! bytes=<n>␟sha256=<of the text>`. Both are a function of the entry
//! alone, so the writer, the trimmer and the heal, each reading it from
//! Redis, agree on them; neither decodes back into a record.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use super::Entry;
use protocol::draw::hex;
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

/// Longest canonical text kept as it is: 64 KiB, far above any record
/// but a seated init (a claim of 1,000 tickets is about 11 KB).
pub const MAX_TEXT_BYTES: usize = 64 << 10;

/// Appends the canonical text of `entry` of `event` to `out` (the
/// journal writes a batch's texts into one buffer), bounded as the
/// module's doc says.
pub fn write_text(out: &mut String, event: &str, entry: &Entry) {
    let from = out.len();
    if entry.raw.too_large() {
        let sha = entry.raw.sha256_hex().unwrap_or_default();
        // Writing into a String cannot fail.
        let _ = write!(
            out,
            "too_large{SEP}bytes={}{SEP}sha256={sha}",
            entry.raw.bytes
        );
        return;
    }
    write_full(out, event, entry);
    if out.len() - from > MAX_TEXT_BYTES {
        let short = stand_in(&out[from..]);
        out.truncate(from);
        out.push_str(&short);
    }
}

/// The canonical text of `entry` without the bound (see [`write_text`]).
fn write_full(out: &mut String, event: &str, entry: &Entry) {
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

/// The stand-in of a text longer than [`MAX_TEXT_BYTES`]: its op, length
/// and SHA-256.
fn stand_in(text: &str) -> String {
    let op = text
        .strip_prefix("op=")
        .and_then(|t| t.split(SEP).next())
        .unwrap_or("?");
    let sha = hex(&Sha256::digest(text.as_bytes()));
    format!(
        "stand_in{SEP}op={op}{SEP}bytes={}{SEP}sha256={sha}",
        text.len()
    )
}

/// A text as this release writes it: a longer one (journaled by a release
/// before the bound) becomes its stand-in, so both compare alike.
pub fn bounded(text: &str) -> String {
    match text.len() > MAX_TEXT_BYTES {
        true => stand_in(text),
        false => text.to_owned(),
    }
}

/// The op of a stand-in text (a seated init's), if it is one.
pub fn stand_in_op(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("stand_in")?.strip_prefix(SEP)?;
    rest.strip_prefix("op=")?.split(SEP).next()
}

/// Whether `digest` is the digest of `entry`'s text, or of its text
/// before the bound (an anchor a release before it stored).
pub fn has_digest(event: &str, entry: &Entry, anchor: &str) -> bool {
    if digest(&text(event, entry)) == anchor {
        return true;
    }
    let mut full = String::new();
    write_full(&mut full, event, entry);
    full.len() > MAX_TEXT_BYTES && digest(&full) == anchor
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

/// The field pairs of a canonical text (none for a malformed entry or a
/// stand-in).
pub fn pairs(text: &str) -> Vec<(String, String)> {
    let head = text.split(SEP).next().unwrap_or("");
    if matches!(head, "malformed" | "too_large" | "stand_in") {
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

    #[test]
    fn a_long_text_is_a_stand_in_naming_its_op_length_and_digest() {
        let small = Entry::test_init(5, Some(100));
        assert!(record_of("e", &text("e", &small)).is_some());
        let big = Entry::test_init(5, Some(MAX_TEXT_BYTES));
        let mut full = String::new();
        write_full(&mut full, "e", &big);
        let t = text("e", &big);
        let sha = hex(&Sha256::digest(full.as_bytes()));
        assert_eq!(
            t,
            format!(
                "stand_in{SEP}op=init{SEP}bytes={}{SEP}sha256={sha}",
                full.len()
            )
        );
        assert_eq!(stand_in_op(&t), Some("init"));
        assert_eq!(stand_in_op(&text("e", &small)), None);
        assert!(record_of("e", &t).is_none() && pairs(&t).is_empty());
        // a journal row of a release before the bound reads the same
        assert_eq!(bounded(&full), t);
        assert_eq!(bounded("op=open"), "op=open");
        // and its anchor (the digest of the whole text) is still known
        assert!(has_digest("e", &big, &digest(&full)));
        assert!(has_digest("e", &big, &digest(&t)));
        assert!(!has_digest("e", &small, &digest(&full)));
    }

    #[test]
    fn an_entry_beyond_the_bound_is_its_size_and_sha256() {
        let huge = vec![b'x'; crate::model::entry::MAX_ENTRY_BYTES as usize + 1];
        let fields = vec![
            (b"op".to_vec(), b"init".to_vec()),
            (b"layout".to_vec(), huge),
        ];
        let e = Entry::read("e", StreamId::new(9, 0), &fields);
        let t = text("e", &e);
        let sha = e.raw.sha256_hex().unwrap_or_default();
        assert_eq!(
            t,
            format!("too_large{SEP}bytes={}{SEP}sha256={sha}", e.raw.bytes)
        );
        assert!(record_of("e", &t).is_none() && pairs(&t).is_empty());
        let mut other = fields.clone();
        other[1].1[0] = b'y';
        assert_ne!(text("e", &Entry::read("e", StreamId::new(9, 0), &other)), t);
    }
}
