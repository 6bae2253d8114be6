//! The stable runner's machinery: settings, the corpus, running one input
//! with its panic caught, and the timed loop over each target (its inputs
//! come from [`inputs`]).

mod inputs;

use std::cell::Cell;
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use fuzz_targets::Target;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// How long each target runs, in seconds.
const SECS_ENV: &str = "TICKETGATE_FUZZ_SECS";
/// The seed to replay.
const SEED_ENV: &str = "TICKETGATE_FUZZ_SEED";
/// How long shrinking a failing input may take.
const SHRINK_TIME: Duration = Duration::from_secs(10);

/// What a run is told by its environment.
pub struct Settings {
    pub per_target: Duration,
    pub seed: u64,
}

impl Settings {
    pub fn from_env() -> Settings {
        let secs = std::env::var(SECS_ENV).ok().map(|s| {
            s.parse::<f64>()
                .unwrap_or_else(|_| panic!("{SECS_ENV}={s:?} is not a number of seconds"))
        });
        let seed = std::env::var(SEED_ENV).ok().map(|s| {
            s.parse::<u64>()
                .unwrap_or_else(|_| panic!("{SEED_ENV}={s:?} is not a u64"))
        });
        let fresh = || {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default();
            now.as_nanos() as u64 ^ u64::from(std::process::id())
        };
        Settings {
            per_target: Duration::from_secs_f64(secs.unwrap_or(3.0)),
            seed: seed.unwrap_or_else(fresh),
        }
    }
}

/// Where the cargo-fuzz project is (`fuzz/`).
pub fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The committed corpus of target `name`, sorted by file name.
pub fn corpus(name: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join("corpus").join(name);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .map(|e| e.expect("a corpus entry").path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

/// Runs every target, two at a time; the failures, described.
pub fn run_all(targets: &'static [Target], settings: &Settings) -> Vec<String> {
    quiet_panics();
    let queue = Mutex::new(targets.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some(target) = queue.lock().unwrap().next() else {
                    break;
                };
                if let Err(e) = fuzz(target, settings) {
                    failures.lock().unwrap().push(e);
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// One target: its corpus, then inputs until its time is up.
fn fuzz(target: &'static Target, settings: &Settings) -> Result<(), String> {
    let started = Instant::now();
    let corpus = corpus(target.name);
    // Every failing file at once: each may be a bug of its own.
    let failing: Vec<String> = corpus
        .iter()
        .filter_map(|(path, input)| {
            let why = run_one(target, input).err()?;
            Some(format!(
                "{}: the corpus file {} fails: {why}",
                target.name,
                path.display()
            ))
        })
        .collect();
    if !failing.is_empty() {
        return Err(failing.join("\n"));
    }
    let seed = settings.seed ^ fnv(target.name.as_bytes());
    let replayed = corpus.len();
    let inputs: Vec<Vec<u8>> = corpus.into_iter().map(|(_, input)| input).collect();
    let strategy = inputs::any_input(target, inputs);
    let tried = timed_loop(target, &strategy, seed, settings.per_target)?;
    say(&format!(
        "fuzz {}: {replayed} corpus inputs, then {tried} made ones, in {:.1} s (TICKETGATE_FUZZ_SEED={})",
        target.name,
        started.elapsed().as_secs_f64(),
        settings.seed
    ));
    Ok(())
}

/// Runs inputs of `strategy` until `time` is up; how many it ran.
fn timed_loop(
    target: &Target,
    strategy: &impl Strategy<Value = Vec<u8>>,
    seed: u64,
    time: Duration,
) -> Result<u64, String> {
    let mut runner = runner_with_seed(seed);
    let deadline = Instant::now() + time;
    let mut tried = 0;
    while Instant::now() < deadline {
        let mut tree = strategy
            .new_tree(&mut runner)
            .map_err(|e| format!("{}: no input: {e}", target.name))?;
        tried += 1;
        if let Err(why) = run_one(target, &tree.current()) {
            return Err(failure(target, &mut tree, why));
        }
    }
    Ok(tried)
}

fn runner_with_seed(seed: u64) -> TestRunner {
    let mut bytes = [0u8; 32];
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&(seed.rotate_left(i as u32 * 16)).to_le_bytes());
    }
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
    TestRunner::new_with_rng(Config::default(), rng)
}

/// A failing input, shrunk, saved and described.
fn failure(target: &Target, tree: &mut impl ValueTree<Value = Vec<u8>>, why: String) -> String {
    let (input, why) = shrink(target, tree, why);
    let saved = save(target.name, &input);
    format!(
        "{}: the input {} fails: {why}\nsaved as {} (add it to fuzz/corpus/{}/ with the fix)",
        target.name,
        shown(&input),
        saved.display(),
        target.name
    )
}

/// The smallest failing input proptest finds within [`SHRINK_TIME`].
fn shrink(
    target: &Target,
    tree: &mut impl ValueTree<Value = Vec<u8>>,
    why: String,
) -> (Vec<u8>, String) {
    let deadline = Instant::now() + SHRINK_TIME;
    let mut best = (tree.current(), why);
    if !tree.simplify() {
        return best;
    }
    while Instant::now() < deadline {
        let failed = run_one(target, &tree.current());
        let next = match failed {
            Err(why) => {
                best = (tree.current(), why);
                tree.simplify()
            }
            Ok(()) => tree.complicate(),
        };
        if !next {
            break;
        }
    }
    best
}

/// Writes a failing input under the test's temp dir.
fn save(name: &str, input: &[u8]) -> PathBuf {
    let path =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-{name}-{:016x}", fnv(input)));
    std::fs::write(&path, input).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

thread_local! {
    /// Set while a target runs: its panics are expected, and reported
    /// once, shrunk, rather than printed for every try.
    static QUIET: Cell<bool> = const { Cell::new(false) };
}

/// Installs (once) a panic hook that is silent while a target runs.
fn quiet_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                default(info);
            }
        }));
    });
}

/// Runs the target on one input; its panic message when it panics.
fn run_one(target: &Target, input: &[u8]) -> Result<(), String> {
    QUIET.with(|q| q.set(true));
    let result = catch_unwind(AssertUnwindSafe(|| (target.run)(input)));
    QUIET.with(|q| q.set(false));
    result.map_err(|panic| {
        let text = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
        text.unwrap_or_else(|| "a panic without a message".into())
    })
}

/// An input as a Rust byte string, cut at 2,000 characters.
fn shown(input: &[u8]) -> String {
    let escaped: String = input
        .escape_ascii()
        .to_string()
        .chars()
        .take(2000)
        .collect();
    format!("b\"{escaped}\" ({} bytes)", input.len())
}

/// FNV-1a: a stable hash for seeds and file names.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A line on the test's stderr even when libtest captures output (the
/// counts belong in every run's log).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
