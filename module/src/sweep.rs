//! The expiry sweep: run from Redis's cron every `ticket.sweep-interval`
//! ms at most, it expires the due holds of the events the index names (on
//! a primary), commits those expiries with the commands' commit step
//! (`cmd::commit`), and notes each event's next deadline again. The load
//! step hands it to Redis's cron (`host::events`).

use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::Context;

use protocol::keys::{event_of_key, Part};

use crate::cmd::commit;
use crate::expiry::{maybe_due, note, sweep_max, take_due, take_stale};
use crate::host::ffi::{is_loading, is_primary, now_ms, scan_keys, select_db, writes_paused};
use crate::host::store::{Access, RedisStore};
use crate::pool::{self, Clock, Effects};

/// `ticket.sweep-interval`: ms between two sweeps.
pub static SWEEP_INTERVAL: AtomicI64 = AtomicI64::new(100);

/// When the last sweep ran (unix ms).
static LAST_SWEEP: AtomicI64 = AtomicI64::new(0);

/// Starts the clock at module load: the first sweep comes one interval
/// after load, like every other. So the interval's granularity is the
/// cron's (100 ms at the default `hz 10`).
pub fn start() {
    LAST_SWEEP.store(now_ms(), Ordering::Relaxed);
}

/// One cron tick: sweeps when an interval has passed since the last sweep.
pub fn on_cron(ctx: &Context) {
    let now = now_ms();
    let interval = SWEEP_INTERVAL.load(Ordering::Relaxed);
    if now - LAST_SWEEP.load(Ordering::Relaxed) < interval {
        return;
    }
    LAST_SWEEP.store(now, Ordering::Relaxed);
    sweep_once(ctx);
}

fn sweep_once(ctx: &Context) {
    crate::fault::point(crate::fault::Point::Sweep);
    if is_loading(ctx) {
        return;
    }
    if take_stale() {
        rebuild(ctx);
    }
    // While writes are paused (a planned FAILOVER waits for the replica to
    // reach the primary's offset) the sweep expires nothing, as on a
    // replica; the holds stay free for every command and are swept once
    // the pause ends, here or on the new primary.
    let on_primary = is_primary(ctx);
    let primary = on_primary && !writes_paused();
    let now = now_ms();
    let max = sweep_max();
    let mut budget = max;
    let mut offers = max;
    let mut again = Vec::new();
    for (db, event) in take_due(now, max) {
        if crate::migration::importing(&event) {
            // The source still owns it; the index is rebuilt when the
            // import ends.
            continue;
        }
        // `take_due` only holds dbs that existed when noted.
        select_db(ctx, db);
        let access = if primary { Access::Write } else { Access::Read };
        let mut store = RedisStore::open(ctx, &event, access, None);
        if primary && budget > 0 {
            let mut out = Effects::default();
            // The index no longer holds the event's due entries: its hint
            // says whether holds beyond this sweep's budget may be due.
            let clock = Clock {
                now,
                maybe_due: maybe_due(db, &event, now),
                offers,
            };
            let expired = pool::sweep(&mut store, &mut out, &event, clock, budget);
            commit(ctx, &mut store, &out);
            budget -= expired.unwrap_or(0);
            offers -= out.offered().min(offers);
        } else if on_primary {
            // Not visited this time (the budget is spent, or writes are
            // paused): it may have a draw or offers due, not only holds.
            again.push((db, event.clone(), now));
        }
        if let Some(next) = store.next_deadline() {
            again.push((db, event.clone(), next));
        }
    }
    // Noted after the loop: on a replica (or with the budget spent) the
    // next deadline may be due already and must wait for the next sweep.
    for (db, event, next) in again {
        note(db, &event, next);
    }
}

/// Rebuilds the index from every `ticket:{E}:holds` key of every
/// database (after a load, a flush, a role change or a module load), and
/// from every `ticket:{E}:waiting` key: a draw event not drawn yet is due
/// at its `opens_at`, a list with people waiting now (a promoted replica
/// carries on with the offers its primary left to the sweep).
fn rebuild(ctx: &Context) {
    let mut found = std::collections::BTreeSet::new();
    let mut db = 0;
    while select_db(ctx, db) {
        found.extend(scan_keys(ctx, listed_event).into_iter().map(|e| (db, e)));
        db += 1;
    }
    let now = now_ms();
    for (db, event) in found {
        select_db(ctx, db);
        let mut store = RedisStore::open(ctx, &event, Access::Read, None);
        if let Some(next) = store.next_deadline() {
            note(db, &event, next);
        }
        if let Ok(Some(at)) = pool::draw::next_visit(&mut store, now) {
            note(db, &event, at);
        }
    }
}

/// The event of a `ticket:{E}:holds` or `ticket:{E}:waiting` key name (a
/// draw event's entrants are in the latter), or of a meta key whose event
/// may be a draw event not drawn yet.
fn listed_event(name: &[u8]) -> Option<String> {
    [Part::Holds, Part::Waiting, Part::Meta]
        .into_iter()
        .find_map(|part| event_of_key(name, part))
        .map(str::to_owned)
}
