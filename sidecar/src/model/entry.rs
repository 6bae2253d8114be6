//! One entry of an event's log as the sidecar reads it: its stream id, the
//! record decoded from its fields (or why it could not be decoded), and
//! what it was as read from Redis ([`Raw`]: its size and SHA-256), which
//! a conflict row names. Pure.

use sha2::{Digest, Sha256};

use protocol::draw::hex;
use protocol::record::{decode_entry, Malformed, Record};
use protocol::StreamId;

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
            h.update(format!("{}:", part.len()));
            h.update(part);
            h.update(b",");
            bytes = bytes.saturating_add(part.len() as u64);
        }
        Raw {
            bytes,
            sha256: Some(h.finalize().into()),
        }
    }

    /// The SHA-256 as 64 hex digits, when known.
    pub fn sha256_hex(&self) -> Option<String> {
        self.sha256.map(|d| hex(&d))
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

    /// Entry `id` of `event`'s log as read from Redis, decoded.
    pub fn read(event: &str, id: StreamId, fields: &[(Vec<u8>, Vec<u8>)]) -> Entry {
        Entry {
            id,
            rec: decode_entry(event, Some(id), fields),
            raw: Raw::of(fields),
        }
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
        assert_eq!(Raw::default().sha256_hex(), None);
    }
}
