//! Which server the module is loaded into, read once at load from what the
//! server says it is (`INFO server`'s `server_name`, never a version
//! number alone: Valkey 9 numbers itself past Redis 8 yet has none of Redis
//! 8's command flags), and the choices that follow from it: the flags of
//! the replicated effect command, the module options, and whether the
//! server migrates slots atomically (Valkey 9).

use std::ffi::CStr;
use std::os::raw::c_int;

use redis_module::raw;
use redis_module::Context;

/// Redis or Valkey.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Redis,
    Valkey,
}

/// The server, as it describes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Server {
    pub kind: Kind,
    /// `RedisModule_GetServerVersion`: `0x00MMmmpp` of the server's own
    /// version (Valkey 9.1.2 is `0x090102`); 0 when the server is too old
    /// to say.
    pub version: c_int,
}

/// Module option bits (`RedisModule_SetModuleOptions` takes them all at
/// once: it replaces, it does not add). The Valkey ones have no name in
/// the crate's header, which stops at Redis's bit 3.
const NO_IMPLICIT_SIGNAL_MODIFIED: c_int =
    raw::REDISMODULE_OPTION_NO_IMPLICIT_SIGNAL_MODIFIED as c_int;
/// Valkey 8.1+: `Replicate` skips the command look-up it pays per call.
const SKIP_COMMAND_VALIDATION: c_int = 1 << 4;
/// Valkey 9+: the module handles atomic slot migration (without it the
/// server refuses every `CLUSTER MIGRATESLOTS`).
const HANDLE_ATOMIC_SLOT_MIGRATION: c_int = 1 << 5;

impl Server {
    /// Asks the server (at load).
    pub fn detect(ctx: &Context) -> Server {
        // SAFETY: plain getters on the load context; the info data is
        // freed before returning, and the field's text read before that.
        unsafe {
            let version = raw::RedisModule_GetServerVersion.map_or(0, |get| get());
            let name = match (
                raw::RedisModule_GetServerInfo,
                raw::RedisModule_ServerInfoGetFieldC,
                raw::RedisModule_FreeServerInfo,
            ) {
                (Some(info), Some(field), Some(free)) => {
                    let data = info(ctx.ctx, c"server".as_ptr());
                    let name = field(data, c"server_name".as_ptr());
                    let valkey = !name.is_null() && CStr::from_ptr(name) == c"valkey";
                    free(ctx.ctx, data);
                    valkey
                }
                _ => false,
            };
            Server {
                kind: if name { Kind::Valkey } else { Kind::Redis },
                version,
            }
        }
    }

    /// Whether the server knows Redis 8's `internal` command flag (an
    /// unknown flag makes `RedisModule_CreateCommand` fail).
    pub fn has_internal_flag(&self) -> bool {
        self.kind == Kind::Redis && self.version >= 0x08_00_00
    }

    /// Whether the server migrates slots atomically (Valkey 9's `CLUSTER
    /// MIGRATESLOTS`), which the module then opts into and follows.
    pub fn migrates_slots_atomically(&self) -> bool {
        self.kind == Kind::Valkey && self.version >= 0x09_00_00
    }

    /// The module options to set: keys signalled as modified only when a
    /// command really wrote them (so no-op commands don't abort `WATCH`),
    /// and on Valkey what it offers.
    pub fn module_options(&self) -> c_int {
        let mut options = NO_IMPLICIT_SIGNAL_MODIFIED;
        if self.kind == Kind::Valkey && self.version >= 0x08_01_00 {
            options |= SKIP_COMMAND_VALIDATION;
        }
        if self.migrates_slots_atomically() {
            options |= HANDLE_ATOMIC_SLOT_MIGRATION;
        }
        options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(kind: Kind, version: c_int) -> Server {
        Server { kind, version }
    }

    #[test]
    fn redis_8_has_the_internal_flag_valkey_9_does_not() {
        assert!(!server(Kind::Redis, 0x07_00_0f).has_internal_flag());
        assert!(server(Kind::Redis, 0x08_02_03).has_internal_flag());
        assert!(!server(Kind::Valkey, 0x09_01_02).has_internal_flag());
        assert!(!server(Kind::Valkey, 0x08_00_01).has_internal_flag());
    }

    #[test]
    fn valkey_options_by_version() {
        let base = NO_IMPLICIT_SIGNAL_MODIFIED;
        assert_eq!(server(Kind::Redis, 0x08_02_03).module_options(), base);
        assert_eq!(server(Kind::Valkey, 0x08_00_01).module_options(), base);
        assert_eq!(
            server(Kind::Valkey, 0x08_01_00).module_options(),
            base | SKIP_COMMAND_VALIDATION
        );
        assert_eq!(
            server(Kind::Valkey, 0x09_01_02).module_options(),
            base | SKIP_COMMAND_VALIDATION | HANDLE_ATOMIC_SLOT_MIGRATION
        );
        assert!(!server(Kind::Redis, 0x09_00_00).migrates_slots_atomically());
    }
}
