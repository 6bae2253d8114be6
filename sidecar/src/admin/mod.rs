//! The operator's commands, above [`crate::loss`]: `reconcile` (compare
//! Redis with MySQL) and `rebuild` (restore an event in Redis from MySQL).

pub mod rebuild;
pub mod reconcile;
