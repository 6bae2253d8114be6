//! `ticketgate-sidecar reconcile [--event E]`: compares Redis with MySQL.
//!
//! For each event (the one given, or every event known to either side) it
//! compares Redis's `holders` hash with MySQL's active participations and
//! `TICKET.STATUS remaining` with `ticket_stock.remaining_stock`, and prints
//! every difference. Entries still in the log (`unsynced`) are reported too:
//! until the sidecar has applied them, the two sides legitimately differ.
//! An event only MySQL knows was dropped in Redis (`TICKET.DROP`) after it
//! was synced: it is noted, not counted as drift.
//! Exit status: 0 = consistent, 1 = drift, 2 = could not compare.

use std::collections::{BTreeSet, HashMap};

use crate::redisio::RedisEvent;

/// MySQL's view of one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MysqlEvent {
    /// Active participations: user -> ticket.
    pub holders: HashMap<String, i64>,
    /// `remaining_stock`, if the stock row exists.
    pub remaining: Option<i64>,
}

/// Every difference between the two views, one human-readable line each.
pub fn diff(event: &str, redis: Option<&RedisEvent>, mysql: Option<&MysqlEvent>) -> Vec<String> {
    let mut out = Vec::new();
    let (r, m) = match (redis, mysql) {
        (None, None) => return vec![format!("{event}: unknown to both Redis and MySQL")],
        // Dropped in Redis after the sale (TICKET.DROP): MySQL keeps the
        // history, nothing to compare. The caller prints a note.
        (None, Some(_)) => return out,
        (Some(r), None) => (r, &MysqlEvent::default()),
        (Some(r), Some(m)) => (r, m),
    };
    if r.unsynced > 0 {
        out.push(format!(
            "{event}: {} log entries not yet applied to MySQL",
            r.unsynced
        ));
    }
    match m.remaining {
        None => out.push(format!(
            "{event}: no ticket_stock row in MySQL (Redis remaining {})",
            r.remaining
        )),
        Some(s) if s != r.remaining => out.push(format!(
            "{event}: remaining differs: Redis {} MySQL {s}",
            r.remaining
        )),
        Some(_) => {}
    }
    let users: BTreeSet<&String> = r.holders.keys().chain(m.holders.keys()).collect();
    for u in users {
        match (r.holders.get(u), m.holders.get(u)) {
            (Some(a), Some(b)) if a != b => out.push(format!(
                "{event}: user {u:?} holds ticket {a} in Redis but {b} in MySQL"
            )),
            (Some(a), None) => out.push(format!(
                "{event}: user {u:?} holds ticket {a} in Redis, no active row in MySQL"
            )),
            (None, Some(b)) => out.push(format!(
                "{event}: user {u:?} has active ticket {b} in MySQL, not in Redis"
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(holders: &[(&str, i64)], remaining: i64, unsynced: i64) -> RedisEvent {
        RedisEvent {
            holders: holders.iter().map(|(u, t)| (u.to_string(), *t)).collect(),
            remaining,
            unsynced,
        }
    }

    fn m(holders: &[(&str, i64)], remaining: Option<i64>) -> MysqlEvent {
        MysqlEvent {
            holders: holders.iter().map(|(u, t)| (u.to_string(), *t)).collect(),
            remaining,
        }
    }

    #[test]
    fn consistent_is_empty() {
        let a = r(&[("u1", 1), ("u2", 2)], 8, 0);
        let b = m(&[("u2", 2), ("u1", 1)], Some(8));
        assert!(diff("e", Some(&a), Some(&b)).is_empty());
    }

    #[test]
    fn reports_each_kind_of_drift() {
        let a = r(&[("u1", 1), ("u2", 2)], 8, 3);
        let b = m(&[("u1", 5), ("u3", 3)], Some(7));
        let d = diff("e", Some(&a), Some(&b));
        assert_eq!(d.len(), 5, "{d:?}");
        assert!(d[0].contains("3 log entries"));
        assert!(d[1].contains("Redis 8 MySQL 7"));
        assert!(d
            .iter()
            .any(|l| l.contains("\"u1\" holds ticket 1 in Redis but 5")));
        assert!(d
            .iter()
            .any(|l| l.contains("\"u2\" holds ticket 2 in Redis, no active row")));
        assert!(d
            .iter()
            .any(|l| l.contains("\"u3\" has active ticket 3 in MySQL")));
        assert_eq!(diff("e", Some(&a), None).len(), 4);
        assert!(diff("e", None, Some(&b)).is_empty());
        assert_eq!(diff("e", None, None).len(), 1);
    }
}
