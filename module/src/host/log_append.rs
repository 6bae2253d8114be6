//! The event's log stream (`ticket:{E}:log`): where an entry is appended
//! (`XADD` through the native stream API, at the primary's id on a replica)
//! and the last id it was given, which the next append must exceed.

use std::os::raw::c_int;
use std::ptr;

use redis_module::raw::{self, RedisModuleString};
use redis_module::Context;

use protocol::record::Record;
use protocol::StreamId;

use super::ffi::{rstr, Made};
use super::store::RedisStore;
use super::strings::{self, Part};
use crate::error::TicketError;

impl RedisStore<'_> {
    /// `XADD` of `record` at `id` (or an auto id); returns the id used.
    pub(super) fn append_entry<U: AsRef<str>>(
        &mut self,
        record: &Record<U>,
        id: Option<StreamId>,
    ) -> StreamId {
        self.written[Part::Log as usize] = true;
        let c = strings::constants();
        // Strings made here live until the end of this function.
        let mut made = Made::default();
        let mut argv = [ptr::null_mut::<RedisModuleString>(); 32];
        let mut n = 0;
        self.use_time_string(record.at);
        for (name, value) in record.fields(self.event) {
            argv[n] = c
                .named(name)
                .unwrap_or_else(|| made.keep(rstr(name.as_bytes())));
            argv[n + 1] = self.value_string(value, &mut made);
            n += 2;
        }
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
        // SAFETY: argv holds n/2 field/value pairs; the count is pairs.
        let added = unsafe {
            raw::RedisModule_StreamAdd.unwrap()(
                self.key(Part::Log),
                flags,
                &mut stream_id,
                argv.as_mut_ptr(),
                (n / 2) as i64,
            )
        };
        if added != raw::REDISMODULE_OK as c_int {
            // Only an effect whose id is not above the log's last id gets
            // here: this replica's log differs from its primary's.
            redis_module::Context::new(self.ctx).log_warning(&format!(
                "ticket: {} refused entry {}-{}: this replica's log differs from its primary's",
                self.names.key_string(Part::Log),
                stream_id.ms,
                stream_id.seq
            ));
        }
        StreamId::new(stream_id.ms, stream_id.seq)
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
