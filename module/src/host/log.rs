//! What a change leaves behind, besides its writes to the event's keys:
//! its entry in the event's log stream (`ticket:{E}:log`, drained by the
//! sidecar) and its replicated effect (one `TICKET._APPLY` for replicas and
//! the AOF; docs/design.md "The log record", "Effects and replication").
//!
//! The entry is appended with `XADD` through the native stream API, at the
//! primary's id on a replica, at the id Redis would give it on a primary
//! that remembers the log's last id (so a compact record can leave its `at`
//! to the id), and the last id it was given is kept for the next append.
//! The effect reuses the strings the command's writes made: a hot op's
//! effect (version 3) is the very argument vector its log entry was
//! appended with, behind `<op> <ms> <seq> <minted>`, and the id's two
//! numbers are shared strings (the millisecond's time, a small number), so
//! replicating a claim makes no string of its own.

use std::os::raw::c_int;
use std::ptr;

use redis_module::raw::{self, RedisModuleString};
use redis_module::Context;

use protocol::effect::{id_numbers, Effect, MAX_ARGS, VERSION};
use protocol::record::Record;
use protocol::StreamId;

use super::cache::{self, Part};
use super::ffi::{rstr, Made};
use super::store::{LoggedEntry, RedisStore};
use crate::error::TicketError;

/// Most strings of one entry: its field/value pairs.
const ENTRY_ARGS: usize = 32;

/// The id the next entry of a log whose last id is `last` gets when
/// written at `at`, as Redis would give it.
fn next_id(last: StreamId, at: i64) -> Option<StreamId> {
    match u64::try_from(at) {
        Ok(ms) if ms > last.ms => Some(StreamId::new(ms, 0)),
        _ => last.next(),
    }
}

impl RedisStore<'_> {
    /// `XADD` of `record` at `id` (a replica: the primary's) or, on the
    /// primary, at the id Redis would pick, worked out from the log's last
    /// id; returns the id used. The entry is a function of the id and the
    /// record alone (a compact record writes `at` exactly when the id does
    /// not start with it), so a replica's and an AOF's are the primary's.
    pub(super) fn append_entry<U: AsRef<str>>(
        &mut self,
        record: &Record<U>,
        id: Option<StreamId>,
    ) -> StreamId {
        self.written[Part::Log as usize] = true;
        // The remembered last id is a guess: a stale one costs a refused
        // append and a look at the log, never a wrong entry.
        let remembered = self.names.last_log_id(self.db());
        let planned = match id {
            Some(id) => Some(id),
            None => self.plan_id(remembered, record.at),
        };
        // A compact entry whose id says its `at` writes no time (nor does
        // its effect, versions 2 and 3).
        if record.writes_at(planned.is_some_and(|id| record.at_in_id(id))) {
            self.use_time_string(record.at);
        }
        let mut added = self.add_at(record, planned);
        if added.is_none() && id.is_none() && remembered.is_some() {
            let fresh = self.plan_id(None, record.at);
            added = self.add_at(record, fresh);
        }
        match added {
            Some(used) => {
                self.names.set_last_log_id(self.db(), used);
                used
            }
            None => {
                // Only an effect whose id is not above the log's last id gets
                // here: this replica's log differs from its primary's.
                let id = planned.unwrap_or_default();
                super::ffi::log_warning(
                    self.ctx,
                    &format!(
                        "ticket: {} refused entry {id}: this replica's log differs from its primary's",
                        self.names.key_string(Part::Log),
                    ),
                );
                id
            }
        }
    }

    /// The id the next entry written at `at` gets: after `last`, or after
    /// the log's own last id when `last` is `None` (`XINFO STREAM`, once
    /// per event after a start, a promotion or a stale guess). `None` when
    /// the log cannot say (not a stream): Redis then picks.
    fn plan_id(&mut self, last: Option<StreamId>, at: i64) -> Option<StreamId> {
        let last = match last {
            Some(last) => last,
            None => self.read_last_log_id().ok()?.unwrap_or_default(),
        };
        next_id(last, at)
    }

    /// `XADD` of `record` at `id` (an auto id when `None`: then `at` is
    /// written); the id used, `None` when Redis refused it.
    fn add_at<U: AsRef<str>>(
        &mut self,
        record: &Record<U>,
        id: Option<StreamId>,
    ) -> Option<StreamId> {
        let c = cache::constants();
        let mut made = Made::default();
        let mut argv = [ptr::null_mut::<RedisModuleString>(); ENTRY_ARGS];
        let mut n = 0;
        let at_in_id = id.is_some_and(|id| record.at_in_id(id));
        for (name, value) in record.log_fields(self.event, at_in_id) {
            argv[n] = c
                .named(name)
                .unwrap_or_else(|| made.keep(rstr(name.as_bytes())));
            argv[n + 1] = self.value_string(value, &mut made);
            n += 2;
        }
        let added = self.stream_add(&mut argv[..n], id);
        // The strings made for the entry stay while the store is open: its
        // effect may carry them.
        self.retired.absorb(&mut made);
        if let Some(id) = added.filter(|_| record.is_compact()) {
            self.logged = LoggedEntry::new(id, &argv[..n]);
        }
        added
    }

    /// `RedisModule_StreamAdd` of the field/value pairs `argv` at `id` (or
    /// an auto id); the id used, `None` when Redis refused it.
    fn stream_add(
        &mut self,
        argv: &mut [*mut RedisModuleString],
        id: Option<StreamId>,
    ) -> Option<StreamId> {
        let (flags, mut stream_id) = match id {
            Some(id) => (
                0,
                raw::RedisModuleStreamID {
                    ms: id.ms,
                    seq: id.seq,
                },
            ),
            None => (
                raw::REDISMODULE_STREAM_ADD_AUTOID as c_int,
                raw::RedisModuleStreamID { ms: 0, seq: 0 },
            ),
        };
        // SAFETY: argv holds field/value pairs; the count is pairs.
        let added = unsafe {
            raw::RedisModule_StreamAdd.unwrap()(
                self.key(Part::Log),
                flags,
                &mut stream_id,
                argv.as_mut_ptr(),
                (argv.len() / 2) as i64,
            )
        };
        (added == raw::REDISMODULE_OK as c_int).then(|| StreamId::new(stream_id.ms, stream_id.seq))
    }

    /// The log's `last-generated-id` (`XINFO STREAM`), None without a log.
    pub(super) fn read_last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        if self.existing(Part::Log)?.is_none() {
            return Ok(None);
        }
        let key = self.names.key_string(Part::Log);
        let fail = |why: String| TicketError::Internal(format!("XINFO STREAM {key}: {why}"));
        let info = Context::new(self.ctx)
            .call("XINFO", &["STREAM", key.as_str()])
            .map_err(|e| fail(e.to_string()))?;
        let text = |v: &redis_module::RedisValue| match v {
            redis_module::RedisValue::SimpleString(s) | redis_module::RedisValue::BulkString(s) => {
                Some(s.clone())
            }
            redis_module::RedisValue::BulkRedisString(s) => Some(s.to_string_lossy()),
            redis_module::RedisValue::StringBuffer(b) => {
                Some(String::from_utf8_lossy(b).into_owned())
            }
            _ => None,
        };
        let redis_module::RedisValue::Array(items) = info else {
            return Err(fail("not an array".into()));
        };
        items
            .chunks_exact(2)
            .find(|pair| text(&pair[0]).as_deref() == Some("last-generated-id"))
            .and_then(|pair| text(&pair[1]))
            .and_then(|id| StreamId::parse(&id))
            .map(Some)
            .ok_or_else(|| fail("no last-generated-id".into()))
    }
}

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
