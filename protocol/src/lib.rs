//! The contract between ticketgate's halves, in one place and without I/O:
//!
//! * [`model`]: what a change is (ops, records, tickets, checkout settings)
//!   and the values formats are written in, without any format;
//! * [`ops`]: THE table of ops — each op's name and its values in order,
//!   which drives both the record and the effect below;
//! * [`keys`]: the key names of an event (`ticket:{E}:meta|pool|holders|log`),
//!   the `ticket:events` channel and the rules for event and user ids;
//! * [`record`]: the stream record appended to `ticket:{E}:log` for every
//!   state change — encoded by the module, decoded by the sidecar;
//! * [`effect`]: `TICKET._APPLY`, the one fully determined command a state
//!   change is replicated as — encoded by the primary, decoded by replicas
//!   and the AOF loader;
//! * [`restore`]: `TICKET.RESTORE`, the steps that install a snapshot of an
//!   event from MySQL — encoded by the sidecar, decoded by the module;
//! * [`streamid`]: stream ids, ordered as number pairs;
//! * [`draw`]: the fair draw's commitment, ranks, admission rate and audit;
//! * [`touch`]: what a change touches (user, tickets, status), for the heal.
//!
//! The module, the sidecar, `ticketgate-live` and the bench all depend on
//! this crate, so a format can only change here.

pub mod draw;
pub mod effect;
pub mod keys;
pub mod model;
pub mod ops;
pub mod parts;
pub mod record;
pub mod restore;
pub mod restore_after;
pub mod seats;
pub mod streamid;
pub mod touch;

pub use streamid::StreamId;
