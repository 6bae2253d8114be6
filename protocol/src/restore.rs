//! `TICKET.RESTORE`: installing a snapshot of an event (taken from MySQL by
//! the sidecar's `rebuild`) in steps small enough that Redis keeps
//! answering in between. Encoded by the sidecar (and the bench), decoded by
//! the module; its `restore-*` effects are decoded by replicas and the AOF
//! loader (`effect`).
//!
//! ```text
//! TICKET.RESTORE E BEGIN <incarnation> <total> <minted> <status open|closed> <opens_at> <closes_at> <hold> <limit> <offer> <orders> <from-id> [SEATS <layout>] [FORCE]
//! TICKET.RESTORE E ORDERS <user> <tickets> <until> [<user> <tickets> <until> ...]
//! TICKET.RESTORE E ALLOCATION <name> <free tickets|-> <claimed> <release|-> [<user> ...]
//! TICKET.RESTORE E FREE <n>|<a>-<b> [...]
//! TICKET.RESTORE E AFTER <transfer_until|-> [<ticket> <gen> <scanned_at|-> <gate|->] ...
//! TICKET.RESTORE E COMMIT
//! ```
//!
//! `minted` is the highest number restored (every number above it is free
//! and unminted); `orders` how many ORDERS triples follow in all; `from` the
//! MySQL offset of the snapshot. An order's `tickets` is one number or
//! several, ascending, comma-separated; `until` its hold's deadline (unix
//! ms), 0 = sold. FREE names the pooled numbers up to `minted`, one by one
//! or as inclusive ranges. [`steps`] cuts a snapshot into such calls.
//!
//! `ALLOCATION` restores one allocation (after the orders, before `FREE`):
//! its free tickets (numbers or seat ids, as an order's, `-` for none),
//! `claimed` (the tickets of the listed users' orders, held or sold from
//! it), its release time (unix ms, `-` for none) and the users whose
//! restored orders came from it. MySQL never has its key: the module
//! restores it locked (docs/commands.md, TICKET.RESTORE).
//!
//! A seated event is restored with `SEATS <layout>` (the layout JSON, as
//! `TICKET.INIT ... SEATS` takes it, checked the same way, its seats
//! `total`; `minted` must be `total`): its orders' tickets are seat ids,
//! and every seat in no order is free, so it has no `FREE` calls.
//!
//! Decoding checks everything that needs no state (syntax, ranges, order);
//! what depends on the event (a ticket above `minted`, a user restored
//! twice, a number pooled twice) the module checks. Decoding never panics;
//! its errors name the argument that is wrong, with user input escaped.

use std::ops::RangeInclusive;

use crate::keys::{valid_event, valid_user, MAX_TOTAL};
use crate::model::{
    parse_number, parse_tickets, parse_time, printable, Args, Checkout, Incarnation, Status,
    Tickets, Value, MAX_HOLD_MS, MAX_TICKETS,
};
use crate::seats::{Layout, LayoutError};
use crate::StreamId;

/// The command name.
pub const RESTORE_COMMAND: &str = "TICKET.RESTORE";

/// Most tickets one `ORDERS` or `FREE` call carries by default: one call
/// blocks Redis well under ~50 ms. Measured with `ticketgate-bench restore`
/// (1,000,000 orders, 2 busy cores): 10,000 tickets took up to ~42 ms in
/// Redis and ~55-60 ms client-observed; 5,000 up to ~25 ms and ~30-45 ms.
pub const DEFAULT_CHUNK: usize = 5_000;

/// What `BEGIN` says about the event being restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Begin {
    pub incarnation: Incarnation,
    pub total: i64,
    /// The highest number restored.
    pub minted: i64,
    /// The status after `COMMIT`.
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    pub checkout: Checkout,
    /// How many orders the snapshot has (`COMMIT` checks it).
    pub orders: i64,
    /// The MySQL offset the snapshot was taken at.
    pub from: StreamId,
    /// A seated event's layout, in its stored form (`Layout::to_json`).
    pub layout: Option<String>,
}

impl Begin {
    /// The values after `BEGIN` (and after `restore-begin`): 11, then
    /// `SEATS <layout>` for a seated event.
    pub fn values(&self) -> impl Iterator<Item = Value<'_>> + '_ {
        let seats = self
            .layout
            .as_deref()
            .map(|l| [Value::Text("SEATS"), Value::Text(l)]);
        self.settings()
            .into_iter()
            .chain(seats.into_iter().flatten())
    }

    /// The 11 settings every restore has.
    fn settings(&self) -> [Value<'static>; 11] {
        [
            Value::Hex(self.incarnation),
            Value::Number(self.total),
            Value::Number(self.minted),
            Value::Text(self.status.as_str()),
            Value::Number(self.opens_at),
            Value::Number(self.closes_at),
            Value::Number(self.checkout.hold),
            Value::Number(self.checkout.limit),
            Value::Number(self.checkout.offer),
            Value::Number(self.orders),
            Value::Id(self.from),
        ]
    }

    /// Decodes the values after `BEGIN` (or `restore-begin`): the 11
    /// settings, then `SEATS <layout>` in any order with `FORCE` when
    /// `force` is allowed (the command); returns whether `FORCE` was given.
    pub fn decode_with_options(args: &[&[u8]], force: bool) -> Result<(Begin, bool), String> {
        let (settings, options) = args.split_at(args.len().min(11));
        let mut begin = Begin::decode(settings)?;
        let (mut forced, mut rest) = (false, options);
        while let [word, tail @ ..] = rest {
            rest = tail;
            if force && word.eq_ignore_ascii_case(b"FORCE") && !forced {
                forced = true;
            } else if word.eq_ignore_ascii_case(b"SEATS") && begin.layout.is_none() {
                let [json, tail @ ..] = rest else {
                    return Err("SEATS needs a layout".into());
                };
                rest = tail;
                begin.layout = Some(seated_layout(&begin, json)?);
            } else {
                let want = if force { "SEATS or FORCE" } else { "SEATS" };
                return Err(format!("unknown option {} (expected {want})", shown(word)));
            }
        }
        Ok((begin, forced))
    }

    /// Decodes the 11 settings after `BEGIN` (no layout).
    pub fn decode(args: &[&[u8]]) -> Result<Begin, String> {
        let [incarnation, total, minted, status, opens, closes, hold, limit, offer, orders, from] =
            args
        else {
            return Err(format!(
                "BEGIN takes 11 values (incarnation total minted status opens_at closes_at hold limit offer orders from-id), got {}",
                args.len()
            ));
        };
        let incarnation = Incarnation::parse(text(incarnation)).ok_or_else(|| {
            wrong(
                "incarnation",
                incarnation,
                "16 lowercase hex digits, not all 0",
            )
        })?;
        let total = parse_number(text(total))
            .ok_or_else(|| wrong("total", total, &format!("1..={MAX_TOTAL}")))?;
        let in_range = |raw: &[u8], what: &str, low: i64, high: i64| {
            parse_time(text(raw))
                .filter(|n| (low..=high).contains(n))
                .ok_or_else(|| wrong(what, raw, &format!("{low}..={high}")))
        };
        let minted = in_range(minted, "minted", 0, total)?;
        let status =
            Status::parse(text(status)).ok_or_else(|| wrong("status", status, "open or closed"))?;
        let opens_at = in_range(opens, "opens_at", 0, i64::MAX)?;
        let closes_at = in_range(closes, "closes_at", 0, i64::MAX)?;
        if opens_at > 0 && closes_at > 0 && closes_at <= opens_at {
            return Err(format!(
                "closes_at ({closes_at}) must be after opens_at ({opens_at})"
            ));
        }
        let checkout = Checkout {
            hold: in_range(hold, "hold", 0, MAX_HOLD_MS)?,
            limit: in_range(limit, "limit", 1, MAX_TICKETS as i64)?,
            offer: in_range(offer, "offer", 1, MAX_HOLD_MS)?,
        };
        let orders = in_range(orders, "orders", 0, minted)?;
        let from = StreamId::parse(text(from))
            .ok_or_else(|| wrong("from-id", from, "a stream id <ms>-<seq>"))?;
        Ok(Begin {
            incarnation,
            total,
            minted,
            status,
            opens_at,
            closes_at,
            checkout,
            orders,
            from,
            layout: None,
        })
    }
}

/// A seated restore's layout in its stored form, checked as `TICKET.INIT
/// ... SEATS` checks it: valid, its seats `total`, and `minted` = `total`
/// (a seated event's seats all exist from the start).
fn seated_layout(begin: &Begin, json: &[u8]) -> Result<String, String> {
    let json = std::str::from_utf8(json).map_err(|_| "invalid layout: not UTF-8".to_owned())?;
    // A layout's error can quote its JSON (serde names an unknown field).
    let invalid =
        |e: LayoutError| format!("invalid layout: {}", printable(&e.0, LAYOUT_ERROR_CHARS));
    let stored = Layout::stored(json, begin.total).map_err(invalid)?;
    if begin.minted != begin.total {
        return Err(format!(
            "a seated event's minted ({}) must be its total ({})",
            begin.minted, begin.total
        ));
    }
    Ok(stored)
}

/// One restored order: `user` holds `tickets`, held until `until` (unix
/// ms), or sold when `until` is 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order<U = String> {
    pub user: U,
    pub tickets: Tickets,
    pub until: i64,
}

impl<U: AsRef<str>> Order<U> {
    /// `<user> <tickets> <until>`.
    pub fn values(&self) -> [Value<'_>; 3] {
        [
            Value::Text(self.user.as_ref()),
            self.tickets.value(),
            Value::Number(self.until),
        ]
    }

    pub fn borrowed(&self) -> Order<&str> {
        Order {
            user: self.user.as_ref(),
            tickets: self.tickets.clone(),
            until: self.until,
        }
    }

    pub fn owned(&self) -> Order {
        Order {
            user: self.user.as_ref().to_owned(),
            tickets: self.tickets.clone(),
            until: self.until,
        }
    }
}

/// One restored allocation: its free tickets (ascending, distinct; GA
/// numbers or seat ids), `claimed` (the tickets of `users`' orders), when
/// it releases itself (unix ms), and the users whose orders came from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation<U = String> {
    pub name: U,
    pub free: Vec<i64>,
    pub claimed: i64,
    pub release: Option<i64>,
    pub users: Vec<U>,
}

impl<U: AsRef<str>> Allocation<U> {
    /// `<name> <free|-> <claimed> <release|-> [<user> ...]`.
    pub fn values(&self) -> impl Iterator<Item = Value<'_>> + '_ {
        let free = match self.free.is_empty() {
            true => Value::Text("-"),
            false => Value::List(&self.free),
        };
        let release = self.release.map_or(Value::Text("-"), Value::Number);
        [
            Value::Text(self.name.as_ref()),
            free,
            Value::Number(self.claimed),
            release,
        ]
        .into_iter()
        .chain(self.users.iter().map(|u| Value::Text(u.as_ref())))
    }

    pub fn borrowed(&self) -> Allocation<&str> {
        Allocation {
            name: self.name.as_ref(),
            free: self.free.clone(),
            claimed: self.claimed,
            release: self.release,
            users: self.users.iter().map(AsRef::as_ref).collect(),
        }
    }

    pub fn owned(&self) -> Allocation {
        Allocation {
            name: self.name.as_ref().to_owned(),
            free: self.free.clone(),
            claimed: self.claimed,
            release: self.release,
            users: self.users.iter().map(|u| u.as_ref().to_owned()).collect(),
        }
    }
}

/// One call of `TICKET.RESTORE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step<U = String> {
    Begin {
        begin: Begin,
        force: bool,
    },
    Orders(Vec<Order<U>>),
    Allocation(Allocation<U>),
    Free(Vec<RangeInclusive<i64>>),
    /// Generations, scans and the transfer deadline (`restore_after`).
    After(crate::restore_after::AfterSale),
    Commit,
}

impl<U: AsRef<str>> Step<U> {
    /// The arguments after `TICKET.RESTORE` for `event`.
    pub fn args<'a>(&'a self, event: &'a str) -> Args<'a> {
        let mut args = Args::new();
        args.push(Value::Text(event));
        match self {
            Step::Begin { begin, force } => {
                args.push(Value::Text("BEGIN"));
                args.extend(begin.values());
                if *force {
                    args.push(Value::Text("FORCE"));
                }
            }
            Step::Orders(orders) => {
                args.push(Value::Text("ORDERS"));
                args.extend(orders.iter().flat_map(|o| o.values()));
            }
            Step::Allocation(allocation) => {
                args.push(Value::Text("ALLOCATION"));
                args.extend(allocation.values());
            }
            Step::Free(free) => {
                args.push(Value::Text("FREE"));
                args.extend(free_values(free));
            }
            Step::After(after) => {
                args.push(Value::Text("AFTER"));
                args.extend(after.values());
            }
            Step::Commit => args.push(Value::Text("COMMIT")),
        }
        args
    }

    /// How many tickets the call carries (orders' and free numbers).
    pub fn tickets(&self) -> usize {
        match self {
            Step::Orders(orders) => orders.iter().map(|o| o.tickets.as_slice().len()).sum(),
            Step::Allocation(allocation) => allocation.free.len(),
            Step::Free(free) => free
                .iter()
                .map(|r| (r.end() - r.start() + 1) as usize)
                .sum(),
            Step::After(after) => after.tickets.len(),
            Step::Begin { .. } | Step::Commit => 0,
        }
    }
}

/// The values of a `FREE` (and of `restore-free`): `<n>` or `<a>-<b>`.
pub fn free_values<'a>(free: &'a [RangeInclusive<i64>]) -> impl Iterator<Item = Value<'a>> + 'a {
    free.iter().map(|r| Value::Range(*r.start(), *r.end()))
}

/// Decodes the arguments after `TICKET.RESTORE`: the event and the step.
pub fn decode<'a>(args: &[&'a [u8]]) -> Result<(&'a str, Step<&'a str>), String> {
    let [event, step, rest @ ..] = args else {
        return Err(
            "TICKET.RESTORE needs an event and BEGIN, ORDERS, ALLOCATION, FREE, AFTER or COMMIT"
                .into(),
        );
    };
    let event = std::str::from_utf8(event)
        .ok()
        .filter(|e| valid_event(e))
        .ok_or_else(|| format!("invalid event id {}", shown(event)))?;
    let is = |word: &str| step.eq_ignore_ascii_case(word.as_bytes());
    let step = if is("BEGIN") {
        let (begin, force) = Begin::decode_with_options(rest, true)?;
        Step::Begin { begin, force }
    } else if is("ORDERS") {
        Step::Orders(decode_orders(rest)?)
    } else if is("ALLOCATION") {
        Step::Allocation(decode_allocation(rest)?)
    } else if is("FREE") {
        Step::Free(decode_free(rest)?)
    } else if is("AFTER") {
        Step::After(crate::restore_after::decode(rest)?)
    } else if is("COMMIT") {
        match rest {
            [] => Step::Commit,
            _ => return Err("COMMIT takes no arguments".into()),
        }
    } else {
        return Err(format!(
            "unknown step {} (expected BEGIN, ORDERS, ALLOCATION, FREE, AFTER or COMMIT)",
            shown(step)
        ));
    };
    Ok((event, step))
}

/// Decodes `<user> <tickets> <until>` triples (at least one).
pub fn decode_orders<'a>(args: &[&'a [u8]]) -> Result<Vec<Order<&'a str>>, String> {
    if args.is_empty() || !args.len().is_multiple_of(3) {
        return Err(format!(
            "ORDERS takes <user> <tickets> <until> triples, got {} values",
            args.len()
        ));
    }
    args.chunks_exact(3)
        .enumerate()
        .map(|(i, triple)| {
            let [user, tickets, until] = triple else {
                return Err("ORDERS takes <user> <tickets> <until> triples".to_owned());
            };
            let n = i + 1;
            let user = std::str::from_utf8(user)
                .ok()
                .filter(|u| valid_user(u))
                .ok_or_else(|| format!("order {n}: invalid user id {}", shown(user)))?;
            let tickets = parse_tickets(text(tickets)).ok_or_else(|| {
                format!(
                    "order {n} (user {}): tickets {} must be 1 to {MAX_TICKETS} ascending distinct numbers in 1..={MAX_TOTAL}, comma-separated",
                    shown(user.as_bytes()),
                    shown(tickets)
                )
            })?;
            let until = parse_time(text(until)).ok_or_else(|| {
                format!(
                    "order {n} (user {}): until {} must be a unix time in ms (0 = sold)",
                    shown(user.as_bytes()),
                    shown(until)
                )
            })?;
            Ok(Order {
                user,
                tickets,
                until,
            })
        })
        .collect()
}

/// Decodes `<name> <free|-> <claimed> <release|-> [<user> ...]`.
pub fn decode_allocation<'a>(args: &[&'a [u8]]) -> Result<Allocation<&'a str>, String> {
    let [name, free, claimed, release, users @ ..] = args else {
        return Err(format!(
            "ALLOCATION takes <name> <free tickets|-> <claimed> <release|-> [<user> ...], got {} values",
            args.len()
        ));
    };
    let name = std::str::from_utf8(name)
        .ok()
        .filter(|n| crate::keys::valid_allocation(n))
        .ok_or_else(|| wrong("allocation name", name, "1 to 32 bytes of [A-Za-z0-9_.-]"))?;
    let named = |what: &str, raw: &[u8], want: &str| {
        format!(
            "allocation {}: {}",
            shown(name.as_bytes()),
            wrong(what, raw, want)
        )
    };
    let free = match *free {
        b"-" => Vec::new(),
        raw => parse_tickets(text(raw))
            .ok_or_else(|| {
                named(
                    "free tickets",
                    raw,
                    &format!("- or 1 to {MAX_TICKETS} ascending distinct numbers in 1..={MAX_TOTAL}, comma-separated"),
                )
            })?
            .as_slice()
            .to_vec(),
    };
    let claimed = parse_time(text(claimed))
        .filter(|n| *n <= MAX_TICKETS as i64)
        .ok_or_else(|| named("claimed", claimed, &format!("0..={MAX_TICKETS}")))?;
    let release = match *release {
        b"-" => None,
        raw => Some(
            parse_time(text(raw))
                .filter(|n| *n > 0)
                .ok_or_else(|| named("release", raw, "- or a unix time in ms"))?,
        ),
    };
    if users.len() > MAX_TICKETS {
        return Err(format!(
            "allocation {}: at most {MAX_TICKETS} users, got {}",
            shown(name.as_bytes()),
            users.len()
        ));
    }
    let users = users
        .iter()
        .map(|raw| {
            std::str::from_utf8(raw)
                .ok()
                .filter(|u| valid_user(u))
                .ok_or_else(|| named("user", raw, "a valid user id"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Allocation {
        name,
        free,
        claimed,
        release,
        users,
    })
}

/// Decodes `<n>` / `<a>-<b>` values (at least one; `a <= b`).
pub fn decode_free(args: &[&[u8]]) -> Result<Vec<RangeInclusive<i64>>, String> {
    if args.is_empty() {
        return Err("FREE takes at least one number or range <a>-<b>".into());
    }
    args.iter()
        .map(|raw| {
            let t = text(raw);
            let (a, b) = t.split_once('-').unwrap_or((t, t));
            match (parse_number(a), parse_number(b)) {
                (Some(a), Some(b)) if a <= b => Ok(a..=b),
                _ => Err(format!(
                    "free number {} must be <n> or <a>-<b> with 1 <= a <= b <= {MAX_TOTAL}",
                    shown(raw)
                )),
            }
        })
        .collect()
}

/// A snapshot as the calls that restore it: `BEGIN`, `ORDERS` calls of
/// at most `chunk` tickets each (an order is never split; one larger than
/// `chunk` goes alone), one `ALLOCATION` per allocation (at most 1000
/// tickets each), `FREE` calls of at most `chunk` numbers, `COMMIT`.
pub fn steps<U: Clone>(
    begin: Begin,
    force: bool,
    orders: &[Order<U>],
    allocations: &[Allocation<U>],
    free: &[RangeInclusive<i64>],
    chunk: usize,
) -> Vec<Step<U>> {
    let chunk = chunk.max(1);
    let mut out = vec![Step::Begin { begin, force }];
    let mut batch: Vec<Order<U>> = Vec::new();
    let mut size = 0;
    for order in orders {
        let n = order.tickets.as_slice().len();
        if size + n > chunk && !batch.is_empty() {
            out.push(Step::Orders(std::mem::take(&mut batch)));
            size = 0;
        }
        batch.push(order.clone());
        size += n;
    }
    if !batch.is_empty() {
        out.push(Step::Orders(batch));
    }
    out.extend(allocations.iter().cloned().map(Step::Allocation));
    let mut spans: Vec<RangeInclusive<i64>> = Vec::new();
    let mut size = 0;
    for range in free {
        let (mut start, end) = (*range.start(), *range.end());
        while start <= end {
            let room = (chunk - size) as i64;
            let last = end.min(start.saturating_add(room - 1));
            spans.push(start..=last);
            size += (last - start + 1) as usize;
            start = last + 1;
            if size == chunk {
                out.push(Step::Free(std::mem::take(&mut spans)));
                size = 0;
            }
        }
    }
    if !spans.is_empty() {
        out.push(Step::Free(spans));
    }
    out.push(Step::Commit);
    out
}

/// The numbers `1..=minted` not in `taken` (ascending, distinct), as ranges.
pub fn free_spans(minted: i64, taken: &[i64]) -> Vec<RangeInclusive<i64>> {
    let mut out = Vec::new();
    let mut next = 1;
    for &t in taken.iter().filter(|t| (1..=minted).contains(*t)) {
        if t > next {
            out.push(next..=t - 1);
        }
        next = next.max(t + 1);
    }
    if next <= minted {
        out.push(next..=minted);
    }
    out
}

fn text(raw: &[u8]) -> &str {
    std::str::from_utf8(raw).unwrap_or("")
}

/// User input for an error message: quoted, escaped, cut short.
fn shown(raw: &[u8]) -> String {
    format!("\"{}\"", crate::model::shown(raw))
}

/// Most characters of a layout's error a restore's error repeats.
const LAYOUT_ERROR_CHARS: usize = 200;

fn wrong(what: &str, raw: &[u8], want: &str) -> String {
    format!("{what} {} must be {want}", shown(raw))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn any_begin() -> impl Strategy<Value = Begin> {
        (
            crate::record::tests::any_incarnation(),
            (1..=MAX_TOTAL).prop_flat_map(|total| (Just(total), 0..=total)),
            any::<bool>(),
            (0..i64::MAX / 2, 0..i64::MAX / 2),
            (0..=MAX_HOLD_MS, 1..=MAX_TICKETS as i64, 1..=MAX_HOLD_MS),
            any::<(u64, u64)>(),
            0..1000i64,
        )
            .prop_map(
                |(
                    incarnation,
                    (total, minted),
                    open,
                    (a, b),
                    (hold, limit, offer),
                    (ms, seq),
                    orders,
                )| {
                    let (opens_at, closes_at) = match (a, b) {
                        (a, b) if a > 0 && b > 0 && b <= a => (b, a + 1),
                        window => window,
                    };
                    Begin {
                        incarnation,
                        total,
                        minted,
                        status: if open { Status::Open } else { Status::Closed },
                        opens_at,
                        closes_at,
                        checkout: Checkout { hold, limit, offer },
                        orders: orders.min(minted),
                        from: StreamId::new(ms, seq),
                        layout: None,
                    }
                },
            )
    }

    pub(crate) fn any_order() -> impl Strategy<Value = Order> {
        let user = "[^\\p{Cc}]{1,16}".prop_filter("fits 64 bytes", |u| u.len() <= 64);
        (
            user,
            crate::record::tests::any_tickets(),
            prop_oneof![Just(0i64), 1..i64::MAX],
        )
            .prop_map(|(user, tickets, until)| Order {
                user,
                tickets,
                until,
            })
    }

    pub(crate) fn any_span() -> impl Strategy<Value = RangeInclusive<i64>> {
        (1..=MAX_TOTAL, 0..1000i64).prop_map(|(a, len)| a..=(a + len).min(MAX_TOTAL))
    }

    pub(crate) fn any_allocation() -> impl Strategy<Value = Allocation> {
        let user = "[^\\p{Cc}]{1,16}".prop_filter("fits 64 bytes", |u| u.len() <= 64);
        (
            "[A-Za-z0-9_.-]{1,32}",
            prop_oneof![
                Just(Vec::new()),
                crate::record::tests::any_tickets().prop_map(|t| t.as_slice().to_vec())
            ],
            0..=MAX_TICKETS as i64,
            prop_oneof![Just(None), (1..i64::MAX).prop_map(Some)],
            proptest::collection::vec(user, 0..5),
        )
            .prop_map(|(name, free, claimed, release, users)| Allocation {
                name,
                free,
                claimed,
                release,
                users,
            })
    }

    fn any_step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (any_begin(), any::<bool>()).prop_map(|(begin, force)| Step::Begin { begin, force }),
            proptest::collection::vec(any_order(), 1..10).prop_map(Step::Orders),
            any_allocation().prop_map(Step::Allocation),
            proptest::collection::vec(any_span(), 1..10).prop_map(Step::Free),
            Just(Step::Commit),
        ]
    }

    fn wire(step: &Step<&str>, event: &str) -> Vec<Vec<u8>> {
        step.args(event)
            .as_slice()
            .iter()
            .map(|v| v.to_string().into_bytes())
            .collect()
    }

    fn decoded(raw: &[Vec<u8>]) -> Result<(String, Step), String> {
        let args: Vec<&[u8]> = raw.iter().map(Vec::as_slice).collect();
        let (event, step) = decode(&args)?;
        let step = match step {
            Step::Begin { begin, force } => Step::Begin { begin, force },
            Step::Orders(orders) => Step::Orders(orders.iter().map(Order::owned).collect()),
            Step::Allocation(a) => Step::Allocation(a.owned()),
            Step::Free(free) => Step::Free(free),
            Step::After(after) => Step::After(after),
            Step::Commit => Step::Commit,
        };
        Ok((event.to_owned(), step))
    }

    fn borrowed(step: &Step) -> Step<&str> {
        match step {
            Step::Begin { begin, force } => Step::Begin {
                begin: begin.clone(),
                force: *force,
            },
            Step::Orders(orders) => Step::Orders(orders.iter().map(Order::borrowed).collect()),
            Step::Allocation(a) => Step::Allocation(a.borrowed()),
            Step::Free(free) => Step::Free(free.clone()),
            Step::After(after) => Step::After(after.clone()),
            Step::Commit => Step::Commit,
        }
    }

    fn strs(args: &[&str]) -> Vec<Vec<u8>> {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    /// The values of a valid BEGIN.
    const BEGIN: [&str; 11] = [
        "00000000000000ff",
        "100",
        "10",
        "open",
        "0",
        "0",
        "0",
        "1",
        "600000",
        "3",
        "17-2",
    ];

    /// `e <step> <BEGIN values...> <extra...>`.
    fn begin_args(step: &str, extra: &[&str]) -> Vec<Vec<u8>> {
        let mut args = vec!["e", step];
        args.extend(BEGIN);
        args.extend(extra);
        strs(&args)
    }

    fn a_begin() -> Begin {
        let args = begin_args("BEGIN", &[]);
        let values: Vec<&[u8]> = args[2..].iter().map(Vec::as_slice).collect();
        Begin::decode(&values).unwrap()
    }

    #[test]
    fn the_commands_on_the_wire() {
        let begin = begin_args("begin", &["force"]);
        let (event, step) = decoded(&begin).unwrap();
        assert_eq!(event, "e");
        let Step::Begin { begin: b, force } = &step else {
            panic!("{step:?}")
        };
        assert!(force);
        assert_eq!(
            (b.total, b.minted, b.orders, b.from),
            (100, 10, 3, StreamId::new(17, 2))
        );
        assert_eq!(
            wire(&borrowed(&step), "e")[1..],
            begin_args("BEGIN", &["FORCE"])[1..]
        );
        let orders = decoded(&strs(&["e", "ORDERS", "u1", "1,2", "0", "u2", "5", "99"])).unwrap();
        assert_eq!(
            orders.1,
            Step::Orders(vec![
                Order {
                    user: "u1".into(),
                    tickets: Tickets::Many(vec![1, 2]),
                    until: 0
                },
                Order {
                    user: "u2".into(),
                    tickets: Tickets::One(5),
                    until: 99
                },
            ])
        );
        let free = decoded(&strs(&["e", "free", "3", "6-9"])).unwrap();
        assert_eq!(free.1, Step::Free(vec![3..=3, 6..=9]));
        assert_eq!(wire(&borrowed(&free.1), "e")[2..], strs(&["3", "6-9"])[..]);
        assert_eq!(decoded(&strs(&["e", "COMMIT"])).unwrap().1, Step::Commit);
        let raw = strs(&["e", "allocation", "fan", "3,4", "2", "99", "u1", "u2"]);
        let allocation = decoded(&raw).unwrap().1;
        assert_eq!(
            allocation,
            Step::Allocation(Allocation {
                name: "fan".into(),
                free: vec![3, 4],
                claimed: 2,
                release: Some(99),
                users: vec!["u1".into(), "u2".into()],
            })
        );
        assert_eq!(wire(&borrowed(&allocation), "e")[2..], raw[2..]);
        let empty = strs(&["e", "ALLOCATION", "-", "-", "0", "-"]);
        let Step::Allocation(a) = decoded(&empty).unwrap().1 else {
            panic!("not an allocation")
        };
        assert_eq!((a.free.len(), a.release, a.users.len()), (0, None, 0));
    }

    #[test]
    fn every_bad_argument_is_named() {
        // A window 5..9, so that closes_at can be made not after opens_at.
        let begin = |i: usize, value: &str| {
            let mut args = begin_args("BEGIN", &[]);
            (args[6], args[7]) = (b"5".to_vec(), b"9".to_vec());
            args[i] = value.as_bytes().to_vec();
            args
        };
        let cases: Vec<(Vec<Vec<u8>>, &str)> = vec![
            (strs(&["e"]), "needs an event"),
            (strs(&["e{x}", "COMMIT"]), "invalid event id"),
            (strs(&["e", "LATER"]), "unknown step \"LATER\""),
            (strs(&["e", "COMMIT", "x"]), "COMMIT takes no arguments"),
            (strs(&["e", "BEGIN", "1"]), "BEGIN takes 11 values"),
            (begin(2, "00000000000000FF"), "incarnation"),
            (begin(3, "0"), "total \"0\""),
            (begin(4, "101"), "minted \"101\" must be 0..=100"),
            (
                begin(5, "restoring"),
                "status \"restoring\" must be open or closed",
            ),
            (begin(6, "-1"), "opens_at"),
            (begin(7, "5"), "closes_at (5) must be after opens_at (5)"),
            (begin(8, "604800001"), "hold"),
            (begin(9, "0"), "limit"),
            (begin(10, "0"), "offer"),
            (begin(11, "11"), "orders \"11\" must be 0..=10"),
            (begin(12, "x"), "from-id"),
            (
                {
                    let mut a = begin(0, "e");
                    a.push(b"NOW".to_vec());
                    a
                },
                "unknown option \"NOW\"",
            ),
            (strs(&["e", "ORDERS"]), "triples, got 0"),
            (strs(&["e", "ORDERS", "u", "1"]), "triples, got 2"),
            (
                strs(&["e", "ORDERS", "u", "1", "0", "a\nb", "2", "0"]),
                "order 2: invalid user id \"a\\nb\"",
            ),
            (
                strs(&["e", "ORDERS", "u", "2,1", "0"]),
                "order 1 (user \"u\"): tickets \"2,1\"",
            ),
            (
                strs(&["e", "ORDERS", "u", "1,1", "0"]),
                "ascending distinct",
            ),
            (strs(&["e", "ORDERS", "u", "0", "0"]), "tickets \"0\""),
            (strs(&["e", "ORDERS", "u", "1", "-5"]), "until \"-5\""),
            (
                strs(&["e", "ALLOCATION", "a", "-", "0"]),
                "ALLOCATION takes",
            ),
            (
                strs(&["e", "ALLOCATION", "a b", "-", "0", "-"]),
                "allocation name \"a b\"",
            ),
            (
                strs(&["e", "ALLOCATION", "a", "2,1", "0", "-"]),
                "allocation \"a\": free tickets \"2,1\"",
            ),
            (
                strs(&["e", "ALLOCATION", "a", "1", "1001", "-"]),
                "claimed \"1001\" must be 0..=1000",
            ),
            (
                strs(&["e", "ALLOCATION", "a", "1", "0", "0"]),
                "release \"0\"",
            ),
            (
                strs(&["e", "ALLOCATION", "a", "1", "0", "-", "u\r"]),
                "user \"u\\r\"",
            ),
            (strs(&["e", "FREE"]), "at least one"),
            (strs(&["e", "FREE", "5-3"]), "free number \"5-3\""),
            (strs(&["e", "FREE", "0"]), "free number \"0\""),
            (strs(&["e", "FREE", "1-"]), "free number \"1-\""),
        ];
        for (args, want) in cases {
            let err = decoded(&args).unwrap_err();
            assert!(err.contains(want), "{args:?}: {err}");
        }
        let many = vec!["1"; MAX_TICKETS + 1].join(",");
        let err = decoded(&strs(&["e", "ORDERS", "u", &many, "0"])).unwrap_err();
        assert!(err.contains("ascending distinct"), "{err}");
    }

    #[test]
    fn a_seated_begin_carries_its_layout_in_stored_form() {
        let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":4}]}]}"#;
        let mut args = begin_args("BEGIN", &["SEATS", layout, "FORCE"]);
        (args[3], args[4]) = (b"4".to_vec(), b"4".to_vec());
        let (_, step) = decoded(&args).unwrap();
        let Step::Begin { begin, force } = &step else {
            panic!("{step:?}")
        };
        let stored = Layout::parse(layout).unwrap().to_json();
        assert_eq!(
            (begin.layout.as_deref(), *force),
            (Some(stored.as_str()), true)
        );
        // The wire form decodes to the same step (FORCE before SEATS too).
        assert_eq!(
            decoded(&wire(&borrowed(&step), "e")),
            Ok(("e".into(), step))
        );
        let wrong = |total: &str, minted: &str, json: &str| {
            let mut a = begin_args("BEGIN", &["SEATS", json]);
            (a[3], a[4]) = (total.as_bytes().to_vec(), minted.as_bytes().to_vec());
            decoded(&a).unwrap_err()
        };
        assert!(wrong("5", "5", layout).contains("invalid layout"));
        assert!(wrong("4", "3", layout).contains("minted (3) must be its total (4)"));
        assert!(wrong("4", "4", r#"{"sections":[],"x":1}"#).contains("invalid layout"));
        let mut a = begin_args("BEGIN", &["SEATS"]);
        (a[3], a[4]) = (b"4".to_vec(), b"4".to_vec());
        assert!(decoded(&a).unwrap_err().contains("SEATS needs a layout"));
    }

    /// Found by the `restore` fuzz target: a seated BEGIN's error
    /// repeated the layout's error, which quotes the JSON (an unknown
    /// field named `\u{85}sections`), control characters and all.
    #[test]
    fn a_layout_error_is_repeated_escaped_and_cut() {
        // JSON escapes: the field name serde quotes holds U+0085 and CRs.
        let hostile = format!(r#"{{"\u0085{}":[]}}"#, r"\r".repeat(5000));
        let mut args = begin_args("BEGIN", &["SEATS", &hostile]);
        (args[3], args[4]) = (b"4".to_vec(), b"4".to_vec());
        let err = decoded(&args).unwrap_err();
        // The field's path, then serde's words: both quote the name.
        assert!(err.starts_with("invalid layout: \\u{85}\\r"), "{err}");
        assert!(
            err.len() < 1000 && !err.chars().any(char::is_control),
            "{err}"
        );
    }

    #[test]
    fn steps_cut_a_snapshot_into_chunks() {
        let begin = a_begin();
        let order = |user: &str, tickets: Vec<i64>| Order {
            user: user.to_string(),
            tickets: Tickets::from_sorted(tickets),
            until: 0,
        };
        let orders = [
            order("a", vec![1, 2, 3]),
            order("b", vec![4]),
            order("c", vec![5, 6]),
        ];
        let free = free_spans(20, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(free, [7..=20]);
        let fan = Allocation {
            name: "fan".to_string(),
            free: vec![21, 22, 23],
            claimed: 1,
            release: None,
            users: vec!["b".to_string()],
        };
        let steps = steps(begin, false, &orders, &[fan], &free, 4);
        let sizes: Vec<usize> = steps.iter().map(Step::tickets).collect();
        assert_eq!(sizes, [0, 4, 2, 3, 4, 4, 4, 2, 0]);
        assert!(matches!(&steps[3], Step::Allocation(a) if a.name == "fan"));
        assert!(matches!(steps.last(), Some(Step::Commit)));
        assert_eq!(free_spans(5, &[2, 4]), [1..=1, 3..=3, 5..=5]);
        assert_eq!(free_spans(3, &[1, 2, 3]), Vec::<RangeInclusive<i64>>::new());
    }

    proptest! {
        #[test]
        fn every_step_round_trips(step in any_step(), event in "[A-Za-z0-9_.:-]{1,64}") {
            let raw = wire(&borrowed(&step), &event);
            prop_assert_eq!(decoded(&raw), Ok((event, step)));
        }

        #[test]
        fn decoding_never_panics(args in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..8), 0..16)) {
            if let Err(e) = decoded(&args) {
                prop_assert!(!e.is_empty());
                prop_assert!(!e.bytes().any(|b| b < 0x20), "{}", e);
            }
        }

        /// Every step word with values that are nearly right.
        #[test]
        fn decoding_known_steps_never_panics(
            step in prop_oneof![Just("BEGIN"), Just("orders"), Just("ALLOCATION"), Just("FREE"), Just("COMMIT")],
            rest in proptest::collection::vec(
                prop_oneof![Just("u".to_string()), Just("0".to_string()), Just("00000000000000ff".to_string()),
                    Just("open".to_string()), Just("3-2".to_string()), Just("1,2".to_string()), Just("FORCE".to_string()),
                    "[0-9a-z,-]{0,8}"],
                0..16,
            ),
        ) {
            let mut raw = vec![b"e".to_vec(), step.as_bytes().to_vec()];
            raw.extend(rest.into_iter().map(String::into_bytes));
            match decoded(&raw) {
                Ok((event, step)) => prop_assert_eq!(decoded(&wire(&borrowed(&step), &event)), Ok((event, step))),
                Err(e) => prop_assert!(!e.is_empty()),
            }
        }

        #[test]
        fn steps_keep_every_ticket_and_respect_the_chunk(
            orders in proptest::collection::vec(any_order(), 0..30),
            free in proptest::collection::vec(any_span(), 0..10),
            chunk in 1usize..50,
        ) {
            let begin = a_begin();
            let steps = steps(begin, true, &orders, &[], &free, chunk);
            let total: usize = steps.iter().map(Step::tickets).sum();
            let want: usize = orders.iter().map(|o| o.tickets.as_slice().len()).sum::<usize>()
                + free.iter().map(|r| (r.end() - r.start() + 1) as usize).sum::<usize>();
            prop_assert_eq!(total, want);
            for step in &steps {
                if let Step::Orders(o) = step {
                    prop_assert!(step.tickets() <= chunk || o.len() == 1);
                }
                if let Step::Free(_) = step {
                    prop_assert!(step.tickets() <= chunk);
                }
            }
        }
    }
}
