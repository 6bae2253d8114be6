//! The fuzz targets of every parser a client or the log feeds
//! (docs/design.md "Hostile input"), one body each, shared by the two
//! runners: the cargo-fuzz project in `fuzz/` (libFuzzer, nightly) and the
//! stable runner `tests/fuzz.rs`, which the test command always runs
//! (docs/operations.md "Fuzzing and the hostile-input sweep"). Each
//! target's committed corpus is `fuzz/corpus/<name>/`.
//!
//! A body takes the raw input bytes and panics when an invariant breaks;
//! beyond "no panic", each checks what is cheap to check (round trips,
//! printable errors), as its module says.

pub mod check;
pub mod effect;
pub mod layout;
pub mod record;
pub mod restore;
pub mod stream_id;
pub mod url;

/// One fuzz target.
pub struct Target {
    /// Its name: the cargo-fuzz binary and the corpus directory.
    pub name: &'static str,
    /// Its body.
    pub run: fn(&[u8]),
    /// Words its input is made of, which mutations splice in (a
    /// dictionary, as libFuzzer's `-dict`).
    pub words: fn() -> Vec<&'static str>,
}

/// Numbers at the edges every parser of numbers meets.
pub const NUMBERS: [&str; 12] = [
    "0",
    "-1",
    "1",
    "2147483647",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "+1",
    "01",
    "1-1",
];

/// Every op and field name of the log's table (`protocol::ops::OPS`), so
/// a new op or field is in the dictionaries at once.
fn op_words() -> Vec<&'static str> {
    let ops = protocol::ops::OPS.iter();
    let names = ops.clone().map(|spec| spec.name);
    let fields = ops.flat_map(|spec| spec.fields.iter().map(|f| f.name()));
    let mut words: Vec<&str> = names.chain(fields).chain(["ticket"]).collect();
    words.sort_unstable();
    words.dedup();
    words
}

fn with(mut words: Vec<&'static str>, more: &[&'static str]) -> Vec<&'static str> {
    words.extend_from_slice(more);
    words
}

fn layout_words() -> Vec<&'static str> {
    let json = [
        "{\"sections\":[",
        "{\"name\":\"A\",\"rows\":[",
        "{\"name\":\"1\",\"seats\":3}",
    ];
    let fields = [
        "\"category\":",
        "\"blocked\":[",
        "\"accessible\":[",
        "\"rank\":",
    ];
    let more = [
        "\"center\":",
        "\"first\":",
        "\"first_id\":",
        "]}",
        "}",
        ",",
        "\"A-1\"",
    ];
    let values = [
        "1.5", "1e9", "-0", "\\u0000", "\\u0100", "\u{100}", "\u{4e00}", "null",
    ];
    [&json[..], &fields, &more, &values].concat()
}

fn record_words() -> Vec<&'static str> {
    with(
        op_words(),
        &["best", "split", "seats", "1,2,3", "0000000000000001"],
    )
}

fn effect_words() -> Vec<&'static str> {
    let unlogged = [
        "wait",
        "answered",
        "healed",
        "restore-begin",
        "restore-orders",
    ];
    let more = [
        "restore-free",
        "1",
        "2",
        "3",
        "SEATS",
        "1,2",
        "0000000000000001",
        "",
    ];
    with(op_words(), &[&unlogged[..], &more].concat())
}

fn restore_words() -> Vec<&'static str> {
    let steps = ["BEGIN", "ORDERS", "FREE", "COMMIT", "SEATS", "FORCE"];
    let values = ["open", "closed", "0000000000000001", "1,2", "3-9", "600000"];
    [&steps[..], &values].concat()
}

fn stream_id_words() -> Vec<&'static str> {
    vec!["-", "0", "9", "18446744073709551615", "\n"]
}

fn url_words() -> Vec<&'static str> {
    let schemes = [
        "redis://",
        "rediss://",
        "redis+sentinel://",
        "rediss+sentinel://",
    ];
    let more = [
        "redis+unix://",
        "unix://",
        "@",
        ":",
        "/",
        "?",
        "#",
        "[",
        "]",
        "[::1]",
    ];
    let escapes = ["%2F", "%40", "%", ",", " ", "\n", "26379", "65536"];
    [&schemes[..], &more, &escapes].concat()
}

/// Every target.
pub const TARGETS: &[Target] = &[
    Target {
        name: "layout",
        run: layout::run,
        words: layout_words,
    },
    Target {
        name: "record",
        run: record::run,
        words: record_words,
    },
    Target {
        name: "effect",
        run: effect::run,
        words: effect_words,
    },
    Target {
        name: "restore",
        run: restore::run,
        words: restore_words,
    },
    Target {
        name: "stream_id",
        run: stream_id::run,
        words: stream_id_words,
    },
    Target {
        name: "redis_url",
        run: url::redis_run,
        words: url_words,
    },
    Target {
        name: "sentinel_url",
        run: url::sentinel_run,
        words: url_words,
    },
];

/// The target named `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}
