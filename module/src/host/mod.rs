//! The Redis side: the only place with `unsafe` calls into the module API.
//!
//! - `command`: what the load step hands the host (a [`command::Module`]:
//!   the command table's rows, the configs, the cron's work), so nothing
//!   here imports `cmd` or the sweep.
//! - `register`: registration from a `Module`: the commands with one C
//!   entry point per row, server events, configs.
//! - `docs`: the `COMMAND DOCS` C structs built from the table.
//! - `events`: keyspace and server events, and the cron loop's entry into
//!   the module's cron work.
//! - `store` (with `keys`, `meta`, `draw_meta`, `replicate`): [`crate::pool::Store`] over
//!   an event's keys through the native key API (`seats`: a seated event's
//!   layout and seat key), and the replication of a
//!   decided effect; `strings`: the Redis strings it reuses.
//! - `argv`: a command's arguments read in place; `ffi`: small safe
//!   wrappers (clock, pub/sub, context flags, databases, scans).

pub mod argv;
pub mod command;
#[cfg(not(test))]
mod docs;
mod draw_meta;
#[cfg(not(test))]
mod events;
pub mod ffi;
mod keys;
mod meta;
#[cfg(not(test))]
pub mod register;
mod replicate;
mod seats;
pub mod store;
pub mod strings;
