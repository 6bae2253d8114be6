//! The shape of what the load step hands the host: a row of the command
//! table ([`Command`]: name, flags, arity, key spec, docs, handler; the rows
//! themselves are `cmd::table`), and the module around it ([`Module`]: the
//! table, the cron's work, the configs). Defined here, below `cmd`, so that
//! registration and `COMMAND DOCS` read the table without importing it.

use std::sync::atomic::AtomicI64;

use redis_module::{Context, RedisResult};

use super::ffi::Argv;

/// What the load step hands registration (`host::register::load`). A type
/// rather than values so that each row's C entry point reads its handler at
/// compile time: nothing is looked up on the claim path.
pub trait Module {
    /// THE command table.
    const COMMANDS: &'static [Command];
    /// The `ticket.*` configs.
    const CONFIGS: &'static [Config];
    /// What Redis's cron runs every tick (the expiry sweep).
    fn on_cron(ctx: &Context);
}

/// A `ticket.<name>` integer config: name, variable, default, range.
pub type Config = (
    &'static str,
    &'static AtomicI64,
    i64,
    std::ops::RangeInclusive<i64>,
);

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
    /// `KEYWORD name [name ...]`: a keyword taking every word after it.
    Words(&'static str),
    /// `NAME value`: a keyword followed by a text value.
    TextOption(&'static str),
}

/// One argument of a command.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    pub name: &'static str,
    pub kind: Kind,
}

/// How a command touches its event's keys (its key spec in `COMMAND DOCS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyAccess {
    Read,
    Insert,
    Update,
    Delete,
}

/// Redis's command flags and ACL category of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flags {
    /// `write deny-oom`, ACL category `write`.
    Write,
    /// `readonly fast`, ACL category `read`.
    Read,
    /// A replicated effect: `write`, plus `internal` from Redis 8.0 on (an
    /// unknown flag makes registration fail on older servers); no ACL
    /// category.
    Replicated,
}

/// What a command's handler is: it reads the argv in place.
pub type Handler = fn(&Context, Argv<'_>) -> RedisResult;

/// One command: how Redis registers it and what `COMMAND DOCS` says.
#[derive(Clone, Copy)]
pub struct Command {
    pub name: &'static str,
    pub flags: Flags,
    pub handler: Handler,
    pub summary: &'static str,
    pub complexity: &'static str,
    pub since: &'static str,
    /// Redis's arity: `n` exactly, `-n` at least `n` (the name counts).
    pub arity: i32,
    /// Position of the event argument (the declared key).
    pub key: i32,
    pub access: KeyAccess,
    /// Who sends it: what its checklist holds it to (docs, clients, ACL
    /// roles: `cmd/checklist.rs`).
    pub audience: Audience,
    pub args: &'static [Arg],
}

/// Who sends a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Applications: every client library has it.
    Client,
    /// Operators and the sidecar, from their own tools (an ACL role each).
    Operator,
    /// Only a primary's replication link or the AOF (`TICKET._APPLY`).
    Replication,
}
