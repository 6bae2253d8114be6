//! ticketgate: a Redis module for first-come ticketing that cannot oversell.
//!
//! This file registers the module (`ticket`), its commands with their key
//! positions and flags, the `ticket.pool-chunk`, `ticket.sweep-interval`
//! and `ticket.sweep-max` configs, the expiry sweep's cron hook and the
//! `INFO ticket` section. What each command does lives in `cmd/` (one file each), the
//! state machine in `pool`, argument rules in `args`, the stream record in
//! `record`, and the native-key-API glue in `redis_store`.

pub mod apply;
pub mod args;
pub mod cmd;
pub mod docs;
pub mod error;
pub mod expiry;
pub mod meta_cache;
pub mod pool;
pub mod reapply;
pub mod redis_store;
pub mod stats;
pub mod strings;

use std::sync::atomic::AtomicI64;

/// How many ticket numbers a claim mints when the pool is empty
/// (`ticket.pool-chunk`: `CONFIG SET`-able, or set in redis.conf after
/// `loadmodule`). The default is 1: the first number goes straight to the
/// claimant, so the pool ZSet holds only returned tickets. Minting ahead into
/// the ZSet costs a `ZADD` and later a `ZREM` per number, measured at ~15%
/// more work per claim than updating `minted` once per claim.
pub static POOL_CHUNK: AtomicI64 = AtomicI64::new(1);

#[cfg(not(test))]
mod registration {
    use std::ffi::CStr;
    use std::os::raw::c_int;

    use redis_module::configuration::{register_i64_configuration, ConfigurationFlags};
    use redis_module::{raw, redis_module, Context, RedisString, Status};

    use crate::cmd;
    use crate::expiry::{SWEEP_INTERVAL, SWEEP_MAX};
    use crate::POOL_CHUNK;

    redis_module! {
        name: "ticket",
        version: 3,
        allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
        data_types: [],
        init: on_load,
        commands: [
            ["ticket.init", cmd::init::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.cancel", cmd::cancel::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.confirm", cmd::confirm::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.open", cmd::open_close::open, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.close", cmd::open_close::close, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.drop", cmd::drop::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.restore", cmd::restore::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.reapply", cmd::reapply::command, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.holder", cmd::holder::command, "readonly fast", 1, 1, 1, "", "read"],
            ["ticket.status", cmd::status::command, "readonly fast", 1, 1, 1, "", "read"],
            ["ticket.order", cmd::order::command, "readonly fast", 1, 1, 1, "", "read"],
            ["ticket.wait", cmd::waitlist::wait, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.leave", cmd::waitlist::leave, "write deny-oom", 1, 1, 1, "", "write"],
            ["ticket.position", cmd::waitlist::position, "readonly fast", 1, 1, 1, "", "read"],
        ],
    }

    fn on_load(ctx: &Context, _args: &[RedisString]) -> Status {
        // After MODULE UNLOAD + LOAD the library may stay mapped with its
        // thread-locals, and nothing told us about changes in between.
        crate::meta_cache::clear();
        // Keys are signalled as modified only when a command really wrote
        // them (see redis_store), so no-op commands don't abort WATCH.
        // SAFETY: the API table is filled; called with the load context.
        unsafe {
            if let Some(set_options) = raw::RedisModule_SetModuleOptions {
                set_options(
                    ctx.ctx,
                    raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int,
                );
            }
        }
        if let Err(why) = crate::meta_cache::subscribe(ctx) {
            ctx.log_warning(why);
            return Status::Err;
        }
        if let Err(why) = register_claim(ctx).and_then(|()| register_apply(ctx)) {
            ctx.log_warning(why);
            return Status::Err;
        }
        // Holds may exist already (MODULE LOAD on a live server): the index
        // starts stale and the first sweep rebuilds it.
        if let Err(why) = crate::expiry::subscribe(ctx) {
            ctx.log_warning(why);
            return Status::Err;
        }
        if let Err(why) = crate::docs::register(ctx) {
            ctx.log_warning(&why);
            return Status::Err;
        }
        register_config(ctx)
    }

    /// Registers `TICKET.CLAIM` by hand: its handler reads Redis's argv as
    /// is instead of a copy (the hot path). Same flags, keys and ACL
    /// category the other commands get from `redis_module!`.
    fn register_claim(ctx: &Context) -> Result<(), &'static str> {
        create_command(ctx, c"ticket.claim", claim_command, c"write deny-oom", 1)?;
        // SAFETY: the load context; categories exist from Redis 7.2 on.
        unsafe {
            if let (Some(get), Some(set)) = (
                raw::RedisModule_GetCommand,
                raw::RedisModule_SetCommandACLCategories,
            ) {
                let command = get(ctx.ctx, c"ticket.claim".as_ptr());
                if !command.is_null() {
                    set(command, c"write".as_ptr());
                }
            }
        }
        Ok(())
    }

    /// A command handler that reads Redis's argv in place.
    type RawHandler = fn(&Context, &[*mut raw::RedisModuleString]) -> redis_module::RedisResult;

    /// Runs `handler` on the command's argv and sends its reply.
    fn dispatch(
        ctx: *mut raw::RedisModuleCtx,
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
        handler: RawHandler,
    ) -> c_int {
        let context = Context::new(ctx);
        // SAFETY: Redis passes argc live strings that outlive the call.
        let args = unsafe { std::slice::from_raw_parts(argv, argc.max(0) as usize) };
        let reply = handler(&context, args);
        context.reply(reply) as c_int
    }

    extern "C" fn claim_command(
        ctx: *mut raw::RedisModuleCtx,
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
    ) -> c_int {
        dispatch(ctx, argv, argc, cmd::claim::command)
    }

    extern "C" fn apply_command(
        ctx: *mut raw::RedisModuleCtx,
        argv: *mut *mut raw::RedisModuleString,
        argc: c_int,
    ) -> c_int {
        dispatch(ctx, argv, argc, cmd::apply::command)
    }

    /// `RedisModule_CreateCommand` for a hand-registered command whose
    /// first and last key is argument `key`.
    fn create_command(
        ctx: &Context,
        name: &'static CStr,
        handler: extern "C" fn(
            *mut raw::RedisModuleCtx,
            *mut *mut raw::RedisModuleString,
            c_int,
        ) -> c_int,
        flags: &'static CStr,
        key: c_int,
    ) -> Result<(), &'static str> {
        // SAFETY: the load context; the name, flags and callback live for
        // the whole process.
        let created = unsafe {
            raw::RedisModule_CreateCommand.ok_or("no command API")?(
                ctx.ctx,
                name.as_ptr(),
                Some(handler),
                flags.as_ptr(),
                key,
                key,
                1,
            )
        };
        match created == raw::REDISMODULE_OK as c_int {
            true => Ok(()),
            false => Err("cannot register a ticket command"),
        }
    }

    /// Registers `TICKET._APPLY` by hand: its flags depend on the server
    /// (`internal` exists from Redis 8.0, and an unknown flag makes
    /// `RedisModule_CreateCommand` fail). Its key is the event, argument 2.
    fn register_apply(ctx: &Context) -> Result<(), &'static str> {
        // SAFETY: plain getter; absent before 6.0.9, then treated as old.
        let version = unsafe { raw::RedisModule_GetServerVersion.map_or(0, |get| get()) };
        let flags = if version >= 0x08_00_00 {
            c"write internal"
        } else {
            c"write"
        };
        create_command(ctx, c"ticket._apply", apply_command, flags, 2)
    }

    /// Registers `ticket.pool-chunk`, `ticket.sweep-interval` (ms between
    /// two sweeps) and `ticket.sweep-max` (most holds expired per sweep)
    /// (the crate's `configurations:` block needs every config kind at once,
    /// so this is done by hand).
    fn register_config(ctx: &Context) -> Status {
        for (name, value, default, max) in [
            ("pool-chunk", &POOL_CHUNK, 1, 1_000_000),
            ("sweep-interval", &SWEEP_INTERVAL, 100, 60_000),
            ("sweep-max", &SWEEP_MAX, 1000, 1_000_000),
        ] {
            register_i64_configuration(
                ctx,
                name,
                value,
                default,
                1,
                max,
                ConfigurationFlags::DEFAULT,
                None,
            );
        }
        // SAFETY: the API table is filled before OnLoad runs our init; called
        // once, with the load context.
        let loaded = unsafe { raw::RedisModule_LoadConfigs.map(|load| load(ctx.ctx)) };
        match loaded {
            Some(status) if status == raw::REDISMODULE_OK as c_int => Status::Ok,
            _ => Status::Err,
        }
    }
}
