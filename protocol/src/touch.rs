//! What a logged change touches — its user, its ticket numbers, or the
//! event's status — and whether two changes share any of it. The heal
//! (docs/design.md "Healing after an unplanned failover") re-applies a lost
//! write only when nothing since touched what it touches: the sidecar's
//! planner asks this of the new primary's log, and `TICKET.REAPPLY` of the
//! entries logged after the position the sidecar last read.

use std::collections::BTreeSet;

use crate::model::Op;

/// The users, ticket numbers and status one or more changes touch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touch {
    users: BTreeSet<String>,
    tickets: BTreeSet<i64>,
    status: bool,
}

impl Touch {
    /// What `op` touches.
    pub fn of<U: AsRef<str>>(op: &Op<U>) -> Touch {
        let mut t = Touch::default();
        t.add(op);
        t
    }

    /// Adds what `op` touches.
    pub fn add<U: AsRef<str>>(&mut self, op: &Op<U>) {
        match op.order() {
            Some((user, tickets, _)) => {
                self.users.insert(user.as_ref().to_owned());
                self.tickets.extend(tickets.as_slice());
            }
            // an entrant's enter or leave
            None => match op.user() {
                Some(user) => {
                    self.users.insert(user.as_ref().to_owned());
                }
                // open, close, a draw: the event's status
                None => self.status = true,
            },
        }
    }

    /// The first thing both touch, in words (`user "u1"`, `ticket 7`, `the
    /// event's status`).
    pub fn shared(&self, other: &Touch) -> Option<String> {
        if let Some(u) = self.users.intersection(&other.users).next() {
            return Some(format!("user {u:?}"));
        }
        if let Some(t) = self.tickets.intersection(&other.tickets).next() {
            return Some(format!("ticket {t}"));
        }
        (self.status && other.status).then(|| "the event's status".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Tickets;

    #[test]
    fn users_tickets_and_the_status_are_shared() {
        let claim = Op::Claim {
            from: None,
            user: "u",
            tickets: Tickets::Many(vec![3, 4]),
            pick: None,
        };
        let other = Op::Cancel {
            from: None,
            user: "v",
            tickets: Tickets::One(4),
        };
        let leave = Op::Leave { user: "u" };
        assert_eq!(
            Touch::of(&claim).shared(&Touch::of(&other)),
            Some("ticket 4".into())
        );
        assert_eq!(
            Touch::of(&claim).shared(&Touch::of(&leave)),
            Some("user \"u\"".into())
        );
        assert_eq!(Touch::of(&other).shared(&Touch::of(&leave)), None);
        let open: Op<&str> = Op::Open;
        assert_eq!(
            Touch::of(&open).shared(&Touch::of(&Op::<&str>::Close)),
            Some("the event's status".into())
        );
        assert_eq!(Touch::of(&open).shared(&Touch::of(&claim)), None);
    }
}
