//! `TICKET.DROP`: deletes an event's keys but its log, leaving `op=drop`
//! as the trace that tells the sidecar a drop from a loss.

use protocol::record::{Op, Record};

use super::effects::Effects;
use super::rules::type_check_all;
use super::store::{Part, Store};
use crate::error::TicketError;

/// `TICKET.DROP`: deletes the event's keys but its log, and appends
/// `op=drop` to the log (the trace that tells the sidecar a drop from a
/// loss); refuses while the log is not drained unless `force`. Returns how
/// many keys were deleted (the log not counted); an event without any key
/// is left alone (0, nothing logged).
pub fn drop_event(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    force: bool,
    now: i64,
) -> Result<i64, TicketError> {
    let entries = type_check_all(store)?;
    if entries > 0 && !force {
        return Err(TicketError::Unsynced {
            event: event.to_owned(),
            entries,
        });
    }
    let deleted = store.delete(super::store::Scope::State);
    if deleted > 0 || store.exists(Part::Log)? {
        let record = Record {
            op: Op::Drop,
            at: now,
        };
        out.append(store, record, None, None);
    }
    Ok(deleted)
}
