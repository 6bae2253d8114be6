//! `TICKET.ALLOCATE E name (COUNT n [SECTION s] [CATEGORY c] | SEATS id
//! [id ...]) [KEY secret] [RELEASE unix-ms]` and `TICKET.RELEASE E name
//! [COUNT n | SEATS id [id ...]]`: their parsers. `SEATS` takes the ids
//! after it, up to `KEY` or `RELEASE`.

use protocol::record::MAX_TICKETS;

use super::claim::{seat_name, SplitAtSeats};
use super::{allocation_key, allocation_name, event_id, options, ranged, unix_ms, MAX_TOTAL};
use crate::error::{CommandError, TicketError};
use crate::pool::{AllocateAsk, ReleaseAsk, SeatAsk};

/// Most tickets one `ALLOCATE` or `RELEASE` names or counts.
const MAX_COUNT: i64 = MAX_TICKETS as i64;

/// Parses `TICKET.ALLOCATE`'s arguments.
pub fn allocate<'a>(given: &[&'a [u8]]) -> Result<(&'a str, AllocateAsk), CommandError> {
    let [event, name, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let (event, name) = (event_id(event)?, allocation_name(name)?);
    let (rest, ids) = seats_then(rest, &["KEY", "RELEASE"])?;
    let names = ["COUNT", "SECTION", "CATEGORY", "KEY", "RELEASE"];
    let [count, section, category, key, release] = options(&rest, names, &["SEATS"])?;
    let count = count
        .map(|v| ranged(v, "COUNT", 1..=MAX_COUNT))
        .transpose()?;
    let ask = SeatAsk {
        section: section.map(|v| seat_name(v, "SECTION", 16)).transpose()?,
        category: category.map(|v| seat_name(v, "CATEGORY", 32)).transpose()?,
        ids,
        ..SeatAsk::default()
    };
    let count = match (count, &ask.ids) {
        (Some(n), None) => n,
        (None, Some(_)) if ask.section.is_none() && ask.category.is_none() => 0,
        // Only a restored allocation's key is set so (the pool checks).
        (None, None) if ask.section.is_none() && ask.category.is_none() => 0,
        _ => {
            return Err(TicketError::Invalid(
                "ALLOCATE takes COUNT n (with SECTION, CATEGORY) or SEATS id ..., not both".into(),
            )
            .into())
        }
    };
    let release = release.map(|v| unix_ms(v, "RELEASE")).transpose()?;
    Ok((
        event,
        AllocateAsk {
            name: name.to_owned(),
            count,
            ask,
            key: key.map(allocation_key).transpose()?,
            release: release.filter(|r| *r > 0),
        },
    ))
}

/// Parses `TICKET.RELEASE`'s arguments: the event, the allocation and
/// what to release (all by default).
pub fn release<'a>(given: &[&'a [u8]]) -> Result<(&'a str, &'a str, ReleaseAsk), CommandError> {
    let [event, name, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let (event, name) = (event_id(event)?, allocation_name(name)?);
    let (rest, ids) = seats_then(rest, &[])?;
    let [count] = options(&rest, ["COUNT"], &["SEATS"])?;
    let ask = match (count, ids) {
        (None, None) => ReleaseAsk::All,
        (Some(n), None) => ReleaseAsk::Count(ranged(n, "COUNT", 1..=MAX_COUNT)?),
        (None, Some(ids)) => ReleaseAsk::Tickets(ids),
        (Some(_), Some(_)) => {
            return Err(TicketError::Invalid(
                "RELEASE takes COUNT n or SEATS id ..., not both".into(),
            )
            .into())
        }
    };
    Ok((event, name, ask))
}

/// The arguments but `SEATS id ...`, and those ids: `SEATS` takes the
/// arguments after it up to the first of `then` (at most 1000 ids).
fn seats_then<'a>(given: &[&'a [u8]], then: &[&str]) -> Result<SplitAtSeats<'a>, TicketError> {
    let is = |arg: &[u8], word: &str| arg.eq_ignore_ascii_case(word.as_bytes());
    let Some(at) = given.iter().position(|a| is(a, "SEATS")) else {
        return Ok((given.to_vec(), None));
    };
    let after = &given[at + 1..];
    let end = after
        .iter()
        .position(|a| then.iter().any(|w| is(a, w)))
        .unwrap_or(after.len());
    if end == 0 || end > MAX_TICKETS {
        return Err(TicketError::Invalid(format!(
            "SEATS needs 1-{MAX_TICKETS} ids"
        )));
    }
    let ids = after[..end]
        .iter()
        .map(|v| ranged(v, "a seat id", 1..=MAX_TOTAL))
        .collect::<Result<Vec<i64>, _>>()?;
    let mut rest = given[..at].to_vec();
    rest.extend_from_slice(&after[end..]);
    Ok((rest, Some(ids)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<&[u8]> {
        text.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn allocate_takes_a_count_or_seats() {
        let (e, a) = allocate(&args("e p COUNT 4 key s3cret RELEASE 99")).unwrap();
        assert_eq!((e, a.name.as_str(), a.count), ("e", "p", 4));
        assert_eq!(
            (a.key.as_deref(), a.release),
            (Some(&b"s3cret"[..]), Some(99))
        );
        let (_, a) = allocate(&args("e p SEATS 3 1 2 RELEASE 5 KEY k")).unwrap();
        assert_eq!((a.ask.ids, a.release), (Some(vec![3, 1, 2]), Some(5)));
        let (_, a) = allocate(&args("e p SECTION A COUNT 2 CATEGORY vip")).unwrap();
        assert_eq!(
            (a.ask.section.as_deref(), a.ask.category.as_deref()),
            (Some("A"), Some("vip"))
        );
        for (bad, why) in [
            ("e p COUNT 2 SEATS 1", "not both"),
            ("e p SECTION A SEATS 1", "not both"),
            ("e p SEATS", "SEATS needs"),
            ("e p SEATS KEY k", "SEATS needs"),
            ("e p COUNT 0", "COUNT must be"),
            ("e p COUNT 1001", "COUNT must be"),
            ("e a:b COUNT 1", "invalid allocation name"),
            ("e p COUNT 1 RELEASE -1", "RELEASE must be"),
            ("e p COUNT 1 KEY", "needs a value"),
            ("e p COUNT 1 FROM x", "unknown option"),
        ] {
            let err = allocate(&args(bad)).err();
            let Some(CommandError::Ticket(err)) = err else {
                panic!("{bad}: {err:?}")
            };
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
        assert!(matches!(allocate(&args("e")), Err(CommandError::Arity)));
        let (_, a) = allocate(&args("e p KEY k")).unwrap();
        assert_eq!(
            (a.count, a.ask.ids, a.key.as_deref()),
            (0, None, Some(&b"k"[..]))
        );
        let long = "x".repeat(33);
        assert!(allocate(&args(&format!("e {long} COUNT 1"))).is_err());
    }

    #[test]
    fn release_takes_all_a_count_or_tickets() {
        assert_eq!(
            release(&args("e p")).ok(),
            Some(("e", "p", ReleaseAsk::All))
        );
        assert_eq!(
            release(&args("e p count 3")).ok(),
            Some(("e", "p", ReleaseAsk::Count(3)))
        );
        assert_eq!(
            release(&args("e p SEATS 4 2")).ok(),
            Some(("e", "p", ReleaseAsk::Tickets(vec![4, 2])))
        );
        for bad in [
            "e p COUNT 1 SEATS 2",
            "e p COUNT 0",
            "e p SEATS",
            "e p SEATS x",
            "e p KEY k",
        ] {
            assert!(release(&args(bad)).is_err(), "{bad}");
        }
    }
}
