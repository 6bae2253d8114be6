//! `TICKET.OPEN`: the event accepts claims again; opening serves its
//! waiting list, and draws a draw event not drawn yet (docs/design.md "The
//! draw"). Only a real change is logged (`op=open`).

use protocol::record::{Op, Record};

use super::effects::Effects;
use super::model::{Clock, Status};
use super::rules::{check_consistent, status_changes};
use super::settle::settle_now;
use super::store::Store;
use crate::error::TicketError;

/// `TICKET.OPEN`.
pub fn open(
    store: &mut impl Store,
    out: &mut Effects<'_>,
    event: &str,
    clock: Clock,
) -> Result<(), TicketError> {
    let Some(meta) = status_changes(store, event, Status::Open)? else {
        return Ok(());
    };
    // Opening serves the waiting list (and draws a draw event), which
    // writes tickets: check first.
    let serve = meta.waitseq > 0 || meta.undrawn().is_some();
    if serve {
        check_consistent(store, event, &meta)?;
    }
    out.append(
        store,
        Record {
            op: Op::Open,
            at: clock.now,
        },
        None,
        None,
    );
    if serve {
        settle_now(store, out, event, clock)?;
    }
    Ok(())
}
