//! `TICKET.INIT E total [OPENS ms] [CLOSES ms] [HOLD ms] [LIMIT n]
//! [OFFER ms] [DRAW] [ADMIT n] [SEATS layout] [TRANSFER_UNTIL ms]`: its
//! parser.

use super::{event_id, options, ranged, take_flag, total, unix_ms, MAX_HOLD_MS};
use crate::error::{CommandError, TicketError};

/// The most arguments after `TICKET.INIT`: the event, the total, eight
/// options with their values and `DRAW`.
const MOST: usize = 2 + 8 * 2 + 1;

/// Parses `TICKET.INIT`'s arguments.
pub fn init<'a>(given: &[&'a [u8]]) -> Result<InitArgs<'a>, CommandError> {
    if !(2..=MOST).contains(&given.len()) {
        return Err(CommandError::Arity);
    }
    Ok(init_args(given)?)
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
    /// `TRANSFER_UNTIL ms`: when transfers stop (`None`: `closes_at`).
    pub transfer_until: Option<i64>,
}

/// Most offers per second of a draw event (`ADMIT`).
pub const MAX_ADMIT: i64 = protocol::model::MAX_ADMIT;

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
        "OPENS",
        "CLOSES",
        "HOLD",
        "LIMIT",
        "OFFER",
        "ADMIT",
        "SEATS",
        "TRANSFER_UNTIL",
    ];
    let [opens, closes, hold, limit, offer_given, admit, layout, until] =
        options(&given, names, &["DRAW"])?;
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
        transfer_until: until
            .map(|v| unix_ms(v, "TRANSFER_UNTIL"))
            .transpose()?
            .filter(|t| *t > 0),
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
