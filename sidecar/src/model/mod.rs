//! The sidecar's shared model, below every other layer: a log [`Entry`]
//! (with its size and SHA-256 as read, its canonical text as the journal
//! and the heal compare it, and whether MySQL can take it at all), the
//! [`Conflict`]s (and the one
//! shape of their rows) and [`Outcome`] of a batch, an event's state as
//! MySQL holds it ([`event`]: the quarantine [`Reason`] and [`Evidence`]),
//! a user's live tickets ([`Live`]), a seated event's seat rows and
//! category stocks ([`seating`]), and time formatting. Nothing here does
//! I/O or imports another layer.

pub mod conflict;
pub mod entry;
pub mod event;
pub mod live;
pub mod outcome;
pub mod seating;
pub mod time;

pub use conflict::Conflict;
pub use entry::Entry;
pub use event::{EventState, Evidence, Reason};
pub use live::Live;
pub use outcome::Outcome;
