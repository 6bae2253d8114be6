//! `TICKET.TRANSFER`: a user's sold tickets go to another user, each one
//! generation up (docs/design.md "After the sale").

use std::borrow::Cow;

use protocol::record::{Op, Record, Tickets};

use super::effects::Effects;
use super::model::{Clock, Meta};
use super::resale::{refuse_listed, sold_order};
use super::rules::{scanned, transfers_open};
use super::settle::prepare;
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.TRANSFER`: moves `asked` (all by default) of `from`'s sold
/// tickets to `to`; returns how many moved. Refused, changing nothing:
/// after the event's transfer deadline (`CLOSED`), a giver who holds
/// nothing (`NOHOLD`) or whose order is held or lacks an asked ticket
/// (`NOTSOLD`), a scanned ticket (`USED`), a listed one (`LISTED`), a receiver with a held order
/// (`NOTSOLD`) or beyond the event's `LIMIT` with them (`LIMIT`).
pub fn transfer<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    (from, to): (&'a str, &'a str),
    asked: Option<&[i64]>,
    clock: Clock,
) -> Result<i64, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let moved = checked(store, &meta, event, (from, to), asked, clock.now)?;
    let count = moved.len() as i64;
    let op = Op::Transfer {
        user: Cow::Borrowed(from),
        to: Box::from(to),
        tickets: Tickets::from_sorted(moved),
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    Ok(count)
}

/// The tickets a transfer of `asked` (all by default) from `from` to `to`
/// at `now` moves, or why it is refused (the refusals of [`transfer`]);
/// `TICKET.REAPPLY` asks it of a lost transfer too.
pub(super) fn checked(
    store: &mut impl Store,
    meta: &Meta,
    event: &str,
    (from, to): (&str, &str),
    asked: Option<&[i64]>,
    now: i64,
) -> Result<Vec<i64>, TicketError> {
    transfers_open(store, event, meta, now)?;
    let mine = sold_order(store, event, from)?;
    let not_sold = |ticket: i64, why: &str| TicketError::NotSold {
        ticket,
        why: why.to_owned(),
    };
    let moved = asked.unwrap_or(mine.as_slice()).to_vec();
    for &ticket in &moved {
        if mine.as_slice().binary_search(&ticket).is_err() {
            return Err(not_sold(ticket, "is not the giver's"));
        }
        if let Some((at, _, gate)) = scanned(store, ticket)? {
            return Err(TicketError::Used { ticket, at, gate });
        }
    }
    refuse_listed(store, meta, from, &moved)?;
    if store.score(Set::Holds, to)?.is_some() {
        return Err(not_sold(moved[0], "would join the receiver's held order"));
    }
    let theirs = store.holder(to)?.map_or(0, |t| t.as_slice().len());
    let asked_total = (theirs + moved.len()) as i64;
    if asked_total > meta.limit {
        return Err(TicketError::Limit {
            event: event.to_owned(),
            limit: meta.limit,
            asked: asked_total,
        });
    }
    Ok(moved)
}
