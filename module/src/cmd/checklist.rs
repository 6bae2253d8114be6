//! A command's checklist, enforced: for every row of THE command table,
//! docs/commands.md has its section; the ACL roles of `deploy/users.acl`
//! grant it to someone (but `TICKET._APPLY`, which only replication sends);
//! every client library sends it when the table says applications do; and
//! its file in `cmd/` opens with a header naming the options the table
//! gives and the errors its section in docs/commands.md gives. Adding a
//! command and forgetting one of these fails here.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::table::{Audience, Command, Kind, COMMANDS};

/// The errors docs/commands.md lists once, under "Conventions", for every
/// command.
const ANY_COMMAND: [&str; 5] = ["ERR", "WRONGTYPE", "CORRUPT", "TRYAGAIN", "INTERNAL"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Every file under `dir` whose name ends with `suffix` (not `skip`).
fn sources(dir: &Path, suffix: &str, skip: &str, out: &mut String) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if path.is_dir() && name != "node_modules" {
            sources(&path, suffix, skip, out);
        } else if name.ends_with(suffix) && !name.ends_with(skip) {
            out.push_str(&read(&path));
        }
    }
}

/// Each client library's sources, by name.
fn clients() -> Vec<(&'static str, String)> {
    let dir = root().join("clients");
    let mut out = Vec::new();
    for (name, sub, suffix, skip) in [
        ("python", "python/src", ".py", "test.py"),
        ("node", "node/src", ".ts", ".test.ts"),
        ("go", "go", ".go", "_test.go"),
        ("java", "java/src/main", ".java", "Test.java"),
    ] {
        let mut text = String::new();
        sources(&dir.join(sub), suffix, skip, &mut text);
        out.push((name, text.to_lowercase()));
    }
    out
}

/// Whether a client's sources send `command`: its wire name in a string
/// (`"ticket.claim"`), or the Java enum constant the wire name is made of.
fn sends(client: &(&str, String), command: &Command) -> bool {
    let (name, text) = client;
    let wire = format!("\"{}\"", command.name);
    let constant = command.name.trim_start_matches("ticket.").to_lowercase();
    text.contains(&wire) || (*name == "java" && enum_constants(text).contains(&constant))
}

/// The constants of Java's `enum TicketCommand` (lower-cased text).
fn enum_constants(text: &str) -> BTreeSet<String> {
    let Some(start) = text.find("enum ticketcommand") else {
        return BTreeSet::new();
    };
    let body = &text[start..];
    let body = &body[body.find('{').map_or(0, |i| i + 1)..body.find(';').unwrap_or(body.len())];
    body.split(',')
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .collect()
}

/// docs/commands.md's section of `command` (its `## TICKET.X` heading to
/// the next `## `).
fn section<'a>(docs: &'a str, command: &Command) -> Option<&'a str> {
    let heading = format!("\n## {}\n", command.name.to_uppercase());
    let start = docs.find(&heading)? + heading.len();
    let end = docs[start..]
        .find("\n## ")
        .map_or(docs.len(), |i| start + i);
    Some(&docs[start..end])
}

/// The error codes the module has (error.rs: `=> "CODE"`).
fn known_codes() -> BTreeSet<String> {
    let error = read(&root().join("module/src/error.rs"));
    error
        .split("=> \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|code| !code.is_empty() && code.bytes().all(|b| b.is_ascii_uppercase()))
        .map(str::to_owned)
        .collect()
}

/// The known codes named in backticks in `text` (`` `SOLDOUT` ``, or the
/// first word of `` `SOLDOUT event ...` ``), but those every command has.
fn codes_in(text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|quoted| quoted.split([' ', '/']).next())
        .filter(|word| known.contains(*word) && !ANY_COMMAND.contains(word))
        .map(str::to_owned)
        .collect()
}

/// The file of `command` in `cmd/`: `ticket.claim` -> `claim.rs`.
fn command_file(command: &Command) -> PathBuf {
    let stem = command
        .name
        .trim_start_matches("ticket.")
        .trim_start_matches('_');
    root().join(format!("module/src/cmd/{stem}.rs"))
}

/// The `//!` header of a file, as one text.
fn header(code: &str) -> String {
    code.lines()
        .map_while(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The option keywords of the syntax a header opens with.
fn header_options(header: &str) -> BTreeSet<String> {
    let syntax = header.split('`').nth(1).unwrap_or("");
    syntax
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '.' && c != '_')
        .filter(|w| w.len() > 1 && w.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'))
        .map(str::to_owned)
        .collect()
}

/// The option keywords of a table row.
fn table_options(command: &Command) -> BTreeSet<String> {
    command
        .args
        .iter()
        .filter_map(|a| match a.kind {
            Kind::Option(k) | Kind::Flag(k) | Kind::Words(k) | Kind::TextOption(k) => Some(k),
            _ => None,
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_command_is_documented_granted_sent_and_headed_alike() {
    let docs = read(&root().join("docs/commands.md"));
    let acl = read(&root().join("deploy/users.acl")).to_lowercase();
    let clients = clients();
    let known = known_codes();
    let mut missing = Vec::new();
    for command in COMMANDS {
        let name = command.name;
        let Some(section) = section(&docs, command) else {
            missing.push(format!("{name}: no section in docs/commands.md"));
            continue;
        };
        let granted = acl.contains(&format!("+{name} ")) || acl.contains(&format!("+{name})"));
        if granted != (command.audience != Audience::Replication) {
            missing.push(format!("{name}: granted by deploy/users.acl: {granted}"));
        }
        for client in clients
            .iter()
            .filter(|_| command.audience == Audience::Client)
        {
            if !sends(client, command) {
                missing.push(format!("{name}: not in the {} client", client.0));
            }
        }
        let path = command_file(command);
        let header = header(&fs::read_to_string(&path).unwrap_or_default());
        if !header.contains(&format!("`{} ", name.to_uppercase())) {
            missing.push(format!(
                "{name}: {} does not open with its syntax",
                path.display()
            ));
            continue;
        }
        let options = header_options(&header);
        if options != table_options(command) {
            missing.push(format!(
                "{name}: the header's options {options:?}, the table's {:?}",
                table_options(command)
            ));
        }
        let errors = header.find("Errors").map_or("", |at| &header[at..]);
        let said = codes_in(errors, &known);
        let documented = codes_in(section, &known);
        if said != documented {
            missing.push(format!(
                "{name}: the header's errors {said:?}, docs/commands.md's {documented:?}"
            ));
        }
    }
    assert!(missing.is_empty(), "the command checklist: {missing:#?}");
}

#[test]
fn the_checklist_reads_what_it_checks() {
    let java = "enum ticketcommand {\n  init,\n  claim;\n  private final";
    assert_eq!(
        enum_constants(java),
        ["claim", "init"].map(String::from).into()
    );
    let known: BTreeSet<String> = ["SOLDOUT", "LIMIT", "ERR"].map(String::from).into();
    let found = codes_in(
        "Errors: `SOLDOUT event 'e' ...`, `LIMIT`, `ERR`, `WAIT`",
        &known,
    );
    assert_eq!(found, ["LIMIT", "SOLDOUT"].map(String::from).into());
    let header = "`TICKET.WAIT event user [COUNT n]` — joins";
    assert_eq!(header_options(header), ["COUNT"].map(String::from).into());
}
