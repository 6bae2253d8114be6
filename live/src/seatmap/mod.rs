//! The live seat map of a seated event: the page (`seats.html`, compiled
//! in), the pure diff of two `TICKET.SEATMAP` strings ([`diff`]), what a
//! poller publishes ([`feed`]), what each subscriber is sent ([`stream`])
//! and the poller's Redis reads ([`read`]).

pub mod diff;
pub mod feed;
pub mod read;
pub mod stream;

/// The seat-map page, served as is at `/events/{E}/seats`.
pub const PAGE: &str = include_str!("seats.html");
