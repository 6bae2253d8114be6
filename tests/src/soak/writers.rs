//! The soak's writers: each thread owns its users of one event and sends
//! them claims, confirms, cancels, waits and leaves chosen by its seeded
//! RNG from what it believes each user holds, each write followed by
//! `WAIT 1 <timeout>`, and records every operation in its history. On a
//! connection error it reconnects to the current primary. On the seated
//! event, partner users ([`partners`]) claim `FROM` their allocation (through
//! the [`Gate`], when it is on).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::{Connection, RedisError, Value};

use super::gate::Gate;
use super::history::{Kind, Op, Reply};
use super::partners::{self, partner_of};
use super::rng::Rng;
use super::seated;
use super::topology::{connect, PrimaryAddress};

/// How long `WAIT 1` waits for the replica: short, so that a writer goes
/// on writing (unacknowledged) to a primary cut off from its replica.
const WAIT_MS: u64 = 300;

/// The three kinds of sale the soak runs at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sale {
    /// Claims are final sales (LIMIT 1).
    Plain,
    /// Claims hold (LIMIT 2): confirm, cancel, or let expire.
    Holds,
    /// Few tickets, a waiting list (OFFER), held claims.
    WaitingList,
    /// A seated venue: parties of 1-4 (LIMIT 4) held, best available
    /// together or picked ([`seated`]).
    Seated,
}

/// One event of the soak.
#[derive(Debug, Clone)]
pub struct EventSpec {
    pub name: &'static str,
    pub sale: Sale,
    pub total: i64,
    /// The event's default hold (0: final sales).
    pub hold_ms: i64,
    pub offer_ms: i64,
}

impl EventSpec {
    /// `TICKET.INIT` arguments after the event id.
    pub fn init_args(&self) -> Vec<String> {
        let limit = match self.sale {
            Sale::Holds => 2,
            Sale::Seated => 4,
            Sale::Plain | Sale::WaitingList => 1,
        };
        let mut args = vec![self.total.to_string(), "LIMIT".into(), limit.to_string()];
        if self.sale == Sale::Seated {
            args.extend(["SEATS".into(), seated::layout()]);
        }
        if self.hold_ms > 0 {
            args.extend(["HOLD".into(), self.hold_ms.to_string()]);
        }
        if self.offer_ms > 0 {
            args.extend(["OFFER".into(), self.offer_ms.to_string()]);
        }
        args
    }
}

/// The soak's events: plain, holds with LIMIT 2, a waiting list, seats.
pub fn events() -> Vec<EventSpec> {
    vec![
        EventSpec {
            name: "soak-plain",
            sale: Sale::Plain,
            total: 120,
            hold_ms: 0,
            offer_ms: 0,
        },
        EventSpec {
            name: "soak-holds",
            sale: Sale::Holds,
            total: 150,
            hold_ms: 600_000,
            offer_ms: 0,
        },
        EventSpec {
            name: "soak-wait",
            sale: Sale::WaitingList,
            total: 30,
            hold_ms: 600_000,
            offer_ms: 1_500,
        },
        EventSpec {
            name: "soak-seats",
            sale: Sale::Seated,
            total: seated::TOTAL,
            hold_ms: 600_000,
            offer_ms: 0,
        },
    ]
}

/// What a writer believes one of its users holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Belief {
    Nothing,
    Held,
    Sold,
    Waiting,
    /// After an unknown outcome or a surprising refusal: read it first.
    Unsure,
}

/// A short-hold claim, so that some holds expire.
const SHORT_HOLD_MS: i64 = 1_000;

/// One writer thread's state.
pub struct Writer {
    event: EventSpec,
    users: Vec<String>,
    beliefs: HashMap<String, Belief>,
    rng: Rng,
    address: PrimaryAddress,
    conn: Option<Connection>,
    gate: Gate,
    pub history: Vec<Op>,
}

impl Writer {
    pub fn new(
        event: EventSpec,
        id: usize,
        users: usize,
        rng: Rng,
        address: PrimaryAddress,
    ) -> Writer {
        let name = |u| match event.sale {
            Sale::Seated => partners::user_name(id, u),
            _ => format!("w{id}-u{u}"),
        };
        let users: Vec<String> = (0..users).map(name).collect();
        let beliefs = users.iter().map(|u| (u.clone(), Belief::Nothing)).collect();
        Writer {
            event,
            users,
            beliefs,
            rng,
            address,
            conn: None,
            gate: Gate::default(),
            history: Vec::new(),
        }
    }

    /// Sends its partner users' operations through `gate`.
    pub fn gated(mut self, gate: Gate) -> Writer {
        self.gate = gate;
        self
    }

    /// Writes until `stop` or `deadline`; then, on a waiting-list event, has
    /// every user leave the list (so offers stop cascading) for up to 20 s.
    pub fn run(mut self, stop: &AtomicBool, deadline: Instant) -> Vec<Op> {
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            self.step();
        }
        if self.event.sale == Sale::WaitingList {
            self.leave_all(Instant::now() + Duration::from_secs(20));
        }
        self.history
    }

    fn leave_all(&mut self, deadline: Instant) {
        let users = self.users.clone();
        for user in users {
            while Instant::now() < deadline {
                let op = self.send(&user, Kind::Leave, Belief::Waiting);
                if !matches!(op, Some(Reply::Unknown(_)) | None) {
                    break;
                }
            }
        }
    }

    fn step(&mut self) {
        let user = self.rng.pick(&self.users).clone();
        let mut belief = self.beliefs[&user];
        if belief == Belief::Unsure {
            match self.read_belief(&user) {
                Some(b) => belief = b,
                None => return,
            }
            self.beliefs.insert(user.clone(), belief);
        }
        if let Some(kind) = self.choose(belief, partner_of(&user).is_some()) {
            self.send(&user, kind, belief);
        }
    }

    /// The next operation for a user believed in `belief`, or none (wait).
    /// A partner's user never cancels a sale (those tickets would go to
    /// public sale, out of its allocation).
    fn choose(&mut self, belief: Belief, partner: bool) -> Option<Kind> {
        let r = self.rng.below(100);
        let sale = self.event.sale;
        match belief {
            Belief::Nothing if sale == Sale::WaitingList && r < 60 => Some(Kind::Wait),
            Belief::Nothing => Some(self.claim(partner)),
            Belief::Held if sale == Sale::Plain => Some(Kind::Cancel),
            // A partner's hold mostly goes back to its allocation.
            Belief::Held if partner => match r {
                0..=9 => Some(Kind::Confirm),
                10..=69 => Some(Kind::Cancel),
                _ => None,
            },
            Belief::Held => [Kind::Confirm, Kind::Cancel]
                .get((r / 40) as usize)
                .cloned(),
            Belief::Sold => (r < 40 && !partner).then_some(Kind::Cancel),
            Belief::Waiting => match r {
                0..=49 => Some(Kind::Confirm),
                50..=64 => Some(Kind::Leave),
                _ => None,
            },
            Belief::Unsure => None,
        }
    }

    /// A claim; a partner's: 1-2 best seats of its allocation (never a
    /// short hold when the gate is on: its expiry would pass no gate).
    fn claim(&mut self, partner: bool) -> Kind {
        let (count, seats) = match self.event.sale {
            Sale::Holds => (self.rng.between(1, 2) as i64, None),
            Sale::Seated if partner => (self.rng.between(1, partners::PARTY as u64) as i64, None),
            Sale::Seated => seated::party(&mut self.rng),
            Sale::Plain | Sale::WaitingList => (1, None),
        };
        let short =
            self.event.hold_ms > 0 && !(partner && self.gate.is_on()) && self.rng.percent(25);
        Kind::Claim {
            count,
            hold_ms: short.then_some(SHORT_HOLD_MS),
            seats,
        }
    }

    fn connection(&mut self) -> Option<&mut Connection> {
        if self.conn.is_none() {
            match connect(&self.address.get()) {
                Ok(c) => self.conn = Some(c),
                Err(_) => {
                    sleep(Duration::from_millis(100));
                    return None;
                }
            }
        }
        self.conn.as_mut()
    }

    /// Sends one operation, WAITs if it wrote, records it; returns the reply.
    fn send(&mut self, user: &str, kind: Kind, belief: Belief) -> Option<Reply> {
        let event = self.event.name;
        let gate = self.gate.clone();
        let partner = self.event.sale == Sale::Seated && partner_of(user).is_some();
        let pass = match partner.then(|| gate.try_pass()) {
            Some(Err(())) => return None, // shut: a fault strikes
            Some(Ok(pass)) => pass,
            None => None,
        };
        let sent_ms = now_ms();
        let conn = self.connection()?;
        let result = command(event, user, &kind).query::<Value>(conn);
        let answered_ms = now_ms();
        let reply = interpret(&kind, result);
        let wrote = wrote(&kind, &reply, belief);
        let acked = wrote && acknowledge(conn, pass.is_some());
        // A lost connection, or a node that is no primary any more: the
        // next operation connects to the current primary.
        if matches!(&reply, Reply::Unknown(_))
            || matches!(&reply, Reply::Refused(c) if c == "READONLY")
        {
            self.conn = None;
        }
        let expires_from_ms = self.expiry(&kind, &reply, sent_ms);
        self.beliefs
            .insert(user.to_owned(), next_belief(&self.event, belief, &reply));
        self.history.push(Op {
            event: event.to_owned(),
            user: user.to_owned(),
            kind,
            reply: reply.clone(),
            wrote,
            acked,
            sent_ms,
            answered_ms,
            expires_from_ms,
        });
        Some(reply)
    }

    /// From when the order an operation made may have expired.
    fn expiry(&self, kind: &Kind, reply: &Reply, sent_ms: i64) -> Option<i64> {
        match (kind, reply) {
            (Kind::Claim { hold_ms, .. }, _) if self.event.hold_ms > 0 => {
                Some(sent_ms + hold_ms.unwrap_or(self.event.hold_ms))
            }
            (Kind::Wait, Reply::Position(0)) => Some(sent_ms + self.event.offer_ms),
            _ => None,
        }
    }

    /// Reads what the user holds (ORDER, POSITION); none if unreachable.
    fn read_belief(&mut self, user: &str) -> Option<Belief> {
        let event = self.event.name;
        let conn = self.connection()?;
        let read = redis::pipe()
            .cmd("TICKET.ORDER")
            .arg(event)
            .arg(user)
            .cmd("TICKET.POSITION")
            .arg(event)
            .arg(user)
            .query::<(Value, Option<i64>)>(conn);
        match read {
            Ok((order, position)) => Some(match super::state::parse_order(&order) {
                Some((_, super::history::OrderState::Held)) => Belief::Held,
                Some((_, super::history::OrderState::Sold)) => Belief::Sold,
                None if position.is_some() => Belief::Waiting,
                None => Belief::Nothing,
            }),
            Err(_) => {
                self.conn = None;
                None
            }
        }
    }
}

fn command(event: &str, user: &str, kind: &Kind) -> redis::Cmd {
    let name = match kind {
        Kind::Claim { .. } => "TICKET.CLAIM",
        Kind::Confirm => "TICKET.CONFIRM",
        Kind::Cancel => "TICKET.CANCEL",
        Kind::Wait => "TICKET.WAIT",
        Kind::Leave => "TICKET.LEAVE",
    };
    let mut cmd = redis::cmd(name);
    cmd.arg(event).arg(user);
    if let Kind::Claim {
        count,
        hold_ms,
        seats,
    } = kind
    {
        if let Some(ms) = hold_ms {
            cmd.arg("HOLD").arg(*ms);
        }
        if let Some(p) = partner_of(user) {
            cmd.arg("FROM").arg(p.name);
            if let Some(key) = p.key {
                cmd.arg("KEY").arg(key);
            }
        }
        match seats {
            Some(ids) => cmd.arg("SEATS").arg(ids),
            None => cmd.arg("COUNT").arg(*count),
        };
    }
    cmd
}

/// The reply as history data: an error code is a refusal, a lost
/// connection an unknown outcome.
fn interpret(kind: &Kind, result: redis::RedisResult<Value>) -> Reply {
    let value = match result {
        Ok(v) => v,
        Err(e) => return refusal_or_unknown(&e),
    };
    let int = |v: &Value| match v {
        Value::Int(n) => Some(*n),
        _ => None,
    };
    let parsed = match (kind, &value) {
        (Kind::Claim { .. }, Value::Array(items)) => items
            .iter()
            .map(int)
            .collect::<Option<Vec<i64>>>()
            .map(Reply::Tickets),
        (Kind::Confirm, v) => int(v).map(Reply::Sold),
        (Kind::Cancel, Value::Nil) => Some(Reply::Returned(None)),
        (Kind::Cancel, v) => int(v).map(|t| Reply::Returned(Some(t))),
        (Kind::Wait, v) => int(v).map(Reply::Position),
        (Kind::Leave, v) => int(v).map(|n| Reply::Left(n == 1)),
        _ => None,
    };
    parsed.unwrap_or_else(|| Reply::Unknown(format!("unexpected reply {value:?}")))
}

/// An error reply: a refusal (its code), or an unknown outcome.
pub fn refusal_or_unknown(e: &RedisError) -> Reply {
    if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal() {
        return Reply::Unknown(e.to_string());
    }
    match e.code() {
        Some(code) => Reply::Refused(code.to_owned()),
        None => Reply::Unknown(e.to_string()),
    }
}

/// Whether the reply says the command changed something, given what the
/// writer believed before (a repeat claim or wait changes nothing).
fn wrote(kind: &Kind, reply: &Reply, before: Belief) -> bool {
    match (kind, reply) {
        (Kind::Claim { .. }, Reply::Tickets(_)) => before == Belief::Nothing,
        (Kind::Confirm, Reply::Sold(_)) => matches!(before, Belief::Held | Belief::Waiting),
        (Kind::Cancel, Reply::Returned(t)) => t.is_some(),
        (Kind::Wait, Reply::Position(_)) => before == Belief::Nothing,
        (Kind::Leave, Reply::Left(left)) => *left,
        _ => false,
    }
}

fn next_belief(event: &EventSpec, before: Belief, reply: &Reply) -> Belief {
    match reply {
        Reply::Tickets(_) if event.hold_ms > 0 => Belief::Held,
        Reply::Tickets(_) | Reply::Sold(_) => Belief::Sold,
        Reply::Returned(_) => Belief::Nothing,
        Reply::Position(0) => Belief::Held,
        Reply::Position(_) => Belief::Waiting,
        Reply::Left(true) => Belief::Nothing,
        Reply::Left(false) | Reply::Released(_) => Belief::Unsure,
        Reply::Refused(code) => match code.as_str() {
            // an allocation sold out, or released and gone
            "SOLDOUT" | "NOALLOCATION" => Belief::Nothing,
            code if seated::refused_for_seats(code) => Belief::Nothing,
            "NOHOLD" if before == Belief::Waiting => Belief::Waiting,
            "NOHOLD" => Belief::Nothing,
            "READONLY" | "TRYAGAIN" | "LOADING" | "MASTERDOWN" => before,
            _ => Belief::Unsure,
        },
        Reply::Unknown(_) => Belief::Unsure,
    }
}

/// `WAIT 1 <WAIT_MS>` on the connection that wrote: true when a replica
/// has it; when `patient`, again until one has, for up to 10 s.
pub fn acknowledge(conn: &mut Connection, patient: bool) -> bool {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if wait_replica(conn, WAIT_MS) {
            return true;
        }
        if !patient || Instant::now() >= end {
            return false;
        }
        sleep(Duration::from_millis(50));
    }
}

/// `WAIT 1 <ms>` on the connection that wrote: true when a replica has it.
pub fn wait_replica(conn: &mut Connection, ms: u64) -> bool {
    redis::cmd("WAIT")
        .arg(1)
        .arg(ms)
        .query::<i64>(conn)
        .is_ok_and(|n| n >= 1)
}

/// Unix time in ms.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
