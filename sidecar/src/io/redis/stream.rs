//! Reading an event's log `ticket:{E}:log` by id range (`XRANGE`), for
//! the trimmer's anchor check, the heal, rebuild and the checks; each
//! entry decoded as it is taken out of the reply (see `reply`). The
//! reader's `XREAD` is its own (`sync::reader`).

use redis::{ConnectionLike, RedisResult, Value};

use super::reply::take_entries;
use crate::model::Entry;
use protocol::keys::{self, Part};

/// The log key of an event.
pub fn log_key(event: &str) -> String {
    keys::key(event, Part::Log)
}

/// `XRANGE` of `event`'s log from `start` to `end` (XRANGE syntax: `-`,
/// `+`, `(id` for exclusive), at most `count` entries when given.
pub fn range_value(
    conn: &mut dyn ConnectionLike,
    event: &str,
    (start, end): (&str, &str),
    count: Option<usize>,
) -> RedisResult<Value> {
    let mut cmd = redis::cmd("XRANGE");
    cmd.arg(log_key(event)).arg(start).arg(end);
    if let Some(n) = count {
        cmd.arg("COUNT").arg(n);
    }
    cmd.query(conn)
}

/// The entries of `event`'s log from `start` to `end` (see
/// [`range_value`]), decoded.
pub fn range(
    conn: &mut dyn ConnectionLike,
    event: &str,
    span: (&str, &str),
    count: Option<usize>,
) -> RedisResult<Vec<Entry>> {
    Ok(take_entries(event, range_value(conn, event, span, count)?))
}
