//! `TICKET.OPEN event` and `TICKET.CLOSE event` — switch an event's status.
//!
//! `CLOSE` stops new claims (repeat claims still answer with the held
//! ticket); `OPEN` accepts them again. The `OPENS`/`CLOSES` window of
//! `TICKET.INIT` still applies on top of the status. A real change appends
//! `op=open` / `op=close`; setting the status it already has changes and logs
//! nothing.
//!
//! Reply: `OK`.
//! Errors: `NOEVENT`, `ERR` (invalid event id), `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::args;
use crate::host::argv::Argv;
use crate::pool::{self, Status};

pub fn open(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    set(ctx, argv, Status::Open)
}

pub fn close(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    set(ctx, argv, Status::Closed)
}

fn set(ctx: &Context, argv: Argv<'_>, status: Status) -> RedisResult {
    guarded(|| {
        let event = argv.parse(args::event)?;
        write(ctx, event, None, |store, out, clock| {
            pool::set_status(store, out, event, status, clock)
        })?;
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}
