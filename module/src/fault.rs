//! Panics forced at chosen places, for the test that proves no panic
//! crosses into Redis (`tests/module_panics.rs`). Only a build with the
//! `fault-injection` feature has them: it registers `ticket.fault`, and
//! `CONFIG SET ticket.fault <n>` arms [`Point`] `n` (0 disarms). In every
//! other build [`point`] is empty and compiles away.

/// Where a panic can be forced: one place per kind of entry point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// A write command, after its keys are opened, before it decides.
    Command = 1,
    /// The cron's expiry sweep.
    Sweep = 2,
    /// `INFO ticket`.
    Info = 3,
    /// `TICKET._APPLY` on a replica or at AOF load.
    Apply = 4,
    /// A keyspace notification.
    KeyEvent = 5,
}

/// The armed point's number (0: none), `ticket.fault`.
#[cfg(feature = "fault-injection")]
pub static ARMED: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

/// Panics when `place` is armed.
#[inline(always)]
pub fn point(place: Point) {
    #[cfg(feature = "fault-injection")]
    if ARMED.load(std::sync::atomic::Ordering::Relaxed) == place as i64 {
        panic!("fault injected at {place:?}");
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = place;
}
