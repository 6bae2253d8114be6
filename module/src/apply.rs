//! The writes of one state change, shared by the primary and its replicas.
//!
//! The primary's commands decide a change (in `pool`) and call [`append`]
//! with no stream id: the store appends the log entry at an id it picks.
//! `TICKET._APPLY` on a replica or at AOF load decodes the replicated
//! [`Effect`] and calls [`apply`], which runs the very same writes at the
//! primary's id. Nothing here reads or decides: every value is in the
//! record, so the two sides cannot diverge.

use protocol::effect::Effect;
use protocol::record::{Op, Record, Tickets};
use protocol::StreamId;

use crate::pool::{Meta, Status, Store};

/// Performs a replicated effect.
pub fn apply(store: &mut impl Store, effect: &Effect<&str>) {
    match effect {
        Effect::Append { id, record, minted } => {
            append(store, record, *minted, Some(*id));
        }
        Effect::Drop => {
            store.delete_all();
        }
    }
}

/// Writes the state change `record` describes and appends it to the log (at
/// `id`, or at an id the store picks); returns the id used. `minted` is the
/// event's new `minted` when a claim minted numbers: the claimed ticket is
/// the first new one, and the rest up to `minted` go into the pool.
pub fn append(
    store: &mut impl Store,
    record: &Record<&str>,
    minted: Option<i64>,
    id: Option<StreamId>,
) -> StreamId {
    match record.op {
        Op::Init {
            total,
            opens_at,
            closes_at,
        } => {
            let meta = Meta {
                total,
                minted: 0,
                status: Status::Open,
                opens_at,
                closes_at,
            };
            store.create_meta(&meta, record.at);
        }
        Op::Claim {
            user,
            tickets: Tickets::One(ticket),
        } => {
            match minted {
                Some(minted) => {
                    if minted > ticket {
                        store.add_free(ticket + 1..=minted);
                    }
                    store.set_minted(minted);
                }
                None => store.take_free(ticket),
            }
            store.set_holder(user, ticket);
        }
        Op::Cancel {
            user,
            tickets: Tickets::One(ticket),
        } => {
            store.remove_holder(user);
            store.add_free(ticket..=ticket);
        }
        Op::Open => store.set_status(Status::Open),
        Op::Close => store.set_status(Status::Closed),
        // Never decided by this build, and refused by `supported` first.
        _ => {}
    }
    store.append(record, id)
}

/// Whether this build applies `effect` (orders of several tickets, holds
/// and offers are not implemented yet).
pub fn supported(effect: &Effect<&str>) -> bool {
    match effect {
        Effect::Drop => true,
        Effect::Append { record, .. } => matches!(
            record.op,
            Op::Init { .. }
                | Op::Open
                | Op::Close
                | Op::Claim {
                    tickets: Tickets::One(_),
                    ..
                }
                | Op::Cancel {
                    tickets: Tickets::One(_),
                    ..
                }
        ),
    }
}
