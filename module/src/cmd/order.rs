//! `TICKET.ORDER event user` — read-only: a user's order.
//!
//! Reply: a map in RESP3, a flat array of name/value pairs in RESP2, in this
//! order: `tickets` (array, ascending), `state` (`held` or `sold`),
//! `expires_at` (the held order's deadline in unix ms; 0 when sold), and
//! for a seated event `seats` (the seat names, `A-2-103`, in ticket
//! order), then `gens` (each ticket's generation, in ticket order); nil
//! when the user holds nothing. On a primary a hold past its deadline is
//! nothing (it is free, swept or not); a replica shows it until its
//! primary's expiry arrives.
//! Errors: `NOEVENT`, `ERR` (invalid event or user id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{expired_from, guarded, ticket_array};
use crate::host::ffi::Argv;
use crate::host::store::{Access, RedisStore};
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, user) = argv.parse(args::event_user)?;
        let mut store = RedisStore::open(ctx, event, Access::Read, argv.user(2, user));
        let expired_from = expired_from(ctx, &store);
        let Some(order) = pool::order(&mut store, event, user, expired_from)? else {
            return Ok(RedisValue::Null);
        };
        let state = match order.expires_at {
            Some(_) => "held",
            None => "sold",
        };
        let mut fields = vec![
            ("tickets", ticket_array(&order.tickets)),
            ("state", RedisValue::BulkString(state.into())),
            (
                "expires_at",
                RedisValue::Integer(order.expires_at.unwrap_or(0)),
            ),
        ];
        if let Some(seats) = order.seats {
            let names = seats.into_iter().map(RedisValue::BulkString).collect();
            fields.push(("seats", RedisValue::Array(names)));
        }
        let gens = order.gens.into_iter().map(RedisValue::Integer).collect();
        fields.push(("gens", RedisValue::Array(gens)));
        super::status::reply_ordered_map(ctx, fields);
        Ok(RedisValue::NoReply)
    })
}
