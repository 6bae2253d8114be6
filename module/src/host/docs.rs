//! `COMMAND DOCS` / `COMMAND INFO` for every command of the table the load
//! step hands registration: summary, since, arity, arguments and a key
//! spec saying how each command uses its event (`RO ACCESS` for the
//! read-only ones, `RW` for the rest), turned into the C structs of
//! `RedisModule_SetCommandInfo` (Redis 7.0+) when the module loads.

use std::ffi::{c_char, CString};
use std::os::raw::c_int;

use redis_module::{raw, Context};

use super::command::{Arg, Command, KeyAccess, Kind};

/// Sets the docs of every command of `commands` (a no-op before Redis 7.0).
pub fn register(ctx: &Context, commands: &[Command]) -> Result<(), String> {
    // SAFETY: the API table is filled before OnLoad runs our init.
    let (get, set) = unsafe { (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo) };
    let (Some(get), Some(set)) = (get, set) else {
        return Ok(());
    };
    for doc in commands {
        let name = leak(doc.name);
        // SAFETY: the load context; `name` lives for the process.
        let command = unsafe { get(ctx.ctx, name) };
        if command.is_null() {
            return Err(format!("{} is not registered", doc.name));
        }
        // SAFETY: `info` and everything it points to is leaked, so it
        // outlives the call whether Redis copies it or not.
        if unsafe { set(command, info(doc)) } != raw::REDISMODULE_OK as c_int {
            return Err(format!("Redis refused the docs of {}", doc.name));
        }
    }
    Ok(())
}

/// A C string that lives for the rest of the process (a few hundred
/// bytes once per load).
pub(super) fn leak(s: &str) -> *const c_char {
    CString::new(s).map_or(std::ptr::null(), |c| c.into_raw() as *const c_char)
}

fn info(doc: &Command) -> &'static raw::RedisModuleCommandInfo {
    let version = Box::leak(Box::new(raw::RedisModuleCommandInfoVersion {
        version: 1,
        sizeof_historyentry: std::mem::size_of::<raw::RedisModuleCommandHistoryEntry>(),
        sizeof_keyspec: std::mem::size_of::<raw::RedisModuleCommandKeySpec>(),
        sizeof_arg: std::mem::size_of::<raw::RedisModuleCommandArg>(),
    }));
    Box::leak(Box::new(raw::RedisModuleCommandInfo {
        version,
        summary: leak(doc.summary),
        complexity: leak(doc.complexity),
        since: leak(doc.since),
        history: std::ptr::null_mut(),
        tips: std::ptr::null(),
        arity: doc.arity,
        key_specs: key_specs(doc),
        args: args(doc.args),
    }))
}

fn key_specs(doc: &Command) -> *mut raw::RedisModuleCommandKeySpec {
    let flags = match doc.access {
        KeyAccess::Read => raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
        KeyAccess::Insert => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT,
        KeyAccess::Update => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
        KeyAccess::Delete => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_DELETE,
    };
    // SAFETY: an all-zero key spec is the array's terminator.
    let mut spec: raw::RedisModuleCommandKeySpec = unsafe { std::mem::zeroed() };
    spec.flags = flags as u64;
    spec.begin_search_type = raw::RedisModuleKeySpecBeginSearchType_REDISMODULE_KSPEC_BS_INDEX;
    spec.bs.index.pos = doc.key;
    spec.find_keys_type = raw::RedisModuleKeySpecFindKeysType_REDISMODULE_KSPEC_FK_RANGE;
    spec.fk.range = raw::RedisModuleCommandKeySpec__bindgen_ty_2__bindgen_ty_1 {
        lastkey: 0,
        keystep: 1,
        limit: 0,
    };
    // SAFETY: as above.
    let end = unsafe { std::mem::zeroed() };
    Box::leak(vec![spec, end].into_boxed_slice()).as_mut_ptr()
}

fn args(args: &[Arg]) -> *mut raw::RedisModuleCommandArg {
    let mut out: Vec<raw::RedisModuleCommandArg> = args.iter().map(one_arg).collect();
    // SAFETY: an all-zero argument is the array's terminator.
    out.push(unsafe { std::mem::zeroed() });
    Box::leak(out.into_boxed_slice()).as_mut_ptr()
}

fn one_arg(arg: &Arg) -> raw::RedisModuleCommandArg {
    use raw::{
        RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_INTEGER as INTEGER,
        RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_KEY as KEY,
        RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_PURE_TOKEN as TOKEN,
        RedisModuleCommandArgType_REDISMODULE_ARG_TYPE_STRING as STRING,
    };
    let optional = raw::REDISMODULE_CMD_ARG_OPTIONAL as c_int;
    let multiple = raw::REDISMODULE_CMD_ARG_MULTIPLE as c_int;
    let (kind, key_spec_index, token, flags) = match arg.kind {
        Kind::Event => (KEY, 0, None, 0),
        Kind::Text => (STRING, -1, None, 0),
        Kind::Integer => (INTEGER, -1, None, 0),
        Kind::Option(token) => (INTEGER, -1, Some(token), optional),
        Kind::Flag(token) => (TOKEN, -1, Some(token), optional),
        Kind::Rest => (STRING, -1, None, optional | multiple),
        Kind::TextOption(token) => (STRING, -1, Some(token), optional),
        Kind::Words(token) => (INTEGER, -1, Some(token), optional | multiple),
    };
    // SAFETY: every field not set below is a null pointer or zero.
    let mut out: raw::RedisModuleCommandArg = unsafe { std::mem::zeroed() };
    out.name = leak(arg.name);
    out.type_ = kind;
    out.key_spec_index = key_spec_index;
    out.token = token.map_or(std::ptr::null(), leak);
    out.flags = flags;
    out
}
