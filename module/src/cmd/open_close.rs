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

use redis_module::{Context, RedisResult, RedisString, RedisValue};

use super::{exactly, guarded, now_ms};
use crate::args;
use crate::pool::{self, Status};
use crate::redis_store::{Access, RedisStore};

pub fn open(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    set(ctx, argv, Status::Open)
}

pub fn close(ctx: &Context, argv: Vec<RedisString>) -> RedisResult {
    set(ctx, argv, Status::Closed)
}

fn set(ctx: &Context, argv: Vec<RedisString>, status: Status) -> RedisResult {
    guarded(|| {
        let [event] = exactly(&argv)?;
        let event = args::event_id(event)?;
        let mut store = RedisStore::open(ctx, event, Access::Write, None);
        pool::set_status(&mut store, event, status, now_ms())?;
        Ok(RedisValue::SimpleStringStatic("OK"))
    })
}
