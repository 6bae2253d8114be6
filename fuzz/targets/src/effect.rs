//! Target `effect`: the arguments of `TICKET._APPLY`, as a replica or the
//! AOF loader decodes them (`protocol::effect::decode`).
//!
//! Input: one argument per line (after the command name). Beyond "no
//! panic": an effect that decodes is written again (`Effect::args`, what
//! a primary sends) and decodes to the same effect; a refused one has an
//! error text a log or a client can show as it is.

use protocol::effect::decode;

use crate::check::{assert_shown, borrowed, lines, shown_args, wire};

/// The target's body.
pub fn run(data: &[u8]) {
    let args = lines(data);
    match decode(&args) {
        Ok((event, effect)) => {
            let again = wire(effect.args(event).as_slice());
            let decoded = decode(&borrowed(&again));
            assert_eq!(
                decoded,
                Ok((event, effect.clone())),
                "written as {}",
                shown_args(&again)
            );
        }
        Err(e) => assert_shown("the effect's error", &e.0),
    }
}
