//! The decoders' half of [`crate::ops`]: the values of one op as a
//! record or an effect is read, one field at a time ([`Parts::read`]), and
//! the op they make ([`Parts::op`], exhaustive over [`Kind`]).

use crate::draw::{parse_seed, AFTER_DRAW};
use crate::keys::{valid_allocation, valid_gate, valid_user};
use crate::model::{
    default_offer, parse_number, parse_tickets, parse_time, Checkout, DrawTerms, Incarnation, Op,
    Pick, PickHow, Status, Tickets, MAX_ADMIT, MAX_HOLD_MS, MAX_TICKETS,
};
use crate::ops::{Field, Kind};
use crate::StreamId;
use Field as F;

/// The values of one op as a decoder reads them, one field at a time.
#[derive(Debug, Default)]
pub struct Parts<'a> {
    pub user: Option<&'a str>,
    pub tickets: Option<Tickets>,
    pub minted: Option<i64>,
    pub until: Option<i64>,
    pub total: Option<i64>,
    pub opens_at: Option<i64>,
    pub closes_at: Option<i64>,
    pub hold: Option<i64>,
    pub limit: Option<i64>,
    pub offer: Option<i64>,
    pub incarnation: Option<Incarnation>,
    pub status: Option<Status>,
    pub from: Option<StreamId>,
    pub commitment: Option<[u8; 32]>,
    pub admit: Option<i64>,
    pub secret: Option<[u8; 32]>,
    pub count: Option<i64>,
    pub rank: Option<u64>,
    pub seed: Option<[u8; 32]>,
    pub layout: Option<&'a str>,
    pub transfer_until: Option<i64>,
    pub pick: Option<PickHow>,
    pub section: Option<&'a str>,
    pub category: Option<&'a str>,
    pub accessible: Option<i64>,
    pub name: Option<&'a str>,
    pub allocation: Option<&'a str>,
    pub release: Option<i64>,
    pub key: Option<[u8; 32]>,
    pub to: Option<&'a str>,
    pub gen: Option<i64>,
    pub gate: Option<&'a str>,
}

/// Stores `value` in `slot`; whether there was one.
fn keep<T>(slot: &mut Option<T>, value: Option<T>) -> bool {
    *slot = value;
    slot.is_some()
}

impl<'a> Parts<'a> {
    /// Reads `text` as `field`'s value; false when it is not a valid one.
    pub fn read(&mut self, field: Field, text: &'a str) -> bool {
        match field {
            F::User | F::Giver => keep(&mut self.user, Some(text).filter(|u| valid_user(u))),
            F::To => keep(&mut self.to, Some(text).filter(|u| valid_user(u))),
            F::Gen => keep(&mut self.gen, parse_number(text)),
            F::Gate => keep(&mut self.gate, Some(text).filter(|g| valid_gate(g))),
            F::Tickets => keep(&mut self.tickets, parse_tickets(text)),
            F::Minted => keep(&mut self.minted, parse_time(text)),
            F::Until => keep(&mut self.until, parse_time(text).filter(|u| *u > 0)),
            F::Total => keep(&mut self.total, parse_number(text)),
            F::OpensAt => keep(&mut self.opens_at, parse_time(text)),
            F::ClosesAt => keep(&mut self.closes_at, parse_time(text)),
            F::Hold => keep(
                &mut self.hold,
                parse_time(text).filter(|h| *h <= MAX_HOLD_MS),
            ),
            F::Limit => keep(
                &mut self.limit,
                parse_number(text).filter(|l| *l <= MAX_TICKETS as i64),
            ),
            F::Offer => keep(
                &mut self.offer,
                parse_number(text).filter(|o| *o <= MAX_HOLD_MS),
            ),
            F::Incarnation => keep(&mut self.incarnation, Incarnation::parse(text)),
            F::Status => keep(&mut self.status, Status::parse(text)),
            F::From => keep(&mut self.from, StreamId::parse(text)),
            // A seated event's init effect: no draw terms.
            F::Commitment | F::Secret if text.is_empty() => true,
            F::Commitment => keep(&mut self.commitment, parse_seed(text)),
            F::Admit => keep(
                &mut self.admit,
                parse_time(text).filter(|a| *a <= MAX_ADMIT),
            ),
            F::Secret => keep(&mut self.secret, parse_seed(text)),
            F::Count => keep(
                &mut self.count,
                parse_number(text).filter(|c| *c <= MAX_TICKETS as i64),
            ),
            F::Rank => keep(
                &mut self.rank,
                parse_time(text)
                    .map(|r| r as u64)
                    .filter(|r| *r < AFTER_DRAW),
            ),
            F::Seed => keep(&mut self.seed, parse_seed(text)),
            // An init effect with `transfer_until` and no layout.
            F::Layout if text.is_empty() => true,
            F::Layout => keep(&mut self.layout, Some(text)),
            F::TransferUntil => keep(&mut self.transfer_until, parse_time(text)),
            F::Pick => keep(&mut self.pick, PickHow::parse(text)),
            F::Section => seat_name_field(text, 16)
                .map(|s| self.section = s)
                .is_some(),
            F::Category => seat_name_field(text, 32)
                .map(|c| self.category = c)
                .is_some(),
            F::Accessible => match parse_time(text) {
                Some(0) => true,
                a => keep(&mut self.accessible, a.filter(|a| *a <= MAX_TICKETS as i64)),
            },
            F::Name => keep(&mut self.name, Some(text).filter(|n| valid_allocation(n))),
            F::Allocation => keep(
                &mut self.allocation,
                Some(text).filter(|n| valid_allocation(n)),
            ),
            F::Release => match parse_time(text) {
                Some(0) => true,
                at => keep(&mut self.release, at),
            },
            F::KeyHash if text.is_empty() => true,
            F::KeyHash => keep(&mut self.key, parse_seed(text)),
        }
    }

    /// An init made of these values, absent optional ones at their defaults.
    fn init(&self) -> Option<Op<&'a str>> {
        let hold = self.hold.unwrap_or(0);
        Some(Op::Init {
            total: self.total?,
            opens_at: self.opens_at.unwrap_or(0),
            closes_at: self.closes_at.unwrap_or(0),
            checkout: Checkout {
                hold,
                limit: self.limit.unwrap_or(1),
                offer: self.offer.unwrap_or(default_offer(hold)),
            },
            incarnation: self.incarnation,
            draw: self.commitment.map(|commitment| DrawTerms {
                commitment,
                admit: self.admit.filter(|a| *a > 0),
                seed: self.secret,
            }),
            layout: self.layout.map(str::to_owned),
            transfer_until: self.transfer_until,
        })
    }

    /// The pick these values describe, if any.
    fn pick(&self) -> Option<Box<Pick>> {
        Some(Box::new(Pick {
            how: self.pick?,
            section: self.section.map(str::to_owned),
            category: self.category.map(str::to_owned),
            accessible: self.accessible,
        }))
    }

    /// The op of `kind` made of these values, absent optional ones at their
    /// defaults; `None` when one it needs is missing.
    pub fn op(self, kind: Kind) -> Option<Op<&'a str>> {
        match kind {
            Kind::Init => self.init(),
            Kind::Claim
            | Kind::Hold
            | Kind::Offer
            | Kind::Confirm
            | Kind::Expire
            | Kind::Cancel => self.order(kind),
            _ => self.other(kind),
        }
    }

    /// An op about a user's order (claim, hold, offer, confirm, expire,
    /// cancel).
    fn order(self, kind: Kind) -> Option<Op<&'a str>> {
        let pick = self.pick();
        let (user, tickets) = (self.user?, self.tickets?);
        let from = self.allocation.map(Box::from);
        Some(match kind {
            Kind::Claim => Op::Claim {
                pick,
                user,
                tickets,
                from,
            },
            Kind::Hold => Op::Hold {
                pick,
                user,
                tickets,
                until: self.until?,
                from,
            },
            Kind::Offer => Op::Offer {
                pick,
                user,
                tickets,
                until: self.until?,
            },
            Kind::Confirm => Op::Confirm { user, tickets },
            Kind::Expire => Op::Expire {
                user,
                tickets,
                from,
            },
            _ => Op::Cancel {
                user,
                tickets,
                from,
            },
        })
    }

    /// Every op but an init and the order ops.
    fn other(self, kind: Kind) -> Option<Op<&'a str>> {
        Some(match kind {
            Kind::Open => Op::Open,
            Kind::Close => Op::Close,
            Kind::Drop => Op::Drop,
            Kind::Restore => Op::Restore {
                incarnation: self.incarnation?,
                status: self.status?,
                from: self.from?,
            },
            Kind::Enter => Op::Enter {
                user: self.user?,
                count: self.count?,
                rank: self.rank,
            },
            Kind::Leave => Op::Leave { user: self.user? },
            Kind::Draw => Op::Draw { seed: self.seed? },
            Kind::Allocate => Op::Allocate {
                name: self.name?.to_owned(),
                tickets: self.tickets?,
                release: self.release,
                key: self.key,
            },
            Kind::Release => Op::Release {
                name: self.name?.to_owned(),
                tickets: self.tickets,
            },
            Kind::Transfer => Op::Transfer {
                user: self.user?,
                to: Box::from(self.to?),
                tickets: self.tickets?,
            },
            Kind::Resell => Op::Resell {
                user: self.user?,
                tickets: self.tickets?,
            },
            Kind::Unlist => Op::Unlist {
                user: self.user?,
                tickets: self.tickets?,
            },
            Kind::Resold => Op::Resold {
                user: self.user?,
                to: Box::from(self.to?),
                tickets: self.tickets?,
            },
            Kind::Scan => Op::Scan {
                ticket: match self.tickets? {
                    Tickets::One(ticket) => ticket,
                    Tickets::Many(_) => return None,
                },
                gen: self.gen?,
                gate: self.gate.map(Box::from),
            },
            Kind::Init
            | Kind::Claim
            | Kind::Hold
            | Kind::Offer
            | Kind::Confirm
            | Kind::Expire
            | Kind::Cancel => return None,
        })
    }
}

/// A section or category name as records carry it (`""`: not given).
fn seat_name_field(text: &str, max: usize) -> Option<Option<&str>> {
    let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    match text {
        "" => Some(None),
        t if t.len() <= max && t.bytes().all(ok) => Some(Some(t)),
        _ => None,
    }
}
