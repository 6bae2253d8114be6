//! One file per `TICKET.*` command; this file holds what they share: the
//! panic guard at the command boundary and the argument plumbing.

pub mod apply;
pub mod cancel;
pub mod claim;
pub mod confirm;
pub mod drop;
pub mod holder;
pub mod init;
pub mod open_close;
pub mod order;
pub mod reapply;
pub mod restore;
pub mod status;
pub mod waitlist;

use std::panic::{catch_unwind, AssertUnwindSafe};

use std::os::raw::c_int;

use redis_module::raw::{self, RedisModuleString};
use redis_module::{Context, RedisError, RedisResult, RedisString, RedisValue};

use protocol::record::Tickets;

use crate::error::TicketError;
use crate::pool::ExpiredFrom;

/// Runs a command body, turning a [`TicketError`] into its error reply and a
/// panic into an `INTERNAL` error instead of aborting the user's Redis.
pub fn guarded(body: impl FnOnce() -> Result<RedisValue, CommandError>) -> RedisResult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(CommandError::Arity)) => Err(RedisError::WrongArity),
        Ok(Err(CommandError::Ticket(e))) => Err(RedisError::String(e.to_string())),
        Err(_) => Err(RedisError::String(
            TicketError::Internal(
                "ticket module bug: the command panicked; please report it".into(),
            )
            .to_string(),
        )),
    }
}

/// Why a command failed before or while running.
pub enum CommandError {
    /// Wrong number of arguments: Redis's standard message.
    Arity,
    Ticket(TicketError),
}

impl From<TicketError> for CommandError {
    fn from(e: TicketError) -> Self {
        CommandError::Ticket(e)
    }
}

/// The arguments after the command name, as byte slices, if their count is in
/// `min..=max`.
pub fn arguments(args: &[RedisString], min: usize, max: usize) -> Result<Vec<&[u8]>, CommandError> {
    let rest = args.get(1..).unwrap_or_default();
    if rest.len() < min || rest.len() > max {
        return Err(CommandError::Arity);
    }
    Ok(rest.iter().map(|a| a.as_slice()).collect())
}

/// Exactly `N` arguments after the command name (no allocation: this is on
/// the claim path).
pub fn exactly<const N: usize>(args: &[RedisString]) -> Result<[&[u8]; N], CommandError> {
    match args.get(1..) {
        Some(rest) if rest.len() == N => Ok(std::array::from_fn(|i| rest[i].as_slice())),
        _ => Err(CommandError::Arity),
    }
}

/// Exactly `N` arguments after the command name, read from Redis's own argv.
pub fn exactly_raw<const N: usize>(
    argv: &[*mut RedisModuleString],
) -> Result<[&[u8]; N], CommandError> {
    match argv.get(1..) {
        Some(rest) if rest.len() == N => Ok(std::array::from_fn(|i| bytes_of(rest[i]))),
        _ => Err(CommandError::Arity),
    }
}

/// The bytes of one of Redis's argv strings (valid for the whole command).
pub(crate) fn bytes_of<'a>(s: *mut RedisModuleString) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: Redis keeps argv alive and unchanged until the command returns.
    unsafe {
        let p = redis_module::raw::RedisModule_StringPtrLen.unwrap()(s, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

/// Publishes `event` on `ticket:events` (after `TICKET.INIT` and a
/// restore's `COMMIT`), so a running sidecar drains its log at once.
pub fn announce(ctx: &Context, event: &str) {
    let channel = protocol::keys::EVENTS_CHANNEL.as_bytes();
    let channel = RedisString::create_from_slice(std::ptr::null_mut(), channel);
    let message = RedisString::create_from_slice(std::ptr::null_mut(), event.as_bytes());
    // SAFETY: both strings are live for the call; Redis copies what it sends.
    unsafe { raw::RedisModule_PublishMessage.unwrap()(ctx.ctx, channel.inner, message.inner) };
}

/// Current unix time in milliseconds, from Redis's clock.
pub fn now_ms() -> i64 {
    // SAFETY: a plain getter with no arguments.
    unsafe { redis_module::raw::RedisModule_Milliseconds.unwrap()() }
}

/// An integer reply, or nil.
pub fn integer_or_nil(value: Option<i64>) -> RedisValue {
    value.map_or(RedisValue::Null, RedisValue::Integer)
}

/// Ticket numbers as an array reply.
pub fn ticket_array(tickets: &Tickets) -> RedisValue {
    RedisValue::Array(
        tickets
            .as_slice()
            .iter()
            .map(|t| RedisValue::Integer(*t))
            .collect(),
    )
}

/// From when reads count holds past their deadline as free: now on a
/// primary; never on a replica, which shows a hold until its primary's
/// `op=expire` arrives (or it is promoted and sweeps it itself).
pub fn expired_from(ctx: &Context) -> ExpiredFrom {
    // SAFETY: a plain getter on the live context.
    let flags = unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx.ctx) };
    (flags & raw::REDISMODULE_CTX_FLAGS_MASTER as c_int != 0).then(now_ms)
}
