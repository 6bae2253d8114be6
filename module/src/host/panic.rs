//! The last line of defence at every entry point the module gives Redis
//! (commands, the cron's sweep, server and keyspace events, key scans,
//! `INFO`): a panic there would unwind into C and abort the whole server.
//! [`guard`] runs a callback body under `catch_unwind`; [`caught`] turns a
//! caught panic into a log line naming where it happened, one more
//! `panics` in `INFO ticket`, and the `INTERNAL` error text a command
//! replies with.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::raw::RedisModuleCtx;

use super::ffi::log_warning;
use crate::error::TicketError;
use crate::stats;

/// Runs `body`; a panic is logged and counted ([`caught`]) and gives `None`.
pub fn guard<T>(ctx: *mut RedisModuleCtx, place: &str, body: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(value) => Some(value),
        Err(panic) => {
            caught(ctx, place, panic.as_ref());
            None
        }
    }
}

/// Logs and counts a panic caught at `place` (a command's name, or the
/// callback's); returns the error a command replies with.
pub fn caught(ctx: *mut RedisModuleCtx, place: &str, panic: &(dyn Any + Send)) -> String {
    stats::PANICS.bump();
    let why = message(panic);
    log_warning(
        ctx,
        &format!("ticket: {place} panicked, nothing more of it ran: {why} (please report)"),
    );
    TicketError::Internal(format!("{place} panicked: {why} (please report)")).to_string()
}

/// The panic's message, when it is text.
fn message(panic: &(dyn Any + Send)) -> &str {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(text), _) => text,
        (_, Some(text)) => text,
        _ => "a panic without a message",
    }
}
