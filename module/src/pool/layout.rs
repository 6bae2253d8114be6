//! `TICKET.LAYOUT` (read-only): a seated event's layout as stored.

use super::rules::live_meta;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.LAYOUT`: the layout as stored; `None` for an unseated event.
pub fn layout(store: &mut impl Store, event: &str) -> Result<Option<String>, TicketError> {
    live_meta(store, event)?;
    store.layout_json()
}
