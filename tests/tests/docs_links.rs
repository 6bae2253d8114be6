//! Every relative link in the repository's Markdown resolves: the file (or
//! folder) exists, and a `#fragment` names a heading of the Markdown file it
//! points to, as GitHub makes heading anchors. Docs are reorganised often;
//! a dead link or anchor fails here instead of in a reader's browser. No
//! servers: it reads the files only.
//!
//! Links are `[text](target)` and `![alt](target)` outside fenced code
//! blocks and code spans; targets with a scheme (`https:`, `mailto:`) are
//! not checked.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

use ticketgate_tests::workspace_root;

/// Folders never walked: build output, dependencies, VCS and tool state.
const SKIP: [&str; 4] = ["target", "node_modules", "build", "dist"];

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with('.') && !SKIP.contains(&name.as_str()) {
                markdown_files(&path, out);
            }
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// A line with its code spans blanked (`` `a](b)` `` is code, not a link),
/// keeping everything else, link labels made of code spans included.
fn without_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(c);
        } else if !in_code {
            out.push(c);
        }
    }
    out
}

/// The lines of `text` outside fenced code blocks, with their numbers.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push((n + 1, line));
        }
    }
    out
}

/// The targets of the links on one line.
fn link_targets(line: &str) -> Vec<String> {
    let line = without_code_spans(line);
    let mut out = Vec::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let end = rest
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(rest.len());
        out.push(rest[..end].to_string());
        rest = &rest[end..];
    }
    out
}

/// GitHub's anchor for a heading: lower case, every character that is not
/// a letter, a digit, `-`, `_` or a space dropped, spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file: its headings' slugs (a repeated slug
/// gets `-1`, `-2`, ...) and any `id="..."` of inline HTML.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let s = slug(line[hashes..].trim().trim_end_matches('#'));
            let n = seen.entry(s.clone()).or_insert(0);
            out.push(if *n == 0 {
                s.clone()
            } else {
                format!("{s}-{n}")
            });
            *n += 1;
        }
        let mut rest = line;
        while let Some(i) = rest.find("id=\"") {
            rest = &rest[i + 4..];
            if let Some(end) = rest.find('"') {
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

/// Why `target`, linked from `file`, does not resolve; `None` when it does.
fn dead(file: &Path, target: &str, cache: &mut BTreeMap<PathBuf, Vec<String>>) -> Option<String> {
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap_or(Path::new(".")).join(path)
    };
    if !resolved.exists() {
        return Some(format!("{} does not exist", resolved.display()));
    }
    let fragment = fragment?;
    if resolved.extension().and_then(|e| e.to_str()) != Some("md") {
        return Some(format!(
            "#{fragment} points into {}, not Markdown",
            resolved.display()
        ));
    }
    let anchors = cache
        .entry(resolved.clone())
        .or_insert_with(|| anchors(&fs::read_to_string(&resolved).unwrap_or_default()));
    if anchors.iter().any(|a| a == fragment) {
        None
    } else {
        Some(format!("{} has no heading #{fragment}", resolved.display()))
    }
}

#[test]
fn every_relative_link_resolves() {
    let root = workspace_root();
    let mut files = Vec::new();
    markdown_files(&root, &mut files);
    files.sort();
    assert!(
        files.iter().any(|f| f.ends_with("docs/design.md")),
        "the walk finds docs/"
    );
    let mut cache = BTreeMap::new();
    let (mut checked, mut broken) = (0, Vec::new());
    for file in &files {
        let text = fs::read_to_string(file).unwrap_or_default();
        for (n, line) in prose_lines(&text) {
            for target in link_targets(line) {
                let scheme = target.split_once(':').is_some_and(|(s, _)| {
                    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
                });
                if scheme || target.is_empty() {
                    continue;
                }
                checked += 1;
                if let Some(why) = dead(file, &target, &mut cache) {
                    let shown = file.strip_prefix(&root).unwrap_or(file);
                    broken.push(format!("{}:{n}: ({target}): {why}", shown.display()));
                }
            }
        }
    }
    assert!(
        checked > 100,
        "only {checked} relative links found: is the walk right?"
    );
    assert!(broken.is_empty(), "dead links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    assert_eq!(slug("Metrics (`--metrics-addr`)"), "metrics---metrics-addr");
    assert_eq!(slug("TICKET._APPLY"), "ticket_apply");
    assert_eq!(slug("The sidecar's pipeline"), "the-sidecars-pipeline");
    assert_eq!(
        slug("`appendonly` / `appendfsync`"),
        "appendonly--appendfsync"
    );
    assert_eq!(
        anchors("# A\n```\n# not a heading\n```\n## A\n## B #\n"),
        ["a", "a-1", "b"]
    );
    assert_eq!(
        link_targets("see [`TICKET.INIT`](docs/commands.md#ticketinit) and `[x](y)`"),
        ["docs/commands.md#ticketinit"]
    );
}

#[test]
fn a_dead_link_and_a_dead_anchor_are_found() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("page").with_extension("md");
    fs::write(
        &page,
        "# Here\n\n[ok](#here) [no](#there) [gone](missing.txt)\n",
    )
    .unwrap();
    let mut cache = BTreeMap::new();
    assert_eq!(dead(&page, "#here", &mut cache), None);
    assert!(dead(&page, "#there", &mut cache).is_some());
    assert!(dead(&page, "missing.txt", &mut cache).is_some());
}
