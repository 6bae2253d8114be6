//! The reads and writes of an event's pool, holds, waiting-list and wants
//! keys, through the native key API (the holders hash and the meta's
//! cached read are in `store`, beside the handles, as every claim runs
//! them; the rest of the meta hash is in `meta`, the log stream in `log`).

use std::ops::RangeInclusive;
use std::os::raw::c_int;

use redis_module::raw;
use redis_module::Context;

use super::cache::{Part, PARTS};
use super::ffi::{owned, to_i64, zset_range, Made, HASH_DELETE};
use super::store::RedisStore;
use crate::error::TicketError;

impl RedisStore<'_> {
    /// How many tickets a draw's entrant wants (the wants hash).
    pub(super) fn read_wants(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
        if self.lazy(Part::Wants)?.is_none() {
            return Ok(None);
        }
        match self.user_field(Part::Wants, user)? {
            None => Ok(None),
            Some(v) => to_i64(&v)
                .map(Some)
                .ok_or_else(|| self.corrupt(Part::Wants, "holds a count that is not a number")),
        }
    }

    /// Sets or removes an entrant's count in the wants hash.
    pub(super) fn write_wants(&mut self, user: &str, count: Option<i64>) {
        let exists = matches!(self.lazy(Part::Wants), Ok(Some(_)));
        if count.is_none() && !exists {
            return;
        }
        let mut made = Made::default();
        let value = match count {
            Some(n) => made.keep(super::ffi::rnum(n)),
            None => HASH_DELETE,
        };
        let field = self.user_string(user, &mut made);
        self.hash_set(Part::Wants, &[field, value]);
    }

    /// The pool's lowest number; its member string is kept for the writes.
    pub(super) fn first_free(&mut self) -> Result<Option<i64>, TicketError> {
        let Some(key) = self.lazy(Part::Pool)? else {
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

    pub(super) fn first_free_n(&mut self, n: usize) -> Result<Vec<i64>, TicketError> {
        let Some(key) = self.lazy(Part::Pool)? else {
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

    pub(super) fn take_free(&mut self, ticket: i64) {
        // A number the pool does not have (a minted one) is left alone.
        if let Ok(Some(_)) = self.lazy(Part::Pool) {
            let member = self.number_string(ticket);
            self.zset_rem(Part::Pool, member);
        }
    }

    pub(super) fn add_free(&mut self, tickets: RangeInclusive<i64>) {
        self.open_pool_to_add();
        self.written[Part::Pool as usize] = true;
        for n in tickets {
            // Redis copies the member, so one cached string serves each in
            // turn, and the last (a cancel's ticket, a chunk's new `minted`)
            // is the string the next write needs.
            let member = self.number_string(n);
            self.zset_add(Part::Pool, n as f64, member);
        }
    }

    /// Adds (or moves) `user` at `score` in the holds or waiting zset.
    pub(super) fn add_member(&mut self, part: Part, user: &str, score: i64) {
        if self.lazy(part).is_err() {
            return; // type-checked by the command's reads: cannot happen
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_add(part, score as f64, member);
    }

    /// Removes `user` from the holds or waiting zset; returns whether it
    /// was there.
    pub(super) fn remove_member(&mut self, part: Part, user: &str) -> bool {
        if !matches!(self.lazy(part), Ok(Some(_))) {
            return false;
        }
        let mut made = Made::default();
        let member = self.user_string(user, &mut made);
        self.zset_rem(part, member)
    }

    pub(super) fn rank_in_waiting(&mut self, user: &str) -> Result<Option<i64>, TicketError> {
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

    pub(super) fn delete_state(&mut self) -> i64 {
        self.names.meta().forget();
        self.pool_absent = false;
        let _ = self.lazy(Part::Pool);
        let _ = self.lazy(Part::Holds);
        let _ = self.lazy(Part::Waiting);
        let _ = self.lazy(Part::Wants);
        let _ = self.lazy(Part::Seats);
        crate::seat_cache::forget(self.db, self.event);
        PARTS
            .into_iter()
            .filter(|part| *part != Part::Log)
            .filter(|part| self.delete_key(*part))
            .count() as i64
    }

    pub(super) fn in_pool(&mut self, ticket: i64) -> Result<bool, TicketError> {
        let Some(key) = self.lazy(Part::Pool)? else {
            return Ok(false);
        };
        let member = self.number_string(ticket);
        let mut score = 0.0;
        // SAFETY: an open, type-checked zset handle and a live member.
        let found = unsafe { raw::RedisModule_ZsetScore.unwrap()(key, member, &mut score) };
        Ok(found == raw::REDISMODULE_OK as c_int)
    }
}
