//! `TICKET.STATUS event` — read-only summary of an event.
//!
//! Reply: a map in RESP3, a flat array of name/value pairs in RESP2, in this
//! order: `total`, `remaining` (free tickets), `claimed` (tickets held or
//! sold), `status` (`open`/`closed`), `opens_at`, `closes_at` (unix ms, 0 =
//! none), `unsynced` (log entries the sidecar has not drained yet), `held`
//! (tickets in live holds), `waiting` (the waiting list's length),
//! `incarnation` (16 hex digits; nil for an event made before 0.3); a draw
//! event adds `draw` (the commitment: 64 hex digits of SHA-256 of its
//! seed), `seed` once drawn (64 hex digits) and `admit` when set; a seated
//! event adds `categories` (category, free seats, ... in layout order,
//! accessible seats included, every category listed) and `accessible`
//! (free wheelchair spaces); an event with free allocated tickets adds
//! `allocated` (their number, not in `remaining`), then an event with
//! tickets listed for resale nobody holds adds `resale` (their number, not
//! in `remaining`), last. On a
//! primary, holds past their deadline count as free even before the sweep
//! expires them; a replica counts them held until its primary's expiry.
//! Errors: `NOEVENT`, `ERR` (invalid event id), `WRONGTYPE`/`CORRUPT`.

use std::os::raw::c_long;

use redis_module::{raw, Context, RedisResult, RedisValue};

use super::{expired_from, guarded};
use crate::host::ffi::Argv;
use crate::host::store::{Access, RedisStore};
use crate::pool::DrawReport;
use crate::{args, pool};
use protocol::draw::hex;

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        let mut store = RedisStore::open(ctx, event, Access::Read, None);
        let expired_from = expired_from(ctx, &store);
        let r = pool::report(&mut store, event, expired_from)?;
        let mut fields = vec![
            ("total", RedisValue::Integer(r.total)),
            ("remaining", RedisValue::Integer(r.remaining)),
            ("claimed", RedisValue::Integer(r.claimed)),
            ("status", RedisValue::BulkString(r.status.as_str().into())),
            ("opens_at", RedisValue::Integer(r.opens_at)),
            ("closes_at", RedisValue::Integer(r.closes_at)),
            ("unsynced", RedisValue::Integer(r.unsynced)),
            ("held", RedisValue::Integer(r.held)),
            ("waiting", RedisValue::Integer(r.waiting)),
            (
                "incarnation",
                r.incarnation
                    .map_or(RedisValue::Null, |i| RedisValue::BulkString(i.to_string())),
            ),
        ];
        if let Some(draw) = &r.draw {
            fields.extend(draw_fields(draw));
        }
        if let Some((categories, accessible)) = r.seats {
            fields.extend(seat_fields(categories, accessible));
        }
        // Last, and only when there is any: other replies stay as they were.
        if r.allocated > 0 {
            fields.push(("allocated", RedisValue::Integer(r.allocated)));
        }
        if r.resale > 0 {
            fields.push(("resale", RedisValue::Integer(r.resale)));
        }
        reply_ordered_map(ctx, fields);
        Ok(RedisValue::NoReply)
    })
}

/// A draw event's fields: the commitment, the seed once drawn, `admit`.
fn draw_fields(draw: &DrawReport) -> Vec<(&'static str, RedisValue)> {
    let mut fields = vec![("draw", RedisValue::BulkString(hex(&draw.commitment)))];
    if let Some(seed) = &draw.seed {
        fields.push(("seed", RedisValue::BulkString(hex(seed))));
    }
    if let Some(admit) = draw.admit {
        fields.push(("admit", RedisValue::Integer(admit)));
    }
    fields
}

/// A seated event's fields: free seats by category (a map, in layout
/// order) and free accessible seats.
fn seat_fields(categories: Vec<(String, i64)>, accessible: i64) -> Vec<(&'static str, RedisValue)> {
    let by_category = categories
        .into_iter()
        .flat_map(|(name, free)| [RedisValue::BulkString(name), RedisValue::Integer(free)])
        .collect();
    vec![
        ("categories", RedisValue::Array(by_category)),
        ("accessible", RedisValue::Integer(accessible)),
    ]
}

/// Replies with a map in the given order (`RedisValue::OrderedMap` would sort
/// the names). Redis turns a map into a flat array for RESP2 clients.
pub fn reply_ordered_map(ctx: &Context, fields: Vec<(&str, RedisValue)>) {
    raw::reply_with_map(ctx.ctx, fields.len() as c_long);
    for (name, value) in fields {
        ctx.reply(Ok(RedisValue::BulkString(name.into())));
        ctx.reply(Ok(value));
    }
}
