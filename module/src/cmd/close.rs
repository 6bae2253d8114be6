//! `TICKET.CLOSE event` — stops new claims.
//!
//! Repeat claims still answer with the tickets held, and `CONFIRM` still
//! completes a payment. A real change appends `op=close`; closing a closed
//! event changes and logs nothing.
//!
//! Reply: `OK`.
//! Errors: `NOEVENT`, `ERR` (invalid event id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        write(ctx, event, None, |store, out, clock| {
            pool::close(store, out, event, clock)
        })?;
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}
