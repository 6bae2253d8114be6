//! A command's arguments as Redis passed them: read in place, no copies
//! (the claim is the hot path, and every command is dispatched the same way).

use redis_module::raw::RedisModuleString;

use super::ffi::bytes_of;

/// The argv of one command call, the command name first; valid for the call.
#[derive(Clone, Copy)]
pub struct Argv<'a> {
    args: &'a [*mut RedisModuleString],
}

/// A user id argument and its own Redis string, which the store reuses as
/// hash field, zset member, stream value and effect argument.
pub type UserArg<'a> = (&'a str, *mut RedisModuleString);

impl<'a> Argv<'a> {
    /// The arguments Redis passed to a command callback.
    #[cfg_attr(test, allow(dead_code))]
    pub(super) fn new(args: &'a [*mut RedisModuleString]) -> Argv<'a> {
        Argv { args }
    }

    /// How many arguments, the command name included.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    /// The bytes of argument `i` (0 is the command name).
    pub fn bytes(&self, i: usize) -> Option<&'a [u8]> {
        self.args.get(i).map(|s| bytes_of(*s))
    }

    /// The arguments from `i` on.
    pub fn from(&self, i: usize) -> impl Iterator<Item = &'a [u8]> + 'a {
        self.args
            .get(i..)
            .unwrap_or_default()
            .iter()
            .map(|s| bytes_of(*s))
    }

    /// Runs `parser` (one of `args`'s, a command's syntax) over the
    /// arguments after the command name, handed as one slice: on the stack
    /// for the usual few, so the claim path allocates nothing.
    pub fn parse<T>(&self, parser: impl FnOnce(&[&'a [u8]]) -> T) -> T {
        const ON_STACK: usize = 8;
        let given = self.len().saturating_sub(1);
        if given > ON_STACK {
            return parser(&self.from(1).collect::<Vec<_>>());
        }
        let mut slots: [&'a [u8]; ON_STACK] = [&[]; ON_STACK];
        for (slot, arg) in slots.iter_mut().zip(self.from(1)) {
            *slot = arg;
        }
        parser(&slots[..given])
    }

    /// Argument `i` as text with its own string, when it is UTF-8.
    pub fn text(&self, i: usize) -> Option<UserArg<'a>> {
        let s = *self.args.get(i)?;
        Some((std::str::from_utf8(bytes_of(s)).ok()?, s))
    }

    /// Argument `i`, known to be the user id `user`, for the store to reuse.
    pub fn user(&self, i: usize, user: &'a str) -> Option<UserArg<'a>> {
        self.args.get(i).map(|s| (user, *s))
    }
}
