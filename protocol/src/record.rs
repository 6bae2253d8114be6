//! The stream record appended to `ticket:{E}:log` for every state change
//! (docs/design.md "The log record"), encoded by the module and decoded by the
//! sidecar. The ops about a user's tickets are written compactly
//! ([`Record::log_fields`]): `<op> <user> (ticket <n> | tickets ...) [until
//! <ms>] [pick ...] [at <unix-ms>]`, with `at` only when the entry id does
//! not start with it; every other op, and every record of releases up to
//! 0.3, in the full form ([`Record::fields`], also the heal's canonical
//! text):
//!
//! `op <op> event <E> [user <u> (ticket <n> | tickets <n>,<n>,...) [until <ms>]] [total <n> opens_at <ms> closes_at <ms> [hold <ms> limit <n>] [offer <ms>] incarnation <hex>] at <unix-ms>`
//!
//! Ops: `init`, `open`, `close`, `drop` (the event's keys were deleted, the
//! log kept as its trace), `restore` (`incarnation <hex> status <s> from
//! <id>`: a rebuild installed a snapshot); and, with a user and tickets: `claim`
//! (sold at once), `hold` and `offer` (held until `until`), `confirm` (a
//! held order became sold), `expire` (a hold ran out), `cancel`. One ticket
//! is written as `ticket <n>` (all that release 0.1 wrote), several as
//! `tickets` with the numbers ascending and comma-separated. A draw event's
//! init adds `draw <hex commitment> [admit <n>]`; its queue logs `enter`
//! (`user <u> count <n>`), `leave` (`user <u>`) and `draw` (`seed <hex>`).
//! A seated event's init adds `layout <stored JSON>`; its `claim`, `hold`
//! and `offer` add, after the tickets (and a deadline), `pick
//! best|split|seats` and the request's `section <s>`, `category <c>`,
//! `accessible <a>` when it gave them (docs/design.md "Reserved seating").
//! Allocations (docs/design.md "Allocations"): `allocate` (`name <n>
//! tickets <...> [release <ms>]`), `release` (`name <n> [tickets <...>]`);
//! a `claim` or `hold` from one, and the `expire` or `cancel` that gives a
//! held order back to it, end with `from <name>`.
//!
//! The field order is part of the contract. Decoding never panics: anything
//! that does not decode becomes a [`Malformed`] value carrying a reason and a
//! printable rendering of the raw fields, which the sidecar writes to
//! `ticket_conflict` so a bad entry never stalls the stream. Unknown extra
//! fields are ignored (forward compatibility); every format an earlier
//! release wrote keeps decoding (the tests pin them).

use std::collections::HashMap;

use crate::keys::valid_user;
use crate::ops::{self, Field, Form, OpSpec};
use crate::parts::Parts;
use crate::StreamId;

use crate::model::shown;
pub use crate::model::{
    default_offer, parse_number, parse_tickets, parse_time, Checkout, Incarnation, Op, Pick,
    PickHow, Record, Status, Tickets, Value, MAX_HOLD_MS, MAX_TICKETS,
};

impl<U: AsRef<str>> Record<U> {
    /// The stream fields of the record of `event`, in contract order: `op`,
    /// `event`, the op's fields as [`ops::OPS`] lists them, `at`.
    pub fn fields<'a>(
        &'a self,
        event: &'a str,
    ) -> impl Iterator<Item = (&'static str, Value<'a>)> + 'a {
        let head = [
            ("op", Value::Text(self.op.name())),
            ("event", Value::Text(event)),
        ];
        let body = self.op.spec().fields.iter().filter(|f| f.in_record());
        let body = body.filter_map(move |field| {
            let value = self.op.value(*field, Form::Record, None)?;
            Some((field.record_name(&value), value))
        });
        head.into_iter()
            .chain(body)
            .chain([("at", Value::Number(self.at))])
    }
}

impl<U: AsRef<str>> Record<U> {
    /// Whether the record is written compactly: an op about a user's
    /// tickets (`claim`, `hold`, `offer`, `confirm`, `expire`, `cancel`,
    /// seated or not), the ops a sale writes by the thousand.
    pub fn is_compact(&self) -> bool {
        self.op.order().is_some()
    }

    /// Whether the entry id `id` says this record's `at` (its ms is `at`),
    /// so a compact record leaves `at` out.
    pub fn at_in_id(&self, id: StreamId) -> bool {
        i64::try_from(id.ms) == Ok(self.at)
    }

    /// Whether its log entry writes `at`: every record but a compact one
    /// whose entry id says it (`at_in_id`).
    pub fn writes_at(&self, at_in_id: bool) -> bool {
        !self.is_compact() || !at_in_id
    }

    /// The stream fields the module appends (docs/design.md "The log
    /// record"). A compact op leaves out what the key and the entry id
    /// already say: `<op> <user>` opens it (no `op`, `event` or `user`
    /// field), then its values as in [`Record::fields`], and `at` only when
    /// `at_in_id` is false (the entry's id does not start with `at`). Every
    /// other op is written as [`Record::fields`] writes it.
    #[inline]
    pub fn log_fields<'a>(
        &'a self,
        event: &'a str,
        at_in_id: bool,
    ) -> impl Iterator<Item = (&'static str, Value<'a>)> + 'a {
        let user = self.op.user().filter(|_| self.is_compact());
        let head = match user {
            Some(user) => [Some((self.op.name(), Value::Text(user.as_ref()))), None],
            None => [
                Some(("op", Value::Text(self.op.name()))),
                Some(("event", Value::Text(event))),
            ],
        };
        let compact = user.is_some();
        // An op without a pick has none of its fields: not asked for each.
        let picked = self.op.pick().is_some();
        let spec = self.op.spec();
        // A compact op's optional fields (a pick, an allocation) all come
        // after the ones it needs: without them, not even looked at.
        let plain = compact && !picked && self.op.from().is_none();
        let fields = match plain {
            true => &spec.fields[..spec.record_needs],
            false => spec.fields,
        };
        let body = fields.iter();
        let body = body.filter(move |f| {
            f.in_record() && !(compact && **f == Field::User) && (picked || !f.of_pick())
        });
        let body = body.filter_map(move |field| {
            let value = self.op.value(*field, Form::Record, None)?;
            Some((field.record_name(&value), value))
        });
        let at = self
            .writes_at(at_in_id)
            .then_some(("at", Value::Number(self.at)));
        head.into_iter().flatten().chain(body).chain(at)
    }
}

/// The compact ops (see [`Record::is_compact`]), by the name that opens
/// their record.
pub(crate) fn compact_op(name: &[u8]) -> Option<&'static OpSpec> {
    use ops::Kind::{Cancel, Claim, Confirm, Expire, Hold, Offer};
    // `resell` and `unlist` also open with a user and tickets, but are
    // never written compactly.
    ops::find(name).filter(|spec| {
        matches!(spec.kind, Claim | Hold | Offer | Confirm | Expire | Cancel)
            && spec.fields.starts_with(&[Field::User, Field::Tickets])
    })
}

/// Decodes a compact record of op `spec` from its fields after the first
/// pair, in order, borrowing them: the form a version 2 or 3 effect carries
/// (`protocol::effect`). Strict where [`decode_entry`] is lenient: a field
/// the op does not have is an error, not ignored.
pub(crate) fn decode_compact<'a>(
    spec: &OpSpec,
    id: StreamId,
    user: &'a str,
    fields: &[&'a [u8]],
) -> Result<Record<&'a str>, String> {
    let mut parts = Parts::default();
    if !parts.read(Field::User, user) {
        return Err(format!("{}: invalid user id", spec.name));
    }
    let mut at = None;
    for pair in fields.chunks(2) {
        let [name, value] = pair else {
            return Err(format!("{}: a field without a value", spec.name));
        };
        let (Ok(name), Ok(value)) = (std::str::from_utf8(name), std::str::from_utf8(value)) else {
            return Err(format!("{}: a field that is not UTF-8", spec.name));
        };
        let read = match name {
            "at" => {
                at = parse_time(value);
                at.is_some()
            }
            "ticket" => parts.read(Field::Tickets, value),
            _ => compact_field(spec, name).is_some_and(|field| parts.read(field, value)),
        };
        if !read {
            let name = shown(name.as_bytes());
            return Err(format!("{}: unknown or invalid field '{name}'", spec.name));
        }
    }
    let at = match at {
        Some(at) => at,
        None => i64::try_from(id.ms).map_err(|_| "the stream id's ms is not a time".to_string())?,
    };
    let op = parts.op(spec.kind);
    op.map(|op| Record { op, at })
        .ok_or_else(|| format!("{}: missing a field", spec.name))
}

/// The field a compact record of `spec` writes under `name` after its
/// first pair (the user is in that pair).
fn compact_field(spec: &OpSpec, name: &str) -> Option<Field> {
    let fields = spec.fields.iter().copied();
    fields
        .filter(|f| f.in_record() && *f != Field::User)
        .find(|f| f.name() == name)
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
    /// The fields of `raw`; `compact`: the first pair is `<op> <user>`,
    /// read as the `user` field.
    fn new(raw: &'f [(Vec<u8>, Vec<u8>)], compact: bool) -> Result<Fields<'f>, Malformed> {
        let mut map = HashMap::new();
        let mut duplicate = None;
        for (i, (k, v)) in raw.iter().enumerate() {
            let k = match i == 0 && compact {
                true => b"user".as_slice(),
                false => k.as_slice(),
            };
            if map.insert(k, v.as_slice()).is_some() {
                duplicate = Some(shown(k));
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

    fn has_tickets(&self) -> bool {
        self.has("ticket") || self.has("tickets")
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

    /// Reads the field `spec.fields[i]` into `parts`: one a record must
    /// carry is refused when missing, any is refused when invalid.
    fn read(&self, spec: &OpSpec, i: usize, parts: &mut Parts<'f>) -> Result<(), Malformed> {
        let (what, field) = (spec.name, spec.fields[i]);
        match field {
            Field::User => parts.user = Some(self.user(what)?),
            // A release of an allocation with no free tickets has none.
            Field::Tickets if i >= spec.record_needs && !self.has_tickets() => {}
            Field::Tickets => parts.tickets = Some(self.tickets(what)?),
            _ => {
                let name = field.name();
                let needed = i < spec.record_needs;
                if !needed && !self.has(name) {
                    return Ok(());
                }
                if !self.text(name).is_some_and(|t| parts.read(field, t)) {
                    let missing = if needed { "missing or " } else { "" };
                    return Err(self.fail(format!("{what}: {missing}invalid '{name}'")));
                }
            }
        }
        Ok(())
    }

    fn user(&self, what: &str) -> Result<&'f str, Malformed> {
        match self.text("user") {
            _ if !self.has("user") => Err(self.fail(format!("{what}: missing field 'user'"))),
            Some(u) if valid_user(u) => Ok(u),
            _ => Err(self.fail(format!("{what}: invalid user id"))),
        }
    }

    /// `ticket <n>` or `tickets <n>,<n>,...`, not both.
    fn tickets(&self, what: &str) -> Result<Tickets, Malformed> {
        let tickets = match (self.has("ticket"), self.has("tickets")) {
            (true, true) => return Err(self.fail(format!("{what}: both 'ticket' and 'tickets'"))),
            (false, false) => return Err(self.fail(format!("{what}: missing field 'ticket'"))),
            (true, false) => self.ticket.map(Tickets::One),
            (false, true) => self.text("tickets").and_then(parse_tickets),
        };
        tickets.ok_or_else(|| self.fail(format!("{what}: invalid ticket number")))
    }
}

/// Decodes the fields of one entry of `ticket:{event}:log` without its id:
/// a compact record must then carry `at` (see [`decode_entry`]).
pub fn decode(event: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<Record, Malformed> {
    decode_entry(event, None, raw)
}

/// Decodes the fields of the entry `id` of `ticket:{event}:log`, in any
/// format the module ever wrote: a compact record (its first field is the
/// op, its value the user; `at`, when absent, is the id's ms) or a full one
/// (`op`, `event`, ..., `at`). A log may hold both during an upgrade.
pub fn decode_entry(
    event: &str,
    id: Option<StreamId>,
    raw: &[(Vec<u8>, Vec<u8>)],
) -> Result<Record, Malformed> {
    let has_op = raw.iter().any(|(k, _)| k == b"op");
    let compact = raw.first().and_then(|(name, _)| compact_op(name));
    let Some(spec) = compact.filter(|_| !has_op) else {
        return decode_full(event, raw);
    };
    let fields = Fields::new(raw, true)?;
    let at = match id {
        Some(id) if !fields.has("at") => i64::try_from(id.ms)
            .map_err(|_| fields.fail("the entry id's ms is not a unix-ms time".into()))?,
        _ => fields.time("at")?,
    };
    fields.record(spec, at)
}

/// Decodes a record in the full format: `op <op> event <E> ... at <ms>`.
fn decode_full(event: &str, raw: &[(Vec<u8>, Vec<u8>)]) -> Result<Record, Malformed> {
    let fields = Fields::new(raw, false)?;
    let Some(op) = fields.map.get(b"op".as_slice()).copied() else {
        return Err(fields.fail("missing field 'op'".into()));
    };
    match fields.text("event") {
        Some(e) if e == event => {}
        Some(_) => return Err(fields.fail("field 'event' does not match the key".into())),
        None => return Err(fields.fail("missing field 'event'".into())),
    }
    let at = fields.time("at")?;
    let Some(spec) = ops::find(op) else {
        return Err(fields.fail(format!("unknown op '{}'", shown(op))));
    };
    fields.record(spec, at)
}

impl Fields<'_> {
    /// The record of op `spec` at `at` these fields describe.
    fn record(&self, spec: &OpSpec, at: i64) -> Result<Record, Malformed> {
        let mut parts = Parts::default();
        for (i, field) in spec.fields.iter().enumerate() {
            if field.in_record() {
                self.read(spec, i, &mut parts)?;
            }
        }
        match parts.op(spec.kind) {
            Some(op) => Ok(Record {
                op: op.map_user(|u| u.to_string()),
                at,
            }),
            None => Err(self.fail(format!("{}: missing a field", spec.name))),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::draw::AFTER_DRAW;
    use crate::keys::MAX_TOTAL;
    use crate::model::{DrawTerms, MAX_ADMIT};
    use crate::ops::{Kind, OPS};
    use crate::StreamId;
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
                from: None,
                pick: None,
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
                transfer_until: None,
                layout: None,
                total: 100,
                opens_at: 5,
                closes_at: 9,
                checkout: Checkout::default(),
                incarnation: None,
                draw: None,
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

    /// A draw event's records: the init shows the commitment, never the
    /// secret; `enter` leaves out the rank; `draw` reveals the seed.
    #[test]
    fn the_draw_records() {
        let terms = DrawTerms {
            commitment: [0xab; 32],
            admit: Some(500),
            seed: Some([0xcd; 32]),
        };
        let init = Record {
            op: Op::<&str>::Init {
                transfer_until: None,
                layout: None,
                total: 10,
                opens_at: 0,
                closes_at: 0,
                checkout: Checkout::default(),
                incarnation: Some(Incarnation(1)),
                draw: Some(terms),
            },
            at: 2,
        };
        let fields = flat(&init);
        assert_eq!(
            fields[10..14],
            ["incarnation", "0000000000000001", "draw", &"ab".repeat(32)]
        );
        assert_eq!(fields[14..], ["admit", "500", "at", "2"]);
        assert!(
            !fields.concat().contains("cdcd"),
            "the secret stays out of the log"
        );
        let enter = Record {
            op: Op::Enter {
                user: "u1",
                count: 2,
                rank: Some(77),
            },
            at: 3,
        };
        assert_eq!(flat(&enter)[4..8], ["user", "u1", "count", "2"]);
        assert_eq!(flat(&enter).len(), 10);
        let draw = Record {
            op: Op::<&str>::Draw { seed: [0xcd; 32] },
            at: 4,
        };
        assert_eq!(flat(&draw)[4..], ["seed", &"cd".repeat(32), "at", "4"]);
        for r in [init, enter, draw] {
            let decoded = decode("e1", &encoded(&r, "e1")).unwrap();
            assert_eq!(decoded.op, r.op.as_recorded().map_user(|u| u.to_string()));
        }
    }

    /// A seated event's records: the init carries its layout; a hold
    /// carries after its tickets how the seats were chosen, and the
    /// request's filters when given. Its effect keeps every position.
    #[test]
    fn the_seated_records() {
        let init = Record {
            op: Op::<&str>::Init {
                transfer_until: None,
                total: 2,
                opens_at: 0,
                closes_at: 0,
                checkout: Checkout::default(),
                incarnation: Some(Incarnation(1)),
                draw: None,
                layout: Some("{\"sections\":[]}".into()),
            },
            at: 2,
        };
        assert_eq!(
            flat(&init)[10..],
            [
                "incarnation",
                "0000000000000001",
                "layout",
                "{\"sections\":[]}",
                "at",
                "2"
            ]
        );
        let hold = Record {
            op: Op::Hold {
                from: None,
                user: "u1",
                tickets: Tickets::Many(vec![5, 6]),
                until: 9,
                pick: Some(Box::new(Pick {
                    how: PickHow::Best,
                    section: Some("A".into()),
                    category: None,
                    accessible: Some(1),
                })),
            },
            at: 3,
        };
        assert_eq!(
            flat(&hold)[4..],
            [
                "user",
                "u1",
                "tickets",
                "5,6",
                "until",
                "9",
                "pick",
                "best",
                "section",
                "A",
                "accessible",
                "1",
                "at",
                "3"
            ]
        );
        for r in [&init, &hold] {
            assert_eq!(decode("e1", &encoded(r, "e1")), Ok(r.owned()));
        }
        let effect = crate::effect::Effect::Append {
            id: StreamId::new(4, 0),
            record: hold.clone(),
            minted: None,
        };
        let args: Vec<String> = effect
            .args("e1")
            .as_slice()
            .iter()
            .map(|v| v.to_string())
            .collect();
        // Version 3: `<op> <ms> <seq> <minted>`, then the entry's fields
        // from the user on (`at`: the id does not start with it).
        assert_eq!(args[..6], ["3", "e1", "hold", "4", "0", "0"]);
        assert_eq!(args[6..], flat(&hold)[5..]);
        let init_effect = crate::effect::Effect::Append {
            id: StreamId::new(4, 0),
            record: init,
            minted: None,
        };
        let args: Vec<String> = init_effect
            .args("e1")
            .as_slice()
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(args[12..], ["", "0", "", "{\"sections\":[]}"]);
        // A claim of an unseated event is what it always was.
        let plain = f(&[
            ("op", "claim"),
            ("event", "e1"),
            ("user", "u"),
            ("ticket", "3"),
            ("at", "1"),
        ]);
        assert_eq!(decode("e1", &plain).unwrap().op.pick(), None);
    }

    fn compact(r: &Record<&str>, at_in_id: bool) -> Vec<String> {
        r.log_fields("e1", at_in_id)
            .flat_map(|(k, v)| [k.to_owned(), v.to_string()])
            .collect()
    }

    fn pairs_of(flat: &[String]) -> Vec<(Vec<u8>, Vec<u8>)> {
        flat.chunks(2)
            .map(|p| (p[0].as_bytes().to_vec(), p[1].as_bytes().to_vec()))
            .collect()
    }

    /// The hot ops' compact records: `<op> <user>` first, nothing the key
    /// or the entry id says; `at` only when the id does not start with it.
    /// Every other op keeps the full form.
    #[test]
    fn compact_records() {
        let claim = Record {
            op: Op::Claim {
                from: None,
                pick: None,
                user: "alice",
                tickets: Tickets::One(7),
            },
            at: 1000,
        };
        assert_eq!(compact(&claim, true), ["claim", "alice", "ticket", "7"]);
        assert_eq!(
            compact(&claim, false),
            ["claim", "alice", "ticket", "7", "at", "1000"]
        );
        let hold = Record {
            op: Op::Hold {
                from: None,
                pick: Some(Box::new(Pick {
                    how: PickHow::Best,
                    section: Some("A".into()),
                    category: None,
                    accessible: None,
                })),
                user: "bob smith",
                tickets: Tickets::Many(vec![3, 4]),
                until: 9000,
            },
            at: 1000,
        };
        assert_eq!(
            compact(&hold, true),
            [
                "hold",
                "bob smith",
                "tickets",
                "3,4",
                "until",
                "9000",
                "pick",
                "best",
                "section",
                "A"
            ]
        );
        for (op, name) in [
            (
                Op::Confirm {
                    user: "u",
                    tickets: Tickets::One(2),
                },
                "confirm",
            ),
            (
                Op::Expire {
                    from: None,
                    user: "u",
                    tickets: Tickets::One(2),
                },
                "expire",
            ),
            (
                Op::Cancel {
                    from: None,
                    user: "u",
                    tickets: Tickets::One(2),
                },
                "cancel",
            ),
        ] {
            let r = Record { op, at: 5 };
            assert_eq!(compact(&r, true), [name, "u", "ticket", "2"]);
        }
        let close = Record {
            op: Op::<&str>::Close,
            at: 3,
        };
        assert_eq!(compact(&close, true), flat(&close), "not a compact op");
        // Decoded with the entry's id: `at` from the id unless written.
        let id = StreamId::new(1000, 4);
        for r in [&claim, &hold] {
            let raw = pairs_of(&compact(r, true));
            assert_eq!(decode_entry("e1", Some(id), &raw), Ok(r.owned()));
            let raw = pairs_of(&compact(r, false));
            let other = StreamId::new(1001, 0);
            assert_eq!(decode_entry("e1", Some(other), &raw), Ok(r.owned()));
            assert_eq!(decode("e1", &raw), Ok(r.owned()), "carries its at");
        }
        // The full form still decodes with an id, and keeps its own `at`.
        let full = encoded(&claim, "e1");
        assert_eq!(
            decode_entry("e1", Some(StreamId::new(1002, 0)), &full),
            Ok(claim.owned())
        );
    }

    /// An allocation's records: `allocate` and `release` in the full form
    /// (never the key's hash); a claim from one adds `from` last, so a
    /// plain claim's record is what it always was.
    #[test]
    fn the_allocation_records() {
        let allocate = Record {
            op: Op::<&str>::Allocate {
                name: "promoter".into(),
                tickets: Tickets::Many(vec![3, 4]),
                release: Some(9000),
                key: Some([0xee; 32]),
            },
            at: 5,
        };
        assert_eq!(
            flat(&allocate)[4..],
            ["name", "promoter", "tickets", "3,4", "release", "9000", "at", "5"]
        );
        assert_eq!(
            decode("e1", &encoded(&allocate, "e1")).unwrap().op,
            allocate.op.as_recorded().map_user(|u| u.to_string())
        );
        let release = Record {
            op: Op::<&str>::Release {
                name: "promoter".into(),
                tickets: None,
            },
            at: 6,
        };
        assert_eq!(flat(&release)[4..], ["name", "promoter", "at", "6"]);
        assert_eq!(decode("e1", &encoded(&release, "e1")), Ok(release.owned()));
        let claim = Record {
            op: Op::Hold {
                from: Some("promoter".into()),
                pick: None,
                user: "u",
                tickets: Tickets::One(3),
                until: 99,
            },
            at: 7,
        };
        assert_eq!(
            compact(&claim, true),
            ["hold", "u", "ticket", "3", "until", "99", "from", "promoter"]
        );
        let raw = pairs_of(&compact(&claim, true));
        let id = StreamId::new(7, 0);
        assert_eq!(decode_entry("e1", Some(id), &raw), Ok(claim.owned()));
        let bad = f(&[
            ("hold", "u"),
            ("ticket", "3"),
            ("until", "9"),
            ("from", "a b"),
        ]);
        assert!(decode_entry("e1", Some(id), &bad).is_err());
    }

    /// A compact entry that does not decode names what is wrong.
    #[test]
    fn rejects_bad_compact_entries() {
        let id = Some(StreamId::new(5, 0));
        type Case<'a> = (&'a [(&'a str, &'a str)], Option<StreamId>, &'a str);
        let cases: [Case; 7] = [
            (
                &[("claim", "u"), ("ticket", "1")],
                None,
                "missing field 'at'",
            ),
            (&[("claim", "u")], id, "missing field 'ticket'"),
            (&[("claim", "a\nb"), ("ticket", "1")], id, "invalid user"),
            (&[("claim", ""), ("ticket", "1")], id, "invalid user"),
            (&[("claim", "u"), ("ticket", "0")], id, "invalid ticket"),
            (
                &[("claim", "u"), ("user", "v"), ("ticket", "1")],
                id,
                "duplicate field 'user'",
            ),
            (&[("hold", "u"), ("ticket", "1")], id, "until"),
        ];
        for (pairs, id, want) in cases {
            let raw: Vec<_> = pairs
                .iter()
                .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
                .collect();
            let err = decode_entry("e1", id, &raw).unwrap_err();
            assert!(err.reason.contains(want), "{pairs:?}: {}", err.reason);
        }
        // An op name first that is not a compact op is no compact record.
        let raw = f(&[("open", "u"), ("at", "1")]);
        assert!(decode_entry("e1", id, &raw)
            .unwrap_err()
            .reason
            .contains("'op'"));
        let raw = f(&[("claim", "u"), ("ticket", "9")]);
        let err = decode_entry("e1", None, &raw).unwrap_err();
        assert_eq!((err.user.as_deref(), err.ticket), (Some("u"), Some(9)));
        assert!(err.raw.contains("claim=u"), "{}", err.raw);
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
            from: None,
            pick: None,
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
            transfer_until: None,
            layout: None,
            total: 100,
            opens_at: 5,
            closes_at: 0,
            checkout: Checkout::default(),
            incarnation: None,
            draw: None,
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
                transfer_until: None,
                layout: None,
                total: 10,
                opens_at: 0,
                closes_at: 0,
                checkout,
                incarnation: Some(Incarnation(0xab)),
                draw: None,
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

    /// Found by the `record` fuzz target: a reason quoted raw input, so
    /// an op or field name with a NUL or `\r` went into the sidecar's
    /// conflict row as it was.
    #[test]
    fn reasons_quote_hostile_input_escaped_and_cut() {
        let op = f(&[("op", "\u{100}x\0"), ("event", "e1"), ("at", "1")]);
        assert_eq!(
            decode("e1", &op).unwrap_err().reason,
            "unknown op '\u{100}x\\0'"
        );
        let long = "\r".repeat(5000);
        let twice = f(&[("op", "open"), (&long, "1"), (&long, "2")]);
        let reason = decode("e1", &twice).unwrap_err().reason;
        assert!(reason.starts_with("duplicate field '\\r\\r"), "{reason}");
        assert!(reason.len() < 200 && !reason.contains('\r'), "{reason}");
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
            from: None,
            pick: None,
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

    fn user_id() -> impl Strategy<Value = String> {
        "[^\\p{Cc}]{1,16}".prop_filter("fits 64 bytes", |u| u.len() <= 64)
    }

    /// Any draw terms an init can carry (with its secret, as in effects).
    fn any_draw_terms() -> impl Strategy<Value = DrawTerms> {
        (
            any::<[u8; 32]>(),
            proptest::option::of(1..=MAX_ADMIT),
            any::<[u8; 32]>(),
        )
            .prop_map(|(commitment, admit, seed)| DrawTerms {
                commitment,
                admit,
                seed: Some(seed),
            })
    }

    /// How a seated claim chose its seats, or nothing (unseated).
    fn any_pick() -> impl Strategy<Value = Option<Box<Pick>>> {
        let how = prop_oneof![
            Just(PickHow::Best),
            Just(PickHow::Split),
            Just(PickHow::Seats)
        ];
        let name = "[A-Za-z0-9_.-]{1,16}";
        proptest::option::of(
            (
                how,
                proptest::option::of(name),
                proptest::option::of(name),
                proptest::option::of(1..=MAX_TICKETS as i64),
            )
                .prop_map(|(how, section, category, accessible)| {
                    Box::new(Pick {
                        how,
                        section,
                        category,
                        accessible,
                    })
                }),
        )
    }

    /// Any op of `kind` the module can write.
    pub(crate) fn any_op(kind: Kind) -> BoxedStrategy<Op> {
        let name = "[A-Za-z0-9_.-]{1,32}";
        let from = proptest::option::of(name).prop_map(|f| f.map(Box::from));
        let order = (user_id(), any_tickets(), 1..i64::MAX, any_pick(), from);
        match kind {
            Kind::Init => (
                1..=MAX_TOTAL,
                0..i64::MAX,
                0..i64::MAX,
                any_checkout(),
                proptest::option::of(any_incarnation()),
                proptest::option::of(any_draw_terms()),
                proptest::option::of("[a-z0-9{}\\[\\]:,\"]{1,40}"),
                proptest::option::of(1..i64::MAX),
            )
                .prop_map(
                    |(total, opens_at, closes_at, checkout, incarnation, draw, layout, until)| {
                        Op::Init {
                            // The module writes it only with an incarnation.
                            transfer_until: until.filter(|_| incarnation.is_some()),
                            // The module writes a layout only with an incarnation.
                            layout: layout.filter(|_| incarnation.is_some()),
                            total,
                            opens_at,
                            closes_at,
                            checkout,
                            // The module writes draw terms only with an incarnation.
                            draw: draw.filter(|_| incarnation.is_some()),
                            incarnation,
                        }
                    },
                )
                .boxed(),
            Kind::Enter => (user_id(), 1..=MAX_TICKETS as i64, 0..AFTER_DRAW)
                .prop_map(|(user, count, rank)| Op::Enter {
                    user,
                    count,
                    rank: Some(rank),
                })
                .boxed(),
            Kind::Leave => user_id().prop_map(|user| Op::Leave { user }).boxed(),
            Kind::Draw => any::<[u8; 32]>().prop_map(|seed| Op::Draw { seed }).boxed(),
            Kind::Restore => (any_incarnation(), any::<bool>(), any::<(u64, u64)>())
                .prop_map(|(incarnation, open, (ms, seq))| Op::Restore {
                    incarnation,
                    status: if open { Status::Open } else { Status::Closed },
                    from: StreamId::new(ms, seq),
                })
                .boxed(),
            Kind::Claim
            | Kind::Hold
            | Kind::Offer
            | Kind::Confirm
            | Kind::Expire
            | Kind::Cancel => order
                .prop_map(move |(user, tickets, until, pick, from)| match kind {
                    Kind::Claim => Op::Claim {
                        from,
                        pick,
                        user,
                        tickets,
                    },
                    Kind::Hold => Op::Hold {
                        from,
                        pick,
                        user,
                        tickets,
                        until,
                    },
                    Kind::Offer => Op::Offer {
                        pick,
                        user,
                        tickets,
                        until,
                    },
                    Kind::Confirm => Op::Confirm { user, tickets },
                    Kind::Expire => Op::Expire {
                        from,
                        user,
                        tickets,
                    },
                    _ => Op::Cancel {
                        from,
                        user,
                        tickets,
                    },
                })
                .boxed(),
            Kind::Allocate => (
                name,
                any_tickets(),
                proptest::option::of(1..i64::MAX),
                proptest::option::of(any::<[u8; 32]>()),
            )
                .prop_map(|(name, tickets, release, key)| Op::Allocate {
                    name,
                    tickets,
                    release,
                    key,
                })
                .boxed(),
            Kind::Release => (name, proptest::option::of(any_tickets()))
                .prop_map(|(name, tickets)| Op::Release { name, tickets })
                .boxed(),
            Kind::Transfer => (user_id(), user_id(), any_tickets())
                .prop_map(|(user, to, tickets)| Op::Transfer {
                    user,
                    to: Box::from(to),
                    tickets,
                })
                .boxed(),
            Kind::Resold => (user_id(), user_id(), any_tickets())
                .prop_map(|(user, to, tickets)| Op::Resold {
                    user,
                    to: Box::from(to),
                    tickets,
                })
                .boxed(),
            Kind::Resell => (user_id(), any_tickets())
                .prop_map(|(user, tickets)| Op::Resell { user, tickets })
                .boxed(),
            Kind::Unlist => (user_id(), any_tickets())
                .prop_map(|(user, tickets)| Op::Unlist { user, tickets })
                .boxed(),
            Kind::Scan => (
                1..=MAX_TOTAL,
                1..=MAX_TOTAL,
                proptest::option::of(name).prop_map(|g| g.map(Box::from)),
            )
                .prop_map(|(ticket, gen, gate)| Op::Scan { ticket, gen, gate })
                .boxed(),
            Kind::Open => Just(Op::Open).boxed(),
            Kind::Close => Just(Op::Close).boxed(),
            Kind::Drop => Just(Op::Drop).boxed(),
        }
    }

    /// Any record the module can write, of any op of the table (shared
    /// with the effect tests).
    pub(crate) fn any_record() -> impl Strategy<Value = Record> {
        let op = (0..OPS.len()).prop_flat_map(|i| any_op(OPS[i].kind));
        (op, 0..i64::MAX).prop_map(|(op, at)| Record { op, at })
    }

    proptest! {
        #[test]
        fn every_record_round_trips(record in any_record()) {
            let raw = encoded(&record.borrowed(), "ev");
            let recorded = Record { op: record.op.as_recorded(), at: record.at };
            prop_assert_eq!(decode("ev", &raw), Ok(recorded));
        }

        /// Every record round-trips in the form the module appends, with
        /// `at` in the entry id or written out.
        #[test]
        fn every_log_record_round_trips(record in any_record(), at_in_id in any::<bool>(), seq in any::<u64>()) {
            let raw: Vec<_> = record.borrowed().log_fields("ev", at_in_id)
                .map(|(k, v)| (k.as_bytes().to_vec(), v.to_string().into_bytes()))
                .collect();
            let ms = if at_in_id { record.at } else { record.at ^ 1 };
            let id = StreamId::new(ms as u64, seq);
            let recorded = Record { op: record.op.as_recorded(), at: record.at };
            prop_assert_eq!(decode_entry("ev", Some(id), &raw), Ok(recorded));
            prop_assert!(raw.len() <= encoded(&record.borrowed(), "ev").len());
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
