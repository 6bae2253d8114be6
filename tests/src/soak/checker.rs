//! The soak's history checker: pure functions from the history, the final
//! Redis and MySQL states and the conflict rows to a list of broken promises
//! (and a few counts to print). No I/O, unit-tested below.
//!
//! A user's operations all come from one writer thread, in order. After
//! the last acknowledged write of a user, only that write's result or the
//! result of one of the user's later (unacknowledged) operations may be
//! visible, or what the module itself makes of them (a hold expiring after
//! its deadline, a waiting user offered tickets).

use std::collections::{BTreeMap, BTreeSet};

use super::history::{ConflictRow, Kind, Op, OrderState, Reply, States, UserState};
use super::taken_back;

/// The only conflict reason a failover may leave.
pub const LOST_IN_FAILOVER: &str = "lost_in_failover";

/// What the checker found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Findings {
    /// Broken promises, one line each; empty when everything held.
    pub violations: Vec<String>,
    pub acked_writes: usize,
    pub unacked_writes: usize,
    /// Unacknowledged writes that are gone (a lower bound), one (event,
    /// user) per write.
    pub lost_unacked: Vec<(String, String)>,
    /// Of those, the ones a `lost_in_failover` conflict row reports.
    pub lost_unacked_reported: usize,
    /// Acknowledged answers compared with the user's next answer (none
    /// may be taken back: `taken_back`).
    pub acked_answers_checked: usize,
}

/// Everything the checker reads.
pub struct Input<'a> {
    pub history: &'a [Op],
    pub redis: &'a States,
    pub mysql: &'a States,
    pub conflicts: &'a [ConflictRow],
    /// Unix ms when the final states were read.
    pub now_ms: i64,
}

/// Runs every check.
pub fn check(input: &Input) -> Findings {
    let by_user = ops_by_user(input.history);
    let mut findings = Findings {
        acked_writes: input.history.iter().filter(|o| o.acked).count(),
        unacked_writes: input.history.iter().filter(|o| unacked_write(o)).count(),
        ..Findings::default()
    };
    findings
        .violations
        .extend(lost_acknowledged(&by_user, input.redis, input.now_ms));
    findings
        .violations
        .extend(tickets_held_twice(input.redis, "Redis"));
    findings
        .violations
        .extend(tickets_held_twice(input.mysql, "MySQL"));
    findings
        .violations
        .extend(redis_differs_from_mysql(input.redis, input.mysql));
    findings
        .violations
        .extend(bad_conflicts(&by_user, input.conflicts));
    for ops in by_user.values() {
        let (taken_back, checked) = taken_back::check_user(ops);
        findings.violations.extend(taken_back);
        findings.acked_answers_checked += checked;
    }
    findings.lost_unacked = lost_unacknowledged(&by_user, input.redis, input.now_ms);
    let reported: BTreeSet<(String, String)> = input
        .conflicts
        .iter()
        .filter_map(|c| Some((c.event.clone(), c.user.clone()?)))
        .collect();
    findings.lost_unacked_reported = findings
        .lost_unacked
        .iter()
        .filter(|k| reported.contains(*k))
        .count();
    findings
}

type ByUser<'a> = BTreeMap<(String, String), Vec<&'a Op>>;

fn ops_by_user(history: &[Op]) -> ByUser<'_> {
    let mut map: ByUser = BTreeMap::new();
    for op in history {
        map.entry((op.event.clone(), op.user.clone()))
            .or_default()
            .push(op);
    }
    map
}

/// A write that may have happened without `WAIT` acknowledging it.
fn unacked_write(op: &Op) -> bool {
    !op.acked && (op.wrote || matches!(op.reply, Reply::Unknown(_)))
}

/// Whether `state` may be what `op` left, possibly changed since by the
/// module itself (a hold past its deadline expired, a waiting user offered).
pub fn may_follow(op: &Op, state: &UserState, now_ms: i64) -> bool {
    let expired_ok = op.expires_from_ms.is_some_and(|t| now_ms >= t);
    let sold = matches!(state.order, Some((_, OrderState::Sold)));
    match (&op.kind, &op.reply) {
        (_, Reply::Unknown(_) | Reply::Refused(_)) => true,
        (Kind::Claim { .. }, Reply::Tickets(want)) => match &state.order {
            Some((have, _)) => have == want,
            None => expired_ok,
        },
        (Kind::Confirm, Reply::Sold(n)) => {
            matches!(&state.order, Some((t, OrderState::Sold)) if t.len() as i64 == *n)
        }
        (Kind::Cancel, Reply::Returned(_)) => state.order.is_none(),
        (Kind::Wait, Reply::Position(_)) => !sold,
        (Kind::Leave, Reply::Left(_)) => !state.waiting && !sold,
        _ => false,
    }
}

/// Each user whose last acknowledged write is not visible in `final_states`
/// (nor any later operation of theirs).
fn lost_acknowledged(by_user: &ByUser, final_states: &States, now_ms: i64) -> Vec<String> {
    let mut out = Vec::new();
    let nobody = UserState::default();
    for (key, ops) in by_user {
        let Some(last_ack) = ops.iter().rposition(|o| o.acked) else {
            continue;
        };
        let state = final_states.get(key).unwrap_or(&nobody);
        let candidates = ops[last_ack..]
            .iter()
            .filter(|o| !matches!(o.reply, Reply::Refused(_)));
        if candidates.clone().any(|o| may_follow(o, state, now_ms)) {
            continue;
        }
        let op = ops[last_ack];
        out.push(format!(
            "acknowledged write lost: event {} user {}: {} answered {:?} (acknowledged by WAIT; {} later op(s)), but Redis ends with {:?}",
            key.0,
            key.1,
            op.kind.name(),
            op.reply,
            ops.len() - last_ack - 1,
            state
        ));
    }
    out
}

/// Unacknowledged writes that are gone, one (event, user) per write: a
/// user's last write not visible at the end, and earlier ones the user's
/// next answer shows missing (a lower bound: most losses leave no trace).
fn lost_unacknowledged(
    by_user: &ByUser,
    final_states: &States,
    now_ms: i64,
) -> Vec<(String, String)> {
    let nobody = UserState::default();
    let mut lost = Vec::new();
    for (key, ops) in by_user {
        let seen = (0..ops.len()).filter(|&i| seen_missing(ops, i)).count();
        lost.extend(std::iter::repeat_n(key.clone(), seen));
        let Some(last) = ops.iter().rposition(|o| o.wrote) else {
            continue;
        };
        let state = final_states.get(key).unwrap_or(&nobody);
        let op = ops[last];
        if !op.acked && !may_follow(op, state, now_ms) && !seen_missing(ops, last) {
            lost.push(key.clone());
        }
    }
    lost
}

/// Whether `ops[i]`, an unacknowledged write, is shown missing by the
/// user's next answered operation: a confirm or cancel finding no order
/// before the claim's hold expired, or a wait refused with `HOLDING` after
/// a cancel.
fn seen_missing(ops: &[&Op], i: usize) -> bool {
    let write = ops[i];
    if !write.wrote || write.acked {
        return false;
    }
    let Some(next) = ops[i + 1..].iter().find(|o| o.answered()) else {
        return false;
    };
    let live = write.expires_from_ms.is_none_or(|t| next.sent_ms < t);
    match (&write.reply, &next.kind, &next.reply) {
        (Reply::Tickets(_), Kind::Confirm, Reply::Refused(code)) => live && code == "NOHOLD",
        (Reply::Tickets(_), Kind::Cancel, Reply::Returned(None)) => live,
        (Reply::Returned(Some(_)), Kind::Wait, Reply::Refused(code)) => code == "HOLDING",
        _ => false,
    }
}

/// Tickets of one event held (held or sold) by more than one user.
fn tickets_held_twice(states: &States, side: &str) -> Vec<String> {
    let mut holders: BTreeMap<(&str, i64), Vec<&str>> = BTreeMap::new();
    for ((event, user), state) in states {
        for t in state.order.iter().flat_map(|(t, _)| t) {
            holders.entry((event, *t)).or_default().push(user);
        }
    }
    holders
        .into_iter()
        .filter(|(_, users)| users.len() > 1)
        .map(|((event, t), users)| format!("{side}: event {event} ticket {t} held by {users:?}"))
        .collect()
}

/// Every (event, user) whose order differs between Redis and MySQL.
fn redis_differs_from_mysql(redis: &States, mysql: &States) -> Vec<String> {
    let keys: BTreeSet<&(String, String)> = redis.keys().chain(mysql.keys()).collect();
    keys.into_iter()
        .filter_map(|key| {
            let r = redis.get(key).and_then(|s| s.order.clone());
            let m = mysql.get(key).and_then(|s| s.order.clone());
            (r != m).then(|| {
                format!(
                    "Redis != MySQL: event {} user {}: Redis {r:?}, MySQL {m:?}",
                    key.0, key.1
                )
            })
        })
        .collect()
}

/// Conflict rows of another reason than `lost_in_failover`, or naming a
/// user without any unacknowledged write.
fn bad_conflicts(by_user: &ByUser, conflicts: &[ConflictRow]) -> Vec<String> {
    conflicts
        .iter()
        .filter_map(|c| {
            if c.reason != LOST_IN_FAILOVER {
                return Some(format!("conflict of reason {}: {c:?}", c.reason));
            }
            let user = c.user.clone().unwrap_or_default();
            let unacked = by_user
                .get(&(c.event.clone(), user))
                .is_some_and(|ops| ops.iter().any(|o| unacked_write(o)));
            (!unacked)
                .then(|| format!("conflict names a user without an unacknowledged write: {c:?}"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(user: &str, kind: Kind, reply: Reply, acked: bool) -> Op {
        let wrote = !matches!(reply, Reply::Refused(_) | Reply::Unknown(_));
        Op {
            event: "e".into(),
            user: user.into(),
            kind,
            reply,
            wrote,
            acked: acked && wrote,
            sent_ms: 0,
            answered_ms: 0,
            expires_from_ms: None,
        }
    }

    fn claim(user: &str, t: &[i64], acked: bool) -> Op {
        let kind = Kind::Claim {
            count: t.len() as i64,
            hold_ms: None,
            seats: None,
        };
        op(user, kind, Reply::Tickets(t.to_vec()), acked)
    }

    fn holding(t: &[i64], s: OrderState) -> UserState {
        UserState {
            order: Some((t.to_vec(), s)),
            waiting: false,
        }
    }

    fn states(items: &[(&str, UserState)]) -> States {
        items
            .iter()
            .map(|(u, s)| (("e".to_string(), u.to_string()), s.clone()))
            .collect()
    }

    fn run(history: &[Op], redis: &States, mysql: &States, conflicts: &[ConflictRow]) -> Findings {
        check(&Input {
            history,
            redis,
            mysql,
            conflicts,
            now_ms: 10_000,
        })
    }

    #[test]
    fn a_kept_history_passes() {
        let h = [
            claim("a", &[1], true),
            claim("b", &[2], true),
            op("b", Kind::Cancel, Reply::Returned(Some(2)), true),
        ];
        let s = states(&[("a", holding(&[1], OrderState::Sold))]);
        let f = run(&h, &s, &s, &[]);
        assert_eq!(f.violations, Vec::<String>::new());
        assert_eq!((f.acked_writes, f.unacked_writes), (3, 0));
    }

    #[test]
    fn a_lost_acknowledged_claim_and_cancel_are_named() {
        let h = [
            claim("a", &[1], true),
            claim("b", &[2], true),
            op("b", Kind::Cancel, Reply::Returned(Some(2)), true),
        ];
        let s = states(&[("b", holding(&[2], OrderState::Sold))]);
        let f = run(&h, &s, &s, &[]);
        assert_eq!(f.violations.len(), 2, "{:?}", f.violations);
        assert!(
            f.violations[0].contains("user a: claim"),
            "{:?}",
            f.violations
        );
        assert!(
            f.violations[1].contains("user b: cancel"),
            "{:?}",
            f.violations
        );
    }

    #[test]
    fn a_later_unacknowledged_write_may_win_or_be_lost() {
        let h = [
            claim("a", &[1], true),
            op("a", Kind::Cancel, Reply::Returned(Some(1)), false),
        ];
        let kept = states(&[("a", holding(&[1], OrderState::Sold))]);
        let f = run(&h, &kept, &kept, &[]);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!(f.lost_unacked, [("e".to_string(), "a".to_string())]);
        let canceled = states(&[]);
        let f = run(&h, &canceled, &canceled, &[]);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert!(f.lost_unacked.is_empty());
    }

    #[test]
    fn a_write_the_next_answer_shows_missing_is_counted_lost() {
        let mut confirm = op("a", Kind::Confirm, Reply::Refused("NOHOLD".into()), false);
        confirm.sent_ms = 50;
        let h = [
            claim("a", &[1], false),
            op("a", Kind::Confirm, Reply::Unknown("eof".into()), false),
            confirm,
            claim("a", &[2], true),
        ];
        let s = states(&[("a", holding(&[2], OrderState::Held))]);
        let f = run(&h, &s, &s, &[]);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!(f.lost_unacked.len(), 1);
        let mut expired = h.clone();
        expired[0].expires_from_ms = Some(40);
        assert!(run(&expired, &s, &s, &[]).lost_unacked.is_empty());
    }

    #[test]
    fn a_hold_may_expire_only_after_its_deadline() {
        let mut h = claim("a", &[1], true);
        h.expires_from_ms = Some(20_000);
        let none = states(&[]);
        assert_eq!(run(&[h.clone()], &none, &none, &[]).violations.len(), 1);
        h.expires_from_ms = Some(5_000);
        assert!(run(&[h], &none, &none, &[]).violations.is_empty());
    }

    #[test]
    fn confirm_wait_and_leave_allow_what_they_may_become() {
        let confirm = op("a", Kind::Confirm, Reply::Sold(2), true);
        let sold = holding(&[3, 4], OrderState::Sold);
        assert!(may_follow(&confirm, &sold, 0));
        assert!(!may_follow(
            &confirm,
            &holding(&[3, 4], OrderState::Held),
            0
        ));
        let wait = op("a", Kind::Wait, Reply::Position(3), true);
        assert!(may_follow(&wait, &holding(&[5], OrderState::Held), 0));
        assert!(!may_follow(&wait, &sold, 0));
        let leave = op("a", Kind::Leave, Reply::Left(true), true);
        let waiting = UserState {
            order: None,
            waiting: true,
        };
        assert!(!may_follow(&leave, &waiting, 0));
        assert!(may_follow(&leave, &UserState::default(), 0));
    }

    #[test]
    fn double_holders_and_drift_are_found() {
        let h = [claim("a", &[1], true), claim("b", &[1], true)];
        let r = states(&[
            ("a", holding(&[1], OrderState::Sold)),
            ("b", holding(&[1], OrderState::Sold)),
        ]);
        let m = states(&[("a", holding(&[1], OrderState::Sold))]);
        let f = run(&h, &r, &m, &[]);
        assert!(f
            .violations
            .iter()
            .any(|v| v.contains("Redis: event e ticket 1 held by")));
        assert!(f
            .violations
            .iter()
            .any(|v| v.contains("Redis != MySQL: event e user b")));
    }

    #[test]
    fn only_lost_in_failover_conflicts_of_unacknowledged_users_pass() {
        let h = [claim("a", &[1], true), claim("b", &[2], false)];
        let s = states(&[("a", holding(&[1], OrderState::Sold))]);
        let row = |user: &str, reason: &str| ConflictRow {
            event: "e".into(),
            user: Some(user.into()),
            reason: reason.into(),
            stream_id: "1-0".into(),
        };
        let f = run(&h, &s, &s, &[row("b", LOST_IN_FAILOVER)]);
        assert!(f.violations.is_empty(), "{:?}", f.violations);
        assert_eq!(f.lost_unacked_reported, 1);
        let f = run(
            &h,
            &s,
            &s,
            &[row("a", LOST_IN_FAILOVER), row("b", "collision")],
        );
        assert_eq!(f.violations.len(), 2, "{:?}", f.violations);
    }
}
