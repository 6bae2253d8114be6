//! A per-event copy of the meta hash for the claim hot path.
//!
//! Reading five hash fields costs about as much as the rest of a claim's
//! bookkeeping, and the meta hash changes only through `TICKET.*` commands,
//! which update this copy as they write. Anything else that touches a meta
//! key (a user's `HSET`/`DEL`/`RENAME`/`EXPIRE`, replication on a replica)
//! raises a keyspace notification that drops the entry; `FLUSHALL`,
//! `SWAPDB`, loading and role changes, which raise no per-key notification,
//! drop everything. Commands run on Redis's main thread only, so a slot
//! needs no lock.
//!
//! Each entry also remembers whether the event's pool key was absent when
//! a command last looked (most claims find it so: numbers come from
//! `minted` until some come back), so that a claim need not open it. The
//! module's own writes to the pool clear that; anyone else's raise a
//! keyspace notification that drops the entry, as for the meta key.

use std::cell::RefCell;

use protocol::keys::{event_of_key, Part};

use crate::pool::Meta;

/// What is kept of one event.
#[derive(Debug, Clone)]
pub struct Entry {
    pub meta: Meta,
    /// The pool key was absent when last looked at, and nothing has been
    /// added to it since.
    pub pool_absent: bool,
}

/// One event's cached entry, for the database it was read in. The host
/// keeps one per event beside the event's key names, so a command finds
/// it with the look-up it makes for those anyway.
#[derive(Debug, Default)]
pub struct Slot(RefCell<Option<(i32, Entry)>>);

impl Slot {
    /// The cached entry for database `db`.
    pub fn get(&self, db: i32) -> Option<Entry> {
        match &*self.0.borrow() {
            Some((d, entry)) if *d == db => Some(entry.clone()),
            _ => None,
        }
    }

    /// Remembers the meta as just read from its key in `db` (whether the
    /// pool is absent is not known yet).
    pub fn put(&self, db: i32, meta: Meta) {
        let entry = Entry {
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

    fn update_entry(&self, db: i32, change: impl FnOnce(&mut Entry)) {
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
