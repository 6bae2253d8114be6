//! `TICKET.CLAIM E user [COUNT n] [HOLD ms] [SECTION s] [CATEGORY c]
//! [ACCESSIBLE a] [SPLIT] [FROM name [KEY secret]]` or `TICKET.CLAIM E user
//! [HOLD ms] [FROM name [KEY secret]] SEATS id [id ...]`: its parser.

use super::{
    allocation_key, allocation_name, event_id, options, ranged, take_flag, user_id, MAX_HOLD_MS,
    MAX_TOTAL,
};
use crate::error::{quote, CommandError, TicketError};
use crate::pool::{ClaimOptions, FromAsk, SeatAsk};

/// A claim's arguments.
pub struct Claim<'a> {
    pub event: &'a str,
    pub user: &'a str,
    pub options: ClaimOptions,
    /// Whether the reply is an array (`COUNT`, or a pick of `SEATS`)
    /// rather than one ticket number.
    pub array: bool,
}

/// Parses `TICKET.CLAIM`'s arguments; the plain claim (no option) reads no
/// further and allocates nothing.
pub fn claim<'a>(given: &[&'a [u8]]) -> Result<Claim<'a>, CommandError> {
    let [event, user, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let (event, user) = (event_id(event)?, user_id(user)?);
    let options = match rest {
        [] => ClaimOptions::default(),
        _ => claim_options(rest)?,
    };
    let array = options.count.is_some() || options.seats.as_ref().is_some_and(|s| s.ids.is_some());
    Ok(Claim {
        event,
        user,
        options,
        array,
    })
}

/// The options of `TICKET.CLAIM E user [COUNT n] [HOLD ms] [SECTION s]
/// [CATEGORY c] [ACCESSIBLE a] [SPLIT] [FROM name [KEY secret]]` or
/// `TICKET.CLAIM E user [HOLD ms] [FROM name [KEY secret]] SEATS id [id
/// ...]` (SEATS takes every argument after it; the others in any order).
pub fn claim_options(given: &[&[u8]]) -> Result<ClaimOptions, TicketError> {
    let (given, ids) = seat_ids(given)?;
    let (split, given) = take_flag(&given, "SPLIT")?;
    let names = [
        "COUNT",
        "HOLD",
        "SECTION",
        "CATEGORY",
        "ACCESSIBLE",
        "FROM",
        "KEY",
    ];
    let [count, hold, section, category, accessible, from, key] =
        options(&given, names, &["SPLIT", "SEATS"])?;
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
    let from = match (from, key) {
        (None, Some(_)) => return Err(TicketError::Invalid("KEY goes with FROM".into())),
        (None, None) => None,
        (Some(name), key) => Some(Box::new(FromAsk {
            name: allocation_name(name)?.to_owned(),
            key: key.map(allocation_key).transpose()?,
        })),
    };
    Ok(ClaimOptions {
        from,
        count,
        hold: hold
            .map(|v| ranged(v, "HOLD", 0..=MAX_HOLD_MS))
            .transpose()?,
        seats: (ask != SeatAsk::default()).then(|| Box::new(ask)),
    })
}

/// The arguments before `SEATS`, and the seat ids after it.
pub(super) type SplitAtSeats<'a> = (Vec<&'a [u8]>, Option<Vec<i64>>);

/// The arguments before `SEATS` and the seat ids after it.
pub(super) fn seat_ids<'a>(given: &[&'a [u8]]) -> Result<SplitAtSeats<'a>, TicketError> {
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
pub(super) fn seat_name(raw: &[u8], what: &str, max: usize) -> Result<String, TicketError> {
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
