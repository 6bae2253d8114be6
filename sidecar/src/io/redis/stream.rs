//! Reading an event's log `ticket:{E}:log`: the reader's `XREAD` over many
//! logs at once and the `XRANGE`s of the trimmer, the heal and rebuild,
//! each entry decoded as it is taken out of the reply ([`Entry::read`]:
//! its size and SHA-256 as read, and the record, or why it did not
//! decode: a strange entry becomes a conflict later, never a client-side
//! error that would stall the stream).

use redis::{ConnectionLike, RedisResult, Value};

use super::reply::{take_pairs, text};
use crate::model::Entry;
use protocol::keys::{self, Part};
use protocol::StreamId;

/// The log key of an event.
pub fn log_key(event: &str) -> String {
    keys::key(event, Part::Log)
}

/// `XREAD COUNT count [BLOCK ms] STREAMS k.. id..` over `events` (event,
/// cursor); returns decoded entries per event.
pub fn xread(
    conn: &mut dyn ConnectionLike,
    events: &[(String, StreamId)],
    count: usize,
    block_ms: Option<u64>,
) -> RedisResult<Vec<(String, Vec<Entry>)>> {
    let mut cmd = redis::cmd("XREAD");
    cmd.arg("COUNT").arg(count);
    if let Some(ms) = block_ms {
        cmd.arg("BLOCK").arg(ms);
    }
    cmd.arg("STREAMS");
    for (e, _) in events {
        cmd.arg(log_key(e));
    }
    for (_, id) in events {
        cmd.arg(id.to_string());
    }
    let reply: Value = cmd.query(conn)?;
    Ok(take_xread(reply)
        .into_iter()
        .filter_map(|(key, v)| {
            let event = keys::event_of_key(key.as_bytes(), Part::Log)?.to_owned();
            let entries = take_entries(&event, v);
            Some((event, entries))
        })
        .collect())
}

/// Parses an `XREAD` reply into (log key, entries) per stream, moving
/// each stream's entries out of the reply.
fn take_xread(v: Value) -> Vec<(String, Value)> {
    match v {
        Value::Map(m) => m
            .into_iter()
            .filter_map(|(k, v)| Some((text(&k)?, v)))
            .collect(),
        Value::Array(streams) => streams
            .into_iter()
            .filter_map(|s| match s {
                Value::Array(kv) if kv.len() == 2 => {
                    let mut kv = kv.into_iter();
                    let key = kv.next().as_ref().and_then(text)?;
                    Some((key, kv.next()?))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
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

/// Parses one stream's entries (`[[id, [f, v, ...]], ...]`) for `event`,
/// taking the reply apart: the field names and values move into the
/// decoder's pairs instead of being copied (an XREAD reply holds
/// thousands of them).
pub fn take_entries(event: &str, v: Value) -> Vec<Entry> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Array(parts) = item else { continue };
        let mut parts = parts.into_iter();
        let head = parts.next();
        let Some(id) = head.as_ref().and_then(parse_id) else {
            log::error!("event {event}: stream entry without a parsable id: {head:?}");
            continue;
        };
        let fields = parts.next().map(take_pairs).unwrap_or_default();
        out.push(Entry::read(event, id, &fields));
    }
    out
}

/// A stream id in a reply.
fn parse_id(v: &Value) -> Option<StreamId> {
    text(v).and_then(|t| StreamId::parse(&t))
}

/// The id of the first entry of an `XRANGE` reply (the entry itself is
/// not decoded).
pub fn first_id(v: &Value) -> Option<StreamId> {
    let Value::Array(items) = v else { return None };
    match items.first()? {
        Value::Array(p) => p.first().and_then(parse_id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bs(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn parses_resp2_xread() {
        let reply = Value::Array(vec![Value::Array(vec![
            bs("ticket:{e1}:log"),
            Value::Array(vec![
                Value::Array(vec![
                    bs("5-1"),
                    Value::Array(vec![
                        bs("op"),
                        bs("open"),
                        bs("event"),
                        bs("e1"),
                        bs("at"),
                        bs("5"),
                    ]),
                ]),
                Value::Array(vec![bs("6-0"), Value::Array(vec![bs("op"), bs("bogus")])]),
                Value::Array(vec![bs("not-an-id"), Value::Array(vec![])]),
            ]),
        ])]);
        let mut streams = take_xread(reply);
        assert_eq!(streams.len(), 1);
        let entries = take_entries("e1", streams.remove(0).1);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].id, StreamId::new(5, 1));
        assert!(entries[0].rec.is_ok());
        assert!(entries[1].rec.is_err());
        assert!(take_xread(Value::Nil).is_empty());
    }

    fn arb_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Nil),
            any::<i64>().prop_map(Value::Int),
            "[a-z0-9{}:-]{0,12}".prop_map(|s| Value::BulkString(s.into_bytes())),
            Just(Value::BulkString(b"ticket:{e1}:log".to_vec())),
            Just(Value::BulkString(b"1-1".to_vec())),
            Just(Value::Okay),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever a server (or a proxy) answers, parsing never panics.
        #[test]
        fn xread_parsing_never_panics(v in arb_value()) {
            for (key, streams) in take_xread(v.clone()) {
                let _ = keys::event_of_key(key.as_bytes(), Part::Log);
                let _ = take_entries("e1", streams);
            }
            let _ = take_entries("e1", v.clone());
            let _ = first_id(&v);
        }
    }

    #[test]
    fn parses_resp3_map() {
        let reply = Value::Map(vec![(
            bs("ticket:{e2}:log"),
            Value::Array(vec![Value::Array(vec![
                bs("7-0"),
                Value::Map(vec![
                    (bs("op"), bs("close")),
                    (bs("event"), bs("e2")),
                    (bs("at"), bs("7")),
                ]),
            ])]),
        )]);
        let mut streams = take_xread(reply);
        let entries = take_entries("e2", streams.remove(0).1);
        assert_eq!(entries.len(), 1);
        assert!(entries[0].rec.is_ok());
    }
}
