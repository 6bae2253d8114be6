//! The module's entry point (`RedisModule_OnLoad`, through
//! `redis_module!`): the one place that knows every layer, so that none
//! below imports one above it. It hands the host the command table
//! (`cmd::table`), the `ticket.*` configs and the cron's work (the expiry
//! sweep); `host::register` does the registering.

use redis_module::{redis_module, Context, RedisString, Status};

use crate::host::command::{Command, Config, Module};
use crate::{cmd, expiry, host, sweep, POOL_CHUNK};

redis_module! {
    name: "ticket",
    version: 3,
    allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
    data_types: [],
    init: on_load,
    commands: [],
}

/// The module as the host sees it.
struct Ticket;

impl Module for Ticket {
    const COMMANDS: &'static [Command] = cmd::table::COMMANDS;
    /// `ticket.pool-chunk`, `ticket.sweep-interval` (ms between two sweeps)
    /// and `ticket.sweep-max` (most holds expired per sweep, and most
    /// waiting-list offers per command or sweep); in a test build
    /// `ticket.fault` (`fault`).
    const CONFIGS: &'static [Config] = &[
        ("pool-chunk", &POOL_CHUNK, 1, 1..=1_000_000),
        ("sweep-interval", &sweep::SWEEP_INTERVAL, 100, 1..=60_000),
        ("sweep-max", &expiry::SWEEP_MAX, 1000, 1..=1_000_000),
        #[cfg(feature = "fault-injection")]
        ("fault", &crate::fault::ARMED, 0, 0..=5),
    ];

    fn on_cron(ctx: &Context) {
        sweep::on_cron(ctx);
    }
}

fn on_load(ctx: &Context, _args: &[RedisString]) -> Status {
    // Holds may exist already (MODULE LOAD on a live server): the expiry
    // index starts stale and the first sweep rebuilds it.
    sweep::start();
    host::register::load::<Ticket>(ctx)
}
