//! Redis, one file per job. Connecting: [`connect`] (the [`connect::Conn`] every
//! thread talks through) over [`node`] (one server), [`sentinel`] (the
//! master the sentinels name) and [`cluster`] (a cluster's topology and
//! connection). Reading: [`reply`] (raw replies taken apart, a stream's
//! entries decoded), [`stream`] (an event's log by `XRANGE`), [`scan`]
//! (discovering events), [`trim`] (`XTRIM` and the lag gauges) and
//! [`inspect`] (the reads only the checks around the drain use). TLS
//! settings and Sentinel discovery come from the `conn` crate
//! (`ticketgate-conn`).

pub mod cluster;
pub mod connect;
pub mod inspect;
pub mod node;
pub mod reply;
pub mod scan;
pub mod sentinel;
pub mod stream;
pub mod trim;
