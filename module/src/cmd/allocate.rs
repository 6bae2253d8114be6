//! `TICKET.ALLOCATE event name (COUNT n [SECTION s] [CATEGORY c] | SEATS id
//! [id ...]) [KEY secret] [RELEASE unix-ms]` — sets free stock aside in the
//! allocation `name` (docs/design.md "Allocations").
//!
//! Atomically: expires due holds, then moves free public stock (never held,
//! sold or offered) into the allocation, made when new (at most 64 per
//! event; `name` 1–32 bytes of `[A-Za-z0-9_.-]`), added to when not (with
//! the same `KEY`): a general-admission event's `n` lowest free numbers;
//! a seated event's `SEATS`, or `n` free non-accessible seats in the
//! rule's `SPLIT` order within `SECTION`/`CATEGORY`. Public claims, best
//! available, the waiting list and the draw never take allocated stock; a
//! claim `FROM name [KEY secret]` takes only it. The key is kept as its
//! SHA-256. With `RELEASE unix-ms` the allocation releases itself then
//! (as `TICKET.RELEASE` of everything free). Logs `op=allocate`. An
//! allocation holds at most 1000 tickets (free and claimed). Without
//! `COUNT` and `SEATS` it only sets the key (`KEY` or none) of an
//! allocation `TICKET.RESTORE` put back locked (replicated as
//! `allocation-key`, not logged) and replies with no tickets.
//!
//! Reply: an array of the tickets allocated, ascending.
//! Errors: `NOEVENT`, `SHORT` (`SHORT event 'E' has m free`: fewer free
//! than asked; nothing changed), `TAKEN` (a picked seat is not free),
//! `NOKEY` (adding to an allocation with another or no `KEY`), `ERR`
//! (invalid event id or name, `COUNT` outside `1..=1000`, `COUNT` with
//! `SEATS`, seat options on an unseated event, an unknown section or
//! category or seat, 64 allocations already, more than 1000 tickets in
//! the allocation), `TRYAGAIN`, `WRONGTYPE`/`CORRUPT`.

use redis_module::{Context, RedisResult};

use super::{guarded, ticket_array, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, ask) = argv.parse(args::allocate::allocate)?;
        let tickets = write(ctx, event, None, |store, out, clock| {
            pool::allocate(store, out, event, &ask, clock)
        })?;
        Ok(ticket_array(&tickets))
    })
}
