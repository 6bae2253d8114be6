//! Reads that look at one event as a whole, for the checks around the
//! drain (reconcile, the verifier, the heal, rebuild), never for the drain
//! itself: what `TICKET.STATUS` answers ([`StatusReply`], [`RedisEvent`]
//! with the holders and holds), the log's `XINFO STREAM` counters, entries
//! after or up to an id, and the server's clock. Key names follow
//! docs/design.md, "Keys".

use std::collections::HashMap;

use redis::{ConnectionLike, RedisResult, Value};

use super::reply::{first_id, pairs, text, text_pairs};
use super::stream::{log_key, range, range_value};
use crate::model::live::redis_users;
use crate::model::{Entry, Live};
use protocol::keys::{self, Part};
use protocol::StreamId;

/// What `TICKET.STATUS` says of an event's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusReply {
    /// `open`, `closed` or `restoring`.
    pub status: String,
    /// 16 hex digits; None for an event created before 0.3.
    pub incarnation: Option<String>,
    /// Users on the waiting list.
    pub waiting: i64,
    /// Tickets claimed (held or sold).
    pub claimed: i64,
}

/// The raw `TICKET.STATUS` reply of `event`; `None` on `-NOEVENT`.
fn status_value(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<Value>> {
    match redis::cmd("TICKET.STATUS").arg(event).query(conn) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code() == Some("NOEVENT") => Ok(None),
        Err(e) => Err(e),
    }
}

/// The text fields of a `TICKET.STATUS` reply (nil values left out).
fn fields_of(status: &Value) -> HashMap<String, String> {
    text_pairs(status).into_iter().collect()
}

/// A number field of a `TICKET.STATUS` reply.
fn number(fields: &HashMap<String, String>, name: &str) -> Option<i64> {
    fields.get(name).and_then(|v| v.parse().ok())
}

/// A seated event's `categories` (name, free seats) from its
/// `TICKET.STATUS` reply, sorted by name; `None` for an unseated event.
fn categories_of(status: &Value) -> Option<Vec<(String, i64)>> {
    let (_, v) = pairs(status)
        .into_iter()
        .find(|(k, _)| text(k).as_deref() == Some("categories"))?;
    let mut out: Vec<(String, i64)> = text_pairs(&v)
        .into_iter()
        .filter_map(|(k, n)| Some((k, n.parse().ok()?)))
        .collect();
    out.sort();
    Some(out)
}

/// `TICKET.STATUS` of `event`; `None` when it has no meta (`-NOEVENT`).
pub fn read_status(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<StatusReply>> {
    let Some(fields) = status_value(conn, event)?.map(|s| fields_of(&s)) else {
        return Ok(None);
    };
    Ok(Some(StatusReply {
        status: fields.get("status").cloned().unwrap_or_default(),
        incarnation: fields.get("incarnation").cloned(),
        waiting: number(&fields, "waiting").unwrap_or(0),
        claimed: number(&fields, "claimed").unwrap_or(0),
    }))
}

/// What reconcile needs from Redis about one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisEvent {
    /// Users with tickets, sold or held (see [`redis_users`]).
    pub users: HashMap<String, Live>,
    /// Tickets remaining.
    pub remaining: i64,
    /// Tickets in live holds, when `TICKET.STATUS` reports `held`.
    pub held: Option<i64>,
    /// Entries in the log (not yet written and trimmed).
    pub unsynced: i64,
    /// A seated event's free seats by category (sorted by name).
    pub categories: Option<Vec<(String, i64)>>,
    /// Free allocated tickets (`TICKET.STATUS` `allocated`, 0 when absent).
    pub allocated: i64,
    /// Its allocations, when read ([`read_allocations`]).
    pub allocations: Option<Vec<Allocation>>,
}

/// One allocation as `TICKET.ALLOCATIONS` lists it: its name, free
/// tickets and release time (unix ms; None: none).
pub type Allocation = (String, i64, Option<i64>);

/// `TICKET.ALLOCATIONS event`, sorted by name; `None` when the module has
/// no such command (or the event none). Each allocation is read as field
/// pairs (`name`, `free`, `release`) or, without a `name` field, as
/// `name free claimed release` in that order.
pub fn read_allocations(
    conn: &mut dyn ConnectionLike,
    event: &str,
) -> RedisResult<Option<Vec<Allocation>>> {
    let reply: Value = match redis::cmd("TICKET.ALLOCATIONS").arg(event).query(conn) {
        Ok(v) => v,
        Err(e) if e.code() == Some("NOEVENT") || e.to_string().contains("unknown command") => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let Value::Array(items) = reply else {
        return Ok(Some(Vec::new()));
    };
    let mut out: Vec<Allocation> = items.iter().filter_map(allocation_of).collect();
    out.sort();
    Ok(Some(out))
}

/// One item of a `TICKET.ALLOCATIONS` reply.
fn allocation_of(item: &Value) -> Option<Allocation> {
    let fields: HashMap<String, String> = text_pairs(item).into_iter().collect();
    let release = |t: Option<&String>| t.and_then(|t| t.parse().ok()).filter(|at: &i64| *at > 0);
    if let Some(name) = fields.get("name") {
        let free = fields.get("free")?.parse().ok()?;
        return Some((name.clone(), free, release(fields.get("release"))));
    }
    let Value::Array(parts) = item else {
        return None;
    };
    let texts: Vec<Option<String>> = parts.iter().map(text).collect();
    let name = texts.first()?.clone()?;
    let free = texts.get(1)?.as_deref()?.parse().ok()?;
    Some((name, free, release(texts.get(3).and_then(Option::as_ref))))
}

/// Reads `TICKET.STATUS`, the holders hash and the holds zset of `event`;
/// `None` if it does not exist (`-NOEVENT`).
pub fn read_event(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<RedisEvent>> {
    let Some(status) = status_value(conn, event)? else {
        return Ok(None);
    };
    let fields = fields_of(&status);
    let (Some(remaining), Some(unsynced)) =
        (number(&fields, "remaining"), number(&fields, "unsynced"))
    else {
        return Ok(None);
    };
    let holders: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(keys::key(event, Part::Holders))
        .query(conn)?;
    let holds: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(keys::key(event, Part::Holds))
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(conn)?;
    let holds = holds.into_iter().map(|(u, s)| (u, s as i64)).collect();
    Ok(Some(RedisEvent {
        users: redis_users(holders, &holds),
        remaining,
        held: number(&fields, "held"),
        unsynced,
        categories: categories_of(&status),
        allocated: number(&fields, "allocated").unwrap_or(0),
        allocations: None,
    }))
}

/// `XINFO STREAM` of `event`'s log: last generated id, entries added,
/// length; `None` when the log does not exist.
pub fn stream_info(
    conn: &mut dyn ConnectionLike,
    event: &str,
) -> RedisResult<Option<(StreamId, u64, u64)>> {
    let info: Value = match redis::cmd("XINFO")
        .arg("STREAM")
        .arg(log_key(event))
        .query(conn)
    {
        Ok(v) => v,
        Err(e) if e.to_string().contains("no such key") => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut last = None;
    let (mut added, mut length) = (None, None);
    for (k, v) in pairs(&info) {
        let n = || match &v {
            Value::Int(n) => Some((*n).max(0) as u64),
            other => text(other).and_then(|t| t.parse().ok()),
        };
        match text(&k).as_deref() {
            Some("last-generated-id") => last = text(&v).and_then(|t| StreamId::parse(&t)),
            Some("entries-added") => added = n(),
            Some("length") => length = n(),
            _ => {}
        }
    }
    match (last, added, length) {
        (Some(l), Some(a), Some(n)) => Ok(Some((l, a, n))),
        _ => Err(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "XINFO STREAM without last-generated-id / entries-added / length (Redis 7 needed)",
        ))),
    }
}

/// Entries of `event`'s log after `after` (exclusive), at most `count`.
pub fn entries_after(
    conn: &mut dyn ConnectionLike,
    event: &str,
    after: StreamId,
    count: usize,
) -> RedisResult<Vec<Entry>> {
    range(conn, event, (&format!("({after}"), "+"), Some(count))
}

/// The id of the first entry of `event`'s log after `after`, if any
/// (the entry itself is not decoded).
pub fn first_after(
    conn: &mut dyn ConnectionLike,
    event: &str,
    after: StreamId,
) -> RedisResult<Option<StreamId>> {
    let v = range_value(conn, event, (&format!("({after}"), "+"), Some(1))?;
    Ok(first_id(&v))
}

/// How many entries of `event`'s log are at or below `offset` (at most
/// `cap`: reconcile's count of written entries not yet trimmed).
pub fn count_upto(
    conn: &mut dyn ConnectionLike,
    event: &str,
    offset: StreamId,
    cap: usize,
) -> RedisResult<u64> {
    let v = range_value(conn, event, ("-", &offset.to_string()), Some(cap))?;
    Ok(match v {
        Value::Array(items) => items.len() as u64,
        _ => 0,
    })
}

/// The server's clock (`TIME`), in unix ms: stream ids are stamped by it.
pub fn time_ms(conn: &mut dyn ConnectionLike) -> RedisResult<u64> {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(conn)?;
    Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bs(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn status_categories_of_a_seated_event() {
        let status = Value::Array(vec![
            bs("remaining"),
            Value::Int(5),
            bs("categories"),
            Value::Array(vec![bs("front"), Value::Int(2), bs("box"), Value::Int(3)]),
        ]);
        assert_eq!(
            categories_of(&status),
            Some(vec![("box".into(), 3), ("front".into(), 2)])
        );
        assert_eq!(
            fields_of(&status).get("remaining").map(String::as_str),
            Some("5")
        );
        assert_eq!(
            categories_of(&Value::Array(vec![bs("remaining"), Value::Int(5)])),
            None
        );
    }
}
