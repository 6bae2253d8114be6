//! A seated event's keys through the native key API: the meta hash's
//! `layout` field (the stored JSON) and the seat key `ticket:{E}:seats`
//! (2 bits a seat, `protocol::seats::state`), kept in step with the
//! in-memory copy of `seat_cache` that the search runs over.

use std::os::raw::{c_char, c_int};
use std::ptr;

use redis_module::raw;

use protocol::seats::state::{packed_len, packed_slot};
use protocol::seats::{Layout, Seat, SeatState};

use super::cache::{self, Part};
use super::ffi::rstr;
use super::store::RedisStore;
use crate::error::TicketError;
use crate::seat_cache::{self, Seating};

impl RedisStore<'_> {
    /// Whether the meta hash has a `layout` field (a seated event), without
    /// reading the layout.
    pub(super) fn has_layout(&self) -> Result<bool, TicketError> {
        let Some(key) = self.existing(Part::Meta)? else {
            return Ok(false);
        };
        let mut exists: c_int = 0;
        // SAFETY: an open hash handle; one (field, out-int) pair, NULL-terminated.
        unsafe {
            raw::RedisModule_HashGet.unwrap()(
                key,
                raw::REDISMODULE_HASH_EXISTS as c_int,
                cache::constants().layout,
                &mut exists as *mut c_int,
                ptr::null::<c_char>(),
            );
        }
        Ok(exists != 0)
    }

    /// The stored layout JSON, if any.
    pub(super) fn read_layout(&self) -> Result<Option<String>, TicketError> {
        let fields = [cache::constants().layout];
        let Some([value]) = self.meta_fields(fields)? else {
            return Ok(None);
        };
        Ok(value.map(|v| v.to_string_lossy()))
    }

    /// Runs `f` on the event's seating, rebuilding the cached copy from
    /// the keys when it is missing.
    pub(super) fn with_seating<T>(
        &mut self,
        f: impl FnOnce(&Layout, &SeatState) -> T,
    ) -> Result<Option<T>, TicketError> {
        let Some(meta) = self.cached_meta()? else {
            return Ok(None);
        };
        if !meta.seated {
            return Ok(None);
        }
        let (db, event, incarnation) = (self.db, self.event, meta.incarnation);
        let mut f = Some(f);
        let cached = seat_cache::with(db, event, incarnation, |s| {
            f.take().map(|f| f(&s.layout, &s.state))
        });
        if let Some(found) = cached {
            return Ok(found);
        }
        let seating = self.rebuild_seating(incarnation)?;
        let result = f.take().map(|f| f(&seating.layout, &seating.state));
        seat_cache::put(db, event, seating);
        Ok(result)
    }

    /// The seating from the keys: the layout parsed, the seat key read.
    fn rebuild_seating(
        &mut self,
        incarnation: Option<protocol::record::Incarnation>,
    ) -> Result<Seating, TicketError> {
        let json = self
            .read_layout()?
            .ok_or_else(|| self.corrupt(Part::Meta, "has no field 'layout'"))?;
        let layout = Layout::parse(&json)
            .map_err(|e| self.corrupt(Part::Meta, &format!("has an invalid layout: {e}")))?;
        let key = self
            .lazy(Part::Seats)?
            .ok_or_else(|| self.corrupt(Part::Seats, "is missing"))?;
        let mut len = 0;
        // SAFETY: an open, type-checked string handle; the bytes are read
        // before anything writes the key.
        let bytes = unsafe {
            let p =
                raw::RedisModule_StringDMA.unwrap()(key, &mut len, raw::REDISMODULE_READ as c_int);
            std::slice::from_raw_parts(p.cast::<u8>(), len)
        };
        let state = SeatState::from_packed(&layout, bytes)
            .map_err(|why| self.corrupt(Part::Seats, &why))?;
        Ok(Seating {
            incarnation,
            layout,
            state,
        })
    }

    /// Writes a new seated event's layout and its seat key, every seat free.
    pub(super) fn write_seating(&mut self, json: &str) {
        let Ok(layout) = Layout::parse(json) else {
            // Only a hand-made effect gets here: the primary validated it.
            return;
        };
        let value = rstr(json.as_bytes());
        self.hash_set(Part::Meta, &[cache::constants().layout, value.inner]);
        if self.lazy(Part::Seats).is_ok() {
            self.written[Part::Seats as usize] = true;
            // SAFETY: the seat key opened for writing; truncating an empty
            // key makes a string of zero bytes (every seat free).
            unsafe {
                raw::RedisModule_StringTruncate.unwrap()(
                    self.key(Part::Seats),
                    packed_len(layout.total),
                );
            }
        }
        let incarnation = self
            .cached_meta()
            .ok()
            .flatten()
            .and_then(|m| m.incarnation);
        let state = SeatState::new(&layout);
        let seating = Seating {
            incarnation,
            layout,
            state,
        };
        seat_cache::put(self.db, self.event, seating);
    }

    /// Sets seats in the seat key and in the cached copy.
    pub(super) fn write_seats(&mut self, ids: &[i64], seat: Seat) {
        let Ok(Some(key)) = self.lazy(Part::Seats) else {
            return;
        };
        self.written[Part::Seats as usize] = true;
        let mut len = 0;
        // SAFETY: an open string handle opened for writing; DMA gives its
        // bytes for in-place change until the key is closed.
        let bytes = unsafe {
            let p =
                raw::RedisModule_StringDMA.unwrap()(key, &mut len, raw::REDISMODULE_WRITE as c_int);
            std::slice::from_raw_parts_mut(p.cast::<u8>(), len)
        };
        let mut changed = Vec::with_capacity(ids.len());
        for &id in ids {
            let Ok(id) = u32::try_from(id) else { continue };
            let (byte, shift) = packed_slot(id.max(1));
            if let Some(b) = bytes.get_mut(byte) {
                *b = (*b & !(3 << shift)) | ((seat as u8) << shift);
                changed.push(id);
            }
        }
        seat_cache::set(self.db, self.event, &changed, seat);
    }

    /// Whether seat `id` is free (a seated event's `is_free`).
    pub(super) fn seat_free(&mut self, id: i64) -> Result<bool, TicketError> {
        let id = u32::try_from(id).unwrap_or(0);
        Ok(self.with_seating(|_, s| s.is_free(id))?.unwrap_or(false))
    }

    /// A seat string as made for replies (`.`/`h`/`s` a seat).
    pub fn seat_map(&mut self) -> Result<Option<Vec<u8>>, TicketError> {
        self.with_seating(|_, s| s.seat_map())
    }
}
