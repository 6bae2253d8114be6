//! Reserved seating (docs/design.md "Reserved seating"), pure: the layout
//! ([`layout`]: strict parsing, seat ids and names), the seat state with
//! the per-row summaries the search skips rows by ([`state`]), and the
//! best-available and pick rules with their brute-force model ([`rule`]).
//! The module decides with this code; the sidecar's `audit-seats` replays
//! with it.

pub mod layout;
pub mod rule;
pub mod state;

#[cfg(test)]
mod tests;

pub use layout::{Layout, LayoutError};
pub use rule::{best, check_pick, impossible, Chosen, Impossible, NoFit, PickError, Request};
pub use state::{Seat, SeatState};
