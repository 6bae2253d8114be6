//! An event's allocations in Redis (`ticket:{E}:alloc`, a hash; what it
//! holds: `protocol::keys::alloc_key`), through the same side-hash handle
//! as the note of answers. Opened only by events whose meta counts
//! allocations, and by the commands about them: never on a plain claim.

use redis_module::{Context, RedisValue};

use protocol::keys::alloc_key;

use super::ffi::{rstr, HASH_DELETE};
use super::note::SideHash;
use super::store::RedisStore;
use crate::error::TicketError;

impl RedisStore<'_> {
    pub(super) fn read_alloc_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        SideHash::open_named(self, &alloc_key(self.event), false).field(field)
    }

    /// Every field and value (`HGETALL`: at most 64 allocations and their
    /// users' marks).
    pub(super) fn read_alloc_fields(&mut self) -> Result<Vec<(String, String)>, TicketError> {
        self.read_side_fields(&alloc_key(self.event))
    }

    /// Every field and value of a side hash (`HGETALL`; none when absent).
    pub(super) fn read_side_fields(
        &mut self,
        name: &str,
    ) -> Result<Vec<(String, String)>, TicketError> {
        if SideHash::open_named(self, name, false).hash()?.is_none() {
            return Ok(Vec::new());
        }
        let reply = Context::new(self.ctx)
            .call("HGETALL", &[name])
            .map_err(|e| TicketError::Internal(format!("HGETALL {name}: {e}")))?;
        let text = |v: &RedisValue| match v {
            RedisValue::SimpleString(s) | RedisValue::BulkString(s) => s.clone(),
            RedisValue::BulkRedisString(s) => s.to_string_lossy(),
            RedisValue::StringBuffer(b) => String::from_utf8_lossy(b).into_owned(),
            _ => String::new(),
        };
        let items: Vec<String> = match &reply {
            RedisValue::Array(items) => items.iter().map(text).collect(),
            _ => Vec::new(),
        };
        Ok(items
            .chunks_exact(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect())
    }

    pub(super) fn write_alloc_field(&mut self, field: &str, value: Option<&str>) {
        let hash = SideHash::open_named(self, &alloc_key(self.event), true);
        match value {
            Some(value) => {
                let value = rstr(value.as_bytes());
                hash.set(field, value.inner);
            }
            None => hash.set(field, HASH_DELETE),
        }
        hash.signal();
    }

    /// Deletes the allocations with the event's state.
    pub(super) fn delete_allocs(&mut self) -> bool {
        let hash = SideHash::open_named(self, &alloc_key(self.event), true);
        let existed = hash.delete();
        if existed {
            hash.signal();
        }
        existed
    }
}
