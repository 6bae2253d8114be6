//! `TICKET.REAPPLY`'s condition for a lost `transfer`, `scan`, `resell`
//! or `unlist` (docs/design.md "After the sale" and "Unplanned failover"):
//! the very checks the command makes, on the new primary's state.
//!
//! * `scan`: the ticket is sold at the record's generation and not scanned
//!   (an admitted person was admitted: the credential answers `USED` again);
//! * `transfer`: the giver still holds exactly-sold, unscanned those
//!   tickets, the receiver holds no held order and stays within `LIMIT`,
//!   and the record's time is before the event's transfer deadline;
//! * `resell`: the seller still holds those tickets sold, none listed or
//!   scanned, before the transfer deadline (at the record's time);
//! * `unlist`: the seller still lists those tickets and no buyer holds
//!   one.
//!
//! A re-applied resell does not offer its tickets to the waiting list at
//! once (`TICKET.REAPPLY` writes exactly the lost entry): the next write
//! of the event serves the list, as after any resell the list could not
//! take at once.
//!
//! The generation a lost transfer found needs no check of its own: the
//! heal tries it only when nothing since touched its tickets or users.

use protocol::record::Op;

use super::model::Meta;
use super::store::Store;
use super::{resale, scan, transfer};
use crate::error::TicketError;

/// Why the lost `op` logged at `at` may not be written again now (None:
/// it may); an error only for a corrupt event. Any other op: None.
pub(super) fn refusal<U: AsRef<str>>(
    store: &mut impl Store,
    meta: &Meta,
    event: &str,
    (op, at): (&Op<U>, i64),
) -> Result<Option<String>, TicketError> {
    let checked = match op {
        Op::Scan { ticket, gen, .. } => scan::checked(store, meta, (*ticket, *gen)),
        Op::Transfer { user, to, tickets } => {
            let users = (user.as_ref(), &**to);
            transfer::checked(store, meta, event, users, Some(tickets.as_slice()), at).map(drop)
        }
        Op::Resell { user, tickets } => {
            let asked = Some(tickets.as_slice());
            resale::resell_checked(store, meta, event, user.as_ref(), asked, at).map(drop)
        }
        Op::Unlist { user, tickets } => {
            resale::unlist_checked(store, meta, user.as_ref(), Some(tickets.as_slice())).map(drop)
        }
        _ => Ok(()),
    };
    match checked {
        Ok(()) => Ok(None),
        Err(e @ (TicketError::Corrupt(_) | TicketError::Internal(_))) => Err(e),
        Err(refused) => Ok(Some(format!(
            "{} would be refused now: {refused}",
            op.name()
        ))),
    }
}
