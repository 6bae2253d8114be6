//! One entry of an event's log, as the sidecar reads it, and what MySQL
//! makes of it. Pure.
//!
//! **As read.** An [`Entry`] holds its stream id, the record decoded from
//! its fields (or why it could not be decoded), and what it was as read
//! from Redis ([`Raw`]: its size and SHA-256), which a conflict row names
//! and which tells an entry MySQL can never take ([`MAX_ENTRY_BYTES`])
//! from the rest.
//!
//! **Its canonical text**, as the journal stores it and the heal compares
//! it: one text per entry and its 64-bit [`digest`]. A decoded record is
//! written as its fields in the log format's order
//! (`op=claim␟event=E␟user=u␟ticket=43␟at=…`, `␟` = U+001F, which no
//! field can contain: user ids have no control characters); an entry that
//! did not decode as `malformed␟<its raw rendering>`. Two entries are the
//! same write when id and content are equal; the new primary's ids may
//! equal lost ones, so the content decides. [`record_of`] reads a record
//! back from the text (for `TICKET.REAPPLY`). The text is bounded, so a
//! journal row always fits a statement: an entry beyond
//! [`MAX_ENTRY_BYTES`] is `too_large␟bytes=<n>␟sha256=<of the entry as
//! read>`, and a text longer than [`MAX_TEXT_BYTES`] (only a seated init
//! carries that much: its layout) is `stand_in␟op=<op>␟bytes=<n>␟sha256=<of
//! the text>`. Both are a function of the entry alone, so the writer, the
//! trimmer and the heal, each reading it from Redis, agree on them;
//! neither decodes back into a record.
//!
//! **What MySQL can never take**, known before any statement is sent
//! ([`refusal`]): an entry beyond [`MAX_ENTRY_BYTES`] (`too_large`), and a
//! seated init whose layout needs a statement larger than the server's
//! `max_allowed_packet` (`too_large_for_packet`). Sending either would
//! fail the same way on every retry: the server refuses the packet (error
//! 1153, and drops the connection), so the batch could never commit and
//! the writer would retry it forever. Each becomes one conflict instead.
//! Every other statement the drain sends stays far below [`MIN_PACKET`]:
//! multi-row statements carry at most 1,000 rows, journal statements at
//! most `batch::journal::STATEMENT_BYTES`, a canonical text at most
//! [`MAX_TEXT_BYTES`], a conflict row a few KB.

use std::fmt::Write;

use sha2::{Digest, Sha256};

use protocol::draw::hex;
use protocol::record::{decode, decode_entry, Malformed, Op, Record};
use protocol::StreamId;

// ---- As read ----

/// Most bytes (field names and values summed) an entry may have. The
/// largest legal entry is an `init` carrying a seated layout of at most
/// `protocol::seats::MAX_LAYOUT_BYTES` (4 MiB) in its stored form, plus a
/// few hundred bytes of other fields: twice that leaves room for any
/// release's additions. A larger entry was not written by the module; it
/// is never decoded nor sent to MySQL in full (a `too_large` conflict).
pub const MAX_ENTRY_BYTES: u64 = 8 << 20;

/// How much of a too-large entry's fields a conflict shows.
const SHOWN_CHARS: usize = 1000;

/// One stream entry, decoded or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The stream id.
    pub id: StreamId,
    /// The decoded record, or why it could not be decoded.
    pub rec: Result<Record, Malformed>,
    /// What it was as read from Redis (unknown for an entry made here).
    pub raw: Raw,
}

/// An entry as read from Redis: its size and the SHA-256 of its fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Raw {
    /// Field names and values, in bytes, summed.
    pub bytes: u64,
    /// SHA-256 of the fields as netstrings (see [`Raw::of`]); None when
    /// the entry was not read from Redis.
    pub sha256: Option<[u8; 32]>,
}

impl Raw {
    /// The size and SHA-256 of `fields`, each name and value hashed as a
    /// netstring (`<len>:<bytes>,`) in stream order, so no two lists of
    /// fields hash alike and an operator can recompute it from `XRANGE`.
    pub fn of(fields: &[(Vec<u8>, Vec<u8>)]) -> Raw {
        let mut h = Sha256::new();
        let mut bytes = 0u64;
        for part in fields.iter().flat_map(|(k, v)| [k, v]) {
            h.update(decimal(part.len(), &mut [0; 20]));
            h.update(b":");
            h.update(part);
            h.update(b",");
            bytes = bytes.saturating_add(part.len() as u64);
        }
        Raw {
            bytes,
            sha256: Some(h.finalize().into()),
        }
    }

    /// Beyond [`MAX_ENTRY_BYTES`]: MySQL is never sent it.
    pub fn too_large(&self) -> bool {
        self.bytes > MAX_ENTRY_BYTES
    }

    /// The SHA-256 as 64 hex digits, when known.
    pub fn sha256_hex(&self) -> Option<String> {
        self.sha256.map(|d| hex(&d))
    }
}

/// `n` in decimal, written into `buf` (no allocation: every entry read
/// is hashed, on the drain's hot path).
fn decimal(mut n: usize, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

impl Entry {
    /// An entry made by the sidecar itself (tests, the heal's journal).
    pub fn new(id: StreamId, rec: Result<Record, Malformed>) -> Entry {
        Entry {
            id,
            rec,
            raw: Raw::default(),
        }
    }

    /// Entry `id` of `event`'s log as read from Redis: decoded, unless it
    /// is larger than [`MAX_ENTRY_BYTES`] (then not even copied: only its
    /// head is shown).
    pub fn read(event: &str, id: StreamId, fields: &[(Vec<u8>, Vec<u8>)]) -> Entry {
        let raw = Raw::of(fields);
        let rec = match raw.too_large() {
            true => Err(Malformed {
                reason: format!(
                    "the entry has {} bytes, more than the {MAX_ENTRY_BYTES} an entry may have",
                    raw.bytes
                ),
                user: None,
                ticket: None,
                raw: shown(fields, SHOWN_CHARS),
            }),
            false => decode_entry(event, Some(id), fields),
        };
        Entry { id, rec, raw }
    }
}

/// `name=value name=value` of `fields`, at most `limit` characters,
/// control characters dropped, reading no more of each field than it
/// shows (a field may hold megabytes).
pub fn shown(fields: &[(Vec<u8>, Vec<u8>)], limit: usize) -> String {
    let mut out = String::new();
    let parts = fields.iter().flat_map(|(k, v)| [k, v]).enumerate();
    for (i, part) in parts {
        let used = out.chars().count();
        if used >= limit {
            break;
        }
        out.push_str(match (i % 2, used) {
            (0, 0) => "",
            (0, _) => " ",
            _ => "=",
        });
        // 4 bytes per char at most: enough bytes for what is left.
        let head = &part[..part.len().min(4 * (limit - used))];
        let text = String::from_utf8_lossy(head);
        out.extend(text.chars().filter(|c| !c.is_control()));
    }
    out.chars().take(limit).collect()
}

#[cfg(test)]
impl Entry {
    /// An init at `ms`, seated with a layout of `layout` bytes (not a
    /// valid one: only its size matters) or unseated (None).
    pub fn test_init(ms: u64, layout: Option<usize>) -> Entry {
        let op = Op::Init {
            transfer_until: None,
            total: 1,
            opens_at: 0,
            closes_at: 0,
            checkout: Default::default(),
            incarnation: None,
            draw: None,
            layout: layout.map(|n| "x".repeat(n)),
        };
        Entry::new(StreamId::new(ms, 0), Ok(Record { op, at: 1 }))
    }
}

// ---- Its canonical text ----

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
pub fn text_fields(text: &str) -> Vec<(String, String)> {
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
    let raw: Vec<(Vec<u8>, Vec<u8>)> = text_fields(text)
        .into_iter()
        .map(|(k, v)| (k.into_bytes(), v.into_bytes()))
        .collect();
    match raw.is_empty() {
        true => None,
        false => decode(event, &raw).ok(),
    }
}

// ---- What MySQL can never take ----

/// Bytes a statement needs beside the one big value it carries (the other
/// columns, the SQL text, the protocol's framing): a generous margin.
pub const STATEMENT_OVERHEAD: u64 = 64 << 10;

/// The least `max_allowed_packet` the drain needs for everything but a
/// seated init's layout (see the module's doc); below it the sidecar
/// warns at connect.
pub const MIN_PACKET: u64 = 1 << 20;

/// Why MySQL cannot take entry `e` from a server whose
/// `max_allowed_packet` is `packet` bytes (0: not known, no check):
/// the conflict's reason and detail.
pub fn refusal(e: &Entry, packet: u64) -> Option<(&'static str, String)> {
    if e.raw.too_large() {
        let detail = format!(
            "the entry has {} bytes, more than the {} an entry may have (the module never writes one): not applied, not sent to MySQL",
            e.raw.bytes,
            MAX_ENTRY_BYTES
        );
        return Some(("too_large", detail));
    }
    let need = statement_bytes(e).filter(|n| packet > 0 && *n > packet)?;
    let detail = format!(
        "the seated init's layout needs a statement of about {need} bytes, more than the server's max_allowed_packet of {packet}: the event is not created; raise max_allowed_packet to at least {need} (docs/operations.md), then replay this entry"
    );
    Some(("too_large_for_packet", detail))
}

/// The largest statement entry `e` needs, when it may be large: a seated
/// init's event row carries its whole layout.
fn statement_bytes(e: &Entry) -> Option<u64> {
    match &e.rec {
        Ok(Record {
            op: Op::Init {
                layout: Some(l), ..
            },
            ..
        }) => Some(l.len() as u64 + STATEMENT_OVERHEAD),
        _ => None,
    }
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
