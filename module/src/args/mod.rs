//! Argument parsing for the `TICKET.*` commands: plain functions over byte
//! slices, so every rule is unit- and property-tested without a server.
//!
//! Arity is checked by each command (Redis's standard message); everything
//! here is about the *content* of an argument.

use crate::error::{quote, TicketError};
use crate::pool::SeatAsk;

pub use protocol::keys::{MAX_ID_LEN, MAX_TOTAL};

/// An event id: 1–64 bytes of `[A-Za-z0-9_.:-]`. Braces are refused so the
/// argument's hash tag is the key's hash tag and cluster clients route by it.
pub fn event_id(raw: &[u8]) -> Result<&str, TicketError> {
    match std::str::from_utf8(raw) {
        Ok(event) if protocol::keys::valid_event(event) => Ok(event),
        _ => Err(TicketError::Invalid(format!(
            "invalid event id {}: 1-{MAX_ID_LEN} bytes of [A-Za-z0-9_.:-]",
            quote(raw)
        ))),
    }
}

/// A user id: 1–64 bytes of valid UTF-8 without control characters, so it
/// fits MySQL `VARCHAR(64)` utf8mb4 and never poisons the sidecar later.
pub fn user_id(raw: &[u8]) -> Result<&str, TicketError> {
    let invalid =
        |why: &str| TicketError::Invalid(format!("invalid user id {}: {why}", quote(raw)));
    if raw.is_empty() || raw.len() > MAX_ID_LEN {
        return Err(invalid("must be 1-64 bytes"));
    }
    let user = std::str::from_utf8(raw).map_err(|_| invalid("not valid UTF-8"))?;
    match protocol::keys::user_problem(user) {
        Some(why) => Err(invalid(why)),
        None => Ok(user),
    }
}

/// A strict decimal integer: optional `-`, digits, no spaces or `+`.
fn integer(raw: &[u8], what: &str) -> Result<i64, TicketError> {
    std::str::from_utf8(raw)
        .ok()
        .filter(|s| !s.starts_with('+'))
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or_else(|| {
            TicketError::Invalid(format!("{what} must be an integer, got {}", quote(raw)))
        })
}

/// The number of tickets of a new event: `1..=2147483647`.
pub fn total(raw: &[u8]) -> Result<i64, TicketError> {
    let total = integer(raw, "total")?;
    if !(1..=MAX_TOTAL).contains(&total) {
        return Err(TicketError::Invalid(format!(
            "total must be between 1 and {MAX_TOTAL}, got {total}"
        )));
    }
    Ok(total)
}

/// A unix time in milliseconds, `0` meaning "none".
fn unix_ms(raw: &[u8], what: &str) -> Result<i64, TicketError> {
    let ms = integer(raw, what)?;
    if ms < 0 {
        return Err(TicketError::Invalid(format!(
            "{what} must be a unix time in ms (0 = none), got {ms}"
        )));
    }
    Ok(ms)
}

/// An integer option value within `range`.
fn ranged(
    raw: &[u8],
    what: &str,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, TicketError> {
    let n = integer(raw, what)?;
    if !range.contains(&n) {
        return Err(TicketError::Invalid(format!(
            "{what} must be between {} and {}, got {n}",
            range.start(),
            range.end()
        )));
    }
    Ok(n)
}

/// Longest hold of a claim, in ms (7 days).
pub const MAX_HOLD_MS: i64 = crate::pool::MAX_HOLD_MS;

/// The values of `NAME value` options, by position in `names`: each at most
/// once, names case-insensitive, in any order.
fn options<'a, const N: usize>(
    given: &[&'a [u8]],
    names: [&str; N],
) -> Result<[Option<&'a [u8]>; N], TicketError> {
    let mut values = [None; N];
    let mut rest = given.iter();
    while let Some(name) = rest.next() {
        let Some(i) = names
            .iter()
            .position(|n| name.eq_ignore_ascii_case(n.as_bytes()))
        else {
            return Err(TicketError::Invalid(format!(
                "unknown option {} (expected {})",
                quote(name),
                names.join(", ")
            )));
        };
        if values[i].is_some() {
            return Err(TicketError::Invalid(format!(
                "option {} given twice",
                names[i]
            )));
        }
        let value = rest
            .next()
            .ok_or_else(|| TicketError::Invalid(format!("option {} needs a value", names[i])))?;
        values[i] = Some(*value);
    }
    Ok(values)
}

/// `TICKET.INIT E total [OPENS ms] [CLOSES ms] [HOLD ms] [LIMIT n]
/// [OFFER ms] [DRAW] [ADMIT n]`, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitArgs<'a> {
    pub event: &'a str,
    pub total: i64,
    pub opens_at: i64,
    pub closes_at: i64,
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
    /// How long an offer of the waiting list is held, in ms (default: `hold`,
    /// or 10 minutes when `hold` is 0).
    pub offer: i64,
    /// `DRAW`: a fair draw at open (docs/design.md "The draw").
    pub draw: bool,
    /// `ADMIT n`: a draw event's offers per second.
    pub admit: Option<i64>,
    /// `SEATS layout`: a seated event's layout JSON (validated by the
    /// command: `protocol::seats::Layout::parse`).
    pub layout: Option<&'a [u8]>,
}

/// Most offers per second of a draw event (`ADMIT`).
pub const MAX_ADMIT: i64 = protocol::model::MAX_ADMIT;

/// Takes the flag `flag` (case-insensitive) out of `given` where a keyword
/// may stand (not as an option's value); whether it was there.
fn take_flag<'a>(given: &[&'a [u8]], flag: &str) -> Result<(bool, Vec<&'a [u8]>), TicketError> {
    let (mut found, mut rest, mut i) = (false, Vec::with_capacity(given.len()), 0);
    while i < given.len() {
        if given[i].eq_ignore_ascii_case(flag.as_bytes()) {
            if found {
                return Err(TicketError::Invalid(format!("option {flag} given twice")));
            }
            found = true;
            i += 1;
            continue;
        }
        // An option and its value (a missing value is reported later).
        rest.extend_from_slice(&given[i..(i + 2).min(given.len())]);
        i += 2;
    }
    Ok((found, rest))
}

/// Parses the arguments after `TICKET.INIT`. Options are case-insensitive and
/// may each appear once; a window must close after it opens.
pub fn init_args<'a>(args: &[&'a [u8]]) -> Result<InitArgs<'a>, TicketError> {
    let [event, total_raw, given @ ..] = args else {
        return Err(TicketError::Invalid(
            "TICKET.INIT needs an event and a total".into(),
        ));
    };
    let (draw, given) = take_flag(given, "DRAW")?;
    let names = [
        "OPENS", "CLOSES", "HOLD", "LIMIT", "OFFER", "ADMIT", "SEATS",
    ];
    let [opens, closes, hold, limit, offer_given, admit, layout] = match options(&given, names) {
        Err(TicketError::Invalid(why)) if why.starts_with("unknown option") => {
            return Err(TicketError::Invalid(format!(
                "{}, DRAW)",
                why.trim_end_matches(')')
            )))
        }
        other => other?,
    };
    let hold = hold.map_or(Ok(0), |v| ranged(v, "HOLD", 0..=MAX_HOLD_MS))?;
    let offer = offer_given.map_or(Ok(protocol::effect::default_offer(hold)), |v| {
        ranged(v, "OFFER", 1..=MAX_HOLD_MS)
    })?;
    let parsed = InitArgs {
        event: event_id(event)?,
        total: total(total_raw)?,
        opens_at: opens.map_or(Ok(0), |v| unix_ms(v, "OPENS"))?,
        closes_at: closes.map_or(Ok(0), |v| unix_ms(v, "CLOSES"))?,
        hold,
        limit: limit.map_or(Ok(1), |v| ranged(v, "LIMIT", 1..=crate::pool::MAX_LIMIT))?,
        offer,
        draw,
        admit: admit
            .map(|v| ranged(v, "ADMIT", 1..=MAX_ADMIT))
            .transpose()?,
        layout,
    };
    check_draw(&parsed, offer_given.is_some())?;
    if parsed.opens_at > 0 && parsed.closes_at > 0 && parsed.closes_at <= parsed.opens_at {
        return Err(TicketError::Invalid(format!(
            "CLOSES ({}) must be after OPENS ({})",
            parsed.closes_at, parsed.opens_at
        )));
    }
    Ok(parsed)
}

/// A draw's offers are held orders: `DRAW` needs `HOLD` > 0 or `OFFER`;
/// `ADMIT` needs `DRAW`.
fn check_draw(init: &InitArgs<'_>, offer_given: bool) -> Result<(), TicketError> {
    if init.draw && init.hold == 0 && !offer_given {
        return Err(TicketError::Invalid(
            "DRAW needs HOLD > 0 or OFFER (its offers are held orders)".into(),
        ));
    }
    if init.admit.is_some() && !init.draw {
        return Err(TicketError::Invalid("ADMIT needs DRAW".into()));
    }
    Ok(())
}

/// The options of `TICKET.CLAIM E user [COUNT n] [HOLD ms] [SECTION s]
/// [CATEGORY c] [ACCESSIBLE a] [SPLIT]` or `TICKET.CLAIM E user [HOLD ms]
/// SEATS id [id ...]` (SEATS takes every argument after it).
pub fn claim_options(given: &[&[u8]]) -> Result<crate::pool::ClaimOptions, TicketError> {
    let (given, ids) = seat_ids(given)?;
    let (split, given) = take_flag(&given, "SPLIT")?;
    let names = ["COUNT", "HOLD", "SECTION", "CATEGORY", "ACCESSIBLE"];
    let [count, hold, section, category, accessible] = match options(&given, names) {
        Err(TicketError::Invalid(why)) if why.starts_with("unknown option") => {
            return Err(TicketError::Invalid(format!(
                "{}, SPLIT, SEATS)",
                why.trim_end_matches(')')
            )))
        }
        other => other?,
    };
    let count = count
        .map(|v| ranged(v, "COUNT", 1..=crate::pool::MAX_LIMIT))
        .transpose()?;
    let ask = SeatAsk {
        section: section.map(|v| seat_name(v, "SECTION", 16)).transpose()?,
        category: category.map(|v| seat_name(v, "CATEGORY", 32)).transpose()?,
        accessible: accessible
            .map(|v| ranged(v, "ACCESSIBLE", 1..=count.unwrap_or(1)))
            .transpose()?,
        split,
        ids,
    };
    check_seat_ask(&ask, count.is_some())?;
    Ok(crate::pool::ClaimOptions {
        count,
        hold: hold
            .map(|v| ranged(v, "HOLD", 0..=MAX_HOLD_MS))
            .transpose()?,
        seats: (ask != SeatAsk::default()).then(|| Box::new(ask)),
    })
}

/// The arguments before `SEATS`, and the seat ids after it.
type SplitAtSeats<'a> = (Vec<&'a [u8]>, Option<Vec<i64>>);

/// The arguments before `SEATS` and the seat ids after it.
fn seat_ids<'a>(given: &[&'a [u8]]) -> Result<SplitAtSeats<'a>, TicketError> {
    let mut i = 0;
    while i < given.len() {
        if given[i].eq_ignore_ascii_case(b"SEATS") {
            let ids = given[i + 1..]
                .iter()
                .map(|v| ranged(v, "a seat id", 1..=MAX_TOTAL))
                .collect::<Result<Vec<i64>, _>>()?;
            if ids.is_empty() {
                return Err(TicketError::Invalid(
                    "SEATS needs at least one seat id".into(),
                ));
            }
            return Ok((given[..i].to_vec(), Some(ids)));
        }
        // A flag stands alone; an option takes its value with it.
        i += if given[i].eq_ignore_ascii_case(b"SPLIT") {
            1
        } else {
            2
        };
    }
    Ok((given.to_vec(), None))
}

/// A section or category name: 1-`max` bytes of `[A-Za-z0-9_.-]`.
fn seat_name(raw: &[u8], what: &str, max: usize) -> Result<String, TicketError> {
    let ok = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    if raw.is_empty() || raw.len() > max || !raw.iter().all(ok) {
        return Err(TicketError::Invalid(format!(
            "{what} must be 1-{max} bytes of [A-Za-z0-9_.-], got {}",
            quote(raw)
        )));
    }
    Ok(String::from_utf8_lossy(raw).into_owned())
}

/// `SEATS` goes with `HOLD` only; `SPLIT` not with `ACCESSIBLE`.
fn check_seat_ask(ask: &SeatAsk, count: bool) -> Result<(), TicketError> {
    let filters = ask.section.is_some() || ask.category.is_some() || ask.accessible.is_some();
    if ask.ids.is_some() && (count || filters || ask.split) {
        return Err(TicketError::Invalid(
            "SEATS takes exactly the seats given: no COUNT, SECTION, CATEGORY, ACCESSIBLE or SPLIT"
                .into(),
        ));
    }
    if ask.split && ask.accessible.is_some() {
        return Err(TicketError::Invalid(
            "SPLIT cannot go with ACCESSIBLE (wheelchair spaces are never split)".into(),
        ));
    }
    Ok(())
}

/// The optional `COUNT n` of `TICKET.WAIT E user [COUNT n]`.
pub fn wait_count(given: &[&[u8]]) -> Result<Option<i64>, TicketError> {
    let [count] = options(given, ["COUNT"])?;
    count
        .map(|v| ranged(v, "COUNT", 1..=crate::pool::MAX_LIMIT))
        .transpose()
}

/// The optional `FORCE` of `TICKET.DROP E [FORCE]`.
pub fn force_flag(arg: Option<&[u8]>) -> Result<bool, TicketError> {
    match arg {
        None => Ok(false),
        Some(word) if word.eq_ignore_ascii_case(b"FORCE") => Ok(true),
        Some(word) => Err(TicketError::Invalid(format!(
            "unknown option {} (expected FORCE)",
            quote(word)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn event_ids() {
        assert_eq!(event_id(b"concert-2026.A:1_x"), Ok("concert-2026.A:1_x"));
        for bad in [&b""[..], b"a{b}", b"a b", b"caf\xc3\xa9", &[b'a'; 65]] {
            assert!(event_id(bad).is_err(), "{bad:?} accepted");
        }
        assert!(event_id(&[b'a'; 64]).is_ok());
    }

    #[test]
    fn user_ids() {
        assert_eq!(user_id("jöe 42".as_bytes()), Ok("jöe 42"));
        assert!(user_id(b"").is_err());
        assert!(user_id(b"a\nb").is_err());
        assert!(user_id(b"a\0b").is_err());
        assert!(user_id(b"\xff\xfe").is_err());
        assert!(user_id(&[b'u'; 65]).is_err());
        // 64 bytes of two-byte characters is fine, 66 is not.
        assert!(user_id("é".repeat(32).as_bytes()).is_ok());
        assert!(user_id("é".repeat(33).as_bytes()).is_err());
    }

    #[test]
    fn totals() {
        assert_eq!(total(b"1"), Ok(1));
        assert_eq!(total(b"2147483647"), Ok(MAX_TOTAL));
        for bad in [
            &b"0"[..],
            b"-1",
            b"2147483648",
            b"+5",
            b" 5",
            b"5x",
            b"",
            b"1e3",
        ] {
            assert!(total(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn init_options() {
        let a = init_args(&[b"e", b"10", b"opens", b"5", b"CLOSES", b"9"]).unwrap();
        assert_eq!((a.total, a.opens_at, a.closes_at), (10, 5, 9));
        let a = init_args(&[b"e", b"10"]).unwrap();
        assert_eq!((a.opens_at, a.closes_at), (0, 0));
        for bad in [
            &[&b"e"[..], b"10", b"OPENS"][..],
            &[b"e", b"10", b"OPENS", b"1", b"OPENS", b"2"],
            &[b"e", b"10", b"LATER", b"1"],
            &[b"e", b"10", b"OPENS", b"-1"],
            &[b"e", b"10", b"OPENS", b"9", b"CLOSES", b"9"],
            &[b"e", b"0"],
        ] {
            assert!(init_args(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn checkout_options() {
        let a = init_args(&[b"e", b"10", b"hold", b"60000", b"LIMIT", b"4"]).unwrap();
        assert_eq!((a.hold, a.limit, a.offer), (60_000, 4, 60_000));
        let a = init_args(&[b"e", b"10", b"OFFER", b"5000"]).unwrap();
        assert_eq!((a.hold, a.offer), (0, 5_000));
        assert!(init_args(&[b"e", b"10", b"OFFER", b"0"]).is_err());
        assert_eq!(wait_count(&[b"count", b"3"]), Ok(Some(3)));
        assert_eq!(wait_count(&[]), Ok(None));
        assert!(wait_count(&[b"COUNT", b"0"]).is_err());
        let a = init_args(&[b"e", b"10"]).unwrap();
        assert_eq!((a.hold, a.limit), (0, 1));
        let o = claim_options(&[b"COUNT", b"3", b"hold", b"0"]).unwrap();
        assert_eq!((o.count, o.hold), (Some(3), Some(0)));
        for (bad, why) in [
            (
                &[&b"e"[..], b"10", b"LIMIT", b"0"][..],
                "LIMIT must be between 1 and 1000",
            ),
            (&[b"e", b"10", b"LIMIT", b"1001"], "LIMIT must be"),
            (
                &[b"e", b"10", b"HOLD", b"-1"],
                "HOLD must be between 0 and 604800000",
            ),
            (&[b"e", b"10", b"HOLD", b"604800001"], "HOLD must be"),
            (
                &[b"e", b"10", b"HOLD", b"1", b"hold", b"2"],
                "option HOLD given twice",
            ),
        ] {
            let err = init_args(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        for (bad, why) in [
            (
                &[&b"COUNT"[..], b"0"][..],
                "COUNT must be between 1 and 1000",
            ),
            (&[b"COUNT", b"1001"], "COUNT must be"),
            (&[b"COUNT", b"x"], "COUNT must be an integer"),
            (&[b"COUNT", b"1", b"COUNT", b"1"], "given twice"),
            (&[b"HOLD"], "needs a value"),
            (
                &[b"LATER", b"1"],
                "unknown option 'LATER' (expected COUNT, HOLD, SECTION, CATEGORY, ACCESSIBLE, SPLIT, SEATS)",
            ),
        ] {
            let err = claim_options(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
    }

    #[test]
    fn draw_options() {
        let a = init_args(&[b"e", b"10", b"draw", b"HOLD", b"1000", b"ADMIT", b"5"]).unwrap();
        assert_eq!((a.draw, a.admit, a.hold), (true, Some(5), 1000));
        let a = init_args(&[b"e", b"10", b"OFFER", b"1000", b"DRAW"]).unwrap();
        assert_eq!((a.draw, a.admit), (true, None));
        assert!(!init_args(&[b"e", b"10"]).unwrap().draw);
        for (bad, why) in [
            (
                &[&b"e"[..], b"10", b"DRAW"][..],
                "DRAW needs HOLD > 0 or OFFER",
            ),
            (&[b"e", b"10", b"HOLD", b"0", b"DRAW"], "DRAW needs HOLD"),
            (
                &[b"e", b"10", b"HOLD", b"9", b"DRAW", b"ADMIT", b"0"],
                "ADMIT must be between 1 and 1000000, got 0",
            ),
            (
                &[b"e", b"10", b"HOLD", b"9", b"DRAW", b"ADMIT", b"1000001"],
                "ADMIT must be between 1 and 1000000",
            ),
            (
                &[b"e", b"10", b"HOLD", b"9", b"ADMIT", b"5"],
                "ADMIT needs DRAW",
            ),
            (
                &[b"e", b"10", b"HOLD", b"9", b"DRAW", b"draw"],
                "option DRAW given twice",
            ),
            (
                &[b"e", b"10", b"HOLD", b"9", b"DRAW", b"ADMIT"],
                "option ADMIT needs a value",
            ),
            (
                &[b"e", b"10", b"LATER", b"1"],
                "unknown option 'LATER' (expected OPENS, CLOSES, HOLD, LIMIT, OFFER, ADMIT, SEATS, DRAW)",
            ),
        ] {
            let err = init_args(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad:?}: {err}");
        }
        // DRAW as an option's value is that option's (invalid) value.
        let err = init_args(&[b"e", b"10", b"HOLD", b"DRAW"])
            .unwrap_err()
            .to_string();
        assert!(err.contains("HOLD must be an integer"), "{err}");
    }

    #[test]
    fn force() {
        assert_eq!(force_flag(None), Ok(false));
        assert_eq!(force_flag(Some(b"force")), Ok(true));
        assert!(force_flag(Some(b"now")).is_err());
    }

    proptest! {
        #[test]
        fn any_total_in_range_round_trips(n in 1i64..=MAX_TOTAL) {
            prop_assert_eq!(total(n.to_string().as_bytes()), Ok(n));
        }

        #[test]
        fn accepted_user_ids_fit_varchar64(raw in proptest::collection::vec(any::<u8>(), 0..80)) {
            if let Ok(user) = user_id(&raw) {
                prop_assert!(!user.is_empty() && user.len() <= 64);
                prop_assert!(!user.chars().any(char::is_control));
            }
        }

        #[test]
        fn error_messages_never_carry_raw_controls(raw in proptest::collection::vec(any::<u8>(), 0..100)) {
            for err in [event_id(&raw).err(), user_id(&raw).err(), total(&raw).err()].into_iter().flatten() {
                let msg = err.to_string();
                prop_assert!(!msg.bytes().any(|b| b < 0x20 || b == 0x7f), "{:?}", msg);
            }
        }
    }
}
