//! The operator's commands, above [`crate::loss`]: `reconcile` (compare
//! Redis with MySQL), `rebuild` (restore an event in Redis from MySQL) and
//! `audit-draw` (check a draw event's order from MySQL alone) and
//! `audit-seats` (check a seated event's seats from MySQL alone);
//! `after_sale`: `reconcile`'s check of generations and scans.

pub mod after_sale;
pub mod audit;
pub mod rebuild;
pub mod reconcile;
pub mod seat_audit;
