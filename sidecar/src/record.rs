//! Decoding of one `ticket:{E}:log` stream entry into a typed [`Record`].
//!
//! Format (DESIGN.md "Stream record"):
//! `op <init|claim|cancel|open|close> event <E> [user <u>] [ticket <n>]
//! [total <n> opens_at <ms> closes_at <ms>] at <unix-ms>`.
//!
//! Anything that does not decode becomes a [`Malformed`] value carrying a
//! reason and a printable rendering of the raw fields; the daemon writes it to
//! `ticket_conflict` and moves on, so a bad entry never stalls the stream.
//! Unknown extra fields are ignored (forward compatibility).

use std::collections::HashMap;

/// Longest user id accepted, in bytes (fits `VARCHAR(64)` utf8mb4).
pub const MAX_USER_BYTES: usize = 64;

/// What happened, per the `op` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Event created with `total` tickets; 0 = no bound for the times.
    Init {
        /// Number of tickets, 1..=i32::MAX.
        total: i32,
        /// Opening time in unix ms, 0 = none.
        opens_at: u64,
        /// Closing time in unix ms, 0 = none.
        closes_at: u64,
    },
    /// `user` won ticket `ticket`.
    Claim {
        /// The winner.
        user: String,
        /// The ticket number, 1..=total.
        ticket: i32,
    },
    /// `user` gave ticket `ticket` back.
    Cancel {
        /// The former holder.
        user: String,
        /// The ticket number returned to the pool.
        ticket: i32,
    },
    /// Event (re)opened.
    Open,
    /// Event closed.
    Close,
}

impl Op {
    /// The `op` field's name, used as a metrics label.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Init { .. } => "init",
            Op::Claim { .. } => "claim",
            Op::Cancel { .. } => "cancel",
            Op::Open => "open",
            Op::Close => "close",
        }
    }
}

/// A decoded log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The change.
    pub op: Op,
    /// When Redis logged it (unix ms).
    pub at: u64,
}

/// An entry that could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// Short machine-readable reason, e.g. `missing field 'op'`.
    pub reason: String,
    /// The user id, when the entry carried a valid one.
    pub user: Option<String>,
    /// The ticket number, when the entry carried a valid one.
    pub ticket: Option<i32>,
    /// `name=value` rendering of all fields (lossy UTF-8, truncated).
    pub raw: String,
}

/// Checks a user id: 1..=64 bytes of UTF-8 without control characters.
pub fn valid_user(user: &str) -> bool {
    !user.is_empty() && user.len() <= MAX_USER_BYTES && !user.chars().any(char::is_control)
}

/// Renders raw fields as `name=value name=value`, at most `limit` chars.
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
    let out: String = out.chars().filter(|c| !c.is_control()).collect();
    out.chars().take(limit).collect()
}

/// Decodes the fields of one entry of `ticket:{event}:log`.
pub fn decode(event: &str, fields: &[(Vec<u8>, Vec<u8>)]) -> Result<Record, Malformed> {
    let mut map: HashMap<&[u8], &[u8]> = HashMap::new();
    let mut duplicate = None;
    for (k, v) in fields {
        if map.insert(k.as_slice(), v.as_slice()).is_some() {
            duplicate = Some(String::from_utf8_lossy(k).into_owned());
        }
    }
    let str_field = |name: &str| -> Option<&str> {
        map.get(name.as_bytes())
            .and_then(|v| std::str::from_utf8(v).ok())
    };
    let user = str_field("user")
        .filter(|u| valid_user(u))
        .map(str::to_owned);
    let ticket = str_field("ticket").and_then(parse_ticket);
    let fail = |reason: String| Malformed {
        reason,
        user: user.clone(),
        ticket,
        raw: render_raw(fields, 1000),
    };
    if let Some(name) = duplicate {
        return Err(fail(format!("duplicate field '{name}'")));
    }
    let op = match map.get(b"op".as_slice()) {
        Some(op) => *op,
        None => return Err(fail("missing field 'op'".into())),
    };
    match str_field("event") {
        Some(e) if e == event => {}
        Some(_) => return Err(fail("field 'event' does not match the key".into())),
        None => return Err(fail("missing field 'event'".into())),
    }
    let at = match str_field("at") {
        Some(at) => match parse_u64(at) {
            Some(at) => at,
            None => return Err(fail("field 'at' is not a unix-ms integer".into())),
        },
        None => return Err(fail("missing field 'at'".into())),
    };
    let need_user_ticket = |what: &str| -> Result<(String, i32), Malformed> {
        let u = match (map.get(b"user".as_slice()), &user) {
            (None, _) => return Err(fail(format!("{what}: missing field 'user'"))),
            (Some(_), None) => return Err(fail(format!("{what}: invalid user id"))),
            (Some(_), Some(u)) => u.clone(),
        };
        let t = match (map.get(b"ticket".as_slice()), ticket) {
            (None, _) => return Err(fail(format!("{what}: missing field 'ticket'"))),
            (Some(_), None) => return Err(fail(format!("{what}: invalid ticket number"))),
            (Some(_), Some(t)) => t,
        };
        Ok((u, t))
    };
    let op = match op {
        b"claim" => {
            let (user, ticket) = need_user_ticket("claim")?;
            Op::Claim { user, ticket }
        }
        b"cancel" => {
            let (user, ticket) = need_user_ticket("cancel")?;
            Op::Cancel { user, ticket }
        }
        b"init" => {
            let total = match str_field("total").and_then(parse_ticket) {
                Some(t) => t,
                None => return Err(fail("init: missing or invalid 'total'".into())),
            };
            let time = |name: &str| -> Result<u64, Malformed> {
                match map.get(name.as_bytes()) {
                    None => Ok(0),
                    Some(_) => str_field(name)
                        .and_then(parse_u64)
                        .ok_or_else(|| fail(format!("init: invalid '{name}'"))),
                }
            };
            Op::Init {
                total,
                opens_at: time("opens_at")?,
                closes_at: time("closes_at")?,
            }
        }
        b"open" => Op::Open,
        b"close" => Op::Close,
        other => {
            return Err(fail(format!(
                "unknown op '{}'",
                String::from_utf8_lossy(other)
                    .chars()
                    .take(32)
                    .collect::<String>()
            )))
        }
    };
    Ok(Record { op, at })
}

fn parse_u64(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A ticket number or total: decimal 1..=i32::MAX.
fn parse_ticket(text: &str) -> Option<i32> {
    parse_u64(text)
        .and_then(|n| i32::try_from(n).ok())
        .filter(|n| *n >= 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f(pairs: &[(&str, &str)]) -> Vec<(Vec<u8>, Vec<u8>)> {
        pairs
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn decodes_every_op() {
        let r = decode(
            "e1",
            &f(&[
                ("op", "claim"),
                ("event", "e1"),
                ("user", "u1"),
                ("ticket", "3"),
                ("at", "17"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r.op,
            Op::Claim {
                user: "u1".into(),
                ticket: 3
            }
        );
        assert_eq!(r.at, 17);
        let r = decode(
            "e1",
            &f(&[
                ("op", "cancel"),
                ("event", "e1"),
                ("user", "u1"),
                ("ticket", "3"),
                ("at", "18"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r.op,
            Op::Cancel {
                user: "u1".into(),
                ticket: 3
            }
        );
        let r = decode(
            "e1",
            &f(&[
                ("op", "init"),
                ("event", "e1"),
                ("total", "100"),
                ("opens_at", "5"),
                ("closes_at", "0"),
                ("at", "1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r.op,
            Op::Init {
                total: 100,
                opens_at: 5,
                closes_at: 0
            }
        );
        for (op, want) in [("open", Op::Open), ("close", Op::Close)] {
            let r = decode("e1", &f(&[("op", op), ("event", "e1"), ("at", "1")])).unwrap();
            assert_eq!(r.op, want);
        }
    }

    #[test]
    fn rejects_bad_entries_with_reasons() {
        let cases: &[(&[(&str, &str)], &str)] = &[
            (&[("event", "e1"), ("at", "1")], "missing field 'op'"),
            (
                &[("op", "claim"), ("event", "e2"), ("at", "1")],
                "does not match",
            ),
            (
                &[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("user", "u"),
                    ("ticket", "1"),
                ],
                "missing field 'at'",
            ),
            (
                &[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("ticket", "1"),
                    ("at", "1"),
                ],
                "missing field 'user'",
            ),
            (
                &[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("user", "u"),
                    ("ticket", "0"),
                    ("at", "1"),
                ],
                "invalid ticket",
            ),
            (
                &[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("user", "u"),
                    ("ticket", "x"),
                    ("at", "1"),
                ],
                "invalid ticket",
            ),
            (
                &[
                    ("op", "claim"),
                    ("event", "e1"),
                    ("user", "a\nb"),
                    ("ticket", "1"),
                    ("at", "1"),
                ],
                "invalid user",
            ),
            (
                &[
                    ("op", "init"),
                    ("event", "e1"),
                    ("total", "2147483648"),
                    ("at", "1"),
                ],
                "total",
            ),
            (
                &[("op", "explode"), ("event", "e1"), ("at", "1")],
                "unknown op",
            ),
            (
                &[
                    ("op", "open"),
                    ("op", "close"),
                    ("event", "e1"),
                    ("at", "1"),
                ],
                "duplicate",
            ),
            (&[("op", "open"), ("event", "e1"), ("at", "-1")], "'at'"),
        ];
        for (fields, want) in cases {
            let err = decode("e1", &f(fields)).unwrap_err();
            assert!(err.reason.contains(want), "{fields:?}: {}", err.reason);
        }
    }

    #[test]
    fn malformed_keeps_what_it_can() {
        let err = decode(
            "e1",
            &f(&[
                ("op", "claim"),
                ("event", "e1"),
                ("user", "bob"),
                ("ticket", "7"),
            ]),
        )
        .unwrap_err();
        assert_eq!(err.user.as_deref(), Some("bob"));
        assert_eq!(err.ticket, Some(7));
        assert!(err.raw.contains("user=bob"));
        let long = vec![(b"x".to_vec(), vec![b'y'; 5000])];
        assert_eq!(decode("e1", &long).unwrap_err().raw.chars().count(), 1000);
    }

    #[test]
    fn user_ids() {
        assert!(valid_user("alice"));
        assert!(valid_user("ü"));
        assert!(valid_user(&"a".repeat(64)));
        assert!(!valid_user(&"a".repeat(65)));
        assert!(!valid_user(""));
        assert!(!valid_user("a\u{7f}"));
    }

    proptest! {
        #[test]
        fn claim_roundtrip(user in "[^\\p{Cc}]{1,16}", ticket in 1..=i32::MAX, at in any::<u64>()) {
            prop_assume!(user.len() <= MAX_USER_BYTES);
            let t = ticket.to_string();
            let a = at.to_string();
            let fields = f(&[("op", "claim"), ("event", "ev"), ("user", &user), ("ticket", &t), ("at", &a)]);
            let r = decode("ev", &fields).unwrap();
            prop_assert_eq!(r, Record { op: Op::Claim { user, ticket }, at });
        }

        #[test]
        fn never_panics(fields in proptest::collection::vec((proptest::collection::vec(any::<u8>(), 0..8), proptest::collection::vec(any::<u8>(), 0..8)), 0..8)) {
            let _ = decode("ev", &fields);
        }
    }
}
