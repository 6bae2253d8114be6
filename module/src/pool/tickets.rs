//! Handing out numbers from the lazy pool (docs/design.md "The lazy pool"):
//! the pool holds only the lowest free numbers; `minted` is the highest
//! number ever put into it, and every unminted number is greater than
//! every pooled one, so the lowest free number is always the pool's minimum
//! (or `minted + 1` when it is empty).

use protocol::record::Tickets;

use super::model::Meta;
use super::store::Store;
use crate::error::TicketError;

/// The `count` lowest free numbers and the event's new `minted` when some
/// had to be minted, or `SOLDOUT` when fewer are free.
pub(super) fn lowest_free(
    store: &mut impl Store,
    event: &str,
    meta: &Meta,
    count: i64,
    chunk: i64,
) -> Result<(Tickets, Option<i64>), TicketError> {
    let sold_out = || TicketError::SoldOut(event.to_owned());
    if count == 1 {
        // The hot path: one number, no allocation.
        return match store.lowest_free()? {
            Some(ticket) => Ok((Tickets::One(ticket), None)),
            None if meta.minted < meta.total => {
                let (ticket, minted) = mint(meta.total, meta.minted, 1, chunk);
                Ok((Tickets::One(ticket), minted))
            }
            None => Err(sold_out()),
        };
    }
    let mut numbers = store.lowest_free_n(count as usize)?;
    let missing = count - numbers.len() as i64;
    if missing == 0 {
        return Ok((Tickets::from_sorted(numbers), None));
    }
    if meta.total - meta.minted < missing {
        return Err(sold_out());
    }
    let (first, minted) = mint(meta.total, meta.minted, missing, chunk);
    numbers.extend(first..first + missing);
    Ok((Tickets::from_sorted(numbers), minted))
}

/// How many tickets are free: the pool's and the unminted ones, or a
/// seated event's free seats.
pub(super) fn free_count(store: &mut impl Store, meta: &Meta) -> Result<i64, TicketError> {
    if meta.seated {
        return Ok(store.seating(|_, s| i64::from(s.free()))?.unwrap_or(0));
    }
    Ok(store.len(super::store::Part::Pool)? + meta.total - meta.minted)
}

/// Mints the next chunk of numbers, at least `count`: the first `count`
/// go to the claimant directly (they would be popped right away, so they
/// never enter the pool). Returns the first new ticket and the new `minted`.
fn mint(total: i64, minted: i64, count: i64, chunk: i64) -> (i64, Option<i64>) {
    let last = minted
        .saturating_add(chunk.max(1))
        .max(minted + count)
        .min(total);
    (minted + 1, Some(last))
}
