//! The Redis side: the only place with `unsafe` calls into the module API.
//!
//! - `command`: what the load step hands the host (a [`command::Module`]:
//!   the command table's rows, the configs, the cron's work), so nothing
//!   here imports `cmd` or the sweep.
//! - `register`: registration from a `Module`: the commands with one C
//!   entry point per row, server events, configs; `server`: Redis or
//!   Valkey, and what follows from it (flags, module options).
//! - `docs`: the `COMMAND DOCS` C structs built from the table.
//! - `events`: keyspace and server events, and the cron loop's entry into
//!   the module's cron work.
//! - `store` (with `keys`, `log` (the `XADD` and the effect), `meta`,
//!   `draw_meta`): [`crate::pool::Store`] over an event's keys through the
//!   native key API (`seats`: a seated event's layout and seat key), and
//!   the replication of a decided effect; `strings`: the Redis strings it
//!   reuses.
//! - `note`: the note of answers a promoted primary gave without logging
//!   (`ticket:{E}:answered`) and this node's term as a promoted primary;
//!   `alloc`: an event's allocations (`ticket:{E}:alloc`), a side hash
//!   like the note; `after`: its generations and scans, two more.
//! - `ffi`: small safe wrappers (clock, pub/sub, context flags, databases,
//!   scans, the log) and a command's arguments read in place.
//! - `panic`: the `catch_unwind` every entry point from Redis runs under;
//!   `info`: the `INFO ticket` section.

mod after;
mod alloc;
pub mod cache;
pub mod command;
#[cfg(not(test))]
mod docs;
mod draw_meta;
#[cfg(not(test))]
mod events;
pub mod ffi;
#[cfg(not(test))]
mod info;
mod keys;
mod log;
mod meta;
pub mod note;
#[cfg(not(test))]
pub mod panic;
#[cfg(not(test))]
pub mod register;
mod seats;
pub mod server;
pub mod store;
