//! `TICKET.SEATMAP` (read-only): one byte per seat of a seated event.

use super::rules::live_meta;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.SEATMAP`: one byte per seat id (`.` free, `h` held, `s` sold,
/// `a` allocated, `r` listed for resale and not held); `None` for an
/// unseated event.
pub fn seat_map(store: &mut impl Store, event: &str) -> Result<Option<Vec<u8>>, TicketError> {
    let meta = live_meta(store, event)?;
    let Some(mut map) = store.seating(|_, s| s.seat_map())? else {
        return Ok(None);
    };
    for ticket in super::listing::for_sale(store, &meta)? {
        if let Some(byte) = usize::try_from(ticket - 1)
            .ok()
            .and_then(|i| map.get_mut(i))
        {
            *byte = b'r';
        }
    }
    Ok(Some(map))
}
