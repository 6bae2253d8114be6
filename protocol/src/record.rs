//! The stream record appended to `ticket:{E}:log` for every state change
//! (DESIGN.md "Stream record"), encoded by the module and decoded by the
//! sidecar:
//!
//! `op <op> event <E> [user <u> (ticket <n> | tickets <n>,<n>,...) [until <ms>]] [total <n> opens_at <ms> closes_at <ms> [hold <ms> limit <n>] [offer <ms>] incarnation <hex>] at <unix-ms>`
//!
//! Ops: `init`, `open`, `close`, `drop` (the event's keys were deleted, the
//! log kept as its trace), `restore` (`incarnation <hex> status <s> from
//! <id>`: a rebuild installed a snapshot); and, with a user and tickets: `claim`
//! (sold at once), `hold` and `offer` (held until `until`), `confirm` (a
//! held order became sold), `expire` (a hold ran out), `cancel`. One ticket
//! is written as `ticket <n>` (all that release 0.1 wrote), several as
//! `tickets` with the numbers ascending and comma-separated.
//!
//! The field order is part of the contract. Decoding never panics: anything
//! that does not decode becomes a [`Malformed`] value carrying a reason and a
//! printable rendering of the raw fields, which the sidecar writes to
//! `ticket_conflict` so a bad entry never stalls the stream. Unknown extra
//! fields are ignored (forward compatibility); every format an earlier
//! release wrote keeps decoding (the tests pin them).

use std::collections::HashMap;

use crate::keys::{valid_user, MAX_TOTAL};
use crate::StreamId;

/// Most tickets one record carries (a user's `LIMIT` is at most this).
pub const MAX_TICKETS: usize = 1000;

/// Longest hold (and offer), in ms: 7 days.
pub const MAX_HOLD_MS: i64 = 7 * 24 * 3600 * 1000;

/// Which incarnation of an event a record or meta hash belongs to: a random
/// non-zero number `TICKET.INIT` draws, written as 16 lowercase hex digits.
/// A re-created event gets a new one, so the sidecar can tell it apart from
/// the event it replaced (events made before release 0.3 have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Incarnation(pub u64);

impl Incarnation {
    /// Exactly 16 lowercase hex digits, not all zero.
    pub fn parse(text: &str) -> Option<Incarnation> {
        let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        if text.len() != 16 || !text.bytes().all(hex) {
            return None;
        }
        u64::from_str_radix(text, 16)
            .ok()
            .filter(|n| *n != 0)
            .map(Incarnation)
    }
}

impl std::fmt::Display for Incarnation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Whether an event accepts claims (subject to its window): what a restore
/// installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "open" => Some(Status::Open),
            "closed" => Some(Status::Closed),
            _ => None,
        }
    }
}

/// An event's checkout settings, set by its init.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkout {
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
    /// How long an offer of the waiting list is held, in ms.
    pub offer: i64,
}

impl Default for Checkout {
    fn default() -> Checkout {
        Checkout {
            hold: 0,
            limit: 1,
            offer: default_offer(0),
        }
    }
}

impl Checkout {
    /// Whether `hold` and `limit` are written (they differ from `0 1`, or
    /// `offer` is written) and whether `offer` is (it differs from its
    /// default): the same rule for the init record and the init effect.
    pub fn written(&self) -> (bool, bool) {
        let offer = self.offer != default_offer(self.hold);
        ((self.hold, self.limit) != (0, 1) || offer, offer)
    }
}

/// An offer's default hold: the event's `hold`, or 10 minutes when a claim
/// is a final sale (`hold` = 0).
pub fn default_offer(hold: i64) -> i64 {
    match hold {
        0 => 600_000,
        hold => hold,
    }
}

/// The ticket numbers of one change: ascending, distinct, `1..=MAX_TICKETS`
/// of them. One ticket, the common case, needs no allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tickets {
    One(i64),
    /// Two or more.
    Many(Vec<i64>),
}

impl Tickets {
    /// From ascending numbers (one number becomes [`Tickets::One`]).
    pub fn from_sorted(mut numbers: Vec<i64>) -> Tickets {
        match numbers.len() {
            1 => Tickets::One(numbers.remove(0)),
            _ => Tickets::Many(numbers),
        }
    }

    pub fn as_slice(&self) -> &[i64] {
        match self {
            Tickets::One(n) => std::slice::from_ref(n),
            Tickets::Many(v) => v,
        }
    }

    /// The lowest number (what a single-ticket reply shows).
    pub fn lowest(&self) -> i64 {
        self.as_slice().first().copied().unwrap_or(0)
    }

    /// The stream field and value: `ticket <n>` or `tickets <n>,<n>,...`.
    fn field(&self) -> (&'static str, Value<'_>) {
        match self {
            Tickets::One(_) => ("ticket", self.value()),
            Tickets::Many(_) => ("tickets", self.value()),
        }
    }

    /// The numbers as one value: `<n>` or `<n>,<n>,...`.
    pub fn value(&self) -> Value<'_> {
        match self {
            Tickets::One(n) => Value::Number(*n),
            Tickets::Many(v) => Value::List(v),
        }
    }
}

/// What happened. `U` is the user id: `&str` when encoding, `String` decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op<U = String> {
    /// Event created with `total` tickets; times in unix ms, 0 = no bound;
    /// `incarnation` is `None` in records written before release 0.3.
    Init {
        total: i64,
        opens_at: i64,
        closes_at: i64,
        checkout: Checkout,
        incarnation: Option<Incarnation>,
    },
    /// `user` won `tickets`, sold at once.
    Claim { user: U, tickets: Tickets },
    /// `user` holds `tickets` until `until` (unix ms) while paying.
    Hold {
        user: U,
        tickets: Tickets,
        until: i64,
    },
    /// Returned `tickets` were offered to `user`, the head of the waiting
    /// list, held until `until`.
    Offer {
        user: U,
        tickets: Tickets,
        until: i64,
    },
    /// `user`'s held `tickets` are sold.
    Confirm { user: U, tickets: Tickets },
    /// `user`'s hold on `tickets` ran out; they are free again.
    Expire { user: U, tickets: Tickets },
    /// `user` gave `tickets` back (held or sold).
    Cancel { user: U, tickets: Tickets },
    /// Event (re)opened.
    Open,
    /// Event closed.
    Close,
    /// The event's keys were deleted (`TICKET.DROP`); the log stays as the
    /// trace of it.
    Drop,
    /// A rebuild installed a snapshot of incarnation `incarnation` taken
    /// from MySQL at offset `from` (every earlier entry is replaced by it),
    /// with status `status`.
    Restore {
        incarnation: Incarnation,
        status: Status,
        from: StreamId,
    },
}

impl<U> Op<U> {
    /// The `op` field's value (also a metrics label).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Init { .. } => "init",
            Op::Claim { .. } => "claim",
            Op::Hold { .. } => "hold",
            Op::Offer { .. } => "offer",
            Op::Confirm { .. } => "confirm",
            Op::Expire { .. } => "expire",
            Op::Cancel { .. } => "cancel",
            Op::Open => "open",
            Op::Close => "close",
            Op::Drop => "drop",
            Op::Restore { .. } => "restore",
        }
    }

    /// The user, tickets and deadline (0 = none) of an op about a user's
    /// tickets.
    pub fn order(&self) -> Option<(&U, &Tickets, i64)> {
        match self {
            Op::Claim { user, tickets }
            | Op::Confirm { user, tickets }
            | Op::Expire { user, tickets }
            | Op::Cancel { user, tickets } => Some((user, tickets, 0)),
            Op::Hold {
                user,
                tickets,
                until,
            }
            | Op::Offer {
                user,
                tickets,
                until,
            } => Some((user, tickets, *until)),
            Op::Init { .. } | Op::Open | Op::Close | Op::Drop | Op::Restore { .. } => None,
        }
    }
}

/// One log entry: a change and when Redis logged it (unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<U = String> {
    pub op: Op<U>,
    pub at: i64,
}

/// A field value as it goes over the wire: borrowed text or a number, so
/// the module's hot path formats nothing it does not send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Text(&'a str),
    Number(i64),
    Id(StreamId),
    /// Numbers, written comma-separated.
    List(&'a [i64]),
    /// An incarnation: 16 lowercase hex digits.
    Hex(Incarnation),
    /// An inclusive range of numbers: `<a>-<b>`, or `<a>` when `a == b`.
    Range(i64, i64),
}

impl std::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(s) => f.write_str(s),
            Value::Number(n) => write!(f, "{n}"),
            Value::Id(id) => write!(f, "{id}"),
            Value::Hex(incarnation) => write!(f, "{incarnation}"),
            Value::Range(a, b) if a == b => write!(f, "{a}"),
            Value::Range(a, b) => write!(f, "{a}-{b}"),
            Value::List(numbers) => {
                for (i, n) in numbers.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}")?;
                }
                Ok(())
            }
        }
    }
}

impl<U> Op<U> {
    /// The same op with its user id mapped by `f`.
    pub fn map_user<'a, V>(&'a self, f: impl FnOnce(&'a U) -> V) -> Op<V> {
        match self {
            Op::Init {
                total,
                opens_at,
                closes_at,
                checkout,
                incarnation,
            } => Op::Init {
                total: *total,
                opens_at: *opens_at,
                closes_at: *closes_at,
                checkout: *checkout,
                incarnation: *incarnation,
            },
            Op::Claim { user, tickets } => Op::Claim {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Hold {
                user,
                tickets,
                until,
            } => Op::Hold {
                user: f(user),
                tickets: tickets.clone(),
                until: *until,
            },
            Op::Offer {
                user,
                tickets,
                until,
            } => Op::Offer {
                user: f(user),
                tickets: tickets.clone(),
                until: *until,
            },
            Op::Confirm { user, tickets } => Op::Confirm {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Expire { user, tickets } => Op::Expire {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Cancel { user, tickets } => Op::Cancel {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Open => Op::Open,
            Op::Close => Op::Close,
            Op::Drop => Op::Drop,
            Op::Restore {
                incarnation,
                status,
                from,
            } => Op::Restore {
                incarnation: *incarnation,
                status: *status,
                from: *from,
            },
        }
    }
}

impl Record<&str> {
    /// The record with its user id copied.
    pub fn owned(&self) -> Record {
        Record {
            op: self.op.map_user(|u| u.to_string()),
            at: self.at,
        }
    }
}

impl<U: AsRef<str>> Record<U> {
    /// The record with the user borrowed.
    pub fn borrowed(&self) -> Record<&str> {
        Record {
            op: self.op.map_user(U::as_ref),
            at: self.at,
        }
    }

    /// The stream fields of the record of `event`, in contract order.
    pub fn fields<'a>(
        &'a self,
        event: &'a str,
    ) -> impl Iterator<Item = (&'static str, Value<'a>)> + 'a {
        let head = [
            ("op", Value::Text(self.op.name())),
            ("event", Value::Text(event)),
        ];
        let detail: [Option<(&'static str, Value<'a>)>; 7] = match &self.op {
            Op::Init {
                total,
                opens_at,
                closes_at,
                checkout,
                incarnation,
            } => {
                let (settings, offer) = checkout.written();
                [
                    Some(("total", Value::Number(*total))),
                    Some(("opens_at", Value::Number(*opens_at))),
                    Some(("closes_at", Value::Number(*closes_at))),
                    settings.then_some(("hold", Value::Number(checkout.hold))),
                    settings.then_some(("limit", Value::Number(checkout.limit))),
                    offer.then_some(("offer", Value::Number(checkout.offer))),
                    incarnation.map(|i| ("incarnation", Value::Hex(i))),
                ]
            }
            Op::Restore {
                incarnation,
                status,
                from,
            } => [
                Some(("incarnation", Value::Hex(*incarnation))),
                Some(("status", Value::Text(status.as_str()))),
                Some(("from", Value::Id(*from))),
                None,
                None,
                None,
                None,
            ],
            op => match op.order() {
                Some((user, tickets, until)) => [
                    Some(("user", Value::Text(user.as_ref()))),
                    Some(tickets.field()),
                    (until > 0).then_some(("until", Value::Number(until))),
                    None,
                    None,
                    None,
                    None,
                ],
                None => [None; 7],
            },
        };
        head.into_iter()
            .chain(detail.into_iter().flatten())
            .chain([("at", Value::Number(self.at))])
    }
}

/// An entry that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Short reason, e.g. `missing field 'op'`.
    pub reason: String,
    /// The user id, when the entry carried a valid one.
    pub user: Option<String>,
    /// The ticket number, when the entry carried a valid one.
    pub ticket: Option<i64>,
    /// `name=value` rendering of all fields (lossy UTF-8, truncated).
    pub raw: String,
}

/// Renders raw fields as `name=value name=value`, at most `limit` chars,
/// control characters dropped.
pub fn render_raw(fields: &[(Vec<u8>, Vec<u8>)], limit: usize) -> String {
    let mut out = String::new();
    for (k, v) in fields {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&String::from_utf8_lossy(k));
        out.push('=');
        out.push_str(&String::from_utf8_lossy(v));
    }
    out.chars()
        .filter(|c| !c.is_control())
        .take(limit)
        .collect()
}

/// The fields of one entry by name, with what every op needs parsed.
struct Fields<'f> {
    map: HashMap<&'f [u8], &'f [u8]>,
    raw: &'f [(Vec<u8>, Vec<u8>)],
    user: Option<String>,
    ticket: Option<i64>,
}

impl<'f> Fields<'f> {
    fn new(raw: &'f [(Vec<u8>, Vec<u8>)]) -> Result<Fields<'f>, Malformed> {
        let mut map = HashMap::new();
        let mut duplicate = None;
        for (k, v) in raw {
            if map.insert(k.as_slice(), v.as_slice()).is_some() {
                duplicate = Some(String::from_utf8_lossy(k).into_owned());
            }
        }
        let mut fields = Fields {
            map,
            raw,
            user: None,
            ticket: None,
        };
        fields.user = fields
            .text("user")
            .filter(|u| valid_user(u))
            .map(str::to_owned);
        fields.ticket = match fields.text("ticket") {
            Some(t) => parse_number(t),
            None => fields
                .text("tickets")
                .and_then(parse_tickets)
                .map(|t| t.lowest()),
        };
        match duplicate {
            Some(name) => Err(fields.fail(format!("duplicate field '{name}'"))),
            None => Ok(fields),
        }
    }

    fn text(&self, name: &str) -> Option<&'f str> {
        self.map
            .get(name.as_bytes())
            .and_then(|v| std::str::from_utf8(v).ok())
    }

    fn has(&self, name: &str) -> bool {
        self.map.contains_key(name.as_bytes())
    }

    fn fail(&self, reason: String) -> Malformed {
        Malformed {
            reason,
            user: self.user.clone(),
            ticket: self.ticket,
            raw: render_raw(self.raw, 1000),
        }
    }

    /// A required unix-ms field.
    fn time(&self, name: &str) -> Result<i64, Malformed> {
        match self.text(name) {
            Some(t) => parse_time(t)
                .ok_or_else(|| self.fail(format!("field '{name}' is not a unix-ms integer"))),
            None => Err(self.fail(format!("missing field '{name}'"))),
        }
    }

    /// The `user` and `ticket`/`tickets` of an op about a user's tickets.
    fn user_tickets(&self, what: &str) -> Result<(String, Tickets), Malformed> {
        let user = match (self.has("user"), &self.user) {
            (false, _) => return Err(self.fail(format!("{what}: missing field 'user'"))),
            (true, None) => return Err(self.fail(format!("{what}: invalid user id"))),
            (true, Some(u)) => u.clone(),
        };
        let tickets = match (self.has("ticket"), self.has("tickets")) {
            (true, true) => return Err(self.fail(format!("{what}: both 'ticket' and 'tickets'"))),
            (false, false) => return Err(self.fail(format!("{what}: missing field 'ticket'"))),
            (true, false) => self.ticket.map(Tickets::One),
            (false, true) => self.text("tickets").and_then(parse_tickets),
        };
        match tickets {
            Some(tickets) => Ok((user, tickets)),
            None => Err(self.fail(format!("{what}: invalid ticket number"))),
        }
    }

    /// The user, tickets and `until` of a hold or an offer.
    fn held(&self, what: &str) -> Result<(String, Tickets, i64), Malformed> {
        let (user, tickets) = self.user_tickets(what)?;
        let until = self
            .text("until")
            .and_then(parse_time)
            .filter(|until| *until > 0)
            .ok_or_else(|| self.fail(format!("{what}: missing or invalid 'until'")))?;
        Ok((user, tickets, until))
    }

    fn init(&self) -> Result<Op, Malformed> {
        let total = self
            .text("total")
            .and_then(parse_number)
            .ok_or_else(|| self.fail("init: missing or invalid 'total'".into()))?;
        // Absent window fields mean "no bound".
        let bound = |name: &str| match self.has(name) {
            false => Ok(0),
            true => self
                .text(name)
                .and_then(parse_time)
                .ok_or_else(|| self.fail(format!("init: invalid '{name}'"))),
        };
        // Absent checkout fields mean the defaults (records before 0.3
        // carried none), an absent incarnation an event made before 0.3.
        let setting =
            |name: &str, default: i64, parse: fn(&str) -> Option<i64>| match self.has(name) {
                false => Ok(default),
                true => self
                    .text(name)
                    .and_then(parse)
                    .ok_or_else(|| self.fail(format!("init: invalid '{name}'"))),
            };
        let hold = setting("hold", 0, |t| parse_time(t).filter(|h| *h <= MAX_HOLD_MS))?;
        let checkout = Checkout {
            hold,
            limit: setting("limit", 1, |t| {
                parse_number(t).filter(|l| *l <= MAX_TICKETS as i64)
            })?,
            offer: setting("offer", default_offer(hold), |t| {
                parse_number(t).filter(|o| *o <= MAX_HOLD_MS)
            })?,
        };
        let incarnation = match self.has("incarnation") {
            false => None,
            true => Some(self.incarnation("init")?),
        };
        Ok(Op::Init {
            total,
            opens_at: bound("opens_at")?,
            closes_at: bound("closes_at")?,
            checkout,
            incarnation,
        })
    }

    fn incarnation(&self, what: &str) -> Result<Incarnation, Malformed> {
        self.text("incarnation")
            .and_then(Incarnation::parse)
            .ok_or_else(|| self.fail(format!("{what}: missing or invalid 'incarnation'")))
    }

    fn restore(&self) -> Result<Op, Malformed> {
        let incarnation = self.incarnation("restore")?;
        let status = self
            .text("status")
            .and_then(Status::parse)
            .ok_or_else(|| self.fail("restore: missing or invalid 'status'".into()))?;
        let from = self
            .text("from")
            .and_then(StreamId::parse)
            .ok_or_else(|| self.fail("restore: missing or invalid 'from'".into()))?;
        Ok(Op::Restore {
            incarnation,
            status,
            from,
        })
    }
}

/// Decodes the fields of one entry of `ticket:{event}:log`.
pub fn decode(event: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<Record, Malformed> {
    let fields = Fields::new(raw)?;
    let Some(op) = fields.map.get(b"op".as_slice()).copied() else {
        return Err(fields.fail("missing field 'op'".into()));
    };
    match fields.text("event") {
        Some(e) if e == event => {}
        Some(_) => return Err(fields.fail("field 'event' does not match the key".into())),
        None => return Err(fields.fail("missing field 'event'".into())),
    }
    let at = fields.time("at")?;
    let op = match op {
        b"claim" => {
            let (user, tickets) = fields.user_tickets("claim")?;
            Op::Claim { user, tickets }
        }
        b"hold" => {
            let (user, tickets, until) = fields.held("hold")?;
            Op::Hold {
                user,
                tickets,
                until,
            }
        }
        b"offer" => {
            let (user, tickets, until) = fields.held("offer")?;
            Op::Offer {
                user,
                tickets,
                until,
            }
        }
        b"confirm" => {
            let (user, tickets) = fields.user_tickets("confirm")?;
            Op::Confirm { user, tickets }
        }
        b"expire" => {
            let (user, tickets) = fields.user_tickets("expire")?;
            Op::Expire { user, tickets }
        }
        b"cancel" => {
            let (user, tickets) = fields.user_tickets("cancel")?;
            Op::Cancel { user, tickets }
        }
        b"init" => fields.init()?,
        b"open" => Op::Open,
        b"close" => Op::Close,
        b"drop" => Op::Drop,
        b"restore" => fields.restore()?,
        other => {
            let shown: String = String::from_utf8_lossy(other).chars().take(32).collect();
            return Err(fields.fail(format!("unknown op '{shown}'")));
        }
    };
    Ok(Record { op, at })
}

/// A unix time in ms: plain decimal digits, fits an i64.
pub fn parse_time(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A ticket number or total: decimal `1..=2147483647`.
pub fn parse_number(text: &str) -> Option<i64> {
    parse_time(text).filter(|n| (1..=MAX_TOTAL).contains(n))
}

/// `<n>` or `<n>,<n>,...`: 1 to [`MAX_TICKETS`] ticket numbers, ascending.
pub fn parse_tickets(text: &str) -> Option<Tickets> {
    let mut numbers = Vec::new();
    for part in text.split(',') {
        let n = parse_number(part)?;
        if numbers.last().is_some_and(|last| *last >= n) || numbers.len() == MAX_TICKETS {
            return None;
        }
        numbers.push(n);
    }
    Some(Tickets::from_sorted(numbers))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f(pairs: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    fn encoded(r: &Record<&str>, event: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
        r.fields(event)
            .map(|(k, v)| (k.as_bytes().to_vec(), v.to_string().into_bytes()))
            .collect()
    }

    fn flat(r: &Record<&str>) -> Vec<String> {
        r.fields("e1")
            .flat_map(|(k, v)| [k.to_owned(), v.to_string()])
            .collect()
    }

    #[test]
    fn fields_in_contract_order() {
        let claim = Record {
            op: Op::Claim {
                user: "u1",
                tickets: Tickets::One(7),
            },
            at: 1000,
        };
        assert_eq!(
            flat(&claim),
            ["op", "claim", "event", "e1", "user", "u1", "ticket", "7", "at", "1000"]
        );
        let init = Record {
            op: Op::<&str>::Init {
                total: 100,
                opens_at: 5,
                closes_at: 9,
                checkout: Checkout::default(),
                incarnation: None,
            },
            at: 1,
        };
        assert_eq!(
            flat(&init),
            [
                "op",
                "init",
                "event",
                "e1",
                "total",
                "100",
                "opens_at",
                "5",
                "closes_at",
                "9",
                "at",
                "1"
            ]
        );
        let close = Record {
            op: Op::<&str>::Close,
            at: 3,
        };
        assert_eq!(flat(&close), ["op", "close", "event", "e1", "at", "3"]);
    }

    /// Entries exactly as release 0.1 of the module wrote them keep decoding.
    #[test]
    fn decodes_the_0_1_format() {
        let claim = f(&[
            ("op", "claim"),
            ("event", "e1"),
            ("user", "u1"),
            ("ticket", "3"),
            ("at", "17"),
        ]);
        let want = Op::Claim {
            user: "u1".into(),
            tickets: Tickets::One(3),
        };
        assert_eq!(decode("e1", &claim).unwrap(), Record { op: want, at: 17 });
        let init = f(&[
            ("op", "init"),
            ("event", "e1"),
            ("total", "100"),
            ("opens_at", "5"),
            ("closes_at", "0"),
            ("at", "1"),
        ]);
        let want = Op::Init {
            total: 100,
            opens_at: 5,
            closes_at: 0,
            checkout: Checkout::default(),
            incarnation: None,
        };
        assert_eq!(decode("e1", &init).unwrap().op, want);
        for (op, want) in [("open", Op::Open), ("close", Op::Close)] {
            let r = decode("e1", &f(&[("op", op), ("event", "e1"), ("at", "1")])).unwrap();
            assert_eq!(r.op, want);
        }
    }

    /// The init record of release 0.3: checkout settings when they are not
    /// the defaults, and always the incarnation; drop and restore records.
    #[test]
    fn the_0_3_init_drop_and_restore_records() {
        let init = |checkout| Record {
            op: Op::<&str>::Init {
                total: 10,
                opens_at: 0,
                closes_at: 0,
                checkout,
                incarnation: Some(Incarnation(0xab)),
            },
            at: 2,
        };
        let plain = flat(&init(Checkout::default()));
        assert_eq!(plain[10..], ["incarnation", "00000000000000ab", "at", "2"]);
        let held = init(Checkout {
            hold: 60_000,
            limit: 4,
            offer: 60_000,
        });
        assert_eq!(
            flat(&held)[10..],
            [
                "hold",
                "60000",
                "limit",
                "4",
                "incarnation",
                "00000000000000ab",
                "at",
                "2"
            ]
        );
        let offered = init(Checkout {
            hold: 0,
            limit: 1,
            offer: 5_000,
        });
        assert_eq!(
            flat(&offered)[10..16],
            ["hold", "0", "limit", "1", "offer", "5000"]
        );
        for r in [held, offered] {
            assert_eq!(decode("e1", &encoded(&r, "e1")), Ok(r.owned()));
        }
        let drop = f(&[("op", "drop"), ("event", "e1"), ("at", "9")]);
        assert_eq!(decode("e1", &drop).unwrap().op, Op::Drop);
        let restore = f(&[
            ("op", "restore"),
            ("event", "e1"),
            ("incarnation", "0123456789abcdef"),
            ("status", "closed"),
            ("from", "17-3"),
            ("at", "20"),
        ]);
        let want = Op::Restore {
            incarnation: Incarnation(0x0123_4567_89ab_cdef),
            status: Status::Closed,
            from: StreamId::new(17, 3),
        };
        assert_eq!(decode("e1", &restore).unwrap().op, want);
        for (field, value, why) in [
            ("incarnation", "0123456789ABCDEF", "incarnation"),
            ("incarnation", "0000000000000000", "incarnation"),
            ("status", "restoring", "status"),
            ("from", "17-x", "from"),
        ] {
            let mut raw = restore.clone();
            for (k, v) in raw.iter_mut() {
                if k == field.as_bytes() {
                    *v = value.as_bytes().to_vec();
                }
            }
            let err = decode("e1", &raw).unwrap_err();
            assert!(err.reason.contains(why), "{field}={value}: {}", err.reason);
        }
    }

    #[test]
    fn incarnations_are_16_lowercase_hex_digits() {
        assert_eq!(Incarnation(1).to_string(), "0000000000000001");
        assert_eq!(Incarnation(u64::MAX).to_string(), "ffffffffffffffff");
        assert_eq!(
            Incarnation::parse("ffffffffffffffff"),
            Some(Incarnation(u64::MAX))
        );
        for bad in [
            "",
            "1",
            "0000000000000000",
            "+000000000000001",
            "000000000000000g",
            "00000000000000001",
        ] {
            assert_eq!(Incarnation::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn rejects_bad_entries_with_reasons() {
        let claim = |user: &str, ticket: &str| {
            vec![
                ("op", "claim"),
                ("event", "e1"),
                ("user", user),
                ("ticket", ticket),
                ("at", "1"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect::<Vec<_>>()
        };
        let mut cases: Vec<(Vec<(String, String)>, &str)> = vec![
            (claim("u", "0"), "invalid ticket"),
            (claim("u", "x"), "invalid ticket"),
            (claim("a\nb", "1"), "invalid user"),
        ];
        let own = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<Vec<_>>()
        };
        cases.extend([
            (own(&[("event", "e1"), ("at", "1")]), "missing field 'op'"),
            (
                own(&[("op", "claim"), ("event", "e2"), ("at", "1")]),
                "does not match",
            ),
            (
                own(&[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("user", "u"),
                    ("ticket", "1"),
                ]),
                "missing field 'at'",
            ),
            (
                own(&[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("ticket", "1"),
                    ("at", "1"),
                ]),
                "missing field 'user'",
            ),
            (
                own(&[
                    ("op", "init"),
                    ("event", "e1"),
                    ("total", "2147483648"),
                    ("at", "1"),
                ]),
                "total",
            ),
            (
                own(&[("op", "explode"), ("event", "e1"), ("at", "1")]),
                "unknown op",
            ),
            (
                own(&[
                    ("op", "open"),
                    ("op", "close"),
                    ("event", "e1"),
                    ("at", "1"),
                ]),
                "duplicate",
            ),
            (
                own(&[("op", "open"), ("event", "e1"), ("at", "-1")]),
                "'at'",
            ),
        ]);
        for (fields, want) in cases {
            let raw: Vec<_> = fields
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect();
            let err = decode("e1", &raw).unwrap_err();
            assert!(err.reason.contains(want), "{fields:?}: {}", err.reason);
        }
    }

    #[test]
    fn several_tickets_and_deadlines() {
        let hold = f(&[
            ("op", "hold"),
            ("event", "e1"),
            ("user", "u1"),
            ("tickets", "3,4,9"),
            ("until", "5000"),
            ("at", "17"),
        ]);
        let want = Op::Hold {
            user: "u1".to_string(),
            tickets: Tickets::Many(vec![3, 4, 9]),
            until: 5000,
        };
        assert_eq!(decode("e1", &hold).unwrap().op, want);
        let bad = |tickets: &str| {
            let raw = f(&[
                ("op", "confirm"),
                ("event", "e1"),
                ("user", "u1"),
                ("tickets", tickets),
                ("at", "1"),
            ]);
            decode("e1", &raw).unwrap_err().reason
        };
        for tickets in ["4,3", "3,3", "3,,4", "0,1", "", "1,x"] {
            assert!(bad(tickets).contains("invalid ticket"), "{tickets}");
        }
        let no_until = f(&[
            ("op", "offer"),
            ("event", "e1"),
            ("user", "u1"),
            ("ticket", "3"),
            ("at", "1"),
        ]);
        assert!(decode("e1", &no_until)
            .unwrap_err()
            .reason
            .contains("until"));
    }

    #[test]
    fn malformed_keeps_what_it_can() {
        let raw = f(&[
            ("op", "claim"),
            ("event", "e1"),
            ("user", "bob"),
            ("ticket", "7"),
        ]);
        let err = decode("e1", &raw).unwrap_err();
        assert_eq!(err.user.as_deref(), Some("bob"));
        assert_eq!(err.ticket, Some(7));
        assert!(err.raw.contains("user=bob"));
        let long = vec![(b"x".to_vec(), vec![b'y'; 5000])];
        assert_eq!(decode("e1", &long).unwrap_err().raw.chars().count(), 1000);
    }

    /// Any set of tickets a record can carry.
    pub(crate) fn any_tickets() -> impl Strategy<Value = Tickets> {
        prop_oneof![
            (1..=MAX_TOTAL).prop_map(Tickets::One),
            proptest::collection::btree_set(1..=MAX_TOTAL, 2..20)
                .prop_map(|set| Tickets::Many(set.into_iter().collect())),
        ]
    }

    pub(crate) fn any_incarnation() -> impl Strategy<Value = Incarnation> {
        (1..=u64::MAX).prop_map(Incarnation)
    }

    /// Any checkout settings an init can have (often the defaults).
    pub(crate) fn any_checkout() -> impl Strategy<Value = Checkout> {
        prop_oneof![
            Just(Checkout::default()),
            (0..=MAX_HOLD_MS, 1..=MAX_TICKETS as i64, 1..=MAX_HOLD_MS)
                .prop_map(|(hold, limit, offer)| Checkout { hold, limit, offer }),
        ]
    }

    /// Any record the module can write (shared with the effect tests).
    pub(crate) fn any_record() -> impl Strategy<Value = Record> {
        let ticket = 1..=MAX_TOTAL;
        let order = || {
            let user = "[^\\p{Cc}]{1,16}".prop_filter("fits 64 bytes", |u| u.len() <= 64);
            (user, any_tickets(), 1..i64::MAX)
        };
        let op = prop_oneof![
            (
                ticket,
                0..i64::MAX,
                0..i64::MAX,
                any_checkout(),
                proptest::option::of(any_incarnation())
            )
                .prop_map(|(total, opens_at, closes_at, checkout, incarnation)| {
                    Op::Init {
                        total,
                        opens_at,
                        closes_at,
                        checkout,
                        incarnation,
                    }
                }),
            Just(Op::Drop),
            (any_incarnation(), any::<bool>(), any::<(u64, u64)>()).prop_map(
                |(incarnation, open, (ms, seq))| Op::Restore {
                    incarnation,
                    status: if open { Status::Open } else { Status::Closed },
                    from: StreamId::new(ms, seq),
                }
            ),
            order().prop_map(|(user, tickets, _)| Op::Claim { user, tickets }),
            order().prop_map(|(user, tickets, until)| Op::Hold {
                user,
                tickets,
                until
            }),
            order().prop_map(|(user, tickets, until)| Op::Offer {
                user,
                tickets,
                until
            }),
            order().prop_map(|(user, tickets, _)| Op::Confirm { user, tickets }),
            order().prop_map(|(user, tickets, _)| Op::Expire { user, tickets }),
            order().prop_map(|(user, tickets, _)| Op::Cancel { user, tickets }),
            Just(Op::Open),
            Just(Op::Close),
        ];
        (op, 0..i64::MAX).prop_map(|(op, at)| Record { op, at })
    }

    proptest! {
        #[test]
        fn every_record_round_trips(record in any_record()) {
            let raw = encoded(&record.borrowed(), "ev");
            prop_assert_eq!(decode("ev", &raw), Ok(record));
        }

        #[test]
        fn decoding_never_panics(fields in proptest::collection::vec((proptest::collection::vec(any::<u8>(), 0..8), proptest::collection::vec(any::<u8>(), 0..8)), 0..8)) {
            if let Err(e) = decode("ev", &fields) {
                prop_assert!(!e.reason.is_empty());
            }
        }

        #[test]
        fn a_field_list_of_known_names_decodes_or_names_the_problem(
            fields in proptest::collection::vec((prop_oneof![Just("op"), Just("event"), Just("user"), Just("ticket"), Just("at"), Just("total")], prop_oneof![Just("claim"), Just("ev"), Just("u"), Just("1"), Just("-3"), Just("")]), 0..7)
        ) {
            let raw: Vec<_> = fields.iter().map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec())).collect();
            match decode("ev", &raw) {
                Ok(r) => prop_assert_eq!(decode("ev", &encoded(&r.borrowed(), "ev")), Ok(r.clone())),
                Err(e) => prop_assert!(e.reason.contains('\'') || e.reason.contains("invalid"), "{}", e.reason),
            }
        }
    }
}
