//! Data loss in Redis, above `sync`: the pure checks that tell an
//! event Redis lost or replaced ([`quarantine`]) and the verifier thread
//! that runs them against every synced event ([`verify`]), and the heal
//! of a log an unplanned failover left short of what MySQL wrote
//! ([`heal`]).

pub mod heal;
pub mod quarantine;
pub mod verify;
