//! Small safe wrappers over the Redis module API, used by the rest of
//! `host`: owned strings, zset ranges, multi-field hash reads, and the
//! server-wide calls (clock, pub/sub, context flags, databases, key scans)
//! the command and sweep layers need without touching `unsafe` themselves;
//! and a command's arguments as Redis passed them ([`Argv`]), read in
//! place with no copies (the claim is the hot path, and every command is
//! dispatched the same way).

use std::os::raw::{c_char, c_int, c_void};
use std::ptr;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString};
use redis_module::{Context, RedisString};

use protocol::StreamId;

/// The value that makes `RedisModule_HashSet` delete a field.
pub(crate) const HASH_DELETE: *mut RedisModuleString =
    raw::REDISMODULE_HASH_DELETE as *mut RedisModuleString;

/// Another reference to the live string `s` (Redis strings are
/// reference-counted).
pub(crate) fn retained(s: *mut RedisModuleString) -> RedisString {
    // SAFETY: `s` is live; the new reference is released when the returned
    // string drops.
    unsafe { raw::RedisModule_RetainString.unwrap()(ptr::null_mut(), s) };
    RedisString::from_redis_module_string(ptr::null_mut(), s)
}

/// Whether two strings are the same slice (not merely equal).
pub(crate) fn same(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b)
}

/// A Redis string owned by us (created with no context, freed on drop).
pub(crate) fn rstr(bytes: &[u8]) -> RedisString {
    RedisString::create_from_slice(ptr::null_mut(), bytes)
}

/// A decimal number as a Redis string, formatted without a heap buffer.
pub(crate) fn rnum(n: i64) -> RedisString {
    rstr(itoa::Buffer::new().format(n).as_bytes())
}

/// Takes ownership of a string Redis returned to us (frees it on drop).
pub(crate) fn owned(s: *mut RedisModuleString) -> Option<RedisString> {
    (!s.is_null()).then(|| RedisString::from_redis_module_string(ptr::null_mut(), s))
}

/// Reads a Redis string as an integer.
pub(crate) fn to_i64(s: &RedisString) -> Option<i64> {
    let mut n: i64 = 0;
    // SAFETY: s is a valid string.
    let ok = unsafe { raw::RedisModule_StringToLongLong.unwrap()(s.inner, &mut n) };
    (ok == raw::REDISMODULE_OK as c_int).then_some(n)
}

/// Up to `max` members of a zset with scores up to `highest`, lowest score
/// first, with their scores.
pub(crate) fn zset_range(
    key: *mut RedisModuleKey,
    highest: f64,
    max: usize,
) -> Vec<(RedisString, f64)> {
    let mut found = Vec::new();
    // SAFETY: an open, type-checked zset handle; the range is stopped
    // before returning, and each member returned is owned by us.
    unsafe {
        let first =
            raw::RedisModule_ZsetFirstInScoreRange.unwrap()(key, f64::NEG_INFINITY, highest, 0, 0);
        if first != raw::REDISMODULE_OK as c_int {
            return found;
        }
        while found.len() < max && raw::RedisModule_ZsetRangeEndReached.unwrap()(key) == 0 {
            let mut score = 0.0;
            let member = raw::RedisModule_ZsetRangeCurrentElement.unwrap()(key, &mut score);
            if let Some(member) = owned(member) {
                found.push((member, score));
            }
            if raw::RedisModule_ZsetRangeNext.unwrap()(key) == 0 {
                break;
            }
        }
        raw::RedisModule_ZsetRangeStop.unwrap()(key);
    }
    found
}

/// One `RedisModule_HashGet` call for one to three fields (the C API is
/// variadic, so each arity is spelled out).
pub(crate) fn hash_get_up_to_3(
    key: *mut RedisModuleKey,
    fields: &[*mut RedisModuleString],
    values: &mut [*mut RedisModuleString],
) {
    let flags = raw::REDISMODULE_HASH_NONE as c_int;
    let end = ptr::null::<c_char>();
    // SAFETY: the API table is filled at load; (field, out-pointer) pairs,
    // NULL-terminated; values has one slot per field.
    unsafe {
        let get = raw::RedisModule_HashGet.unwrap();
        match (fields, values) {
            ([f0], [v0]) => get(key, flags, *f0, v0 as *mut _, end),
            ([f0, f1], [v0, v1]) => get(key, flags, *f0, v0 as *mut _, *f1, v1 as *mut _, end),
            ([f0, f1, f2], [v0, v1, v2]) => get(
                key,
                flags,
                *f0,
                v0 as *mut _,
                *f1,
                v1 as *mut _,
                *f2,
                v2 as *mut _,
                end,
            ),
            _ => raw::REDISMODULE_ERR as c_int,
        };
    }
}

/// `<ms>-<seq>` as a Redis string, formatted without a heap buffer.
pub(crate) fn stream_id_string(id: StreamId) -> RedisString {
    let (mut ms, mut seq) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (ms, seq) = (ms.format(id.ms).as_bytes(), seq.format(id.seq).as_bytes());
    let mut buf = [0u8; 41];
    buf[..ms.len()].copy_from_slice(ms);
    buf[ms.len()] = b'-';
    buf[ms.len() + 1..ms.len() + 1 + seq.len()].copy_from_slice(seq);
    rstr(&buf[..ms.len() + 1 + seq.len()])
}

/// Strings made during one call and freed when it returns, kept without a
/// heap allocation for the usual handful. The few are kept as bare pointers
/// so that dropping an unused `Made` (most of them: the user and ticket
/// strings are usually reused) costs next to nothing on the claim path.
pub(crate) struct Made {
    few: [*mut RedisModuleString; 6],
    len: usize,
    more: Vec<RedisString>,
}

impl Default for Made {
    fn default() -> Made {
        Made {
            few: [ptr::null_mut(); 6],
            len: 0,
            more: Vec::new(),
        }
    }
}

impl Made {
    /// Keeps `s` (made with no context, as [`rstr`] makes them) alive and
    /// returns its pointer (to Redis memory, so it stays valid wherever `s`
    /// is kept).
    pub(crate) fn keep(&mut self, s: RedisString) -> *mut RedisModuleString {
        let p = s.inner;
        match self.few.get_mut(self.len) {
            Some(slot) => {
                *slot = p;
                self.len += 1;
                // Freed in `drop`, as the string's own drop would.
                std::mem::forget(s);
            }
            None => self.more.push(s),
        }
        p
    }

    /// Takes `other`'s strings over.
    #[inline]
    pub(crate) fn absorb(&mut self, other: &mut Made) {
        if other.len == 0 {
            return;
        }
        let few = std::mem::replace(&mut other.few, [ptr::null_mut(); 6]);
        let count = std::mem::replace(&mut other.len, 0);
        for s in &few[..count] {
            // Freed by this one's drop, as by the other's.
            self.keep(RedisString::from_redis_module_string(ptr::null_mut(), *s));
        }
        self.more.append(&mut other.more);
    }
}

impl Drop for Made {
    fn drop(&mut self) {
        for s in &self.few[..self.len] {
            // SAFETY: each is a live string made with no context, kept
            // only here, and freed once.
            unsafe { raw::RedisModule_FreeString.unwrap()(ptr::null_mut(), *s) };
        }
    }
}

/// Current unix time in milliseconds, from Redis's clock.
pub fn now_ms() -> i64 {
    // SAFETY: a plain getter with no arguments.
    unsafe { raw::RedisModule_Milliseconds.unwrap()() }
}

/// Writes a warning to the server's log, made legal (`error::legal`) and
/// passed as an argument of `%s`, never as the format itself.
pub(crate) fn log_warning(ctx: *mut RedisModuleCtx, text: &str) {
    let text = crate::error::legal(text);
    // SAFETY: level, format and text are NUL-terminated and live for the
    // call; the format takes exactly the one string given.
    unsafe {
        if let Some(log) = raw::RedisModule_Log {
            log(ctx, c"warning".as_ptr(), c"%s".as_ptr(), text.as_ptr());
        }
    }
}

/// Publishes `message` on `channel`.
pub fn publish(ctx: &Context, channel: &[u8], message: &[u8]) {
    let (channel, message) = (rstr(channel), rstr(message));
    // SAFETY: both strings are live for the call; Redis copies what it sends.
    unsafe { raw::RedisModule_PublishMessage.unwrap()(ctx.ctx, channel.inner, message.inner) };
}

fn context_flags(ctx: *mut RedisModuleCtx) -> c_int {
    // SAFETY: a plain getter on a live context.
    unsafe { raw::RedisModule_GetContextFlags.unwrap()(ctx) }
}

/// Whether writes are paused (`FAILOVER`, `CLIENT PAUSE WRITE`, a cluster
/// manual failover): then nothing may be propagated — Redis 7.0 asserts on
/// it and aborts — and the replicas must catch up with the offset as it is.
pub fn writes_paused() -> bool {
    // SAFETY: a plain getter with no arguments; absent before Redis 6.0.
    unsafe { raw::RedisModule_AvoidReplicaTraffic.is_some_and(|f| f() != 0) }
}

/// Whether this server is a primary.
pub fn is_primary(ctx: &Context) -> bool {
    context_flags(ctx.ctx) & raw::REDISMODULE_CTX_FLAGS_MASTER as c_int != 0
}

/// Whether the server is loading its data (RDB or AOF).
pub fn is_loading(ctx: &Context) -> bool {
    context_flags(ctx.ctx) & raw::REDISMODULE_CTX_FLAGS_LOADING as c_int != 0
}

/// Whether this call comes over the replication link or from the AOF.
pub fn from_primary_or_aof(ctx: &Context) -> bool {
    let allowed =
        (raw::REDISMODULE_CTX_FLAGS_REPLICATED | raw::REDISMODULE_CTX_FLAGS_LOADING) as c_int;
    context_flags(ctx.ctx) & allowed != 0
}

/// Propagates the current command as it was called.
pub fn replicate_verbatim(ctx: &Context) {
    // SAFETY: the live command context.
    unsafe { raw::RedisModule_ReplicateVerbatim.unwrap()(ctx.ctx) };
}

/// Eight random bytes from Redis's own random source.
pub fn random_u64() -> u64 {
    u64::from_le_bytes(random_bytes())
}

/// `N` random bytes from Redis's own random source (SHA-1 in counter mode
/// over a seed from /dev/urandom): a draw's secret seed.
pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    // SAFETY: fills exactly the N bytes it is given.
    unsafe { raw::RedisModule_GetRandomBytes.unwrap()(bytes.as_mut_ptr(), bytes.len()) };
    bytes
}

/// Selects database `db` for the context's next key accesses; false past
/// the last database.
pub fn select_db(ctx: &Context, db: i32) -> bool {
    // SAFETY: the live context; SelectDb fails for a db that does not exist.
    unsafe { raw::RedisModule_SelectDb.unwrap()(ctx.ctx, db) == raw::REDISMODULE_OK as c_int }
}

/// The names of every key of the selected database that `keep` accepts
/// (mapped to what it returns).
pub fn scan_keys(ctx: &Context, keep: fn(&[u8]) -> Option<String>) -> Vec<String> {
    let mut found = Scan {
        keep,
        found: Vec::new(),
        panic: None,
    };
    // SAFETY: the cursor is created and destroyed here; the callback gets
    // `found` back as its private data for the scan's duration.
    unsafe {
        let cursor = raw::RedisModule_ScanCursorCreate.unwrap()();
        let data = (&mut found as *mut Scan).cast::<c_void>();
        while raw::RedisModule_Scan.unwrap()(ctx.ctx, cursor, Some(on_scanned), data) != 0 {}
        raw::RedisModule_ScanCursorDestroy.unwrap()(cursor);
    }
    // Unwound here, past Redis's scan, to the caller's guard.
    if let Some(panic) = found.panic {
        std::panic::resume_unwind(panic);
    }
    found.found
}

struct Scan {
    keep: fn(&[u8]) -> Option<String>,
    found: Vec<String>,
    /// A panic of `keep`, caught before it could unwind into Redis.
    panic: Option<Box<dyn std::any::Any + Send>>,
}

extern "C" fn on_scanned(
    _ctx: *mut RedisModuleCtx,
    name: *mut RedisModuleString,
    _key: *mut RedisModuleKey,
    data: *mut c_void,
) {
    // SAFETY: Redis passes a live key name; `data` is the scan's `Scan`.
    let scan = unsafe { &mut *data.cast::<Scan>() };
    if scan.panic.is_some() {
        return;
    }
    let keep = scan.keep;
    match std::panic::catch_unwind(|| keep(bytes_of(name))) {
        Ok(Some(kept)) => scan.found.push(kept),
        Ok(None) => {}
        Err(panic) => scan.panic = Some(panic),
    }
}

/// The bytes of a Redis string that stays alive and unchanged while they
/// are used (a command's argument, a key name passed to a callback).
pub(crate) fn bytes_of<'a>(s: *mut RedisModuleString) -> &'a [u8] {
    let mut len = 0;
    // SAFETY: the caller passes a live string, unchanged while the bytes are used.
    unsafe {
        let p = raw::RedisModule_StringPtrLen.unwrap()(s, &mut len);
        std::slice::from_raw_parts(p.cast::<u8>(), len)
    }
}

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
