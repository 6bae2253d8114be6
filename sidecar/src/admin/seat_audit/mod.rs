//! `ticketgate-sidecar audit-seats --event E`: checks a seated event's
//! seats from MySQL alone. Reads the stored layout (`ticket_event`) and
//! every order (`ticket_participation`, less what a heal undid), then
//! [`replay`](mod@replay)s them in log order with `protocol::seats`, the module's own
//! rule code. Prints the first violation (exit 1) or a summary (exit 0);
//! no Redis needed.

pub mod replay;

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Instant;

use mysql::prelude::Queryable;
use protocol::seats::Layout;
use protocol::StreamId;

use protocol::record::{Pick, PickHow};
use replay::{describe, replay_allocated, Move, Order};

/// Runs the audit of `event`; exit 0 (every seat by the rule), 1 (a
/// violation), or Err (MySQL unreadable, not a seated event).
pub fn run(my: &mut impl Queryable, event: &str) -> Result<ExitCode, String> {
    let start = Instant::now();
    let layout = layout(my, event)?;
    let orders = orders(my, event).map_err(|e| format!("reading MySQL: {e}"))?;
    let orders = match orders {
        Ok(o) => o,
        Err(why) => {
            println!("event {event}: AUDIT FAILED: {why}");
            return Ok(ExitCode::from(1));
        }
    };
    let moves = moves(my, event, &layout).map_err(|e| format!("reading MySQL: {e}"))?;
    let moves = match moves {
        Ok(m) => m,
        Err(why) => {
            println!("event {event}: AUDIT FAILED: {why}");
            return Ok(ExitCode::from(1));
        }
    };
    let verdict = replay_allocated(&layout, &orders, &moves);
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    match verdict {
        Ok(s) => {
            println!(
                "event {event}: every seat by the rule: {} orders ({} seats) replayed in log order: {} best available, {} split, {} picked, {} given back, {} re-applied by a heal (checked for no seat twice only), {} from allocations ({} allocation moves); audit took {ms:.1} ms",
                s.orders, s.seats, s.best, s.split, s.picked, s.released, s.reapplied, s.allocated, moves.len()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(v) => {
            let why = describe(&layout, &orders, &v);
            println!("event {event}: AUDIT FAILED: {why} (audit took {ms:.1} ms)");
            Ok(ExitCode::from(1))
        }
    }
}

/// The event's stored layout.
pub(crate) fn layout(my: &mut impl Queryable, event: &str) -> Result<Layout, String> {
    let row: Option<Option<String>> = my
        .exec_first(
            "SELECT seat_layout FROM ticket_event WHERE event_id = ?",
            (event,),
        )
        .map_err(|e| format!("reading MySQL: {e}"))?;
    let json = match row {
        None => return Err(format!("no event {event:?} in MySQL")),
        Some(None) => return Err(format!("event {event:?} is not a seated event (no layout)")),
        Some(Some(json)) => json,
    };
    Layout::parse(&json).map_err(|e| format!("MySQL's layout of event {event:?}: {}", e.0))
}

/// One `ticket_participation` row: order id, user, seat, status, last
/// entry, pick, section, category, accessible, reapplied, allocation.
type Row = (
    Option<String>,
    String,
    i64,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
    bool,
    Option<String>,
);

/// The event's allocation moves (`ticket_allocation_step`, migrations/V8;
/// not those a heal undid) in log order; the inner Err names a row the replay cannot read.
pub(crate) fn moves(
    my: &mut impl Queryable,
    event: &str,
    layout: &Layout,
) -> Result<Result<Vec<Move>, String>, mysql::Error> {
    let rows: Vec<(u64, u64, String, String, String)> = my.exec(
        "SELECT stream_ms, stream_seq, name, CAST(kind AS CHAR), ticket_list FROM ticket_allocation_step WHERE event_id = ? AND lost_in_failover = 0 ORDER BY stream_ms, stream_seq, id",
        (event,),
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for (ms, seq, name, kind, list) in rows {
        let seats = match list.as_str() {
            "" => Vec::new(),
            text => match protocol::record::parse_tickets(text) {
                Some(t) => t
                    .as_slice()
                    .iter()
                    .map(|s| u32::try_from(*s).unwrap_or(0))
                    .collect(),
                None => {
                    return Ok(Err(format!(
                        "allocation step {ms}-{seq} of {name:?}: tickets {text:?} unreadable"
                    )))
                }
            },
        };
        let seats = seats
            .into_iter()
            .filter(|s| layout.place(*s).is_some())
            .collect();
        out.push(Move {
            id: StreamId::new(ms, seq),
            into: kind != "release",
            name,
            seats,
        });
    }
    Ok(Ok(out))
}

/// The event's orders (rows a heal undid left out), a resold seat in the
/// order that first took it (`first_order`, migrations/V11); the inner
/// Err names a row the replay cannot place.
pub(crate) fn orders(
    my: &mut impl Queryable,
    event: &str,
) -> Result<Result<Vec<Order>, String>, mysql::Error> {
    let rows: Vec<Row> = my.exec(
        "SELECT COALESCE(first_order, order_id), user_id, ticket_number, CAST(status AS CHAR), stream_id, CAST(seat_pick AS CHAR), seat_section, seat_category, seat_accessible, reapplied, allocation \
         FROM ticket_participation WHERE event_id = ? AND status <> 'lost_in_failover' ORDER BY ticket_number",
        (event,),
    )?;
    Ok(group(rows))
}

/// Rows grouped into orders.
fn group(rows: Vec<Row>) -> Result<Vec<Order>, String> {
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut orders: Vec<Order> = Vec::new();
    for (order_id, user, seat, status, last, pick, section, category, accessible, re, from) in rows
    {
        let text = order_id.ok_or_else(|| {
            format!("the row of user {user:?}, seat {seat} has no order id: it cannot be placed in the log")
        })?;
        let parse = |t: &str| {
            StreamId::parse(t)
                .ok_or_else(|| format!("order {t:?} of user {user:?}: not a stream id"))
        };
        let id = parse(&text)?;
        let released = match status.as_str() {
            "canceled" | "expired" => Some(parse(&last)?),
            _ => None,
        };
        let i = *index.entry(text).or_insert_with(|| {
            orders.push(Order {
                id,
                user: user.clone(),
                seats: Vec::new(),
                pick: None,
                reapplied: false,
                released,
                from: from.clone(),
            });
            orders.len() - 1
        });
        let o = &mut orders[i];
        o.seats.push(u32::try_from(seat).unwrap_or(0));
        if let Some(how) = pick.as_deref().and_then(PickHow::parse) {
            o.pick = Some(Pick {
                how,
                section,
                category,
                accessible,
            });
        }
        o.reapplied |= re;
    }
    Ok(orders)
}
