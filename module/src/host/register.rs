//! Loading the module: `RedisModule_Init` (through `redis_module!`), the
//! commands of the table with their flags, key positions and ACL
//! categories, their `COMMAND DOCS`, the server-event subscriptions and
//! the `ticket.*` configs.
//!
//! Every command goes through one C entry point per table row
//! ([`entry`], monomorphised by row index) that hands Redis's argv to the
//! row's handler in place, without the crate's copy into `RedisString`s.

use std::ffi::CString;
use std::os::raw::c_int;

use redis_module::configuration::{register_i64_configuration, ConfigurationFlags};
use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};
use redis_module::{redis_module, Context, RedisString, Status};

use super::argv::Argv;
use super::{docs, events};
use crate::cmd::table::{Command, Flags, COMMANDS};
use crate::expiry::sweep::{self, SWEEP_INTERVAL, SWEEP_MAX};
use crate::POOL_CHUNK;

redis_module! {
    name: "ticket",
    version: 3,
    allocator: (redis_module::alloc::RedisAlloc, redis_module::alloc::RedisAlloc),
    data_types: [],
    init: on_load,
    commands: [],
}

fn on_load(ctx: &Context, _args: &[RedisString]) -> Status {
    // After MODULE UNLOAD + LOAD the library may stay mapped with its
    // thread-locals, and nothing told us about changes in between.
    crate::meta_cache::clear();
    // Keys are signalled as modified only when a command really wrote
    // them (see host::store), so no-op commands don't abort WATCH.
    // SAFETY: the API table is filled; called with the load context.
    unsafe {
        if let Some(set_options) = raw::RedisModule_SetModuleOptions {
            set_options(
                ctx.ctx,
                raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int,
            );
        }
    }
    // Holds may exist already (MODULE LOAD on a live server): the expiry
    // index starts stale and the first sweep rebuilds it.
    sweep::start();
    let loaded = events::subscribe_invalidations(ctx)
        .map_err(str::to_owned)
        .and_then(|()| register_commands(ctx))
        .and_then(|()| events::subscribe_cron(ctx).map_err(str::to_owned))
        .and_then(|()| docs::register(ctx, COMMANDS));
    if let Err(why) = loaded {
        ctx.log_warning(&why);
        return Status::Err;
    }
    register_config(ctx)
}

/// A command's C entry point.
type Entry = extern "C" fn(*mut RedisModuleCtx, *mut *mut RedisModuleString, c_int) -> c_int;

/// The entry point of table row `ROW`: runs its handler on the argv in
/// place and sends its reply.
extern "C" fn entry<const ROW: usize>(
    ctx: *mut RedisModuleCtx,
    argv: *mut *mut RedisModuleString,
    argc: c_int,
) -> c_int {
    let context = Context::new(ctx);
    let args = match argv.is_null() {
        true => &[][..],
        // SAFETY: Redis passes argc live strings that outlive the call.
        false => unsafe { std::slice::from_raw_parts(argv, argc.max(0) as usize) },
    };
    let reply = (COMMANDS[ROW].handler)(&context, Argv::new(args));
    context.reply(reply) as c_int
}

/// One entry point per possible table row (more rows than commands: adding
/// a command to the table needs nothing here).
const ENTRIES: [Entry; 24] = [
    entry::<0>,
    entry::<1>,
    entry::<2>,
    entry::<3>,
    entry::<4>,
    entry::<5>,
    entry::<6>,
    entry::<7>,
    entry::<8>,
    entry::<9>,
    entry::<10>,
    entry::<11>,
    entry::<12>,
    entry::<13>,
    entry::<14>,
    entry::<15>,
    entry::<16>,
    entry::<17>,
    entry::<18>,
    entry::<19>,
    entry::<20>,
    entry::<21>,
    entry::<22>,
    entry::<23>,
];

const _: () = assert!(COMMANDS.len() <= ENTRIES.len(), "add entry points");

/// Registers every command of the table.
fn register_commands(ctx: &Context) -> Result<(), String> {
    // SAFETY: plain getter; absent before 6.0.9, then treated as old.
    let version = unsafe { raw::RedisModule_GetServerVersion.map_or(0, |get| get()) };
    for (command, entry) in COMMANDS.iter().zip(ENTRIES) {
        create_command(ctx, command, entry, flags(command.flags, version))?;
        if let Some(category) = acl_category(command.flags) {
            set_acl_category(ctx, command, category);
        }
    }
    Ok(())
}

/// Redis's flag string: `internal` exists from Redis 8.0, and an unknown
/// flag makes `RedisModule_CreateCommand` fail.
fn flags(flags: Flags, version: c_int) -> &'static std::ffi::CStr {
    match flags {
        Flags::Write => c"write deny-oom",
        Flags::Read => c"readonly fast",
        Flags::Replicated if version >= 0x08_00_00 => c"write internal",
        Flags::Replicated => c"write",
    }
}

fn acl_category(flags: Flags) -> Option<&'static std::ffi::CStr> {
    match flags {
        Flags::Write => Some(c"write"),
        Flags::Read => Some(c"read"),
        Flags::Replicated => None,
    }
}

/// `RedisModule_CreateCommand` with the event argument as first and last key.
fn create_command(
    ctx: &Context,
    command: &Command,
    entry: Entry,
    flags: &'static std::ffi::CStr,
) -> Result<(), String> {
    let name = CString::new(command.name).map_err(|e| e.to_string())?;
    // SAFETY: the load context; Redis copies the name and flags, and the
    // callback lives for the whole process.
    let created = unsafe {
        raw::RedisModule_CreateCommand.ok_or("no command API")?(
            ctx.ctx,
            name.as_ptr(),
            Some(entry),
            flags.as_ptr(),
            command.key,
            command.key,
            1,
        )
    };
    match created == raw::REDISMODULE_OK as c_int {
        true => Ok(()),
        false => Err(format!("cannot register {}", command.name)),
    }
}

/// Sets the command's ACL category where the server has them (Redis 7.2+);
/// a server that refuses it only gets a warning, as with `redis_module!`.
fn set_acl_category(ctx: &Context, command: &Command, category: &'static std::ffi::CStr) {
    let Ok(name) = CString::new(command.name) else {
        return;
    };
    // SAFETY: the load context and a live name; categories exist from 7.2 on.
    let set = unsafe {
        match (
            raw::RedisModule_GetCommand,
            raw::RedisModule_SetCommandACLCategories,
        ) {
            (Some(get), Some(set)) => {
                let handle = get(ctx.ctx, name.as_ptr());
                !handle.is_null() && set(handle, category.as_ptr()) == raw::REDISMODULE_OK as c_int
            }
            _ => true,
        }
    };
    if !set {
        ctx.log_warning(&format!(
            "failed to set the ACL category of {}",
            command.name
        ));
    }
}

/// Registers `ticket.pool-chunk`, `ticket.sweep-interval` (ms between
/// two sweeps) and `ticket.sweep-max` (most holds expired per sweep, and
/// most waiting-list offers per command or sweep) (the crate's `configurations:` block needs every config kind at once,
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
