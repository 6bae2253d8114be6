//! The checker's rule of issue 30: **an acknowledged answer is never taken
//! back** — not by a later heal after an unplanned failover, nor by
//! anything else. Pure, unit-tested below.
//!
//! A user's operations come from one writer, in order. After an answer
//! `WAIT 1` acknowledged (a claim's tickets, a confirm's count, a cancel
//! that returned tickets, a leave), the user's next answered operation
//! shows the state the user was in just before it; that state must be the
//! one the acknowledged answer left, unless something in between may have
//! changed it: an operation with no answer (it may have been applied), or
//! the module itself (a hold past its deadline expired, a waiting user
//! offered tickets).

use super::history::{Kind, Op, Reply};
use super::writers::events;

/// What an acknowledged answer left the user with, as far as the next
/// answer can show it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Left {
    /// These tickets (held or sold), until `expires_from` if a hold.
    Holds(Vec<i64>, Option<i64>),
    /// This many tickets, sold.
    Sold(i64),
    /// Nothing held, not waiting.
    Nothing,
}

fn left(op: &Op) -> Option<Left> {
    match (&op.kind, &op.reply) {
        (Kind::Claim { .. }, Reply::Tickets(t)) => Some(Left::Holds(t.clone(), op.expires_from_ms)),
        (Kind::Confirm, Reply::Sold(n)) => Some(Left::Sold(*n)),
        // It held tickets, so it was not waiting; a leave took it off.
        (Kind::Cancel, Reply::Returned(Some(_))) | (Kind::Leave, Reply::Left(true)) => {
            Some(Left::Nothing)
        }
        // A wait's user may be offered tickets; a cancel that returned
        // nothing may have left a waiting user waiting.
        _ => None,
    }
}

/// The refusals of a claim by a user who holds nothing (a holder's claim
/// repeats the holder's tickets first).
fn refuses_a_claim(code: &str) -> bool {
    matches!(code, "SOLDOUT" | "CLOSED" | "NOTOPEN" | "QUEUE" | "LIMIT")
}

/// Why `next`'s answer contradicts `was` (the state before `next`), if it
/// does.
fn contradiction(was: &Left, next: &Op) -> Option<String> {
    let held = match was {
        Left::Holds(t, _) => Some(t.len() as i64),
        Left::Sold(n) => Some(*n),
        Left::Nothing => None,
    };
    let bad = match (&next.kind, &next.reply) {
        (Kind::Claim { .. }, Reply::Tickets(t)) => match was {
            Left::Holds(have, _) => t != have,
            Left::Sold(n) => t.len() as i64 != *n,
            Left::Nothing => false,
        },
        (Kind::Claim { .. }, Reply::Refused(c)) => held.is_some() && refuses_a_claim(c),
        (Kind::Confirm, Reply::Sold(n)) => held.is_none_or(|h| h != *n),
        (Kind::Confirm, Reply::Refused(c)) => held.is_some() && c == "NOHOLD",
        (Kind::Cancel, Reply::Returned(t)) => match was {
            Left::Holds(have, _) => *t != have.first().copied(),
            Left::Sold(_) => t.is_none(),
            Left::Nothing => t.is_some(),
        },
        (Kind::Wait, Reply::Position(_)) => held.is_some(),
        (Kind::Wait, Reply::Refused(c)) => held.is_none() && c == "HOLDING",
        _ => false,
    };
    bad.then(|| format!("{} answered {:?}", next.kind.name(), next.reply))
}

/// From when an offer the module made to the user after `wait` may have
/// expired: the module offers only to a waiting user, so the offer came
/// after the user's WAIT and lasts the event's `OFFER` ms (none on an
/// event without offers).
fn offer_may_end(wait: &Op) -> Option<i64> {
    let spec = events().into_iter().find(|e| e.name == wait.event)?;
    (matches!(wait.kind, Kind::Wait) && spec.offer_ms > 0).then_some(wait.sent_ms + spec.offer_ms)
}

/// From when the hold the last of `ops` (a claim answered with tickets)
/// shows may have expired: a repeat claim answers with the order an
/// earlier claim made, or with the tickets the module offered the user
/// after a WAIT (a leave that was not acknowledged may have been lost in
/// a failover, the user still waiting: seed 3004), so the earliest
/// deadline of the claims and offers since the user's order surely ended
/// (an acknowledged cancel, confirm or leave; one not acknowledged may
/// have been lost, the order with it kept).
fn hold_may_end(ops: &[&Op]) -> i64 {
    let ended = |o: &Op| {
        o.acked
            && matches!(
                (&o.kind, &o.reply),
                (Kind::Cancel, Reply::Returned(Some(_)))
                    | (Kind::Confirm, Reply::Sold(_))
                    | (Kind::Leave, Reply::Left(true))
            )
    };
    ops.iter()
        .rev()
        .take_while(|o| !ended(o))
        .filter_map(|o| match o.kind {
            Kind::Claim { .. } => o.expires_from_ms,
            _ => offer_may_end(o),
        })
        .min()
        .unwrap_or(i64::MAX)
}

/// Checks one user's operations (in order); returns the violations and
/// how many acknowledged answers were checked against a next answer.
pub fn check_user(ops: &[&Op]) -> (Vec<String>, usize) {
    let mut out = Vec::new();
    let mut checked = 0;
    for (i, op) in ops.iter().enumerate() {
        let (true, Some(was)) = (op.acked, left(op)) else {
            continue;
        };
        let rest = &ops[i + 1..];
        let Some(j) = rest.iter().position(|o| o.answered()) else {
            continue;
        };
        // An operation with no answer in between may have been applied.
        if rest[..j]
            .iter()
            .any(|o| matches!(o.reply, Reply::Unknown(_)))
        {
            continue;
        }
        let next = rest[j];
        if let Left::Holds(_, Some(_)) = was {
            // The next one ran after it was sent and before the one after
            // it was: when, exactly, is not known.
            let ran_by = ops.get(i + 2 + j).map_or(i64::MAX, |o| o.sent_ms);
            if ran_by >= hold_may_end(&ops[..=i]) {
                continue; // the hold may have expired
            }
        }
        checked += 1;
        if let Some(what) = contradiction(&was, next) {
            let around = ops[i.saturating_sub(3)..=i + 1 + j]
                .iter()
                .map(|o| {
                    format!(
                        "{} {:?} acked={} at {}",
                        o.kind.name(),
                        o.reply,
                        o.acked,
                        o.sent_ms
                    )
                })
                .collect::<Vec<_>>()
                .join("; ");
            out.push(format!(
                "acknowledged answer taken back: event {} user {}: {} answered {:?} at {} (acknowledged by WAIT), but the next answer, {what} at {}, shows another state [{around}]",
                op.event, op.user, op.kind.name(), op.reply, op.sent_ms, next.sent_ms
            ));
        }
    }
    (out, checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kind: Kind, reply: Reply, acked: bool, at: i64) -> Op {
        Op {
            event: "plain".into(),
            user: "u464".into(),
            kind,
            reply,
            wrote: acked,
            acked,
            sent_ms: at,
            answered_ms: at,
            expires_from_ms: None,
        }
    }

    fn claim(reply: Reply, acked: bool, at: i64) -> Op {
        let kind = Kind::Claim {
            count: 1,
            hold_ms: None,
            seats: None,
        };
        op(kind, reply, acked, at)
    }

    fn run(ops: &[Op]) -> (Vec<String>, usize) {
        check_user(&ops.iter().collect::<Vec<_>>())
    }

    #[test]
    fn the_history_of_issue_30_is_caught() {
        // u464 cancels 280 (lost), the new primary answers its repeat claim
        // with 280 (acknowledged), the heal re-applies the cancel: the
        // next claim answers 174.
        let h = [
            op(Kind::Cancel, Reply::Returned(Some(280)), false, 693_397),
            claim(Reply::Tickets(vec![280]), true, 695_423),
            claim(Reply::Tickets(vec![174]), true, 695_956),
        ];
        let (v, checked) = run(&h);
        assert_eq!(checked, 1, "the last answer has no next one");
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(v[0].contains("claim answered Tickets([174])"), "{}", v[0]);
    }

    #[test]
    fn kept_answers_pass_and_excused_changes_are_not_counted() {
        let mut hold = claim(Reply::Tickets(vec![3]), true, 100);
        hold.expires_from_ms = Some(1_100);
        let h = [
            claim(Reply::Tickets(vec![1]), true, 0),
            claim(Reply::Tickets(vec![1]), true, 10),
            op(Kind::Cancel, Reply::Returned(Some(1)), true, 20),
            // no answer: it may have claimed
            claim(Reply::Unknown("lost".into()), false, 30),
            op(Kind::Confirm, Reply::Sold(1), false, 40),
            hold,
            // sent before the hold's deadline, answered after it (the next
            // operation is sent later): it may have expired
            op(Kind::Confirm, Reply::Refused("NOHOLD".into()), false, 1_050),
            op(Kind::Wait, Reply::Position(1), false, 1_200),
        ];
        let (v, checked) = run(&h);
        assert!(v.is_empty(), "{v:?}");
        assert_eq!(checked, 2, "the two answers before the cancel");
    }

    #[test]
    fn a_repeat_claim_shows_the_deadline_of_the_claim_that_made_the_hold() {
        let mut first = claim(Reply::Unknown("timeout".into()), false, 0);
        first.expires_from_ms = Some(1_000);
        let mut repeat = claim(Reply::Tickets(vec![3]), true, 500);
        repeat.expires_from_ms = Some(1_500);
        let late = op(Kind::Confirm, Reply::Refused("NOHOLD".into()), false, 1_200);
        let after = op(Kind::Wait, Reply::Position(3), false, 1_300);
        let (v, checked) = run(&[first.clone(), repeat.clone(), late.clone(), after]);
        assert!(v.is_empty(), "{v:?}");
        assert_eq!(checked, 0);
        // It ran before an operation sent at 900: the hold was live.
        let before = op(Kind::Wait, Reply::Position(3), false, 900);
        let mut early = late;
        early.sent_ms = 800;
        let (v, _) = run(&[first, repeat, early, before]);
        assert_eq!(v.len(), 1, "{v:?}");
    }

    #[test]
    fn a_lost_cancel_keeps_the_earlier_claims_deadline() {
        // seed 3002: claim 49 (1 s hold), its cancel lost in a failover,
        // the repeat claim answers 49, which expires at the first deadline
        let mut first = claim(Reply::Tickets(vec![49]), true, 16_822);
        first.expires_from_ms = Some(17_822);
        let lost = op(Kind::Cancel, Reply::Returned(Some(49)), false, 16_905);
        let mut repeat = claim(Reply::Tickets(vec![49]), true, 17_803);
        repeat.expires_from_ms = Some(18_803);
        let none = op(Kind::Cancel, Reply::Returned(None), false, 18_121);
        let after = claim(Reply::Tickets(vec![50]), true, 18_200);
        let (v, checked) = run(&[first, lost, repeat, none, after]);
        assert!(v.is_empty(), "{v:?}");
        assert_eq!(
            checked, 1,
            "the first claim's answer, before the lost cancel"
        );
    }

    #[test]
    fn a_claim_may_show_an_offer_that_ends_before_its_own_hold() {
        // seed 3004: w5-u76 waits, its leave is lost in a failover, the
        // new primary offers it ticket 27 (OFFER 1500), its claim answers
        // 27 (acknowledged) and the offer expires before its confirm
        let waiting = |o: Op| Op {
            event: "soak-wait".into(),
            ..o
        };
        let wait = waiting(op(Kind::Wait, Reply::Position(4), true, 642_000));
        let leave = waiting(op(Kind::Leave, Reply::Left(true), false, 644_528));
        let mut repeat = waiting(claim(Reply::Tickets(vec![27]), true, 647_194));
        repeat.expires_from_ms = Some(647_194 + 600_000);
        let nohold = waiting(op(
            Kind::Confirm,
            Reply::Refused("NOHOLD".into()),
            false,
            647_481,
        ));
        let after = waiting(op(Kind::Wait, Reply::Position(2), false, 647_600));
        let h = [wait, leave, repeat.clone(), nohold.clone(), after.clone()];
        let (v, checked) = run(&h);
        assert!(v.is_empty(), "{v:?}");
        assert_eq!(checked, 0, "the offer may have expired");
        // Without a WAIT since the order ended, the claim's own hold
        // counts and the NOHOLD takes its answer back.
        let (v, checked) = run(&[repeat, nohold, after]);
        assert_eq!((v.len(), checked), (1, 1), "{v:?}");
    }

    #[test]
    fn every_kind_of_reversal_is_named() {
        let cases = [
            (
                op(Kind::Confirm, Reply::Sold(2), true, 0),
                op(Kind::Cancel, Reply::Returned(None), false, 5),
            ),
            (
                op(Kind::Cancel, Reply::Returned(Some(4)), true, 0),
                op(Kind::Confirm, Reply::Sold(1), false, 5),
            ),
            (
                op(Kind::Leave, Reply::Left(true), true, 0),
                op(Kind::Wait, Reply::Refused("HOLDING".into()), false, 5),
            ),
            (
                claim(Reply::Tickets(vec![9]), true, 0),
                claim(Reply::Refused("SOLDOUT".into()), false, 5),
            ),
        ];
        for (a, b) in cases {
            let (v, _) = run(&[a.clone(), b.clone()]);
            assert_eq!(v.len(), 1, "{a:?} then {b:?}");
        }
    }
}
