//! ticketgate: a Redis module for first-come ticketing that cannot oversell.
//!
//! A guide to the layout, from the bottom up (each layer imports only the
//! ones above it in this list):
//!
//! - [`error`], [`args`]: error replies and argument rules (pure).
//! - [`pool`]: the state machine, written against a narrow `Store` trait:
//!   what each command does to an event, the effects it decides, and the
//!   application of an effect that a primary and its replicas share. Pure:
//!   no Redis in it, unit- and property-tested over an in-memory store.
//! - [`meta_cache`], [`seat_cache`], [`stats`]: the per-event copies of the
//!   meta hash and of a seated event's layout and seat state, and the
//!   `INFO ticket` counters.
//! - [`host`]: the Redis side, the only `unsafe`: module load and command
//!   registration, server events, the Redis `Store` (native key API) and
//!   replication.
//! - [`expiry`]: the index of hold deadlines and the sweep over it.
//! - [`cmd`]: one file per `TICKET.*` command (syntax, replies, errors),
//!   THE command table (`cmd::table`) that registration and `COMMAND DOCS`
//!   both come from, and the commit step (`cmd::commit`) that replicates,
//!   announces and notes the deadlines of what the pool decided.
//!
//! Follow a claim: `host::register` (entry point) -> `cmd::claim` ->
//! `pool::claim` (decides, applies through `pool::apply` onto
//! `host::store`) -> `cmd::commit` (replicates through `host::replicate`).
//! The design these files cite lives in docs/design.md.

pub mod args;
pub mod cmd;
pub mod error;
pub mod expiry;
pub mod host;
pub mod meta_cache;
pub mod pool;
pub mod seat_cache;
pub mod stats;

use std::sync::atomic::AtomicI64;

/// How many ticket numbers a claim mints when the pool is empty
/// (`ticket.pool-chunk`: `CONFIG SET`-able, or set in redis.conf after
/// `loadmodule`). The default is 1: the first number goes straight to the
/// claimant, so the pool ZSet holds only returned tickets. Minting ahead into
/// the ZSet costs a `ZADD` and later a `ZREM` per number, measured at ~15%
/// more work per claim than updating `minted` once per claim.
pub static POOL_CHUNK: AtomicI64 = AtomicI64::new(1);
