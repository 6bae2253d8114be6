//! Heal after an unplanned failover (docs/design.md, "Healing after an
//! unplanned failover").
//!
//! * `model::entry`: an entry's canonical content and digest (pure,
//!   re-exported here as [`entry`]);
//! * [`planner`]: where the new primary's log meets MySQL's journal, what
//!   to re-apply and what to undo (pure, property-tested);
//! * [`journal`]: MySQL's journal as the heal reads and cuts it; the
//!   journal's writing, the anchor and the writer's anchor check live in
//!   `batch::journal`, below this layer (I/O);
//! * [`executor`]: the heal itself, run by the verifier under the event's
//!   offset lock (I/O);
//! * [`report`]: what a heal records and says (its report, log lines,
//!   conflict details, the `ticket_heal` row).
//!
//! The writer refuses a batch whose anchor is missing or different and
//! asks the verifier for a round at once (`io::rounds::request_now`): a
//! process-wide flag, so the hook in the writer stays one line.

pub use crate::model::entry;

pub mod executor;
pub mod journal;
pub mod planner;
pub mod report;
