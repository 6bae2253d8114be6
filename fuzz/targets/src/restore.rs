//! Target `restore`: the arguments of `TICKET.RESTORE` (a snapshot sent
//! by the sidecar's `rebuild`, or by anyone the ACL lets), as the module
//! decodes them (`protocol::restore::decode`).
//!
//! Input: one argument per line (after the command name). Beyond "no
//! panic": a step that decodes is written again (`Step::args`, what the
//! sidecar sends) and decodes to the same step, a seated `BEGIN`'s layout
//! in its stored form; a refused one has an error text a client can be
//! shown as it is.

use protocol::restore::{decode, Step};

use crate::check::{assert_shown, borrowed, lines, shown_args, wire};

/// The target's body.
pub fn run(data: &[u8]) {
    let args = lines(data);
    match decode(&args) {
        Ok((event, step)) => round_trips(event, &step),
        Err(e) => assert_shown("the restore error", &e),
    }
}

fn round_trips(event: &str, step: &Step<&str>) {
    let again = wire(step.args(event).as_slice());
    let decoded = decode(&borrowed(&again));
    assert_eq!(
        decoded.as_ref(),
        Ok(&(event, step.clone())),
        "written as {}",
        shown_args(&again)
    );
    if let Step::Begin { begin, .. } = step {
        if let Some(layout) = &begin.layout {
            let stored = protocol::seats::Layout::parse(layout).map(|l| l.to_json());
            assert_eq!(
                stored.as_ref(),
                Ok(layout),
                "a BEGIN's layout is in stored form"
            );
        }
    }
}
