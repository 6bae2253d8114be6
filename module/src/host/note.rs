//! The note of answers in Redis (`ticket:{E}:answered`, a hash; what it
//! means: `pool::note`), and the drawing of this node's *term* when a
//! replication role change makes it a primary (kept in `stats`).
//!
//! The note is read and written through the native key API, opened only
//! when needed: by a promoted primary's answers that log nothing,
//! `TICKET.REAPPLY`, `TICKET.HEALED` and the deletion of an event's state,
//! never on the claim path of a primary that never failed over (so a
//! replica applying the effects runs no plain command either). The log
//! after `SINCE` is read with `XRANGE` through `RedisModule_Call` (the
//! primary only, for `TICKET.REAPPLY`). The command replicates its effect.

use std::os::raw::{c_char, c_int};
use std::ptr;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString};
use redis_module::{Context, RedisString, RedisValue};

use protocol::keys::{answered_key, key, Part, ANSWERED_CLOSED};
use protocol::record::Record;
use protocol::StreamId;

use super::ffi::{owned, random_u64, rnum, rstr, HASH_DELETE};
use super::store::RedisStore;
use crate::error::TicketError;

/// The replication role changed: a new term as a primary, none as a
/// replica.
pub fn role_changed(now_primary: bool) {
    let term = match now_primary {
        // positive, non-zero: it is written as a decimal number
        true => ((random_u64() >> 1) as i64).max(1),
        false => 0,
    };
    crate::stats::set_term(term);
}

/// A reply's text, whatever string form Redis gave it.
fn text_of(value: &RedisValue) -> Option<String> {
    match value {
        RedisValue::SimpleString(s) | RedisValue::BulkString(s) => Some(s.clone()),
        RedisValue::BulkRedisString(s) => Some(s.to_string_lossy()),
        RedisValue::StringBuffer(b) => Some(String::from_utf8_lossy(b).into_owned()),
        _ => None,
    }
}

fn bytes_of(value: &RedisValue) -> Vec<u8> {
    match value {
        RedisValue::StringBuffer(b) => b.clone(),
        RedisValue::BulkRedisString(s) => s.as_slice().to_vec(),
        v => text_of(v).unwrap_or_default().into_bytes(),
    }
}

/// A hash of the event beside its [`Part`]s (the note of answers, the
/// allocations), open for one read or write (closed when dropped).
pub(super) struct SideHash {
    ctx: *mut RedisModuleCtx,
    name: RedisString,
    key: *mut RedisModuleKey,
}

impl SideHash {
    fn open(store: &RedisStore<'_>, write: bool) -> SideHash {
        SideHash::open_named(store, &answered_key(store.event), write)
    }

    /// The hash `name` of the event of `store`.
    pub(super) fn open_named(store: &RedisStore<'_>, name: &str, write: bool) -> SideHash {
        let name = rstr(name.as_bytes());
        let mode = match write {
            true => raw::REDISMODULE_READ | raw::REDISMODULE_WRITE,
            false => raw::REDISMODULE_READ,
        } as c_int;
        // SAFETY: the live command context and a live key name; the
        // handle is closed in `drop` (NULL: absent and opened to read).
        let key = unsafe { raw::RedisModule_OpenKey.unwrap()(store.ctx, name.inner, mode) };
        SideHash {
            ctx: store.ctx,
            name,
            key: key.cast::<RedisModuleKey>(),
        }
    }

    /// The open hash, `None` when absent, `WRONGTYPE` for another type.
    pub(super) fn hash(&self) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        if self.key.is_null() {
            return Ok(None);
        }
        // SAFETY: an open handle.
        match raw::KeyType::from(unsafe { raw::RedisModule_KeyType.unwrap()(self.key) }) {
            raw::KeyType::Empty => Ok(None),
            raw::KeyType::Hash => Ok(Some(self.key)),
            _ => Err(TicketError::WrongType {
                key: self.name.to_string_lossy(),
                expected: "hash",
            }),
        }
    }

    /// Sets `field` to `value` (`HASH_DELETE`: removes it).
    pub(super) fn set(&self, field: &str, value: *mut RedisModuleString) {
        let field = rstr(field.as_bytes());
        // SAFETY: a handle opened for writing; one (field, value) pair,
        // NULL-terminated.
        unsafe {
            raw::RedisModule_HashSet.unwrap()(
                self.key,
                raw::REDISMODULE_HASH_NONE as c_int,
                field.inner,
                value,
                ptr::null::<c_char>(),
            );
        }
    }

    /// The value of `field`, if the hash has it.
    pub(super) fn field(&self, field: &str) -> Result<Option<String>, TicketError> {
        let Some(key) = self.hash()? else {
            return Ok(None);
        };
        let field = rstr(field.as_bytes());
        let mut value: *mut RedisModuleString = ptr::null_mut();
        // SAFETY: one (field, out-pointer) pair, NULL-terminated.
        unsafe {
            raw::RedisModule_HashGet.unwrap()(
                key,
                raw::REDISMODULE_HASH_NONE as c_int,
                field.inner,
                &mut value as *mut *mut RedisModuleString,
                ptr::null::<c_char>(),
            );
        }
        Ok(owned(value).map(|v| v.to_string_lossy()))
    }

    /// Deletes the hash; whether it existed.
    pub(super) fn delete(&self) -> bool {
        let existed = matches!(self.hash(), Ok(Some(_)));
        if existed {
            // SAFETY: a handle opened for writing.
            unsafe { raw::RedisModule_DeleteKey.unwrap()(self.key) };
        }
        existed
    }

    /// For WATCH and client tracking (the module signals keys itself).
    pub(super) fn signal(&self) {
        // SAFETY: the live command context and a live key name.
        unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx, self.name.inner) };
    }
}

impl Drop for SideHash {
    fn drop(&mut self) {
        if !self.key.is_null() {
            // SAFETY: opened once in `open`, closed once here.
            unsafe { raw::RedisModule_CloseKey.unwrap()(self.key) };
        }
    }
}

impl RedisStore<'_> {
    pub(super) fn read_note_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        SideHash::open(self, false).field(field)
    }

    pub(super) fn read_note_len(&mut self) -> Result<i64, TicketError> {
        let note = SideHash::open(self, false);
        Ok(match note.hash()? {
            // SAFETY: an open, type-checked handle.
            Some(key) => (unsafe { raw::RedisModule_ValueLength.unwrap()(key) }) as i64,
            None => 0,
        })
    }

    pub(super) fn write_note_add(&mut self, fields: &[String]) {
        let note = SideHash::open(self, true);
        // Reads before the write type-checked the key.
        let one = rstr(b"1");
        note.set(ANSWERED_CLOSED, HASH_DELETE);
        fields.iter().for_each(|f| note.set(f, one.inner));
        note.signal();
    }

    pub(super) fn write_note_close(&mut self, term: i64) {
        let note = SideHash::open(self, true);
        let existed = note.delete();
        if term != 0 {
            let term = rnum(term);
            note.set(ANSWERED_CLOSED, term.inner);
        }
        if existed || term != 0 {
            note.signal();
        }
    }

    /// `XRANGE` of the log after `since`, decoded; `None` beyond `max`.
    pub(super) fn read_log_since(
        &mut self,
        since: StreamId,
        max: usize,
    ) -> Result<Option<Vec<Record>>, TicketError> {
        let log = key(self.event, Part::Log);
        let (from, count) = (format!("({since}"), (max + 1).to_string());
        let args = [log.as_str(), from.as_str(), "+", "COUNT", count.as_str()];
        let reply = Context::new(self.ctx)
            .call("XRANGE", &args[..])
            .map_err(|e| TicketError::Internal(format!("XRANGE {log}: {e}")))?;
        let RedisValue::Array(entries) = reply else {
            return Ok(Some(Vec::new()));
        };
        if entries.len() > max {
            return Ok(None);
        }
        let records = entries.iter().filter_map(|entry| {
            let RedisValue::Array(parts) = entry else {
                return None;
            };
            let RedisValue::Array(fields) = parts.get(1)? else {
                return None;
            };
            let pairs: Vec<(Vec<u8>, Vec<u8>)> = fields
                .chunks_exact(2)
                .map(|p| (bytes_of(&p[0]), bytes_of(&p[1])))
                .collect();
            let id = parts.first().map(bytes_of);
            let id = id.as_deref().and_then(|id| std::str::from_utf8(id).ok());
            protocol::record::decode_entry(self.event, id.and_then(StreamId::parse), &pairs).ok()
        });
        Ok(Some(records.collect()))
    }
}
