//! `TICKET._APPLY`: the one command a state change is replicated as
//! (DESIGN.md "Replication and persistence").
//!
//! A command's result depends on the clock and on the stream id the server
//! generates, so the primary never replicates the command itself: it decides,
//! writes, and then propagates one effect carrying every decided value.
//! Replicas and the AOF loader run the module's own apply code on it, with
//! nothing left to decide:
//!
//! ```text
//! TICKET._APPLY <version> <E> init    <id> <at> <total> <opens_at> <closes_at> [<hold> <limit>]
//! TICKET._APPLY <version> <E> claim   <id> <at> <user> <tickets> <minted>
//! TICKET._APPLY <version> <E> hold    <id> <at> <user> <tickets> <minted> <until>
//! TICKET._APPLY <version> <E> offer   <id> <at> <user> <tickets> <minted> <until>
//! TICKET._APPLY <version> <E> confirm <id> <at> <user> <tickets>
//! TICKET._APPLY <version> <E> expire  <id> <at> <user> <tickets>
//! TICKET._APPLY <version> <E> cancel  <id> <at> <user> <tickets>
//! TICKET._APPLY <version> <E> open    <id> <at>
//! TICKET._APPLY <version> <E> close   <id> <at>
//! TICKET._APPLY <version> <E> drop
//! ```
//!
//! `id` is the log entry's stream id, `at` its `at` field, `tickets` one
//! number or several, ascending, comma-separated (as in the record). A
//! claim's, hold's or offer's `minted` is the event's `minted` after the
//! change when it minted new numbers (the tickets above the old `minted` are
//! new ones, and the other new numbers up to `minted` go into the pool), or
//! `0` when every ticket came from the pool. An init's `hold` and `limit`
//! (the event's default hold in ms and most tickets per user) are written
//! only when they differ from the defaults `0 1`, so a primary with plain
//! events still sends the 3-field form every earlier replica reads. `version` lets a newer replica apply an older primary's
//! stream: replicas are upgraded first, and a version this build does not
//! know is refused with an error naming both versions.

use crate::keys::valid_event;
use crate::record::{parse_number, parse_tickets, parse_time, Op, Record, Value};
use crate::StreamId;

/// The command name.
pub const APPLY_COMMAND: &str = "TICKET._APPLY";

/// The newest effect format this build writes and reads.
pub const VERSION: i64 = 1;

/// An event's checkout settings, replicated with its init (they are not
/// part of the log record: the sidecar does not need them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkout {
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
}

impl Default for Checkout {
    fn default() -> Checkout {
        Checkout { hold: 0, limit: 1 }
    }
}

/// One replicated state change of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect<U = String> {
    /// `record` was appended to the log at `id`; `minted` is the event's new
    /// `minted` when the change minted numbers; `checkout` is an init's
    /// settings (the default for every other op).
    Append {
        id: StreamId,
        record: Record<U>,
        minted: Option<i64>,
        checkout: Checkout,
    },
    /// Every key of the event was deleted.
    Drop,
}

/// Most arguments an effect has after the command name.
pub const MAX_ARGS: usize = 10;

/// The arguments of one `TICKET._APPLY`, without a heap allocation.
#[derive(Debug, Clone, Copy)]
pub struct Args<'a> {
    items: [Value<'a>; MAX_ARGS],
    len: usize,
}

impl<'a> Args<'a> {
    fn push(&mut self, v: Value<'a>) {
        self.items[self.len] = v;
        self.len += 1;
    }

    pub fn as_slice(&self) -> &[Value<'a>] {
        &self.items[..self.len]
    }
}

impl Effect<&str> {
    /// The effect with its user id copied.
    pub fn owned(&self) -> Effect {
        match self {
            Effect::Append {
                id,
                record,
                minted,
                checkout,
            } => Effect::Append {
                id: *id,
                record: record.owned(),
                minted: *minted,
                checkout: *checkout,
            },
            Effect::Drop => Effect::Drop,
        }
    }
}

impl<U: AsRef<str>> Effect<U> {
    /// The effect with its user id borrowed.
    pub fn borrowed(&self) -> Effect<&str> {
        match self {
            Effect::Append {
                id,
                record,
                minted,
                checkout,
            } => Effect::Append {
                id: *id,
                record: record.borrowed(),
                minted: *minted,
                checkout: *checkout,
            },
            Effect::Drop => Effect::Drop,
        }
    }

    /// The arguments after `TICKET._APPLY`, for the effect on `event`.
    pub fn args<'a>(&'a self, event: &'a str) -> Args<'a> {
        let mut args = Args {
            items: [Value::Number(0); MAX_ARGS],
            len: 0,
        };
        args.push(Value::Number(VERSION));
        args.push(Value::Text(event));
        let Effect::Append {
            id,
            record,
            minted,
            checkout,
        } = self
        else {
            args.push(Value::Text("drop"));
            return args;
        };
        args.push(Value::Text(record.op.name()));
        args.push(Value::Id(*id));
        args.push(Value::Number(record.at));
        if let Op::Init {
            total,
            opens_at,
            closes_at,
        } = &record.op
        {
            for n in [*total, *opens_at, *closes_at] {
                args.push(Value::Number(n));
            }
            if *checkout != Checkout::default() {
                args.push(Value::Number(checkout.hold));
                args.push(Value::Number(checkout.limit));
            }
        }
        if let Some((user, tickets, until)) = record.op.order() {
            args.push(Value::Text(user.as_ref()));
            args.push(tickets.value());
            if takes_tickets(record.op.name()) {
                args.push(Value::Number(minted.unwrap_or(0)));
            }
            if until > 0 {
                args.push(Value::Number(until));
            }
        }
        args
    }
}

/// Whether an op takes free tickets (and so may mint numbers).
fn takes_tickets(op: &str) -> bool {
    matches!(op, "claim" | "hold" | "offer")
}

/// Why an effect was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEffect(pub String);

impl std::fmt::Display for BadEffect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(why: impl Into<String>) -> BadEffect {
    BadEffect(why.into())
}

/// Decodes the arguments after `TICKET._APPLY` into the event and its effect.
pub fn decode<'a>(args: &[&'a [u8]]) -> Result<(&'a str, Effect<&'a str>), BadEffect> {
    let text = |raw: &'a [u8], what: &str| {
        std::str::from_utf8(raw).map_err(|_| bad(format!("{what} is not UTF-8")))
    };
    let [version, event, op, rest @ ..] = args else {
        return Err(bad("needs a version, an event and an op"));
    };
    let version = text(version, "version")?;
    match parse_time(version) {
        Some(v) if (1..=VERSION).contains(&v) => {}
        _ => {
            return Err(bad(format!(
                "effect version '{version}' is not one this module reads (1..={VERSION}): upgrade replicas before their primary"
            )))
        }
    }
    let event = text(event, "event")?;
    if !valid_event(event) {
        return Err(bad("invalid event id"));
    }
    let op = text(op, "op")?;
    if op == "drop" {
        return match rest {
            [] => Ok((event, Effect::Drop)),
            _ => Err(bad("drop takes no more arguments")),
        };
    }
    Ok((event, append(op, rest, text)?))
}

/// The arguments of an `Append`: `<id> <at> <op fields...>`.
fn append<'a>(
    op: &str,
    rest: &[&'a [u8]],
    text: impl Fn(&'a [u8], &str) -> Result<&'a str, BadEffect>,
) -> Result<Effect<&'a str>, BadEffect> {
    let [id, at, fields @ ..] = rest else {
        return Err(bad(format!("{op} needs a stream id and a time")));
    };
    let id = StreamId::parse(text(id, "stream id")?).ok_or_else(|| bad("invalid stream id"))?;
    let time = |raw: &'a [u8], what: &str| {
        parse_time(text(raw, what)?).ok_or_else(|| bad(format!("invalid {what}")))
    };
    let number = |raw: &'a [u8], what: &str| {
        parse_number(text(raw, what)?).ok_or_else(|| bad(format!("invalid {what}")))
    };
    let user = |raw: &'a [u8]| {
        let u = text(raw, "user")?;
        crate::keys::valid_user(u)
            .then_some(u)
            .ok_or_else(|| bad("invalid user id"))
    };
    let at = time(at, "time")?;
    let tickets =
        |raw: &'a [u8]| parse_tickets(text(raw, "tickets")?).ok_or_else(|| bad("invalid tickets"));
    let minted_after = |raw: &'a [u8]| match time(raw, "minted")? {
        0 => Ok(None),
        m => Ok(Some(m)),
    };
    let until = |raw: &'a [u8]| {
        time(raw, "until").and_then(|u| match u {
            0 => Err(bad("invalid until")),
            u => Ok(u),
        })
    };
    let mut minted = None;
    let mut checkout = Checkout::default();
    let op = match (op, fields) {
        ("init", [total, opens, closes, settings @ ..]) if matches!(settings.len(), 0 | 2) => {
            if let [hold, limit] = settings {
                checkout = Checkout {
                    hold: time(hold, "hold")?,
                    limit: number(limit, "limit")?,
                };
            }
            Op::Init {
                total: number(total, "total")?,
                opens_at: time(opens, "opens_at")?,
                closes_at: time(closes, "closes_at")?,
            }
        }
        ("claim", [u, t, m]) => {
            minted = minted_after(m)?;
            Op::Claim {
                user: user(u)?,
                tickets: tickets(t)?,
            }
        }
        ("hold", [u, t, m, d]) => {
            minted = minted_after(m)?;
            Op::Hold {
                user: user(u)?,
                tickets: tickets(t)?,
                until: until(d)?,
            }
        }
        ("offer", [u, t, m, d]) => {
            minted = minted_after(m)?;
            Op::Offer {
                user: user(u)?,
                tickets: tickets(t)?,
                until: until(d)?,
            }
        }
        ("confirm", [u, t]) => Op::Confirm {
            user: user(u)?,
            tickets: tickets(t)?,
        },
        ("expire", [u, t]) => Op::Expire {
            user: user(u)?,
            tickets: tickets(t)?,
        },
        ("cancel", [u, t]) => Op::Cancel {
            user: user(u)?,
            tickets: tickets(t)?,
        },
        ("open", []) => Op::Open,
        ("close", []) => Op::Close,
        (
            "init" | "claim" | "hold" | "offer" | "confirm" | "expire" | "cancel" | "open"
            | "close",
            _,
        ) => return Err(bad(format!("wrong number of arguments for {op}"))),
        _ => {
            return Err(bad(format!(
                "unknown op '{}'",
                op.chars().take(32).collect::<String>()
            )))
        }
    };
    Ok(Effect::Append {
        id,
        record: Record { op, at },
        minted,
        checkout,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn wire(effect: &Effect<&str>, event: &str) -> Vec<Vec<u8>> {
        effect
            .args(event)
            .as_slice()
            .iter()
            .map(|v| v.to_string().into_bytes())
            .collect()
    }

    fn decoded(raw: &[Vec<u8>]) -> Result<(String, Effect), BadEffect> {
        let args: Vec<&[u8]> = raw.iter().map(Vec::as_slice).collect();
        let (event, effect) = decode(&args)?;
        Ok((event.to_owned(), effect.owned()))
    }

    #[test]
    fn a_claim_on_the_wire() {
        let claim = Effect::Append {
            id: StreamId::new(1700, 3),
            record: Record {
                op: Op::Claim {
                    user: "u1",
                    tickets: crate::record::Tickets::One(7),
                },
                at: 1699,
            },
            minted: Some(7),
            checkout: Checkout::default(),
        };
        let args: Vec<String> = claim
            .args("e1")
            .as_slice()
            .iter()
            .map(|v| v.to_string())
            .collect();
        assert_eq!(args, ["1", "e1", "claim", "1700-3", "1699", "u1", "7", "7"]);
        assert_eq!(
            wire(&Effect::Drop, "e1"),
            [b"1".to_vec(), b"e1".to_vec(), b"drop".to_vec()]
        );
    }

    #[test]
    fn an_init_keeps_the_three_field_form_unless_it_has_checkout_settings() {
        let init = |checkout| Effect::Append {
            id: StreamId::new(5, 0),
            record: Record {
                op: Op::Init {
                    total: 10,
                    opens_at: 0,
                    closes_at: 0,
                },
                at: 4,
            },
            minted: None,
            checkout,
        };
        let plain = init(Checkout::default());
        assert_eq!(wire(&plain, "e").len(), 8);
        let held = init(Checkout {
            hold: 60_000,
            limit: 4,
        });
        let raw = wire(&held, "e");
        assert_eq!(raw[8..], [b"60000".to_vec(), b"4".to_vec()]);
        assert_eq!(decoded(&raw), Ok(("e".into(), held.owned())));
    }

    #[test]
    fn refuses_what_a_primary_never_sends() {
        let cases: &[(&[&str], &str)] = &[
            (&["2", "e", "drop"], "upgrade replicas"),
            (&["0", "e", "drop"], "version '0'"),
            (&["1", "e{x}", "drop"], "invalid event"),
            (&["1", "e"], "needs a version"),
            (&["1", "e", "drop", "x"], "no more"),
            (&["1", "e", "claim", "1-1"], "stream id and a time"),
            (
                &["1", "e", "claim", "x", "1", "u", "1", "0"],
                "invalid stream id",
            ),
            (
                &["1", "e", "claim", "1-1", "1", "u", "0", "0"],
                "invalid ticket",
            ),
            (
                &["1", "e", "claim", "1-1", "1", "a\nb", "1", "0"],
                "invalid user",
            ),
            (&["1", "e", "claim", "1-1", "1", "u", "1"], "wrong number"),
            (&["1", "e", "open", "1-1", "1", "x"], "wrong number"),
            (&["1", "e", "explode", "1-1", "1"], "unknown op"),
            (
                &["1", "e", "init", "1-1", "1", "5", "-1", "0"],
                "invalid opens_at",
            ),
            (
                &["1", "e", "init", "1-1", "1", "5", "0", "0", "10"],
                "wrong number",
            ),
            (
                &["1", "e", "init", "1-1", "1", "5", "0", "0", "-1", "2"],
                "invalid hold",
            ),
        ];
        for (args, want) in cases {
            let raw: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            let err = decode(&raw).unwrap_err();
            assert!(err.0.contains(want), "{args:?}: {err}");
        }
    }

    fn any_effect() -> impl Strategy<Value = Effect> {
        let n = 1..=crate::keys::MAX_TOTAL;
        let append = (
            crate::record::tests::any_record(),
            any::<(u64, u64)>(),
            proptest::option::of(n),
            (0..=7 * 86_400_000i64, 1..=1000i64),
        )
            .prop_map(|(record, (ms, seq), minted, (hold, limit))| {
                let minted = minted.filter(|_| takes_tickets(record.op.name()));
                let checkout = match record.op {
                    Op::Init { .. } => Checkout { hold, limit },
                    _ => Checkout::default(),
                };
                Effect::Append {
                    id: StreamId::new(ms, seq),
                    record,
                    minted,
                    checkout,
                }
            });
        prop_oneof![9 => append, 1 => Just(Effect::Drop)]
    }

    proptest! {
        #[test]
        fn every_effect_round_trips(effect in any_effect(), event in "[A-Za-z0-9_.:-]{1,64}") {
            let raw = wire(&effect.borrowed(), &event);
            prop_assert!(raw.len() <= MAX_ARGS);
            prop_assert_eq!(decoded(&raw), Ok((event, effect)));
        }

        #[test]
        fn decoding_never_panics(args in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..10)) {
            if let Err(e) = decoded(&args) {
                prop_assert!(!e.0.is_empty());
            }
        }
    }
}
