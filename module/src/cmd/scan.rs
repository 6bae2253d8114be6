//! `TICKET.SCAN event ticket gen [GATE g]` — a ticket presented at the
//! door (docs/design.md "After the sale"): the first scan of a sold
//! ticket at its current generation admits it and appends `op=scan` (its
//! generation, gate and time); every later one is refused.
//!
//! Reply: `OK` (admitted).
//! Errors: `USED` (`ticket 12 was scanned at <ms> at gate 'north'`),
//! `STALE` (`ticket 12 was transferred (generation 3 now)`), `NOTSOLD`
//! (free, held, listed for resale, or not a ticket of the event), `NOEVENT`, `ERR` (invalid
//! event, ticket, generation or gate), `TRYAGAIN`, `WRONGTYPE`/`CORRUPT`.
//! A refusal changes nothing.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, ticket, gen, gate) = argv.parse(args::after::scan)?;
        write(ctx, event, None, |store, out, clock| {
            pool::scan(store, out, event, (ticket, gen), gate, clock)
        })?;
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}
