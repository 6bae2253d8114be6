//! Quarantine: has Redis lost or replaced an event behind the sidecar's
//! back? (docs/design.md, "Incarnations and Redis data loss".)
//!
//! [`check`] is a pure function of what MySQL knows about an event (its
//! committed offset, how many entries it has written, its incarnation) and
//! what Redis shows now (the meta hash's incarnation, the log's
//! `XINFO STREAM` numbers). It answers with [`Evidence`] — a reason code
//! and a sentence naming the event and the numbers — or `None` when the
//! two agree. The daemon's verifier calls it under the offset row lock,
//! after trimming what was written; `reconcile` calls it read-only, with
//! the written entries still in the log counted in
//! [`LogInfo::written_present`].
//!
//! Reasons, most specific first:
//! * `incarnation_changed`: the meta's incarnation is not MySQL's (the
//!   event was re-created, or another one restored over it);
//! * `log_restarted`: the log's last generated id is below the offset (the
//!   log began again: a flush, a restart without AOF, an old RDB);
//! * `entries_lost`: Redis deleted fewer entries than MySQL wrote, so
//!   entries the sidecar wrote are gone (an old RDB, a failover that
//!   dropped unreplicated writes);
//! * `vanished`: no meta, and no log or nothing in it after the offset,
//!   and no drop written (the caller never asks about dropped events).

use crate::model::{Evidence, Reason};
use protocol::StreamId;

/// What MySQL knows about one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MysqlFacts {
    /// The committed offset (`ticket_sync_offset.last_stream_id`).
    pub offset: StreamId,
    /// Entries written in total (`entries`; None = unknown, pre-V3).
    pub entries: Option<u64>,
    /// The incarnation (16 hex digits; None = an event from before 0.3).
    pub incarnation: Option<String>,
}

/// `XINFO STREAM` of the log, plus what the caller counted in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogInfo {
    /// `last-generated-id`.
    pub last_generated: StreamId,
    /// `entries-added`: every entry ever appended.
    pub entries_added: u64,
    /// `length`: entries in it now.
    pub length: u64,
    /// Of those, how many are at or below the offset (0 after the
    /// verifier's XTRIM; reconcile counts them).
    pub written_present: u64,
}

impl LogInfo {
    /// Entries Redis deleted (trimmed) plus those still there at or below
    /// the offset: what it has seen of what MySQL wrote.
    fn seen_written(&self) -> u64 {
        let deleted = self.entries_added.saturating_sub(self.length);
        deleted + self.written_present
    }

    /// Entries after the offset.
    fn after_offset(&self) -> u64 {
        self.length.saturating_sub(self.written_present)
    }
}

/// What Redis shows of one event now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RedisFacts {
    /// The meta hash exists; with its incarnation (None = pre-0.3 event).
    pub meta: Option<Option<String>>,
    /// The log exists, with its numbers.
    pub log: Option<LogInfo>,
}

/// The evidence that Redis lost or replaced `event`, if any.
pub fn check(event: &str, m: &MysqlFacts, r: &RedisFacts) -> Option<Evidence> {
    check_identity(event, m, r).or_else(|| check_entries(event, m, r))
}

/// A row from before V3: an older sidecar wrote its init without storing
/// an incarnation, so the meta's incarnation is adopted, not evidence.
fn pre_v3(m: &MysqlFacts) -> bool {
    m.entries.is_none() && m.incarnation.is_none()
}

/// The checks that need no entry count: incarnation, vanished, restarted
/// log (the verifier runs them before it trims).
pub fn check_identity(event: &str, m: &MysqlFacts, r: &RedisFacts) -> Option<Evidence> {
    let found = |reason, text| Some(Evidence { reason, text });
    if let Some(inc) = &r.meta {
        if inc != &m.incarnation && !pre_v3(m) {
            let text = format!(
                "event {event}: Redis has incarnation {} but MySQL has {} (the event was re-created or replaced in Redis)",
                show(inc),
                show(&m.incarnation)
            );
            return found(Reason::IncarnationChanged, text);
        }
    }
    if r.meta.is_none() && r.log.is_none_or(|l| l.after_offset() == 0) {
        // a row from before V3 (no count), gone from Redis already at the
        // upgrade: a DROP before 0.3 left no trace, nothing to tell
        m.entries?;
        let log = match &r.log {
            Some(_) => "its log has nothing after the offset",
            None => "its log is gone",
        };
        let text = format!(
            "event {event}: no meta hash in Redis and {log}, but MySQL has it applied up to {} and no drop (Redis lost it)",
            m.offset
        );
        return found(Reason::Vanished, text);
    }
    let last = r.log.map_or(StreamId::ZERO, |l| l.last_generated);
    if last < m.offset {
        let text = format!(
            "event {event}: Redis's log ends at {} (last generated id) but MySQL has applied it up to {} (the log started again: Redis lost data)",
            last, m.offset
        );
        return found(Reason::LogRestarted, text);
    }
    None
}

/// The entry count check: Redis has seen fewer entries than MySQL wrote
/// (with no count, a pre-V3 row: none at all, though MySQL has an offset).
fn check_entries(event: &str, m: &MysqlFacts, r: &RedisFacts) -> Option<Evidence> {
    let log = r.log?;
    let found = |reason, text| Some(Evidence { reason, text });
    match m.entries {
        None if log.seen_written() == 0 && m.offset > StreamId::ZERO => {
            let text = format!(
                "event {event}: Redis's log never held an entry MySQL applied (offset {}): it is another log",
                m.offset
            );
            found(Reason::EntriesLost, text)
        }
        Some(written) if log.seen_written() < written => {
            let text = format!(
                "event {event}: MySQL applied {written} log entries but Redis's log has only seen {} of them ({} added, {} left after offset {}): applied entries are gone from Redis",
                log.seen_written(),
                log.entries_added,
                log.length,
                m.offset
            );
            found(Reason::EntriesLost, text)
        }
        _ => None,
    }
}

/// What a row from before V3 (`entries` NULL) adopts when the log exists
/// and shows no evidence: what Redis deleted or keeps at or below the
/// offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopt {
    pub entries: u64,
    /// The meta's incarnation, when MySQL has none.
    pub incarnation: Option<String>,
}

/// See [`Adopt`].
pub fn adopt(m: &MysqlFacts, r: &RedisFacts) -> Option<Adopt> {
    let log = r.log.filter(|_| m.entries.is_none())?;
    let incarnation = match m.incarnation {
        None => r.meta.clone().flatten(),
        Some(_) => None,
    };
    Some(Adopt {
        entries: log.seen_written(),
        incarnation,
    })
}

fn show(inc: &Option<String>) -> &str {
    inc.as_deref().unwrap_or("none")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(ms: u64) -> StreamId {
        StreamId::new(ms, 0)
    }

    fn mysql(offset: u64, entries: Option<u64>) -> MysqlFacts {
        MysqlFacts {
            offset: id(offset),
            entries,
            incarnation: Some("00000000000000aa".into()),
        }
    }

    fn log(last: u64, added: u64, length: u64) -> Option<LogInfo> {
        Some(LogInfo {
            last_generated: id(last),
            entries_added: added,
            length,
            written_present: 0,
        })
    }

    fn redis(inc: Option<&str>, log: Option<LogInfo>) -> RedisFacts {
        RedisFacts {
            meta: Some(inc.map(str::to_owned)),
            log,
        }
    }

    fn reason(m: &MysqlFacts, r: &RedisFacts) -> Option<Reason> {
        check("e1", m, r).map(|e| e.reason)
    }

    #[test]
    fn a_healthy_event_has_no_evidence() {
        let m = mysql(10, Some(10));
        // 10 written and trimmed, 2 new ones waiting
        let r = redis(Some("00000000000000aa"), log(12, 12, 2));
        assert_eq!(check("e1", &m, &r), None);
        // pre-0.3 on both sides
        let m = MysqlFacts {
            incarnation: None,
            ..mysql(10, None)
        };
        assert_eq!(reason(&m, &redis(None, log(10, 10, 0))), None);
    }

    #[test]
    fn each_reason_names_event_and_evidence() {
        let m = mysql(10, Some(10));
        let e = check("e1", &m, &redis(Some("00000000000000bb"), log(12, 12, 2))).unwrap();
        assert_eq!(e.reason, Reason::IncarnationChanged);
        assert!(e.text.contains("e1") && e.text.contains("00000000000000bb"));
        let e = check("e1", &m, &redis(Some("00000000000000aa"), log(4, 4, 4))).unwrap();
        assert_eq!(e.reason, Reason::LogRestarted);
        assert!(
            e.text.contains("4-0") && e.text.contains("10-0"),
            "{}",
            e.text
        );
        // an old RDB: ids go on, but 3 written entries never existed here
        let e = check("e1", &m, &redis(Some("00000000000000aa"), log(12, 9, 2))).unwrap();
        assert_eq!(e.reason, Reason::EntriesLost);
        assert!(e.text.contains("applied 10"), "{}", e.text);
        let gone = RedisFacts::default();
        let e = check("e1", &m, &gone).unwrap();
        assert_eq!(e.reason, Reason::Vanished);
        assert!(e.text.contains("log is gone"));
        // an empty log left behind without meta is vanished too
        let empty = RedisFacts {
            meta: None,
            log: log(10, 10, 0),
        };
        assert_eq!(reason(&m, &empty), Some(Reason::Vanished));
        // meta gone but entries waiting (a drop not yet written): no verdict
        let pending = RedisFacts {
            meta: None,
            log: log(11, 11, 1),
        };
        assert_eq!(reason(&m, &pending), None);
    }

    #[test]
    fn reconcile_counts_untrimmed_written_entries() {
        let m = mysql(10, Some(10));
        let mut l = log(12, 12, 5).unwrap();
        // 7 trimmed + 3 written but not yet trimmed = 10: fine
        l.written_present = 3;
        let r = redis(Some("00000000000000aa"), Some(l));
        assert_eq!(reason(&m, &r), None);
        l.written_present = 2;
        let r = redis(Some("00000000000000aa"), Some(l));
        assert_eq!(reason(&m, &r), Some(Reason::EntriesLost));
    }

    #[test]
    fn adopts_a_count_for_pre_v3_rows_only() {
        let r = redis(Some("00000000000000aa"), log(12, 12, 2));
        let want = |entries, inc: Option<&str>| {
            Some(Adopt {
                entries,
                incarnation: inc.map(str::to_owned),
            })
        };
        assert_eq!(adopt(&mysql(10, None), &r), want(10, None));
        assert_eq!(adopt(&mysql(10, Some(10)), &r), None);
        assert_eq!(adopt(&mysql(10, None), &RedisFacts::default()), None);
        // an event the module (0.3) made before the sidecar was upgraded
        let old = MysqlFacts {
            incarnation: None,
            ..mysql(10, None)
        };
        assert_eq!(check("e1", &old, &r), None);
        assert_eq!(adopt(&old, &r), want(10, Some("00000000000000aa")));
        // gone from Redis at the upgrade: a DROP before 0.3 left no trace
        assert_eq!(check("e1", &old, &RedisFacts::default()), None);
        // ... but not a log that never held a written entry (re-created)
        let fresh = redis(Some("00000000000000bb"), log(12, 2, 2));
        assert_eq!(reason(&old, &fresh), Some(Reason::EntriesLost));
        assert_eq!(check_identity("e1", &old, &fresh), None);
    }

    #[test]
    fn stored_reason_round_trips() {
        let e = Evidence {
            reason: Reason::LogRestarted,
            text: "x".repeat(400),
        };
        let s = e.stored();
        assert_eq!(s.chars().count(), 255);
        assert_eq!(Evidence::from_stored(&s).0, Some(Reason::LogRestarted));
        assert_eq!(Evidence::from_stored("weird").0, None);
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.code()), Some(r));
        }
    }

    /// Facts of an intact log: `written` entries written (and `trimmed` of
    /// them trimmed), `waiting` more after the offset.
    fn intact(written: u64, trimmed: u64, waiting: u64) -> (MysqlFacts, RedisFacts) {
        let m = mysql(written, Some(written));
        let l = LogInfo {
            last_generated: id(written + waiting),
            entries_added: written + waiting,
            length: written - trimmed + waiting,
            written_present: written - trimmed,
        };
        (m, redis(Some("00000000000000aa"), Some(l)))
    }

    proptest! {
        /// An intact log with its meta never raises an alarm, however much
        /// of it is written, trimmed or waiting.
        #[test]
        fn intact_logs_are_never_quarantined(written in 1..1000u64, t in 0..1000u64, waiting in 0..50u64) {
            let (m, r) = intact(written, t % (written + 1), waiting);
            prop_assert_eq!(check("e", &m, &r), None);
        }

        /// Losing any written entry (a shorter history) is always evidence.
        #[test]
        fn losing_written_entries_is_always_evidence(written in 1..1000u64, lost in 1..1000u64, waiting in 0..50u64) {
            let lost = lost.min(written);
            let (m, mut r) = intact(written, written, waiting);
            if let Some(l) = r.log.as_mut() {
                l.entries_added -= lost;
            }
            let e = check("e", &m, &r);
            prop_assert!(matches!(e.map(|e| e.reason), Some(Reason::EntriesLost)));
        }

        /// Any incarnation other than MySQL's is evidence, whatever the log.
        #[test]
        fn another_incarnation_is_always_evidence(written in 1..100u64, waiting in 0..5u64, inc in "[0-9a-f]{16}") {
            prop_assume!(inc != "00000000000000aa");
            let (m, mut r) = intact(written, written, waiting);
            r.meta = Some(Some(inc));
            prop_assert_eq!(reason(&m, &r), Some(Reason::IncarnationChanged));
        }
    }
}
