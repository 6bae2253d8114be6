//! `TICKET.INIT event total [OPENS unix-ms] [CLOSES unix-ms] [HOLD ms] [LIMIT n] [OFFER ms] [DRAW] [ADMIT n] [SEATS layout] [TRANSFER_UNTIL unix-ms]`
//! — creates an event.
//!
//! Writes the meta hash (`status` = `open`, `minted` = 0: the pool is minted
//! lazily by the first claim, so any size inits in O(1); `incarnation` = a
//! random non-zero 64-bit number, 16 hex digits, that tells this event apart
//! from any earlier or later one of the same id), appends `op=init`
//! to the log and publishes the event id on the `ticket:events` channel so a
//! running sidecar starts draining it at once. Claims are accepted from
//! `OPENS` (if given) until `CLOSES` (if given); `0` means no bound.
//! `HOLD` is the default hold of a claim (0, the default: a claim is a
//! final sale; at most 7 days); `LIMIT` the most tickets one user may hold
//! (1..=1000, default 1); `OFFER` how long an offer of the waiting list is
//! held (1 ms to 7 days; default `HOLD`, or 10 minutes when `HOLD` is 0).
//! `DRAW` makes a draw event (docs/design.md "The draw"): a
//! secret 32-byte seed from Redis's random source is kept in the meta hash
//! and only its SHA-256 is logged (`draw`); without `OPENS` the event starts
//! `closed` and draws at `TICKET.OPEN`, with `OPENS` it draws then. `ADMIT`
//! paces its offers (1..=1,000,000 per second). `SEATS` makes a seated
//! event of a layout (JSON, `protocol::seats::layout`) whose seat ids are
//! the tickets; its stored form goes into the meta hash and the record.
//! `TRANSFER_UNTIL` ends `TICKET.TRANSFER` (default: `CLOSES`).
//!
//! Reply: `OK`.
//! Errors: `EXISTS` (the event already exists), `ERR` (invalid event id,
//! total outside `1..=2147483647`, unknown or repeated option, negative time,
//! `CLOSES` not after `OPENS`, `HOLD`, `LIMIT`, `OFFER` or `ADMIT` out of
//! range, `DRAW` without `HOLD` > 0 or `OFFER`, `ADMIT` without `DRAW`;
//! an invalid layout, or one too large as stored), `WRONGTYPE`.

use redis_module::{Context, RedisResult, RedisValue};

use std::borrow::Cow;

use protocol::draw::commitment_bytes;
use protocol::model::DrawTerms;
use protocol::record::{Checkout, Incarnation, Op};
use protocol::seats::Layout;

use crate::error::TicketError;

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::host::ffi::{publish, random_bytes, random_u64};
use crate::{args, pool, stats};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let init = argv.parse(args::init::init)?;
        let layout = init
            .layout
            .map(|raw| stored_layout(raw, init.total))
            .transpose()?;
        write(ctx, init.event, None, |store, out, clock| {
            pool::create(store, out, init.event, new_event(&init, layout), clock.now)
        })?;
        stats::INITS.bump();
        announce(ctx, init.event);
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}

/// Publishes `event` on `ticket:events` (after `TICKET.INIT` and a
/// restore's `COMMIT`), so a running sidecar drains its log at once.
pub fn announce(ctx: &Context, event: &str) {
    let channel = protocol::keys::EVENTS_CHANNEL.as_bytes();
    publish(ctx, channel, event.as_bytes());
}

/// The stored form of a layout given to `SEATS`, after every check of
/// `protocol::seats::layout`, that its seats are `total` and that the
/// stored form stays within the size limit.
fn stored_layout(raw: &[u8], total: i64) -> Result<String, TicketError> {
    let invalid = |why: String| TicketError::Invalid(format!("invalid layout: {why}"));
    let json = std::str::from_utf8(raw).map_err(|_| invalid("not UTF-8".into()))?;
    Layout::stored(json, total).map_err(|e| invalid(e.0))
}

/// The `op=init` of the event `init` describes, with a new incarnation and,
/// for a draw event, a new secret seed and its commitment.
fn new_event<'a>(init: &args::init::InitArgs<'_>, layout: Option<String>) -> Op<Cow<'a, str>> {
    let draw = match init.draw {
        false => None,
        true => {
            let seed: [u8; protocol::draw::SEED_LEN] = random_bytes();
            Some(DrawTerms {
                commitment: commitment_bytes(&seed),
                admit: init.admit,
                seed: Some(seed),
            })
        }
    };
    Op::Init {
        layout,
        total: init.total,
        opens_at: init.opens_at,
        closes_at: init.closes_at,
        checkout: Checkout {
            hold: init.hold,
            limit: init.limit,
            offer: init.offer,
        },
        incarnation: Some(draw_incarnation()),
        draw,
        transfer_until: init.transfer_until,
    }
}

/// A random non-zero incarnation, from Redis's own random source.
fn draw_incarnation() -> Incarnation {
    loop {
        match random_u64() {
            0 => continue,
            n => return Incarnation(n),
        }
    }
}
