//! Holds the code to the layer lists its guides give: every `crate::` path
//! of every file under `src/` names a layer listed before the file's own in
//! `lib.rs`, and every `super::` path of a file of `pool/` a file listed
//! before its own in `pool/mod.rs`. Read from the files, so the guide a
//! newcomer reads is the rule the build checks.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// The layers of the guide in `lib.rs`, bottom first: each `//! - ` line
/// names its modules in backticks before its first `:`.
fn layers(lib: &str) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    // A bullet goes on over the `//!   ` lines under it.
    let mut bullets: Vec<String> = Vec::new();
    for line in lib.lines() {
        match (line.strip_prefix("//! - "), line.strip_prefix("//!   ")) {
            (Some(start), _) => bullets.push(start.to_owned()),
            (None, Some(more)) if !bullets.is_empty() => {
                if let Some(last) = bullets.last_mut() {
                    last.push(' ');
                    last.push_str(more);
                }
            }
            _ => {}
        }
    }
    for (rank, bullet) in bullets.iter().enumerate() {
        let head = bullet.split(':').next().unwrap_or_default();
        for name in head.split('`').skip(1).step_by(2) {
            out.insert(name.to_owned(), rank);
        }
    }
    out
}

/// The modules `lib.rs` declares outside tests.
fn declared(lib: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut test_only = false;
    for line in lib.lines() {
        let line = line.trim();
        if let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'))
        {
            if !test_only {
                out.push(name.to_owned());
            }
        }
        test_only = line == "#[cfg(test)]";
    }
    out
}

/// The first module of every `crate::` path in `code` (comments cut off),
/// with the names inside `crate::{..}` groups.
fn imports(code: &str) -> Vec<String> {
    paths_after(code, "crate::")
}

/// The first name of every `<prefix>` path in `code` (comments cut off),
/// with the names inside `<prefix>{..}` groups.
fn paths_after(code: &str, prefix: &str) -> Vec<String> {
    let code: String = code
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (_, rest) in code
        .match_indices(prefix)
        .filter(|(i, _)| !code[..*i].ends_with(|c: char| c.is_alphanumeric() || c == ':'))
        .map(|(i, _)| code.split_at(i + prefix.len()))
    {
        match rest.strip_prefix('{') {
            Some(group) => {
                let mut depth = 0;
                let mut start = true;
                for (at, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => start = true,
                        c if start && (c.is_alphanumeric() || c == '_') => {
                            out.push(ident(&group[at..]));
                            start = false;
                        }
                        _ => {}
                    }
                }
            }
            None => out.push(ident(rest)),
        }
    }
    out
}

fn ident(s: &str) -> String {
    s.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// Every `.rs` file under `dir`, with its path.
fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_import_goes_down_the_guide() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = fs::read_to_string(src.join("lib.rs")).unwrap_or_default();
    let layers = layers(&lib);
    for module in declared(&lib) {
        assert!(
            layers.contains_key(&module),
            "lib.rs's guide omits `{module}`"
        );
    }
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut upward = Vec::new();
    for path in all {
        let relative = path.strip_prefix(&src).unwrap_or(&path);
        let top = relative
            .iter()
            .next()
            .and_then(|s| s.to_str())
            .unwrap_or("");
        let me = top.strip_suffix(".rs").unwrap_or(top);
        let Some(&mine) = layers.get(me) else {
            continue; // lib.rs and this test
        };
        let code = fs::read_to_string(&path).unwrap_or_default();
        for used in imports(&code) {
            match layers.get(&used) {
                Some(&theirs) if used != me && theirs >= mine => {
                    upward.push(format!("{} imports {used}", relative.display()))
                }
                _ => {}
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that go up or sideways: {upward:#?}"
    );
}

#[test]
fn every_pool_file_imports_only_files_listed_before_it() {
    let pool = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/pool");
    let guide = fs::read_to_string(pool.join("mod.rs")).unwrap_or_default();
    let order = layers(&guide);
    for file in declared(&guide) {
        assert!(
            order.contains_key(&file) || file == "memory",
            "pool/mod.rs's list omits `{file}`"
        );
    }
    let mut upward = Vec::new();
    for (file, &mine) in &order {
        let code = fs::read_to_string(pool.join(format!("{file}.rs"))).unwrap_or_default();
        for used in paths_after(&code, "super::") {
            match order.get(&used) {
                Some(&theirs) if used != *file && theirs >= mine => {
                    upward.push(format!("pool/{file}.rs imports {used}"))
                }
                _ => {}
            }
        }
    }
    assert!(
        upward.is_empty(),
        "pool imports that go up or sideways: {upward:#?}"
    );
}

#[test]
fn the_reader_sees_groups_and_inline_paths() {
    let code = "use crate::{args, pool::{self, Clock}, POOL_CHUNK};\n\
                // crate::cmd in a comment\n\
                let x = crate::host::ffi::now_ms();";
    assert_eq!(imports(code), ["args", "pool", "POOL_CHUNK", "host"]);
    let lib = "//! - [`error`]: x: y\n//! - [`a`], [`b`]: z\n";
    let got: Vec<_> = layers(lib).into_iter().collect();
    assert_eq!(got, [("a".into(), 1), ("b".into(), 1), ("error".into(), 0)]);
}
