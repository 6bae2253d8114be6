//! The entries MySQL cannot take, known before any statement is sent
//! ([`refusal`]): one beyond `entry::MAX_ENTRY_BYTES` (`too_large`), and a
//! seated init whose layout needs a statement larger than the server's
//! `max_allowed_packet` (`too_large_for_packet`). Sending either would
//! fail the same way on every retry: the server refuses the packet (error
//! 1153, and drops the connection), so the batch could never commit and
//! the writer would retry it forever. Each becomes one conflict instead.
//!
//! Every other statement the drain sends stays far below [`MIN_PACKET`]:
//! multi-row statements carry at most 1,000 rows, journal statements at
//! most `batch::journal::STATEMENT_BYTES`, a canonical text at most
//! `content::MAX_TEXT_BYTES`, a conflict row a few KB. Pure.

use super::Entry;
use protocol::record::{Op, Record};

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
            super::entry::MAX_ENTRY_BYTES
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
mod tests {
    use super::*;
    use crate::model::entry::MAX_ENTRY_BYTES;

    #[test]
    fn a_seated_init_beyond_the_packet_is_refused_naming_both_sizes() {
        let mib = 1 << 20;
        let e = Entry::test_init(1, Some(2 * mib as usize));
        let (reason, detail) = refusal(&e, mib).unwrap_or_default();
        assert_eq!(reason, "too_large_for_packet");
        assert!(detail.contains(&format!("{}", 2 * mib + STATEMENT_OVERHEAD)));
        assert!(detail.contains(&format!("max_allowed_packet of {mib}")));
        assert_eq!(refusal(&e, 16 * mib), None, "fits a 16 MiB packet");
        assert_eq!(refusal(&e, 0), None, "packet not known");
        assert_eq!(refusal(&Entry::test_init(1, None), 1024), None, "unseated");
    }

    #[test]
    fn an_entry_beyond_the_bound_is_refused_whatever_the_packet() {
        let mut e = Entry::test_init(1, None);
        e.raw.bytes = MAX_ENTRY_BYTES + 1;
        let (reason, detail) = refusal(&e, 1 << 30).unwrap_or_default();
        assert_eq!(reason, "too_large");
        assert!(
            detail.contains(&format!("{}", MAX_ENTRY_BYTES + 1)),
            "{detail}"
        );
        e.raw.bytes = MAX_ENTRY_BYTES;
        assert_eq!(refusal(&e, 1 << 30), None, "the bound itself is legal");
    }
}
