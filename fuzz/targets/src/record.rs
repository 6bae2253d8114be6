//! Target `record`: one entry of an event's log as the sidecar decodes it
//! (`protocol::record::decode_entry`, `sidecar/src/io/redis.rs`).
//!
//! Input, one argument per line: the event (from the key), the entry id
//! (empty: none), then the entry's field names and values alternately (a
//! last name without a value gets an empty one).
//!
//! Beyond "no panic": a record that decodes is written again in both forms
//! the module writes (the full one, and the compact one with `at` in the
//! id or not) and decodes to the same record; an entry that does not
//! decode becomes a [`Malformed`] the sidecar can store as it is: a reason
//! that names the problem printably, a rendering of the raw fields without
//! control characters and at most 1,000 characters, a valid user id or
//! none.

use protocol::keys::valid_user;
use protocol::record::{decode, decode_entry, Malformed, Record, Value};
use protocol::StreamId;

use crate::check::{assert_shown, lines};

/// Raw stream fields, as the sidecar reads them.
type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// The target's body.
pub fn run(data: &[u8]) {
    let args = lines(data);
    let [event, id, fields @ ..] = args.as_slice() else {
        return;
    };
    let event = String::from_utf8_lossy(event);
    let id = std::str::from_utf8(id).ok().and_then(StreamId::parse);
    let raw: Fields = fields
        .chunks(2)
        .map(|pair| (pair[0].to_vec(), pair.get(1).unwrap_or(&&b""[..]).to_vec()))
        .collect();
    match decode_entry(&event, id, &raw) {
        Ok(record) => round_trips(&event, id, &record),
        Err(malformed) => storable(&malformed),
    }
}

fn encoded<'a>(fields: impl Iterator<Item = (&'static str, Value<'a>)>) -> Fields {
    fields
        .map(|(k, v)| (k.as_bytes().to_vec(), v.to_string().into_bytes()))
        .collect()
}

fn round_trips(event: &str, id: Option<StreamId>, record: &Record) {
    let full = encoded(record.fields(event));
    assert_eq!(
        decode(event, &full).as_ref(),
        Ok(record),
        "the full form of {record:?}"
    );
    let at_in_id = id.is_some_and(|id| record.at_in_id(id));
    let compact = encoded(record.log_fields(event, at_in_id));
    let again = decode_entry(event, id, &compact);
    assert_eq!(again.as_ref(), Ok(record), "the log form {compact:?}");
}

fn storable(malformed: &Malformed) {
    assert_shown("the reason", &malformed.reason);
    let raw = &malformed.raw;
    assert!(
        raw.chars().count() <= 1000,
        "a raw rendering of {} chars",
        raw.chars().count()
    );
    assert!(
        !raw.chars().any(char::is_control),
        "a control character in {raw:?}"
    );
    if let Some(user) = &malformed.user {
        assert!(valid_user(user), "an invalid user {user:?}");
    }
}
