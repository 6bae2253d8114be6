//! What every target shares: how an input is cut into arguments, and what
//! an error text must look like.

/// The arguments of an input, one per line (`\n`): an input without a
/// newline is one argument, and a final `\n` adds an empty one. Every
/// other byte, NUL and `\r` included, can be part of an argument.
pub fn lines(data: &[u8]) -> Vec<&[u8]> {
    data.split(|b| *b == b'\n').collect()
}

/// Most bytes an error text of a decoder may have: it names the bad input
/// cut short, never the whole of it (an argument can be 512 MB).
pub const MAX_ERROR: usize = 1024;

/// Asserts that `text`, an error of `what`, can be shown as it is to a
/// client, in a log or in a MySQL row: not empty, at most [`MAX_ERROR`]
/// bytes, no control character (the input is escaped).
pub fn assert_shown(what: &str, text: &str) {
    assert!(!text.is_empty(), "{what}: an empty error text");
    assert!(
        text.len() <= MAX_ERROR,
        "{what}: an error text of {} bytes: {}...",
        text.len(),
        cut(text)
    );
    assert!(
        !text.chars().any(char::is_control),
        "{what}: a control character in the error text {text:?}"
    );
}

/// The first 200 characters of `text`, for a failure message.
pub fn cut(text: &str) -> String {
    text.chars().take(200).collect()
}

/// Values as the arguments of a command.
pub fn wire(values: &[protocol::model::Value]) -> Vec<Vec<u8>> {
    values.iter().map(|v| v.to_string().into_bytes()).collect()
}

/// Owned arguments, borrowed as a decoder takes them.
pub fn borrowed(args: &[Vec<u8>]) -> Vec<&[u8]> {
    args.iter().map(Vec::as_slice).collect()
}

/// Arguments as escaped strings, for a failure message.
pub fn shown_args(args: &[Vec<u8>]) -> String {
    let shown: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.escape_ascii()))
        .collect();
    shown.join(" ")
}
