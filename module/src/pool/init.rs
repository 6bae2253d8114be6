//! `TICKET.INIT`: creates an event (docs/design.md "The lazy pool"): the
//! init record, which the apply step turns into the meta hash (and, for a
//! seated event, its seats); the pool stays empty until the first claim
//! mints, so any size inits in O(1).

use std::borrow::Cow;

use protocol::effect::Checkout;
use protocol::record::{Incarnation, Op, Record};

use super::effects::Effects;
use super::rules::any_state;
use super::store::{Part, Store};
use crate::error::TicketError;

/// `TICKET.INIT`: creates the meta hash (the pool stays empty until the first
/// claim mints a chunk, so any size inits in O(1)) of incarnation
/// `incarnation` (drawn by the command: this stays pure).
pub fn init(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    window: (i64, i64, i64),
    checkout: Checkout,
    incarnation: Incarnation,
    now: i64,
) -> Result<(), TicketError> {
    let (total, opens_at, closes_at) = window;
    let op = Op::Init {
        layout: None,
        total,
        opens_at,
        closes_at,
        checkout,
        incarnation: Some(incarnation),
        draw: None,
        transfer_until: None,
    };
    create(store, out, event, op, now)
}

/// `TICKET.INIT` of the event `init` (an `Op::Init`, a draw event's terms
/// and secret seed included, drawn by the command: this stays pure).
pub fn create<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    init: Op<Cow<'a, str>>,
    now: i64,
) -> Result<(), TicketError> {
    if store.meta()?.is_some() || any_state(store)? {
        return Err(TicketError::Exists(event.to_owned()));
    }
    // Type-check the log before the first write.
    store.len(Part::Log)?;
    out.append(store, Record { op: init, at: now }, None, None);
    Ok(())
}
