//! [`Store`] over an event's Redis keys, through the native key API.
//!
//! Writes replicate nothing themselves: a command's whole state change goes
//! to replicas and the AOF as one `TICKET._APPLY` effect ([`Store::replicate`],
//! one `RedisModule_Replicate` call, so Redis wraps nothing in
//! `MULTI`/`EXEC`), which the replica applies with the same code at the
//! primary's stream id. Reads check each key's type first, and the pool
//! logic reads everything before its first write, so a wrong type is an
//! error that changes nothing.
//!
//! The claim path is dominated by allocation (Redis's own and ours), so this
//! file avoids it: key names and constant field names are Redis strings made
//! once and reused (`strings`), the user id is the command's own argument
//! string, and one ticket-number string serves `ZREM`, `HSET`, `XADD` and
//! the effect.

use std::ops::RangeInclusive;
use std::os::raw::{c_char, c_int};
use std::ptr;

use redis_module::raw::{self, RedisModuleCtx, RedisModuleKey, RedisModuleString};
use redis_module::{Context, RedisString};

use protocol::effect::Effect;
use protocol::record::{parse_tickets, Incarnation, Op, Record, Tickets, Value};
use protocol::StreamId;

use crate::error::TicketError;
use crate::pool::{Meta, Staging, Status, Store};
use crate::strings::{self, expected_type, EventStrings, Part, PARTS};
use crate::{expiry, meta_cache, stats};

/// `TICKET._APPLY` (protocol::effect::APPLY_COMMAND) for `RedisModule_Replicate`.
const APPLY_C: &std::ffi::CStr = c"TICKET._APPLY";

/// The value that makes `RedisModule_HashSet` delete a field.
const HASH_DELETE: *mut RedisModuleString = raw::REDISMODULE_HASH_DELETE as *mut RedisModuleString;

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

/// Another reference to `s` (Redis strings are reference-counted).
fn retained(s: &RedisString) -> RedisString {
    // SAFETY: `s` is live; the new reference is released when the returned
    // string drops.
    unsafe { raw::RedisModule_RetainString.unwrap()(ptr::null_mut(), s.inner) };
    RedisString::from_redis_module_string(ptr::null_mut(), s.inner)
}

/// Whether two strings are the same slice (not merely equal).
fn same(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b)
}

/// A Redis string owned by us (created with no context, freed on drop).
fn rstr(bytes: &[u8]) -> RedisString {
    RedisString::create_from_slice(ptr::null_mut(), bytes)
}

/// A decimal number as a Redis string, formatted without a heap buffer.
fn rnum(n: i64) -> RedisString {
    rstr(itoa::Buffer::new().format(n).as_bytes())
}

/// Takes ownership of a string Redis returned to us (frees it on drop).
fn owned(s: *mut RedisModuleString) -> Option<RedisString> {
    (!s.is_null()).then(|| RedisString::from_redis_module_string(ptr::null_mut(), s))
}

/// Reads a Redis string as an integer.
fn to_i64(s: &RedisString) -> Option<i64> {
    let mut n: i64 = 0;
    // SAFETY: s is a valid string.
    let ok = unsafe { raw::RedisModule_StringToLongLong.unwrap()(s.inner, &mut n) };
    (ok == raw::REDISMODULE_OK as c_int).then_some(n)
}

/// The open keys of one event for the duration of one command.
pub struct RedisStore<'a> {
    ctx: *mut RedisModuleCtx,
    db: i32,
    event: &'a str,
    names: EventStrings,
    /// Key handles by [`Part`]; the holds and waiting keys are opened on
    /// first use, so the plain claim path does not pay for them.
    keys: [*mut RedisModuleKey; PARTS.len()],
    mode: c_int,
    opened: [bool; PARTS.len()],
    /// The user id argument, reused as hash field and stream value.
    user: Option<(&'a str, *mut RedisModuleString)>,
    /// The last two numbers made into strings (a ticket number, the log
    /// entry's time), reused by the next writes and the effect.
    numbers: [Option<(i64, RedisString)>; 2],
    /// Which slot of `numbers` the next new number replaces.
    next_number: usize,
    /// Strings pushed out of `numbers`, kept alive until the command ends
    /// because pointers to them may still be in use.
    retired: Vec<RedisString>,

    /// Keys written by this command, signalled as modified (for WATCH and
    /// client tracking) when the command ends; the module turns Redis's
    /// implicit signal off so that no-op commands signal nothing.
    written: [bool; PARTS.len()],
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
        let names = strings::event_strings(event);
        // SAFETY: ctx is the live command context; the names are kept alive
        // by the cache for longer than the handles.
        let keys = PARTS.map(|part| match part {
            Part::Holds | Part::Waiting => ptr::null_mut(),
            _ => unsafe {
                raw::RedisModule_OpenKey.unwrap()(ctx.ctx, names.key(part), mode)
                    .cast::<RedisModuleKey>()
            },
        });
        RedisStore {
            ctx: ctx.ctx,
            // SAFETY: a plain getter on the live context.
            db: unsafe { raw::RedisModule_GetSelectedDb.unwrap()(ctx.ctx) },
            event,
            names,
            keys,
            mode,
            opened: PARTS.map(|part| !matches!(part, Part::Holds | Part::Waiting)),
            user,
            numbers: [None, None],
            next_number: 0,
            retired: Vec::new(),
            written: [false; PARTS.len()],
        }
    }

    /// The holds key's handle, opened on first use (null when it does not
    /// exist and the store only reads).
    fn holds(&mut self) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        self.lazy(Part::Holds)
    }

    /// The handle of a key opened on first use (null when it does not exist
    /// and the store only reads).
    fn lazy(&mut self, part: Part) -> Result<Option<*mut RedisModuleKey>, TicketError> {
        if !self.opened[part as usize] {
            self.opened[part as usize] = true;
            // SAFETY: the live command context and a live key name.
            self.keys[part as usize] = unsafe {
                raw::RedisModule_OpenKey.unwrap()(self.ctx, self.names.key(part), self.mode)
                    .cast::<RedisModuleKey>()
            };
        }
        self.existing(part)
    }

    /// The score of `user` in a lazily opened zset (holds or waiting).
    fn user_score(&mut self, part: Part, user: &str) -> Result<Option<i64>, TicketError> {
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

    /// The earliest deadline of the event's held orders, if any.
    pub fn next_deadline(&mut self) -> Option<i64> {
        let key = self.holds().ok()??;
        zset_range(key, f64::INFINITY, 1)
            .first()
            .map(|(_, score)| *score as i64)
    }

    /// Parses a holders value: `n` or `a,b,c`.
    fn tickets_of(&self, value: &RedisString) -> Result<Tickets, TicketError> {
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
    fn existing(&self, part: Part) -> Result<Option<*mut RedisModuleKey>, TicketError> {
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

    fn len(&self, part: Part) -> Result<i64, TicketError> {
        Ok(match self.existing(part)? {
            // SAFETY: an open, type-checked handle.
            Some(key) => (unsafe { raw::RedisModule_ValueLength.unwrap()(key) }) as i64,
            None => 0,
        })
    }

    fn key(&self, part: Part) -> *mut RedisModuleKey {
        self.keys[part as usize]
    }

    fn corrupt(&self, part: Part, what: &str) -> TicketError {
        TicketError::Corrupt(format!("{} {what}", self.names.key_string(part)))
    }

    /// The user argument's own string, when `user` is that argument.
    fn known_user(&self, user: &str) -> Option<*mut RedisModuleString> {
        self.user.filter(|(arg, _)| *arg == user).map(|(_, s)| s)
    }

    /// A string for `user`: the argument's own, or a new one kept in `made`.
    fn user_string(&self, user: &str, made: &mut Made) -> *mut RedisModuleString {
        self.known_user(user)
            .unwrap_or_else(|| made.keep(rstr(user.as_bytes())))
    }

    /// A string for ticket number `n`, made at most once per command.
    fn number_string(&mut self, n: i64) -> *mut RedisModuleString {
        let cached = self.numbers.iter().flatten().find(|(c, _)| *c == n);
        match cached {
            Some((_, s)) => s.inner,
            None => self.remember_number(n, rnum(n)),
        }
    }

    /// Makes the string of log time `at` the one this command uses (for the
    /// entry and its effect), shared with the commands before it in the same
    /// millisecond: a burst logs hundreds of claims per millisecond.
    fn use_time_string(&mut self, at: i64) {
        if self.numbers.iter().flatten().any(|(n, _)| *n == at) {
            return;
        }
        let shared = LAST_TIME.with(|last| {
            let mut last = last.borrow_mut();
            if last.as_ref().is_none_or(|(n, _)| *n != at) {
                *last = Some((at, rnum(at)));
            }
            last.as_ref().map(|(_, s)| retained(s))
        });
        if let Some(s) = shared {
            self.remember_number(at, s);
        }
    }

    /// Keeps `s`, the string of `n`, for the next writes that need it.
    fn remember_number(&mut self, n: i64, s: RedisString) -> *mut RedisModuleString {
        let slot = self.next_number;
        self.next_number = 1 - slot;
        if let Some((_, old)) = self.numbers[slot].replace((n, s)) {
            self.retired.push(old);
        }
        self.numbers[slot]
            .as_ref()
            .map_or(ptr::null_mut(), |(_, s)| s.inner)
    }

    /// Propagates one command to replicas and the AOF.
    fn propagate(&self, command: &std::ffi::CStr, args: &[*mut RedisModuleString]) {
        // SAFETY: "v" takes (RedisModuleString **, size_t); Redis takes its
        // own references to what it keeps.
        unsafe {
            raw::RedisModule_Replicate.unwrap()(
                self.ctx,
                command.as_ptr(),
                c"v".as_ptr(),
                args.as_ptr(),
                args.len(),
            );
        }
    }

    /// Sets hash fields (field/value string pairs; a [`HASH_DELETE`] value
    /// deletes the field).
    fn hash_set(&mut self, part: Part, pairs: &[*mut RedisModuleString]) {
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
    fn zset_add(&mut self, part: Part, score: f64, member: *mut RedisModuleString) {
        self.written[part as usize] = true;
        let mut flags: c_int = 0;
        // SAFETY: an open zset (or empty) handle opened for writing.
        unsafe { raw::RedisModule_ZsetAdd.unwrap()(self.key(part), score, member, &mut flags) };
    }

    /// Removes `member` from a zset; returns whether it was there.
    fn zset_rem(&mut self, part: Part, member: *mut RedisModuleString) -> bool {
        self.written[part as usize] = true;
        let mut deleted: c_int = 0;
        // SAFETY: an open, type-checked zset handle.
        unsafe { raw::RedisModule_ZsetRem.unwrap()(self.key(part), member, &mut deleted) };
        deleted != 0
    }

    /// The string for one value of a log entry or an effect: the event's,
    /// a constant's, the user argument's, the cached ticket number's, or a
    /// new one kept in `made`.
    fn value_string(&mut self, value: Value, made: &mut Made) -> *mut RedisModuleString {
        match value {
            // The event and the user are usually the very strings this store
            // was opened with, so compare addresses before contents.
            Value::Text(s) if same(s, self.event) || s == self.event => self.names.event(),
            Value::Text(s) if self.user.is_some_and(|(u, _)| same(s, u)) => {
                self.user_string(s, made)
            }
            Value::Text(s) => match strings::constants().named(s) {
                Some(p) => p,
                None => self.user_string(s, made),
            },
            Value::Number(n) if n == protocol::effect::VERSION => strings::constants().version,
            Value::Number(n) => self.number_string(n),
            Value::Id(id) => made.keep(stream_id_string(id)),
            Value::List(_) | Value::Hex(_) | Value::Range(..) => {
                made.keep(rstr(value.to_string().as_bytes()))
            }
        }
    }

    /// Deletes one of the event's keys if it exists (unlinked where the
    /// server can: a big holders hash or log is freed in the background);
    /// returns whether it existed.
    fn delete(&mut self, part: Part) -> bool {
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

    /// Reads meta fields; `None` for fields that are missing.
    fn meta_fields<const N: usize>(
        &self,
        fields: [*mut RedisModuleString; N],
    ) -> Result<Option<[Option<RedisString>; N]>, TicketError> {
        let Some(key) = self.existing(Part::Meta)? else {
            return Ok(None);
        };
        let mut values = [ptr::null_mut::<RedisModuleString>(); N];
        for (fields, values) in fields.chunks(3).zip(values.chunks_mut(3)) {
            hash_get_up_to_3(key, fields, values);
        }
        Ok(Some(values.map(owned)))
    }

    /// Reads the meta hash from its key (the cache missed).
    fn read_meta(&self) -> Result<Option<Meta>, TicketError> {
        let c = strings::constants();
        let fields = [
            c.total,
            c.minted,
            c.status,
            c.opens_at,
            c.closes_at,
            c.hold,
            c.limit,
            c.held,
            c.extra,
            c.offer,
            c.waitseq,
            c.incarnation,
        ];
        let Some(
            [total, minted, status, opens, closes, hold, limit, held, extra, offer, waitseq, incarnation],
        ) = self.meta_fields(fields)?
        else {
            return Ok(None);
        };
        // Events made before checkout existed have no checkout fields.
        let or = |value: Option<RedisString>, field, default| match value {
            None => Ok(default),
            value => self.meta_number(&value, field),
        };
        let hold = or(hold, "hold", 0)?;
        Ok(Some(Meta {
            total: self.meta_number(&total, "total")?,
            minted: self.meta_number(&minted, "minted")?,
            status: self.meta_status(&status)?,
            opens_at: self.meta_number(&opens, "opens_at")?,
            closes_at: self.meta_number(&closes, "closes_at")?,
            hold,
            limit: or(limit, "limit", 1)?,
            held: or(held, "held", 0)?,
            extra: or(extra, "extra", 0)?,
            offer: or(offer, "offer", protocol::effect::default_offer(hold))?,
            waitseq: or(waitseq, "waitseq", 0)?,
            // Events made before 0.3 have none.
            incarnation: match incarnation {
                None => None,
                Some(value) => {
                    Some(Incarnation::parse(&value.to_string_lossy()).ok_or_else(|| {
                        self.corrupt(Part::Meta, "has an invalid field 'incarnation'")
                    })?)
                }
            },
        }))
    }

    fn meta_number(&self, value: &Option<RedisString>, field: &str) -> Result<i64, TicketError> {
        value.as_ref().and_then(to_i64).ok_or_else(|| {
            self.corrupt(
                Part::Meta,
                &format!("has a missing or invalid field '{field}'"),
            )
        })
    }

    fn meta_status(&self, value: &Option<RedisString>) -> Result<Status, TicketError> {
        value
            .as_ref()
            .and_then(|s| Status::parse(&s.to_string_lossy()))
            .ok_or_else(|| self.corrupt(Part::Meta, "has a missing or invalid field 'status'"))
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

impl Store for RedisStore<'_> {
    fn meta(&mut self) -> Result<Option<Meta>, TicketError> {
        if let Some(meta) = meta_cache::get(self.db, self.event) {
            return Ok(Some(meta));
        }
        stats::META_CACHE_MISSES.bump();
        let meta = self.read_meta()?;
        if let Some(meta) = &meta {
            meta_cache::put(self.db, self.event, meta.clone());
        }
        Ok(meta)
    }

    fn holder(&mut self, user: &str) -> Result<Option<Tickets>, TicketError> {
        let Some(key) = self.existing(Part::Holders)? else {
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
        match owned(value) {
            None => Ok(None),
            Some(v) => self.tickets_of(&v).map(Some),
        }
    }

    fn hold_until(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.user_score(Part::Holds, user)
    }

    fn maybe_due(&mut self, now: i64) -> bool {
        expiry::maybe_due(self.db, self.event, now)
    }

    fn due_holds(&mut self, now: i64, max: usize) -> Result<Vec<String>, TicketError> {
        let Some(key) = self.holds()? else {
            return Ok(Vec::new());
        };
        let members = zset_range(key, now as f64, max);
        Ok(members
            .iter()
            .map(|(member, _)| member.to_string_lossy())
            .collect())
    }

    fn lowest_free(&mut self) -> Result<Option<i64>, TicketError> {
        let Some(key) = self.existing(Part::Pool)? else {
            return Ok(None);
        };
        let mut score = 0.0;
        // SAFETY: an open zset handle; the range is stopped before returning.
        let member = unsafe {
            let first = raw::RedisModule_ZsetFirstInScoreRange.unwrap()(
                key,
                f64::NEG_INFINITY,
                f64::INFINITY,
                0,
                0,
            );
            if first != raw::REDISMODULE_OK as c_int {
                return Ok(None);
            }
            let member = raw::RedisModule_ZsetRangeCurrentElement.unwrap()(key, &mut score);
            raw::RedisModule_ZsetRangeStop.unwrap()(key);
            owned(member)
        };
        let member = member.ok_or_else(|| self.corrupt(Part::Pool, "returned no first member"))?;
        match to_i64(&member) {
            Some(n) if n as f64 == score => {
                // Keep the member: it is the string ZREM, HSET and XADD need.
                self.remember_number(n, member);
                Ok(Some(n))
            }
            _ => Err(self.corrupt(Part::Pool, "holds a member that is not its own score")),
        }
    }

    fn lowest_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        let Some(key) = self.existing(Part::Pool)? else {
            return Ok(Vec::new());
        };
        zset_range(key, f64::INFINITY, n)
            .iter()
            .map(|(member, score)| match to_i64(member) {
                Some(n) if n as f64 == *score => Ok(n),
                _ => Err(self.corrupt(Part::Pool, "holds a member that is not its own score")),
            })
            .collect()
    }

    fn free_count(&mut self) -> Result<i64, TicketError> {
        self.len(Part::Pool)
    }

    fn holder_count(&mut self) -> Result<i64, TicketError> {
        self.len(Part::Holders)
    }

    fn log_len(&mut self) -> Result<i64, TicketError> {
        self.len(Part::Log)
    }

    fn log_exists(&mut self) -> Result<bool, TicketError> {
        Ok(self.existing(Part::Log)?.is_some())
    }

    fn any_state(&mut self) -> Result<bool, TicketError> {
        Ok(self.existing(Part::Meta)?.is_some()
            || self.existing(Part::Pool)?.is_some()
            || self.existing(Part::Holders)?.is_some())
    }

    fn create_meta(&mut self, meta: &Meta, created_at: i64) {
        let c = strings::constants();
        let values = [
            rnum(meta.total),
            rnum(meta.minted),
            rstr(meta.status.as_str().as_bytes()),
            rnum(meta.opens_at),
            rnum(meta.closes_at),
            rnum(created_at),
            rnum(meta.hold),
            rnum(meta.limit),
            rnum(meta.offer),
        ];
        let fields = [
            c.total,
            c.minted,
            c.status,
            c.opens_at,
            c.closes_at,
            c.created_at,
            c.hold,
            c.limit,
            c.offer,
        ];
        let mut pairs: Vec<*mut RedisModuleString> = fields
            .iter()
            .zip(&values)
            .flat_map(|(f, v)| [*f, v.inner])
            .collect();
        if created_at == 0 {
            // A restored event: its creation time is not known.
            pairs.drain(10..12);
        }
        let incarnation = meta.incarnation.map(|i| rstr(i.to_string().as_bytes()));
        if let Some(value) = &incarnation {
            pairs.extend([c.incarnation, value.inner]);
        }
        self.hash_set(Part::Meta, &pairs);
    }

    fn set_status(&mut self, status: Status) {
        meta_cache::update(self.db, self.event, |m| m.status = status);
        let value = rstr(status.as_str().as_bytes());
        self.hash_set(Part::Meta, &[strings::constants().status, value.inner]);
    }

    fn set_minted(&mut self, minted: i64) {
        meta_cache::update(self.db, self.event, |m| m.minted = minted);
        // With a chunk of 1 this is also the ticket: one string for both.
        let value = self.number_string(minted);
        self.hash_set(Part::Meta, &[strings::constants().minted, value]);
    }

    fn add_counts(&mut self, held: i64, extra: i64) {
        // The command read the meta before deciding, so this cannot fail.
        let Ok(Some(meta)) = self.meta() else {
            return;
        };
        let (held, extra) = (meta.held + held, meta.extra + extra);
        meta_cache::update(self.db, self.event, |m| (m.held, m.extra) = (held, extra));
        let c = strings::constants();
        let (held, extra) = (rnum(held), rnum(extra));
        self.hash_set(Part::Meta, &[c.held, held.inner, c.extra, extra.inner]);
    }

    fn take_free(&mut self, ticket: i64) {
        let member = self.number_string(ticket);
        self.zset_rem(Part::Pool, member);
    }

    fn add_free(&mut self, tickets: RangeInclusive<i64>) {
        self.written[Part::Pool as usize] = true;
        for n in tickets {
            // Redis copies the member, so one cached string serves each in
            // turn, and the last (a cancel's ticket, a chunk's new `minted`)
            // is the string the next write needs.
            let member = self.number_string(n);
            self.zset_add(Part::Pool, n as f64, member);
        }
    }

    fn set_holder(&mut self, user: &str, tickets: &Tickets) {
        let mut made = Made::default();
        let value = match tickets {
            Tickets::One(ticket) => self.number_string(*ticket),
            many => made.keep(rstr(many.value().to_string().as_bytes())),
        };
        let field_ptr = self.user_string(user, &mut made);
        self.hash_set(Part::Holders, &[field_ptr, value]);
    }

    fn remove_holder(&mut self, user: &str) {
        let mut made = Made::default();
        let field_ptr = self.user_string(user, &mut made);
        self.hash_set(Part::Holders, &[field_ptr, HASH_DELETE]);
    }

    fn set_hold(&mut self, user: &str, until: i64) {
        if self.holds().is_err() {
            return; // type-checked by the command's reads: cannot happen
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_add(Part::Holds, until as f64, member);
        expiry::note(self.db, self.event, until);
    }

    fn remove_hold(&mut self, user: &str) -> bool {
        if !matches!(self.holds(), Ok(Some(_))) {
            return false;
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_rem(Part::Holds, member)
    }

    fn waiting_len(&mut self) -> Result<i64, TicketError> {
        self.lazy(Part::Waiting)?;
        self.len(Part::Waiting)
    }

    fn waiting_place(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        self.user_score(Part::Waiting, user)
    }

    fn waiting_rank(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        if self.lazy(Part::Waiting)?.is_none() {
            return Ok(None);
        }
        // The module API has no rank lookup: ZRANK is O(log n).
        let key = self.names.key_string(Part::Waiting);
        match Context::new(self.ctx).call("ZRANK", &[key.as_str(), user]) {
            Ok(redis_module::RedisValue::Integer(rank)) => Ok(Some(rank)),
            Ok(_) => Ok(None),
            Err(e) => Err(TicketError::Internal(format!("ZRANK {key}: {e}"))),
        }
    }

    fn waiting_head(&mut self) -> Result<Option<(String, i64)>, TicketError> {
        let Some(key) = self.lazy(Part::Waiting)? else {
            return Ok(None);
        };
        Ok(zset_range(key, f64::INFINITY, 1)
            .first()
            .map(|(member, score)| (member.to_string_lossy(), *score as i64)))
    }

    fn add_waiting(&mut self, user: &str, place: i64) {
        if self.lazy(Part::Waiting).is_err() {
            return; // type-checked by the command's reads: cannot happen
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_add(Part::Waiting, place as f64, member);
        let seq = place / protocol::effect::WAIT_COUNT_SPAN;
        let Ok(Some(meta)) = self.meta() else {
            return;
        };
        if seq > meta.waitseq {
            meta_cache::update(self.db, self.event, |m| m.waitseq = seq);
            let value = rnum(seq);
            self.hash_set(Part::Meta, &[strings::constants().waitseq, value.inner]);
        }
    }

    fn remove_waiting(&mut self, user: &str) -> bool {
        if !matches!(self.lazy(Part::Waiting), Ok(Some(_))) {
            return false;
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_rem(Part::Waiting, member)
    }

    fn announce_offer(&mut self, user: &str) {
        let channel = rstr(protocol::keys::offers_channel(self.event).as_bytes());
        let message = rstr(user.as_bytes());
        // SAFETY: both strings are live for the call; Redis copies what it sends.
        unsafe { raw::RedisModule_PublishMessage.unwrap()(self.ctx, channel.inner, message.inner) };
    }

    fn append(&mut self, record: &Record<&str>, id: Option<StreamId>) -> StreamId {
        self.written[Part::Log as usize] = true;
        let c = strings::constants();
        // Strings made here live until the end of this function.
        let mut made = Made::default();
        let mut argv = [ptr::null_mut::<RedisModuleString>(); 20];
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

    fn delete_state(&mut self) -> i64 {
        meta_cache::forget(self.db, self.event);
        let _ = self.holds();
        let _ = self.lazy(Part::Waiting);
        PARTS
            .into_iter()
            .filter(|part| *part != Part::Log)
            .filter(|part| self.delete(*part))
            .count() as i64
    }

    fn delete_log(&mut self) {
        self.delete(Part::Log);
    }

    fn last_log_id(&mut self) -> Result<Option<StreamId>, TicketError> {
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

    fn is_free(&mut self, ticket: i64) -> Result<bool, TicketError> {
        let Some(key) = self.existing(Part::Pool)? else {
            return Ok(false);
        };
        let member = self.number_string(ticket);
        let mut score = 0.0;
        // SAFETY: an open, type-checked zset handle and a live member.
        let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(key, member, &mut score) };
        Ok(found == raw::REDISMODULE_OK as c_int)
    }

    fn staging(&mut self) -> Result<Option<Staging>, TicketError> {
        let c = strings::constants();
        let fields = [
            c.restore_status,
            c.restore_orders,
            c.restore_from,
            c.restore_sum,
        ];
        let Some([status, orders, from, sum]) = self.meta_fields(fields)? else {
            return Ok(None);
        };
        if status.is_none() {
            return Ok(None);
        }
        let text = |v: &Option<RedisString>| v.as_ref().map(|s| s.to_string_lossy());
        let corrupt = |field: &str| {
            self.corrupt(
                Part::Meta,
                &format!("has a missing or invalid field '{field}'"),
            )
        };
        Ok(Some(Staging {
            status: text(&status)
                .and_then(|s| protocol::record::Status::parse(&s))
                .ok_or_else(|| corrupt("restore_status"))?,
            orders: self.meta_number(&orders, "restore_orders")?,
            from: text(&from)
                .and_then(|s| StreamId::parse(&s))
                .ok_or_else(|| corrupt("restore_from"))?,
            sum: self.meta_number(&sum, "restore_sum")?,
        }))
    }

    fn set_staging(&mut self, staging: &Staging) {
        let c = strings::constants();
        meta_cache::update(self.db, self.event, |m| {
            (m.held, m.extra, m.waitseq) = (0, 0, 0)
        });
        let values = [
            rstr(staging.status.as_str().as_bytes()),
            rnum(staging.orders),
            stream_id_string(staging.from),
            rnum(staging.sum),
            rnum(0),
        ];
        let zero = values[4].inner;
        self.hash_set(
            Part::Meta,
            &[
                c.restore_status,
                values[0].inner,
                c.restore_orders,
                values[1].inner,
                c.restore_from,
                values[2].inner,
                c.restore_sum,
                values[3].inner,
                c.held,
                zero,
                c.extra,
                zero,
                c.waitseq,
                zero,
            ],
        );
    }

    fn add_staged_sum(&mut self, sum: i64) {
        // The command read the staging fields before deciding.
        let Ok(Some(staging)) = self.staging() else {
            return;
        };
        let value = rnum(staging.sum.wrapping_add(sum));
        self.hash_set(Part::Meta, &[strings::constants().restore_sum, value.inner]);
    }

    fn clear_staging(&mut self) {
        let c = strings::constants();
        self.hash_set(
            Part::Meta,
            &[
                c.restore_status,
                HASH_DELETE,
                c.restore_orders,
                HASH_DELETE,
                c.restore_from,
                HASH_DELETE,
                c.restore_sum,
                HASH_DELETE,
            ],
        );
    }

    fn replicate(&mut self, effect: &Effect<&str>) {
        count_decision(effect);
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
}

/// Counts the holds, confirmations and expiries this server decided (the
/// primary replicates what it decides; replicas only apply).
fn count_decision(effect: &Effect<&str>) {
    if let Effect::Append { record, .. } = effect {
        match record.op {
            Op::Hold { .. } => stats::HOLDS.bump(),
            Op::Confirm { .. } => stats::CONFIRMS.bump(),
            Op::Expire { .. } => stats::EXPIRED.bump(),
            _ => {}
        }
    }
}

/// Up to `max` members of a zset with scores up to `highest`, lowest score
/// first, with their scores.
fn zset_range(key: *mut RedisModuleKey, highest: f64, max: usize) -> Vec<(RedisString, f64)> {
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
fn hash_get_up_to_3(
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
fn stream_id_string(id: StreamId) -> RedisString {
    let (mut ms, mut seq) = (itoa::Buffer::new(), itoa::Buffer::new());
    let (ms, seq) = (ms.format(id.ms).as_bytes(), seq.format(id.seq).as_bytes());
    let mut buf = [0u8; 41];
    buf[..ms.len()].copy_from_slice(ms);
    buf[ms.len()] = b'-';
    buf[ms.len() + 1..ms.len() + 1 + seq.len()].copy_from_slice(seq);
    rstr(&buf[..ms.len() + 1 + seq.len()])
}

/// Strings made during one call and freed when it returns, kept without a
/// heap allocation for the usual handful.
#[derive(Default)]
struct Made {
    few: [Option<RedisString>; 6],
    len: usize,
    more: Vec<RedisString>,
}

impl Made {
    /// Keeps `s` alive and returns its pointer (to Redis memory, so it stays
    /// valid wherever `s` is kept).
    fn keep(&mut self, s: RedisString) -> *mut RedisModuleString {
        let p = s.inner;
        match self.few.get_mut(self.len) {
            Some(slot) => {
                *slot = Some(s);
                self.len += 1;
            }
            None => self.more.push(s),
        }
        p
    }
}
