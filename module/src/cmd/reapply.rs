//! `TICKET.REAPPLY event <field> <value> [<field> <value> ...]` — re-applies
//! a write an unplanned failover lost (operator/sidecar only: the heal of
//! `ticketgate-sidecar` sends it).
//!
//! The fields are those of the lost log entry as MySQL's journal has them
//! (`op`, `event`, `user`, `ticket`/`tickets`, `until`, `at`; the `event`
//! field must name the event). The condition of each op (see
//! [`crate::reapply`]) is checked atomically; if it holds the record is
//! appended unchanged (same fields, a new id) and replicated as one
//! effect.
//!
//! Reply: the new entry's id (bulk string).
//! Errors (nothing changed): `CHANGED` (the condition no longer holds, with
//! the reason), `ERR` (odd field count, a field the log format refuses, an
//! `init`/`drop`/`restore`), `NOEVENT`, `TRYAGAIN` (the event is being
//! restored, or its keys disagree), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisString, RedisValue};

use super::{arguments, guarded, now_ms};
use crate::error::TicketError;
use crate::redis_store::{Access, RedisStore};
use crate::{args, reapply};

pub fn command(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    guarded(|| {
        let given = arguments(&argv, 3, usize::MAX)?;
        let event = args::event_id(given[0])?;
        let fields = &given[1..];
        if fields.len() % 2 != 0 {
            return Err(TicketError::Invalid(
                "TICKET.REAPPLY: fields come in <field> <value> pairs".into(),
            )
            .into());
        }
        let pairs: Vec<(Vec<u8>, Vec<u8>)> = fields
            .chunks(2)
            .map(|p| (p[0].to_vec(), p[1].to_vec()))
            .collect();
        let record = protocol::record::decode(event, &pairs).map_err(|m| {
            TicketError::Invalid(format!("TICKET.REAPPLY: {} ({})", m.reason, m.raw))
        })?;
        let mut store = RedisStore::open(ctx, event, Access::Write, None);
        let id = reapply::reapply(&mut store, event, &record.borrowed(), now_ms())?;
        Ok(RedisValue::BulkString(id.to_string()))
    })
}
