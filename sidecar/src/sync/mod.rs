//! Draining the logs into MySQL, above [`crate::io`]: the threads of
//! `ticketgate-sidecar run` and the exactly-once batch path they share.
//!
//! ```text
//!  subscriber --(event ids)--> reader --(batches, per event)--> writer[i] --(offsets)--> trimmer
//!  SUBSCRIBE ticket:events     XREAD from in-memory cursors    MySQL tx per batch        XTRIM MINID
//! ```
//!
//! - Threads: [`subscriber`], [`reader`], [`writer`], [`trimmer`] (wired
//!   together, with the verifier of the `loss` layer, by `daemon.rs`).
//! - A batch's path, top down: [`writer`] → [`apply`] (offset row lock,
//!   [`gate`], then [`plan`] → [`fast`] or [`slow`], both on [`sql`]).
//! - [`queue`]: a draw event's enters, leaves, draw and offers as
//!   `ticket_draw_step` rows, and the checks of a draw.
//! - [`rounds`]: the verification rounds the reader waits for (and the
//!   writers' request for one now, when a batch lacks its anchor).
//! - [`journal`]: MySQL's journal of applied entries and the offset's
//!   anchor, written in the batch's transaction; the anchored trim.

pub mod apply;
pub mod fast;
pub mod gate;
pub mod journal;
pub mod plan;
pub mod queue;
pub mod reader;
pub mod rounds;
pub mod slow;
pub mod sql;
pub mod subscriber;
pub mod trimmer;
pub mod writer;
