//! The tickets a user has on one side, Redis or MySQL ([`Live`]), and how
//! each side's rows become them.

use std::collections::HashMap;

use crate::model::time::datetime;
use protocol::record::parse_tickets;

/// What one user has, on one side: sold tickets, held tickets and the
/// hold's deadline (unix ms), numbers ascending.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Live {
    pub sold: Vec<i64>,
    pub held: Vec<i64>,
    pub held_until: Option<i64>,
}

impl Live {
    /// E.g. `sold ticket 3`, `held tickets 1,2 until 2030-03-17 17:46:40.000`.
    pub fn describe(&self) -> String {
        let list = |what: &str, v: &[i64]| {
            let s = if v.len() == 1 { "" } else { "s" };
            let n: Vec<String> = v.iter().map(i64::to_string).collect();
            format!("{what} ticket{s} {}", n.join(","))
        };
        let mut parts = Vec::new();
        if !self.sold.is_empty() {
            parts.push(list("sold", &self.sold));
        }
        if !self.held.is_empty() {
            let until = self.held_until.map_or("?".into(), datetime);
            parts.push(format!("{} until {until}", list("held", &self.held)));
        }
        parts.join(" and ")
    }
}

/// Redis's users from the `holders` hash (user -> `n` or `a,b,c`) and the
/// holds zset (user -> deadline ms): a user with a deadline holds, the
/// others bought. The one place that knows how the module stores holds —
/// adjust it here if the module half stores them differently.
pub fn redis_users(
    holders: HashMap<String, String>,
    holds: &HashMap<String, i64>,
) -> HashMap<String, Live> {
    let mut out = HashMap::new();
    for (user, value) in holders {
        // an unparsable value never equals MySQL's: shown as ticket -1
        let tickets = parse_tickets(&value).map_or(vec![-1], |t| t.as_slice().to_vec());
        let live = match holds.get(&user) {
            Some(until) => Live {
                held: tickets,
                held_until: Some(*until),
                ..Live::default()
            },
            None => Live {
                sold: tickets,
                ..Live::default()
            },
        };
        out.insert(user, live);
    }
    out
}

/// Adds the listed tickets buyers hold (`(buyer, ticket, deadline)`) to
/// their held tickets, as Redis counts them.
pub fn add_listing_holds(
    users: &mut HashMap<String, Live>,
    holds: Vec<(String, i64, Option<i64>)>,
) {
    for (buyer, ticket, until) in holds {
        let live = users.entry(buyer).or_default();
        live.held.push(ticket);
        live.held.sort_unstable();
        live.held_until = live.held_until.max(until);
    }
}

/// MySQL's users from live participation rows `(user, ticket, status,
/// held_until ms)`, sorted by ticket.
pub fn mysql_users(rows: Vec<(String, i64, String, Option<i64>)>) -> HashMap<String, Live> {
    let mut out: HashMap<String, Live> = HashMap::new();
    for (user, ticket, status, until) in rows {
        let live = out.entry(user).or_default();
        if status == "held" {
            live.held.push(ticket);
            live.held_until = live.held_until.max(until);
        } else {
            live.sold.push(ticket);
        }
    }
    out
}
