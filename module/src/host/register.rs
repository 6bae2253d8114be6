//! Registering the module with Redis, from what the load step hands it (a
//! [`Module`]: the command table, the configs, the cron's work): the
//! commands with their flags, key positions and ACL categories, their
//! `COMMAND DOCS`, the server-event subscriptions and the `ticket.*`
//! configs.
//!
//! Every command goes through one C entry point per table row
//! (`entry`, monomorphised by module and row index) that hands Redis's
//! argv to the row's handler in place, without the crate's copy into
//! `RedisString`s.

use std::ffi::CString;
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use redis_module::configuration::{register_i64_configuration, ConfigurationFlags};
use redis_module::raw::{self, RedisModuleCtx, RedisModuleString};
use redis_module::{Context, RedisError, RedisResult, Status};

use super::command::{Command, Config, Flags, Module};
use super::ffi::Argv;
use super::server::Server;
use super::{docs, events};

/// Registers everything `M` describes; run once from `RedisModule_OnLoad`.
pub fn load<M: Module>(ctx: &Context) -> Status {
    // After MODULE UNLOAD + LOAD the library may stay mapped with its
    // thread-locals, and nothing told us about changes in between.
    super::cache::forget_all_meta();
    let server = Server::detect(ctx);
    // SAFETY: the API table is filled; called with the load context.
    unsafe {
        if let Some(set_options) = raw::RedisModule_SetModuleOptions {
            set_options(ctx.ctx, server.module_options());
        }
    }
    let loaded = events::subscribe_invalidations(ctx, &server)
        .map_err(str::to_owned)
        .and_then(|()| register_commands::<M>(ctx, &server))
        .and_then(|()| events::subscribe_cron::<M>(ctx).map_err(str::to_owned))
        .and_then(|()| docs::register(ctx, M::COMMANDS));
    if let Err(why) = loaded {
        super::ffi::log_warning(ctx.ctx, &why);
        return Status::Err;
    }
    register_config(ctx, M::CONFIGS)
}

/// A command's C entry point.
type Entry = extern "C" fn(*mut RedisModuleCtx, *mut *mut RedisModuleString, c_int) -> c_int;

/// The entry point of table row `ROW`: runs its handler on the argv in
/// place and sends its reply. Nothing unwinds into Redis: a panic in the
/// handler or the reply becomes an `INTERNAL` error, logged with the
/// command's name and counted in `INFO ticket` (`panics`).
extern "C" fn entry<M: Module, const ROW: usize>(
    ctx: *mut RedisModuleCtx,
    argv: *mut *mut RedisModuleString,
    argc: c_int,
) -> c_int {
    let name = M::COMMANDS[ROW].name;
    let answered = catch_unwind(AssertUnwindSafe(|| {
        let context = Context::new(ctx);
        let args = match argv.is_null() {
            true => &[][..],
            // SAFETY: Redis passes argc live strings that outlive the call.
            false => unsafe { std::slice::from_raw_parts(argv, argc.max(0) as usize) },
        };
        let reply = (M::COMMANDS[ROW].handler)(&context, Argv::new(args));
        reply_to(&context, reply)
    }));
    match answered {
        Ok(status) => status,
        Err(panic) => {
            let what = super::panic::caught(ctx, name, panic.as_ref());
            reply_error(ctx, &what)
        }
    }
}

/// Sends a handler's reply: values as the crate writes them, errors
/// through [`reply_error`] (never the crate's, which turns each character
/// into one byte and panics on a NUL).
fn reply_to(context: &Context, reply: RedisResult) -> c_int {
    match reply {
        Ok(value) => context.reply(Ok(value)) as c_int,
        Err(RedisError::WrongArity) => {
            // SAFETY: the live command context.
            unsafe { raw::RedisModule_WrongArity.unwrap()(context.ctx) }
        }
        Err(e) => reply_error(context.ctx, &e.to_string()),
    }
}

/// Replies with the error `text`, made legal (`error::legal`): printable
/// ASCII, one line.
fn reply_error(ctx: *mut RedisModuleCtx, text: &str) -> c_int {
    let text = crate::error::legal(text);
    // SAFETY: the live command context and a NUL-terminated text Redis copies.
    unsafe { raw::RedisModule_ReplyWithError.unwrap()(ctx, text.as_ptr()) }
}

/// How many rows the table may have: one entry point per possible row
/// (more rows than commands: adding a command to the table needs nothing
/// here).
const ROWS: usize = 28;

/// The entry points of `M`'s rows, by row index.
fn entries<M: Module>() -> [Entry; ROWS] {
    [
        entry::<M, 0>,
        entry::<M, 1>,
        entry::<M, 2>,
        entry::<M, 3>,
        entry::<M, 4>,
        entry::<M, 5>,
        entry::<M, 6>,
        entry::<M, 7>,
        entry::<M, 8>,
        entry::<M, 9>,
        entry::<M, 10>,
        entry::<M, 11>,
        entry::<M, 12>,
        entry::<M, 13>,
        entry::<M, 14>,
        entry::<M, 15>,
        entry::<M, 16>,
        entry::<M, 17>,
        entry::<M, 18>,
        entry::<M, 19>,
        entry::<M, 20>,
        entry::<M, 21>,
        entry::<M, 22>,
        entry::<M, 23>,
        entry::<M, 24>,
        entry::<M, 25>,
        entry::<M, 26>,
        entry::<M, 27>,
    ]
}

/// Registers every command of the table.
fn register_commands<M: Module>(ctx: &Context, server: &Server) -> Result<(), String> {
    const { assert!(M::COMMANDS.len() <= ROWS, "add entry points") };
    for (command, entry) in M::COMMANDS.iter().zip(entries::<M>()) {
        create_command(ctx, command, entry, flags(command.flags, server))?;
        if let Some(category) = acl_category(command.flags) {
            set_acl_category(ctx, command, category);
        }
    }
    Ok(())
}

/// The server's flag string: `internal` exists from Redis 8.0 (not on
/// Valkey), and an unknown flag makes `RedisModule_CreateCommand` fail.
fn flags(flags: Flags, server: &Server) -> &'static std::ffi::CStr {
    match flags {
        Flags::Write => c"write deny-oom",
        Flags::Read => c"readonly fast",
        Flags::Replicated if server.has_internal_flag() => c"write internal",
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
        super::ffi::log_warning(
            ctx.ctx,
            &format!("failed to set the ACL category of {}", command.name),
        );
    }
}

/// Registers the integer configs `M` names, each `ticket.<name>` in its
/// range (the crate's `configurations:` block needs every config kind at
/// once, so this is done by hand).
fn register_config(ctx: &Context, configs: &'static [Config]) -> Status {
    for (name, value, default, range) in configs {
        register_i64_configuration(
            ctx,
            name,
            *value,
            *default,
            *range.start(),
            *range.end(),
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
