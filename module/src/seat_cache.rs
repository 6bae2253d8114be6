//! A per-event copy of a seated event's parsed layout and seat state, so a
//! claim never parses the layout's JSON nor reads the seat key's bytes: the
//! search runs over [`SeatState`]'s per-row summaries in module memory.
//!
//! The seat key (`ticket:{E}:seats`) and the meta hash's `layout` field are
//! the truth; this copy is rebuilt from them on first use (after a restart,
//! an AOF load, on a replica) and kept in step by the module's own writes,
//! which update both. Anything else that touches the seat or meta key
//! raises a keyspace notification that drops the entry (`host::events`),
//! and the server events that raise none drop everything, as for the
//! meta cache. An entry also names its event's incarnation: a re-created
//! event never sees its predecessor's seats.

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use protocol::record::Incarnation;
use protocol::seats::{Layout, Seat, SeatState};

/// Seats kept before the cache starts over (bounded memory: about 1 byte
/// a seat, so some 20 MB).
const CAPACITY: usize = 20_000_000;

/// One event's seating.
pub struct Seating {
    pub incarnation: Option<Incarnation>,
    pub layout: Layout,
    pub state: SeatState,
}

type Entries = FxHashMap<i32, FxHashMap<String, Seating>>;

thread_local! {
    static ENTRIES: RefCell<Entries> = RefCell::new(FxHashMap::default());
}

/// Runs `f` on the cached seating of `event` of `incarnation`, if cached.
pub fn with<T>(
    db: i32,
    event: &str,
    incarnation: Option<Incarnation>,
    f: impl FnOnce(&Seating) -> T,
) -> Option<T> {
    ENTRIES.with(|m| {
        let m = m.borrow();
        let seating = m.get(&db)?.get(event)?;
        (seating.incarnation == incarnation).then(|| f(seating))
    })
}

/// Remembers the seating of `event` as just built.
pub fn put(db: i32, event: &str, seating: Seating) {
    ENTRIES.with(|m| {
        let mut m = m.borrow_mut();
        let seats: usize = m
            .values()
            .flat_map(|d| d.values())
            .map(|s| s.layout.total as usize)
            .sum();
        if seats + seating.layout.total as usize > CAPACITY {
            m.clear();
        }
        m.entry(db).or_default().insert(event.to_owned(), seating);
    })
}

/// Sets seats of the cached seating of `event`, if cached.
pub fn set(db: i32, event: &str, ids: &[u32], seat: Seat) {
    ENTRIES.with(|m| {
        if let Some(s) = m.borrow_mut().get_mut(&db).and_then(|d| d.get_mut(event)) {
            s.state.set(&s.layout, ids, seat);
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

/// The event whose seat key `key` is (`ticket:{E}:seats` -> `E`).
pub fn event_of_seats_key(key: &[u8]) -> Option<&str> {
    protocol::keys::event_of_key(key, protocol::keys::Part::Seats)
}
