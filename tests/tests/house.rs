//! The house's map and its one rule, held to the code:
//!
//! * docs/design.md "Where things are" walks a claim through the module and
//!   a log entry through the sidecar, one `path:function,function` line per
//!   file that runs: every file named exists, every function named is
//!   defined there (`fn <name>`), and the counts the prose gives are the
//!   blocks' own;
//! * no two source files of the project import each other (`crate::` and
//!   `super::` paths of every Rust crate, resolved to the file they name).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use ticketgate_tests::workspace_root;

/// The fenced blocks of docs/design.md's "Where things are", line by line.
fn walks() -> Vec<Vec<String>> {
    let design = fs::read_to_string(workspace_root().join("docs/design.md")).unwrap();
    let start = design
        .find("### Where things are")
        .expect("docs/design.md has \"Where things are\"");
    let section = &design[start..];
    let section = &section[..section[4..].find("\n## ").map_or(section.len(), |i| i + 4)];
    section
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|block| {
            block
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// `path:f,g  what` -> (path, [f, g]).
fn stop(line: &str) -> (String, Vec<String>) {
    let head = line.split_whitespace().next().unwrap_or("");
    let (path, functions) = head.split_once(':').unwrap_or((head, ""));
    let functions = functions
        .split(',')
        .filter(|f| !f.is_empty())
        .map(str::to_owned)
        .collect();
    (path.to_owned(), functions)
}

fn defines(code: &str, function: &str) -> bool {
    let needle = format!("fn {function}");
    code.match_indices(&needle).any(|(i, _)| {
        let next = code[i + needle.len()..].chars().next();
        matches!(next, Some('(' | '<'))
    })
}

#[test]
fn the_walks_name_files_and_functions_that_exist() {
    let walks = walks();
    assert!(walks.len() >= 2, "a claim's walk and an entry's: {walks:?}");
    let mut wrong = Vec::new();
    for line in walks.iter().flatten() {
        let (path, functions) = stop(line);
        let Ok(code) = fs::read_to_string(workspace_root().join(&path)) else {
            wrong.push(format!("{path}: no such file"));
            continue;
        };
        for f in functions.iter().filter(|f| !defines(&code, f)) {
            wrong.push(format!("{path}: no fn {f}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "the map in docs/design.md is stale: {wrong:#?}"
    );
}

#[test]
fn the_claims_walk_counts_what_it_says() {
    let design = fs::read_to_string(workspace_root().join("docs/design.md")).unwrap();
    let claim = walks()
        .into_iter()
        .find(|w| w.iter().any(|l| l.starts_with("module/src/cmd/claim.rs")))
        .expect("a walk through cmd/claim.rs");
    let count = |prefix: &str| claim.iter().filter(|l| l.starts_with(prefix)).count();
    let said = format!(
        "{} files of the module, {} of `protocol`",
        count("module/"),
        count("protocol/")
    );
    assert!(design.contains(&said), "docs/design.md should say: {said}");
    assert!(
        count("module/") <= 15,
        "a plain claim runs {} module files; the budget is 15",
        count("module/")
    );
}

#[test]
fn the_entrys_walk_stays_within_ten_sidecar_files() {
    let entry = walks()
        .into_iter()
        .find(|w| {
            w.iter()
                .any(|l| l.starts_with("sidecar/src/sync/reader.rs"))
        })
        .expect("a walk through sync/reader.rs");
    let files = entry.iter().filter(|l| l.starts_with("sidecar/")).count();
    assert!(
        files <= 10,
        "a log entry runs {files} sidecar files; the budget is 10"
    );
}

/// The Rust crates whose files must not import each other.
const CRATES: [&str; 8] = [
    "module",
    "protocol",
    "sidecar",
    "conn",
    "live",
    "bench",
    "tests",
    "fuzz/targets",
];

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's module path within its crate: `src/a/b.rs` and
/// `src/a/b/mod.rs` are `[a, b]`, the crate root `[]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// The file that module path `path` (or its longest existing prefix) is.
fn file_of(src: &Path, path: &[String]) -> Option<PathBuf> {
    (0..=path.len()).rev().find_map(|n| {
        let dir = path[..n].iter().fold(src.to_path_buf(), |d, p| d.join(p));
        let candidates = match n {
            0 => vec![src.join("lib.rs"), src.join("main.rs")],
            _ => vec![dir.with_extension("rs"), dir.join("mod.rs")],
        };
        candidates.into_iter().find(|c| c.is_file())
    })
}

/// A file's code without its unit tests (`#[cfg(test)] mod tests` and
/// what follows: the convention puts them last).
fn without_tests(code: &str) -> &str {
    let at = ["mod tests", "pub mod tests", "pub(crate) mod tests"]
        .map(|m| format!("#[cfg(test)]\n{m}"))
        .iter()
        .filter_map(|start| code.find(start.as_str()))
        .min();
    at.map_or(code, |at| &code[..at])
}

/// The module paths a file's code names with `crate::` or `super::`
/// (comments and unit tests cut off; `{..}` groups opened one level).
fn named_paths(code: &str, me: &[String]) -> Vec<Vec<String>> {
    let code: String = without_tests(code)
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (i, _) in code
        .match_indices("crate::")
        .chain(code.match_indices("super::"))
    {
        if code[..i].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let (base, rest) = match code[i..].starts_with("crate::") {
            true => (Vec::new(), &code[i + 7..]),
            false => (me[..me.len().saturating_sub(1)].to_vec(), &code[i + 7..]),
        };
        for tail in segments(rest) {
            let mut path = base.clone();
            path.extend(tail);
            out.push(path);
        }
    }
    out
}

/// The paths a `use` tail names: `a::b::C` -> [[a, b, C]]; `a::{b, c::D}`
/// -> [[a, b], [a, c, D]].
fn segments(rest: &str) -> Vec<Vec<String>> {
    let mut prefix = Vec::new();
    let mut chars = rest;
    loop {
        let name: String = chars
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            break;
        }
        prefix.push(name.clone());
        chars = &chars[name.len()..];
        match chars.strip_prefix("::") {
            Some(more) => chars = more,
            None => return vec![prefix],
        }
    }
    let Some(group) = chars.strip_prefix('{') else {
        return vec![prefix];
    };
    let body = &group[..group.find('}').unwrap_or(group.len())];
    body.split(',')
        .map(|item| {
            let mut path = prefix.clone();
            path.extend(
                item.trim()
                    .split("::")
                    .map(|s| s.trim().to_owned())
                    .filter(|s| !s.is_empty() && s != "self" && s != "{"),
            );
            path
        })
        .collect()
}

#[test]
fn no_two_files_import_each_other() {
    let mut edges: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for krate in CRATES {
        let src = workspace_root().join(krate).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        for file in &files {
            let me = module_path(&src, file);
            let code = fs::read_to_string(file).unwrap_or_default();
            for path in named_paths(&code, &me) {
                if let Some(target) = file_of(&src, &path).filter(|t| t != file) {
                    edges.entry(file.clone()).or_default().insert(target);
                }
            }
        }
    }
    let root = workspace_root();
    let show = |p: &Path| p.strip_prefix(&root).unwrap_or(p).display().to_string();
    let mut pairs = BTreeSet::new();
    for (a, targets) in &edges {
        for b in targets {
            if a < b && edges.get(b).is_some_and(|t| t.contains(a)) {
                pairs.insert(format!("{} <-> {}", show(a), show(b)));
            }
        }
    }
    assert!(pairs.is_empty(), "files that import each other: {pairs:#?}");
}

#[test]
fn paths_resolve_as_the_compiler_reads_them() {
    assert_eq!(
        segments("pool::{self, Clock}, x"),
        [
            vec!["pool".to_owned()],
            vec!["pool".to_owned(), "Clock".to_owned()]
        ]
    );
    let me = ["host".to_owned(), "store".to_owned()];
    let found = named_paths(
        "use super::log::LoggedEntry; // crate::cmd\nlet x = crate::pool::claim(1);",
        &me,
    );
    assert_eq!(
        found,
        [
            vec!["pool".to_owned(), "claim".to_owned()],
            vec![
                "host".to_owned(),
                "log".to_owned(),
                "LoggedEntry".to_owned()
            ],
        ]
    );
    assert!(defines(
        "pub(super) fn read_holder(&mut self)",
        "read_holder"
    ));
    assert!(!defines("fn read_holder_of()", "read_holder"));
}
