//! `TICKET.TRANSFER E from to [TICKETS id ...]`, `TICKET.RESELL E user
//! [TICKETS id ...]`, `TICKET.UNLIST E user [TICKETS id ...]` and
//! `TICKET.SCAN E ticket gen [GATE g]`: their parsers (docs/design.md
//! "After the sale").

use protocol::record::MAX_TICKETS;

use super::{event_id, ranged, user_id, MAX_TOTAL};
use crate::error::{quote, CommandError, TicketError};

/// A transfer's event, giver, receiver and tickets (`None`: all the
/// giver's), ascending and distinct.
pub type TransferAsk<'a> = (&'a str, &'a str, &'a str, Option<Vec<i64>>);

/// Parses `TICKET.TRANSFER`'s arguments.
pub fn transfer<'a>(given: &[&'a [u8]]) -> Result<TransferAsk<'a>, CommandError> {
    let [event, from, to, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let (event, from, to) = (event_id(event)?, user_id(from)?, user_id(to)?);
    if from == to {
        return Err(TicketError::Invalid("TRANSFER needs two different users".into()).into());
    }
    let tickets = tickets_option(rest)?;
    Ok((event, from, to, tickets))
}

/// A resale's event, seller and tickets (`None`: all the seller's),
/// ascending and distinct.
pub type ResaleAsk<'a> = (&'a str, &'a str, Option<Vec<i64>>);

/// Parses `TICKET.RESELL`'s and `TICKET.UNLIST`'s arguments.
pub fn resale<'a>(given: &[&'a [u8]]) -> Result<ResaleAsk<'a>, CommandError> {
    let [event, seller, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let (event, seller) = (event_id(event)?, user_id(seller)?);
    Ok((event, seller, tickets_option(rest)?))
}

/// `[TICKETS id ...]`: `None` when absent; the ids ascending, distinct.
fn tickets_option(rest: &[&[u8]]) -> Result<Option<Vec<i64>>, CommandError> {
    match rest {
        [] => Ok(None),
        [word, ids @ ..] if word.eq_ignore_ascii_case(b"TICKETS") => {
            if ids.is_empty() || ids.len() > MAX_TICKETS {
                let why = format!("TICKETS needs 1-{MAX_TICKETS} ids");
                return Err(TicketError::Invalid(why).into());
            }
            let mut ids = ids
                .iter()
                .map(|v| ranged(v, "a ticket", 1..=MAX_TOTAL))
                .collect::<Result<Vec<i64>, _>>()?;
            ids.sort_unstable();
            ids.dedup();
            Ok(Some(ids))
        }
        [word, ..] => {
            let why = format!("unknown option {} (expected TICKETS)", quote(word));
            Err(TicketError::Invalid(why).into())
        }
    }
}

/// Parses `TICKET.SCAN`'s arguments: the event, ticket, generation and
/// gate.
pub fn scan<'a>(given: &[&'a [u8]]) -> Result<(&'a str, i64, i64, Option<&'a str>), CommandError> {
    let [event, ticket, gen, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    let event = event_id(event)?;
    let ticket = ranged(ticket, "the ticket", 1..=MAX_TOTAL)?;
    let gen = ranged(gen, "the generation", 1..=MAX_TOTAL)?;
    let gate = match rest {
        [] => None,
        [word, gate] if word.eq_ignore_ascii_case(b"GATE") => match std::str::from_utf8(gate) {
            Ok(g) if protocol::keys::valid_gate(g) => Some(g),
            _ => {
                let why = format!("invalid gate {}: 1-32 bytes of [A-Za-z0-9_.-]", quote(gate));
                return Err(TicketError::Invalid(why).into());
            }
        },
        _ => return Err(TicketError::Invalid("SCAN takes only GATE g".into()).into()),
    };
    Ok((event, ticket, gen, gate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<&[u8]> {
        text.split(' ').map(str::as_bytes).collect()
    }

    #[test]
    fn transfer_takes_all_or_tickets() {
        let (e, f, t, ids) = transfer(&args("e a b")).unwrap();
        assert_eq!((e, f, t, ids), ("e", "a", "b", None));
        let (.., ids) = transfer(&args("e a b tickets 4 2 4")).unwrap();
        assert_eq!(ids, Some(vec![2, 4]));
        assert!(transfer(&args("e a a")).is_err());
        assert!(transfer(&args("e a b TICKETS")).is_err());
        assert!(transfer(&args("e a b TICKETS 0")).is_err());
        assert!(transfer(&args("e a b COUNT 1")).is_err());
    }

    #[test]
    fn resale_takes_all_or_tickets() {
        assert_eq!(resale(&args("e a")).unwrap(), ("e", "a", None));
        let (.., ids) = resale(&args("e a TICKETS 9 3 9")).unwrap();
        assert_eq!(ids, Some(vec![3, 9]));
        assert!(matches!(resale(&args("e")), Err(CommandError::Arity)));
        assert!(resale(&args("e a TICKETS")).is_err());
        assert!(resale(&args("e a TICKETS x")).is_err());
        assert!(resale(&args("e a GATE 1")).is_err());
        assert!(resale(&args("e{ a")).is_err());
    }

    #[test]
    fn scan_takes_a_gate() {
        assert_eq!(scan(&args("e 12 3")).unwrap(), ("e", 12, 3, None));
        assert_eq!(
            scan(&args("e 12 3 GATE north")).unwrap(),
            ("e", 12, 3, Some("north"))
        );
        assert!(scan(&args("e 12 0")).is_err());
        assert!(scan(&args("e 12 1 GATE")).is_err());
        assert!(scan(&args("e 12 1 GATE a{b")).is_err());
    }
}
