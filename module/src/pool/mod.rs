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
//! changes. Each change is applied at once by [`apply`] (the same code a
//! replica runs for the replicated effect, so a replica cannot decide
//! differently) and collected in the command's [`Effects`], which the
//! pool hands back: the command layer's commit step replicates them,
//! announces offers and notes hold deadlines. So an error never leaves
//! partial state behind.
//!
//! Files, each importing only those listed before it:
//! `model` (types), `store` (the trait), `apply` (effect application),
//! `effects` (the collected effects), `tickets` (the lazy pool's numbers),
//! `draw` (a draw event's entry, draw, ranks and admission pace), `settle` (checks, expiry and the offer step every write runs first),
//! `claim` (claims and checkout), `waitlist`, `seated` (a seated event's seats: which a claim or offer gets),
//! `restore`, `reapply` (the
//! heal's re-application of a write an unplanned failover lost).

pub mod apply;
pub mod claim;
pub mod draw;
pub mod effects;
#[cfg(test)]
pub mod memory;
pub mod model;
pub mod reapply;
pub mod restore;
pub mod seated;
pub mod settle;
pub mod store;
mod tickets;
pub mod waitlist;

#[cfg(test)]
mod tests;

pub use claim::{
    cancel, claim, confirm, create, drop_event, holder, init, order, report, set_status,
};
pub use effects::{Decided, Effects};
pub use model::{
    Claim, ClaimOptions, Clock, Draw, DrawReport, ExpiredFrom, Meta, OrderReport, Report, SeatAsk,
    Staging, Status, MAX_HOLD_MS, MAX_LIMIT,
};
pub use reapply::reapply;
pub use restore::{restore_begin, restore_commit, restore_free, restore_orders};
pub use seated::{layout, seat_map};
pub use settle::{expire_holds, offer_waiting, sweep};
pub use store::{MetaWrite, Part, Scope, Set, Store};
pub use waitlist::{leave, position, wait};
