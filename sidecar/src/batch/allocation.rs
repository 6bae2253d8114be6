//! Allocations in MySQL (docs/design.md "Allocations", migrations/V8):
//! what one record does to an allocation's stock ([`Move`], pure) and
//! the rows it writes, record by record.
//!
//! `ticket_stock` (and a seated event's `ticket_seat_stock`) stays the
//! public free stock; each allocation's free stock is its
//! `ticket_allocation` row, under the same conditional `UPDATE ..
//! WHERE remaining_stock >= k`. Allocate moves stock from the event to
//! the allocation, release moves it back, a claim or hold `FROM` takes the
//! allocation's (never the public) stock, and an expiry or cancel `FROM`
//! gives it back to the allocation. A seated event also keeps which seat
//! is free in which allocation (`ticket_seat.allocation`), each change a
//! conditional UPDATE that must match every seat.
//!
//! Every batch holding one of these records is written record by record
//! (`batch::slow`): allocations are rare (a box office's few commands),
//! so the fast path stays exactly what a plain batch needs. A record
//! MySQL refuses is a conflict row: `unknown_allocation` (no live
//! allocation of that name), `allocation_oversell` (its stock would go
//! negative), `allocation_mismatch` (a seat not free where the record
//! says, an order from another allocation, a release of "none" while
//! MySQL has some free).

use mysql::prelude::Queryable;
use mysql::{Transaction, Value};

use crate::batch::order::{
    category_stocks, live_holder, marks, return_stock, take_public, Verdict,
};
use crate::model::seating::tally;
use crate::model::time::datetime;
use protocol::record::{Op, Tickets};
use protocol::seats::Layout;
use protocol::StreamId;

/// What one record does to an allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move<'a> {
    /// Public free stock into the allocation (made, or started again, when
    /// it has no live row), which releases itself at `release` (unix ms).
    Allocate {
        name: &'a str,
        tickets: &'a [i64],
        release: Option<i64>,
    },
    /// Free stock of the allocation back to public sale; one that leaves
    /// it nothing free ends it (`tickets` None: it had none).
    Release {
        name: &'a str,
        tickets: Option<&'a [i64]>,
    },
    /// A claim or hold `FROM` it: its stock taken (the order's rows are
    /// written as any order's, with their `allocation`).
    Take { name: &'a str, tickets: &'a [i64] },
    /// A held order `FROM` it that expired or was cancelled back into it.
    Return { name: &'a str, tickets: &'a [i64] },
}

impl<'a> Move<'a> {
    /// The move `op` makes, if it touches an allocation.
    pub fn of<U>(op: &'a Op<U>) -> Option<Move<'a>> {
        Some(match op {
            Op::Allocate {
                name,
                tickets,
                release,
                ..
            } => Move::Allocate {
                name,
                tickets: tickets.as_slice(),
                release: *release,
            },
            Op::Release { name, tickets } => Move::Release {
                name,
                tickets: tickets.as_ref().map(Tickets::as_slice),
            },
            Op::Claim {
                from: Some(name),
                tickets,
                ..
            }
            | Op::Hold {
                from: Some(name),
                tickets,
                ..
            } => Move::Take {
                name,
                tickets: tickets.as_slice(),
            },
            Op::Expire {
                from: Some(name),
                tickets,
                ..
            }
            | Op::Cancel {
                from: Some(name),
                tickets,
                ..
            } => Move::Return {
                name,
                tickets: tickets.as_slice(),
            },
            _ => return None,
        })
    }

    pub fn name(&self) -> &'a str {
        match *self {
            Move::Allocate { name, .. }
            | Move::Release { name, .. }
            | Move::Take { name, .. }
            | Move::Return { name, .. } => name,
        }
    }

    pub fn tickets(&self) -> &'a [i64] {
        match *self {
            Move::Release { tickets, .. } => tickets.unwrap_or(&[]),
            Move::Allocate { tickets, .. }
            | Move::Take { tickets, .. }
            | Move::Return { tickets, .. } => tickets,
        }
    }

    /// How the move changes (the public stock, the allocation's stock).
    pub fn stocks(&self) -> (i64, i64) {
        let k = self.tickets().len() as i64;
        match self {
            Move::Allocate { .. } => (-k, k),
            Move::Release { .. } => (k, -k),
            Move::Take { .. } => (0, -k),
            Move::Return { .. } => (0, k),
        }
    }

    /// Where its seats are free before and after it: in the allocation
    /// (`Some(name)`) or not in one.
    pub fn seats(&self) -> (Option<&'a str>, Option<&'a str>) {
        match *self {
            Move::Allocate { name, .. } | Move::Return { name, .. } => (None, Some(name)),
            Move::Release { name, .. } | Move::Take { name, .. } => (Some(name), None),
        }
    }

    /// Its `ticket_allocation_step` kind (a take is its order's rows).
    pub fn step(&self) -> Option<&'static str> {
        match self {
            Move::Allocate { .. } => Some("allocate"),
            Move::Release { .. } => Some("release"),
            Move::Return { .. } => Some("return"),
            Move::Take { .. } => None,
        }
    }
}

/// The conditional UPDATE of an allocation's stock: `delta` taken (a
/// negative delta gives back), refused (no row matched) unless the
/// allocation is live and at least `need` remain; with `ends`, the
/// allocation ends when nothing is left (a release).
fn take_allocation(
    (event, name): (&str, &str),
    (need, delta): (i64, i64),
    ends: bool,
    (id, at): (StreamId, i64),
) -> (String, Vec<Value>) {
    let ended = match ends {
        true => "released_at = IF(remaining_stock - ? = 0, ?, NULL), ",
        false => "",
    };
    let sql = format!(
        "UPDATE ticket_allocation SET {ended}remaining_stock = remaining_stock - ?, stream_id = ?, updated_at = ? WHERE event_id = ? AND name = ? AND released_at IS NULL AND remaining_stock >= ?"
    );
    let mut params: Vec<Value> = Vec::new();
    if ends {
        params.extend([delta.into(), datetime(at).into()]);
    }
    params.extend([
        delta.into(),
        id.to_string().into(),
        datetime(at).into(),
        event.into(),
        name.into(),
        need.into(),
    ]);
    (sql, params)
}

/// The allocation's row made, added to, or started again (an ended one):
/// `k` more free tickets, its release time as the record says (kept when
/// the record has none and the allocation lives on).
fn upsert_allocation(
    (event, name): (&str, &str),
    k: i64,
    release: Option<i64>,
    (id, at): (StreamId, i64),
) -> (&'static str, Vec<Value>) {
    let sql = "INSERT INTO ticket_allocation (event_id, name, remaining_stock, release_at, created_at, updated_at, released_at, stream_id) VALUES (?, ?, ?, ?, ?, ?, NULL, ?) \
         ON DUPLICATE KEY UPDATE release_at = IF(released_at IS NULL, COALESCE(?, release_at), ?), \
         remaining_stock = IF(released_at IS NULL, remaining_stock + ?, ?), \
         created_at = IF(released_at IS NULL, created_at, ?), \
         updated_at = ?, stream_id = ?, released_at = NULL";
    let (when, id) = (datetime(at), id.to_string());
    let release = release.map_or(Value::NULL, Value::from);
    let params = vec![
        event.into(),
        name.into(),
        k.into(),
        release.clone(),
        when.clone().into(),
        when.clone().into(),
        id.clone().into(),
        release.clone(),
        release,
        k.into(),
        k.into(),
        when.clone().into(),
        when.into(),
        id.into(),
    ];
    (sql, params)
}

/// Marks `seats` free in the allocation `to` (None: not in one any
/// more), each only if it is free in `from` now (None: in none).
fn move_seats(
    event: &str,
    seats: &[i64],
    from: Option<&str>,
    to: Option<&str>,
) -> (String, Vec<Value>) {
    let now = match from {
        Some(_) => "allocation = ?",
        None => "allocation IS NULL",
    };
    let sql = format!(
        "UPDATE ticket_seat SET allocation = ? WHERE event_id = ? AND {now} AND seat_id IN ({})",
        marks(seats.len())
    );
    let mut params: Vec<Value> = vec![to.map_or(Value::NULL, Value::from), event.into()];
    params.extend(from.map(Value::from));
    params.extend(seats.iter().map(|s| Value::from(*s)));
    (sql, params)
}

/// The `ticket_allocation_step` row of a move (not of a take), with what
/// the allocation's row was before it (what a heal's undo puts back).
fn insert_step(
    event: &str,
    m: &Move<'_>,
    (id, at): (StreamId, i64),
    prior: Prior,
) -> Option<(&'static str, Vec<Value>)> {
    let kind = m.step()?;
    let tickets = m.tickets();
    let list = protocol::record::Value::List(tickets).to_string();
    let sql = "INSERT INTO ticket_allocation_step (event_id, stream_ms, stream_seq, name, kind, tickets, ticket_list, at, prior_free, prior_release_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    let params = vec![
        event.into(),
        id.ms.into(),
        id.seq.into(),
        m.name().into(),
        kind.into(),
        (tickets.len() as i64).into(),
        list.into(),
        datetime(at).into(),
        prior.free.unwrap_or(NOT_LIVE).into(),
        prior.release_at.map_or(Value::NULL, Value::from),
    ];
    Some((sql, params))
}

/// `prior_free` of an allocation that was not live before the step.
const NOT_LIVE: i64 = -1;

/// An allocation's row just before a step: its free stock while live
/// (None: not live) and its release time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Prior {
    free: Option<i64>,
    release_at: Option<i64>,
}

fn prior(tx: &mut Transaction<'_>, event: &str, name: &str) -> mysql::Result<Prior> {
    let row: Option<(i64, Option<i64>, bool)> = tx.exec_first(
        "SELECT remaining_stock, release_at, released_at IS NULL FROM ticket_allocation WHERE event_id = ? AND name = ?",
        (event, name),
    )?;
    Ok(
        row.map_or(Prior::default(), |(free, release_at, live)| Prior {
            free: live.then_some(free),
            release_at,
        }),
    )
}

/// What MySQL has of the allocation `name`: its free stock while live.
fn live_stock(tx: &mut Transaction<'_>, event: &str, name: &str) -> mysql::Result<Option<i64>> {
    let row: Option<(i64, bool)> = tx.exec_first(
        "SELECT remaining_stock, released_at IS NOT NULL FROM ticket_allocation WHERE event_id = ? AND name = ?",
        (event, name),
    )?;
    Ok(row.filter(|r| !r.1).map(|r| r.0))
}

/// Why the allocation's conditional UPDATE matched no row.
fn refused(
    tx: &mut Transaction<'_>,
    event: &str,
    m: &Move<'_>,
) -> mysql::Result<(&'static str, String)> {
    let (name, k) = (m.name(), m.tickets().len());
    Ok(match live_stock(tx, event, name)? {
        None => (
            "unknown_allocation",
            format!("no live allocation '{name}' in MySQL"),
        ),
        Some(free) if k == 0 => (
            "allocation_mismatch",
            format!("allocation '{name}' has {free} free in MySQL, the release says none"),
        ),
        Some(free) => (
            "allocation_oversell",
            format!("allocation '{name}' has {free} free, {k} needed — conditional UPDATE refused"),
        ),
    })
}

/// Runs one statement that must match `n` rows; else `allocation_mismatch`
/// with `why`.
fn exactly(
    tx: &mut Transaction<'_>,
    (sql, params): (String, Vec<Value>),
    n: usize,
    why: impl FnOnce() -> String,
) -> mysql::Result<Verdict> {
    tx.exec_drop(sql, params)?;
    Ok(match tx.affected_rows() == n as u64 {
        true => Ok(()),
        false => Err(("allocation_mismatch", why())),
    })
}

/// Writes what move `m` (entry `id` at `at`) does to the allocation and
/// the event's stocks, with explicit checks (`layout`: a seated event's).
/// A take or return writes only the allocation's side: the order's rows
/// are `batch::slow`'s, as for any order.
pub fn write(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    m: &Move<'_>,
    (id, at): (StreamId, i64),
) -> mysql::Result<Verdict> {
    let (name, tickets) = (m.name(), m.tickets());
    let k = tickets.len() as i64;
    let seated = layout.is_some();
    // what a step row keeps for the heal (a take has none: its order's
    // rows record it)
    let before = m.step().map(|_| prior(tx, event, name)).transpose()?;
    if let Move::Allocate { release, .. } = m {
        let verdict = allocate_public(tx, (event, layout), tickets)?;
        if verdict.is_err() {
            return Ok(verdict);
        }
        let (sql, params) = upsert_allocation((event, name), k, *release, (id, at));
        tx.exec_drop(sql, params)?;
    } else {
        let (need, delta) = match m.stocks().1 {
            d if d < 0 => (-d, -d),
            d => (0, -d),
        };
        let ends = matches!(m, Move::Release { .. });
        let (sql, params) = take_allocation((event, name), (need, delta), ends, (id, at));
        let exact = matches!(m, Move::Release { tickets: None, .. });
        let sql = match exact {
            true => format!("{sql} AND remaining_stock = 0"),
            false => sql,
        };
        tx.exec_drop(sql, params)?;
        if tx.affected_rows() != 1 {
            return Ok(Err(refused(tx, event, m)?));
        }
    }
    if seated && k > 0 {
        let (from, to) = m.seats();
        let verdict = exactly(
            tx,
            move_seats(event, tickets, from, to),
            tickets.len(),
            || {
                let place =
                    from.map_or("public".to_owned(), |f| format!("free in allocation '{f}'"));
                format!("not every seat of {} is {place} in MySQL", list(tickets))
            },
        )?;
        if verdict.is_err() {
            return Ok(verdict);
        }
    }
    if let Move::Release { .. } = m {
        let (sql, params) = return_stock(event, k);
        tx.exec_drop(sql, params)?;
        if let Some(layout) = layout {
            let verdict = category_stocks(tx, (event, layout), tickets, -1)?;
            if verdict.is_err() {
                return Ok(verdict);
            }
        }
    }
    if let Some((sql, params)) = before.and_then(|b| insert_step(event, m, (id, at), b)) {
        tx.exec_drop(sql, params)?;
    }
    Ok(Ok(()))
}

/// A heal's undo of lost entry `id`, an allocate, release or return `m`
/// (newest first, so the allocation's row is as the step left it): the
/// row back to what the step row says it was, the public stock and the
/// seats back, the step row marked lost. Nothing when MySQL has no step
/// row for it (the record was a conflict: it changed nothing).
pub fn undo_step(
    tx: &mut Transaction<'_>,
    event: &str,
    m: &Move<'_>,
    id: StreamId,
) -> mysql::Result<()> {
    let row: Option<(u64, Option<i64>, Option<i64>)> = tx.exec_first(
        "SELECT id, prior_free, prior_release_at FROM ticket_allocation_step WHERE event_id = ? AND stream_ms = ? AND stream_seq = ? AND name = ? AND lost_in_failover = 0 ORDER BY id DESC LIMIT 1",
        (event, id.ms, id.seq, m.name()),
    )?;
    let Some((step, prior_free, prior_release)) = row else {
        return Ok(());
    };
    tx.exec_drop(
        "UPDATE ticket_allocation_step SET lost_in_failover = 1 WHERE id = ?",
        (step,),
    )?;
    let (public, own) = m.stocks();
    let (sql, params): (&str, Vec<Value>) = match prior_free {
        Some(NOT_LIVE) => (
            "UPDATE ticket_allocation SET remaining_stock = 0, release_at = ?, released_at = COALESCE(released_at, NOW(3)), updated_at = NOW(3) WHERE event_id = ? AND name = ?",
            vec![prior_release.into(), event.into(), m.name().into()],
        ),
        Some(free) => (
            "UPDATE ticket_allocation SET remaining_stock = ?, release_at = ?, released_at = NULL, updated_at = NOW(3) WHERE event_id = ? AND name = ?",
            vec![free.into(), prior_release.into(), event.into(), m.name().into()],
        ),
        // a step written before schema version 9: the counts only
        None => (
            "UPDATE ticket_allocation SET remaining_stock = remaining_stock - ?, released_at = NULL, updated_at = NOW(3) WHERE event_id = ? AND name = ?",
            vec![own.into(), event.into(), m.name().into()],
        ),
    };
    tx.exec_drop(sql, params)?;
    if public != 0 {
        let (sql, params) = return_stock(event, -public);
        tx.exec_drop(sql, params)?;
    }
    let (before, after) = m.seats();
    unmove_seats(tx, event, m.tickets(), (after, before))
}

/// A heal's undo of a lost take (a claim or hold `FROM` the allocation
/// `name` of `tickets`) whose `n` live rows it marked lost: they go back
/// to the allocation, not to public sale.
pub fn undo_take(
    tx: &mut Transaction<'_>,
    event: &str,
    (name, tickets): (&str, &[i64]),
    n: i64,
) -> mysql::Result<()> {
    if n == 0 {
        return Ok(()); // a conflict: it took nothing
    }
    tx.exec_drop(
        "UPDATE ticket_allocation SET remaining_stock = remaining_stock + ?, updated_at = NOW(3) WHERE event_id = ? AND name = ? AND released_at IS NULL",
        (n, event, name),
    )?;
    unmove_seats(tx, event, tickets, (None, Some(name)))
}

/// Seats moved back by an undo (a general-admission event has no seat
/// rows: nothing matches).
fn unmove_seats(
    tx: &mut Transaction<'_>,
    event: &str,
    seats: &[i64],
    (from, to): (Option<&str>, Option<&str>),
) -> mysql::Result<()> {
    if seats.is_empty() {
        return Ok(());
    }
    let (sql, params) = move_seats(event, seats, from, to);
    tx.exec_drop(sql, params)
}

/// An allocate's public side: the event exists, the tickets are seats
/// (seated) and live in no order, and the public stocks give them.
fn allocate_public(
    tx: &mut Transaction<'_>,
    (event, layout): (&str, Option<&Layout>),
    tickets: &[i64],
) -> mysql::Result<Verdict> {
    let stock: Option<i64> = tx.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )?;
    let Some(stock) = stock else {
        let detail = "allocate for an event without a ticket_stock row".into();
        return Ok(Err(("unknown_event", detail)));
    };
    if let Some(Err(t)) = layout.map(|l| tally(l, tickets)) {
        let detail = format!("ticket {t} is no seat of the event's layout");
        return Ok(Err(("unknown_seat", detail)));
    }
    if let Some((t, holder)) = live_holder(tx, event, tickets)? {
        let detail = format!("ticket {t} is live for {holder:?}");
        return Ok(Err(("collision", detail)));
    }
    take_public(tx, (event, layout), tickets, stock)
}

/// Tickets as the record writes them (`3,5,9`).
fn list(tickets: &[i64]) -> String {
    protocol::record::Value::List(tickets).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::Record;

    fn t(v: &[i64]) -> Tickets {
        Tickets::from_sorted(v.to_vec())
    }

    #[test]
    fn each_record_moves_what_the_design_says() {
        let allocate: Op = Op::Allocate {
            name: "fan".into(),
            tickets: t(&[1, 2, 3]),
            release: Some(9),
            key: None,
        };
        let m = Move::of(&allocate);
        assert_eq!(
            m,
            Some(Move::Allocate {
                name: "fan",
                tickets: &[1, 2, 3],
                release: Some(9)
            })
        );
        assert_eq!(
            m.map(|m| (m.stocks(), m.step())),
            Some(((-3, 3), Some("allocate")))
        );
        let release: Op = Op::Release {
            name: "fan".into(),
            tickets: None,
        };
        let m = Move::of(&release);
        assert_eq!(
            m.map(|m| (m.stocks(), m.step())),
            Some(((0, 0), Some("release")))
        );
        let claim: Op = Op::Claim {
            from: Some("fan".into()),
            pick: None,
            user: "u".into(),
            tickets: t(&[2]),
        };
        assert_eq!(
            Move::of(&claim).map(|m| (m.stocks(), m.step())),
            Some(((0, -1), None))
        );
        let expire: Op = Op::Expire {
            from: Some("fan".into()),
            user: "u".into(),
            tickets: t(&[2, 3]),
        };
        let m = Move::of(&expire);
        assert_eq!(m.map(|m| (m.name(), m.stocks())), Some(("fan", (0, 2))));
        assert_eq!(m.and_then(|m| m.step()), Some("return"));
    }

    #[test]
    fn public_records_touch_no_allocation() {
        let ops: [Op; 4] = [
            Op::Claim {
                from: None,
                pick: None,
                user: "u".into(),
                tickets: t(&[1]),
            },
            Op::Cancel {
                from: None,
                user: "u".into(),
                tickets: t(&[1]),
            },
            Op::Confirm {
                user: "u".into(),
                tickets: t(&[1]),
            },
            Op::Open,
        ];
        for op in &ops {
            assert_eq!(Move::of(op), None, "{op:?}");
        }
        let rec = Record {
            op: Op::<String>::Release {
                name: "x".into(),
                tickets: Some(t(&[4, 5])),
            },
            at: 1,
        };
        assert!(Move::of(&rec.op).is_some());
    }

    #[test]
    fn the_release_that_empties_an_allocation_ends_it() {
        let (sql, params) = take_allocation(("e", "fan"), (2, 2), true, (StreamId::new(1, 0), 5));
        assert!(sql.starts_with("UPDATE ticket_allocation SET released_at = IF(remaining_stock - ? = 0, ?, NULL), remaining_stock = remaining_stock - ?"), "{sql}");
        assert!(
            sql.ends_with("released_at IS NULL AND remaining_stock >= ?"),
            "{sql}"
        );
        assert_eq!(params.len(), 8);
        let (sql, params) = take_allocation(("e", "fan"), (0, -1), false, (StreamId::new(1, 0), 5));
        assert!(!sql.contains("released_at ="), "{sql}");
        assert_eq!(params.len(), 6);
        let (sql, params) = move_seats("e", &[3, 4], Some("fan"), None);
        assert!(
            sql.contains("allocation = ? AND seat_id IN (?, ?)"),
            "{sql}"
        );
        assert_eq!(params.len(), 5);
        let (sql, params) = move_seats("e", &[3], None, Some("fan"));
        assert!(
            sql.contains("allocation IS NULL AND seat_id IN (?)"),
            "{sql}"
        );
        assert_eq!(params.len(), 3);
    }
}
