//! A per-event copy of the meta hash for the claim hot path.
//!
//! Reading five hash fields costs about as much as the rest of a claim's
//! bookkeeping, and the meta hash changes only through `TICKET.*` commands,
//! which update this copy as they write. Anything else that touches a meta
//! key (a user's `HSET`/`DEL`/`RENAME`/`EXPIRE`, replication on a replica)
//! raises a keyspace notification that drops the entry; `FLUSHALL`,
//! `SWAPDB`, loading and role changes, which raise no per-key notification,
//! drop everything. Commands run on Redis's main thread only, so a
//! thread-local map needs no lock.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use crate::pool::Meta;

/// Entries kept before the cache starts over (bounded memory).
const CAPACITY: usize = 10_000;

/// Database id -> event id -> meta (nested so a lookup by `&str` allocates
/// nothing).
type Entries = FxHashMap<i32, FxHashMap<String, Meta>>;

thread_local! {
    static ENTRIES: RefCell<Entries> = RefCell::new(FxHashMap::default());
}

/// The cached meta of `event` in database `db`.
pub fn get(db: i32, event: &str) -> Option<Meta> {
    ENTRIES.with(|m| m.borrow().get(&db)?.get(event).cloned())
}

/// Remembers the meta of `event` as just read or written.
pub fn put(db: i32, event: &str, meta: Meta) {
    ENTRIES.with(|m| {
        let mut m = m.borrow_mut();
        if m.values().map(FxHashMap::len).sum::<usize>() >= CAPACITY {
            m.clear();
        }
        m.entry(db).or_default().insert(event.to_owned(), meta);
    })
}

/// Changes the cached meta of `event`, if cached.
pub fn update(db: i32, event: &str, change: impl FnOnce(&mut Meta)) {
    ENTRIES.with(|m| {
        if let Some(meta) = m.borrow_mut().get_mut(&db).and_then(|d| d.get_mut(event)) {
            change(meta);
        }
    })
}

/// Drops the entry of `event`.
pub fn forget(db: i32, event: &str) {
    ENTRIES.with(|m| {
        if let Some(d) = m.borrow_mut().get_mut(&db) {
            d.remove(event);
        }
    });
}

/// Drops everything.
pub fn clear() {
    ENTRIES.with(|m| m.borrow_mut().clear());
}

/// The event whose meta key `key` is (`ticket:{E}:meta` -> `E`).
pub fn event_of_meta_key(key: &[u8]) -> Option<&str> {
    let inner = key.strip_prefix(b"ticket:{")?.strip_suffix(b"}:meta")?;
    std::str::from_utf8(inner).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::Status;

    fn meta(minted: i64) -> Meta {
        Meta {
            total: 10,
            minted,
            status: Status::Open,
            opens_at: 0,
            closes_at: 0,
            hold: 0,
            limit: 1,
            held: 0,
            extra: 0,
            offer: 600_000,
            waitseq: 0,
            incarnation: None,
        }
    }

    #[test]
    fn entries_are_per_database_and_event() {
        put(0, "e", meta(1));
        put(1, "e", meta(2));
        assert_eq!(get(0, "e").map(|m| m.minted), Some(1));
        update(1, "e", |m| m.minted = 5);
        assert_eq!(get(1, "e").map(|m| m.minted), Some(5));
        forget(0, "e");
        assert!(get(0, "e").is_none());
        clear();
        assert!(get(1, "e").is_none());
    }

    #[test]
    fn meta_keys_name_their_event() {
        assert_eq!(event_of_meta_key(b"ticket:{e1}:meta"), Some("e1"));
        assert_eq!(event_of_meta_key(b"ticket:{e1}:pool"), None);
        assert_eq!(event_of_meta_key(b"other"), None);
    }
}

/// Subscribes to what can change a meta key behind the module's back:
/// keyspace notifications (per key) and the server events that raise none.
#[cfg(not(test))]
pub fn subscribe(ctx: &redis_module::Context) -> Result<(), &'static str> {
    use redis_module::raw;
    use std::os::raw::c_int;

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
        let server = raw::RedisModule_SubscribeToServerEvent.ok_or("no server events API")?;
        for id in [
            raw::REDISMODULE_EVENT_FLUSHDB,
            raw::REDISMODULE_EVENT_LOADING,
            raw::REDISMODULE_EVENT_REPLICATION_ROLE_CHANGED,
            raw::REDISMODULE_EVENT_SWAPDB,
        ] {
            let event = raw::RedisModuleEvent { id, dataver: 1 };
            if server(ctx.ctx, event, Some(on_server_event)) != ok {
                return Err("cannot subscribe to server events");
            }
        }
    }
    Ok(())
}

#[cfg(not(test))]
unsafe extern "C" fn on_key_event(
    ctx: *mut redis_module::raw::RedisModuleCtx,
    _type: std::os::raw::c_int,
    _event: *const std::os::raw::c_char,
    key: *mut redis_module::raw::RedisModuleString,
) -> std::os::raw::c_int {
    use redis_module::raw;
    let mut len = 0;
    // SAFETY: Redis passes a live key name and the context of the change.
    let name = unsafe {
        let p = raw::RedisModule_StringPtrLen.unwrap()(key, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    };
    if let Some(event) = event_of_meta_key(name) {
        // SAFETY: a plain getter on the live context.
        let db = unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx) };
        forget(db, event);
    }
    raw::REDISMODULE_OK as std::os::raw::c_int
}

#[cfg(not(test))]
unsafe extern "C" fn on_server_event(
    _ctx: *mut redis_module::raw::RedisModuleCtx,
    _event: redis_module::raw::RedisModuleEvent,
    _subevent: u64,
    _data: *mut std::os::raw::c_void,
) {
    clear();
    // The same events can bring holds the expiry index does not know.
    crate::expiry::invalidate();
}
