//! The trimmer's side of a log: `XTRIM MINID` of what MySQL committed,
//! and the lag gauges (entries left in each log and the age of its oldest
//! entry). Only committed entries are ever trimmed (docs/design.md "The
//! sidecar's pipeline").

use redis::{ConnectionLike, RedisResult, Value};

use super::reply::first_id;
use super::stream::log_key;
use protocol::StreamId;

/// `XTRIM ticket:{E}:log MINID = <next id after offset>`: drops the written
/// entries (and only those). Returns the number of entries removed.
pub fn trim(conn: &mut dyn ConnectionLike, event: &str, offset: StreamId) -> RedisResult<u64> {
    let Some(minid) = offset.next() else {
        return Ok(0);
    };
    redis::cmd("XTRIM")
        .arg(log_key(event))
        .arg("MINID")
        .arg("=")
        .arg(minid.to_string())
        .query(conn)
}

/// Entries left in each log and the age in ms of its oldest entry (0 if
/// empty), for many events in one pipelined round trip.
/// In cluster mode the keys live on different nodes, so the commands are
/// sent one by one (routed by key) instead of pipelined.
pub fn lag_all(
    conn: &mut dyn ConnectionLike,
    events: &[String],
    now_ms: u64,
    pipelined: bool,
) -> RedisResult<Vec<(u64, u64)>> {
    let mut replies: Vec<Value> = Vec::with_capacity(events.len() * 2);
    let mut p = redis::pipe();
    for e in events {
        let key = log_key(e);
        let mut xlen = redis::cmd("XLEN");
        xlen.arg(&key);
        let mut first = redis::cmd("XRANGE");
        first.arg(&key).arg("-").arg("+").arg("COUNT").arg(1);
        if pipelined {
            p.add_command(xlen).add_command(first);
        } else {
            replies.push(xlen.query(conn)?);
            replies.push(first.query(conn)?);
        }
    }
    if pipelined {
        replies = p.query(conn)?;
    }
    Ok(replies
        .chunks(2)
        .map(|c| lag_of(c.first(), c.get(1), now_ms))
        .collect())
}

/// (entries, age of the oldest in ms) from an `XLEN` and an `XRANGE
/// COUNT 1` reply.
fn lag_of(xlen: Option<&Value>, first: Option<&Value>, now_ms: u64) -> (u64, u64) {
    let len = match xlen {
        Some(Value::Int(n)) => (*n).max(0) as u64,
        _ => 0,
    };
    let oldest = first.and_then(first_id);
    let age = match len {
        0 => 0,
        _ => oldest.map_or(0, |id| now_ms.saturating_sub(id.ms)),
    };
    (len, age)
}

/// [`lag_all`] for one event.
pub fn lag(conn: &mut dyn ConnectionLike, event: &str, now_ms: u64) -> RedisResult<(u64, u64)> {
    Ok(lag_all(conn, &[event.to_owned()], now_ms, false)?
        .first()
        .copied()
        .unwrap_or((0, 0)))
}
