//! A draw event's fields of the meta hash (docs/design.md "The draw"): `draw` (the commitment, hex), `seed` (the secret, hex, kept from
//! INIT), `admit`, `drawn_at` (absent = not drawn), `admit_second` and
//! `admit_used` (the admission bucket). A plain event has none of them.

use redis_module::RedisString;

use protocol::draw::{hex, parse_seed};

use super::cache::{self, Part};
use super::ffi::{rnum, rstr};
use super::store::RedisStore;
use crate::error::TicketError;
use crate::pool::Draw;

impl RedisStore<'_> {
    /// The draw fields of the meta hash; `None` for a plain event.
    pub(super) fn read_draw(&self) -> Result<Option<Box<Draw>>, TicketError> {
        let c = cache::constants();
        let fields = [
            c.draw,
            c.seed,
            c.admit,
            c.drawn_at,
            c.admit_second,
            c.admit_used,
        ];
        let Some([draw, seed, admit, drawn_at, second, used]) = self.meta_fields(fields)? else {
            return Ok(None);
        };
        let Some(draw) = draw else {
            return Ok(None);
        };
        let hex_field = |value: &RedisString, field: &str| {
            parse_seed(&value.to_string_lossy())
                .ok_or_else(|| self.corrupt(Part::Meta, &format!("has an invalid field '{field}'")))
        };
        let number = |value: Option<RedisString>, field| match value {
            None => Ok(None),
            value => self.meta_number(&value, field).map(Some),
        };
        Ok(Some(Box::new(Draw {
            commitment: hex_field(&draw, "draw")?,
            seed: seed.map(|s| hex_field(&s, "seed")).transpose()?,
            admit: number(admit, "admit")?,
            drawn_at: number(drawn_at, "drawn_at")?,
            admit_second: number(second, "admit_second")?.unwrap_or(0),
            admit_used: number(used, "admit_used")?.unwrap_or(0),
        })))
    }

    /// Writes a new event's draw terms (`create_meta`).
    pub(super) fn write_draw_terms(&mut self, draw: &Draw) {
        let c = cache::constants();
        let commitment = rstr(hex(&draw.commitment).as_bytes());
        let mut pairs = vec![c.draw, commitment.inner];
        let seed = draw.seed.map(|s| rstr(hex(&s).as_bytes()));
        if let Some(seed) = &seed {
            pairs.extend([c.seed, seed.inner]);
        }
        let admit = draw.admit.map(rnum);
        if let Some(admit) = &admit {
            pairs.extend([c.admit, admit.inner]);
        }
        self.hash_set(Part::Meta, &pairs);
    }

    /// The draw was made at `at`: the bucket starts full.
    pub(super) fn set_drawn(&mut self, at: i64) {
        self.names.meta().update(self.db, |m| {
            if let Some(d) = m.draw.as_mut() {
                (d.drawn_at, d.admit_second, d.admit_used) = (Some(at), 0, 0);
            }
        });
        let c = cache::constants();
        let (at, zero) = (rnum(at), rnum(0));
        self.hash_set(
            Part::Meta,
            &[
                c.drawn_at,
                at.inner,
                c.admit_second,
                zero.inner,
                c.admit_used,
                zero.inner,
            ],
        );
    }

    /// The admission bucket after an offer.
    pub(super) fn set_admitted(&mut self, second: i64, used: i64) {
        self.names.meta().update(self.db, |m| {
            if let Some(d) = m.draw.as_mut() {
                (d.admit_second, d.admit_used) = (second, used);
            }
        });
        let c = cache::constants();
        let (second, used) = (rnum(second), rnum(used));
        self.hash_set(
            Part::Meta,
            &[c.admit_second, second.inner, c.admit_used, used.inner],
        );
    }
}
