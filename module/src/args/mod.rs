//! Argument parsing for the `TICKET.*` commands: one parser per command
//! syntax, each a plain function over the arguments after the command name
//! (byte slices), so every rule is unit- and property-tested without a
//! server, and a command's file reads like its doc comment.
//!
//! The syntaxes: [`event`] (`E`: STATUS, LAYOUT, SEATMAP, OPEN, CLOSE,
//! HEALED, ALLOCATIONS), [`event_user`] (`E user`: CONFIRM, CANCEL, HOLDER, ORDER,
//! LEAVE, POSITION), [`wait`], [`drop`], [`reapply`], [`restore`],
//! [`claim::claim`], [`init::init`], [`allocate::allocate`],
//! [`allocate::release`], [`after::transfer`], [`after::scan`]; `TICKET._APPLY` carries the effect
//! format `protocol::effect` decodes (a replica's hot path). Each answers [`CommandError::Arity`] (Redis's own
//! message) for a wrong number of arguments, and an `ERR` naming the
//! argument for anything else; below them, the rules of each value.

pub mod after;
pub mod allocate;
pub mod claim;
pub mod init;

use std::borrow::Cow;

use protocol::record::Record;
use protocol::restore::Step;
use protocol::StreamId;

use crate::error::{quote, CommandError, TicketError};

pub use protocol::keys::{MAX_ID_LEN, MAX_TOTAL};

/// An event id: 1–64 bytes of `[A-Za-z0-9_.:-]`. Braces are refused so the
/// argument's hash tag is the key's hash tag and cluster clients route by it.
pub fn event_id(raw: &[u8]) -> Result<&str, TicketError> {
    match printable_ascii(raw) {
        Some(event) if protocol::keys::valid_event(event) => Ok(event),
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
    if let Some(user) = printable_ascii(raw) {
        // Printable ASCII has no control characters.
        return Ok(user);
    }
    let user = std::str::from_utf8(raw).map_err(|_| invalid("not valid UTF-8"))?;
    match protocol::keys::user_problem(user) {
        Some(why) => Err(invalid(why)),
        None => Ok(user),
    }
}

/// `raw` as text when every byte is printable ASCII (space to `~`): most
/// ids, checked eight bytes at a time without UTF-8 decoding (the claim
/// path reads two per command).
fn printable_ascii(raw: &[u8]) -> Option<&str> {
    let mut words = raw.chunks_exact(8);
    let words_ok = words.all(|w| {
        let mut word = [0; 8];
        word.copy_from_slice(w);
        printable_word(u64::from_le_bytes(word))
    });
    match words_ok && words.remainder().iter().all(|b| (b' '..=b'~').contains(b)) {
        // SAFETY: ASCII bytes are valid UTF-8. (`from_utf8` would check
        // them again, at about 200 instructions an id: callgrind.)
        true => Some(unsafe { std::str::from_utf8_unchecked(raw) }),
        false => None,
    }
}

/// Whether all eight bytes of `x` are in `0x20..=0x7e`: none below `0x20`
/// (subtracting `0x20` from such a byte sets its high bit, where `x` has
/// none) and none above `0x7e` (adding 1 to it reaches the high bit, or it
/// had it).
fn printable_word(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    let above = (x.wrapping_add(ONES) | x) & HIGH;
    below | above == 0
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

/// An allocation's name: 1–32 bytes of `[A-Za-z0-9_.-]`.
pub fn allocation_name(raw: &[u8]) -> Result<&str, TicketError> {
    match printable_ascii(raw) {
        Some(name) if protocol::keys::valid_allocation(name) => Ok(name),
        _ => Err(TicketError::Invalid(format!(
            "invalid allocation name {}: 1-{} bytes of [A-Za-z0-9_.-]",
            quote(raw),
            protocol::keys::MAX_ALLOCATION_NAME
        ))),
    }
}

/// Longest allocation key, in bytes.
pub const MAX_KEY_LEN: usize = 256;

/// An allocation's `KEY`: 1–256 bytes, any (only its SHA-256 is kept).
pub fn allocation_key(raw: &[u8]) -> Result<Vec<u8>, TicketError> {
    match raw.len() {
        1..=MAX_KEY_LEN => Ok(raw.to_vec()),
        _ => Err(TicketError::Invalid(format!(
            "KEY must be 1-{MAX_KEY_LEN} bytes"
        ))),
    }
}

/// Longest hold of a claim, in ms (7 days).
pub const MAX_HOLD_MS: i64 = crate::pool::MAX_HOLD_MS;

/// The values of `NAME value` options, by position in `names`: each at most
/// once, names case-insensitive, in any order. `flags` are the syntax's
/// words without a value (taken out before), named when an option is unknown.
fn options<'a, const N: usize>(
    given: &[&'a [u8]],
    names: [&str; N],
    flags: &[&str],
) -> Result<[Option<&'a [u8]>; N], TicketError> {
    let mut values = [None; N];
    let mut rest = given.iter();
    while let Some(name) = rest.next() {
        let Some(i) = names
            .iter()
            .position(|n| name.eq_ignore_ascii_case(n.as_bytes()))
        else {
            let expected: Vec<&str> = names.iter().chain(flags).copied().collect();
            return Err(TicketError::Invalid(format!(
                "unknown option {} (expected {})",
                quote(name),
                expected.join(", ")
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

/// `E`: the event alone.
pub fn event<'a>(given: &[&'a [u8]]) -> Result<&'a str, CommandError> {
    let [event] = given else {
        return Err(CommandError::Arity);
    };
    Ok(event_id(event)?)
}

/// `E user`.
pub fn event_user<'a>(given: &[&'a [u8]]) -> Result<(&'a str, &'a str), CommandError> {
    let [event, user] = given else {
        return Err(CommandError::Arity);
    };
    Ok((event_id(event)?, user_id(user)?))
}

/// `TICKET.WAIT E user [COUNT n]`: the event, the user and the party size.
pub fn wait<'a>(given: &[&'a [u8]]) -> Result<(&'a str, &'a str, Option<i64>), CommandError> {
    let [event, user, rest @ ..] = given else {
        return Err(CommandError::Arity);
    };
    if rest.len() > 2 {
        return Err(CommandError::Arity);
    }
    let (event, user) = (event_id(event)?, user_id(user)?);
    Ok((event, user, wait_count(rest)?))
}

/// The optional `COUNT n` of `TICKET.WAIT E user [COUNT n]`.
fn wait_count(given: &[&[u8]]) -> Result<Option<i64>, TicketError> {
    let [count] = options(given, ["COUNT"], &[])?;
    count
        .map(|v| ranged(v, "COUNT", 1..=crate::pool::MAX_LIMIT))
        .transpose()
}

/// `TICKET.DROP E [FORCE]`: the event and whether `FORCE` was given.
pub fn drop<'a>(given: &[&'a [u8]]) -> Result<(&'a str, bool), CommandError> {
    let (event, force) = match given {
        [event] => (event, None),
        [event, force] => (event, Some(*force)),
        _ => return Err(CommandError::Arity),
    };
    Ok((event_id(event)?, force_flag(force)?))
}

/// The optional `FORCE` of `TICKET.DROP E [FORCE]`.
fn force_flag(arg: Option<&[u8]>) -> Result<bool, TicketError> {
    match arg {
        None => Ok(false),
        Some(word) if word.eq_ignore_ascii_case(b"FORCE") => Ok(true),
        Some(word) => Err(TicketError::Invalid(format!(
            "unknown option {} (expected FORCE)",
            quote(word)
        ))),
    }
}

/// `TICKET.REAPPLY E [SINCE id] field value [field value ...]`: the event,
/// the log position the sidecar planned on, and the lost entry's record,
/// decoded as the sidecar decodes a log entry.
pub type Reapply<'a> = (&'a str, Option<StreamId>, Record<Cow<'a, str>>);

/// Parses `TICKET.REAPPLY`'s arguments.
pub fn reapply<'a>(given: &[&'a [u8]]) -> Result<Reapply<'a>, CommandError> {
    let [event, first, _, ..] = given else {
        return Err(CommandError::Arity);
    };
    let event = event_id(event)?;
    let (since, fields) = match (first.eq_ignore_ascii_case(b"SINCE"), given.get(2)) {
        (true, Some(id)) => (Some(since_id(id)?), &given[3..]),
        (true, None) => return Err(CommandError::Arity),
        (false, _) => (None, &given[1..]),
    };
    Ok((event, since, lost_record(event, fields)?))
}

/// `TICKET.RESTORE E <step> ...`: the event and the restore step, in the
/// format `protocol::restore` writes and reads.
pub fn restore<'a>(given: &[&'a [u8]]) -> Result<(&'a str, Step<&'a str>), CommandError> {
    if given.len() < 2 {
        return Err(CommandError::Arity);
    }
    protocol::restore::decode(given)
        .map_err(|e| TicketError::Invalid(format!("TICKET.RESTORE: {e}")).into())
}

/// The `SINCE` stream id.
fn since_id(raw: &[u8]) -> Result<StreamId, TicketError> {
    std::str::from_utf8(raw)
        .ok()
        .and_then(StreamId::parse)
        .ok_or_else(|| TicketError::Invalid("TICKET.REAPPLY: SINCE needs a stream id".into()))
}

/// The lost entry's record from its `<field> <value>` pairs.
fn lost_record<'a>(event: &str, fields: &[&[u8]]) -> Result<Record<Cow<'a, str>>, TicketError> {
    if fields.is_empty() || !fields.len().is_multiple_of(2) {
        return Err(TicketError::Invalid(
            "TICKET.REAPPLY: fields come in <field> <value> pairs".into(),
        ));
    }
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = fields
        .chunks(2)
        .map(|p| (p[0].to_vec(), p[1].to_vec()))
        .collect();
    let record = protocol::record::decode(event, &pairs)
        .map_err(|m| TicketError::Invalid(format!("TICKET.REAPPLY: {} ({})", m.reason, m.raw)))?;
    Ok(Record {
        op: record.op.map_user(|u| Cow::Owned(u.clone())),
        at: record.at,
    })
}

#[cfg(test)]
mod tests {
    use super::claim::claim_options;
    use super::init::init_args;
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
    fn printable_words() {
        let printable = |b: u8| (b' '..=b'~').contains(&b);
        for b in 0..=255u8 {
            for at in [0, 3, 7] {
                let mut word = *b"abcdefgh";
                word[at] = b;
                let x = u64::from_le_bytes(word);
                assert_eq!(printable_word(x), printable(b), "byte {b:#x} at {at}");
            }
        }
    }

    proptest! {
        /// The printable-ASCII shortcut answers as the rules themselves do.
        #[test]
        fn ids_follow_their_rules(raw in prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..70),
            "[ -~]{0,70}".prop_map(String::into_bytes),
            "\\PC{0,40}".prop_map(String::into_bytes),
            "[\\x00-\\x9f]{0,10}".prop_map(String::into_bytes),
        ]) {
            let text = std::str::from_utf8(&raw).ok();
            let user = text.filter(|u| protocol::keys::user_problem(u).is_none());
            prop_assert_eq!(user_id(&raw).ok(), user);
            let event = text.filter(|e| protocol::keys::valid_event(e));
            prop_assert_eq!(event_id(&raw).ok(), event);
        }
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
                "unknown option 'LATER' (expected COUNT, HOLD, SECTION, CATEGORY, ACCESSIBLE, FROM, KEY, SPLIT, SEATS)",
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
                "unknown option 'LATER' (expected OPENS, CLOSES, HOLD, LIMIT, OFFER, ADMIT, SEATS, TRANSFER_UNTIL, DRAW)",
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

    /// Each syntax answers Redis's arity error for a wrong number of
    /// arguments, before looking at any of them.
    #[test]
    fn syntaxes_check_their_arity() {
        let (e, u): (&[u8], &[u8]) = (b"e", b"u");
        assert_eq!(event(&[]).err(), Some(CommandError::Arity));
        assert_eq!(event(&[e, u]).err(), Some(CommandError::Arity));
        assert_eq!(event(&[e]), Ok("e"));
        assert_eq!(event_user(&[e]).err(), Some(CommandError::Arity));
        assert_eq!(event_user(&[e, u, u]).err(), Some(CommandError::Arity));
        assert_eq!(event_user(&[e, u]), Ok(("e", "u")));
        assert_eq!(wait(&[e]).err(), Some(CommandError::Arity));
        assert_eq!(
            wait(&[e, u, b"COUNT", b"2", b"x"]).err(),
            Some(CommandError::Arity)
        );
        assert_eq!(wait(&[e, u, b"COUNT", b"2"]), Ok(("e", "u", Some(2))));
        assert_eq!(drop(&[]).err(), Some(CommandError::Arity));
        assert_eq!(drop(&[e, b"FORCE", b"x"]).err(), Some(CommandError::Arity));
        assert_eq!(drop(&[e, b"force"]), Ok(("e", true)));
        assert!(matches!(reapply(&[e, b"op"]), Err(CommandError::Arity)));
        assert!(matches!(
            reapply(&[e, b"SINCE", b"1-0"]),
            Err(CommandError::Ticket(_))
        ));
        assert!(matches!(restore(&[e]), Err(CommandError::Arity)));
        assert!(matches!(claim::claim(&[e]), Err(CommandError::Arity)));
        assert!(matches!(init::init(&[e]), Err(CommandError::Arity)));
        assert!(matches!(init::init(&[e; 20]), Err(CommandError::Arity)));
    }

    /// A bad event id is named before a bad user id, whatever follows.
    #[test]
    fn syntaxes_name_the_first_bad_argument() {
        let err = claim::claim(&[b"a b", b"", b"COUNT", b"0"]).err();
        let Some(CommandError::Ticket(e)) = err else {
            panic!("{err:?}")
        };
        assert!(e.to_string().contains("invalid event id 'a b'"), "{e}");
        let plain = claim::claim(&[b"e", b"u"]).map(|c| c.options);
        assert_eq!(plain.ok(), Some(crate::pool::ClaimOptions::default()));
    }

    /// One argument a hostile client may send: a keyword of some syntax,
    /// a number near a bound, non-ASCII or control text, or any bytes.
    fn hostile_argument() -> impl Strategy<Value = Vec<u8>> {
        let words = [
            "COUNT",
            "HOLD",
            "OPENS",
            "CLOSES",
            "LIMIT",
            "OFFER",
            "DRAW",
            "ADMIT",
            "SEATS",
            "SECTION",
            "CATEGORY",
            "ACCESSIBLE",
            "SPLIT",
            "FORCE",
            "FROM",
            "KEY",
            "RELEASE",
            "SINCE",
            "BEGIN",
            "ORDERS",
            "FREE",
            "COMMIT",
            "op",
            "claim",
            "hold",
            "user",
            "ticket",
            "tickets",
            "until",
            "at",
            "e",
            "u",
            "1-1",
            "0",
            "1",
            "-1",
            "1000",
            "1001",
            "2147483647",
            "2147483648",
            "9223372036854775807",
            "-9223372036854775808",
            "99999999999999999999",
            "",
            "\u{100}",
            "\u{4e00}",
            "\u{1f600}",
            "\u{c4}",
            "a\u{0}b",
            "\r\n",
            "{\"sections\":[]}",
        ];
        prop_oneof![
            3 => proptest::sample::select(words.to_vec()).prop_map(|w| w.as_bytes().to_vec()),
            1 => proptest::collection::vec(any::<u8>(), 0..24),
            1 => any::<String>().prop_map(String::into_bytes),
        ]
    }

    fn hostile_arguments() -> impl Strategy<Value = Vec<Vec<u8>>> {
        proptest::collection::vec(hostile_argument(), 0..16)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

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

        /// The fuzz target of the command arguments: every syntax's parser
        /// over hostile argument lists (keywords, numbers at and past their
        /// bounds, non-ASCII, control bytes, arbitrary bytes) never panics,
        /// and every error it gives is legal once rendered.
        #[test]
        fn no_parser_panics_on_any_arguments(given in hostile_arguments()) {
            let args: Vec<&[u8]> = given.iter().map(Vec::as_slice).collect();
            let errors = [
                event(&args).err(),
                event_user(&args).err(),
                wait(&args).err(),
                drop(&args).err(),
                reapply(&args).err(),
                restore(&args).err(),
                claim::claim(&args).err(),
                init::init(&args).err(),
                allocate::allocate(&args).err(),
                allocate::release(&args).err(),
            ];
            for e in errors.into_iter().flatten() {
                if let CommandError::Ticket(e) = e {
                    let text = crate::error::legal(&e.to_string());
                    prop_assert!(text.as_bytes().iter().all(|b| (0x20..=0x7e).contains(b)));
                }
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
