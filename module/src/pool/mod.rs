//! The ticket-pool state machine: what every `TICKET.*` command does to an
//! event, written against the narrow [`Store`] trait so it runs unchanged
//! over Redis keys (`host::store`) and over an in-memory store in the unit
//! and property tests.
//!
//! The data structure, before any code (docs/design.md "Keys"): an event is
//! a meta hash (totals, window, checkout settings, counters), a pool zset of
//! free numbers (lazy: only the lowest free ones; every number above
//! `minted` is free without being stored), a holders hash (user -> tickets),
//! a holds zset (user -> deadline of a held order), a waiting-list zset
//! (user -> place) and a log stream of what happened, drained to MySQL.
//!
//! Every function reads and validates first, then decides its state
//! changes. Each change is applied at once by [`effects::apply`] (the same
//! code a replica runs for the replicated effect, so a replica cannot
//! decide differently) and collected in the command's [`Effects`], which
//! the pool hands back: the command layer's commit step replicates them,
//! announces offers and notes hold deadlines. So an error never leaves
//! partial state behind.
//!
//! The files, bottom up: each imports only files on the lines before its
//! own (`layering`, a test, holds every `super::` path to this list); the
//! commands' files mirror `cmd/`, one file per command.
//!
//! - `model`: the types (meta, options, reports, the clock).
//! - `store`: the `Store` trait: the reads and writes of an event's keys.
//! - `listing`: the resale hash: listed tickets, their sellers and buyers.
//! - `writes`: the small writes the effects share (counts, allocations).
//! - `restore_apply`: a rebuild's restore steps, applied.
//! - `effects`: a change applied onto the store and collected.
//! - `rules`: what every command keeps: the event exists, its keys agree,
//!   a party within `LIMIT`; the lazy pool's numbers, the lowest free first.
//! - `draw`, `seated`, `note`: a draw event's entry, draw, ranks and
//!   pace; a seated event's seats (which a claim or offer gets); the note
//!   of answers a promoted primary gave without logging anything.
//! - `allocation`: what claims, expiries and the settle step do about
//!   allocations (a claim `FROM` one, a held order going back, a timed
//!   release).
//! - `forsale`: the stock a claim or offer takes, free tickets first, then
//!   listed ones.
//! - `settle`: the first step of every write: expire due holds, draw when
//!   due, serve the waiting list (the sweep runs it too).
//! - `resale`: `RESELL` and `UNLIST`, and the steps of the sale's commands
//!   for listed tickets (a buyer's `op=resold`, `LISTED` refusals).
//! - `init`, `claim`, `confirm`, `cancel`, `open`, `close`, `drop`, `order`,
//!   `status`, `layout`, `seatmap`, `wait`, `leave`, `position`, `restore`,
//!   `allocate`: one file per command (`allocate`: `ALLOCATE`, `RELEASE`
//!   and `ALLOCATIONS`).
//! - `holder`: `TICKET.HOLDER`, an order's lowest ticket.
//! - `transfer`, `scan`: after the sale, a sold ticket changes hands (a
//!   generation up) and is admitted at the door, once.
//! - `reapply_after`: whether a lost transfer or scan may be written again.
//! - `reapply`: `TICKET.REAPPLY`, the heal's re-application of a write an
//!   unplanned failover lost.

mod allocate;
mod allocation;
mod cancel;
mod claim;
mod close;
mod confirm;
pub mod draw;
mod drop;
pub mod effects;
mod forsale;
mod holder;
mod init;
mod layout;
mod leave;
mod listing;
#[cfg(test)]
pub mod memory;
pub mod model;
pub mod note;
mod open;
mod order;
mod position;
pub mod reapply;
mod reapply_after;
mod resale;
pub mod restore;
mod restore_apply;
mod rules;
mod scan;
mod seated;
mod seatmap;
pub mod settle;
mod status;
pub mod store;
mod transfer;
mod wait;
mod writes;

#[cfg(test)]
mod tests;

pub use allocate::{allocate, allocations, release, AllocateAsk, ReleaseAsk};
pub use cancel::cancel;
pub use claim::claim;
pub use close::close;
pub use confirm::confirm;
pub use drop::drop_event;
pub use effects::{Decided, Effects};
pub use holder::holder;
pub use init::{create, init};
pub use layout::layout;
pub use leave::leave;
pub use model::{
    Allocation, Allocs, Claim, ClaimOptions, Clock, Draw, DrawReport, ExpiredFrom, FromAsk, Meta,
    OrderReport, Report, SeatAsk, Staging, Status, MAX_HOLD_MS, MAX_LIMIT,
};
pub use open::open;
pub use order::order;
pub use position::position;
pub use reapply::reapply;
pub use resale::{resell, unlist};
pub use restore::{
    restore_after, restore_allocation, restore_begin, restore_commit, restore_free, restore_orders,
};
pub use scan::scan;
pub use seatmap::seat_map;
pub use settle::{expire_holds, offer_waiting, sweep};
pub use status::report;
pub use store::{MetaWrite, Part, Scope, Set, Store};
pub use transfer::transfer;
pub use wait::wait;
