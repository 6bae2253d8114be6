//! `TICKET.RESTORE E AFTER`: what happened to a restored event's sold
//! tickets after the sale (docs/design.md "After the sale"), the step
//! `rebuild` sends after the orders when MySQL has any of it:
//!
//! ```text
//! TICKET.RESTORE E AFTER <transfer_until|-> [<ticket> <gen> <scanned_at|-> <gate|->] ...
//! TICKET._APPLY <version> <E> restore-after <the same values>
//! ```
//!
//! `transfer_until` the event's transfer deadline (unix ms; `-`: none
//! given at `INIT`); then per ticket its generation (1 or more) and its
//! admitting scan (when, unix ms, and the gate; `-` `-`: not scanned),
//! tickets ascending, at most [`MAX_AFTER`] per call.

use crate::keys::{valid_gate, MAX_TOTAL};
use crate::model::{parse_number, parse_time, Value};

/// Most tickets one `AFTER` call carries.
pub const MAX_AFTER: usize = 5_000;

/// One sold ticket's generation and admitting scan (at, gate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sold {
    pub ticket: i64,
    pub gen: i64,
    pub scan: Option<(i64, Option<String>)>,
}

/// The values of an `AFTER` step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AfterSale {
    pub transfer_until: Option<i64>,
    pub tickets: Vec<Sold>,
}

impl AfterSale {
    /// `<transfer_until|-> [<ticket> <gen> <scanned_at|-> <gate|->] ...`.
    pub fn values(&self) -> impl Iterator<Item = Value<'_>> + '_ {
        let until = self.transfer_until.map_or(Value::Text("-"), Value::Number);
        std::iter::once(until).chain(self.tickets.iter().flat_map(|s| {
            let (at, gate) = match &s.scan {
                None => (Value::Text("-"), Value::Text("-")),
                Some((at, gate)) => (
                    Value::Number(*at),
                    Value::Text(gate.as_deref().unwrap_or("-")),
                ),
            };
            [Value::Number(s.ticket), Value::Number(s.gen), at, gate]
        }))
    }

    /// The `AFTER` calls of `self`: at most [`MAX_AFTER`] tickets each,
    /// every one with the deadline; none when there is nothing to restore.
    pub fn chunks(&self) -> Vec<AfterSale> {
        if self.transfer_until.is_none() && self.tickets.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<AfterSale> = self
            .tickets
            .chunks(MAX_AFTER)
            .map(|c| AfterSale {
                transfer_until: self.transfer_until,
                tickets: c.to_vec(),
            })
            .collect();
        if out.is_empty() {
            out.push(self.clone());
        }
        out
    }
}

/// Decodes the values after `AFTER` (or `restore-after`).
pub fn decode(args: &[&[u8]]) -> Result<AfterSale, String> {
    let [until, quads @ ..] = args else {
        return Err(
            "AFTER takes <transfer_until|-> [<ticket> <gen> <scanned_at|-> <gate|->] ...".into(),
        );
    };
    if !quads.len().is_multiple_of(4) || quads.len() / 4 > MAX_AFTER {
        return Err(format!(
            "AFTER takes at most {MAX_AFTER} quadruples <ticket> <gen> <scanned_at|-> <gate|-> after the deadline, got {} values",
            quads.len()
        ));
    }
    let text = |raw: &[u8]| std::str::from_utf8(raw).unwrap_or("").to_owned();
    let wrong = |what: &str, raw: &[u8], want: &str| {
        format!("{what} \"{}\" must be {want}", crate::model::shown(raw))
    };
    let time = |raw: &[u8], what: &str| match raw {
        b"-" => Ok(None),
        _ => parse_time(&text(raw))
            .map(Some)
            .ok_or_else(|| wrong(what, raw, "- or unix ms")),
    };
    let transfer_until = time(until, "transfer_until")?;
    let mut tickets: Vec<Sold> = Vec::with_capacity(quads.len() / 4);
    for q in quads.chunks(4) {
        let ticket = parse_number(&text(q[0]))
            .filter(|t| tickets.last().is_none_or(|l| l.ticket < *t))
            .ok_or_else(|| wrong("ticket", q[0], &format!("in 1..={MAX_TOTAL}, ascending")))?;
        let gen = parse_number(&text(q[1])).ok_or_else(|| wrong("gen", q[1], "1 or more"))?;
        let gate = match q[3] {
            b"-" => None,
            raw => Some(text(raw))
                .filter(|g| valid_gate(g))
                .ok_or_else(|| wrong("gate", raw, "- or 1 to 32 bytes of [A-Za-z0-9_.-]"))?
                .into(),
        };
        let scan = match (time(q[2], "scanned_at")?, gate) {
            (None, None) => None,
            (Some(at), gate) => Some((at, gate)),
            (None, Some(_)) => return Err(format!("ticket {ticket}: a gate without a scan")),
        };
        tickets.push(Sold { ticket, gen, scan });
    }
    Ok(AfterSale {
        transfer_until,
        tickets,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use proptest::prelude::*;

    use super::*;

    /// An `AFTER` step's values: tickets ascending, a scan with or without
    /// a gate.
    pub(crate) fn any_after() -> impl Strategy<Value = AfterSale> {
        let scan = proptest::option::of((0..1i64 << 45, proptest::option::of("[a-z]{1,8}")));
        let sold = (1..=4i64, scan);
        (
            proptest::option::of(0..1i64 << 45),
            proptest::collection::vec(sold, 0..6),
        )
            .prop_map(|(transfer_until, sold)| AfterSale {
                transfer_until,
                tickets: sold
                    .into_iter()
                    .enumerate()
                    .map(|(i, (gen, scan))| Sold {
                        ticket: 3 * i as i64 + 1,
                        gen,
                        scan,
                    })
                    .collect(),
            })
    }

    fn decoded(v: &[&str]) -> Result<AfterSale, String> {
        let raw: Vec<&[u8]> = v.iter().map(|s| s.as_bytes()).collect();
        decode(&raw)
    }

    #[test]
    fn values_round_trip_and_bad_ones_are_named() {
        let a = AfterSale {
            transfer_until: Some(99),
            tickets: vec![
                Sold {
                    ticket: 2,
                    gen: 3,
                    scan: None,
                },
                Sold {
                    ticket: 5,
                    gen: 1,
                    scan: Some((7, Some("north".into()))),
                },
            ],
        };
        let texts: Vec<String> = a.values().map(|v| v.to_string()).collect();
        assert_eq!(texts, ["99", "2", "3", "-", "-", "5", "1", "7", "north"]);
        let strs: Vec<&str> = texts.iter().map(String::as_str).collect();
        assert_eq!(decoded(&strs).as_ref(), Ok(&a));
        for (bad, named) in [
            (&["x"][..], "transfer_until"),
            (&["-", "2", "1", "-"][..], "quadruples"),
            (
                &["-", "2", "1", "-", "-", "2", "1", "-", "-"][..],
                "ascending",
            ),
            (&["-", "2", "0", "-", "-"][..], "gen"),
            (&["-", "2", "1", "-", "no way"][..], "gate"),
            (&["-", "2", "1", "-", "north"][..], "a gate without a scan"),
        ] {
            let e = decoded(bad).unwrap_err();
            assert!(e.contains(named), "{bad:?}: {e}");
        }
        assert_eq!(AfterSale::default().chunks(), vec![]);
    }
}
