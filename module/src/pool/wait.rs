//! `TICKET.WAIT`: joins the event's waiting list (or enters a draw not
//! made yet), then runs the offer step (docs/design.md "The waiting list").

use std::borrow::Cow;

use protocol::effect::Effect;

use super::draw::{enter, join_place};
use super::effects::Effects;
use super::model::{Clock, OFFERED};
use super::rules::within_limit;
use super::settle::{prepare, settle_now};
use super::store::{Set, Store};
use crate::error::TicketError;
/// `TICKET.WAIT`: joins the waiting list for `count` tickets (idempotent:
/// a user already in it keeps the place and count). Returns the 1-based
/// position, or 0 when the user was offered tickets at once, or -1 when the
/// user entered a draw that has not been made yet.
pub fn wait<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    user: &'a str,
    count: Option<i64>,
    clock: Clock,
) -> Result<i64, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    if store.holder(user)?.is_some() {
        return Err(TicketError::Holding {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    }
    let count = within_limit(event, &meta, count)?;
    if let Some(draw) = meta.undrawn() {
        return enter(store, out, event, draw, user, count, clock.now);
    }
    if store.score(Set::Waiting, user)?.is_none() {
        let seq = clock.now.max(meta.waitseq + 1);
        let place = join_place(&meta, seq, count);
        let user = Cow::Borrowed(user);
        out.apply(store, Effect::Wait { user, place });
        settle_now(store, out, event, clock)?;
    }
    Ok(store.waiting_rank(user)?.map_or(OFFERED, |rank| rank + 1))
}
