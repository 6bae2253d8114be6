//! The bench's correctness oracle, pure: what a run must satisfy whatever
//! the design under test. A run of claims has exactly `min(tickets,
//! users)` winners, each with a distinct ticket in `1..=tickets`
//! ([`check_claims`]); a checkout log replayed in id order never hands a
//! held or sold ticket to anyone else, confirms only before the deadline
//! and releases only after it ([`LogCheck`]); and two views of who holds
//! what (the replies, Redis, MySQL, the log) agree ([`diff_holders`]).
//! Every violation is a sentence for the report.

use std::collections::{HashMap, HashSet};

use protocol::record::{Op, Record};

/// Correctness of one run of claims: `tickets` handed out to the winners
/// (one entry per winning user), out of `total`, by `users` distinct users.
/// Returns the violations found (empty = correct).
pub fn check_claims(total: u64, users: u64, winners: &HashMap<String, i64>) -> Vec<String> {
    let mut out = Vec::new();
    let expected = total.min(users);
    let n = winners.len() as u64;
    if n > total {
        out.push(format!(
            "OVERSELL: {n} winners for {total} tickets ({} too many)",
            n - total
        ));
    } else if n != expected {
        out.push(format!(
            "wrong winner count: {n} winners, expected min({total} tickets, {users} users) = {expected}"
        ));
    }
    let mut seen: HashSet<i64> = HashSet::with_capacity(winners.len());
    let mut dups: Vec<i64> = Vec::new();
    let mut out_of_range: Vec<i64> = Vec::new();
    for &t in winners.values() {
        if !seen.insert(t) {
            dups.push(t);
        }
        if t < 1 || t as u64 > total {
            out_of_range.push(t);
        }
    }
    if !dups.is_empty() {
        dups.sort_unstable();
        out.push(format!(
            "DUPLICATE ticket numbers: {} duplicates, e.g. {:?}",
            dups.len(),
            &dups[..dups.len().min(5)]
        ));
    }
    if !out_of_range.is_empty() {
        out_of_range.sort_unstable();
        out.push(format!(
            "ticket numbers outside 1..={total}: {:?}",
            &out_of_range[..out_of_range.len().min(5)]
        ));
    }
    out
}

/// What a checkout log says (replayed in id order): counts, lateness of each release, the sold
/// tickets at the end, and any state change that breaks the rules.
#[derive(Default, Debug)]
pub struct LogCheck {
    pub holds: u64,
    pub confirms: u64,
    pub expires: u64,
    /// How late each release was: `at` minus the hold's `until`, ms.
    pub late_ms: Vec<i64>,
    pub last_at: i64,
    /// ticket -> (user, deadline; `None` once sold).
    live: HashMap<i64, (String, Option<i64>)>,
    pub violations: Vec<String>,
}

impl LogCheck {
    pub fn replay(records: &[Record]) -> LogCheck {
        let mut c = LogCheck::default();
        for r in records {
            c.step(r);
        }
        c
    }

    fn bad(&mut self, msg: String) {
        if self.violations.len() < 5 {
            self.violations.push(msg);
        }
    }

    /// Follows one record of the log.
    fn step(&mut self, r: &Record) {
        self.last_at = self.last_at.max(r.at);
        let Some((user, tickets, until)) = r.op.order() else {
            return;
        };
        for &n in tickets.as_slice() {
            match &r.op {
                Op::Hold { .. } | Op::Offer { .. } | Op::Claim { .. } => {
                    let deadline = (until > 0).then_some(until);
                    let prev = self.live.insert(n, (user.clone(), deadline));
                    if let Some((other, _)) = prev {
                        self.bad(format!(
                            "ticket {n} handed to {user} at {} while {other} had it",
                            r.at
                        ));
                    }
                }
                Op::Confirm { .. } => self.confirm(n, user, r.at),
                Op::Expire { .. } => self.expire(n, user, r.at),
                _ => drop(self.live.remove(&n)),
            }
        }
        match r.op {
            Op::Hold { .. } | Op::Offer { .. } => self.holds += 1,
            Op::Confirm { .. } => self.confirms += 1,
            Op::Expire { .. } => self.expires += 1,
            _ => {}
        }
    }

    fn confirm(&mut self, n: i64, user: &str, at: i64) {
        match self.live.get_mut(&n) {
            Some((u, until @ Some(_))) if u == user && until.is_some_and(|d| at < d) => {
                *until = None
            }
            _ => self.bad(format!(
                "confirm of ticket {n} by {user} at {at}, not held by them before its deadline"
            )),
        }
    }

    fn expire(&mut self, n: i64, user: &str, at: i64) {
        match self.live.remove(&n) {
            Some((u, Some(until))) if u == user && at >= until => self.late_ms.push(at - until),
            Some((u, Some(until))) if u == user => self.bad(format!(
                "ticket {n} of {user} released {} ms before its deadline",
                until - at
            )),
            _ => self.bad(format!(
                "expire of ticket {n} by {user} at {at}, not held by them"
            )),
        }
    }

    /// user -> ticket of every sold ticket.
    pub fn sold(&self) -> HashMap<String, i64> {
        self.live
            .iter()
            .filter(|(_, (_, until))| until.is_none())
            .map(|(n, (u, _))| (u.clone(), *n))
            .collect()
    }
}

/// Differences between two user -> ticket maps (`left` named `a`, `right` `b`),
/// at most a few examples per kind. Empty = equal.
pub fn diff_holders(
    a: &str,
    left: &HashMap<String, i64>,
    b: &str,
    right: &HashMap<String, i64>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut only_left: Vec<&String> = left.keys().filter(|k| !right.contains_key(*k)).collect();
    let mut only_right: Vec<&String> = right.keys().filter(|k| !left.contains_key(*k)).collect();
    let mut differ: Vec<&String> = left
        .iter()
        .filter(|(k, v)| right.get(*k).is_some_and(|w| w != *v))
        .map(|(k, _)| k)
        .collect();
    only_left.sort();
    only_right.sort();
    differ.sort();
    if !only_left.is_empty() {
        out.push(format!(
            "{} users hold a ticket in {a} but not in {b}, e.g. {:?}",
            only_left.len(),
            &only_left[..only_left.len().min(3)]
        ));
    }
    if !only_right.is_empty() {
        out.push(format!(
            "{} users hold a ticket in {b} but not in {a}, e.g. {:?}",
            only_right.len(),
            &only_right[..only_right.len().min(3)]
        ));
    }
    if !differ.is_empty() {
        let k = differ[0];
        out.push(format!(
            "{} users have different tickets in {a} and {b}, e.g. {k:?}: {} vs {}",
            differ.len(),
            left[k],
            right[k]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::Tickets;

    fn rec(op: Op, at: i64) -> Record {
        Record { op, at }
    }

    fn confirm(u: &str, n: i64, at: i64) -> Record {
        let (user, tickets) = (u.into(), Tickets::One(n));
        rec(Op::Confirm { user, tickets }, at)
    }

    fn expire(u: &str, n: i64, at: i64) -> Record {
        let (user, tickets) = (u.into(), Tickets::One(n));
        rec(
            Op::Expire {
                from: None,
                user,
                tickets,
            },
            at,
        )
    }

    fn hold(u: &str, n: i64, until: i64, at: i64) -> Record {
        rec(
            Op::Hold {
                from: None,
                pick: None,
                user: u.into(),
                tickets: Tickets::One(n),
                until,
            },
            at,
        )
    }

    #[test]
    fn replay_measures_lateness_and_keeps_sold_tickets() {
        let log = [
            hold("a", 1, 2000, 0),
            hold("b", 2, 2000, 1),
            confirm("a", 1, 500),
            expire("b", 2, 2040),
            hold("c", 2, 4100, 2100),
            confirm("c", 2, 2200),
        ];
        let c = LogCheck::replay(&log);
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        assert_eq!((c.holds, c.confirms, c.expires), (3, 2, 1));
        assert_eq!(c.late_ms, [40]);
        assert_eq!(c.last_at, 2200);
        let sold = c.sold();
        assert_eq!((sold.len(), sold["a"], sold["c"]), (2, 1, 2));
    }

    #[test]
    fn replay_finds_double_handouts_early_releases_and_late_confirms() {
        let log = [
            hold("a", 1, 2000, 0),
            hold("b", 1, 2000, 10),
            expire("b", 1, 1500),
            hold("c", 3, 100, 0),
            confirm("c", 3, 100),
        ];
        let v = LogCheck::replay(&log).violations;
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v[0].starts_with("ticket 1 handed to b"), "{v:?}");
        assert!(v[1].contains("released 500 ms before"), "{v:?}");
        assert!(v[2].starts_with("confirm of ticket 3 by c"), "{v:?}");
    }

    fn winners(pairs: &[(&str, i64)]) -> HashMap<String, i64> {
        pairs.iter().map(|(u, t)| (u.to_string(), *t)).collect()
    }

    #[test]
    fn check_claims_accepts_a_correct_run() {
        let w = winners(&[("a", 1), ("b", 2), ("c", 3)]);
        assert!(check_claims(3, 10, &w).is_empty());
        assert!(check_claims(5, 3, &w).is_empty());
    }

    #[test]
    fn check_claims_finds_oversell_duplicates_range_and_undersell() {
        let w = winners(&[("a", 1), ("b", 1), ("c", 3)]);
        let v = check_claims(2, 10, &w);
        assert!(v.iter().any(|s| s.starts_with("OVERSELL")), "{v:?}");
        assert!(v.iter().any(|s| s.starts_with("DUPLICATE")), "{v:?}");
        assert!(v.iter().any(|s| s.contains("outside 1..=2")), "{v:?}");
        let v = check_claims(10, 10, &winners(&[("a", 1)]));
        assert!(v[0].starts_with("wrong winner count"), "{v:?}");
        let v = check_claims(10, 10, &winners(&[("a", 0)]));
        assert!(v.iter().any(|s| s.contains("outside")), "{v:?}");
    }

    #[test]
    fn diff_holders_reports_each_kind() {
        let a = winners(&[("a", 1), ("b", 2), ("c", 3)]);
        assert!(diff_holders("redis", &a, "mysql", &a.clone()).is_empty());
        let b = winners(&[("a", 1), ("b", 5), ("d", 4)]);
        let v = diff_holders("redis", &a, "mysql", &b);
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(
            v[0].contains("\"c\"") && v[0].contains("not in mysql"),
            "{v:?}"
        );
        assert!(
            v[1].contains("\"d\"") && v[1].contains("not in redis"),
            "{v:?}"
        );
        assert!(v[2].contains("\"b\": 2 vs 5"), "{v:?}");
    }
}
