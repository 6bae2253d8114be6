//! `TICKET.RESTORE event step [values ...]` — installs a snapshot of an
//! event (from MySQL: the sidecar's `rebuild` drives it) in steps small
//! enough that Redis keeps answering in between. Operator-only. The steps:
//!
//! ```text
//! TICKET.RESTORE E BEGIN <incarnation> <total> <minted> <status open|closed> <opens_at> <closes_at> <hold> <limit> <offer> <orders> <from-id> [SEATS <layout>] [FORCE]
//! TICKET.RESTORE E ORDERS <user> <tickets> <until> [<user> <tickets> <until> ...]
//! TICKET.RESTORE E ALLOCATION <name> <free tickets|-> <claimed> <release|-> [<user> ...]
//! TICKET.RESTORE E FREE <n>|<a>-<b> [...]
//! TICKET.RESTORE E AFTER <transfer_until|-> [<ticket> <gen> <scanned_at|-> <gate|->] ...
//! TICKET.RESTORE E COMMIT
//! ```
//!
//! * `BEGIN` deletes the event's meta, pool, holders, holds and waiting list
//!   (not its log) and writes a meta hash with status `restoring` and the
//!   given settings (`minted` = the highest number restored; `orders` = how
//!   many orders follow; `from-id` = the MySQL offset of the snapshot).
//!   Reply: `OK`. Errors: `EXISTS` (the event exists and is not being
//!   restored; `FORCE` replaces it), `ERR` (a value out of range, named).
//!   A `BEGIN` on an event being restored starts it over. `SEATS layout`
//!   restores a seated event: the layout as `TICKET.INIT ... SEATS` takes
//!   it (checked the same way, `ERR` naming what is wrong; its seats must
//!   be `total`, and `minted` must be `total`), every seat free until the
//!   orders come.
//! * `ORDERS`: one triple per user: `tickets` one number or several,
//!   ascending, comma-separated, each `1..=minted`; `until` the hold's
//!   deadline (unix ms), `0` = sold. Reply: integer, orders restored so far.
//!   Errors (`ERR`, nothing changed): a user restored already, a ticket above
//!   `minted`, free already or in two orders, tickets not ascending, more
//!   than 1000, more orders than `BEGIN` announced, a malformed triple.
//!   A seated event's tickets are seat ids, held (`until` > 0) or sold as
//!   they are restored; errors: a seat id outside the layout (`seat N is
//!   not a seat of the layout`), a seat in two orders (`seat N is in two
//!   orders`).
//! * `ALLOCATION`: one allocation, after its users' orders: its free
//!   tickets (numbers or seat ids, ascending, or `-`), `claimed` (the
//!   tickets of the listed users' orders, checked), its release time (unix
//!   ms, or `-`), the users whose orders came from it. Reply: integer,
//!   allocations restored so far. Restored locked (MySQL has no key): no
//!   `FROM` claim opens it until `TICKET.ALLOCATE` sets the key.
//! * `FREE`: numbers or inclusive ranges into the pool, each `1..=minted`.
//!   Reply: integer, numbers in the pool so far. Errors (`ERR`, nothing
//!   changed): a number above `minted`, in the pool already, given twice.
//!   A seated event takes no `FREE` (`ERR`): its seats in no order are free.
//! * `AFTER`: the transfer deadline (`-`: none), then per sold ticket its
//!   generation and admitting scan (unix ms and gate, `-` `-`: none),
//!   tickets ascending, at most 5000. Reply: integer, the tickets given.
//!   Errors (`ERR`, nothing changed): a value out of range (named), a
//!   ticket above `total`.
//! * `COMMIT`: once `orders` orders and every number up to `minted` (held or
//!   free, each once) are restored, deletes the old log and starts a new one
//!   whose first entry is `op restore event E incarnation I status S from
//!   <from-id> at T`, at id `max(now-0, next(from-id), next(the old log's
//!   last id))`, gives the event its status and publishes the event id on
//!   `ticket:events` (as `TICKET.INIT` does: a running sidecar drains the
//!   new log at once). Reply: that id (bulk string). Errors: `INCOMPLETE`
//!   (what is missing).
//!
//! `ORDERS`, `FREE` and `COMMIT` answer `NOTRESTORING` on an event that is
//! not being restored. While an event is being restored, CLAIM, CANCEL,
//! CONFIRM, WAIT, LEAVE, OPEN, CLOSE, HOLDER, ORDER and POSITION answer
//! `TRYAGAIN`, STATUS shows status `restoring`, holds do not expire, and
//! DROP works. Past-deadline holds are restored as held; the sweep expires
//! them after the commit. The waiting list is not restored. Every step is
//! replicated as one `TICKET._APPLY` effect (`restore-begin`,
//! `restore-orders`, `restore-allocation`, `restore-free`, `restore-after`, and `restore`
//! for the commit).

use redis_module::{Context, RedisResult, RedisValue};

use protocol::restore::Step;

use super::init::announce;
use super::{guarded, write};
use crate::host::ffi::Argv;
use crate::{args, pool};

pub fn command(ctx: &Context, argv: Argv<'_>) -> RedisResult {
    guarded(|| {
        let (event, step) = argv.parse(args::restore)?;
        let reply = write(ctx, event, None, |store, out, clock| {
            Ok(match &step {
                Step::Begin { begin, force } => {
                    pool::restore_begin(store, out, event, begin, *force)?;
                    RedisValue::SimpleStringStatic("OK")
                }
                Step::Orders(orders) => {
                    RedisValue::Integer(pool::restore_orders(store, out, event, orders)?)
                }
                Step::Allocation(allocation) => {
                    RedisValue::Integer(pool::restore_allocation(store, out, event, allocation)?)
                }
                Step::Free(free) => {
                    RedisValue::Integer(pool::restore_free(store, out, event, free)?)
                }
                Step::After(after) => {
                    RedisValue::Integer(pool::restore_after(store, out, event, after)?)
                }
                Step::Commit => {
                    let id = pool::restore_commit(store, out, event, clock.now)?;
                    RedisValue::BulkString(id.to_string())
                }
            })
        })?;
        if matches!(step, Step::Commit) {
            // Like an INIT: the log is new, and a sidecar that forgot
            // the event (its log was gone) picks it up at once.
            announce(ctx, event);
        }
        Ok(reply)
    })
}
