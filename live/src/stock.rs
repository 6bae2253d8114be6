//! Pure logic of live stock, no I/O: turning a `TICKET.STATUS` reply into the
//! JSON a subscriber sees, deciding when a value is a change worth sending,
//! the ever-growing SSE message ids, and what a `Last-Event-ID` means on
//! reconnect. (Which event ids are valid is the `protocol` crate's rule.)

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use redis::Value;
use serde::Serialize;

/// One event's stock as a subscriber sees it (the `data:` JSON of a message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stock {
    pub event: String,
    pub total: i64,
    pub remaining: i64,
    /// Tickets in live holds; 0 when `TICKET.STATUS` does not report it.
    pub held: i64,
    pub claimed: i64,
    pub status: String,
    /// Length of the waiting list; 0 when `TICKET.STATUS` does not report it.
    pub waiting: i64,
    /// A draw event's commitment, hex(SHA-256(seed)); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draw: Option<String>,
    /// Free allocated tickets (house seats, partners; not in `remaining`):
    /// absent when there are none.
    #[serde(skip_serializing_if = "is_zero")]
    pub allocated: i64,
    /// Tickets listed for resale nobody holds (not in `remaining`): absent
    /// when there are none.
    #[serde(skip_serializing_if = "is_zero")]
    pub resale: i64,
    /// The draw's seed, once drawn (anyone can check SHA-256(seed) = draw
    /// and recompute the order); absent before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// Unix ms when this value was read from Redis.
    pub at: u64,
}

impl Stock {
    /// True when the values a buyer sees differ (`at` is ignored).
    pub fn differs_from(&self, other: &Stock) -> bool {
        let strip = |s: &Stock| Stock { at: 0, ..s.clone() };
        strip(self) != strip(other)
    }

    /// The message's JSON.
    pub fn to_json(&self) -> String {
        // Serialising a struct of strings and integers cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A field value of the STATUS reply: integer or text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Field {
    Int(i64),
    Text(String),
}

/// Reads a `TICKET.STATUS` reply (RESP2 flat field/value array or RESP3 map)
/// into a [`Stock`]. Fields the module does not send (`held`, `waiting` on
/// older modules) count as 0; fields this code does not know are ignored.
pub fn parse_status(event: &str, reply: &Value, at: u64) -> Result<Stock, String> {
    let fields = field_map(reply)?;
    let int = |name: &str, required: bool| match fields.get(name) {
        Some(Field::Int(n)) => Ok(*n),
        Some(Field::Text(t)) => t
            .parse::<i64>()
            .map_err(|_| format!("STATUS field {name} is not an integer: {t:?}")),
        None if required => Err(format!("STATUS reply has no {name} field")),
        None => Ok(0),
    };
    let (total, remaining, claimed) = (
        int("total", true)?,
        int("remaining", true)?,
        int("claimed", true)?,
    );
    let (held, waiting) = (int("held", false)?, int("waiting", false)?);
    let (allocated, resale) = (int("allocated", false)?, int("resale", false)?);
    let status = match fields.get("status") {
        Some(Field::Text(t)) => t.clone(),
        Some(Field::Int(n)) => n.to_string(),
        None => return Err("STATUS reply has no status field".into()),
    };
    let (draw, seed) = (hex32(&fields, "draw")?, hex32(&fields, "seed")?);
    Ok(Stock {
        event: event.to_owned(),
        total,
        remaining,
        held,
        claimed,
        status,
        waiting,
        draw,
        allocated,
        resale,
        seed,
        at,
    })
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A 32-byte value of the STATUS reply in hex (a draw's commitment or
/// seed), lowercased; None when absent, an error when not 64 hex digits.
fn hex32(fields: &HashMap<String, Field>, name: &str) -> Result<Option<String>, String> {
    match fields.get(name) {
        None => Ok(None),
        Some(Field::Text(t)) if t.len() == 64 && t.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(Some(t.to_ascii_lowercase()))
        }
        Some(other) => Err(format!(
            "STATUS field {name} is not 64 hex digits: {other:?}"
        )),
    }
}

fn field_map(reply: &Value) -> Result<HashMap<String, Field>, String> {
    let pairs: Vec<(&Value, &Value)> = match reply {
        Value::Array(items) if items.len() % 2 == 0 => {
            items.chunks(2).map(|c| (&c[0], &c[1])).collect()
        }
        Value::Map(items) => items.iter().map(|(k, v)| (k, v)).collect(),
        other => return Err(format!("STATUS reply is not a field/value list: {other:?}")),
    };
    let mut map = HashMap::new();
    for (k, v) in pairs {
        let Some(Field::Text(name)) = field(k) else {
            return Err(format!("STATUS field name is not text: {k:?}"));
        };
        if let Some(value) = field(v) {
            map.insert(name, value);
        }
    }
    Ok(map)
}

fn field(v: &Value) -> Option<Field> {
    match v {
        Value::Int(n) => Some(Field::Int(*n)),
        Value::BulkString(b) => Some(Field::Text(String::from_utf8_lossy(b).into_owned())),
        Value::SimpleString(s) | Value::VerbatimString { text: s, .. } => {
            Some(Field::Text(s.clone()))
        }
        _ => None,
    }
}

/// The last id handed out in this process, shared by all events.
static LAST_ID: AtomicU64 = AtomicU64::new(0);

/// The id following `prev` at wall-clock `now_ms`: the time in ms, but
/// always above `prev`, so ids grow even when the clock stalls or steps back
/// and stay above those of an earlier run of the process.
pub fn next_id_after(prev: u64, now_ms: u64) -> u64 {
    now_ms.max(prev.saturating_add(1))
}

/// A fresh message id, greater than every id handed out before in this process.
pub fn next_id(now_ms: u64) -> u64 {
    let mut prev = LAST_ID.load(Ordering::Relaxed);
    loop {
        let next = next_id_after(prev, now_ms);
        match LAST_ID.compare_exchange_weak(prev, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return next,
            Err(seen) => prev = seen,
        }
    }
}

/// Whether a (re)connecting client must get the current message at once:
/// not when its `Last-Event-ID` is exactly the current message's id (it has
/// it already), yes otherwise (older id, an id of another process, no id).
pub fn send_current(last_event_id: Option<&str>, current_id: u64) -> bool {
    let seen = last_event_id.and_then(|s| s.trim().parse::<u64>().ok());
    seen != Some(current_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    fn today_reply() -> Value {
        Value::Array(vec![
            bulk("total"),
            Value::Int(100),
            bulk("remaining"),
            Value::Int(97),
            bulk("claimed"),
            Value::Int(3),
            bulk("status"),
            bulk("open"),
            bulk("opens_at"),
            Value::Int(0),
            bulk("closes_at"),
            Value::Int(0),
            bulk("unsynced"),
            Value::Int(4),
        ])
    }

    #[test]
    fn parses_todays_reply_with_zero_held_and_waiting() {
        let s = parse_status("e1", &today_reply(), 42).unwrap();
        assert_eq!(
            s,
            Stock {
                event: "e1".into(),
                total: 100,
                remaining: 97,
                held: 0,
                claimed: 3,
                status: "open".into(),
                waiting: 0,
                draw: None,
                allocated: 0,
                resale: 0,
                seed: None,
                at: 42,
            }
        );
        assert_eq!(
            s.to_json(),
            r#"{"event":"e1","total":100,"remaining":97,"held":0,"claimed":3,"status":"open","waiting":0,"at":42}"#
        );
    }

    #[test]
    fn new_fields_appear_and_resp3_maps_work() {
        let reply = Value::Map(vec![
            (bulk("total"), Value::Int(10)),
            (bulk("remaining"), Value::Int(4)),
            (bulk("held"), Value::Int(2)),
            (bulk("claimed"), Value::Int(6)),
            (Value::SimpleString("status".into()), bulk("closed")),
            (bulk("waiting"), Value::Int(7)),
            (bulk("something_new"), bulk("x")),
        ]);
        let s = parse_status("e", &reply, 1).unwrap();
        assert_eq!((s.held, s.waiting, s.status.as_str()), (2, 7, "closed"));
    }

    #[test]
    fn allocated_stock_shows_only_when_there_is_some() {
        let mut fields = match today_reply() {
            Value::Array(items) => items,
            other => panic!("{other:?}"),
        };
        let none = parse_status("e", &Value::Array(fields.clone()), 1).unwrap();
        fields.extend([bulk("allocated"), Value::Int(5)]);
        let some = parse_status("e", &Value::Array(fields), 1).unwrap();
        assert_eq!((none.allocated, some.allocated), (0, 5));
        assert!(!none.to_json().contains("allocated"));
        assert!(some.to_json().contains(r#""allocated":5"#));
        assert!(some.differs_from(&none), "allocated stock is news");
    }

    #[test]
    fn a_draw_event_shows_its_commitment_then_its_seed() {
        let (c, seed) = ("ab".repeat(32), "CD".repeat(32));
        let mut fields = match today_reply() {
            Value::Array(items) => items,
            other => panic!("{other:?}"),
        };
        fields.extend([bulk("draw"), bulk(&c)]);
        let before = parse_status("e", &Value::Array(fields.clone()), 1).unwrap();
        assert_eq!(
            (before.draw.as_deref(), before.seed.as_deref()),
            (Some(c.as_str()), None)
        );
        assert!(before.to_json().contains(&format!(r#""draw":"{c}""#)));
        assert!(!before.to_json().contains("seed"));
        fields.extend([bulk("seed"), bulk(&seed)]);
        let after = parse_status("e", &Value::Array(fields.clone()), 1).unwrap();
        assert_eq!(after.seed, Some("cd".repeat(32)));
        assert!(after.differs_from(&before), "the revealed seed is news");
        fields.extend([bulk("seed"), bulk("not hex")]);
        let bad = parse_status("e", &Value::Array(fields), 1).unwrap_err();
        assert!(bad.contains("seed"), "{bad}");
    }

    #[test]
    fn rejects_replies_that_are_not_status() {
        assert!(parse_status("e", &Value::Int(1), 0).is_err());
        assert!(parse_status("e", &Value::Array(vec![bulk("total")]), 0).is_err());
        let no_remaining = Value::Array(vec![bulk("total"), Value::Int(1)]);
        let err = parse_status("e", &no_remaining, 0).unwrap_err();
        assert!(err.contains("remaining"), "{err}");
        let bad = Value::Array(vec![
            bulk("total"),
            bulk("many"),
            bulk("remaining"),
            Value::Int(1),
            bulk("claimed"),
            Value::Int(0),
            bulk("status"),
            bulk("open"),
        ]);
        assert!(parse_status("e", &bad, 0).unwrap_err().contains("total"));
    }

    #[test]
    fn a_change_ignores_the_read_time() {
        let a = parse_status("e", &today_reply(), 1).unwrap();
        let later = Stock {
            at: 99,
            ..a.clone()
        };
        assert!(!a.differs_from(&later));
        let claimed = Stock {
            remaining: 96,
            ..a.clone()
        };
        assert!(a.differs_from(&claimed));
    }

    #[test]
    fn ids_only_grow() {
        assert_eq!(next_id_after(0, 1000), 1000);
        assert_eq!(next_id_after(1000, 1000), 1001);
        assert_eq!(next_id_after(5000, 10), 5001, "clock stepped back");
        assert_eq!(next_id_after(u64::MAX, 1), u64::MAX);
        let ids: Vec<u64> = (0..100).map(|_| next_id(7)).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    }

    #[test]
    fn last_event_id_decides_the_first_message() {
        assert!(send_current(None, 5));
        assert!(send_current(Some("4"), 5), "older id: send the current");
        assert!(!send_current(Some("5"), 5), "has it already");
        assert!(!send_current(Some(" 5 "), 5));
        assert!(send_current(Some("garbage"), 5));
        assert!(send_current(Some("6"), 5), "id from another process");
    }
}
