//! What a logged change touches — its user, its ticket numbers, an
//! allocation, or the event's status — and whether two changes share any
//! of it. The heal
//! (docs/design.md "Healing after an unplanned failover") re-applies a lost
//! write only when nothing since touched what it touches: the sidecar's
//! planner asks this of the new primary's log, and `TICKET.REAPPLY` of the
//! entries logged after the position the sidecar last read.

use std::collections::BTreeSet;

use crate::model::{Op, Tickets};

/// The users, ticket numbers, allocations and status one or more changes
/// touch.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Touch {
    users: BTreeSet<String>,
    tickets: BTreeSet<i64>,
    allocations: BTreeSet<String>,
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
        if let Some(name) = op.from() {
            self.allocations.insert(name.to_owned());
        }
        match (op.order(), op) {
            // an allocation's move: its tickets, not the status
            (None, Op::Allocate { name, tickets, .. }) => {
                self.allocations.insert(name.clone());
                self.tickets.extend(tickets.as_slice());
                return;
            }
            (None, Op::Release { name, tickets }) => {
                self.allocations.insert(name.clone());
                self.tickets
                    .extend(tickets.iter().flat_map(Tickets::as_slice));
                return;
            }
            // after the sale: both owners and the tickets
            (None, Op::Transfer { user, to, tickets } | Op::Resold { user, to, tickets }) => {
                self.users.insert(user.as_ref().to_owned());
                self.users.insert(to.to_string());
                self.tickets.extend(tickets.as_slice());
                return;
            }
            (None, Op::Resell { user, tickets } | Op::Unlist { user, tickets }) => {
                self.users.insert(user.as_ref().to_owned());
                self.tickets.extend(tickets.as_slice());
                return;
            }
            (None, Op::Scan { ticket, .. }) => {
                self.tickets.insert(*ticket);
                return;
            }
            _ => {}
        }
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
        if let Some(a) = self.allocations.intersection(&other.allocations).next() {
            return Some(format!("allocation {a:?}"));
        }
        (self.status && other.status).then(|| "the event's status".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn an_allocation_move_touches_its_tickets_and_name_not_the_status() {
        let allocate: Op<&str> = Op::Allocate {
            name: "fan".into(),
            tickets: Tickets::Many(vec![4, 5]),
            release: None,
            key: None,
        };
        let claim = Op::Claim {
            from: None,
            user: "u",
            tickets: Tickets::One(5),
            pick: None,
        };
        let from = Op::Hold {
            from: Some("fan".into()),
            user: "v",
            tickets: Tickets::One(9),
            until: 1,
            pick: None,
        };
        let empty: Op<&str> = Op::Release {
            name: "fan".into(),
            tickets: None,
        };
        let a = Touch::of(&allocate);
        assert_eq!(a.shared(&Touch::of(&claim)), Some("ticket 5".into()));
        assert_eq!(
            a.shared(&Touch::of(&from)),
            Some("allocation \"fan\"".into())
        );
        assert_eq!(
            Touch::of(&empty).shared(&a),
            Some("allocation \"fan\"".into())
        );
        assert_eq!(a.shared(&Touch::of(&Op::<&str>::Open)), None);
    }
}
