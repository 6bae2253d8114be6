//! The writer's gate: may a batch of an event be applied at all?
//!
//! [`gate`] is pure: given the event's row as MySQL has it (under the
//! offset row lock), the locked offset and the entries above it, it
//! answers [`Gate::Apply`] — from which entry on, and whether that entry is
//! an `op=restore` to apply first — or [`Gate::Refuse`]: nothing of the
//! batch is applied and the offset stays, so the reader must read it again
//! (docs/design.md, "Incarnations and Redis data loss"):
//!
//! * a quarantined event is refused unless the batch holds an `op=restore`
//!   (the last one counts: each rebuild starts a new log). Entries before
//!   it are skipped (rebuild recorded them as conflicts); the restore
//!   applies when MySQL's incarnation is none or the record's, and the
//!   offset is its `from` — else it is a `restore_mismatch` conflict and
//!   the event is (or stays) quarantined;
//! * an `op=init` for an event MySQL already has with another incarnation
//!   (or one side has none) quarantines it: a re-created event must never
//!   be applied on top of the old one's rows;
//! * an event MySQL has as dropped and that is quarantined (its id was
//!   re-created in Redis: event ids are not reused, MySQL keys a sale's
//!   rows by its id) has its entries discarded, [`Gate::Discard`]: each
//!   becomes a `reused_after_drop` conflict and the offset moves past it.
//!   The quarantine (the alarm) stays until the re-created sale is dropped
//!   too: its `op=drop` lifts it, and the event stays dropped.

use crate::model::{Conflict, Entry, EventState, Evidence, Reason};
use protocol::record::{Incarnation, Op, Status};
use protocol::StreamId;

/// An `op=restore` to apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restore {
    pub id: StreamId,
    pub incarnation: Incarnation,
    pub status: Status,
    pub at: i64,
}

/// The gate's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    /// Apply `todo[from..]`; with `restore`, `todo[from]` is that restore.
    Apply {
        from: usize,
        restore: Option<Restore>,
    },
    /// Apply nothing of `todo[..=upto]` (entries of a dropped event's
    /// re-created id): record each as a conflict and move the offset past
    /// them. With `lifted`, `todo[upto]` is the re-created sale's drop: the
    /// quarantine is lifted, and the rest is read again and gated anew.
    Discard { upto: usize, lifted: bool },
    /// Apply nothing; quarantine with `quarantine` (None: already
    /// quarantined) and record `conflict`.
    Refuse {
        quarantine: Option<Evidence>,
        conflict: Option<Conflict>,
    },
}

/// What may be applied of `todo` (the entries above `offset`).
pub fn gate(event: &str, state: Option<&EventState>, offset: StreamId, todo: &[Entry]) -> Gate {
    let restore = todo
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, e)| match &e.rec {
            Ok(r) => match r.op {
                Op::Restore {
                    incarnation,
                    status,
                    from,
                } => Some((
                    i,
                    Restore {
                        id: e.id,
                        incarnation,
                        status,
                        at: r.at,
                    },
                    from,
                )),
                _ => None,
            },
            Err(_) => None,
        });
    let quarantined = state.is_some_and(|s| s.quarantined);
    if let Some((i, r, from)) = restore {
        return restore_gate(event, state, offset, (i, &todo[i]), r, from);
    }
    if let Some(discard) = reused_after_drop(state, todo) {
        return discard;
    }
    if quarantined {
        return Gate::Refuse {
            quarantine: None,
            conflict: None,
        };
    }
    match state.and_then(|s| changed_init(event, s, todo)) {
        Some(ev) => Gate::Refuse {
            quarantine: Some(ev),
            conflict: None,
        },
        None => Gate::Apply {
            from: 0,
            restore: None,
        },
    }
}

/// The discard of `todo` when the event is dropped in MySQL and
/// quarantined (its id was re-created in Redis): up to its last `op=drop`
/// (which lifts the quarantine), or all of it.
fn reused_after_drop(state: Option<&EventState>, todo: &[Entry]) -> Option<Gate> {
    let s = state?;
    if !(s.quarantined && s.dropped) || todo.is_empty() {
        return None;
    }
    let drop = todo
        .iter()
        .rposition(|e| matches!(&e.rec, Ok(r) if matches!(r.op, Op::Drop)));
    Some(Gate::Discard {
        upto: drop.unwrap_or(todo.len() - 1),
        lifted: drop.is_some(),
    })
}

/// A batch with a restore at `todo[i]`.
fn restore_gate(
    event: &str,
    state: Option<&EventState>,
    offset: StreamId,
    (i, entry): (usize, &Entry),
    r: Restore,
    from: StreamId,
) -> Gate {
    let mine = state.and_then(|s| s.incarnation);
    if mine.is_none_or(|m| m == r.incarnation) && offset == from {
        return Gate::Apply {
            from: i,
            restore: Some(r),
        };
    }
    let shown = mine.map_or("none".into(), |m| m.to_string());
    let detail = format!(
        "restore of incarnation {} from {from}, but MySQL has incarnation {shown} at offset {offset}: rebuild again",
        r.incarnation
    );
    let quarantined = state.is_some_and(|s| s.quarantined);
    Gate::Refuse {
        quarantine: (!quarantined).then(|| Evidence {
            reason: Reason::RestoreMismatch,
            text: format!("event {event}: {detail}"),
        }),
        conflict: Some(Conflict::about(entry, "restore_mismatch", detail)),
    }
}

/// Evidence when an init in `todo` carries another incarnation than MySQL's.
fn changed_init(event: &str, s: &EventState, todo: &[Entry]) -> Option<Evidence> {
    todo.iter().find_map(|e| {
        let r = e.rec.as_ref().ok()?;
        let Op::Init { incarnation, .. } = &r.op else {
            return None;
        };
        if *incarnation == s.incarnation {
            return None;
        }
        let show = |i: &Option<Incarnation>| i.map_or("none".into(), |i| i.to_string());
        let dropped = match s.dropped {
            true => " (MySQL has the event as dropped: an event id cannot be reused; TICKET.DROP it again and pick a new id)",
            false => " (the event was re-created in Redis)",
        };
        Some(Evidence {
            reason: Reason::IncarnationChanged,
            text: format!(
                "event {event}: init {} carries incarnation {} but MySQL has {}{dropped}",
                e.id,
                show(incarnation),
                show(&s.incarnation)
            ),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::{Checkout, Record, Tickets};

    fn entry(ms: u64, op: Op) -> Entry {
        Entry::new(StreamId::new(ms, 0), Ok(Record { op, at: ms as i64 }))
    }

    fn init(inc: Option<u64>) -> Op {
        Op::Init {
            layout: None,
            total: 5,
            opens_at: 0,
            closes_at: 0,
            checkout: Checkout::default(),
            incarnation: inc.map(Incarnation),
            draw: None,
        }
    }

    fn restore(inc: u64, from: u64) -> Op {
        Op::Restore {
            incarnation: Incarnation(inc),
            status: Status::Open,
            from: StreamId::new(from, 0),
        }
    }

    fn claim(u: &str) -> Op {
        Op::Claim {
            pick: None,
            user: u.into(),
            tickets: Tickets::One(1),
        }
    }

    fn state(inc: Option<u64>, quarantined: bool) -> EventState {
        EventState {
            incarnation: inc.map(Incarnation),
            quarantined,
            dropped: false,
        }
    }

    fn offset(ms: u64) -> StreamId {
        StreamId::new(ms, 0)
    }

    #[test]
    fn a_reused_id_of_a_dropped_event_leaves_quarantine_by_its_own_drop() {
        let dropped = |quarantined| EventState {
            incarnation: Some(Incarnation(7)),
            quarantined,
            dropped: true,
        };
        let todo = [
            entry(10, init(Some(8))),
            entry(11, claim("a")),
            entry(12, Op::Drop),
            entry(13, claim("b")),
        ];
        let q = dropped(true);
        assert_eq!(
            gate("e", Some(&q), offset(5), &todo),
            Gate::Discard {
                upto: 2,
                lifted: true
            }
        );
        // before its drop arrives: discarded, still quarantined
        assert_eq!(
            gate("e", Some(&q), offset(5), &todo[..2]),
            Gate::Discard {
                upto: 1,
                lifted: false
            }
        );
        // the re-init itself quarantines, naming the way out
        let Gate::Refuse {
            quarantine: Some(ev),
            ..
        } = gate("e", Some(&dropped(false)), offset(5), &todo[..2])
        else {
            panic!("not refused");
        };
        assert!(ev.text.contains("DROP it again"), "{}", ev.text);
        // a drop of an event that is merely quarantined (not dropped) is
        // not a way out: that takes a rebuild
        assert!(matches!(
            gate("e", Some(&state(Some(7), true)), offset(5), &todo),
            Gate::Refuse { .. }
        ));
    }

    #[test]
    fn plain_batches_apply() {
        let todo = [entry(1, init(Some(7))), entry(2, claim("a"))];
        let apply = Gate::Apply {
            from: 0,
            restore: None,
        };
        assert_eq!(gate("e", None, StreamId::ZERO, &todo), apply);
        // the same incarnation again is a duplicate_init, not a quarantine
        assert_eq!(
            gate("e", Some(&state(Some(7), false)), offset(0), &todo),
            apply
        );
    }

    #[test]
    fn another_incarnation_quarantines() {
        let todo = [entry(9, claim("x")), entry(10, init(Some(8)))];
        for mine in [Some(7), None] {
            let Gate::Refuse {
                quarantine: Some(ev),
                conflict: None,
            } = gate("e", Some(&state(mine, false)), offset(5), &todo)
            else {
                panic!("not refused");
            };
            assert_eq!(ev.reason, Reason::IncarnationChanged);
            assert!(
                ev.text.contains("10-0") && ev.text.contains("0000000000000008"),
                "{}",
                ev.text
            );
        }
        // a record from before 0.3 against a MySQL incarnation, too
        let old = [entry(10, init(None))];
        assert!(matches!(
            gate("e", Some(&state(Some(7), false)), offset(5), &old),
            Gate::Refuse { .. }
        ));
    }

    #[test]
    fn quarantined_events_wait_for_their_restore() {
        let q = state(Some(7), true);
        let todo = [entry(9, claim("x"))];
        let refuse = Gate::Refuse {
            quarantine: None,
            conflict: None,
        };
        assert_eq!(gate("e", Some(&q), offset(5), &todo), refuse);
        let todo = [
            entry(9, claim("x")),
            entry(10, restore(7, 5)),
            entry(11, claim("y")),
        ];
        let Gate::Apply {
            from: 1,
            restore: Some(r),
        } = gate("e", Some(&q), offset(5), &todo)
        else {
            panic!("restore not applied");
        };
        assert_eq!(
            (r.id, r.incarnation),
            (StreamId::new(10, 0), Incarnation(7))
        );
        // a pre-0.3 event takes the restore's incarnation
        assert!(matches!(
            gate("e", Some(&state(None, true)), offset(5), &todo),
            Gate::Apply { from: 1, .. }
        ));
    }

    #[test]
    fn a_mismatched_restore_is_a_conflict() {
        let todo = [entry(10, restore(7, 4))];
        let Gate::Refuse {
            quarantine,
            conflict: Some(c),
        } = gate("e", Some(&state(Some(7), true)), offset(5), &todo)
        else {
            panic!("applied");
        };
        assert_eq!(quarantine, None, "already quarantined");
        assert_eq!((c.reason, c.id), ("restore_mismatch", StreamId::new(10, 0)));
        let todo = [entry(10, restore(8, 5))];
        let Gate::Refuse {
            quarantine: Some(ev),
            ..
        } = gate("e", Some(&state(Some(7), false)), offset(5), &todo)
        else {
            panic!("applied");
        };
        assert_eq!(ev.reason, Reason::RestoreMismatch);
    }
}
