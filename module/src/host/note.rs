//! The note of answers in Redis (`ticket:{E}:answered`, a hash; what it
//! means: `pool::note`) and this node's *term*: a random number drawn when
//! the node becomes a primary through a replication role change, zero
//! while it is a replica or was never promoted.
//!
//! The note is read and written with `RedisModule_Call` (`HGET`, `HLEN`,
//! `HSET`, `HDEL`, `DEL`, and `XRANGE` for `TICKET.REAPPLY ... SINCE`):
//! only a promoted primary's answers that log nothing, `TICKET.REAPPLY`
//! and `TICKET.HEALED` touch it, never the claim path of a primary that
//! never failed over. Calls made here are not propagated: the command
//! replicates its effect.

use std::sync::atomic::{AtomicI64, Ordering};

use redis_module::{Context, RedisValue};

use protocol::keys::{answered_key, key, Part, ANSWERED_CLOSED};
use protocol::record::Record;
use protocol::StreamId;

use super::ffi::random_u64;
use super::store::RedisStore;
use crate::error::TicketError;

/// This node's term as a primary promoted by a role change (0: none).
static TERM: AtomicI64 = AtomicI64::new(0);

/// The term, when this node became a primary through a role change (one
/// atomic load: this is on every write command's path).
#[inline]
pub fn term() -> Option<i64> {
    match TERM.load(Ordering::Relaxed) {
        0 => None,
        t => Some(t),
    }
}

/// The replication role changed: a new term as a primary, none as a
/// replica.
pub fn role_changed(now_primary: bool) {
    let term = match now_primary {
        // positive, non-zero: it is written as a decimal number
        true => ((random_u64() >> 1) as i64).max(1),
        false => 0,
    };
    TERM.store(term, Ordering::Relaxed);
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

impl RedisStore<'_> {
    /// Runs a command on the note key; a wrong type is `WRONGTYPE`.
    fn note_call(&self, command: &str, args: &[&str]) -> Result<RedisValue, TicketError> {
        let key = answered_key(self.event);
        let mut all = vec![key.as_str()];
        all.extend_from_slice(args);
        Context::new(self.ctx)
            .call(command, all.as_slice())
            .map_err(|e| match e.to_string().starts_with("WRONGTYPE") {
                true => TicketError::WrongType {
                    key: key.clone(),
                    expected: "hash",
                },
                false => TicketError::Internal(format!("{command} {key}: {e}")),
            })
    }

    pub(super) fn read_note_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        Ok(text_of(&self.note_call("HGET", &[field])?))
    }

    pub(super) fn read_note_len(&mut self) -> Result<i64, TicketError> {
        match self.note_call("HLEN", &[])? {
            RedisValue::Integer(n) => Ok(n),
            other => Err(TicketError::Internal(format!("HLEN answered {other:?}"))),
        }
    }

    pub(super) fn write_note_add(&mut self, fields: &[String]) {
        let mut args: Vec<&str> = Vec::with_capacity(fields.len() * 2);
        for f in fields {
            args.extend([f.as_str(), "1"]);
        }
        // Reads before the write type-checked the key: these cannot fail.
        let _ = self.note_call("HDEL", &[ANSWERED_CLOSED]);
        let _ = self.note_call("HSET", &args);
    }

    pub(super) fn write_note_close(&mut self, term: i64) {
        let _ = self.note_call("DEL", &[]);
        if term != 0 {
            let term = term.to_string();
            let _ = self.note_call("HSET", &[ANSWERED_CLOSED, term.as_str()]);
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
            protocol::record::decode(self.event, &pairs).ok()
        });
        Ok(Some(records.collect()))
    }
}
