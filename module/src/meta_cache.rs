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
            draw: None,
            seated: false,
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
