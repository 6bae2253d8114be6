//! One entry of an event's log as the sidecar reads it: its stream id, the
//! record decoded from its fields (or why it could not be decoded), and
//! what it was as read from Redis ([`Raw`]: its size and SHA-256), which
//! a conflict row names and which tells an entry MySQL can never take
//! ([`MAX_ENTRY_BYTES`]) from the rest. Pure.

use sha2::{Digest, Sha256};

use protocol::draw::hex;
use protocol::record::{decode_entry, Malformed, Record};
use protocol::StreamId;

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
        let op = protocol::record::Op::Init {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(v: &[(&[u8], &[u8])]) -> Vec<(Vec<u8>, Vec<u8>)> {
        v.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn the_digest_is_of_netstrings_so_field_borders_count() {
        let a = Raw::of(&pairs(&[(b"ab", b"c")]));
        let b = Raw::of(&pairs(&[(b"a", b"bc")]));
        assert_ne!(a.sha256, b.sha256);
        assert_eq!((a.bytes, b.bytes), (3, 3));
        // sha256("2:ab,1:c,"), as `printf '2:ab,1:c,' | sha256sum` says
        let want = hex(&Sha256::digest(b"2:ab,1:c,"));
        assert_eq!(a.sha256_hex(), Some(want));
        let long = Raw::of(&pairs(&[(b"abcdefghijkl", b"")]));
        let want = hex(&Sha256::digest(b"12:abcdefghijkl,0:,"));
        assert_eq!(long.sha256_hex(), Some(want));
        assert_eq!(Raw::default().sha256_hex(), None);
    }

    #[test]
    fn an_entry_beyond_the_bound_is_not_decoded_and_shows_its_head() {
        let big = vec![b'x'; MAX_ENTRY_BYTES as usize];
        let fields = pairs(&[(b"op", b"init"), (b"layout", &big)]);
        let e = Entry::read("e", StreamId::new(1, 0), &fields);
        assert!(e.raw.too_large());
        let Err(m) = &e.rec else {
            panic!("decoded: {e:?}")
        };
        assert!(m.reason.contains("more than the 8388608"), "{}", m.reason);
        assert_eq!(m.raw.chars().count(), SHOWN_CHARS);
        assert!(m.raw.starts_with("op=init layout=xxx"), "{}", m.raw);
        let small = pairs(&[(b"op", b"open"), (b"event", b"e"), (b"at", b"5")]);
        let e = Entry::read("e", StreamId::new(5, 0), &small);
        assert!(e.rec.is_ok() && !e.raw.too_large() && e.raw.sha256.is_some());
    }

    #[test]
    fn shown_drops_control_bytes_and_bad_utf8_and_stops_at_the_limit() {
        let fields = pairs(&[(b"us\0er", b"a\xff\x01b"), (b"k", b"v")]);
        assert_eq!(shown(&fields, 100), "user=a\u{fffd}b k=v");
        assert_eq!(shown(&fields, 4), "user");
        assert_eq!(shown(&[], 4), "");
    }
}
