//! `TICKET.CLOSE`: the event stops taking new claims (a repeat claim still
//! answers, a confirm still completes). Only a real change is logged
//! (`op=close`).

use protocol::record::{Op, Record};

use super::effects::Effects;
use super::model::{Clock, Status};
use super::rules::status_changes;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.CLOSE`.
pub fn close(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    clock: Clock,
) -> Result<(), TicketError> {
    if status_changes(store, event, Status::Closed)?.is_none() {
        return Ok(());
    }
    out.append(
        store,
        Record {
            op: Op::Close,
            at: clock.now,
        },
        None,
        None,
    );
    Ok(())
}
