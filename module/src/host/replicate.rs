//! Replicating one decided effect: `TICKET._APPLY` with the effect's
//! arguments, sent to replicas and the AOF with one `RedisModule_Replicate`
//! call (docs/design.md "Effects and replication"). The replica applies it
//! with the same code at the primary's stream id.
//!
//! The arguments reuse the strings the command's writes made: a hot op's
//! effect (version 3) is the very argument vector its log entry was
//! appended with, behind `<op> <ms> <seq> <minted>`, and the id's two
//! numbers are shared strings (the millisecond's time, a small number), so
//! replicating a claim makes no string of its own.

use std::ptr;

use redis_module::raw::{self, RedisModuleString};

use protocol::effect::{id_numbers, Effect, MAX_ARGS, VERSION};

use super::ffi::Made;
use super::store::RedisStore;

/// `TICKET._APPLY` (protocol::effect::APPLY_COMMAND) for `RedisModule_Replicate`.
const APPLY_C: &std::ffi::CStr = c"TICKET._APPLY";

impl RedisStore<'_> {
    /// Propagates `effect` to replicas and the AOF as one `TICKET._APPLY`.
    pub fn replicate<U: AsRef<str>>(&mut self, effect: &Effect<U>) {
        if self.replicate_logged(effect) {
            return;
        }
        let mut made = Made::default();
        let values = effect.args(self.event);
        let values = values.as_slice();
        let mut few = [ptr::null_mut::<RedisModuleString>(); protocol::effect::MAX_ARGS];
        // A restore step has more arguments than the fixed array holds.
        let mut many = Vec::new();
        let args = match values.len() <= few.len() {
            true => &mut few[..values.len()],
            false => {
                many.resize(values.len(), ptr::null_mut());
                &mut many[..]
            }
        };
        for (slot, value) in args.iter_mut().zip(values) {
            *slot = self.value_string(*value, &mut made);
        }
        self.propagate(APPLY_C, args);
    }

    /// Propagates a compact op's append from the strings its entry was
    /// appended with, when it is the entry this command appended last:
    /// `3 <E> <op> <ms> <seq> <minted>` and the entry's fields after its op,
    /// the arguments `Effect::args` gives it. False when it is not (or its
    /// id needs version 2).
    fn replicate_logged<U: AsRef<str>>(&mut self, effect: &Effect<U>) -> bool {
        let Effect::Append { id, minted, .. } = effect else {
            return false;
        };
        if self.logged.as_ref().is_none_or(|entry| entry.id != *id) {
            return false;
        }
        let Some((ms, seq)) = id_numbers(*id) else {
            return false;
        };
        let ms = self.time_string(ms);
        let seq = self.number_string(seq);
        let minted = self.number_string(minted.unwrap_or(0));
        let version = self.number_string(VERSION);
        // Read in place: the entry's strings stay kept until the command ends.
        let Some(entry) = self.logged.as_ref() else {
            return false;
        };
        let fields = &entry.argv[1..entry.len];
        let head = [version, self.names.event(), entry.argv[0], ms, seq, minted];
        let mut args = [ptr::null_mut::<RedisModuleString>(); MAX_ARGS + 1];
        let n = head.len() + fields.len();
        if n > args.len() {
            return false;
        }
        // Element by element: a copy of a length known only at run time
        // is a call to memcpy.
        args[..head.len()].copy_from_slice(&head);
        for (slot, field) in args[head.len()..n].iter_mut().zip(fields) {
            *slot = *field;
        }
        self.propagate(APPLY_C, &args[..n]);
        true
    }

    /// Propagates one command to replicas and the AOF.
    fn propagate(&self, command: &std::ffi::CStr, args: &[*mut RedisModuleString]) {
        let n = args.len();
        if n > FEW {
            // SAFETY: "v" takes (RedisModuleString **, size_t); Redis takes
            // its own references to what it keeps.
            unsafe {
                raw::RedisModule_Replicate.unwrap()(
                    self.ctx,
                    command.as_ptr(),
                    c"v".as_ptr(),
                    args.as_ptr(),
                    n,
                );
            }
            return;
        }
        // One "s" per argument: Redis sizes its argument vector from the
        // format once, where "v" makes it grow it (one reallocation less
        // per effect, measured by callgrind).
        let a = |i: usize| args.get(i).copied().unwrap_or(ptr::null_mut());
        // SAFETY: the format names n strings, the first n arguments after
        // it; C ignores the null ones past them.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                self.ctx,
                command.as_ptr(),
                S_FORMAT[FEW - n..].as_ptr().cast(),
                a(0),
                a(1),
                a(2),
                a(3),
                a(4),
                a(5),
                a(6),
                a(7),
                a(8),
                a(9),
                a(10),
                a(11),
                a(12),
            );
        }
    }
}

/// Most arguments propagated with one "s" each.
const FEW: usize = 13;

/// `FEW` times "s", NUL-terminated: the format of `n` strings is its last
/// `n + 1` bytes.
const S_FORMAT: &[u8; FEW + 1] = b"sssssssssssss\0";
