//! `TICKET.CANCEL`: a user's tickets, held or sold, go back to the pool
//! (a held order from an allocation: to it, while it exists), and the
//! waiting list is served from them.

use std::borrow::Cow;

use protocol::record::{Op, Record};

use super::allocation::back_to;
use super::effects::Effects;
use super::model::Clock;
use super::settle::{prepare, settle_now};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.CANCEL`: returns all the user's tickets (held or sold) to the
/// pool; replies with the lowest.
pub fn cancel<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<Option<i64>, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let Some(tickets) = store.holder(user)? else {
        return Ok(None);
    };
    super::resale::refuse_listed(store, &meta, user, tickets.as_slice())?;
    let lowest = tickets.lowest();
    let held = store.score(Set::Holds, user)?.is_some();
    // check_consistent has type-checked every key, so no write fails.
    let op = Op::Cancel {
        from: back_to(store, &meta, user, held)?,
        user: Cow::Borrowed(user),
        tickets,
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    settle_now(store, out, event, clock)?;
    Ok(Some(lowest))
}
