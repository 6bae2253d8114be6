//! ticketgate: a Redis module for first-come ticketing that cannot oversell.
//!
//! A guide to the layout, from the bottom up: each layer imports only the
//! layers listed before it, never a neighbour on its own line nor one
//! listed after it (`layering`, a test, reads every `crate::` path of the
//! code and holds it to this list).
//!
//! - [`error`], [`fault`]: error replies and the one function that makes
//!   their text legal (pure); panics forced in a test build (empty
//!   otherwise).
//! - [`pool`]: the state machine, written against a narrow `Store` trait:
//!   what each command does to an event, the effects it decides, and the
//!   application of an effect that a primary and its replicas share. Pure:
//!   no Redis in it, unit- and property-tested over an in-memory store.
//! - [`args`]: argument rules (pure; the bounds are the pool's; one
//!   `unsafe`, an id already checked to be ASCII taken as text).
//! - [`seat_cache`], [`stats`], [`expiry`], [`migration`]: what the
//!   process keeps in memory beside the per-event strings and meta copy
//!   (`host::cache`): a seated event's layout and seat state, the `INFO
//!   ticket` counters, the index of hold deadlines, the slots being
//!   imported.
//! - [`host`]: the Redis side, the only FFI and every other `unsafe`:
//!   command registration from the table it is handed, server events, the
//!   Redis `Store` (native key API), the log entry and the replicated
//!   effect of a change.
//! - [`cmd`]: what runs the pool: one file per `TICKET.*` command (syntax,
//!   replies, errors) with THE command table (`cmd::table`) that
//!   registration and `COMMAND DOCS` both come from, and the commit step
//!   that replicates, announces and notes the deadlines of what the pool
//!   decided.
//! - [`sweep`]: the expiry sweep Redis's cron runs (with the commands'
//!   commit step).
//! - `onload`: the entry point (`RedisModule_OnLoad`), the one file that
//!   knows every layer: it hands `host::register` the command table, the
//!   configs and the sweep.
//!
//! Follow a claim, file by file: docs/design.md "Where things are" (a
//! test holds that walk to the code).
//! This file holds `POOL_CHUNK`, a config any layer may read. The design
//! these files cite lives in docs/design.md.

pub mod args;
pub mod cmd;
pub mod error;
pub mod expiry;
pub mod fault;
pub mod host;
#[cfg(test)]
mod layering;
pub mod migration;
#[cfg(not(test))]
mod onload;
pub mod pool;
pub mod seat_cache;
pub mod stats;
#[cfg(not(test))]
pub mod sweep;

use std::sync::atomic::AtomicI64;

/// How many ticket numbers a claim mints when the pool is empty
/// (`ticket.pool-chunk`: `CONFIG SET`-able, or set in redis.conf after
/// `loadmodule`). The default is 1: the first number goes straight to the
/// claimant, so the pool ZSet holds only returned tickets. Minting ahead into
/// the ZSet costs a `ZADD` and later a `ZREM` per number, measured at ~15%
/// more work per claim than updating `minted` once per claim.
pub static POOL_CHUNK: AtomicI64 = AtomicI64::new(1);
