//! Reading the soak's end state: every user's order and place in the
//! waiting list from the primary, every live order and conflict row from
//! MySQL, how much of each log is still undrained, and MySQL's offsets.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;
use redis::{Connection, Value};

use super::history::{ConflictRow, OrderState, States, UserState};

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
    let flat: Vec<Value> = redis::cmd("TICKET.STATUS").arg(event).query(conn)?;
    let found = flat.chunks(2).find_map(|kv| match kv {
        [Value::BulkString(k), Value::Int(n)] if k.as_slice() == b"unsynced" => Some(*n),
        _ => None,
    });
    Ok(found.unwrap_or(-1))
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
