//! The stable fuzz runner, part of the test command: for every target of
//! `fuzz_targets::TARGETS`, it replays the committed corpus
//! (`fuzz/corpus/<name>/`), then runs inputs that proptest makes (corpus
//! entries mutated byte by byte and line by line, with the target's words
//! spliced in, and inputs generated from a small grammar of the target)
//! until the target's time is up: `TICKETGATE_FUZZ_SECS` seconds each
//! (default 3; set it higher to fuzz longer). A fresh seed each run,
//! printed; `TICKETGATE_FUZZ_SEED=<n>` replays one. A failing input is
//! shrunk, printed and saved, ready to join the corpus. The same bodies
//! run under libFuzzer in `fuzz/` (docs/operations.md "Fuzzing and the
//! hostile-input sweep").

mod runner;

use fuzz_targets::TARGETS;

/// Every target, two at a time (the test command shares two cores).
#[test]
fn every_target_survives_its_corpus_and_its_inputs() {
    let settings = runner::Settings::from_env();
    let failures = runner::run_all(TARGETS, &settings);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The corpus stays small (tens of files per target), and the cargo-fuzz
/// project has a binary for every target: the two runners cannot drift.
#[test]
fn every_target_has_a_small_corpus_and_a_cargo_fuzz_binary() {
    let manifest = std::fs::read_to_string(runner::fuzz_dir().join("Cargo.toml")).unwrap();
    for target in TARGETS {
        let corpus = runner::corpus(target.name);
        assert!(
            (1..=100).contains(&corpus.len()),
            "{}: {} corpus files (keep 1 to 100)",
            target.name,
            corpus.len()
        );
        for (path, input) in &corpus {
            assert!(input.len() <= 64 << 10, "{} is over 64 KiB", path.display());
        }
        let bin = runner::fuzz_dir().join(format!("fuzz_targets/{}.rs", target.name));
        let body =
            std::fs::read_to_string(&bin).unwrap_or_else(|e| panic!("{}: {e}", bin.display()));
        assert!(
            body.contains(&format!("target(\"{}\")", target.name)),
            "{} runs another target",
            bin.display()
        );
        assert!(
            manifest.contains(&format!("name = \"{}\"", target.name)),
            "fuzz/Cargo.toml has no [[bin]] {}",
            target.name
        );
    }
}

/// An input too big for the corpus and for libFuzzer's inputs: a venue
/// at the limits (40 sections of 1,000 rows of 5 seats, 200,000 seats) is
/// 1 MB of JSON, while its stored form, every default written out, is
/// over the 4 MiB a layout may have: `INIT` and `RESTORE` refuse it whole
/// (`Layout::stored`), and the `layout` target finds nothing to store.
#[test]
fn a_venue_too_large_once_stored_is_refused_whole() {
    let rows: Vec<String> = (0..1000)
        .map(|i| format!(r#"{{"name":"{i}","seats":5}}"#))
        .collect();
    let sections: Vec<String> = (0..40)
        .map(|s| format!(r#"{{"name":"S{s}","rows":[{}]}}"#, rows.join(",")))
        .collect();
    let json = format!(r#"{{"sections":[{}]}}"#, sections.join(","));
    // About 1 MB sent, 5 MB once every default is filled in.
    let refused = protocol::seats::Layout::stored(&json, 200_000).unwrap_err();
    assert!(refused.0.contains("stored form"), "{}", refused.0);
    let layout = fuzz_targets::target("layout").expect("the layout target");
    (layout.run)(json.as_bytes());
}
