//! The inputs the stable runner makes, as proptest strategies (so a
//! failing one shrinks): corpus entries mutated with the kinds of edits
//! libFuzzer makes (bytes flipped, set, inserted, deleted, copied, spliced
//! from another entry; whole lines repeated, dropped, swapped; the
//! target's words and hostile characters inserted), and inputs generated
//! from a small grammar of the target.

use fuzz_targets::Target;
use proptest::prelude::*;
use proptest::sample::select;

/// Characters and bytes that have broken parsers and error paths before:
/// code points that are multiples of 256, a CJK character, an emoji,
/// Latin-1 letters, control bytes, invalid UTF-8, quotes and escapes.
const HOSTILE: &[&[u8]] = &[
    "\u{100}".as_bytes(),
    "\u{4e00}".as_bytes(),
    "\u{1f39f}".as_bytes(),
    "\u{c4}".as_bytes(),
    "\u{85}".as_bytes(),
    "\u{feff}".as_bytes(),
    b"\0",
    b"\r",
    b"\n",
    b"\t",
    b"\x7f",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\\",
    b"\"",
    b"%",
    b" ",
];

/// Any input for `target`: mostly its corpus mutated, else generated.
pub fn any_input(target: &'static Target, corpus: Vec<Vec<u8>>) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![3 => mutated(target, corpus), 1 => generated(target)].boxed()
}

/// One edit of an input; positions are taken modulo its length.
#[derive(Debug, Clone)]
enum Edit {
    Flip {
        at: usize,
        bit: u8,
    },
    Set {
        at: usize,
        byte: u8,
    },
    Insert {
        at: usize,
        text: Vec<u8>,
    },
    Delete {
        at: usize,
        len: usize,
    },
    Copy {
        from: usize,
        len: usize,
        at: usize,
    },
    Splice {
        entry: usize,
        from: usize,
        len: usize,
        at: usize,
    },
    RepeatLine(usize),
    DropLine(usize),
    SwapLines(usize, usize),
}

/// Text a mutation inserts: a word of the target, a number at an edge,
/// a hostile character, or a few random bytes.
fn insertion(target: &'static Target) -> BoxedStrategy<Vec<u8>> {
    prop_oneof![
        select((target.words)()).prop_map(|w| w.as_bytes().to_vec()),
        select(&fuzz_targets::NUMBERS[..]).prop_map(|n| n.as_bytes().to_vec()),
        select(HOSTILE).prop_map(<[u8]>::to_vec),
        proptest::collection::vec(any::<u8>(), 1..4),
    ]
    .boxed()
}

fn edit(target: &'static Target) -> impl Strategy<Value = Edit> {
    let at = any::<usize>();
    let len = 1usize..16;
    prop_oneof![
        (at, 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        (at, any::<u8>()).prop_map(|(at, byte)| Edit::Set { at, byte }),
        (at, insertion(target)).prop_map(|(at, text)| Edit::Insert { at, text }),
        (at, len.clone()).prop_map(|(at, len)| Edit::Delete { at, len }),
        (at, len.clone(), at).prop_map(|(from, len, at)| Edit::Copy { from, len, at }),
        (any::<usize>(), at, 1usize..64, at).prop_map(|(entry, from, len, at)| {
            Edit::Splice {
                entry,
                from,
                len,
                at,
            }
        }),
        at.prop_map(Edit::RepeatLine),
        at.prop_map(Edit::DropLine),
        (at, at).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

/// A corpus entry with a few edits.
fn mutated(target: &'static Target, corpus: Vec<Vec<u8>>) -> BoxedStrategy<Vec<u8>> {
    let count = corpus.len().max(1);
    let edits = proptest::collection::vec(edit(target), 1..6);
    (0..count, edits)
        .prop_map(move |(i, edits)| {
            let mut input = corpus.get(i).cloned().unwrap_or_default();
            for e in &edits {
                apply(&mut input, e, &corpus);
            }
            input
        })
        .boxed()
}

fn apply(input: &mut Vec<u8>, edit: &Edit, corpus: &[Vec<u8>]) {
    let len = input.len();
    let at = |n: usize| n % (len + 1);
    match edit {
        Edit::Flip { at: i, bit } if len > 0 => input[i % len] ^= 1 << bit,
        Edit::Set { at: i, byte } if len > 0 => input[i % len] = *byte,
        Edit::Insert { at: i, text } => drop(input.splice(at(*i)..at(*i), text.iter().copied())),
        Edit::Delete { at: i, len: n } => {
            let start = at(*i);
            input.drain(start..(start + n).min(len));
        }
        Edit::Copy {
            from,
            len: n,
            at: i,
        } => {
            let start = at(*from);
            let part = input[start..(start + n).min(len)].to_vec();
            input.splice(at(*i)..at(*i), part);
        }
        Edit::Splice {
            entry,
            from,
            len: n,
            at: i,
        } => {
            let other = &corpus[entry % corpus.len().max(1)];
            let start = from % (other.len() + 1);
            let part = &other[start..(start + n).min(other.len())];
            input.splice(at(*i)..at(*i), part.iter().copied());
        }
        Edit::RepeatLine(_) | Edit::DropLine(_) | Edit::SwapLines(..) => edit_lines(input, edit),
        _ => {}
    }
}

/// The line edits: an argument repeated, dropped, or two swapped.
fn edit_lines(input: &mut Vec<u8>, edit: &Edit) {
    let mut lines: Vec<Vec<u8>> = input.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    let n = lines.len();
    match edit {
        Edit::RepeatLine(i) => lines.insert(i % n, lines[i % n].clone()),
        Edit::DropLine(i) if n > 1 => drop(lines.remove(i % n)),
        Edit::SwapLines(a, b) => lines.swap(a % n, b % n),
        _ => {}
    }
    *input = lines.join(&b'\n');
}

/// An input from the target's grammar.
fn generated(target: &'static Target) -> BoxedStrategy<Vec<u8>> {
    match target.name {
        "layout" => layout_json(),
        "stream_id" => "[0-9]{0,22}(-[0-9]{0,22})?(\n[0-9+ -]{0,22})?"
            .prop_map(String::into_bytes)
            .boxed(),
        "redis_url" | "sentinel_url" => url(),
        "effect" => lines(
            target,
            vec![one_of(["1", "2", "3", "4"]), event(), word(target)],
        ),
        "restore" => lines(
            target,
            vec![
                event(),
                one_of(["BEGIN", "ORDERS", "FREE", "COMMIT", "begin"]),
            ],
        ),
        "record" => lines(target, vec![event(), "[0-9]{0,4}(-[0-9]{0,3})?".boxed()]),
        _ => lines(target, Vec::new()),
    }
}

fn event() -> BoxedStrategy<String> {
    prop_oneof![
        4 => Just("e".to_owned()),
        1 => "[A-Za-z0-9_.:{}-]{0,8}",
        1 => select(vec!["\u{100}", "\u{4e00}", "", "e\0"]).prop_map(str::to_owned),
    ]
    .boxed()
}

fn word(target: &'static Target) -> BoxedStrategy<String> {
    one_of((target.words)())
}

fn one_of(words: impl Into<Vec<&'static str>>) -> BoxedStrategy<String> {
    select(words.into()).prop_map(str::to_owned).boxed()
}

/// Arguments, one a line: `head` (what the target reads first), then
/// words, numbers, hostile text and random text.
fn lines(target: &'static Target, head: Vec<BoxedStrategy<String>>) -> BoxedStrategy<Vec<u8>> {
    let token = prop_oneof![
        3 => word(target),
        2 => one_of(&fuzz_targets::NUMBERS[..]),
        1 => select(HOSTILE).prop_map(|h| String::from_utf8_lossy(h).into_owned()),
        2 => "[a-z0-9,-]{0,8}",
        1 => "\\PC{0,6}",
    ];
    (head, proptest::collection::vec(token, 0..16))
        .prop_map(|(mut args, rest)| {
            args.extend(rest);
            args.join("\n").into_bytes()
        })
        .boxed()
}

/// A URL of either kind, or the three lines of one whose password stands
/// where a URL carries one.
fn url() -> BoxedStrategy<Vec<u8>> {
    let scheme = select(vec![
        "redis://",
        "rediss://",
        "redis+sentinel://",
        "rediss+sentinel://",
        "REDIS+Sentinel://",
        "redis+unix://",
        "unix://",
        "http://",
        "",
    ]);
    let host = prop_oneof![
        "[a-z0-9.]{1,6}",
        Just("[::1]".to_owned()),
        "\\[[0-9a-f:]{0,6}\\]?",
        "[a-z\\[\\]: /%@\u{100}]{0,5}",
    ];
    let port = prop_oneof![Just(String::new()), ":[0-9]{0,6}", ":[a-z+-]{0,3}"];
    let hosts = proptest::collection::vec((host, port), 1..3).prop_map(|hs| {
        hs.iter()
            .map(|(h, p)| format!("{h}{p}"))
            .collect::<Vec<_>>()
            .join(",")
    });
    let path = prop_oneof![Just(String::new()), "/[a-zA-Z0-9]{0,6}", "/[a-z/@ ?#]{0,6}"];
    let whole = (
        scheme.clone(),
        "([a-z%:/?#@ ]{0,6}@)?",
        hosts.clone(),
        path.clone(),
    )
        .prop_map(|(s, u, h, p)| format!("{s}{u}{h}{p}").into_bytes());
    let secret = (scheme, "[a-z]{0,3}", "[a-z0-9/?#%:, ]{1,8}", hosts, path)
        .prop_map(|(s, user, pw, h, p)| format!("{s}{user}:\n{pw}\n@{h}{p}").into_bytes());
    prop_oneof![whole, secret].boxed()
}

/// Layout JSON: sections of rows whose every field may be missing, out
/// of range, of the wrong type or hostile, and unknown fields.
fn layout_json() -> BoxedStrategy<Vec<u8>> {
    let section = (
        name(),
        proptest::option::of(name()),
        proptest::collection::vec(row(), 0..4),
    )
        .prop_map(|(name, category, rows)| {
            let category = category
                .map(|c| format!(",\"category\":{c}"))
                .unwrap_or_default();
            format!(
                "{{\"name\":{name}{category},\"rows\":[{}]}}",
                rows.join(",")
            )
        });
    let extra = prop_oneof![3 => Just(String::new()), 1 => Just(",\"x\":1".to_owned())];
    (proptest::collection::vec(section, 0..4), extra)
        .prop_map(|(sections, extra)| {
            format!("{{\"sections\":[{}]{extra}}}", sections.join(",")).into_bytes()
        })
        .boxed()
}

/// A JSON name: mostly valid, sometimes with a `-` that makes seat names
/// collide, hostile, too long, escaped or not a string.
fn name() -> BoxedStrategy<String> {
    prop_oneof![
        6 => "[A-Za-z0-9_.-]{1,4}".prop_map(|n| format!("\"{n}\"")),
        1 => select(vec!["\"A-1\"", "\"1-1\"", "\"\u{4e00}\"", "\"\\u0100\"", "\"\\u0000\"", "\"\"", "\"a b\"", "\"12345678901234567\"", "1", "null"])
            .prop_map(str::to_owned),
    ]
    .boxed()
}

fn number() -> BoxedStrategy<String> {
    prop_oneof![
        6 => (-2i64..30).prop_map(|n| n.to_string()),
        1 => select(vec!["1000", "1001", "1e400", "1.5", "0.25", "-0", "9223372036854775808", "\"3\"", "null"])
            .prop_map(str::to_owned),
    ]
    .boxed()
}

fn row() -> BoxedStrategy<String> {
    let list = proptest::collection::vec(number(), 0..4).prop_map(|l| format!("[{}]", l.join(",")));
    let field = |key: &'static str, value: BoxedStrategy<String>| {
        proptest::option::of(value)
            .prop_map(move |v| v.map(|v| format!(",\"{key}\":{v}")).unwrap_or_default())
    };
    (
        name(),
        number(),
        field("first", number()),
        field("blocked", list.clone().boxed()),
        field("accessible", list.boxed()),
        field("rank", number()),
        field("center", number()),
        field("category", name()),
        field("first_id", number()),
    )
        .prop_map(|(name, seats, first, blocked, accessible, rank, center, category, first_id)| {
            format!("{{\"name\":{name},\"seats\":{seats}{first}{blocked}{accessible}{rank}{center}{category}{first_id}}}")
        })
        .boxed()
}
