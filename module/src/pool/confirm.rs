//! `TICKET.CONFIRM`: a user's held order becomes sold (docs/design.md
//! "Holds and expiry"); the tickets listed for resale in it are the
//! buyer's from now on (`op=resold`).

use std::borrow::Cow;

use protocol::record::{Op, Record};

use super::effects::Effects;
use super::model::Clock;
use super::settle::prepare;
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.CONFIRM`: the user's held order becomes sold; returns how many
/// tickets the user holds. A sold order is confirmed already (no change).
pub fn confirm<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    clock: Clock,
) -> Result<i64, TicketError> {
    prepare(store, out, event, clock)?;
    let Some(tickets) = store.holder(user)? else {
        return Err(TicketError::NoHold {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    };
    let count = tickets.as_slice().len() as i64;
    if store.score(Set::Holds, user)?.is_some() {
        let op = Op::Confirm {
            user: Cow::Borrowed(user),
            tickets: tickets.clone(),
        };
        out.append(store, Record { op, at: clock.now }, None, None);
        super::resale::sell_listed(store, out, user, tickets.as_slice(), clock.now)?;
    }
    Ok(count)
}
