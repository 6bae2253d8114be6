//! The stream record appended to `ticket:{E}:log` for every state change
//! (DESIGN.md "Stream record"), encoded by the module and decoded by the
//! sidecar:
//!
//! `op <op> event <E> [user <u> (ticket <n> | tickets <n>,<n>,...) [until <ms>]] [total <n> opens_at <ms> closes_at <ms>] at <unix-ms>`
//!
//! Ops: `init`, `open`, `close`; and, with a user and tickets: `claim`
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
    /// Event created with `total` tickets; times in unix ms, 0 = no bound.
    Init {
        total: i64,
        opens_at: i64,
        closes_at: i64,
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
            Op::Init { .. } | Op::Open | Op::Close => None,
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
}

impl std::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(s) => f.write_str(s),
            Value::Number(n) => write!(f, "{n}"),
            Value::Id(id) => write!(f, "{id}"),
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
            } => Op::Init {
                total: *total,
                opens_at: *opens_at,
                closes_at: *closes_at,
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
        let detail: [Option<(&'static str, Value<'a>)>; 3] = match &self.op {
            Op::Init {
                total,
                opens_at,
                closes_at,
            } => [
                Some(("total", Value::Number(*total))),
                Some(("opens_at", Value::Number(*opens_at))),
                Some(("closes_at", Value::Number(*closes_at))),
            ],
            Op::Open | Op::Close => [None, None, None],
            op => match op.order() {
                Some((user, tickets, until)) => [
                    Some(("user", Value::Text(user.as_ref()))),
                    Some(tickets.field()),
                    (until > 0).then_some(("until", Value::Number(until))),
                ],
                None => [None, None, None],
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
        Ok(Op::Init {
            total,
            opens_at: bound("opens_at")?,
            closes_at: bound("closes_at")?,
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
        };
        assert_eq!(decode("e1", &init).unwrap().op, want);
        for (op, want) in [("open", Op::Open), ("close", Op::Close)] {
            let r = decode("e1", &f(&[("op", op), ("event", "e1"), ("at", "1")])).unwrap();
            assert_eq!(r.op, want);
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

    /// Any record the module can write (shared with the effect tests).
    pub(crate) fn any_record() -> impl Strategy<Value = Record> {
        let ticket = 1..=MAX_TOTAL;
        let order = || {
            let user = "[^\\p{Cc}]{1,16}".prop_filter("fits 64 bytes", |u| u.len() <= 64);
            (user, any_tickets(), 1..i64::MAX)
        };
        let op = prop_oneof![
            (ticket, 0..i64::MAX, 0..i64::MAX).prop_map(|(total, opens_at, closes_at)| {
                Op::Init {
                    total,
                    opens_at,
                    closes_at,
                }
            }),
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
