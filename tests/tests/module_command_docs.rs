//! Each command is declared once: the module's command table drives both
//! registration and `COMMAND DOCS`, and docs/commands.md gives each command's
//! syntax in exactly one place. Checked against a real redis-server with the
//! module: `COMMAND DOCS` lists exactly the table's commands (the names in
//! `module/src/cmd/table.rs`), docs/commands.md has exactly one section per
//! registered command whose syntax line is what `COMMAND DOCS` says (rendered
//! by the convention below), and no other Markdown file of the repository repeats
//! a syntax line.
//!
//! The convention: a section is a `## TICKET.NAME` heading, a blank line and
//! a fenced code block whose first line is the syntax: the upper-case name,
//! then each argument: a key or a plain value by its name, an optional
//! token with a value as `[TOKEN name]`, a token alone as `[TOKEN]`, a
//! repeated optional value as `[name ...]`.

#[path = "support/module.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use redis::Value;
use support::*;
use ticketgate_tests::{workspace_root, RedisServer};

/// A RESP2 reply as text, when it is one.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// A flat `[name, value, name, value, ...]` reply (or a RESP3 map) as pairs.
fn pairs(v: &Value) -> Vec<(String, Value)> {
    match v {
        Value::Array(items) => items
            .chunks_exact(2)
            .filter_map(|p| Some((text(&p[0])?, p[1].clone())))
            .collect(),
        Value::Map(items) => items
            .iter()
            .filter_map(|(k, v)| Some((text(k)?, v.clone())))
            .collect(),
        other => panic!("not a map: {other:?}"),
    }
}

fn field(fields: &[(String, Value)], name: &str) -> Option<Value> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// One argument of `COMMAND DOCS` rendered by the convention.
fn render_arg(arg: &Value) -> String {
    let fields = pairs(arg);
    let get = |name: &str| field(&fields, name).as_ref().and_then(text);
    let name = get("name").expect("an argument has a name");
    let kind = get("type").expect("an argument has a type");
    let flags: BTreeSet<String> = match field(&fields, "flags") {
        Some(Value::Array(flags)) => flags.iter().filter_map(text).collect(),
        _ => BTreeSet::new(),
    };
    let optional = flags.contains("optional");
    match (get("token"), kind.as_str()) {
        (Some(token), "pure-token") => format!("[{token}]"),
        // A keyword taking every word after it (`SEATS id [id ...]`).
        (Some(token), _) if flags.contains("multiple") => format!("[{token} {name} [{name} ...]]"),
        (Some(token), _) => format!("[{token} {name}]"),
        (None, _) if flags.contains("multiple") => format!("[{name} ...]"),
        (None, _) if optional => format!("[{name}]"),
        (None, _) => name,
    }
}

/// Every command `COMMAND DOCS` gives as the `ticket` module's, with its
/// syntax line rendered from its arguments.
fn documented(server: &RedisServer) -> BTreeMap<String, String> {
    let mut c = server.conn();
    let all = value(&mut c, &["COMMAND", "DOCS"]);
    let mut found = BTreeMap::new();
    for (name, doc) in pairs(&all) {
        let doc = pairs(&doc);
        if field(&doc, "module").as_ref().and_then(text).as_deref() != Some("ticket") {
            continue;
        }
        assert!(
            field(&doc, "summary").as_ref().and_then(text).is_some(),
            "{name} has no summary"
        );
        let args = match field(&doc, "arguments") {
            Some(Value::Array(args)) => args,
            other => panic!("{name} has no arguments: {other:?}"),
        };
        let mut line = name.to_uppercase();
        for arg in &args {
            line.push(' ');
            line.push_str(&render_arg(arg));
        }
        found.insert(name.to_lowercase(), line);
    }
    found
}

/// The command names the module's table declares.
fn table_names() -> BTreeSet<String> {
    let path = workspace_root().join("module/src/cmd/table.rs");
    let source = std::fs::read_to_string(&path).expect("the command table");
    source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("name: \"ticket."))
        .filter_map(|rest| rest.strip_suffix("\","))
        .map(|name| format!("ticket.{name}"))
        .collect()
}

/// The `## TICKET.*` sections of docs/commands.md: heading -> the first line
/// of its code block (`None` when the block is missing), in order.
fn sections(text: &str) -> Vec<(String, Option<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = line.strip_prefix("## ") else {
            continue;
        };
        let name = name.split_whitespace().next().unwrap_or_default();
        if !name.starts_with("TICKET.") {
            continue;
        }
        let blank = lines.get(i + 1).is_some_and(|l| l.trim().is_empty());
        let fence = lines.get(i + 2).is_some_and(|l| l.starts_with("```"));
        let syntax = (blank && fence).then(|| lines.get(i + 3).map(|l| l.trim().to_owned()));
        out.push((name.to_owned(), syntax.flatten()));
    }
    out
}

/// Every Markdown file of the repository but `skip` (no build output, no git).
fn markdown_files(dir: &Path, skip: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !matches!(name.as_str(), "target" | ".git" | ".cache" | "node_modules") {
                markdown_files(&path, skip, found);
            }
        } else if path.extension().is_some_and(|e| e == "md") && path != skip {
            found.push(path);
        }
    }
}

/// Whether `line` contains `syntax` as a whole (not followed by more of a
/// word, so `TICKET.OPEN event` is not found in `TICKET.OPEN events`).
fn contains_syntax(line: &str, syntax: &str) -> bool {
    line.match_indices(syntax).any(|(at, _)| {
        let next = line[at + syntax.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ' ' || c == '[')
    })
}

#[test]
fn command_docs_list_exactly_the_table() {
    let server = RedisServer::start();
    let documented = documented(&server);
    let names: BTreeSet<String> = documented.keys().cloned().collect();
    let table = table_names();
    assert!(
        table.len() >= 15,
        "the table declares the commands: {table:?}"
    );
    assert_eq!(names, table, "COMMAND DOCS lists the table's commands");
    // Every registered command of the module has its docs, and no more.
    let mut c = server.conn();
    let listed = value(&mut c, &["COMMAND", "LIST", "FILTERBY", "MODULE", "ticket"]);
    let listed: BTreeSet<String> = match listed {
        Value::Array(items) => items.iter().filter_map(text).collect(),
        other => panic!("COMMAND LIST: {other:?}"),
    };
    assert_eq!(listed, table, "the module registers the table's commands");
}

#[test]
fn commands_md_gives_each_registered_command_once_with_its_syntax() {
    let server = RedisServer::start();
    let documented = documented(&server);
    let path = workspace_root().join("docs/commands.md");
    let text = std::fs::read_to_string(&path).expect("docs/commands.md exists");
    let sections = sections(&text);
    for (name, syntax) in &documented {
        let upper = name.to_uppercase();
        let found: Vec<_> = sections.iter().filter(|(n, _)| *n == upper).collect();
        assert_eq!(
            found.len(),
            1,
            "one section for {upper} in docs/commands.md"
        );
        assert_eq!(
            found[0].1.as_deref(),
            Some(syntax.as_str()),
            "the syntax of {upper}: a blank line and a code block after the heading"
        );
    }
    for (name, _) in &sections {
        assert!(
            documented.contains_key(&name.to_lowercase()),
            "docs/commands.md documents {name}, which the module does not register"
        );
    }
}

#[test]
fn no_other_document_repeats_a_syntax_line() {
    let server = RedisServer::start();
    let documented = documented(&server);
    let root = workspace_root();
    let mut files = Vec::new();
    markdown_files(&root, &root.join("docs/commands.md"), &mut files);
    assert!(
        files.iter().any(|f| f.ends_with("README.md")),
        "the walk finds the README"
    );
    let mut repeated = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for (n, line) in text.lines().enumerate() {
            for syntax in documented.values() {
                if contains_syntax(line, syntax) {
                    repeated.push(format!("{}:{}: {syntax}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(repeated.is_empty(), "syntax written twice: {repeated:#?}");
}

#[test]
fn syntax_matching_needs_the_whole_line() {
    assert!(contains_syntax("`TICKET.OPEN event`", "TICKET.OPEN event"));
    assert!(contains_syntax("TICKET.OPEN event", "TICKET.OPEN event"));
    assert!(!contains_syntax("TICKET.OPEN events", "TICKET.OPEN event"));
    assert!(!contains_syntax(
        "TICKET.CLAIM event user [COUNT count]",
        "TICKET.CLAIM event user"
    ));
}
