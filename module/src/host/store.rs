//! [`Store`] over an event's Redis keys, through the native key API: the
//! open key handles of one event for one command, the strings it reuses,
//! and the reads and writes every claim makes: the meta through its
//! cached copy, `minted`, the holders hash (kept here so a claim's walk
//! stays short). The other reads and writes are in `keys` (pool, holds,
//! waiting list, wants) and `meta` (the rest of the meta hash); the log
//! entry and its replicated effect are in `log`.
//!
//! Reads check each key's type first, and the pool logic reads everything
//! before its first write, so a wrong type is an error that changes nothing.
//!
//! The claim path is dominated by allocation (Redis's own and ours), so this
//! layer avoids it: key names and constant field names are Redis strings made
//! once and reused (`strings`), the user id is the command's own argument
//! string, and one ticket-number string serves `ZREM`, `HSET`, `XADD` and
//! the effect.

use std::ops::RangeInclusive;
use std::os::raw::{c_char, c_int};
use std::ptr;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString};
use redis_module::{Context, RedisString};

use protocol::record::{parse_tickets, Record, Tickets, Value};
use protocol::StreamId;

use super::cache::{self, expected_type, EventStrings, Part, PARTS};
use super::ffi::{
    owned, retained, rnum, rstr, same, stream_id_string, to_i64, zset_range, Made, HASH_DELETE,
};
use crate::error::TicketError;
use crate::pool::store::After;
use crate::pool::{Meta, MetaWrite, Scope, Set, Staging, Store};
use crate::stats;

/// How a command opens the event's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

thread_local! {
    /// The last log time made into a string (commands run on the main
    /// thread only). Redis strings are reference-counted and never changed
    /// once made, so commands can share it.
    static LAST_TIME: std::cell::RefCell<Option<(i64, RedisString)>> =
        const { std::cell::RefCell::new(None) };
}

// `RedisStore::open` writes the key handles out in this order.
const _: () = assert!(
    Part::Meta as usize == 0
        && Part::Pool as usize == 1
        && Part::Holders as usize == 2
        && Part::Log as usize == 3
        && PARTS.len() == 8
);

/// Most strings of a compact entry: its op and user, its tickets, `until`,
/// the four seat fields and `at`.
const COMPACT_ARGS: usize = 16;

/// A compact entry as appended: its id and the field/value strings it was
/// appended with (those made for it kept with the store's retired
/// strings), which its effect carries too (versions 2 and 3), so
/// replicating it builds no second set.
pub(crate) struct LoggedEntry {
    pub id: StreamId,
    pub argv: [*mut RedisModuleString; COMPACT_ARGS],
    pub len: usize,
}

impl LoggedEntry {
    /// The entry appended at `id` with `strings`, if a compact one's
    /// strings fit.
    pub(super) fn new(id: StreamId, strings: &[*mut RedisModuleString]) -> Option<LoggedEntry> {
        let mut argv = [ptr::null_mut(); COMPACT_ARGS];
        let slots = argv.get_mut(..strings.len())?;
        // Element by element: a copy of a length known only at run time
        // is a call to memcpy.
        for (slot, s) in slots.iter_mut().zip(strings) {
            *slot = *s;
        }
        Some(LoggedEntry {
            id,
            argv,
            len: strings.len(),
        })
    }
}

/// The open keys of one event for the duration of one command.
pub struct RedisStore<'a> {
    pub(super) ctx: *mut RedisModuleCtx,
    pub(super) db: i32,
    pub(super) event: &'a str,
    pub(super) names: EventStrings,
    /// Key handles by [`Part`]; the holds, waiting and wants keys are
    /// opened on first use, so the plain claim path does not pay for them.
    pub(super) keys: [*mut RedisModuleKey; PARTS.len()],
    pub(super) mode: c_int,
    pub(super) opened: [bool; PARTS.len()],
    /// The meta cache says the pool key is absent (until this command adds
    /// to it): the pool is then not opened at all.
    pub(super) pool_absent: bool,
    /// The user id argument, reused as hash field and stream value.
    pub(super) user: Option<(&'a str, *mut RedisModuleString)>,
    /// The last two numbers made into strings (a ticket number, the log
    /// entry's time), reused by the next writes and the effect.
    pub(super) numbers: [Option<(i64, RedisString)>; 2],
    /// Which slot of `numbers` the next new number replaces.
    pub(super) next_number: usize,
    /// Strings pushed out of `numbers`, kept alive until the command ends
    /// because pointers to them may still be in use.
    pub(super) retired: Made,

    /// The last compact entry this command appended, with the strings it
    /// was appended with: its effect carries the same ones.
    pub(super) logged: Option<LoggedEntry>,

    /// Keys written by this command, signalled as modified (for WATCH and
    /// client tracking) when the command ends; the module turns Redis's
    /// implicit signal off so that no-op commands signal nothing.
    pub(super) written: [bool; PARTS.len()],
}

impl<'a> RedisStore<'a> {
    /// Opens the event's keys. `user` is the command's user argument, if any.
    pub fn open(
        ctx: &Context,
        event: &'a str,
        access: Access,
        user: Option<(&'a str, *mut RedisModuleString)>,
    ) -> RedisStore<'a> {
        let mode = match access {
            Access::Read => raw::REDISMODULE_READ,
            Access::Write => raw::REDISMODULE_READ | raw::REDISMODULE_WRITE,
        } as c_int;
        let names = cache::event_strings(event);
        // SAFETY: ctx is the live command context; the names are kept alive
        // by the cache for longer than the handles.
        let open = |part: Part| unsafe {
            raw::RedisModule_OpenKey.unwrap()(ctx.ctx, names.key(part), mode)
                .cast::<RedisModuleKey>()
        };
        // In the order of `Part`'s discriminants, written out: the claim
        // path opens exactly these three, and the pool when the meta cache
        // does not know it absent, with no loop over the lazy ones.
        let lazy = ptr::null_mut();
        let keys = [
            open(Part::Meta),
            lazy,
            open(Part::Holders),
            open(Part::Log),
            lazy,
            lazy,
            lazy,
            lazy,
        ];
        RedisStore {
            ctx: ctx.ctx,
            // SAFETY: a plain getter on the live context.
            db: unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx.ctx) },
            event,
            names,
            keys,
            mode,
            opened: [true, false, true, true, false, false, false, false],
            pool_absent: false,
            user,
            numbers: [None, None],
            next_number: 0,
            retired: Made::default(),
            logged: None,
            written: [false; PARTS.len()],
        }
    }

    /// The holds key's handle, opened on first use (null when it does not
    /// exist and the store only reads).
    pub(super) fn holds(&mut self) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        self.lazy(Part::Holds)
    }

    /// The handle of a key opened on first use (null when it does not exist
    /// and the store only reads).
    pub(super) fn lazy(&mut self, part: Part) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        if !self.opened[part as usize] {
            if part == Part::Pool && self.pool_absent {
                return Ok(None);
            }
            self.open_part(part);
        }
        let key = self.existing(part);
        if part == Part::Pool && matches!(key, Ok(None)) && !self.pool_absent {
            self.pool_absent = true;
            self.names.meta().set_pool_absent(self.db, true);
        }
        key
    }

    /// Opens `part`'s key, which is not open yet.
    fn open_part(&mut self, part: Part) {
        self.opened[part as usize] = true;
        // SAFETY: the live command context and a live key name.
        self.keys[part as usize] = unsafe {
            raw::RedisModule_OpenKey.unwrap()(self.ctx, self.names.key(part), self.mode)
                .cast::<RedisModuleKey>()
        };
    }

    /// Opens the pool key to add to it (the meta cache no longer knows it
    /// absent).
    pub(super) fn open_pool_to_add(&mut self) {
        if !self.opened[Part::Pool as usize] {
            self.open_part(Part::Pool);
        }
        self.pool_absent = false;
        self.names.meta().set_pool_absent(self.db, false);
    }

    /// The score of `user` in a lazily opened zset (holds or waiting).
    pub(super) fn user_score(
        &mut self,
        part: Part,
        user: &str,
    ) -> Result<Option<i64>, TicketError> {
        let Some(key) = self.lazy(part)? else {
            return Ok(None);
        };
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        let mut score = 0.0;
        // SAFETY: an open, type-checked zset handle and a live member.
        let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(key, member, &mut score) };
        Ok((found == raw::REDISMODULE_OK as c_int).then_some(score as i64))
    }

    /// The earliest deadline of the event's held orders and of its
    /// allocations' releases, if any.
    pub fn next_deadline(&mut self) -> Option<i64> {
        let release = match self.cached_meta() {
            Ok(Some(meta)) if meta.allocs.release_at > 0 => Some(meta.allocs.release_at),
            _ => None,
        };
        let hold = self.holds().ok().flatten().and_then(|key| {
            zset_range(key, f64::INFINITY, 1)
                .first()
                .map(|(_, score)| *score as i64)
        });
        match (hold, release) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Parses a holders value: `n` or `a,b,c`.
    pub(super) fn tickets_of(&self, value: &RedisString) -> Result<Tickets, TicketError> {
        if let Some(n) = to_i64(value) {
            return Ok(Tickets::One(n));
        }
        std::str::from_utf8(value.as_slice())
            .ok()
            .and_then(parse_tickets)
            .ok_or_else(|| self.corrupt(Part::Holders, "holds a value that is not ticket numbers"))
    }

    /// The key handle when the key exists and has the right type; `None`
    /// when it does not exist; an error when it holds another type.
    pub(super) fn existing(&self, part: Part) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        let key = self.keys[part as usize];
        if key.is_null() {
            return Ok(None);
        }
        // SAFETY: key is an open handle owned by self.
        let found = raw::KeyType::from(unsafe { raw::RedisModule_KeyType.unwrap()(key) });
        let (want, expected) = expected_type(part);
        match found {
            raw::KeyType::Empty => Ok(None),
            t if t == want => Ok(Some(key)),
            _ => Err(TicketError::WrongType {
                key: self.names.key_string(part),
                expected,
            }),
        }
    }

    pub(super) fn len_of(&self, part: Part) -> Result<i64, TicketError> {
        Ok(match self.existing(part)? {
            // SAFETY: an open, type-checked handle.
            Some(key) => (unsafe { raw::RedisModule_ValueLength.unwrap()(key) }) as i64,
            None => 0,
        })
    }

    pub(super) fn key(&self, part: Part) -> *mut RedisModuleKey {
        self.keys[part as usize]
    }

    pub(super) fn corrupt(&self, part: Part, what: &str) -> TicketError {
        TicketError::Corrupt(format!("{} {what}", self.names.key_string(part)))
    }

    /// The user argument's own string, when `user` is that argument.
    pub(super) fn known_user(&self, user: &str) -> Option<*mut RedisModuleString> {
        self.user
            .filter(|(arg, _)| same(arg, user) || *arg == user)
            .map(|(_, s)| s)
    }

    /// A string for `user`: the argument's own, or a new one kept in `made`.
    pub(super) fn user_string(&self, user: &str, made: &mut Made) -> *mut RedisModuleString {
        self.known_user(user)
            .unwrap_or_else(|| made.keep(rstr(user.as_bytes())))
    }

    /// A string for number `n`: a constant when it is small, else made at
    /// most once per command.
    pub(super) fn number_string(&mut self, n: i64) -> *mut RedisModuleString {
        if let Some(constant) = cache::constants().number(n) {
            return constant;
        }
        let cached = self.numbers.iter().flatten().find(|(c, _)| *c == n);
        match cached {
            Some((_, s)) => s.inner,
            None => self.remember_number(n, rnum(n)),
        }
    }

    /// Makes the string of log time `at` the one this command uses (for the
    /// entry and its effect), shared with the commands before it in the same
    /// millisecond: a burst logs hundreds of claims per millisecond.
    pub(super) fn use_time_string(&mut self, at: i64) {
        if self.numbers.iter().flatten().any(|(n, _)| *n == at) {
            return;
        }
        let shared = self.time_string(at);
        // The numbers hold a reference of their own.
        self.remember_number(at, retained(shared));
    }

    /// The string of log time `at`, shared with the commands before it in
    /// the same millisecond, without a reference of this command's own: it
    /// stays valid while the store is open, because a string the cache
    /// lets go of meanwhile is kept with the retired ones.
    pub(super) fn time_string(&mut self, at: i64) -> *mut RedisModuleString {
        LAST_TIME.with(|last| {
            let mut last = last.borrow_mut();
            match last.as_ref() {
                Some((n, s)) if *n == at => s.inner,
                _ => {
                    let made = rnum(at);
                    let inner = made.inner;
                    if let Some((_, old)) = last.replace((at, made)) {
                        self.retired.keep(old);
                    }
                    inner
                }
            }
        })
    }

    /// Keeps `s`, the string of `n`, for the next writes that need it.
    pub(super) fn remember_number(&mut self, n: i64, s: RedisString) -> *mut RedisModuleString {
        let slot = self.next_number;
        self.next_number = 1 - slot;
        if let Some((_, old)) = self.numbers[slot].replace((n, s)) {
            self.retired.keep(old);
        }
        self.numbers[slot]
            .as_ref()
            .map_or(ptr::null_mut(), |(_, s)| s.inner)
    }

    /// Sets hash fields (field/value string pairs; a [`HASH_DELETE`] value
    /// deletes the field).
    pub(super) fn hash_set(&mut self, part: Part, pairs: &[*mut RedisModuleString]) {
        self.written[part as usize] = true;
        for pair in pairs.chunks_exact(2) {
            // SAFETY: one (field, value) pair, NULL-terminated.
            unsafe {
                raw::RedisModule_HashSet.unwrap()(
                    self.key(part),
                    raw::REDISMODULE_HASH_NONE as c_int,
                    pair[0],
                    pair[1],
                    ptr::null::<c_char>(),
                );
            }
        }
    }

    /// Adds (or moves) `member` at `score` in a zset opened for writing.
    pub(super) fn zset_add(&mut self, part: Part, score: f64, member: *mut RedisModuleString) {
        self.written[part as usize] = true;
        let mut flags: c_int = 0;
        // SAFETY: an open zset (or empty) handle opened for writing.
        unsafe { raw::RedisModule_ZsetAdd.unwrap()(self.key(part), score, member, &mut flags) };
    }

    /// Removes `member` from a zset; returns whether it was there.
    pub(super) fn zset_rem(&mut self, part: Part, member: *mut RedisModuleString) -> bool {
        self.written[part as usize] = true;
        let mut deleted: c_int = 0;
        // SAFETY: an open, type-checked zset handle.
        unsafe { raw::RedisModule_ZsetRem.unwrap()(self.key(part), member, &mut deleted) };
        deleted != 0
    }

    /// The string for one value of a log entry or an effect: the event's,
    /// a constant's, the user argument's, the cached ticket number's, or a
    /// new one kept in `made`.
    pub(super) fn value_string(&mut self, value: Value, made: &mut Made) -> *mut RedisModuleString {
        match value {
            // The user and the event are usually the very strings this store
            // was opened with, so compare addresses before contents.
            Value::Text(s) if self.user.is_some_and(|(u, _)| same(s, u)) => {
                self.user_string(s, made)
            }
            Value::Text(s) if same(s, self.event) || s == self.event => self.names.event(),
            Value::Text(s) => match cache::constants().named(s) {
                Some(p) => p,
                None => self.user_string(s, made),
            },
            Value::Number(n) => self.number_string(n),
            Value::Id(id) => made.keep(stream_id_string(id)),
            Value::List(_) | Value::Hex(_) | Value::Bytes(_) | Value::Range(..) => {
                made.keep(rstr(value.to_string().as_bytes()))
            }
        }
    }

    /// Deletes one of the event's keys if it exists (unlinked where the
    /// server can: a big holders hash or log is freed in the background);
    /// returns whether it existed.
    pub(super) fn delete_key(&mut self, part: Part) -> bool {
        let Ok(Some(key)) = self.existing(part) else {
            return false;
        };
        // SAFETY: an open handle opened for writing; UnlinkKey exists from 7.0.
        unsafe {
            match raw::RedisModule_UnlinkKey {
                Some(unlink) => unlink(key),
                None => raw::RedisModule_DeleteKey.unwrap()(key),
            };
        }
        self.written[part as usize] = true;
        true
    }
}

impl Drop for RedisStore<'_> {
    fn drop(&mut self) {
        for part in PARTS.into_iter().filter(|p| self.written[*p as usize]) {
            // SAFETY: the live command context and a live key name.
            unsafe { raw::RedisModule_SignalModifiedKey.unwrap()(self.ctx, self.names.key(part)) };
        }
        for key in self.keys {
            if !key.is_null() {
                // SAFETY: each handle was opened once and is closed once.
                unsafe { raw::RedisModule_CloseKey.unwrap()(key) };
            }
        }
    }
}

impl<'a> RedisStore<'a> {
    /// The database the keys are in.
    pub fn db(&self) -> i32 {
        self.db
    }

    /// The event the keys are of.
    pub fn event(&self) -> &'a str {
        self.event
    }

    /// Opens a lazily opened key (holds, waiting) if not open yet.
    #[inline]
    fn ensure_open(&mut self, part: Part) {
        if !self.opened[part as usize] {
            let _ = self.lazy(part);
        }
    }

    /// The user's tickets from the holders hash.
    pub(super) fn read_holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        match self.user_field(Part::Holders, user)? {
            None => Ok(None),
            Some(v) => self.tickets_of(&v).map(Some),
        }
    }

    /// The user's field of a hash keyed by user (holders, wants).
    pub(super) fn user_field(
        &mut self,
        part: Part,
        user: &str,
    ) -> Result<Option<redis_module::RedisString>, TicketError> {
        let Some(key) = self.existing(part)? else {
            return Ok(None);
        };
        let mut made = Made::default();
        let field_ptr = self.user_string(user, &mut made);
        let mut value: *mut RedisModuleString = ptr::null_mut();
        // SAFETY: one (field, out-pointer) pair, NULL-terminated.
        unsafe {
            raw::RedisModule_HashGet.unwrap()(
                key,
                raw::REDISMODULE_HASH_NONE as c_int,
                field_ptr,
                &mut value as *mut *mut RedisModuleString,
                ptr::null::<c_char>(),
            );
        }
        Ok(owned(value))
    }

    pub(super) fn write_holder(&mut self, user: &str, tickets: &Tickets) {
        let mut made = Made::default();
        let value = match tickets {
            Tickets::One(ticket) => self.number_string(*ticket),
            many => made.keep(rstr(many.value().to_string().as_bytes())),
        };
        let field_ptr = self.user_string(user, &mut made);
        self.hash_set(Part::Holders, &[field_ptr, value]);
    }

    pub(super) fn remove_holder(&mut self, user: &str) {
        let mut made = Made::default();
        let field_ptr = self.user_string(user, &mut made);
        self.hash_set(Part::Holders, &[field_ptr, HASH_DELETE]);
    }

    /// The meta, from the cache or else from its key (then cached).
    pub(super) fn cached_meta(&mut self) -> Result<Option<Meta>, TicketError> {
        if let Some(entry) = self.names.meta().get(self.db) {
            self.pool_absent |= entry.pool_absent;
            return Ok(Some(entry.meta));
        }
        stats::META_CACHE_MISSES.bump();
        let meta = self.read_meta()?;
        if let Some(meta) = &meta {
            self.names.meta().put(self.db, meta.clone());
        }
        Ok(meta)
    }

    pub(super) fn set_minted(&mut self, minted: i64) {
        self.names.meta().update(self.db, |m| m.minted = minted);
        // With a chunk of 1 this is also the ticket: one string for both.
        let value = self.number_string(minted);
        self.hash_set(Part::Meta, &[cache::constants().minted, value]);
    }
}

impl Store for RedisStore<'_> {
    #[inline]
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        self.cached_meta()
    }

    #[inline]
    fn listed(&mut self) -> u32 {
        match self.names.meta().read(self.db, |meta| meta.listed) {
            Some(listed) => listed,
            None => self.cached_meta().ok().flatten().map_or(0, |m| m.listed),
        }
    }

    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        self.read_staging()
    }

    #[inline]
    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        self.read_holder(user)
    }

    fn score(&mut self, set: Set, user: &str) -> Result<Option<i64>, TicketError> {
        self.user_score(part_of(set), user)
    }

    fn lowest(
        &mut self,
        set: Set,
        highest: i64,
        max: usize,
    ) -> Result<Vec<(String, i64)>, TicketError> {
        let Some(key) = self.lazy(part_of(set))? else {
            return Ok(Vec::new());
        };
        let highest = match highest {
            i64::MAX => f64::INFINITY,
            n => n as f64,
        };
        let members = zset_range(key, highest, max);
        Ok(members
            .iter()
            .map(|(member, score)| (member.to_string_lossy(), *score as i64))
            .collect())
    }

    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.rank_in_waiting(user)
    }

    fn wants(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.read_wants(user)
    }

    fn set_wants(&mut self, user: &str, count: Option<i64>) {
        self.write_wants(user, count)
    }

    #[inline]
    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        self.first_free()
    }

    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        self.first_free_n(n)
    }

    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        match self.cached_meta()? {
            Some(meta) if meta.seated => self.seat_free(ticket),
            _ => self.in_pool(ticket),
        }
    }

    fn seating<T>(
        &mut self,
        f: impl FnOnce(&protocol::seats::Layout, &protocol::seats::SeatState) -> T,
    ) -> Result<Option<T>, TicketError> {
        self.with_seating(f)
    }

    fn layout_json(&mut self) -> Result<Option<String>, TicketError> {
        self.read_layout()
    }

    fn create_seating(&mut self, layout: &str) {
        self.write_seating(layout)
    }

    fn set_seats(&mut self, ids: &[i64], seat: protocol::seats::Seat) {
        self.write_seats(ids, seat)
    }

    #[inline]
    fn len(&mut self, part: Part) -> Result<i64, TicketError> {
        self.ensure_open(part);
        self.len_of(part)
    }

    #[inline]
    fn exists(&mut self, part: Part) -> Result<bool, TicketError> {
        self.ensure_open(part);
        Ok(self.existing(part)?.is_some())
    }

    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
        self.read_last_log_id()
    }

    fn log_since(
        &mut self,
        since: StreamId,
        max: usize,
    ) -> Result<Option<Vec<Record>>, TicketError> {
        self.read_log_since(since, max)
    }

    fn note_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        self.read_note_field(field)
    }

    fn note_len(&mut self) -> Result<i64, TicketError> {
        self.read_note_len()
    }

    fn alloc_field(&mut self, field: &str) -> Result<Option<String>, TicketError> {
        self.read_alloc_field(field)
    }

    fn alloc_fields(&mut self) -> Result<Vec<(String, String)>, TicketError> {
        self.read_alloc_fields()
    }

    fn after_field(&mut self, hash: After, ticket: i64) -> Result<Option<String>, TicketError> {
        self.read_after_field(hash, ticket)
    }

    fn set_after_field(&mut self, hash: After, ticket: i64, value: Option<&str>) {
        self.write_after_field(hash, ticket, value)
    }

    fn after_fields(&mut self, hash: After) -> Result<Vec<(i64, String)>, TicketError> {
        let mut fields = self.read_after_fields(hash)?;
        fields.sort_unstable_by_key(|(ticket, _)| *ticket);
        Ok(fields)
    }

    fn set_alloc_field(&mut self, field: &str, value: Option<&str>) {
        self.write_alloc_field(field, value)
    }

    #[inline]
    fn write_meta(&mut self, write: MetaWrite<'_>) {
        match write {
            MetaWrite::Create { meta, created_at } => self.create_meta(meta, created_at),
            MetaWrite::Status(status) => self.set_status(status),
            MetaWrite::Minted(minted) => self.set_minted(minted),
            MetaWrite::AddCounts { held, extra } => self.add_counts(held, extra),
            MetaWrite::RaiseWaitSeq(seq) => self.raise_waitseq(seq),
            MetaWrite::Staging(staging) => self.set_staging(staging),
            MetaWrite::AddStagedSum(sum) => self.add_staged_sum(sum),
            MetaWrite::ClearStaging => self.clear_staging(),
            MetaWrite::Drawn(at) => self.set_drawn(at),
            MetaWrite::Admitted { second, used } => self.set_admitted(second, used),
            MetaWrite::Allocs(allocs) => self.set_allocs(allocs),
            MetaWrite::AddListed(n) => self.add_listed(n),
        }
    }

    #[inline]
    fn set_holder(&mut self, user: &str, tickets: Option<&Tickets>) {
        match tickets {
            Some(tickets) => self.write_holder(user, tickets),
            None => self.remove_holder(user),
        }
    }

    #[inline]
    fn set_score(&mut self, set: Set, user: &str, score: Option<i64>) -> bool {
        match score {
            Some(score) => {
                self.add_member(part_of(set), user, score);
                true
            }
            None => self.remove_member(part_of(set), user),
        }
    }

    #[inline]
    fn set_free(&mut self, numbers: RangeInclusive<i64>, free: bool) {
        match free {
            true => self.add_free(numbers),
            false => numbers.for_each(|n| self.take_free(n)),
        }
    }

    #[inline]
    fn append<U: AsRef<str>>(&mut self, record: &Record<U>, id: Option<StreamId>) -> StreamId {
        self.append_entry(record, id)
    }

    fn delete(&mut self, scope: Scope) -> i64 {
        match scope {
            Scope::State => {
                self.write_note_close(0);
                let allocs = i64::from(self.delete_allocs()) + self.delete_after();
                self.delete_state() + allocs
            }
            Scope::Log => i64::from(self.delete_key(Part::Log)),
        }
    }

    fn note_add(&mut self, fields: &[String]) {
        self.write_note_add(fields)
    }

    fn note_close(&mut self, term: i64) {
        self.write_note_close(term)
    }
}

/// The key of a user-scored set.
fn part_of(set: Set) -> Part {
    match set {
        Set::Holds => Part::Holds,
        Set::Waiting => Part::Waiting,
    }
}
