//! The threads of `ticketgate-sidecar run`, above [`crate::batch`] (the
//! exactly-once transaction they run) and [`crate::io`]; `daemon.rs` wires
//! them together with the verifier of the `loss` layer.
//!
//! ```text
//!  subscriber --(event ids)--> reader --(batches, per event)--> writer[i] --(offsets)--> trimmer
//!  SUBSCRIBE ticket:events     XREAD from in-memory cursors    MySQL tx per batch        XTRIM MINID
//! ```
//!
//! Which thread calls what:
//!
//! - [`subscriber`] — `io::redis::connect` (SUBSCRIBE), hands event ids to
//!   the reader.
//! - [`reader`] — XREAD (decoded by `io::redis::reply`), `io::redis::scan`
//!   (SCAN), `io::mysql` (committed offsets at discovery), `io::rounds`
//!   (waits for the verifier's round at every connect); hands batches to
//!   the writers.
//! - [`writer`] — `batch::commit_batch`, one transaction per (merged) batch,
//!   retried until it commits, each event with its own backoff (its
//!   pure `Schedule`) so a failing event never holds up the others;
//!   offsets to the trimmer, rewinds to the reader.
//! - [`trimmer`] — `batch::journal::trim` (the anchor, then `XTRIM MINID`)
//!   and the lag gauges through `io::redis::trim`.

pub mod reader;
pub mod subscriber;
pub mod trimmer;
pub mod writer;
