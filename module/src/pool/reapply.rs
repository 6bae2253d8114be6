//! `TICKET.REAPPLY`'s decision, pure over a [`Store`]: may a write that an
//! unplanned failover lost (the sidecar had applied it to MySQL, the
//! promoted replica never got it) be written again on the new primary?
//!
//! The sidecar's heal sends the lost entry's record as it was logged (the
//! same op, user, tickets, deadline and `at`). It is re-applied only when
//! nothing since makes it wrong, checked atomically here (docs/design.md,
//! "Healing after an unplanned failover"):
//!
//! * `claim`, `hold`, `offer`: the user holds nothing and every ticket is
//!   free (in the pool, or the very next numbers after `minted`, which are
//!   then minted exactly up to the highest);
//! * `confirm`: the user holds exactly those tickets, held (its listed
//!   ones are then sold as the command sells them: `resold`, never
//!   re-applied alone);
//! * `cancel`: the user holds exactly those tickets (held or sold), none
//!   listed by the user;
//! * `expire`: the user holds exactly those tickets, held, and the deadline
//!   is due at `now` (an expiry due anyway);
//! * `open`, `close`: always (the status is set again);
//! * `enter`: the draw is not made yet and the user neither waits nor
//!   holds (the rank is computed again from the stored seed);
//! * `leave`: the user is a draw's entrant still waiting;
//! * `draw`: not drawn yet, and the record's seed is the stored one;
//! * `transfer`, `scan`, `resell`, `unlist`: what the command itself
//!   would check (`reapply_after`: sold, unscanned, the generation, the
//!   receiver, the listing).
//!
//! Before any of these, whatever the op: the new primary must not have
//! answered the record's user, or about its tickets, without logging it
//! (`pool::note`), and when the sidecar says up to which entry it read the
//! log (`since`), no entry logged after it may touch the record's user,
//! tickets or (open, close, draw) the event's status: so no answer the new
//! primary gave since it became primary is taken back, whatever raced
//! with the sidecar's plan.
//!
//! `init`, `drop`, `restore`, an allocation's move and `resold` are never
//! re-applied (`ERR`). Otherwise the
//! record is written through the module's own apply code — one log entry
//! with the record's fields unchanged (so the heal recognises its own
//! re-application by content after a crash) and one replicated effect —
//! or nothing changes and the reply is `CHANGED` with the reason.

use std::borrow::Cow;

use protocol::record::{Op, Record, Tickets};
use protocol::touch::Touch;
use protocol::StreamId;

use super::effects::Effects;
use super::model::Meta;
use super::note;
use super::rules::{check_consistent, live_meta};
use super::store::{Set, Store};
use crate::error::TicketError;

/// The most entries `since` may leave to look at: more, and the sidecar
/// read the log too long ago (`CHANGED`; it reads again on its next round).
pub const MAX_SINCE: usize = 10_000;

/// Re-applies `record` on `event` when its condition holds at `now`, as
/// one effect collected in `out`; returns the id of the new log entry.
/// `since`: the last log entry the caller read (nothing after it may touch
/// the record). Unlike the other writes it neither expires due holds nor
/// serves the waiting list first: the heal wants exactly the lost entry,
/// or nothing.
pub fn reapply<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    (record, since): (Record<Cow<'a, str>>, Option<StreamId>),
    now: i64,
) -> Result<StreamId, TicketError> {
    let meta = live_meta(store, event)?;
    check_consistent(store, event, &meta)?;
    let changed = |why: String| TicketError::Changed {
        event: event.to_owned(),
        why,
    };
    if let Some(why) = answered_since(store, &record.op, since)? {
        return Err(changed(why));
    }
    if let Some(name) = record.op.from() {
        // Allocations are not healed: the lost write's stock may be public
        // or released since.
        return Err(changed(format!(
            "it concerns allocation {}, which the heal does not re-apply",
            crate::error::quote(name.as_bytes())
        )));
    }
    let minted = match &record.op {
        Op::Enter { .. } | Op::Leave { .. } | Op::Draw { .. } => {
            let record = draw_condition(store, &meta, record)?.map_err(changed)?;
            return Ok(out.append(store, record, None, None));
        }
        Op::Init { .. }
        | Op::Drop
        | Op::Restore { .. }
        | Op::Allocate { .. }
        | Op::Release { .. }
        | Op::Resold { .. } => {
            return Err(TicketError::Invalid(format!(
                "TICKET.REAPPLY: op={} is never re-applied",
                record.op.name()
            )))
        }
        _ => write_condition(store, &meta, event, (&record, now))?.map_err(changed)?,
    };
    // A confirm sells its listed tickets as TICKET.CONFIRM does: one
    // `resold` per seller, at the confirm's time, in the same effect (the
    // heal matches them to the lost ones by content).
    let sold = match &record.op {
        Op::Confirm { user, tickets } => Some((user.to_string(), tickets.clone())),
        _ => None,
    };
    let at = record.at;
    let id = out.append(store, record, minted, None);
    if let Some((buyer, tickets)) = sold {
        super::resale::sell_listed(store, out, &buyer, tickets.as_slice(), at)?;
    }
    Ok(id)
}

/// The condition of a claim, hold, offer, confirm, cancel, expire, open,
/// close or an after-sale write (the module doc's list): `Ok(minted)`, the
/// `minted` a claim of the very next numbers moves to, or why not.
fn write_condition(
    store: &mut impl Store,
    meta: &Meta,
    event: &str,
    (record, now): (&Record<Cow<'_, str>>, i64),
) -> Result<Result<Option<i64>, String>, TicketError> {
    Ok(match &record.op {
        Op::Claim { user, tickets, .. }
        | Op::Hold { user, tickets, .. }
        | Op::Offer { user, tickets, .. } => match store.holder(user)? {
            Some(held) => Err(format!("the user holds {}", show(&held))),
            None => free_tickets(store, meta, tickets)?,
        },
        Op::Confirm { user, tickets } => {
            holds_exactly(store, user, tickets, Some(i64::MAX))?.map(|()| None)
        }
        Op::Cancel { user, tickets, .. } => {
            holds_exactly(store, user, tickets, None)?.and_then(|()| {
                // as TICKET.CANCEL: a seller's listed ticket stays listed
                let listed = super::resale::refuse_listed(store, meta, user, tickets.as_slice());
                listed.map_err(|e| format!("cancel would be refused now: {e}"))?;
                Ok(None)
            })
        }
        Op::Expire { user, tickets, .. } => {
            holds_exactly(store, user, tickets, Some(now))?.map(|()| None)
        }
        Op::Open | Op::Close => Ok(None),
        op => match super::reapply_after::refusal(store, meta, event, (op, record.at))? {
            Some(why) => Err(why),
            None => Ok(None),
        },
    })
}

/// Why the new primary's answers since it became primary forbid
/// re-applying `op`: one without a log entry (the note), or an entry
/// logged after `since`.
fn answered_since<U: AsRef<str>>(
    store: &mut impl Store,
    op: &Op<U>,
    since: Option<StreamId>,
) -> Result<Option<String>, TicketError> {
    if let Some(why) = note::refusal(store, op)? {
        return Ok(Some(why));
    }
    let Some(since) = since else { return Ok(None) };
    let Some(later) = store.log_since(since, MAX_SINCE)? else {
        return Ok(Some(format!(
            "more than {MAX_SINCE} entries were logged after {since}"
        )));
    };
    let mut touched = Touch::default();
    later.iter().for_each(|r| touched.add(&r.op));
    Ok(Touch::of(op)
        .shared(&touched)
        .map(|what| format!("the new primary changed {what} after {since}")))
}

/// Whether a lost `enter`, `leave` or `draw` may be written again: Ok(the
/// record to write, an entry's rank filled in from the stored seed).
fn draw_condition<'a>(
    store: &mut impl Store,
    meta: &Meta,
    mut record: Record<Cow<'a, str>>,
) -> Result<Result<Record<Cow<'a, str>>, String>, TicketError> {
    let Some(draw) = meta.draw.as_deref() else {
        return Ok(Err("the event is not a draw event".to_owned()));
    };
    let drawn = draw.drawn_at.is_some();
    match &mut record.op {
        Op::Enter { user, rank, .. } => {
            if drawn {
                return Ok(Err("the draw was made".to_owned()));
            }
            if let Some(why) = waits_or_holds(store, user)? {
                return Ok(Err(why));
            }
            let Some(seed) = draw.seed else {
                return Ok(Err("the event has no seed".to_owned()));
            };
            *rank = Some(protocol::draw::rank(&seed, user.as_bytes()));
        }
        Op::Leave { user } => {
            let place = store.score(Set::Waiting, user)?;
            if place.is_none_or(|p| p >= protocol::draw::AFTER_DRAW as i64) {
                return Ok(Err("the user is not an entrant still waiting".to_owned()));
            }
            store.wants(user)?;
        }
        Op::Draw { seed } => {
            if drawn {
                return Ok(Err("the draw was made".to_owned()));
            }
            if draw.seed.as_ref() != Some(&*seed) {
                return Ok(Err("the seed is not the event's".to_owned()));
            }
        }
        _ => {}
    }
    Ok(Ok(record))
}

/// Why `user` may not enter: already waiting, or holding tickets.
fn waits_or_holds(store: &mut impl Store, user: &str) -> Result<Option<String>, TicketError> {
    store.wants(user)?;
    if store.score(Set::Waiting, user)?.is_some() {
        return Ok(Some("the user waits already".to_owned()));
    }
    Ok(store
        .holder(user)?
        .map(|held| format!("the user holds {}", show(&held))))
}

/// Whether `tickets` are all free: pooled, or the next numbers after
/// `minted` in a row. Ok(the new `minted` when some are minted).
fn free_tickets(
    store: &mut impl Store,
    meta: &Meta,
    tickets: &Tickets,
) -> Result<Result<Option<i64>, String>, TicketError> {
    let mut next_unminted = meta.minted + 1;
    for &t in tickets.as_slice() {
        if t < 1 || t > meta.total {
            return Ok(Err(format!("ticket {t} is outside 1..={}", meta.total)));
        }
        if t > meta.minted {
            if t != next_unminted {
                return Ok(Err(format!(
                    "ticket {t} is beyond the minted numbers (minted {})",
                    meta.minted
                )));
            }
            next_unminted += 1;
        } else if !store.is_free(t)? {
            return Ok(Err(format!("ticket {t} is not free")));
        }
    }
    Ok(Ok(
        (next_unminted > meta.minted + 1).then_some(next_unminted - 1)
    ))
}

/// Whether `user` holds exactly `tickets`; with `due_by`, as a hold whose
/// deadline is at or before it (`i64::MAX`: held, any deadline).
fn holds_exactly(
    store: &mut impl Store,
    user: &str,
    tickets: &Tickets,
    due_by: Option<i64>,
) -> Result<Result<(), String>, TicketError> {
    let held = store.holder(user)?;
    if held.as_ref().map(Tickets::as_slice) != Some(tickets.as_slice()) {
        let now = held.map_or("nothing".to_owned(), |t| show(&t));
        return Ok(Err(format!("the user holds {now}, not {}", show(tickets))));
    }
    let Some(by) = due_by else { return Ok(Ok(())) };
    Ok(match store.score(Set::Holds, user)? {
        None => Err("the order is sold, not held".to_owned()),
        Some(until) if until > by => Err(format!("the hold runs until {until}, not due")),
        Some(_) => Ok(()),
    })
}

fn show(tickets: &Tickets) -> String {
    format!("ticket(s) {}", tickets.value())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::memory::MemoryStore;
    use crate::pool::{self, ClaimOptions, Clock};
    use protocol::record::{Checkout, Incarnation};

    fn event(total: i64, hold: i64) -> MemoryStore {
        let mut s = MemoryStore::default();
        let checkout = Checkout {
            hold,
            limit: 2,
            offer: 0,
        };
        let mut out = Effects::default();
        pool::init(
            &mut s,
            &mut out,
            "e",
            (total, 0, 0),
            checkout,
            Incarnation(7),
            1,
        )
        .unwrap();
        s.commit(&out);
        s
    }

    fn rec(op: Op<&str>, at: i64) -> Record<&str> {
        Record { op, at }
    }

    trait OwnedCow {
        fn owned_cow(&self) -> Record<Cow<'static, str>>;
    }

    impl OwnedCow for Record<&str> {
        fn owned_cow(&self) -> Record<Cow<'static, str>> {
            Record {
                op: self.op.map_user(|u| Cow::Owned(u.to_string())),
                at: self.at,
            }
        }
    }

    /// The pool call as the command makes it, then the commit step.
    fn reapply(
        s: &mut MemoryStore,
        event: &str,
        record: &Record<&str>,
        now: i64,
    ) -> Result<StreamId, TicketError> {
        let mut out = Effects::default();
        let record = Record {
            op: record.op.map_user(|u| Cow::Owned(u.to_string())),
            at: record.at,
        };
        let id = super::reapply(s, &mut out, event, (record, None), now);
        s.commit(&out);
        id
    }

    fn claim(s: &mut MemoryStore, user: &str) -> Tickets {
        let mut out = Effects::default();
        let options = ClaimOptions::default();
        let c = pool::claim(s, &mut out, "e", user, options, Clock::at(10), 4).unwrap();
        s.commit(&out);
        c.tickets().clone()
    }

    #[test]
    fn a_lost_claim_of_a_free_number_comes_back_with_its_fields() {
        let mut s = event(10, 0);
        claim(&mut s, "a"); // 1; minted 4 (chunk 4)
        let lost = rec(
            Op::Claim {
                from: None,
                pick: None,
                user: "u",
                tickets: Tickets::One(3),
            },
            55,
        );
        let before = s.effects.len();
        let id = reapply(&mut s, "e", &lost, 100).unwrap();
        assert_eq!(s.holders.get("u"), Some(&Tickets::One(3)));
        assert!(!s.pool.contains(&3));
        let last = s.log.last().unwrap();
        assert_eq!((last.0, &last.1), (id, &lost.owned()));
        assert_eq!(s.effects.len(), before + 1, "one effect");
        // again: the user holds it now, nothing changes
        let e = reapply(&mut s, "e", &lost, 100).unwrap_err();
        assert_eq!(e.code(), "CHANGED");
        assert_eq!(s.effects.len(), before + 1);
    }

    #[test]
    fn a_claim_of_a_taken_number_or_by_a_holder_is_refused() {
        let mut s = event(10, 0);
        let t = claim(&mut s, "a");
        let log = s.log.len();
        let taken = rec(
            Op::Claim {
                from: None,
                pick: None,
                user: "u",
                tickets: t.clone(),
            },
            5,
        );
        assert!(reapply(&mut s, "e", &taken, 9)
            .unwrap_err()
            .to_string()
            .contains("not free"));
        let holder = rec(
            Op::Claim {
                from: None,
                pick: None,
                user: "a",
                tickets: Tickets::One(2),
            },
            5,
        );
        assert_eq!(
            reapply(&mut s, "e", &holder, 9).unwrap_err().code(),
            "CHANGED"
        );
        assert_eq!(s.log.len(), log);
    }

    #[test]
    fn unminted_numbers_must_follow_minted_in_a_row() {
        let mut s = event(10, 0);
        claim(&mut s, "a"); // minted 4
        let gap = rec(
            Op::Claim {
                from: None,
                pick: None,
                user: "u",
                tickets: Tickets::One(6),
            },
            5,
        );
        assert_eq!(reapply(&mut s, "e", &gap, 9).unwrap_err().code(), "CHANGED");
        let next = rec(
            Op::Claim {
                from: None,
                pick: None,
                user: "u",
                tickets: Tickets::Many(vec![4, 5, 6]),
            },
            5,
        );
        reapply(&mut s, "e", &next, 9).unwrap();
        assert_eq!(s.meta.as_ref().unwrap().minted, 6);
        // every number up to minted is held or free
        let out: usize = s.holders.values().map(|t| t.as_slice().len()).sum();
        assert_eq!(out + s.pool.len(), 6);
    }

    #[test]
    fn changes_need_exactly_the_tickets_and_expiries_a_due_hold() {
        let mut s = event(10, 1000); // holds of 1 s, taken at 10
        let t = claim(&mut s, "h");
        let other = Tickets::One(t.lowest() + 1);
        let cancel = |tickets| {
            rec(
                Op::Cancel {
                    from: None,
                    user: "h",
                    tickets,
                },
                20,
            )
        };
        assert_eq!(
            reapply(&mut s, "e", &cancel(other), 20).unwrap_err().code(),
            "CHANGED"
        );
        let expire = rec(
            Op::Expire {
                from: None,
                user: "h",
                tickets: t.clone(),
            },
            20,
        );
        let e = reapply(&mut s, "e", &expire, 500).unwrap_err();
        assert!(e.to_string().contains("not due"), "{e}");
        let confirm = rec(
            Op::Confirm {
                user: "h",
                tickets: t.clone(),
            },
            20,
        );
        reapply(&mut s, "e", &confirm, 500).unwrap();
        assert!(s.holds.is_empty());
        assert_eq!(
            reapply(&mut s, "e", &expire, 5000).unwrap_err().code(),
            "CHANGED"
        );
        reapply(&mut s, "e", &cancel(t), 600).unwrap();
        assert!(s.holders.is_empty());
    }

    #[test]
    fn a_noted_user_or_ticket_and_a_later_entry_refuse_it() {
        let mut s = event(10, 100_000);
        let t = claim(&mut s, "u"); // 1, held
        let cancel = rec(
            Op::Cancel {
                from: None,
                user: "u",
                tickets: t.clone(),
            },
            20,
        );
        // The new primary told u "your ticket is 1" without logging.
        let mut out = Effects::default();
        crate::pool::note::answered(&mut s, &mut out, "u", 9).unwrap();
        s.commit(&out);
        let log = s.log.len();
        let e = reapply(&mut s, "e", &cancel, 30).unwrap_err();
        assert!(e.to_string().contains("answered user \"u\""), "{e}");
        assert_eq!(s.log.len(), log, "nothing changed");
        let other = rec(
            Op::Claim {
                from: None,
                user: "v",
                tickets: Tickets::One(1),
                pick: None,
            },
            20,
        );
        assert_eq!(
            reapply(&mut s, "e", &other, 30).unwrap_err().code(),
            "CHANGED"
        );
        // Healed: the note is closed, the cancel fits again...
        let mut out = Effects::default();
        crate::pool::note::healed(&mut s, &mut out, 9).unwrap();
        s.commit(&out);
        let read = s.last_id.unwrap();
        // ...unless an entry logged after what the caller read touches u:
        // u's confirm, answered "sold" (the cancel's condition still holds).
        claim(&mut s, "w");
        let mut out = Effects::default();
        pool::confirm(&mut s, &mut out, "e", "u", Clock::at(25)).unwrap();
        s.commit(&out);
        let cancel_since = |s: &mut MemoryStore, since| {
            let mut out = Effects::default();
            let r = super::reapply(s, &mut out, "e", (cancel.owned_cow(), Some(since)), 30);
            s.commit(&out);
            r
        };
        let e = cancel_since(&mut s, read).unwrap_err();
        assert!(e.to_string().contains("changed user \"u\" after"), "{e}");
        let now_read = s.last_id.unwrap();
        cancel_since(&mut s, now_read).unwrap();
        assert_eq!(s.holders.get("u"), None);
    }

    #[test]
    fn never_an_init_drop_or_restore_and_never_on_a_missing_event() {
        let mut s = event(10, 0);
        for op in [Op::Drop, Op::Open] {
            let r = reapply(&mut s, "e", &rec(op.clone(), 1), 2);
            assert_eq!(r.is_ok(), op == Op::Open);
        }
        let mut empty = MemoryStore::default();
        let open = rec(Op::Open, 1);
        assert_eq!(
            reapply(&mut empty, "e", &open, 2).unwrap_err().code(),
            "NOEVENT"
        );
    }
}
