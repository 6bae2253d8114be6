//! The soak's door (issue 43): on an event of its own, sold out before the
//! faults begin, fans give tickets to friends (`TICKET.TRANSFER`), list
//! them for resale and take them back (`TICKET.RESELL`, `TICKET.UNLIST`)
//! and gates scan them (`TICKET.SCAN`) amid the faults, each write
//! followed by `WAIT 1`. At the end [`check`] asks Redis whether an
//! acknowledged scan, transfer or listing was taken back (a heal may
//! re-apply or undo only what no replica had); `reconcile` then compares
//! owners, generations, scans and listings with MySQL.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::{Connection, Value};

use super::rng::Rng;
use super::topology::{connect, PrimaryAddress};
use super::writers::{acknowledge, refusal_or_unknown, wait_replica};

/// The door's event: general admission, one ticket per fan.
pub const EVENT: &str = "soak-door";

/// Its tickets, all sold before the faults: fan `f<n>` buys ticket `n`.
pub const TICKETS: i64 = 200;

/// Gates the scanners stand at.
const GATES: [&str; 4] = ["north", "south", "east", "west"];

/// How long `WAIT 1` waits after a door write.
const WAIT_MS: u64 = 300;

/// One door operation on one ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `TICKET.TRANSFER E from to TICKETS ticket`.
    Transfer { from: String, to: String },
    /// `TICKET.SCAN E ticket gen GATE gate`.
    Scan { gen: i64, gate: &'static str },
    /// `TICKET.RESELL E owner TICKETS ticket`.
    Resell { owner: String },
    /// `TICKET.UNLIST E owner TICKETS ticket`.
    Unlist { owner: String },
}

/// What a door operation got back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// A transfer moved the ticket, or a scan admitted it.
    Done,
    Refused(String),
    /// No answer (a lost connection): it may or may not have happened.
    Unknown(String),
}

/// One operation, its answer, and whether `WAIT 1` acknowledged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoorOp {
    pub ticket: i64,
    pub action: Action,
    pub answer: Answer,
    pub acked: bool,
}

/// What the door believes of a ticket: its owner and generation, whether
/// it was admitted or is listed for resale, and whether an unknown outcome
/// left it unsure (then the door leaves it alone).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Belief {
    owner: String,
    gen: i64,
    scanned: bool,
    listed: bool,
    unsure: bool,
}

/// The door: its beliefs and everything it sent.
pub struct Door {
    address: PrimaryAddress,
    rng: Rng,
    beliefs: BTreeMap<i64, Belief>,
    pub ops: Vec<DoorOp>,
}

impl Door {
    pub fn new(address: PrimaryAddress, rng: Rng) -> Door {
        Door {
            address,
            rng,
            beliefs: BTreeMap::new(),
            ops: Vec::new(),
        }
    }

    /// Creates the event and sells every ticket (fan `f<n>` ticket `n`);
    /// panics unless the replica acknowledges it.
    pub fn before_sale(&mut self) {
        let mut c = connect(&self.address.get()).expect("connect to the soak's primary");
        let init: redis::RedisResult<()> = redis::cmd("TICKET.INIT")
            .arg(EVENT)
            .arg(TICKETS)
            .query(&mut c);
        init.unwrap_or_else(|e| panic!("TICKET.INIT {EVENT}: {e}"));
        for n in 1..=TICKETS {
            let fan = format!("f{n}");
            let got: i64 = redis::cmd("TICKET.CLAIM")
                .arg(EVENT)
                .arg(&fan)
                .query(&mut c)
                .unwrap_or_else(|e| panic!("TICKET.CLAIM {EVENT} {fan}: {e}"));
            assert_eq!(got, n, "the door's fans buy in order");
            self.beliefs.insert(
                n,
                Belief {
                    owner: fan,
                    gen: 1,
                    scanned: false,
                    listed: false,
                    unsure: false,
                },
            );
        }
        assert!(
            acknowledge(&mut c, true),
            "the replica did not acknowledge the door's sale"
        );
    }

    /// Transfers, scans and listings, one every 20-60 ms, until `stop` or
    /// `deadline`; returns everything it sent. A listed ticket is only
    /// ever taken back (a transfer or scan of it would be refused).
    pub fn during_sale(mut self, stop: &AtomicBool, deadline: Instant) -> Vec<DoorOp> {
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            sleep(Duration::from_millis(self.rng.between(20, 60)));
            let ticket = 1 + self.rng.below(TICKETS as u64) as i64;
            let Some(b) = self
                .beliefs
                .get(&ticket)
                .filter(|b| !b.unsure && !b.scanned)
            else {
                continue;
            };
            let owner = b.owner.clone();
            let action = match (b.listed, self.rng.below(100)) {
                (true, 0..30) => Action::Unlist { owner },
                (true, _) => continue,
                (false, 0..10) => Action::Scan {
                    gen: b.gen,
                    gate: GATES[self.rng.below(GATES.len() as u64) as usize],
                },
                (false, 10..20) => Action::Resell { owner },
                (false, _) => Action::Transfer {
                    from: owner,
                    to: format!("f{ticket}-{}", self.ops.len()),
                },
            };
            self.send(ticket, action);
        }
        self.ops
    }

    /// Sends one operation on `ticket`, WAITs if it wrote, records it and
    /// updates the belief.
    fn send(&mut self, ticket: i64, action: Action) {
        let mut conn = match connect(&self.address.get()) {
            Ok(c) => c,
            Err(_) => return sleep(Duration::from_millis(100)),
        };
        let answer = answer(command(ticket, &action).query::<Value>(&mut conn));
        let acked = answer == Answer::Done && wait_replica(&mut conn, WAIT_MS);
        if let Some(b) = self.beliefs.get_mut(&ticket) {
            match (&answer, &action) {
                (Answer::Done, Action::Transfer { to, .. }) => {
                    b.owner = to.clone();
                    b.gen += 1;
                }
                (Answer::Done, Action::Scan { .. }) => b.scanned = true,
                (Answer::Done, Action::Resell { .. }) => b.listed = true,
                (Answer::Done, Action::Unlist { .. }) => b.listed = false,
                (Answer::Unknown(_), _) => b.unsure = true,
                (Answer::Refused(_), _) => {}
            }
        }
        self.ops.push(DoorOp {
            ticket,
            action,
            answer,
            acked,
        });
    }
}

fn command(ticket: i64, action: &Action) -> redis::Cmd {
    match action {
        Action::Transfer { from, to } => {
            let mut cmd = redis::cmd("TICKET.TRANSFER");
            cmd.arg(EVENT).arg(from).arg(to).arg("TICKETS").arg(ticket);
            cmd
        }
        Action::Scan { gen, gate } => {
            let mut cmd = redis::cmd("TICKET.SCAN");
            cmd.arg(EVENT).arg(ticket).arg(*gen).arg("GATE").arg(*gate);
            cmd
        }
        Action::Resell { owner } | Action::Unlist { owner } => {
            let name = match action {
                Action::Resell { .. } => "TICKET.RESELL",
                _ => "TICKET.UNLIST",
            };
            let mut cmd = redis::cmd(name);
            cmd.arg(EVENT).arg(owner).arg("TICKETS").arg(ticket);
            cmd
        }
    }
}

fn answer(result: redis::RedisResult<Value>) -> Answer {
    match result {
        Ok(Value::Int(1) | Value::Okay) => Answer::Done,
        Ok(Value::SimpleString(s)) if s == "OK" => Answer::Done,
        Ok(other) => Answer::Unknown(format!("unexpected reply {other:?}")),
        Err(e) => match refusal_or_unknown(&e) {
            super::history::Reply::Refused(code) => Answer::Refused(code),
            _ => Answer::Unknown(e.to_string()),
        },
    }
}

/// A ticket as Redis ends: its owner (None: nobody holds it), generation,
/// and whether it was scanned or is listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub owner: Option<String>,
    pub gen: i64,
    pub scanned: bool,
    pub listed: bool,
}

/// Reads every door ticket from Redis (`ORDER` of each user the history
/// names, `ticket:{E}:gens`, `ticket:{E}:scans`, `ticket:{E}:resale`).
pub fn read_end(
    conn: &mut Connection,
    ops: &[DoorOp],
) -> redis::RedisResult<BTreeMap<i64, Ticket>> {
    let gens: BTreeMap<i64, i64> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{EVENT}}}:gens"))
        .query(conn)?;
    let scans: BTreeMap<i64, String> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{EVENT}}}:scans"))
        .query(conn)?;
    // field 0 counts buyers' holds; every other field is a listed ticket
    let listed: BTreeMap<i64, String> = redis::cmd("HGETALL")
        .arg(format!("ticket:{{{EVENT}}}:resale"))
        .query(conn)?;
    let mut end: BTreeMap<i64, Ticket> = (1..=TICKETS)
        .map(|t| {
            let ticket = Ticket {
                owner: None,
                gen: gens.get(&t).copied().unwrap_or(1),
                scanned: scans.contains_key(&t),
                listed: listed.contains_key(&t),
            };
            (t, ticket)
        })
        .collect();
    for user in users(ops) {
        let held: Value = redis::cmd("TICKET.HOLDER")
            .arg(EVENT)
            .arg(&user)
            .query(conn)?;
        for t in tickets_of(&held) {
            if let Some(ticket) = end.get_mut(&t) {
                ticket.owner = Some(user.clone());
            }
        }
    }
    Ok(end)
}

/// The tickets a `HOLDER` reply names: one number, an array, or nil.
fn tickets_of(held: &Value) -> Vec<i64> {
    match held {
        Value::Int(t) => vec![*t],
        Value::Array(items) => items
            .iter()
            .filter_map(|v| match v {
                Value::Int(t) => Some(*t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// Every fan the door's history names (the first owners included).
pub fn users(ops: &[DoorOp]) -> Vec<String> {
    let mut users: Vec<String> = (1..=TICKETS).map(|n| format!("f{n}")).collect();
    for op in ops {
        if let Action::Transfer { to, .. } = &op.action {
            users.push(to.clone());
        }
    }
    users
}

/// The violations of the door's history against Redis's end: an
/// acknowledged scan must have left its ticket scanned; an acknowledged
/// transfer's generation must not have gone back; and a ticket whose
/// writes were all acknowledged ends exactly as the last of them left it
/// (owner, generation, scan and listing).
pub fn check(ops: &[DoorOp], end: &BTreeMap<i64, Ticket>) -> Vec<String> {
    let mut out = Vec::new();
    for (ticket, mine) in by_ticket(ops) {
        let Some(have) = end.get(&ticket) else {
            out.push(format!("door: ticket {ticket} missing at the end"));
            continue;
        };
        let mut want = Ticket {
            owner: Some(format!("f{ticket}")),
            gen: 1,
            scanned: false,
            listed: false,
        };
        let mut all_acked = true;
        for op in mine {
            let wrote = matches!(op.answer, Answer::Done);
            all_acked &= op.acked || matches!(op.answer, Answer::Refused(_));
            if !wrote {
                continue;
            }
            match &op.action {
                Action::Transfer { to, .. } => {
                    want.owner = Some(to.clone());
                    want.gen += 1;
                }
                Action::Scan { .. } => want.scanned = true,
                Action::Resell { .. } => want.listed = true,
                Action::Unlist { .. } => want.listed = false,
            }
            if !op.acked {
                continue;
            }
            if have.gen < want.gen {
                out.push(format!(
                    "door: ticket {ticket}: acknowledged {:?} left generation {}, Redis ends at {}",
                    op.action, want.gen, have.gen
                ));
            }
            if want.scanned && !have.scanned {
                out.push(format!(
                    "door: ticket {ticket}: an acknowledged scan was taken back ({:?})",
                    op.action
                ));
            }
        }
        if all_acked && *have != want {
            out.push(format!(
                "door: ticket {ticket}: every write acknowledged, yet Redis ends {have:?}, not {want:?}"
            ));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn by_ticket(ops: &[DoorOp]) -> BTreeMap<i64, Vec<&DoorOp>> {
    let mut map: BTreeMap<i64, Vec<&DoorOp>> = (1..=TICKETS).map(|t| (t, Vec::new())).collect();
    for op in ops {
        map.entry(op.ticket).or_default().push(op);
    }
    map
}

/// A line for the report: how many of each write were acknowledged.
pub fn summary(ops: &[DoorOp]) -> String {
    let count = |kind: fn(&Action) -> bool, acked: bool| {
        ops.iter()
            .filter(|o| kind(&o.action))
            .filter(|o| o.answer == Answer::Done && o.acked == acked)
            .count()
    };
    let transfer: fn(&Action) -> bool = |a| matches!(a, Action::Transfer { .. });
    let scan: fn(&Action) -> bool = |a| matches!(a, Action::Scan { .. });
    let listing: fn(&Action) -> bool =
        |a| matches!(a, Action::Resell { .. } | Action::Unlist { .. });
    format!(
        "door: transfers acked {}, unacked {}; scans acked {}, unacked {}; resells and unlists acked {}, unacked {}; unknown {}",
        count(transfer, true),
        count(transfer, false),
        count(scan, true),
        count(scan, false),
        count(listing, true),
        count(listing, false),
        ops.iter()
            .filter(|o| matches!(o.answer, Answer::Unknown(_)))
            .count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(ticket: i64, action: Action, answer: Answer, acked: bool) -> DoorOp {
        DoorOp {
            ticket,
            action,
            answer,
            acked,
        }
    }

    fn give(to: &str) -> Action {
        Action::Transfer {
            from: "x".into(),
            to: to.into(),
        }
    }

    fn scan(gen: i64) -> Action {
        Action::Scan { gen, gate: "north" }
    }

    fn end(owner: &str, gen: i64, scanned: bool) -> BTreeMap<i64, Ticket> {
        let mut m: BTreeMap<i64, Ticket> = (1..=TICKETS)
            .map(|t| {
                let first = Ticket {
                    owner: Some(format!("f{t}")),
                    gen: 1,
                    scanned: false,
                    listed: false,
                };
                (t, first)
            })
            .collect();
        m.insert(
            1,
            Ticket {
                owner: Some(owner.into()),
                gen,
                scanned,
                listed: false,
            },
        );
        m
    }

    #[test]
    fn acknowledged_writes_must_stand() {
        let ops = [
            op(1, give("a"), Answer::Done, true),
            op(1, scan(2), Answer::Done, true),
        ];
        assert!(check(&ops, &end("a", 2, true)).is_empty());
        assert_eq!(check(&ops, &end("a", 2, false)).len(), 2, "scan taken back");
        assert!(
            !check(&ops, &end("f1", 1, false)).is_empty(),
            "transfer taken back"
        );
    }

    #[test]
    fn an_unacknowledged_write_may_go_either_way() {
        let ops = [
            op(1, give("a"), Answer::Done, true),
            op(1, give("b"), Answer::Done, false),
        ];
        assert!(check(&ops, &end("a", 2, false)).is_empty());
        assert!(check(&ops, &end("b", 3, false)).is_empty());
        assert!(!check(&ops, &end("f1", 1, false)).is_empty());
    }

    #[test]
    fn an_acknowledged_listing_must_stand() {
        let resell = || Action::Resell { owner: "f1".into() };
        let unlist = || Action::Unlist { owner: "f1".into() };
        let listed = |yes: bool| {
            let mut m = end("f1", 1, false);
            if let Some(t) = m.get_mut(&1) {
                t.listed = yes;
            }
            m
        };
        let ops = [op(1, resell(), Answer::Done, true)];
        assert!(check(&ops, &listed(true)).is_empty());
        assert!(
            !check(&ops, &listed(false)).is_empty(),
            "listing taken back"
        );
        let ops = [
            op(1, resell(), Answer::Done, true),
            op(1, unlist(), Answer::Done, true),
        ];
        assert!(check(&ops, &listed(false)).is_empty());
        assert!(!check(&ops, &listed(true)).is_empty(), "unlist taken back");
        let ops = [
            op(1, resell(), Answer::Done, true),
            op(1, unlist(), Answer::Done, false),
        ];
        assert!(
            check(&ops, &listed(true)).is_empty(),
            "an unacked unlist may be lost"
        );
        assert!(check(&ops, &listed(false)).is_empty());
    }

    #[test]
    fn refusals_and_untouched_tickets_change_nothing() {
        let ops = [op(1, scan(1), Answer::Refused("USED".into()), false)];
        assert!(check(&ops, &end("f1", 1, false)).is_empty());
        assert!(!check(&ops, &end("f1", 1, true)).is_empty());
        let mut moved = end("f1", 1, false);
        moved.insert(
            2,
            Ticket {
                owner: None,
                gen: 1,
                scanned: false,
                listed: false,
            },
        );
        assert!(!check(&[], &moved).is_empty(), "an untouched ticket lost");
    }
}
