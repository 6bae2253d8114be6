//! `reconcile`'s check of what happened after the sale (docs/design.md
//! "After the sale"): each sold ticket's generation, admitting scan and
//! resale listing in Redis (`ticket:{E}:gens`, only generations above 1;
//! `ticket:{E}:scans`; `ticket:{E}:resale`) against MySQL's live
//! participation rows (`gen`), the scans not lost in a failover
//! (`ticket_scan`) and the live listings (`ticket_listing`, state
//! `listed`). Owners need no check of their own: the users' live tickets
//! are compared already, and so are buyers' holds of listed tickets. [`restored`]: what `rebuild`
//! puts back of it (`TICKET.RESTORE ... AFTER`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use mysql::prelude::Queryable;
use redis::ConnectionLike;

use protocol::keys::{after_key, resale_key};
use protocol::restore_after;

/// Generations above 1, admitting scans' generations and listed tickets'
/// sellers, by ticket.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AfterSale {
    pub gens: BTreeMap<i64, i64>,
    pub scans: BTreeMap<i64, i64>,
    pub listed: BTreeMap<i64, String>,
}

/// Redis's side: a field that is no ticket number (the event's transfer
/// deadline is field 0) is left out; a value that does not parse is -1.
pub fn redis_side(conn: &mut dyn ConnectionLike, event: &str) -> redis::RedisResult<AfterSale> {
    let read = |conn: &mut dyn ConnectionLike, key: String| {
        redis::cmd("HGETALL")
            .arg(key)
            .query::<HashMap<String, String>>(conn)
    };
    let gens = read(conn, after_key(event, false))?;
    let scans = read(conn, after_key(event, true))?;
    let listings = read(conn, resale_key(event))?;
    // a scan is `<at> <gen> <gate>`
    let scan_gen = |v: &str| v.split(' ').nth(1).unwrap_or("").to_owned();
    Ok(AfterSale {
        gens: numbered(gens.into_iter()),
        scans: numbered(scans.into_iter().map(|(t, v)| (t, scan_gen(&v)))),
        listed: sellers(listings.into_iter()),
    })
}

/// A listing is `<seller>` or `<seller>\n<buyer>` (field 0 is a count).
fn sellers(fields: impl Iterator<Item = (String, String)>) -> BTreeMap<i64, String> {
    fields
        .filter_map(|(t, v)| Some((t.parse::<i64>().ok().filter(|t| *t > 0)?, v)))
        .map(|(t, v)| (t, v.split('\n').next().unwrap_or("").to_owned()))
        .collect()
}

fn numbered(fields: impl Iterator<Item = (String, String)>) -> BTreeMap<i64, i64> {
    fields
        .filter_map(|(t, v)| Some((t.parse::<i64>().ok().filter(|t| *t > 0)?, v)))
        .map(|(t, v)| (t, v.parse().unwrap_or(-1)))
        .collect()
}

/// MySQL's side: the live rows' generations above 1, and the scans (not
/// lost) of the live rows at their generation.
pub fn mysql_side(my: &mut impl Queryable, event: &str) -> mysql::Result<AfterSale> {
    let gens: Vec<(i64, i64)> = my.exec(
        "SELECT live_ticket, gen FROM ticket_participation WHERE event_id = ? AND live_ticket IS NOT NULL AND gen > 1",
        (event,),
    )?;
    let scans: Vec<(i64, i64)> = my.exec(
        "SELECT p.live_ticket, s.gen FROM ticket_scan s JOIN ticket_participation p ON p.id = s.participation_id \
         WHERE s.event_id = ? AND s.lost_in_failover = 0 AND p.live_ticket IS NOT NULL AND s.gen = p.gen",
        (event,),
    )?;
    let listed: Vec<(i64, String)> = my.exec(
        "SELECT live_listing, seller FROM ticket_listing WHERE event_id = ? AND live_listing IS NOT NULL",
        (event,),
    )?;
    Ok(AfterSale {
        gens: gens.into_iter().collect(),
        scans: scans.into_iter().collect(),
        listed: listed.into_iter().collect(),
    })
}

/// What `rebuild` restores: the event's transfer deadline, and each live
/// ticket with a generation above 1 or an admitting scan at its
/// generation (not lost in a failover), ascending.
pub fn restored(my: &mut impl Queryable, event: &str) -> mysql::Result<restore_after::AfterSale> {
    let until: Option<Option<i64>> = my.exec_first(
        "SELECT transfer_until FROM ticket_event WHERE event_id = ?",
        (event,),
    )?;
    type Row = (i64, i64, Option<i64>, Option<String>);
    let rows: Vec<Row> = my.exec(
        "SELECT p.live_ticket, p.gen, CAST(ROUND(UNIX_TIMESTAMP(s.scanned_at) * 1000) AS SIGNED), s.gate \
         FROM ticket_participation p LEFT JOIN ticket_scan s ON s.participation_id = p.id AND s.gen = p.gen AND s.lost_in_failover = 0 \
         WHERE p.event_id = ? AND p.live_ticket IS NOT NULL AND (p.gen > 1 OR s.id IS NOT NULL) ORDER BY p.live_ticket",
        (event,),
    )?;
    let tickets = rows
        .into_iter()
        .map(|(ticket, gen, at, gate)| restore_after::Sold {
            ticket,
            gen,
            scan: at.map(|at| (at, gate)),
        })
        .collect();
    Ok(restore_after::AfterSale {
        transfer_until: until.flatten(),
        tickets,
    })
}

/// One line per ticket whose generation, scan or listing differs.
pub fn lines(event: &str, redis: &AfterSale, mysql: &AfterSale) -> Vec<String> {
    let mut out = Vec::new();
    let tickets: BTreeSet<i64> = [&redis.gens, &mysql.gens, &redis.scans, &mysql.scans]
        .iter()
        .flat_map(|m| m.keys().copied())
        .chain(redis.listed.keys().chain(mysql.listed.keys()).copied())
        .collect();
    let listing = |m: &BTreeMap<i64, String>, t| {
        m.get(&t)
            .map_or("not listed".to_owned(), |s| format!("listed by {s:?}"))
    };
    let gen = |m: &BTreeMap<i64, i64>, t| m.get(&t).copied().unwrap_or(1);
    let scan = |m: &BTreeMap<i64, i64>, t| {
        m.get(&t).map_or("not scanned".to_owned(), |g| {
            format!("scanned at generation {g}")
        })
    };
    for t in tickets {
        let (a, b) = (gen(&redis.gens, t), gen(&mysql.gens, t));
        if a != b {
            out.push(format!(
                "{event}: ticket {t} is generation {a} in Redis but {b} in MySQL"
            ));
        }
        if redis.scans.get(&t) != mysql.scans.get(&t) {
            out.push(format!(
                "{event}: ticket {t} is {} in Redis but {} in MySQL",
                scan(&redis.scans, t),
                scan(&mysql.scans, t)
            ));
        }
        if redis.listed.get(&t) != mysql.listed.get(&t) {
            out.push(format!(
                "{event}: ticket {t} is {} in Redis but {} in MySQL",
                listing(&redis.listed, t),
                listing(&mysql.listed, t)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(gens: &[(i64, i64)], scans: &[(i64, i64)]) -> AfterSale {
        AfterSale {
            gens: gens.iter().copied().collect(),
            scans: scans.iter().copied().collect(),
            listed: BTreeMap::new(),
        }
    }

    #[test]
    fn listings_are_compared_by_ticket_and_seller() {
        let fields = [("0", "1"), ("4", "s1\nbuyer"), ("6", "s2"), ("x", "s3")];
        let redis = AfterSale {
            listed: sellers(fields.iter().map(|(a, b)| (a.to_string(), b.to_string()))),
            ..AfterSale::default()
        };
        assert_eq!(
            redis.listed,
            [(4, "s1".to_owned()), (6, "s2".to_owned())]
                .into_iter()
                .collect()
        );
        assert!(lines("e", &redis, &redis.clone()).is_empty());
        let mysql = AfterSale {
            listed: [(4, "s1".to_owned()), (7, "s9".to_owned())]
                .into_iter()
                .collect(),
            ..AfterSale::default()
        };
        assert_eq!(
            lines("e", &redis, &mysql),
            [
                "e: ticket 6 is listed by \"s2\" in Redis but not listed in MySQL",
                "e: ticket 7 is not listed in Redis but listed by \"s9\" in MySQL",
            ]
        );
    }

    #[test]
    fn generations_and_scans_are_compared_per_ticket() {
        let a = side(&[(3, 2)], &[(3, 2), (5, 1)]);
        assert!(lines("e", &a, &a.clone()).is_empty());
        let b = side(&[(3, 3), (4, 2)], &[(3, 2)]);
        assert_eq!(
            lines("e", &a, &b),
            [
                "e: ticket 3 is generation 2 in Redis but 3 in MySQL",
                "e: ticket 4 is generation 1 in Redis but 2 in MySQL",
                "e: ticket 5 is scanned at generation 1 in Redis but not scanned in MySQL",
            ]
        );
    }

    #[test]
    fn field_zero_and_odd_values_are_not_tickets_or_generations() {
        let fields = [("0", "99"), ("7", "2"), ("x", "3"), ("8", "two")];
        let m = numbered(fields.iter().map(|(a, b)| (a.to_string(), b.to_string())));
        assert_eq!(m, [(7, 2), (8, -1)].into_iter().collect());
    }
}
