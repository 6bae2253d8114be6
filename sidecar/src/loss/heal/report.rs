//! What a heal records and says: its [`Report`], the log lines and metrics
//! of it ([`announce`]), each undone write's conflict detail, the
//! `ticket_heal` row, and `reconcile`'s lines about past heals.

use mysql::prelude::Queryable;
use mysql::Transaction;

use super::planner::{Logged, Touch};
use crate::io::metrics::Metrics;
use crate::model::{Conflict, Entry};
use protocol::record::Op;
use protocol::StreamId;

/// What one heal did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub diverged_at: StreamId,
    pub before: StreamId,
    pub after: StreamId,
    pub lost: usize,
    pub reapplied: usize,
    /// Undone client writes: each is a `lost_in_failover` conflict row.
    pub undone: Vec<Conflict>,
    /// Undone expiries and offers (the module's decisions): logged only.
    pub undone_quietly: Vec<Conflict>,
    /// Conflicts while writing the new primary's entries (none expected).
    pub conflicts: Vec<Conflict>,
    pub written: usize,
    pub millis: u128,
}

/// Logs a heal and counts it in the metrics.
pub fn announce(event: &str, r: &Report, metrics: &Metrics) {
    log::warn!(
        "event {event}: HEALED after an unplanned failover: the new primary's log diverged from MySQL after {}; {} lost applied write(s): {} re-applied, {} undone (a lost_in_failover conflict for each client write); MySQL moved from {} to {} ({} entries of the new primary applied) in {} ms",
        r.diverged_at, r.lost, r.reapplied, r.undone.len() + r.undone_quietly.len(), r.before, r.after, r.written, r.millis
    );
    for c in &r.undone {
        log::warn!(
            "event {event}: lost write {} undone: user {:?}, ticket {:?}: {}",
            c.id,
            c.user.as_deref().unwrap_or("?"),
            c.ticket,
            c.detail
        );
        metrics.conflict(c.reason);
    }
    for c in &r.conflicts {
        log::error!(
            "event {event}: conflict while healing: {} {}: {}",
            c.id,
            c.reason,
            c.detail
        );
        metrics.conflict(c.reason);
    }
    metrics.lost_writes("reapplied", r.reapplied as u64);
    for c in &r.undone_quietly {
        log::info!(
            "event {event}: lost {} {} undone (the new primary decides it anew; no conflict row): {}",
            if c.detail.starts_with("expire") { "expiry" } else { "offer" },
            c.id,
            c.detail
        );
    }
    metrics.lost_writes("undone", (r.undone.len() + r.undone_quietly.len()) as u64);
}

/// The conflict detail of an undone write: what it was, why, and what the
/// new primary's log says about its user and tickets since.
pub(super) fn undone_detail(l: &Logged, why: &str, after: &[Entry]) -> String {
    let Some(rec) = &l.rec else {
        return why.to_owned();
    };
    let mine = Touch::of(&rec.op);
    let since: Vec<String> = after
        .iter()
        .filter_map(|e| {
            let r = e.rec.as_ref().ok()?;
            mine.shared(&Touch::of(&r.op))?;
            Some(match r.op.order() {
                Some((u, t, _)) => format!("{} {} by {u:?} at {}", r.op.name(), t.value(), e.id),
                // after the sale: a transfer, scan or resale step
                None => format!("{} at {}", described(&r.op), e.id),
            })
        })
        .take(5)
        .collect();
    let now = match since.is_empty() {
        true => String::new(),
        false => format!("; since on the new primary: {}", since.join(", ")),
    };
    let what = described(&rec.op);
    format!(
        "{what} was applied to MySQL, then lost in an unplanned failover and could not be re-applied ({why}): undone in MySQL{now}"
    )
}

/// What a lost write was, in words.
fn described(op: &Op) -> String {
    match (op.order(), op.user(), op) {
        (Some((u, t, _)), _, _) => {
            format!("{} of ticket(s) {} by user {u:?}", op.name(), t.value())
        }
        (None, _, Op::Transfer { user, to, tickets }) => format!(
            "transfer of ticket(s) {} from user {user:?} to user {to:?}",
            tickets.value()
        ),
        (None, _, Op::Scan { ticket, gen, .. }) => {
            format!("scan of ticket {ticket} at generation {gen}")
        }
        (None, _, Op::Resold { user, to, tickets }) => format!(
            "resale of ticket(s) {} from user {user:?} to user {to:?}",
            tickets.value()
        ),
        (None, _, Op::Resell { user, tickets } | Op::Unlist { user, tickets }) => format!(
            "{} of ticket(s) {} by user {user:?}",
            op.name(),
            tickets.value()
        ),
        // an entrant's enter or leave
        (None, Some(u), _) => format!("{} of user {u:?}", op.name()),
        (None, None, Op::Allocate { name, tickets, .. }) => format!(
            "allocate of ticket(s) {} to allocation {name:?}",
            tickets.value()
        ),
        (None, None, Op::Release { name, tickets }) => format!(
            "release of ticket(s) {} of allocation {name:?}",
            tickets
                .as_ref()
                .map_or("(none)".into(), |t| t.value().to_string())
        ),
        (_, _, op) => op.name().to_owned(),
    }
}

/// A transfer's conflict names its giver and lowest ticket, a resell's,
/// unlist's or resold's its seller and lowest ticket, a scan's its ticket
/// (the entry's order names neither).
pub(super) fn name_after_sale(c: &mut Conflict, op: &Op) {
    match op {
        Op::Transfer { user, tickets, .. }
        | Op::Resold { user, tickets, .. }
        | Op::Resell { user, tickets }
        | Op::Unlist { user, tickets } => {
            c.user = Some(user.clone());
            c.ticket = Some(tickets.lowest());
        }
        Op::Scan { ticket, .. } => c.ticket = Some(*ticket),
        _ => {}
    }
}

/// How much of `ticket_heal.detail` (TEXT: 65,535 bytes) the list of undone
/// writes may take: a failover that lost a whole burst undoes thousands, and
/// a row too long for its column would fail the heal again and again. Every
/// undone write has its own `lost_in_failover` conflict row besides.
const DETAIL_LIST_CHARS: usize = 16_000;

/// `items` joined by ", " up to about `max` characters, then how many more.
fn listed_up_to(items: &[String], max: usize) -> String {
    let (mut out, mut chars) = (String::new(), 0);
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        chars += item.chars().count() + 2;
        if chars > max {
            let more = items.len() - i;
            out.push_str(&format!(
                "... and {more} more (each a lost_in_failover conflict)"
            ));
            break;
        }
        out.push_str(item);
    }
    out
}

pub(super) fn store_report(tx: &mut Transaction<'_>, event: &str, r: &Report) -> mysql::Result<()> {
    let users: Vec<String> = r
        .undone
        .iter()
        .map(|c| {
            format!(
                "{}:{}",
                c.user.as_deref().unwrap_or("?"),
                c.ticket.unwrap_or(0)
            )
        })
        .collect();
    let detail = format!(
        "undone (user:ticket): [{}]; {} entries of the new primary applied in {} ms",
        listed_up_to(&users, DETAIL_LIST_CHARS),
        r.written,
        r.millis
    );
    tx.exec_drop(
        "INSERT INTO ticket_heal (event_id, diverged_at, offset_before, offset_after, lost, reapplied, undone, detail, healed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, NOW(3))",
        (event, r.diverged_at.to_string(), r.before.to_string(), r.after.to_string(), r.lost as i64, r.reapplied as i64, (r.undone.len() + r.undone_quietly.len()) as i64, detail),
    )
}

/// `reconcile`'s lines about healed events (information, not drift): one
/// per heal of the `events` checked.
pub fn heal_lines(my: &mut impl Queryable, events: &[String]) -> mysql::Result<Vec<String>> {
    type Heal = (
        String,
        String,
        String,
        String,
        i64,
        i64,
        i64,
        String,
        String,
    );
    let rows: Vec<Heal> = my.query(
        "SELECT event_id, diverged_at, offset_before, offset_after, lost, reapplied, undone, detail, CAST(healed_at AS CHAR) FROM ticket_heal ORDER BY id",
    )?;
    Ok(rows
        .into_iter()
        .filter(|h| events.contains(&h.0))
        .map(|(e, d, before, after, lost, re, un, detail, at)| {
            format!("{e}: HEALED at {at} after an unplanned failover (diverged after {d}; MySQL moved from {before} to {after}): {lost} lost applied write(s), {re} re-applied, {un} undone -- {detail}")
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::listed_up_to;

    #[test]
    fn a_long_list_of_undone_writes_is_cut_and_counted() {
        let items: Vec<String> = (0..10_000).map(|i| format!("fan-ü{i}:{i}")).collect();
        let out = listed_up_to(&items, 16_000);
        assert!(
            out.chars().count() < 16_100,
            "{} chars",
            out.chars().count()
        );
        assert!(out.starts_with("fan-ü0:0, fan-ü1:1"), "{out:.40}");
        let shown = out.matches(", ").count();
        assert!(out.ends_with(&format!(
            "and {} more (each a lost_in_failover conflict)",
            10_000 - shown
        )));
        assert_eq!(
            listed_up_to(&items[..3], 16_000),
            "fan-ü0:0, fan-ü1:1, fan-ü2:2"
        );
        assert_eq!(listed_up_to(&[], 16_000), "");
    }
}
