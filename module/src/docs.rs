//! `COMMAND DOCS` / `COMMAND INFO` for every `TICKET.*` command: summary,
//! since, arity, arguments and a key spec saying how each command uses its
//! event (`RO ACCESS` for the read-only ones, `RW` for the rest), set with
//! `RedisModule_SetCommandInfo` (Redis 7.0+) when the module loads.
//!
//! The table is plain data; [`register`] turns it into the C structs. The
//! declared key of every command is the event id argument (which is not
//! itself a key: its hash tag is the one of the event's keys), so cluster
//! clients route by it and ACL key patterns must match event ids.

/// How one argument is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The event id: the declared key.
    Event,
    Text,
    Integer,
    /// `NAME value`: a keyword followed by an integer.
    Option(&'static str),
    /// A keyword alone.
    Flag(&'static str),
    /// Any number of trailing words.
    Rest,
}

/// One argument of a command.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    pub name: &'static str,
    pub kind: Kind,
}

/// How a command touches its event's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Insert,
    Update,
    Delete,
}

/// What `COMMAND DOCS` says about one command.
#[derive(Debug, Clone, Copy)]
pub struct Doc {
    pub name: &'static str,
    pub summary: &'static str,
    pub complexity: &'static str,
    pub since: &'static str,
    /// Redis's arity: `n` exactly, `-n` at least `n` (the name counts).
    pub arity: i32,
    /// Position of the event argument (the declared key).
    pub key: i32,
    pub access: Access,
    pub args: &'static [Arg],
}

const fn arg(name: &'static str, kind: Kind) -> Arg {
    Arg { name, kind }
}

const EVENT: Arg = arg("event", Kind::Event);
const USER: Arg = arg("user", Kind::Text);

/// Every command the module registers.
pub const DOCS: &[Doc] = &[
    Doc {
        name: "ticket.init",
        summary: "Creates an event with `total` tickets, optionally open only between OPENS and CLOSES (unix ms), with claims held HOLD ms by default, at most LIMIT tickets per user and waiting-list offers held OFFER ms.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: -3,
        key: 1,
        access: Access::Insert,
        args: &[
            EVENT,
            arg("total", Kind::Integer),
            arg("opens", Kind::Option("OPENS")),
            arg("closes", Kind::Option("CLOSES")),
            arg("hold", Kind::Option("HOLD")),
            arg("limit", Kind::Option("LIMIT")),
            arg("offer", Kind::Option("OFFER")),
        ],
    },
    Doc {
        name: "ticket.claim",
        summary: "Hands the user the COUNT lowest free tickets (sold, or held HOLD ms), or the tickets the user already holds.",
        complexity: "O(log N) per ticket, plus O(log N) per hold that expired",
        since: "0.1.0",
        arity: -3,
        key: 1,
        access: Access::Update,
        args: &[
            EVENT,
            USER,
            arg("count", Kind::Option("COUNT")),
            arg("hold", Kind::Option("HOLD")),
        ],
    },
    Doc {
        name: "ticket.confirm",
        summary: "Makes the user's held order sold; replies with the number of tickets the user holds.",
        complexity: "O(log N), plus O(log N) per hold that expired",
        since: "0.2.0",
        arity: 3,
        key: 1,
        access: Access::Update,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket.order",
        summary: "The user's tickets, whether they are held or sold, and the hold's deadline; nil if none.",
        complexity: "O(log N)",
        since: "0.2.0",
        arity: 3,
        key: 1,
        access: Access::Read,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket.cancel",
        summary: "Returns all the user's tickets, held or sold, to the pool.",
        complexity: "O(log N)",
        since: "0.1.0",
        arity: 3,
        key: 1,
        access: Access::Update,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket.holder",
        summary: "The lowest ticket the user holds, or nil.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 3,
        key: 1,
        access: Access::Read,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket.status",
        summary: "Total, remaining, claimed, status, window, unsynced log entries, held tickets, waiting list and incarnation of an event.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: Access::Read,
        args: &[EVENT],
    },
    Doc {
        name: "ticket.open",
        summary: "Accepts new claims again (the OPENS/CLOSES window still applies).",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: Access::Update,
        args: &[EVENT],
    },
    Doc {
        name: "ticket.close",
        summary: "Stops new claims; repeat claims still answer with the held ticket.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: Access::Update,
        args: &[EVENT],
    },
    Doc {
        name: "ticket.drop",
        summary: "Deletes an event's keys but its log, and logs op=drop (the trace); refuses while its log is not drained, unless FORCE.",
        complexity: "O(N) in the event's holders and log",
        since: "0.1.0",
        arity: -2,
        key: 1,
        access: Access::Delete,
        args: &[EVENT, arg("force", Kind::Flag("FORCE"))],
    },
    Doc {
        name: "ticket.restore",
        summary: "Operator: installs a snapshot of an event in steps: BEGIN <incarnation> <total> <minted> <status> <opens_at> <closes_at> <hold> <limit> <offer> <orders> <from-id> [FORCE], ORDERS <user> <tickets> <until> ..., FREE <n>|<a>-<b> ..., COMMIT (replies with the id of the op=restore entry).",
        complexity: "O(N log N) in the orders or numbers of the step",
        since: "0.3.0",
        arity: -3,
        key: 1,
        access: Access::Update,
        args: &[
            EVENT,
            arg("step", Kind::Text),
            arg("values", Kind::Rest),
        ],
    },
    Doc {
        name: "ticket.reapply",
        summary: "Sidecar/operator: re-applies a write an unplanned failover lost (the log entry's fields) when nothing since makes it wrong; replies with the new entry's id, or CHANGED and changes nothing.",
        complexity: "O(N log N) in the entry's tickets",
        since: "0.4.0",
        arity: -4,
        key: 1,
        access: Access::Update,
        args: &[
            EVENT,
            arg("field", Kind::Text),
            arg("value", Kind::Text),
            arg("more", Kind::Rest),
        ],
    },
    Doc {
        name: "ticket.wait",
        summary: "Joins the event's FIFO waiting list for COUNT tickets; replies with the 1-based position, or 0 when tickets were offered at once.",
        complexity: "O(log N) in the waiting list, plus O(log N) per offer made",
        since: "0.3.0",
        arity: -3,
        key: 1,
        access: Access::Update,
        args: &[EVENT, USER, arg("count", Kind::Option("COUNT"))],
    },
    Doc {
        name: "ticket.leave",
        summary: "Leaves the event's waiting list (1, or 0 when not on it); the next in line may be offered tickets.",
        complexity: "O(log N) in the waiting list, plus O(log N) per offer made",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: Access::Update,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket.position",
        summary: "The user's 1-based position in the event's waiting list, or nil.",
        complexity: "O(log N)",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: Access::Read,
        args: &[EVENT, USER],
    },
    Doc {
        name: "ticket._apply",
        summary: "Internal: one replicated state change, sent by a primary or read from the AOF; refused from clients.",
        complexity: "O(log N)",
        since: "0.2.0",
        arity: -4,
        key: 2,
        access: Access::Update,
        args: &[
            arg("version", Kind::Integer),
            EVENT,
            arg("op", Kind::Text),
            arg("values", Kind::Rest),
        ],
    },
];

#[cfg(not(test))]
pub use glue::register;

#[cfg(not(test))]
mod glue {
    use std::ffi::{c_char, CString};
    use std::os::raw::c_int;

    use redis_module::{raw, Context};

    use super::{Access, Arg, Doc, Kind, DOCS};

    /// Sets the docs of every command in [`DOCS`] (a no-op before Redis 7.0).
    pub fn register(ctx: &Context) -> Result<(), String> {
        // SAFETY: the API table is filled before OnLoad runs our init.
        let (get, set) = unsafe { (raw::RedisModule_GetCommand, raw::RedisModule_SetCommandInfo) };
        let (Some(get), Some(set)) = (get, set) else {
            return Ok(());
        };
        for doc in DOCS {
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
    fn leak(s: &str) -> *const c_char {
        CString::new(s).map_or(std::ptr::null(), |c| c.into_raw() as *const c_char)
    }

    fn info(doc: &Doc) -> &'static raw::RedisModuleCommandInfo {
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

    fn key_specs(doc: &Doc) -> *mut raw::RedisModuleCommandKeySpec {
        let flags = match doc.access {
            Access::Read => raw::REDISMODULE_CMD_KEY_RO | raw::REDISMODULE_CMD_KEY_ACCESS,
            Access::Insert => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_INSERT,
            Access::Update => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_UPDATE,
            Access::Delete => raw::REDISMODULE_CMD_KEY_RW | raw::REDISMODULE_CMD_KEY_DELETE,
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_names_its_event_and_fits_its_arity() {
        for doc in DOCS {
            let events = doc.args.iter().filter(|a| a.kind == Kind::Event).count();
            assert_eq!(events, 1, "{}", doc.name);
            let position = doc.args.iter().position(|a| a.kind == Kind::Event);
            assert_eq!(
                position.map(|p| p as i32 + 1),
                Some(doc.key),
                "{}",
                doc.name
            );
            let required = doc
                .args
                .iter()
                .filter(|a| matches!(a.kind, Kind::Event | Kind::Text | Kind::Integer))
                .count() as i32;
            assert_eq!(doc.arity.abs(), required + 1, "{}", doc.name);
        }
    }

    #[test]
    fn only_order_holder_status_and_position_are_read_only() {
        let read: Vec<_> = DOCS
            .iter()
            .filter(|d| d.access == Access::Read)
            .map(|d| d.name)
            .collect();
        assert_eq!(
            read,
            [
                "ticket.order",
                "ticket.holder",
                "ticket.status",
                "ticket.position"
            ]
        );
    }
}
