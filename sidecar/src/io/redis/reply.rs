//! Reading raw Redis replies ([`redis::Value`]), RESP2 or RESP3 alike:
//! strings, the (field, value) pairs of a flat array or a map, and the
//! entries of a stream reply (`XREAD`, `XRANGE`), each decoded as it is
//! taken out ([`Entry::read`]: its size and SHA-256 as read, and the
//! record, or why it did not decode). Replies are taken apart by hand, not
//! by the client's typed conversions, so a strange value (or entry) is
//! seen as such instead of failing the whole reply: a bad entry becomes a
//! conflict later, never an error that would stall the stream.

use redis::Value;

use crate::model::Entry;
use protocol::StreamId;

/// Bytes of a string-like reply value.
pub fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.as_bytes().to_vec()),
        Value::Int(i) => Some(i.to_string().into_bytes()),
        Value::Okay => Some(b"OK".to_vec()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes().to_vec()),
        _ => None,
    }
}

/// A string-like reply value as text (lossy).
pub fn text(v: &Value) -> Option<String> {
    bytes(v).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Pairs of a RESP2 flat array or a RESP3 map.
pub fn pairs(v: &Value) -> Vec<(Value, Value)> {
    match v {
        Value::Map(m) => m.clone(),
        Value::Array(a) => a
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The bytes of a string-like reply value, moved out of a bulk string.
fn into_bytes(v: Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b,
        other => bytes(&other).unwrap_or_default(),
    }
}

/// The (field, value) byte pairs of a RESP2 flat array or a RESP3 map,
/// moved out of it (an odd last element is left out, as in [`pairs`]):
/// a log read holds thousands of them, so they are not copied.
fn take_pairs(v: Value) -> Vec<(Vec<u8>, Vec<u8>)> {
    match v {
        Value::Map(m) => m
            .into_iter()
            .map(|(k, v)| (into_bytes(k), into_bytes(v)))
            .collect(),
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len() / 2);
            let mut items = a.into_iter();
            while let (Some(k), Some(v)) = (items.next(), items.next()) {
                out.push((into_bytes(k), into_bytes(v)));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// The text pairs of a reply (values that are no string left out).
pub fn text_pairs(v: &Value) -> Vec<(String, String)> {
    pairs(v)
        .iter()
        .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
        .collect()
}

/// Parses an `XREAD` reply into (log key, entries) per stream, moving
/// each stream's entries out of the reply.
pub fn take_xread(v: Value) -> Vec<(String, Value)> {
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
    use protocol::keys::{self, Part};

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
