//! The resale hash of an event (`protocol::keys::resale_key`,
//! docs/design.md "After the sale"): which sold tickets are listed for
//! resale, by whom, and which of them a buyer holds; and the state
//! changes of the resale the effects make. Read only while the meta's
//! `listed` is above 0, so an event nobody resells never opens it.
//!
//! A listed ticket stays in its seller's order until a buyer confirms it;
//! while a buyer holds it, it is in the buyer's held order too. Field 0
//! counts those tickets, which the holders hash counts twice.

use protocol::seats::Seat;

use super::model::Meta;
use super::store::{After, MetaWrite, Store};
use crate::error::TicketError;

/// Field 0 of the resale hash (no ticket is 0): how many listed tickets
/// buyers hold.
const HELD_FIELD: i64 = 0;

/// A listed ticket's seller, and its buyer while one holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    pub seller: String,
    pub buyer: Option<String>,
}

impl Listing {
    /// From its stored form, `<seller>` or `<seller>\n<buyer>` (a user id
    /// has no control characters).
    fn parse(text: &str) -> Listing {
        match text.split_once('\n') {
            Some((seller, buyer)) => Listing {
                seller: seller.to_owned(),
                buyer: Some(buyer.to_owned()),
            },
            None => Listing {
                seller: text.to_owned(),
                buyer: None,
            },
        }
    }

    fn stored(&self) -> String {
        match &self.buyer {
            Some(buyer) => format!("{}\n{buyer}", self.seller),
            None => self.seller.clone(),
        }
    }
}

/// Whether the event has listed tickets (read from the meta, cached).
fn any_listed(store: &mut impl Store) -> bool {
    store.listed() > 0
}

/// `ticket`'s listing, if it is listed.
pub(super) fn listing(store: &mut impl Store, ticket: i64) -> Result<Option<Listing>, TicketError> {
    Ok(store
        .after_field(After::Resale, ticket)?
        .map(|text| Listing::parse(&text)))
}

fn set_listing(store: &mut impl Store, ticket: i64, listing: Option<&Listing>) {
    let stored = listing.map(Listing::stored);
    store.set_after_field(After::Resale, ticket, stored.as_deref());
}

/// How many listed tickets buyers hold (0 while nothing is listed).
pub(super) fn held_by_buyers(store: &mut impl Store, meta: &Meta) -> Result<i64, TicketError> {
    if meta.listed == 0 {
        return Ok(0);
    }
    match store.after_field(After::Resale, HELD_FIELD)? {
        None => Ok(0),
        Some(text) => text
            .parse::<i64>()
            .map_err(|_| TicketError::Corrupt(format!("the resale hash's held count is {text:?}"))),
    }
}

fn add_held(store: &mut impl Store, delta: i64) {
    if delta == 0 {
        return;
    }
    let now = store
        .after_field(After::Resale, HELD_FIELD)
        .ok()
        .flatten()
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or(0);
    let next = (now + delta).max(0);
    let text = (next > 0).then(|| next.to_string());
    store.set_after_field(After::Resale, HELD_FIELD, text.as_deref());
}

/// Every listing, ascending by ticket (none while nothing is listed).
pub(super) fn listings(
    store: &mut impl Store,
    meta: &Meta,
) -> Result<Vec<(i64, Listing)>, TicketError> {
    if meta.listed == 0 {
        return Ok(Vec::new());
    }
    Ok(store
        .after_fields(After::Resale)?
        .into_iter()
        .filter(|(ticket, _)| *ticket != HELD_FIELD)
        .map(|(ticket, text)| (ticket, Listing::parse(&text)))
        .collect())
}

/// The listed tickets no buyer holds, ascending: what a claim or an offer
/// may take once no free ticket fits.
pub(super) fn for_sale(store: &mut impl Store, meta: &Meta) -> Result<Vec<i64>, TicketError> {
    Ok(listings(store, meta)?
        .into_iter()
        .filter(|(_, l)| l.buyer.is_none())
        .map(|(ticket, _)| ticket)
        .collect())
}

/// `op=resell`: `seller`'s `tickets` are listed, nobody holding them.
pub(super) fn list(store: &mut impl Store, seller: &str, tickets: &[i64]) {
    let listing = Listing {
        seller: seller.to_owned(),
        buyer: None,
    };
    for &ticket in tickets {
        set_listing(store, ticket, Some(&listing));
    }
    store.write_meta(MetaWrite::AddListed(tickets.len() as i64));
}

/// `op=unlist` and `op=resold`: the tickets are no longer listed (those
/// a buyer held no longer count as held twice).
pub(super) fn delist(store: &mut impl Store, tickets: &[i64]) {
    let mut held = 0;
    for &ticket in tickets {
        if let Ok(Some(Listing { buyer: Some(_), .. })) = listing(store, ticket) {
            held += 1;
        }
        set_listing(store, ticket, None);
    }
    add_held(store, -held);
    store.write_meta(MetaWrite::AddListed(-(tickets.len() as i64)));
}

/// A claim, hold or offer gave `buyer` `tickets` while tickets are
/// listed: the listed ones among them are the buyer's to confirm.
pub(super) fn bought(store: &mut impl Store, buyer: &str, tickets: &[i64]) {
    let mut held = 0;
    for &ticket in tickets {
        if let Ok(Some(mut listing)) = listing(store, ticket) {
            if listing.buyer.is_none() && listing.seller != buyer {
                listing.buyer = Some(buyer.to_owned());
                set_listing(store, ticket, Some(&listing));
                held += 1;
            }
        }
    }
    add_held(store, held);
}

/// `buyer`'s held order of `tickets` expired or was cancelled: the listed
/// ones go back on the list (a seat sold, its seller's), not into free
/// stock. Returns the others, which go back as any ticket does.
pub(super) fn relist(
    store: &mut impl Store,
    buyer: &str,
    tickets: &[i64],
    seated: bool,
) -> Vec<i64> {
    if !any_listed(store) {
        return tickets.to_vec();
    }
    let mut rest = Vec::with_capacity(tickets.len());
    let mut back = Vec::new();
    for &ticket in tickets {
        match listing(store, ticket) {
            Ok(Some(mut listing)) if listing.buyer.as_deref() == Some(buyer) => {
                listing.buyer = None;
                set_listing(store, ticket, Some(&listing));
                back.push(ticket);
            }
            _ => rest.push(ticket),
        }
    }
    add_held(store, -(back.len() as i64));
    if seated && !back.is_empty() {
        store.set_seats(&back, Seat::Sold);
    }
    rest
}
