//! The event's meta hash through the native key API: its fields read into
//! a [`Meta`] (on a miss of the per-event copy, which `store` reads), a
//! restore's staging fields, and the writes of [`crate::pool::MetaWrite`]
//! but `minted` (in `store`, with the claim's other writes).

use std::ptr;

use redis_module::raw::RedisModuleString;
use redis_module::RedisString;

use protocol::record::Incarnation;
use protocol::StreamId;

use super::cache::{self, Part};
use super::ffi::{hash_get_up_to_3, owned, rnum, rstr, stream_id_string, to_i64, HASH_DELETE};
use super::store::RedisStore;
use crate::error::TicketError;
use crate::pool::{Allocs, Meta, Staging, Status};

impl RedisStore<'_> {
    pub(super) fn meta_fields<const N: usize>(
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
    pub(super) fn read_meta(&self) -> Result<Option<Meta>, TicketError> {
        let c = cache::constants();
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
            c.allocations,
            c.allocated,
            c.release_at,
            c.listed,
        ];
        let Some(
            [total, minted, status, opens, closes, hold, limit, held, extra, offer, waitseq, incarnation, allocations, allocated, release_at, listed],
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
            draw: self.read_draw()?,
            seated: self.has_layout()?,
            allocs: Allocs {
                count: self.small(or(allocations, "allocations", 0)?, "allocations")?,
                free: self.small(or(allocated, "allocated", 0)?, "allocated")?,
                release_at: or(release_at, "release_at", 0)?,
            },
            listed: self.small(or(listed, "listed", 0)?, "listed")?,
        }))
    }

    /// An allocations count of the meta (small: 64 of at most 1000).
    fn small<T: TryFrom<i64>>(&self, n: i64, field: &str) -> Result<T, TicketError> {
        T::try_from(n)
            .map_err(|_| self.corrupt(Part::Meta, &format!("has an invalid field '{field}'")))
    }

    pub(super) fn meta_number(
        &self,
        value: &Option<RedisString>,
        field: &str,
    ) -> Result<i64, TicketError> {
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

    pub(super) fn create_meta(&mut self, meta: &Meta, created_at: i64) {
        let c = cache::constants();
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
        if let Some(draw) = &meta.draw {
            self.write_draw_terms(draw);
        }
    }

    pub(super) fn set_status(&mut self, status: Status) {
        self.names.meta().update(self.db, |m| m.status = status);
        let value = rstr(status.as_str().as_bytes());
        self.hash_set(Part::Meta, &[cache::constants().status, value.inner]);
    }

    pub(super) fn add_counts(&mut self, held: i64, extra: i64) {
        // The command read the meta before deciding, so this cannot fail.
        let Ok(Some(meta)) = self.cached_meta() else {
            return;
        };
        let (held, extra) = (meta.held + held, meta.extra + extra);
        self.names
            .meta()
            .update(self.db, |m| (m.held, m.extra) = (held, extra));
        let c = cache::constants();
        let (held, extra) = (rnum(held), rnum(extra));
        self.hash_set(Part::Meta, &[c.held, held.inner, c.extra, extra.inner]);
    }

    /// Adds `n` to `listed` (a field at 0 is removed).
    pub(super) fn add_listed(&mut self, n: i64) {
        let Ok(Some(meta)) = self.cached_meta() else {
            return;
        };
        let listed = u32::try_from(i64::from(meta.listed) + n).unwrap_or(0);
        self.names.meta().update(self.db, |m| m.listed = listed);
        let value = rnum(i64::from(listed));
        let value = if listed == 0 {
            HASH_DELETE
        } else {
            value.inner
        };
        self.hash_set(Part::Meta, &[cache::constants().listed, value]);
    }

    pub(super) fn read_staging(&mut self) -> Result<Option<Staging>, TicketError> {
        let c = cache::constants();
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

    pub(super) fn set_staging(&mut self, staging: &Staging) {
        let c = cache::constants();
        self.names
            .meta()
            .update(self.db, |m| (m.held, m.extra, m.waitseq) = (0, 0, 0));
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

    pub(super) fn add_staged_sum(&mut self, sum: i64) {
        // The command read the staging fields before deciding.
        let Ok(Some(staging)) = self.read_staging() else {
            return;
        };
        let value = rnum(staging.sum.wrapping_add(sum));
        self.hash_set(Part::Meta, &[cache::constants().restore_sum, value.inner]);
    }

    pub(super) fn clear_staging(&mut self) {
        let c = cache::constants();
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

    /// The summary of the allocations (a field at 0 is removed).
    pub(super) fn set_allocs(&mut self, allocs: Allocs) {
        self.names.meta().update(self.db, |m| m.allocs = allocs);
        let c = cache::constants();
        let (count, free) = (i64::from(allocs.count), i64::from(allocs.free));
        let values = [count, free, allocs.release_at].map(rnum);
        let value = |i: usize, n: i64| match n {
            0 => HASH_DELETE,
            _ => values[i].inner,
        };
        self.hash_set(
            Part::Meta,
            &[
                c.allocations,
                value(0, count),
                c.allocated,
                value(1, free),
                c.release_at,
                value(2, allocs.release_at),
            ],
        );
    }

    /// Raises `waitseq` to `seq` when below (a new place in the list).
    pub(super) fn raise_waitseq(&mut self, seq: i64) {
        let Ok(Some(meta)) = self.cached_meta() else {
            return;
        };
        if seq > meta.waitseq {
            self.names.meta().update(self.db, |m| m.waitseq = seq);
            let value = rnum(seq);
            self.hash_set(Part::Meta, &[cache::constants().waitseq, value.inner]);
        }
    }
}
