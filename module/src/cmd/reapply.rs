//! `TICKET.REAPPLY event [SINCE <id>] <field> <value> [<field> <value> ...]`
//! — re-applies a write an unplanned failover lost (operator/sidecar only:
//! the heal of `ticketgate-sidecar` sends it).
//!
//! The fields are those of the lost log entry as MySQL's journal has them
//! (`op`, `event`, `user`, `ticket`/`tickets`, `until`, `count`, `seed`,
//! `at`; the `event`
//! field must name the event). `SINCE`: the last log entry the caller read;
//! an entry logged after it that touches the record's user or tickets
//! refuses it. The condition of each op (see `pool::reapply`), and that the
//! new primary answered nothing about the user or tickets without logging
//! it (`pool::note`), are checked atomically; if they hold the record is
//! appended unchanged (same fields, a new id) and replicated as one
//! effect.
//!
//! Reply: the new entry's id (bulk string).
//! Errors (nothing changed): `CHANGED` (the condition no longer holds, with
//! the reason), `ERR` (odd field count, a field the log format refuses, an
//! `init`/`drop`/`restore`), `NOEVENT`, `TRYAGAIN` (the event is being
//! restored, or its keys disagree), `WRONGTYPE`/`CORRUPT`.

use std::borrow::Cow;

use redis_module::{Context, RedisResult, RedisValue};

use protocol::record::Record;
use protocol::StreamId;

use super::{arguments, guarded, write};
use crate::error::TicketError;
use crate::host::argv::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let given = arguments(argv, 3, usize::MAX)?;
        let event = args::event_id(given[0])?;
        let (since, fields) = match given[1].eq_ignore_ascii_case(b"SINCE") {
            true => (Some(since_id(given[2])?), &given[3..]),
            false => (None, &given[1..]),
        };
        let record = decode(event, fields)?;
        let id = write(ctx, event, None, |store, out, clock| {
            pool::reapply(store, out, event, (record, since), clock.now)
        })?;
        Ok(RedisValue::BulkString(id.to_string()))
    })
}

/// The `SINCE` stream id.
fn since_id(raw: &[u8]) -> Result<StreamId, TicketError> {
    std::str::from_utf8(raw)
        .ok()
        .and_then(StreamId::parse)
        .ok_or_else(|| TicketError::Invalid("TICKET.REAPPLY: SINCE needs a stream id".into()))
}

/// The lost entry's record from its `<field> <value>` pairs, as the
/// sidecar decodes a log entry.
fn decode<'a>(event: &str, fields: &[&[u8]]) -> Result<Record<Cow<'a, str>>, TicketError> {
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
