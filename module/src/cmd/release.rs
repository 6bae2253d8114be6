//! `TICKET.RELEASE event name [COUNT n | SEATS id [id ...]]` — gives an
//! allocation's unused stock back to public sale (docs/design.md
//! "Allocations").
//!
//! Atomically: expires due holds, then returns the allocation's free
//! tickets (all by default; the `n` lowest with `COUNT`; exactly these
//! with `SEATS`, ticket numbers of a general-admission event too) to the
//! pool or the free seats, logs `op=release` and runs the offer step, so
//! the waiting list is offered them first (party aware); the rest is free.
//! A release that leaves the allocation nothing free ends it: its name is
//! free again, and its held orders return to public sale when they end.
//!
//! Reply: integer, how many tickets were released.
//! Errors: `NOEVENT`, `NOALLOCATION` (no allocation of that name), `SHORT`
//! (`COUNT` above the allocation's free tickets; nothing changed), `ERR`
//! (invalid event id or name, `COUNT` outside `1..=1000`, `COUNT` with
//! `SEATS`, a ticket not free in the allocation), `TRYAGAIN`,
//! `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult, RedisValue};

use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, name, ask) = argv.parse(args::allocate::release)?;
        let released = write(ctx, event, None, |store, out, clock| {
            pool::release(store, out, event, name, &ask, clock)
        })?;
        Ok(RedisValue::Integer(released))
    })
}
