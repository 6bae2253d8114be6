//! Target `stream_id`: stream ids as the sidecar reads them back from
//! MySQL and Redis (`StreamId::parse`) and as a version 3 effect carries
//! them (`StreamId::from_parts`).
//!
//! Input: the text of an id; with a newline, the two parts of one. Beyond
//! "no panic": parsing agrees with a plain model (decimal digits only,
//! each part fits a `u64`, a bare `<ms>` is `<ms>-0`), an id written out
//! parses back to itself, and [`StreamId::next`] is greater.

use protocol::StreamId;

use crate::check::lines;

/// The target's body.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let model = match text.split_once('-') {
        Some((ms, seq)) => parts(ms, seq),
        None => parts(text, "0"),
    };
    let parsed = StreamId::parse(text);
    assert_eq!(parsed, model, "{text:?}");
    if let Some(id) = parsed {
        assert_eq!(StreamId::parse(&id.to_string()), Some(id));
        assert!(id.next().is_none_or(|next| next > id));
    }
    if let [ms, seq] = lines(data).as_slice() {
        let (ms, seq) = (String::from_utf8_lossy(ms), String::from_utf8_lossy(seq));
        assert_eq!(
            StreamId::from_parts(&ms, &seq),
            parts(&ms, &seq),
            "{ms:?} {seq:?}"
        );
    }
}

/// The model: both parts plain decimal digits that fit a `u64`.
fn parts(ms: &str, seq: &str) -> Option<StreamId> {
    let number = |t: &str| match t.bytes().all(|b| b.is_ascii_digit()) {
        true => t.parse::<u64>().ok(),
        false => None,
    };
    Some(StreamId::new(number(ms)?, number(seq)?))
}
