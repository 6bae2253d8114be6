//! `TICKET.SEATMAP` (read-only): one byte per seat of a seated event.

use super::rules::live_meta;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.SEATMAP`: one byte per seat id (`.` free, `h` held, `s` sold);
/// `None` for an unseated event.
pub fn seat_map(store: &mut impl Store, event: &str) -> Result<Option<Vec<u8>>, TicketError> {
    live_meta(store, event)?;
    store.seating(|_, s| s.seat_map())
}
