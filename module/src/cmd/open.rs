//! `TICKET.OPEN event` — the event accepts claims again.
//!
//! The `OPENS`/`CLOSES` window of `TICKET.INIT` still applies on top of the
//! status. Opening serves the waiting list, and draws a draw event not
//! drawn yet. A real change appends `op=open`; opening an open event
//! changes and logs nothing.
//!
//! Reply: `OK`.
//! Errors: `NOEVENT`, `ERR` (invalid event id), `TRYAGAIN` (see `claim`),
//! `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        write(ctx, event, None, |store, out, clock| {
            pool::open(store, out, event, clock)
        })?;
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}
