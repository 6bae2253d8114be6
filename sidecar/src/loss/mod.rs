//! Data loss in Redis, above `sync`: the pure checks that tell an
//! event Redis lost or replaced ([`quarantine`]) and the verifier thread
//! that runs them against every synced event ([`verify`]).

pub mod quarantine;
pub mod verify;
