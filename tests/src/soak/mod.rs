//! A seeded, replayable fault soak against real servers (issue 19): a
//! primary redis-server with the module (`appendonly yes`, `appendfsync
//! always`) and one replica, a private MariaDB, the release sidecar
//! draining into it, writer threads on four events (plain, holds, a
//! waiting list, a seated venue: [`seated`], with allocations:
//! [`partners`], [`box_office`]) with `WAIT 1` after every write, a
//! nemesis striking every few seconds, and a history checker at the end.
//! Used by `tests/tests/soak_failover.rs`.
//!
//! * [`rng`]: the seeded RNG; [`history`]: the recorded operations;
//! * [`checker`]: the pure checks (unit-tested), with [`taken_back`]: no
//!   acknowledged answer is taken back (issue 30), and [`alloc_check`]:
//!   the allocations' (issue 42);
//! * [`door`]: transfers and scans on an event of their own (issue 43);
//! * [`gate`]: optionally keeps allocation operations out of a fault's reach;
//! * [`topology`], [`sidecar`], [`nemesis`], [`writers`], [`state`]: the I/O;
//! * `run` puts them together, `report` prints what a run found.
//!
//! Environment: `TICKETGATE_SOAK_SEED` (replays a run's choices),
//! `TICKETGATE_SOAK_SECS` (default 75), `TICKETGATE_SOAK_FAULTS` (`safe`,
//! the default: everything but the unplanned failovers; `all`; or a list
//! of fault names, see [`nemesis::Fault`]; `sentinel`: three sentinels
//! fail the primary over, the sidecar on their URL),
//! `TICKETGATE_SOAK_ALLOC_GATE` (`1`: the [`gate`] on). With the unplanned failovers:
//!
//! ```sh
//! TICKETGATE_SOAK_FAULTS=all cargo test --release --workspace --test soak_failover -- --nocapture
//! ```

pub mod alloc_check;
pub mod box_office;
pub mod checker;
pub mod door;
pub mod gate;
pub mod history;
pub mod nemesis;
pub mod partners;
mod report;
pub mod rng;
mod run;
pub mod seated;
pub mod sidecar;
pub mod state;
pub mod taken_back;
pub mod topology;
pub mod writers;

pub use report::Report;
pub use run::{read_end_state, run, users_of};

use nemesis::{parse_menu, Fault};

/// The menu when `TICKETGATE_SOAK_FAULTS` is unset: every fault, unplanned
/// failovers and failovers during a heal included (the sidecar heals them).
pub const DEFAULT_FAULTS: &str = "all";

/// Default length of a run, in seconds: short enough for CI.
pub const DEFAULT_SECS: u64 = 75;

/// Whether the allocation [`gate::Gate`] is on when
/// `TICKETGATE_SOAK_ALLOC_GATE` is unset: off, since the heal undoes a lost
/// allocation op in MySQL (it quarantined the event before).
pub const DEFAULT_ALLOC_GATE: bool = false;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub seed: u64,
    pub secs: u64,
    pub faults: Vec<Fault>,
    /// Writer threads per event (four events).
    pub writers_per_event: usize,
    /// Users each writer owns.
    pub users_per_writer: usize,
    /// Allocation operations only while no fault strikes ([`gate`]).
    pub alloc_gate: bool,
}

impl Config {
    /// From `TICKETGATE_SOAK_SEED`, `_SECS`, `_FAULTS`; a fresh seed if none.
    pub fn from_env() -> Result<Config, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let seed = match var("TICKETGATE_SOAK_SEED") {
            Some(s) => s
                .trim()
                .parse()
                .map_err(|e| format!("TICKETGATE_SOAK_SEED {s:?}: {e}"))?,
            None => rng::fresh_seed(),
        };
        let secs = match var("TICKETGATE_SOAK_SECS") {
            Some(s) => s
                .trim()
                .parse()
                .map_err(|e| format!("TICKETGATE_SOAK_SECS {s:?}: {e}"))?,
            None => DEFAULT_SECS,
        };
        let faults = parse_menu(&var("TICKETGATE_SOAK_FAULTS").unwrap_or(DEFAULT_FAULTS.into()))?;
        let alloc_gate = match var("TICKETGATE_SOAK_ALLOC_GATE").as_deref().map(str::trim) {
            None => DEFAULT_ALLOC_GATE,
            Some("1" | "on") => true,
            Some("0" | "off") => false,
            Some(other) => return Err(format!("TICKETGATE_SOAK_ALLOC_GATE {other:?}: 1 or 0")),
        };
        Ok(Config {
            seed,
            secs,
            faults,
            writers_per_event: 2,
            users_per_writer: 100,
            alloc_gate,
        })
    }

    /// The environment that replays this run.
    pub fn replay(&self) -> String {
        let names: Vec<&str> = self.faults.iter().map(|f| f.name()).collect();
        format!(
            "TICKETGATE_SOAK_SEED={} TICKETGATE_SOAK_SECS={} TICKETGATE_SOAK_FAULTS={} TICKETGATE_SOAK_ALLOC_GATE={}",
            self.seed,
            self.secs,
            names.join(","),
            u8::from(self.alloc_gate)
        )
    }
}
