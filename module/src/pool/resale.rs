//! Face-value resale (docs/design.md "After the sale"): `TICKET.RESELL`
//! lists a user's sold tickets, `TICKET.UNLIST` takes back those nobody
//! holds, and the steps the sale's commands take for listed tickets: the
//! buyer's confirm (or final claim) logs `op=resold` per seller, which
//! moves them a generation up; a transfer or cancel of a listed ticket is
//! refused (`LISTED`). What claims and offers take: `forsale`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use protocol::record::{Op, Record, Tickets};

use super::effects::Effects;
use super::listing::{listing, Listing};
use super::model::{Clock, Meta};
use super::rules::{scanned, transfers_open};
use super::settle::{prepare, settle_now};
use super::store::{Set, Store};
use crate::error::TicketError;

/// `TICKET.RESELL`: lists `asked` of `seller`'s sold tickets (by default
/// every one not listed yet) and offers them to the waiting list; returns
/// how many were listed. Refused, changing nothing: after the event's
/// transfer deadline (`CLOSED`), a seller who holds nothing (`NOHOLD`),
/// whose order is held or lacks an asked ticket (`NOTSOLD`), a ticket
/// listed already (`LISTED`) or scanned (`USED`).
pub fn resell<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    seller: &'a str,
    asked: Option<&[i64]>,
    clock: Clock,
) -> Result<i64, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let tickets = resell_checked(store, &meta, event, seller, asked, clock.now)?;
    let count = tickets.len() as i64;
    let op = Op::Resell {
        user: Cow::Borrowed(seller),
        tickets: Tickets::from_sorted(tickets),
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    settle_now(store, out, event, clock)?;
    Ok(count)
}

/// The tickets a resell of `asked` (by default every one not listed yet)
/// by `seller` at `now` lists, or why it is refused (the refusals of
/// [`resell`]); `TICKET.REAPPLY` asks it of a lost resell too.
pub(super) fn resell_checked(
    store: &mut impl Store,
    meta: &Meta,
    event: &str,
    seller: &str,
    asked: Option<&[i64]>,
    now: i64,
) -> Result<Vec<i64>, TicketError> {
    transfers_open(store, event, meta, now)?;
    let mine = sold_order(store, event, seller)?;
    let listed = listed_of(store, meta, mine.as_slice())?;
    let tickets: Vec<i64> = match asked {
        Some(asked) => asked.to_vec(),
        None => mine
            .as_slice()
            .iter()
            .copied()
            .filter(|t| listed.binary_search(t).is_err())
            .collect(),
    };
    if tickets.is_empty() {
        return Err(listed_already(mine.lowest()));
    }
    for &ticket in &tickets {
        if mine.as_slice().binary_search(&ticket).is_err() {
            return Err(not_sold(ticket, "is not the seller's"));
        }
        if listed.binary_search(&ticket).is_ok() {
            return Err(listed_already(ticket));
        }
        if let Some((at, _, gate)) = scanned(store, ticket)? {
            return Err(TicketError::Used { ticket, at, gate });
        }
    }
    Ok(tickets)
}

/// `TICKET.UNLIST`: takes back `asked` of `seller`'s listed tickets (by
/// default every one nobody holds); returns how many. Refused, changing
/// nothing: an asked ticket not listed by `seller`, or held by a buyer
/// (`NOTLISTED`).
pub fn unlist<'a>(
    store: &mut impl Store,
    out: &mut Effects<'a>,
    event: &str,
    seller: &'a str,
    asked: Option<&[i64]>,
    clock: Clock,
) -> Result<i64, TicketError> {
    let meta = prepare(store, out, event, clock)?;
    let tickets = unlist_checked(store, &meta, seller, asked)?;
    if tickets.is_empty() {
        return Ok(0);
    }
    let count = tickets.len() as i64;
    let op = Op::Unlist {
        user: Cow::Borrowed(seller),
        tickets: Tickets::from_sorted(tickets),
    };
    out.append(store, Record { op, at: clock.now }, None, None);
    Ok(count)
}

/// The tickets an unlist of `asked` (by default every one nobody holds)
/// by `seller` takes back, or why it is refused (the refusals of
/// [`unlist`]); `TICKET.REAPPLY` asks it of a lost unlist too.
pub(super) fn unlist_checked(
    store: &mut impl Store,
    meta: &Meta,
    seller: &str,
    asked: Option<&[i64]>,
) -> Result<Vec<i64>, TicketError> {
    let mut free = Vec::new();
    for (ticket, listing) in super::listing::listings(store, meta)? {
        if listing.seller == seller {
            free.push((ticket, listing.buyer.is_none()));
        }
    }
    let Some(asked) = asked else {
        return Ok(free.iter().filter(|(_, f)| *f).map(|(t, _)| *t).collect());
    };
    for &ticket in asked {
        match free.iter().find(|(t, _)| *t == ticket) {
            None => return Err(not_listed(ticket, seller)),
            Some((_, false)) => {
                return Err(TicketError::NotListed {
                    ticket,
                    why: "is held by a buyer".into(),
                })
            }
            Some(_) => {}
        }
    }
    Ok(asked.to_vec())
}

/// `user`'s order, which must be sold (`NOHOLD`, `NOTSOLD` when held).
pub(super) fn sold_order(
    store: &mut impl Store,
    event: &str,
    user: &str,
) -> Result<Tickets, TicketError> {
    let Some(mine) = store.holder(user)? else {
        return Err(TicketError::NoHold {
            event: event.to_owned(),
            user: user.to_owned(),
        });
    };
    if store.score(Set::Holds, user)?.is_some() {
        return Err(not_sold(mine.lowest(), "is held, not sold"));
    }
    Ok(mine)
}

/// Which of `tickets` are listed, ascending.
pub(super) fn listed_of(
    store: &mut impl Store,
    meta: &Meta,
    tickets: &[i64],
) -> Result<Vec<i64>, TicketError> {
    if meta.listed == 0 {
        return Ok(Vec::new());
    }
    let mut listed = Vec::new();
    for &ticket in tickets {
        if listing(store, ticket)?.is_some() {
            listed.push(ticket);
        }
    }
    Ok(listed)
}

/// `LISTED` for a command that must not touch a listed ticket of `user`
/// (a transfer, a cancel): the first of `tickets` listed by `user`.
pub(super) fn refuse_listed(
    store: &mut impl Store,
    meta: &Meta,
    user: &str,
    tickets: &[i64],
) -> Result<(), TicketError> {
    if meta.listed == 0 {
        return Ok(());
    }
    for &ticket in tickets {
        if let Some(Listing { seller, .. }) = listing(store, ticket)? {
            if seller == user {
                return Err(TicketError::Listed {
                    ticket,
                    why: "is listed for resale (TICKET.UNLIST it first)".into(),
                });
            }
        }
    }
    Ok(())
}

fn not_sold(ticket: i64, why: &str) -> TicketError {
    TicketError::NotSold {
        ticket,
        why: why.to_owned(),
    }
}

fn listed_already(ticket: i64) -> TicketError {
    TicketError::Listed {
        ticket,
        why: "is listed already".into(),
    }
}

fn not_listed(ticket: i64, seller: &str) -> TicketError {
    TicketError::NotListed {
        ticket,
        why: format!(
            "is not listed by {}",
            crate::error::quote(seller.as_bytes())
        ),
    }
}

/// After `buyer`'s order of `tickets` became sold (a confirm, a final
/// claim): one `op=resold` per seller of the listed ones among them.
pub(super) fn sell_listed(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    buyer: &str,
    tickets: &[i64],
    at: i64,
) -> Result<(), TicketError> {
    if store.listed() == 0 {
        return Ok(());
    }
    let mut by_seller: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for &ticket in tickets {
        if let Some(Listing {
            seller,
            buyer: Some(held_by),
        }) = listing(store, ticket)?
        {
            if held_by == buyer {
                by_seller.entry(seller).or_default().push(ticket);
            }
        }
    }
    for (seller, sold) in by_seller {
        let op = Op::Resold {
            user: Cow::Owned(seller),
            to: Box::from(buyer),
            tickets: Tickets::from_sorted(sold),
        };
        out.append(store, Record { op, at }, None, None);
    }
    Ok(())
}
