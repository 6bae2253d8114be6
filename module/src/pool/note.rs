//! The note of answers: what a promoted primary told users without logging
//! anything, so that the heal never takes such an answer back
//! (docs/design.md "Healing after an unplanned failover").
//!
//! The heal re-applies a write an unplanned failover lost only if the new
//! primary has answered nothing about its user and nothing involving its
//! tickets since. Answers that logged an entry are in the new primary's
//! log, where the sidecar's planner and `TICKET.REAPPLY ... SINCE` see
//! them. The others — a repeat claim, a confirm of a sold order, a cancel
//! answering nil, a wait answering `HOLDING` or a position, a leave, a
//! `SOLDOUT` — leave no trace in the log, so the command notes its user
//! (and the tickets the user holds) in `ticket:{E}:answered`, as one
//! replicated effect (a second failover keeps the note). `TICKET.REAPPLY`
//! refuses (`CHANGED`) a lost write of a noted user or ticket, atomically.
//!
//! Noting starts when the node becomes a primary through a role change (a
//! new random *term*, `host::note`) and stops, per event, when the sidecar
//! reports the event healed or found intact (`TICKET.HEALED`): the note is
//! then replaced by one field, `closed = <term>`, so answers of the same
//! term note nothing more. A node that never was promoted notes nothing:
//! the claim path of a primary that never failed over pays one atomic load.

use std::borrow::Cow;

use protocol::effect::Effect;
use protocol::keys::{answered_ticket, answered_user, ANSWERED_CLOSED};
use protocol::record::Op;

use super::effects::Effects;
use super::store::Store;
use crate::error::TicketError;

/// Whether an answer with this outcome tells the user something about
/// their order (a success, or a refusal that reflects the event's state);
/// bad input, a missing event or a busy one told them nothing, and change
/// nothing.
pub fn tells<T>(outcome: &Result<T, TicketError>) -> bool {
    match outcome {
        Ok(_) => true,
        Err(e) => matches!(
            e.code(),
            "NOHOLD" | "HOLDING" | "SOLDOUT" | "CLOSED" | "NOTOPEN" | "QUEUE" | "LIMIT"
        ),
    }
}

/// Notes `user`, answered by a command of a primary promoted in `term`,
/// unless the command logged an entry about the user (the log shows it) or
/// the event's note is closed for this term.
pub fn answered<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    user: &'a str,
    term: i64,
) -> Result<(), TicketError> {
    let mut logged = false;
    out.for_each(|e| {
        if let Effect::Append { record, .. } = e {
            logged |= record.op.user().is_some_and(|u| u.as_ref() == user);
        }
    });
    if logged || closed_for(store)? == Some(term) {
        return Ok(());
    }
    let tickets = store.holder(user)?;
    let user = Cow::Borrowed(user);
    out.apply(store, Effect::Answered { user, tickets });
    Ok(())
}

/// Why a lost write about `op`'s user or tickets may not be re-applied:
/// the new primary answered about them without logging anything.
pub fn refusal<U: AsRef<str>>(
    store: &mut impl Store,
    op: &Op<U>,
) -> Result<Option<String>, TicketError> {
    if store.note_len()? == 0 {
        return Ok(None);
    }
    if let Some(user) = op.user().map(AsRef::as_ref) {
        if store.note_field(&answered_user(user))?.is_some() {
            return Ok(Some(format!(
                "the new primary answered user {user:?} since it became primary"
            )));
        }
    }
    let tickets = op.order().map_or(&[][..], |(_, t, _)| t.as_slice());
    for &t in tickets {
        if store.note_field(&answered_ticket(t))?.is_some() {
            return Ok(Some(format!(
                "the new primary answered about ticket {t} since it became primary"
            )));
        }
    }
    Ok(None)
}

/// `TICKET.HEALED`: the sidecar healed the event, or found nothing to
/// heal: the note is closed for `term` (0: a node never promoted, the note
/// is deleted). Returns whether anything changed.
pub fn healed<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    term: i64,
) -> Result<bool, TicketError> {
    let len = store.note_len()?;
    let done = match term {
        0 => len == 0,
        _ => len == 1 && closed_for(store)? == Some(term),
    };
    if !done {
        out.apply(store, Effect::Healed { term });
    }
    Ok(!done)
}

/// The term the note is closed for, if it is.
fn closed_for(store: &mut impl Store) -> Result<Option<i64>, TicketError> {
    Ok(store
        .note_field(ANSWERED_CLOSED)?
        .and_then(|t| t.parse().ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::memory::MemoryStore;
    use crate::pool::{self, ClaimOptions, Clock};
    use protocol::record::{Checkout, Incarnation, Tickets};

    fn event() -> MemoryStore {
        let mut s = MemoryStore::default();
        let mut out = Effects::default();
        let checkout = Checkout {
            hold: 0,
            limit: 2,
            offer: 0,
        };
        pool::init(
            &mut s,
            &mut out,
            "e",
            (10, 0, 0),
            checkout,
            Incarnation(7),
            1,
        )
        .unwrap();
        s.commit(&out);
        s
    }

    fn claim(s: &mut MemoryStore, user: &str, term: i64) -> Effects<'static> {
        let user: &'static str = Box::leak(user.to_owned().into_boxed_str());
        let mut out = Effects::default();
        let options = ClaimOptions::default();
        pool::claim(s, &mut out, "e", user, options, Clock::at(10), 4).unwrap();
        answered(s, &mut out, user, term).unwrap();
        s.commit(&out);
        out
    }

    fn cancel_of(user: &str, t: i64) -> Op<&str> {
        Op::Cancel {
            from: None,
            user,
            tickets: Tickets::One(t),
        }
    }

    #[test]
    fn only_answers_that_logged_nothing_are_noted() {
        let mut s = event();
        let first = claim(&mut s, "u", 5);
        assert_eq!(first.iter().count(), 1, "a new claim is in the log");
        assert!(s.note.is_empty());
        let repeat = claim(&mut s, "u", 5);
        let want = Effect::Answered {
            user: Cow::Borrowed("u"),
            tickets: Some(Tickets::One(1)),
        };
        assert_eq!(repeat.iter().collect::<Vec<_>>(), [&want]);
        assert!(s.note.contains_key("u:u"));
        assert!(s.note.contains_key("t:1"));
        assert_eq!(
            refusal(&mut s, &cancel_of("u", 1)).unwrap().unwrap(),
            "the new primary answered user \"u\" since it became primary"
        );
        let other = Op::Claim {
            from: None,
            user: "v",
            tickets: Tickets::One(1),
            pick: None,
        };
        assert!(refusal(&mut s, &other)
            .unwrap()
            .unwrap()
            .contains("ticket 1"));
        assert_eq!(refusal(&mut s, &cancel_of("w", 2)).unwrap(), None);
    }

    #[test]
    fn healed_closes_the_note_for_the_term_and_only_once() {
        let mut s = event();
        claim(&mut s, "u", 5);
        claim(&mut s, "u", 5);
        let mut out = Effects::default();
        assert!(healed(&mut s, &mut out, 5).unwrap());
        s.commit(&out);
        assert_eq!(s.note.len(), 1);
        assert_eq!(refusal(&mut s, &cancel_of("u", 1)).unwrap(), None);
        // closed for term 5: answers of the same term note nothing
        assert_eq!(claim(&mut s, "u", 5).iter().count(), 0);
        let mut again = Effects::default();
        assert!(!healed(&mut s, &mut again, 5).unwrap());
        assert!(again.is_empty(), "nothing to replicate");
        // a later promotion (another term) notes again
        assert_eq!(claim(&mut s, "u", 6).iter().count(), 1);
        assert!(!s.note.contains_key(ANSWERED_CLOSED));
        // a node never promoted deletes the note
        let mut out = Effects::default();
        assert!(healed(&mut s, &mut out, 0).unwrap());
        assert!(s.note.is_empty());
    }

    #[test]
    fn bad_input_tells_nothing() {
        assert!(tells::<()>(&Ok(())));
        assert!(tells::<()>(&Err(TicketError::SoldOut("e".into()))));
        assert!(!tells::<()>(&Err(TicketError::Invalid("x".into()))));
        assert!(!tells::<()>(&Err(TicketError::NoEvent("e".into()))));
    }
}
