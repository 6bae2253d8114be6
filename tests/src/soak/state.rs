//! Reading the soak's end state: every user's order and place in the
//! waiting list from the primary, every live order and conflict row from
//! MySQL, how much of each log is still undrained, MySQL's offsets, and
//! the seated event's allocations and stock on both sides.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;
use redis::{Connection, Value};

use super::history::{AllocEnd, ConflictRow, OrderState, States, Stock, UserState};

/// A `TICKET.ORDER` reply (RESP2 flat array) as (tickets, state); none for nil.
pub fn parse_order(v: &Value) -> Option<(Vec<i64>, OrderState)> {
    let Value::Array(flat) = v else { return None };
    let mut tickets = None;
    let mut state = None;
    for pair in flat.chunks(2) {
        match (pair.first()?, pair.get(1)?) {
            (Value::BulkString(k), Value::Array(t)) if k.as_slice() == b"tickets" => {
                tickets = t
                    .iter()
                    .map(|x| match x {
                        Value::Int(n) => Some(*n),
                        _ => None,
                    })
                    .collect::<Option<Vec<i64>>>();
            }
            (Value::BulkString(k), Value::BulkString(s)) if k.as_slice() == b"state" => {
                state = match s.as_slice() {
                    b"sold" => Some(OrderState::Sold),
                    b"held" => Some(OrderState::Held),
                    _ => None,
                };
            }
            _ => {}
        }
    }
    Some((tickets?, state?))
}

/// Each (event, user)'s order and place in the waiting list, read from Redis.
pub fn redis_states(
    conn: &mut Connection,
    users: &[(String, String)],
) -> redis::RedisResult<States> {
    let mut states = States::new();
    for chunk in users.chunks(200) {
        let mut pipe = redis::pipe();
        for (event, user) in chunk {
            pipe.cmd("TICKET.ORDER").arg(event).arg(user);
            pipe.cmd("TICKET.POSITION").arg(event).arg(user);
        }
        let replies: Vec<Value> = pipe.query(conn)?;
        for (key, pair) in chunk.iter().zip(replies.chunks(2)) {
            let state = UserState {
                order: pair.first().and_then(parse_order),
                waiting: matches!(pair.get(1), Some(Value::Int(_))),
            };
            if state != UserState::default() {
                states.insert(key.clone(), state);
            }
        }
    }
    Ok(states)
}

/// Each (event, user)'s live order (held or sold) in MySQL.
pub fn mysql_states(conn: &mut mysql::Conn) -> mysql::Result<States> {
    let rows: Vec<(String, String, i64, String)> = conn.query(
        "SELECT event_id, user_id, ticket_number, CAST(status AS CHAR) FROM ticket_participation \
         WHERE status IN ('held', 'active') ORDER BY event_id, user_id, ticket_number",
    )?;
    let mut states = States::new();
    for (event, user, ticket, status) in rows {
        let state = if status == "active" {
            OrderState::Sold
        } else {
            OrderState::Held
        };
        let entry = states.entry((event, user)).or_insert_with(|| UserState {
            order: Some((Vec::new(), state)),
            waiting: false,
        });
        // An order's rows share one state; the first row's stands for it.
        if let Some((tickets, _)) = entry.order.as_mut() {
            tickets.push(ticket);
        }
    }
    Ok(states)
}

/// Every `ticket_conflict` row.
pub fn conflicts(conn: &mut mysql::Conn) -> mysql::Result<Vec<ConflictRow>> {
    let rows: Vec<(String, Option<String>, String, String)> =
        conn.query("SELECT event_id, user_id, reason, stream_id FROM ticket_conflict ORDER BY id")?;
    Ok(rows
        .into_iter()
        .map(|(event, user, reason, stream_id)| ConflictRow {
            event,
            user,
            reason,
            stream_id,
        })
        .collect())
}

/// Conflict rows by reason.
pub fn conflicts_by_reason(rows: &[ConflictRow]) -> BTreeMap<String, usize> {
    let mut by = BTreeMap::new();
    for r in rows {
        *by.entry(r.reason.clone()).or_insert(0) += 1;
    }
    by
}

/// `unsynced` of `TICKET.STATUS event` (log entries not yet drained).
pub fn unsynced(conn: &mut Connection, event: &str) -> redis::RedisResult<i64> {
    Ok(status_field(&status(conn, event)?, "unsynced").unwrap_or(-1))
}

fn status(conn: &mut Connection, event: &str) -> redis::RedisResult<Vec<Value>> {
    redis::cmd("TICKET.STATUS").arg(event).query(conn)
}

/// An integer field of a `TICKET.STATUS` reply (RESP2 flat array).
fn status_field(flat: &[Value], name: &str) -> Option<i64> {
    flat.chunks(2).find_map(|kv| match kv {
        [Value::BulkString(k), Value::Int(n)] if k.as_slice() == name.as_bytes() => Some(*n),
        _ => None,
    })
}

/// `event`'s allocations and stock in Redis (`TICKET.ALLOCATIONS`,
/// `TICKET.STATUS`) and MySQL (V8's tables, see its header).
pub fn alloc_end(
    conn: &mut Connection,
    my: &mut mysql::Conn,
    event: &str,
) -> Result<AllocEnd, String> {
    let redis_err = |e: redis::RedisError| format!("Redis: {e}");
    let my_err = |e: mysql::Error| format!("MySQL: {e}");
    let flat = status(conn, event).map_err(redis_err)?;
    let field = |name| status_field(&flat, name).unwrap_or(0);
    let redis_stock = Stock {
        total: field("total"),
        remaining: field("remaining"),
        allocated: field("allocated"),
        claimed: field("claimed"),
    };
    let allocations = redis::cmd("TICKET.ALLOCATIONS")
        .arg(event)
        .query(conn)
        .map_err(redis_err)?;
    let stock: Option<(i64, i64, i64, i64, i64)> = my
        .exec_first(
            "SELECT e.total, \
             (SELECT remaining_stock FROM ticket_stock WHERE event_id = e.event_id), \
             (SELECT COALESCE(SUM(remaining_stock), 0) FROM ticket_allocation WHERE event_id = e.event_id AND released_at IS NULL), \
             (SELECT COUNT(*) FROM ticket_participation WHERE event_id = e.event_id AND live_ticket IS NOT NULL), \
             (SELECT COALESCE(SUM(remaining), 0) FROM ticket_seat_stock WHERE event_id = e.event_id) \
             FROM ticket_event e WHERE e.event_id = ?",
            (event,),
        )
        .map_err(my_err)?;
    let (total, remaining, allocated, claimed, seats) =
        stock.ok_or_else(|| format!("MySQL has no event {event}"))?;
    Ok(AllocEnd {
        allocations,
        redis_stock,
        mysql_stock: Stock {
            total,
            remaining,
            allocated,
            claimed,
        },
        mysql_seat_stock: seats,
        mysql_allocations: my
            .exec(
                "SELECT name, remaining_stock, released_at IS NOT NULL FROM ticket_allocation \
                 WHERE event_id = ? ORDER BY name",
                (event,),
            )
            .map_err(my_err)?,
        steps: my
            .exec(
                "SELECT name, CAST(kind AS CHAR), CAST(stream_ms AS SIGNED), lost_in_failover <> 0 \
                 FROM ticket_allocation_step WHERE event_id = ? ORDER BY stream_ms, stream_seq, id",
                (event,),
            )
            .map_err(my_err)?,
        rows: my
            .exec(
                "SELECT user_id, ticket_number, allocation FROM ticket_participation \
                 WHERE event_id = ? AND live_ticket IS NOT NULL ORDER BY user_id, ticket_number",
                (event,),
            )
            .map_err(my_err)?,
    })
}

/// The id of the newest entry of `event`'s log, if any.
pub fn last_log_id(conn: &mut Connection, event: &str) -> redis::RedisResult<Option<String>> {
    let newest: Vec<(String, Vec<String>)> = redis::cmd("XREVRANGE")
        .arg(format!("ticket:{{{event}}}:log"))
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1)
        .query(conn)?;
    Ok(newest.into_iter().next().map(|(id, _)| id))
}

/// MySQL's offset (last applied entry id) of `event`.
pub fn mysql_offset(conn: &mut mysql::Conn, event: &str) -> mysql::Result<Option<String>> {
    conn.exec_first(
        "SELECT last_stream_id FROM ticket_sync_offset WHERE event_id = ?",
        (event,),
    )
}

/// Whether MySQL has `event` quarantined (an unknown event counts as not).
pub fn mysql_quarantined(conn: &mut mysql::Conn, event: &str) -> mysql::Result<bool> {
    let q: Option<bool> = conn.exec_first(
        "SELECT quarantined_at IS NOT NULL FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    Ok(q.unwrap_or(false))
}

/// A stream id as (ms, seq), for ordering; (0, 0) if malformed.
pub fn stream_id(id: &str) -> (u64, u64) {
    let mut parts = id.splitn(2, '-');
    let ms = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let seq = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (ms, seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn an_order_reply_parses() {
        let v = Value::Array(vec![
            bulk("tickets"),
            Value::Array(vec![Value::Int(3), Value::Int(4)]),
            bulk("state"),
            bulk("sold"),
            bulk("expires_at"),
            Value::Int(0),
        ]);
        assert_eq!(parse_order(&v), Some((vec![3, 4], OrderState::Sold)));
        assert_eq!(parse_order(&Value::Nil), None);
    }

    #[test]
    fn stream_ids_order_by_ms_then_seq() {
        assert!(stream_id("10-2") > stream_id("9-99"));
        assert!(stream_id("10-10") > stream_id("10-9"));
        assert_eq!(stream_id("x"), (0, 0));
    }
}
