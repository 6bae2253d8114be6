//! Holds that expire by themselves (docs/design.md "Holds and expiry"): the
//! in-memory index of deadlines the sweep (`sweep.rs`) runs over, so
//! it finds the events with due holds without scanning keys, and a claim
//! learns in one comparison that none of its event's holds can be due.
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
//!
//! Plain memory, no Redis: below `host`, whose server events invalidate it.

use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicI64, Ordering};

use rustc_hash::FxHashMap;

/// `ticket.sweep-max`: most holds expired (and events visited) per sweep,
/// and most waiting-list offers one command or sweep run makes.
pub static SWEEP_MAX: AtomicI64 = AtomicI64::new(1000);

/// `ticket.sweep-max` as a count.
pub fn sweep_max() -> usize {
    SWEEP_MAX.load(Ordering::Relaxed).max(1) as usize
}

thread_local! {
    /// The index's earliest deadline (`i64::MAX`: none; `i64::MIN`: stale,
    /// so anything may be due), kept beside it so that a claim with nothing
    /// due answers from one plain cell, without borrowing the index.
    static EARLIEST: Cell<i64> = const { Cell::new(i64::MIN) };

    static INDEX: RefCell<Index> = const {
        RefCell::new(Index {
            deadlines: BTreeSet::new(),
            earliest: None,
            stale: true,
        })
    };
}

struct Index {
    /// `(deadline, db, event)`, earliest first.
    deadlines: BTreeSet<(i64, i32, String)>,
    /// Database id -> event -> the earliest deadline noted for it (nested so
    /// a lookup by `&str` allocates nothing); made on first use.
    earliest: Option<FxHashMap<i32, FxHashMap<String, i64>>>,
    /// The keyspace may hold holds the index does not know (after a load,
    /// a flush, a role change, or at module load): rebuild before trusting it.
    stale: bool,
}

impl Index {
    /// Publishes the earliest deadline to [`EARLIEST`].
    fn publish(&self) {
        let earliest = match (self.stale, self.deadlines.first()) {
            (true, _) => i64::MIN,
            (false, Some((d, _, _))) => *d,
            (false, None) => i64::MAX,
        };
        EARLIEST.set(earliest);
    }
}

/// Notes that `event` in `db` has a hold due at `until`.
pub fn note(db: i32, event: &str, until: i64) {
    INDEX.with(|index| {
        let mut index = index.borrow_mut();
        let probe = (until, db, String::new());
        let known = index
            .deadlines
            .range(probe..)
            .take_while(|(d, _, _)| *d == until)
            .any(|(_, b, e)| *b == db && e == event);
        if !known {
            index.deadlines.insert((until, db, event.to_owned()));
        }
        let events = index
            .earliest
            .get_or_insert_with(FxHashMap::default)
            .entry(db)
            .or_default();
        // Look up before inserting: no key copy for an event noted already
        // (a restore notes one hold per order).
        match events.get_mut(event) {
            Some(earliest) => *earliest = (*earliest).min(until),
            None => {
                events.insert(event.to_owned(), until);
            }
        }
        index.publish();
    })
}

/// Whether some hold of `event` may be due at `now`. Cheap for the claim
/// path: one comparison with the earliest deadline of any event, and only
/// when that is due a lookup of the event's own.
pub fn maybe_due(db: i32, event: &str, now: i64) -> bool {
    if now < EARLIEST.get() {
        return false;
    }
    INDEX.with(|index| {
        let index = index.borrow();
        if index.stale {
            return true;
        }
        if index.deadlines.first().is_none_or(|(d, _, _)| *d > now) {
            return false;
        }
        let earliest = index.earliest.as_ref().and_then(|m| m.get(&db)?.get(event));
        earliest.is_some_and(|d| *d <= now)
    })
}

/// Marks the index as needing a rebuild.
pub fn invalidate() {
    INDEX.with(|index| {
        let mut index = index.borrow_mut();
        index.stale = true;
        index.publish();
    });
}

/// Whether the index needs a rebuild; clears it and the flag when so (the
/// caller rebuilds it from the keyspace).
pub fn take_stale() -> bool {
    INDEX.with(|index| {
        let mut index = index.borrow_mut();
        let stale = std::mem::take(&mut index.stale);
        if stale {
            index.deadlines.clear();
            index.earliest = None;
        }
        index.publish();
        stale
    })
}

/// Removes and returns up to `max` due entries' `(db, event)`, each once.
pub fn take_due(now: i64, max: usize) -> Vec<(i32, String)> {
    INDEX.with(|index| {
        let mut index = index.borrow_mut();
        let mut taken: Vec<(i32, String)> = Vec::new();
        while taken.len() < max {
            match index.deadlines.first() {
                Some((d, _, _)) if *d <= now => {}
                _ => break,
            }
            let Some((_, db, event)) = index.deadlines.pop_first() else {
                break;
            };
            // The sweep notes the event's next deadline again.
            if let Some(events) = index.earliest.as_mut().and_then(|m| m.get_mut(&db)) {
                events.remove(&event);
            }
            if !taken.iter().any(|(b, e)| *b == db && *e == event) {
                taken.push((db, event));
            }
        }
        index.publish();
        taken
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_entries_are_taken_once_per_event_earliest_first() {
        take_stale();
        note(0, "a", 10);
        note(0, "a", 10);
        note(0, "b", 5);
        note(0, "a", 7);
        note(1, "a", 20);
        assert!(!maybe_due(0, "a", 4));
        assert!(maybe_due(0, "b", 5));
        assert!(!maybe_due(0, "a", 5), "only b is due at 5");
        assert!(maybe_due(0, "a", 7));
        assert_eq!(take_due(10, 10), [(0, "b".into()), (0, "a".into())]);
        assert!(!maybe_due(1, "a", 19), "nothing due before 20");
        assert!(maybe_due(1, "a", 20));
        assert_eq!(take_due(30, 10), [(1, "a".to_string())]);
        assert!(!maybe_due(1, "a", i64::MAX - 1), "nothing left");
        invalidate();
        assert!(maybe_due(0, "a", 0), "a stale index trusts nothing");
        assert!(take_stale());
    }
}
