//! Shared helpers of the `cluster_*` end-to-end tests (included with
//! `#[path]` from tests/tests/*.rs; a subdirectory, so not a test crate of its own). They work over
//! any connection (a cluster connection routes each command by the event).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;
use redis::{ConnectionLike, Value};

/// Name of one of the event's keys.
pub fn key(event: &str, part: &str) -> String {
    format!("ticket:{{{event}}}:{part}")
}

/// `TICKET.STATUS E` as field -> value (RESP2 flat array or RESP3 map).
pub fn status(conn: &mut dyn ConnectionLike, event: &str) -> HashMap<String, String> {
    let v: Value = redis::cmd("TICKET.STATUS")
        .arg(event)
        .query(conn)
        .unwrap_or_else(|e| panic!("TICKET.STATUS {event}: {e}"));
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::SimpleString(s) => s.clone(),
        Value::Int(n) => n.to_string(),
        other => format!("{other:?}"),
    };
    let pairs: Vec<(Value, Value)> = match v {
        Value::Map(m) => m,
        Value::Array(a) => a.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect(),
        other => panic!("TICKET.STATUS {event}: unexpected reply {other:?}"),
    };
    pairs.iter().map(|(k, v)| (text(k), text(v))).collect()
}

/// A numeric field of `TICKET.STATUS`.
pub fn status_num(conn: &mut dyn ConnectionLike, event: &str, field: &str) -> i64 {
    let s = status(conn, event);
    s.get(field)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("TICKET.STATUS {event}: no numeric {field} in {s:?}"))
}

/// The `holders` hash of the event: user -> ticket.
pub fn holders(conn: &mut dyn ConnectionLike, event: &str) -> HashMap<String, i64> {
    redis::cmd("HGETALL")
        .arg(key(event, "holders"))
        .query(conn)
        .unwrap_or_else(|e| panic!("HGETALL holders of {event}: {e}"))
}

/// Ticket numbers held by more than one user (ticket -> users).
pub fn doubled_tickets(holders: &HashMap<String, i64>) -> BTreeMap<i64, Vec<String>> {
    let mut by_ticket: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    for (u, t) in holders {
        by_ticket.entry(*t).or_default().push(u.clone());
    }
    by_ticket.retain(|_, users| users.len() > 1);
    by_ticket
}

fn mysql_conn(url: &str) -> mysql::Result<mysql::Conn> {
    let opts = mysql::Opts::from_url(url).map_err(mysql::Error::UrlError)?;
    mysql::Conn::new(opts)
}

/// MySQL's active participations of the event: user -> ticket.
pub fn mysql_active(url: &str, event: &str) -> mysql::Result<HashMap<String, i64>> {
    let rows: Vec<(String, i64)> = mysql_conn(url)?.exec(
        "SELECT user_id, ticket_number FROM ticket_participation \
         WHERE event_id = ? AND status = 'active'",
        (event,),
    )?;
    Ok(rows.into_iter().collect())
}

/// Ticket numbers with more than one active row in MySQL, per event.
pub fn mysql_doubled_tickets(url: &str) -> Vec<(String, i64, i64)> {
    mysql_conn(url)
        .and_then(|mut c| {
            c.query(
                "SELECT event_id, ticket_number, COUNT(*) FROM ticket_participation \
                 WHERE status = 'active' GROUP BY event_id, ticket_number HAVING COUNT(*) > 1",
            )
        })
        .unwrap_or_else(|e| panic!("query doubled tickets: {e}"))
}

/// `ticket_stock.remaining_stock` of the event, if the row exists.
pub fn mysql_remaining(url: &str, event: &str) -> mysql::Result<Option<i64>> {
    mysql_conn(url)?.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )
}

/// Every `ticket_conflict` row: (event, stream id, reason, detail).
pub fn conflicts(url: &str) -> Vec<(String, String, String, String)> {
    mysql_conn(url)
        .and_then(|mut c| {
            c.query("SELECT event_id, stream_id, reason, COALESCE(detail, '') FROM ticket_conflict ORDER BY id")
        })
        .unwrap_or_else(|e| panic!("read ticket_conflict: {e}"))
}

/// Why the event is not (yet) drained into MySQL exactly, or `None` when
/// the log is empty and MySQL's active rows and stock equal Redis.
pub fn drain_gap(conn: &mut dyn ConnectionLike, url: &str, event: &str) -> Option<String> {
    let unsynced = status_num(conn, event, "unsynced");
    let remaining = status_num(conn, event, "remaining");
    let h = holders(conn, event);
    let active = match mysql_active(url, event) {
        Ok(a) => a,
        Err(e) => return Some(format!("{event}: MySQL: {e}")),
    };
    let stock = match mysql_remaining(url, event) {
        Ok(s) => s,
        Err(e) => return Some(format!("{event}: MySQL: {e}")),
    };
    if unsynced == 0 && active == h && stock == Some(remaining) {
        return None;
    }
    let missing = h.iter().filter(|(u, t)| active.get(*u) != Some(t)).count();
    let extra = active.iter().filter(|(u, t)| h.get(*u) != Some(t)).count();
    Some(format!(
        "{event}: unsynced={unsynced} redis holders={} remaining={remaining}; \
         mysql active={} stock={stock:?}; {missing} holders missing/different in MySQL, \
         {extra} MySQL rows not in Redis",
        h.len(),
        active.len()
    ))
}

/// Waits until every event is drained exactly (see [`drain_gap`]); panics
/// with the remaining gaps and the tail of `log()` after `timeout`.
pub fn wait_drained(
    conn: &mut dyn ConnectionLike,
    url: &str,
    events: &[String],
    timeout: Duration,
    log: &dyn Fn() -> String,
) {
    let deadline = Instant::now() + timeout;
    loop {
        let gaps: Vec<String> = events
            .iter()
            .filter_map(|e| drain_gap(conn, url, e))
            .collect();
        if gaps.is_empty() {
            return;
        }
        if Instant::now() >= deadline {
            let text = log();
            let lines: Vec<&str> = text.lines().collect();
            panic!(
                "not drained after {timeout:?}:\n{}\n--- sidecar log (tail) ---\n{}",
                gaps.join("\n"),
                lines[lines.len().saturating_sub(60)..].join("\n")
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `collision` conflicts: (event, user, ticket) of claims MySQL refused
/// because another user holds that number there.
pub fn collisions(url: &str) -> Vec<(String, String, i64)> {
    mysql_conn(url)
        .and_then(|mut c| {
            c.query(
                "SELECT event_id, COALESCE(user_id, ''), COALESCE(ticket_number, -1) \
                 FROM ticket_conflict WHERE reason = 'collision' ORDER BY id",
            )
        })
        .unwrap_or_else(|e| panic!("read collisions: {e}"))
}

/// Like [`drain_gap`] for a run in which the claims `lost` (event, user)
/// vanished from Redis in a failover: their rows may remain in MySQL, and a
/// later claim of the same number may have been refused as a collision.
/// Anything else that differs is a gap. `None` when the log is empty and
/// nothing else differs.
pub fn drain_gap_except(
    conn: &mut dyn ConnectionLike,
    url: &str,
    event: &str,
    lost: &[(String, String)],
) -> Option<String> {
    if lost.iter().all(|(e, _)| e != event) {
        return drain_gap(conn, url, event);
    }
    let unsynced = status_num(conn, event, "unsynced");
    if unsynced > 0 {
        return Some(format!("{event}: unsynced={unsynced}"));
    }
    let h = holders(conn, event);
    let m = match mysql_active(url, event) {
        Ok(m) => m,
        Err(e) => return Some(format!("{event}: MySQL: {e}")),
    };
    let is_lost = |u: &str| lost.iter().any(|(e, l)| e == event && l == u);
    let refused = collisions(url);
    for (u, t) in &h {
        if m.get(u) == Some(t) {
            continue;
        }
        let blocked_by_lost = refused
            .iter()
            .any(|(e, cu, ct)| e == event && cu == u && ct == t)
            && m.iter().any(|(mu, mt)| mt == t && is_lost(mu));
        if !blocked_by_lost {
            return Some(format!(
                "{event}: Redis holder {u}={t} is {:?} in MySQL",
                m.get(u)
            ));
        }
    }
    for (u, t) in &m {
        if h.get(u) != Some(t) && !is_lost(u) {
            return Some(format!(
                "{event}: MySQL row {u}={t} is {:?} in Redis",
                h.get(u)
            ));
        }
    }
    None
}
