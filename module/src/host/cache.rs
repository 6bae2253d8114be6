//! What the module keeps of each event between commands, so a command
//! looks it up once: the event's key names and id as Redis strings (made
//! once and reused, with the constant field names and values of the meta
//! hash and the log), the last id it gave the event's log, and a copy of
//! the event's meta hash.
//!
//! Commands run on Redis's main thread only, so the caches are thread-locals
//! without locks. Their strings are never freed except when the key-name
//! cache is full and starts over (bounded memory with any number of events).
//!
//! The meta copy serves the claim hot path: reading five hash fields costs
//! about as much as the rest of a claim's bookkeeping, and the meta hash
//! changes only through `TICKET.*` commands, which update this copy as they
//! write. Anything else that touches a meta key (a user's `HSET`/`DEL`/
//! `RENAME`/`EXPIRE`, replication on a replica) raises a keyspace
//! notification that drops the entry; `FLUSHALL`, `SWAPDB`, loading, role
//! changes and slot migrations, which raise no per-key notification, drop
//! everything. Each copy also remembers whether the event's pool key was
//! absent when a command last looked (most claims find it so: numbers come
//! from `minted` until some come back), so that a claim need not open it;
//! the module's own writes to the pool clear that, anyone else's raise a
//! notification that drops the copy.

use std::cell::{Cell, RefCell};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};

use redis_module::raw::{self, RedisModuleString};
use rustc_hash::FxHashMap;

use protocol::keys::event_of_key;
use protocol::StreamId;

use crate::pool::Meta;

pub use protocol::keys::{Part, PARTS};

/// The Redis type one of the event's keys must have, and its name for error
/// messages.
pub fn expected_type(part: Part) -> (raw::KeyType, &'static str) {
    match part {
        Part::Meta | Part::Holders | Part::Wants => (raw::KeyType::Hash, "hash"),
        Part::Pool | Part::Holds | Part::Waiting => (raw::KeyType::ZSet, "zset"),
        Part::Log => (raw::KeyType::Stream, "stream"),
        Part::Seats => (raw::KeyType::String, "string"),
    }
}

/// A string that lives for the rest of the process.
fn forever(bytes: &[u8]) -> *mut RedisModuleString {
    // SAFETY: NULL context: the string is unmanaged and outlives commands.
    unsafe {
        raw::RedisModule_CreateString.unwrap()(ptr::null_mut(), bytes.as_ptr().cast(), bytes.len())
    }
}

/// The key names of one event and the event id itself, as Redis strings,
/// the last id this process gave the event's log and the event's cached
/// meta: what a command looks up once per event.
#[derive(Clone, Copy)]
pub struct EventStrings {
    keys: [*mut RedisModuleString; PARTS.len()],
    event: *mut RedisModuleString,
    /// (database, the log's last id): made with the strings, freed with them.
    last_log_id: *const Cell<Option<(i32, StreamId)>>,
    /// The meta cache's entry: made with the strings, freed with them.
    meta: *const Slot,
}

impl EventStrings {
    /// The last id this process gave the event's log in database `db`, if
    /// it remembers one (a guess: see `log_append`).
    pub fn last_log_id(&self, db: i32) -> Option<StreamId> {
        // SAFETY: made by `event_strings`, freed only with the strings.
        let last = unsafe { (*self.last_log_id).get() };
        last.filter(|(d, _)| *d == db).map(|(_, id)| id)
    }

    /// Remembers `id` as the last id of the event's log in database `db`.
    pub fn set_last_log_id(&self, db: i32, id: StreamId) {
        // SAFETY: as in `last_log_id`.
        unsafe { (*self.last_log_id).set(Some((db, id))) }
    }

    /// The event's cached meta.
    pub fn meta(&self) -> &Slot {
        // SAFETY: made by `event_strings`, freed only with the strings.
        unsafe { &*self.meta }
    }

    pub fn key(&self, part: Part) -> *mut RedisModuleString {
        self.keys[part as usize]
    }

    pub fn event(&self) -> *mut RedisModuleString {
        self.event
    }

    /// The key name as a Rust string, for error messages.
    pub fn key_string(&self, part: Part) -> String {
        let mut len = 0;
        // SAFETY: a live string; the pointer is valid for `len` bytes.
        let bytes = unsafe {
            let p = raw::RedisModule_StringPtrLen.unwrap()(self.key(part), &mut len);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        };
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn free(self) {
        for s in self.keys.into_iter().chain([self.event]) {
            // SAFETY: made by `forever`, freed once, when the cache starts over.
            unsafe { raw::RedisModule_FreeString.unwrap()(ptr::null_mut(), s) };
        }
        // SAFETY: made by `Box::into_raw` in `event_strings`, freed once.
        drop(unsafe { Box::from_raw(self.last_log_id.cast_mut()) });
        // SAFETY: as the last id.
        drop(unsafe { Box::from_raw(self.meta.cast_mut()) });
    }
}

/// How many events' key names are kept before the cache starts over.
const CACHED_EVENTS: usize = 4096;

thread_local! {
    static EVENTS: RefCell<FxHashMap<String, EventStrings>> = RefCell::new(FxHashMap::default());
    /// The last event looked up: the bytes of its key in `EVENTS` (a
    /// `String`'s buffer does not move with the map's entries) and its
    /// strings. A sale's commands name one event over and over, which is
    /// then compared instead of hashed and looked up.
    static LAST_EVENT: Cell<Option<(*const u8, usize, EventStrings)>> = const { Cell::new(None) };
}

/// The constant strings, made on first use and never freed (a pointer, not
/// a thread-local copy: the hot path reads them a dozen times per command).
static CONSTANTS: AtomicPtr<Constants> = AtomicPtr::new(ptr::null_mut());

/// The key names of `event`, made on first use. The strings stay valid
/// until the end of the current command even if the cache starts over.
pub fn event_strings(event: &str) -> EventStrings {
    if let Some(last) = last_event(event) {
        return last;
    }
    EVENTS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some((key, found)) = cache.get_key_value(event) {
            LAST_EVENT.set(Some((key.as_ptr(), key.len(), *found)));
            return *found;
        }
        if cache.len() >= CACHED_EVENTS {
            // Free before making new ones; no command is holding these
            // (a command asks for its strings once, before using them).
            LAST_EVENT.set(None);
            for (_, strings) in cache.drain() {
                strings.free();
            }
        }
        let made = EventStrings {
            keys: PARTS.map(|part| forever(protocol::keys::key(event, part).as_bytes())),
            event: forever(event.as_bytes()),
            last_log_id: Box::into_raw(Box::new(Cell::new(None))),
            meta: Box::into_raw(Box::default()),
        };
        let key = event.to_owned();
        LAST_EVENT.set(Some((key.as_ptr(), key.len(), made)));
        cache.insert(key, made);
        made
    })
}

/// The strings of `event` when it is the last event looked up.
fn last_event(event: &str) -> Option<EventStrings> {
    let (bytes, len, strings) = LAST_EVENT.get()?;
    // SAFETY: the buffer of the key of `EVENTS` these strings are under,
    // which stays in the map (and its buffer in place) until the cache
    // starts over, which forgets `LAST_EVENT` first.
    let key = unsafe { std::slice::from_raw_parts(bytes, len) };
    (key == event.as_bytes()).then_some(strings)
}

/// Drops the cached meta of `event` (whatever its database).
pub fn forget_meta(event: &str) {
    EVENTS.with(|cache| {
        if let Some(strings) = cache.borrow().get(event) {
            strings.meta().forget();
        }
    })
}

/// Drops every cached meta.
pub fn forget_all_meta() {
    EVENTS.with(|cache| cache.borrow().values().for_each(|s| s.meta().forget()))
}

/// The log's field names and op names, and the effect's op names (the
/// index of each is its position in [`Constants::named`]'s `match`).
const NAMED: [&str; 25] = [
    "op",
    "event",
    "user",
    "ticket",
    "at",
    "total",
    "opens_at",
    "closes_at",
    "claim",
    "cancel",
    "init",
    "open",
    "close",
    "drop",
    "tickets",
    "until",
    "hold",
    "confirm",
    "expire",
    "offer",
    "incarnation",
    "restore",
    "status",
    "from",
    "limit",
];

/// Constant field names and values.
#[derive(Clone, Copy)]
pub struct Constants {
    pub total: *mut RedisModuleString,
    pub minted: *mut RedisModuleString,
    pub status: *mut RedisModuleString,
    pub opens_at: *mut RedisModuleString,
    pub closes_at: *mut RedisModuleString,
    pub created_at: *mut RedisModuleString,
    pub hold: *mut RedisModuleString,
    pub limit: *mut RedisModuleString,
    pub held: *mut RedisModuleString,
    pub extra: *mut RedisModuleString,
    pub offer: *mut RedisModuleString,
    pub waitseq: *mut RedisModuleString,
    pub incarnation: *mut RedisModuleString,
    pub restore_status: *mut RedisModuleString,
    pub restore_orders: *mut RedisModuleString,
    pub restore_from: *mut RedisModuleString,
    pub restore_sum: *mut RedisModuleString,
    /// A draw event's meta fields.
    pub draw: *mut RedisModuleString,
    pub seed: *mut RedisModuleString,
    pub admit: *mut RedisModuleString,
    pub drawn_at: *mut RedisModuleString,
    pub admit_second: *mut RedisModuleString,
    pub admit_used: *mut RedisModuleString,
    /// A seated event's layout (stored JSON).
    pub layout: *mut RedisModuleString,
    /// The summary of an event's allocations.
    pub allocations: *mut RedisModuleString,
    pub allocated: *mut RedisModuleString,
    pub release_at: *mut RedisModuleString,
    /// Tickets listed for resale.
    pub listed: *mut RedisModuleString,
    named: [(&'static str, *mut RedisModuleString); NAMED.len()],
    /// The numbers below [`SMALL_NUMBERS`]: effect versions, a stream id's
    /// sequence within its millisecond, small ticket numbers and counts.
    small: [*mut RedisModuleString; SMALL_NUMBERS],
}

/// How many small numbers are kept as strings: enough for the sequence
/// numbers of a millisecond's entries in a burst (a few hundred at 100,000
/// claims a second), as Redis itself shares the integers below 10,000.
const SMALL_NUMBERS: usize = 1024;

impl Constants {
    fn new() -> Constants {
        let named = NAMED.map(|s| (s, forever(s.as_bytes())));
        let find = |s: &str| {
            named
                .iter()
                .find(|(n, _)| *n == s)
                .map_or_else(|| forever(s.as_bytes()), |(_, p)| *p)
        };
        Constants {
            total: find("total"),
            minted: forever(b"minted"),
            status: find("status"),
            opens_at: find("opens_at"),
            closes_at: find("closes_at"),
            created_at: forever(b"created_at"),
            hold: find("hold"),
            limit: find("limit"),
            held: forever(b"held"),
            extra: forever(b"extra"),
            offer: find("offer"),
            waitseq: forever(b"waitseq"),
            incarnation: find("incarnation"),
            restore_status: forever(b"restore_status"),
            restore_orders: forever(b"restore_orders"),
            restore_from: forever(b"restore_from"),
            restore_sum: forever(b"restore_sum"),
            draw: forever(b"draw"),
            seed: forever(b"seed"),
            admit: forever(b"admit"),
            drawn_at: forever(b"drawn_at"),
            admit_second: forever(b"admit_second"),
            admit_used: forever(b"admit_used"),
            layout: forever(b"layout"),
            allocations: forever(b"allocations"),
            allocated: forever(b"allocated"),
            release_at: forever(b"release_at"),
            listed: forever(b"listed"),
            named,
            small: std::array::from_fn(|n| forever(itoa::Buffer::new().format(n).as_bytes())),
        }
    }

    /// The constant string for `s`, if there is one (a `match`: this runs
    /// for every field of every log record).
    pub fn named(&self, s: &str) -> Option<*mut RedisModuleString> {
        let index = match s {
            "op" => 0,
            "event" => 1,
            "user" => 2,
            "ticket" => 3,
            "at" => 4,
            "total" => 5,
            "opens_at" => 6,
            "closes_at" => 7,
            "claim" => 8,
            "cancel" => 9,
            "init" => 10,
            "open" => 11,
            "close" => 12,
            "drop" => 13,
            "tickets" => 14,
            "until" => 15,
            "hold" => 16,
            "confirm" => 17,
            "expire" => 18,
            "offer" => 19,
            "incarnation" => 20,
            "restore" => 21,
            "status" => 22,
            "from" => 23,
            "limit" => 24,
            _ => return None,
        };
        let (name, string) = self.named[index];
        debug_assert_eq!(name, s);
        Some(string)
    }

    /// The constant string of `n`, when it is a small number.
    pub fn number(&self, n: i64) -> Option<*mut RedisModuleString> {
        usize::try_from(n)
            .ok()
            .and_then(|i| self.small.get(i))
            .copied()
    }
}

/// The constant strings (made on first use, on Redis's main thread).
pub fn constants() -> &'static Constants {
    let mut made = CONSTANTS.load(Ordering::Relaxed);
    if made.is_null() {
        made = Box::into_raw(Box::new(Constants::new()));
        CONSTANTS.store(made, Ordering::Relaxed);
    }
    // SAFETY: set once to a leaked Box and never freed or changed again;
    // commands run on the main thread only, so there is no race to make it.
    unsafe { &*made }
}

/// What is kept of one event.
#[derive(Debug, Clone)]
pub struct CachedMeta {
    pub meta: Meta,
    /// The pool key was absent when last looked at, and nothing has been
    /// added to it since.
    pub pool_absent: bool,
}

/// One event's cached entry, for the database it was read in. The host
/// keeps one per event beside the event's key names, so a command finds
/// it with the look-up it makes for those anyway.
#[derive(Debug, Default)]
pub struct Slot(RefCell<Option<(i32, CachedMeta)>>);

impl Slot {
    /// The cached entry for database `db`.
    pub fn get(&self, db: i32) -> Option<CachedMeta> {
        match &*self.0.borrow() {
            Some((d, entry)) if *d == db => Some(entry.clone()),
            _ => None,
        }
    }

    /// `f` of the cached meta for `db`, without copying it.
    pub fn read<T>(&self, db: i32, f: impl FnOnce(&Meta) -> T) -> Option<T> {
        match &*self.0.borrow() {
            Some((d, entry)) if *d == db => Some(f(&entry.meta)),
            _ => None,
        }
    }

    /// Remembers the meta as just read from its key in `db` (whether the
    /// pool is absent is not known yet).
    pub fn put(&self, db: i32, meta: Meta) {
        let entry = CachedMeta {
            meta,
            pool_absent: false,
        };
        *self.0.borrow_mut() = Some((db, entry));
    }

    /// Changes the cached meta for `db`, if cached.
    pub fn update(&self, db: i32, change: impl FnOnce(&mut Meta)) {
        self.update_entry(db, |e| change(&mut e.meta))
    }

    /// Remembers whether the pool key is absent in `db`, if cached.
    pub fn set_pool_absent(&self, db: i32, absent: bool) {
        self.update_entry(db, |e| e.pool_absent = absent)
    }

    /// Drops the entry (of any database).
    pub fn forget(&self) {
        *self.0.borrow_mut() = None;
    }

    fn update_entry(&self, db: i32, change: impl FnOnce(&mut CachedMeta)) {
        if let Some((d, entry)) = &mut *self.0.borrow_mut() {
            if *d == db {
                change(entry);
            }
        }
    }
}

/// The event whose meta or pool key `key` is (`ticket:{E}:meta` -> `E`):
/// a change to either drops the event's entry.
pub fn event_of_cached_key(key: &[u8]) -> Option<&str> {
    event_of_key(key, Part::Meta).or_else(|| event_of_key(key, Part::Pool))
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
            draw: None,
            seated: false,
            allocs: Default::default(),
            listed: 0,
        }
    }

    #[test]
    fn a_slot_holds_one_database_entry() {
        let slot = Slot::default();
        slot.put(0, meta(1));
        assert_eq!(slot.get(0).map(|e| e.meta.minted), Some(1));
        assert!(slot.get(1).is_none(), "another database's entry");
        slot.update(1, |m| m.minted = 9);
        slot.set_pool_absent(1, true);
        assert_eq!(
            slot.get(0).map(|e| (e.meta.minted, e.pool_absent)),
            Some((1, false))
        );
        slot.update(0, |m| m.minted = 5);
        slot.set_pool_absent(0, true);
        assert_eq!(
            slot.get(0).map(|e| (e.meta.minted, e.pool_absent)),
            Some((5, true))
        );
        // A meta read again from its key knows nothing of the pool.
        slot.put(0, meta(5));
        assert_eq!(slot.get(0).map(|e| e.pool_absent), Some(false));
        slot.put(1, meta(2));
        assert!(slot.get(0).is_none(), "replaced by database 1's");
        slot.forget();
        assert!(slot.get(1).is_none());
    }

    #[test]
    fn meta_and_pool_keys_name_their_event() {
        assert_eq!(event_of_cached_key(b"ticket:{e1}:meta"), Some("e1"));
        assert_eq!(event_of_cached_key(b"ticket:{e1}:pool"), Some("e1"));
        assert_eq!(event_of_cached_key(b"ticket:{e1}:holders"), None);
        assert_eq!(event_of_cached_key(b"other"), None);
    }
}
