//! Reading raw Redis replies ([`redis::Value`]), RESP2 or RESP3 alike:
//! strings, and the (field, value) pairs of a flat array or a map. Replies
//! are taken apart by hand, not by the client's typed conversions, so a
//! strange value is seen as such instead of failing the whole reply.

use redis::Value;

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
pub fn take_pairs(v: Value) -> Vec<(Vec<u8>, Vec<u8>)> {
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
