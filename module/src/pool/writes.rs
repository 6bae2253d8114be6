//! The small writes the effects share: whether the event is seated, an
//! order's ticket count, the meta's counters, an allocation's record and
//! the meta's summary of the allocations. Effects (`effects`) and the
//! rebuild's restore steps (`restore_apply`) both use them.

use protocol::keys::alloc_field;
use protocol::record::Tickets;

use super::model::{Allocation, Allocs};
use super::store::{MetaWrite, Store};

/// Whether the event is seated (read on the paths that give seats back or
/// sell them; a claim knows from its pick).
pub(super) fn seated(store: &mut impl Store) -> bool {
    matches!(store.meta(), Ok(Some(meta)) if meta.seated)
}

pub(super) fn count(tickets: &Tickets) -> i64 {
    tickets.as_slice().len() as i64
}

pub(super) fn add_counts(store: &mut impl Store, held: i64, extra: i64) {
    store.write_meta(MetaWrite::AddCounts { held, extra });
}

pub(super) fn write_allocation(store: &mut impl Store, name: &str, allocation: &Allocation) {
    store.set_alloc_field(&alloc_field(name), Some(&allocation.encode()));
    summarize_allocs(store);
}

/// The meta hash's summary of the allocations, from the allocations.
pub(super) fn summarize_allocs(store: &mut impl Store) {
    let all = store.allocations().unwrap_or_default();
    let free: usize = all.iter().map(|(_, a)| a.free.len()).sum();
    let allocs = Allocs {
        count: u16::try_from(all.len()).unwrap_or(u16::MAX),
        free: u32::try_from(free).unwrap_or(u32::MAX),
        release_at: all.iter().filter_map(|(_, a)| a.release).min().unwrap_or(0),
    };
    store.write_meta(MetaWrite::Allocs(allocs));
}
