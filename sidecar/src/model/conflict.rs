//! A conflict: a log entry MySQL refused, and the one shape of its
//! `ticket_conflict` row ([`Conflict::row`]). Whatever the entry held (a
//! user id of a megabyte, control bytes, a ticket number beyond `INT`, a
//! detail quoting a whole layout), the row fits its columns, so writing it
//! never fails on data and a poison entry costs one bounded row. Pure.

use super::Entry;
use protocol::StreamId;

/// `ticket_conflict.user_id` is `VARCHAR(64)` utf8mb4: 64 characters.
pub const USER_CHARS: usize = 64;
/// `ticket_conflict.detail` is `VARCHAR(1024)`: 1,024 characters (at
/// most 4 KiB in utf8mb4).
pub const DETAIL_CHARS: usize = 1024;
/// `event_id` is `VARCHAR(64)`, `reason` `VARCHAR(32)`.
const EVENT_CHARS: usize = 64;
const REASON_CHARS: usize = 32;
/// What ends a detail that was cut.
const CUT: &str = " [cut]";

/// A conflict written while writing a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The entry.
    pub id: StreamId,
    /// Reason code (`oversell`, `collision`, `malformed`, ...).
    pub reason: &'static str,
    /// User id, when known.
    pub user: Option<String>,
    /// Ticket number, when known.
    pub ticket: Option<i64>,
    /// Human-readable detail.
    pub detail: String,
    /// SHA-256 (hex) of the whole entry as read from Redis, when known.
    pub sha256: Option<String>,
}

/// A `ticket_conflict` row, every value within its column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConflictRow {
    pub event: String,
    pub stream_id: String,
    pub user: Option<String>,
    /// NULL when the number is outside `INT`.
    pub ticket: Option<i32>,
    pub reason: String,
    pub detail: String,
    pub sha256: Option<String>,
}

impl Conflict {
    /// Conflict `reason` about log entry `e`, with the user and lowest
    /// ticket it names (decoded, or as far as a malformed entry shows
    /// them) and its SHA-256.
    pub fn about(e: &Entry, reason: &'static str, detail: String) -> Conflict {
        let (user, ticket) = match &e.rec {
            Ok(r) => r.op.order().map_or((None, None), |(u, t, _)| {
                (Some(u.clone()), Some(t.lowest()))
            }),
            Err(m) => (m.user.clone(), m.ticket),
        };
        Conflict {
            id: e.id,
            reason,
            user,
            ticket,
            detail,
            sha256: e.raw.sha256_hex(),
        }
    }

    /// The row of this conflict of `event`: the one place that bounds it.
    pub fn row(&self, event: &str) -> ConflictRow {
        ConflictRow {
            event: cut(event, EVENT_CHARS),
            stream_id: self.id.to_string(),
            user: self.user.as_deref().map(|u| cut(u, USER_CHARS)),
            ticket: self.ticket.and_then(|t| i32::try_from(t).ok()),
            reason: cut(self.reason, REASON_CHARS),
            detail: cut_marked(&self.detail, DETAIL_CHARS),
            sha256: self.sha256.clone(),
        }
    }
}

/// The first `max` characters of `s`, control characters shown as U+FFFD
/// (a column takes them, but a row is read by people and tools).
fn cut(s: &str, max: usize) -> String {
    s.chars()
        .take(max)
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

/// [`cut`], ending in [`CUT`] when something was left out.
fn cut_marked(s: &str, max: usize) -> String {
    match s.chars().nth(max) {
        None => cut(s, max),
        Some(_) => cut(s, max - CUT.len()) + CUT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::Malformed;

    fn conflict(user: &str, ticket: i64, detail: String) -> Conflict {
        Conflict {
            id: StreamId::new(7, 1),
            reason: "malformed",
            user: Some(user.into()),
            ticket: Some(ticket),
            detail,
            sha256: Some("ab".repeat(32)),
        }
    }

    #[test]
    fn a_row_fits_its_columns_whatever_the_entry_held() {
        let user = "ü".repeat(1 << 20);
        let row = conflict(&user, i64::MAX, "é\0x".repeat(5000)).row("e1");
        assert_eq!(row.user.as_deref().map(|u| u.chars().count()), Some(64));
        assert!(row
            .user
            .as_deref()
            .is_some_and(|u| u.chars().all(|c| c == 'ü')));
        assert_eq!(row.ticket, None, "beyond INT");
        assert_eq!(row.detail.chars().count(), DETAIL_CHARS);
        assert!(row.detail.ends_with(" [cut]"), "{}", &row.detail[..20]);
        assert!(!row.detail.contains('\0'));
        assert_eq!(row.stream_id, "7-1");
        assert_eq!(row.sha256.as_deref().map(str::len), Some(64));
    }

    #[test]
    fn a_row_within_bounds_is_the_conflict_itself() {
        let row = conflict("bob", 2_147_483_647, "fine".into()).row("e1");
        assert_eq!(row.user.as_deref(), Some("bob"));
        assert_eq!(row.ticket, Some(i32::MAX));
        assert_eq!(row.detail, "fine");
        let exact = "d".repeat(DETAIL_CHARS);
        assert_eq!(conflict("u", 1, exact.clone()).row("e").detail, exact);
        assert_eq!(conflict("u", -1, String::new()).row("e").ticket, Some(-1));
    }

    #[test]
    fn about_takes_user_ticket_and_digest_from_the_entry() {
        let fields = vec![(b"op".to_vec(), b"bogus".to_vec())];
        let e = Entry::read("e", StreamId::new(3, 0), &fields);
        let c = Conflict::about(&e, "malformed", "x".into());
        assert_eq!(c.sha256, e.raw.sha256_hex());
        assert!(c.sha256.is_some());
        let made = Entry::new(
            StreamId::new(4, 0),
            Err(Malformed {
                reason: "r".into(),
                user: Some("u".into()),
                ticket: Some(9),
                raw: String::new(),
            }),
        );
        let c = Conflict::about(&made, "malformed", "x".into());
        assert_eq!(
            (c.user.as_deref(), c.ticket, c.sha256),
            (Some("u"), Some(9), None)
        );
    }
}
