//! What the module hears from the server: keyspace notifications and the
//! server events that invalidate the meta cache and the expiry index, and
//! the cron loop that runs what the load step hands it (the expiry sweep);
//! a role change also starts or ends this node's term as a promoted
//! primary (`host::note`); on Valkey 9, the atomic slot migrations that
//! bring in or take away whole slots (`crate::migration`).

use std::os::raw::{c_char, c_int, c_void};

use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};
use redis_module::Context;

use super::cache;
use super::command::Module;
use super::ffi::bytes_of;
use super::panic::guard;
use super::server::Server;
use crate::expiry;

/// Subscribes to what can change a meta or pool key behind the module's back:
/// keyspace notifications (per key) and the server events that raise none
/// (`FLUSHALL`, `SWAPDB`, loading, role changes).
pub fn subscribe_invalidations(ctx: &Context, server: &Server) -> Result<(), &'static str> {
    let ok = raw::REDISMODULE_OK as c_int;
    // SAFETY: called once from OnLoad with the load context; the callbacks
    // are plain functions that live as long as the module.
    unsafe {
        let keyspace =
            raw::RedisModule_SubscribeToKeyspaceEvents.ok_or("no keyspace events API")?;
        if keyspace(
            ctx.ctx,
            raw::REDISMODULE_NOTIFY_ALL as c_int,
            Some(on_key_event),
        ) != ok
        {
            return Err("cannot subscribe to keyspace events");
        }
        let subscribe = raw::RedisModule_SubscribeToServerEvent.ok_or("no server events API")?;
        for id in [
            raw::REDISMODULE_EVENT_FLUSHDB,
            raw::REDISMODULE_EVENT_LOADING,
            raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
            raw::REDISMODULE_EVENT_SWAPDB,
        ] {
            let event = raw::RedisModuleEvent { id, dataver: 1 };
            if subscribe(ctx.ctx, event, Some(on_server_event)) != ok {
                return Err("cannot subscribe to server events");
            }
        }
        if server.migrates_slots_atomically() {
            let event = raw::RedisModuleEvent {
                id: ATOMIC_SLOT_MIGRATION,
                dataver: 1,
            };
            if subscribe(ctx.ctx, event, Some(on_slot_migration)) != ok {
                return Err("cannot subscribe to atomic slot migrations");
            }
        }
    }
    Ok(())
}

unsafe extern "C" fn on_key_event(
    ctx: *mut RedisModuleCtx,
    _type: c_int,
    _event: *const c_char,
    key: *mut RedisModuleString,
) -> c_int {
    if guard(ctx, "a keyspace notification", || forget_cached(ctx, key)).is_none() {
        // A cache that missed a change could decide on stale values:
        // forget everything instead.
        guard(ctx, "a keyspace notification", || {
            cache::forget_all_meta();
            crate::seat_cache::clear();
        });
    }
    raw::REDISMODULE_OK as c_int
}

/// Forgets what the caches hold of the event whose key `key` changed.
fn forget_cached(ctx: *mut RedisModuleCtx, key: *mut RedisModuleString) {
    crate::fault::point(crate::fault::Point::KeyEvent);
    if let Some(event) = cache::event_of_cached_key(bytes_of(key)) {
        // SAFETY: a plain getter on the live context of the change.
        let db = unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx) };
        cache::forget_meta(event);
        crate::seat_cache::forget(db, event);
    } else if let Some(event) = crate::seat_cache::event_of_seats_key(bytes_of(key)) {
        // SAFETY: a plain getter on the live context of the change.
        let db = unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx) };
        crate::seat_cache::forget(db, event);
    }
}

unsafe extern "C" fn on_server_event(
    ctx: *mut RedisModuleCtx,
    event: raw::RedisModuleEvent,
    subevent: u64,
    _data: *mut c_void,
) {
    guard(ctx, "a server event", || forget_all(event, subevent));
}

/// After a server event: a role change starts or ends a term, and every
/// cache and the expiry index start again.
fn forget_all(event: raw::RedisModuleEvent, subevent: u64) {
    if event.id == raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED {
        // A promoted primary notes the answers it gives without logging
        // until the sidecar's heal: see `pool::note`.
        let now_primary = subevent == raw::REDISMODULE_EVENT_REPLROLECHANGED_NOW_MASTER;
        super::note::role_changed(now_primary);
    }
    forget_everything();
}

/// Forgets every cached meta and layout and marks the expiry index stale:
/// the same events that change keys behind the module's back can bring
/// holds the index does not know (the next sweep rebuilds it from the keys).
fn forget_everything() {
    cache::forget_all_meta();
    crate::seat_cache::clear();
    expiry::invalidate();
}

/// Valkey 9's atomic slot migration event (`VALKEYMODULE_EVENT_ATOMIC_SLOT_MIGRATION`;
/// the crate's header gives 19 another name, Redis 8.4's).
const ATOMIC_SLOT_MIGRATION: u64 = 19;

/// Its sub-events.
const IMPORT_STARTED: u64 = 0;
const IMPORT_ABORTED: u64 = 2;
const EXPORT_ABORTED: u64 = 3;
const IMPORT_COMPLETED: u64 = 4;
const EXPORT_COMPLETED: u64 = 5;

/// `ValkeyModuleSlotRange`: an inclusive range of slots.
#[repr(C)]
struct SlotRange {
    start: c_int,
    end: c_int,
}

/// `ValkeyModuleAtomicSlotMigrationInfoV1`.
#[repr(C)]
struct MigrationInfo {
    version: u64,
    job_name: [c_char; 41],
    slot_ranges: *const SlotRange,
    num_slot_ranges: u32,
}

unsafe extern "C" fn on_slot_migration(
    ctx: *mut RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    subevent: u64,
    data: *mut c_void,
) {
    // SAFETY: the server passes its migration info, live for the call.
    let info = unsafe { data.cast::<MigrationInfo>().as_ref() };
    guard(ctx, "a slot migration event", || {
        slot_migration(subevent, info)
    });
}

/// An import marks its slots for the sweep to leave alone until it ends;
/// any migration that ends forgets what this node cached and rebuilds the
/// expiry index from the keys it now has (the holds and offers imported
/// expire here from then on).
fn slot_migration(subevent: u64, info: Option<&MigrationInfo>) {
    let Some(info) = info.filter(|i| i.version >= 1) else {
        return forget_everything();
    };
    // The job name: 40 hex digits, NUL-terminated within its array.
    let job: Vec<u8> = info
        .job_name
        .iter()
        .take_while(|c| **c != 0)
        .map(|c| *c as u8)
        .collect();
    match subevent {
        IMPORT_STARTED => crate::migration::import_started(&job, ranges(info)),
        IMPORT_COMPLETED | IMPORT_ABORTED => {
            crate::migration::import_ended(&job);
            forget_everything();
        }
        EXPORT_COMPLETED | EXPORT_ABORTED => forget_everything(),
        _ => {}
    }
}

/// The slot ranges of a migration, copied (the server frees its array
/// after the event).
fn ranges(info: &MigrationInfo) -> Vec<std::ops::RangeInclusive<u16>> {
    if info.slot_ranges.is_null() {
        return Vec::new();
    }
    // SAFETY: the server passes num_slot_ranges ranges, live for the call.
    let ranges =
        unsafe { std::slice::from_raw_parts(info.slot_ranges, info.num_slot_ranges as usize) };
    let slot = |s: c_int| u16::try_from(s.clamp(0, 16383)).unwrap_or(0);
    ranges.iter().map(|r| slot(r.start)..=slot(r.end)).collect()
}

/// Runs `M`'s cron work (the expiry sweep) from Redis's cron (`hz` times a
/// second, 10 by default). Not a module timer: Redis refuses
/// `MODULE UNLOAD` while a module's timer is pending, and a sweep timer is
/// always pending.
pub fn subscribe_cron<M: Module>(ctx: &Context) -> Result<(), &'static str> {
    let event = raw::RedisModuleEvent {
        id: raw::REDISMODULE_EVENT_CRON_LOOP,
        dataver: 1,
    };
    // SAFETY: the load context; the callback is a plain function.
    let subscribed = unsafe {
        raw::RedisModule_SubscribeToServerEvent.ok_or("no server events API")?(
            ctx.ctx,
            event,
            Some(on_cron::<M>),
        )
    };
    match subscribed == raw::REDISMODULE_OK as c_int {
        true => Ok(()),
        false => Err("cannot subscribe to the cron loop"),
    }
}

unsafe extern "C" fn on_cron<M: Module>(
    ctx: *mut RedisModuleCtx,
    _event: raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut c_void,
) {
    // The next sweep tries again.
    guard(ctx, "the expiry sweep", || M::on_cron(&Context::new(ctx)));
}
