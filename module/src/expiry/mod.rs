//! Holds that expire by themselves (docs/design.md "Holds and expiry"): an
//! in-memory index of deadlines ([`index`]) and the sweep Redis's cron runs
//! over it ([`sweep`]), kept together like mini-redis's `db.rs`.
//!
//! No key spans events (a cluster node may only write keys of its own
//! slots), so the index lives in memory: entries `(deadline, db, event)`,
//! one per distinct deadline noted, added by the commit step whenever a
//! hold is written (on the primary and on replicas alike, so a promoted
//! replica knows its holds) and rebuilt from the `ticket:{E}:holds` keys
//! after a load, a role change or a flush (the sweep does it on its next
//! run; until then every claim, confirm and cancel checks its event's holds
//! key).
//!
//! An entry is a hint: the hold it was made for may be confirmed or
//! cancelled since. The sweep takes the due entries, expires the event's
//! due holds through `pool::sweep` (on the primary only; replicas never
//! expire anything, they apply their primary's `op=expire`), and notes the
//! event's next deadline again. Each sweep visits at most `ticket.sweep-max`
//! events and expires at most that many holds, so a burst of deadlines is
//! spread over sweeps and Redis keeps answering in between.
//!
//! The same entries bring the sweep to an event for its waiting list: a draw
//! event not drawn yet is noted at its `opens_at` (so it draws with no
//! command at all), and an event whose offers a command or sweep left
//! undone (`ticket.sweep-max` offers made, or `ADMIT`'s second used up) is
//! noted at the time to carry on.

pub mod index;
#[cfg(not(test))]
pub mod sweep;

pub use index::{invalidate, maybe_due, note};

use std::sync::atomic::{AtomicI64, Ordering};

/// `ticket.sweep-max`: most holds expired (and events visited) per sweep,
/// and most waiting-list offers one command or sweep run makes.
pub static SWEEP_MAX: AtomicI64 = AtomicI64::new(1000);

/// `ticket.sweep-max` as a count.
pub fn sweep_max() -> usize {
    SWEEP_MAX.load(Ordering::Relaxed).max(1) as usize
}
