//! libFuzzer binary of the target `effect`: its body (and what it checks)
//! is in fuzz/targets, shared with the stable runner.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| (fuzz_targets::target("effect").expect("a target").run)(data));
