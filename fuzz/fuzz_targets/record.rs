//! libFuzzer binary of the target `record`: its body (and what it checks)
//! is in fuzz/targets, shared with the stable runner.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::target("record").expect("a target").run)(data));
