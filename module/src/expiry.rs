//! Holds that expire by themselves: an in-memory index of deadlines and the
//! sweep Redis's cron runs over it (DESIGN.md "Checkout").
//!
//! No key spans events (a cluster node may only write keys of its own
//! slots), so the index lives in memory: entries `(deadline, db, event)`,
//! one per distinct deadline noted, added by the apply code whenever a hold
//! is written (on the primary and on replicas alike, so a promoted replica
//! knows its holds) and rebuilt from the `ticket:{E}:holds` keys after a
//! load, a role change or a flush (the sweep does it on its next run; until
//! then every claim, confirm and cancel checks its event's holds key).
//!
//! An entry is a hint: the hold it was made for may be confirmed or
//! cancelled since. The sweep takes the due entries, expires the event's
//! due holds through `pool::sweep` (on the primary only; replicas never
//! expire anything, they apply their primary's `op=expire`), and notes the
//! event's next deadline again. Each sweep visits at most `ticket.sweep-max`
//! events and expires at most that many holds, so a burst of deadlines is
//! spread over sweeps and Redis keeps answering in between.

use std::cell::RefCell;
use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

thread_local! {
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
    })
}

/// Whether some hold of `event` may be due at `now`. Cheap for the claim
/// path: one comparison with the earliest deadline of any event, and only
/// when that is due a lookup of the event's own.
pub fn maybe_due(db: i32, event: &str, now: i64) -> bool {
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
    INDEX.with(|index| index.borrow_mut().stale = true);
}

/// Whether the index needs a rebuild; clears it and the flag when so (the
/// caller rebuilds it from the keyspace).
fn take_stale() -> bool {
    INDEX.with(|index| {
        let mut index = index.borrow_mut();
        let stale = std::mem::take(&mut index.stale);
        if stale {
            index.deadlines.clear();
            index.earliest = None;
        }
        stale
    })
}

/// Removes and returns up to `max` due entries' `(db, event)`, each once.
fn take_due(now: i64, max: usize) -> Vec<(i32, String)> {
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
        assert_eq!(take_due(30, 10), [(1, "a".to_string())]);
        invalidate();
        assert!(maybe_due(0, "a", 0), "a stale index trusts nothing");
        assert!(take_stale());
    }
}

#[cfg(not(test))]
pub use sweep::{subscribe, SWEEP_INTERVAL, SWEEP_MAX};

#[cfg(not(test))]
mod sweep {
    use std::os::raw::{c_int, c_void};
    use std::sync::atomic::{AtomicI64, Ordering};

    use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString};
    use redis_module::Context;

    use protocol::keys::{event_of_key, Part};

    use crate::pool;
    use crate::redis_store::{Access, RedisStore};

    /// `ticket.sweep-interval`: ms between two sweeps.
    pub static SWEEP_INTERVAL: AtomicI64 = AtomicI64::new(100);
    /// `ticket.sweep-max`: most holds expired (and events visited) per sweep.
    pub static SWEEP_MAX: AtomicI64 = AtomicI64::new(1000);

    /// When the last sweep ran (unix ms).
    static LAST_SWEEP: AtomicI64 = AtomicI64::new(0);

    /// Runs the sweep from Redis's cron (`hz` times a second, 10 by
    /// default), every `ticket.sweep-interval` ms at most. Not a module
    /// timer: Redis refuses `MODULE UNLOAD` while a module's timer is
    /// pending, and a sweep timer is always pending. So the interval's
    /// granularity is the cron's (100 ms at the default `hz 10`).
    pub fn subscribe(ctx: &Context) -> Result<(), &'static str> {
        // The first sweep comes one interval after load, like every other.
        LAST_SWEEP.store(crate::cmd::now_ms(), Ordering::Relaxed);
        let event = raw::RedisModuleEvent {
            id: raw::REDISMODULE_EVENT_CRON_LOOP,
            dataver: 1,
        };
        // SAFETY: the load context; the callback is a plain function.
        let subscribed = unsafe {
            raw::RedisModule_SubscribeToServerEvent.ok_or("no server events API")?(
                ctx.ctx,
                event,
                Some(on_cron),
            )
        };
        match subscribed == raw::REDISMODULE_OK as c_int {
            true => Ok(()),
            false => Err("cannot subscribe to the cron loop"),
        }
    }

    unsafe extern "C" fn on_cron(
        ctx: *mut RedisModuleCtx,
        _event: raw::RedisModuleEvent,
        _subevent: u64,
        _data: *mut c_void,
    ) {
        let now = crate::cmd::now_ms();
        let interval = SWEEP_INTERVAL.load(Ordering::Relaxed);
        if now - LAST_SWEEP.load(Ordering::Relaxed) < interval {
            return;
        }
        LAST_SWEEP.store(now, Ordering::Relaxed);
        // A panic must not cross into Redis; the next sweep tries again.
        let _ = std::panic::catch_unwind(|| sweep_once(ctx));
    }

    fn sweep_once(ctx: *mut RedisModuleCtx) {
        // SAFETY: a plain getter on the live cron context.
        let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx) };
        if flags & raw::REDISMODULE_CTX_FLAGS_LOADING as c_int != 0 {
            return;
        }
        if super::take_stale() {
            rebuild(ctx);
        }
        let primary = flags & raw::REDISMODULE_CTX_FLAGS_MASTER as c_int != 0;
        let now = crate::cmd::now_ms();
        let max = SWEEP_MAX.load(Ordering::Relaxed).max(1) as usize;
        let mut budget = max;
        let mut again = Vec::new();
        for (db, event) in super::take_due(now, max) {
            // SAFETY: the live cron context; `take_due` only holds dbs that
            // existed when noted.
            unsafe { raw::RedisModule_SelectDb.unwrap()(ctx, db) };
            let context = Context::new(ctx);
            let access = if primary { Access::Write } else { Access::Read };
            let mut store = RedisStore::open(&context, &event, access, None);
            if primary && budget > 0 {
                budget -= pool::sweep(&mut store, &event, now, budget).unwrap_or(0);
            }
            if let Some(next) = store.next_deadline() {
                again.push((db, event.clone(), next));
            }
        }
        // Noted after the loop: on a replica (or with the budget spent) the
        // next deadline may be due already and must wait for the next sweep.
        for (db, event, next) in again {
            super::note(db, &event, next);
        }
    }

    /// Rebuilds the index from every `ticket:{E}:holds` key of every
    /// database (after a load, a flush, a role change or a module load).
    fn rebuild(ctx: *mut RedisModuleCtx) {
        let mut found: Vec<(i32, String)> = Vec::new();
        let mut db = 0;
        // SAFETY: the live cron context; SelectDb fails past the last db.
        while unsafe { raw::RedisModule_SelectDb.unwrap()(ctx, db) } == raw::REDISMODULE_OK as c_int
        {
            for event in holds_keys(ctx) {
                found.push((db, event));
            }
            db += 1;
        }
        let context = Context::new(ctx);
        for (db, event) in found {
            // SAFETY: as above; db exists.
            unsafe { raw::RedisModule_SelectDb.unwrap()(ctx, db) };
            let mut store = RedisStore::open(&context, &event, Access::Read, None);
            if let Some(next) = store.next_deadline() {
                super::note(db, &event, next);
            }
        }
    }

    /// The events of the selected database that have a holds key.
    fn holds_keys(ctx: *mut RedisModuleCtx) -> Vec<String> {
        let mut events: Vec<String> = Vec::new();
        // SAFETY: the cursor is created and destroyed here; the callback
        // gets `events` back as its private data for the scan's duration.
        unsafe {
            let cursor = raw::RedisModule_ScanCursorCreate.unwrap()();
            let data = (&mut events as *mut Vec<String>).cast::<c_void>();
            while raw::RedisModule_Scan.unwrap()(ctx, cursor, Some(on_key), data) != 0 {}
            raw::RedisModule_ScanCursorDestroy.unwrap()(cursor);
        }
        events
    }

    extern "C" fn on_key(
        _ctx: *mut RedisModuleCtx,
        name: *mut RedisModuleString,
        _key: *mut RedisModuleKey,
        data: *mut c_void,
    ) {
        let mut len = 0;
        // SAFETY: Redis passes a live key name; `data` is the scan's Vec.
        unsafe {
            let p = raw::RedisModule_StringPtrLen.unwrap()(name, &mut len);
            let name = std::slice::from_raw_parts(p.cast::<u8>(), len);
            if let Some(event) = event_of_key(name, Part::Holds) {
                (*data.cast::<Vec<String>>()).push(event.to_owned());
            }
        }
    }
}
