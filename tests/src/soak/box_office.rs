//! The soak's box office (issue 42): before the sale it allocates the
//! seated event's partner and house seats ([`partners::before_sale`]),
//! each acknowledged by `WAIT 1`; during it, amid the faults, it releases
//! two house seats by id, allocates more free seats (`late`) and then in
//! turn releases one of them by count and allocates another ([`plan`]);
//! and whenever the nemesis has just cut the replica off before killing
//! the primary, it allocates one more free seat to `late` at once (an
//! operation the failover loses after the sidecar applied it: the heal's
//! to undo). Each operation is recorded for the checker
//! ([`super::alloc_check`]). With the [`Gate`] on, each passes it
//! and is acknowledged before the next fault, and the box office holds the
//! gate over the fan club's timed release.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::Value;

use super::gate::Gate;
use super::history::{Book, BookOp, Reply};
use super::partners::{self, HOUSE, LATE};
use super::topology::{connect, PrimaryAddress};
use super::writers::{acknowledge, now_ms, refusal_or_unknown, wait_replica};

/// How long `WAIT 1` waits after a box-office write during the sale.
const WAIT_MS: u64 = 300;

/// Refusals that wrote nothing and may pass: the node is no primary (yet).
fn transient(code: &str) -> bool {
    matches!(code, "READONLY" | "LOADING" | "TRYAGAIN" | "MASTERDOWN")
}

/// What the box office did (it connects to the current primary for each
/// operation: a connection kept across a fault would make its next
/// outcome unknown for nothing).
pub struct BoxOffice {
    event: &'static str,
    address: PrimaryAddress,
    gate: Gate,
    pub ops: Vec<BookOp>,
}

impl BoxOffice {
    pub fn new(event: &'static str, address: PrimaryAddress, gate: Gate) -> BoxOffice {
        BoxOffice {
            event,
            address,
            gate,
            ops: Vec::new(),
        }
    }

    /// Allocates the partners' and the house seats, the fan club's to be
    /// released at `release_ms`; panics unless each is acknowledged. The
    /// house seats the module chose.
    pub fn before_sale(&mut self, release_ms: i64) -> Vec<i64> {
        let mut house = Vec::new();
        for book in partners::before_sale(release_ms) {
            let reply = self.send(book.clone(), 5_000);
            let acked = self.ops.last().is_some_and(|o| o.acked);
            match reply {
                Reply::Tickets(t) if acked => {
                    if book.name() == HOUSE {
                        house = t;
                    }
                }
                other => panic!("the box office's {book:?} answered {other:?} (acked: {acked})"),
            }
        }
        house
    }

    /// During the sale, from `started` to `deadline`: the steps of
    /// [`plan`] (and, gated, hold the gate over the timed release due at
    /// `timed`), and at each of the nemesis's `cuts` (not gated) allocate
    /// a seat to `late`; returns everything it sent.
    pub fn during_sale(
        mut self,
        house: &[i64],
        (started, timed, deadline): (Instant, Instant, Instant),
        stop: &AtomicBool,
        cuts: &Receiver<()>,
    ) -> Vec<BookOp> {
        let at = |fraction: f64| started + deadline.duration_since(started).mul_f64(fraction);
        let mut timed = self.gate.is_on().then_some(timed);
        for (when, book, retry) in plan(house, at, deadline) {
            if let Some(due) = timed.filter(|due| *due < when) {
                let gate = self.gate.clone();
                self.sleep_until(due - Duration::from_millis(1500), stop, cuts);
                let _pass = gate.pass();
                sleep_until(due + Duration::from_millis(2500), stop);
                timed = None;
            }
            self.sleep_until(when, stop, cuts);
            // Retried until answered, for a while.
            let give_up = (when + Duration::from_secs(3)).min(deadline);
            while Instant::now() < give_up && !stop.load(Ordering::Relaxed) {
                match self.send(book.clone(), WAIT_MS) {
                    Reply::Unknown(_) if retry => {}
                    Reply::Refused(code) if retry && (transient(&code) || code == "SHORT") => {}
                    _ => break,
                }
                sleep(Duration::from_millis(300));
            }
        }
        self.sleep_until(deadline, stop, cuts);
        self.ops
    }

    /// Sleeps until `when` (or `stop`); meanwhile, at each cut of the
    /// replica, allocates a seat to `late` (not gated: the gate would hold
    /// it until the failover is over).
    fn sleep_until(&mut self, when: Instant, stop: &AtomicBool, cuts: &Receiver<()>) {
        while Instant::now() < when && !stop.load(Ordering::Relaxed) {
            let cut = cuts.recv_timeout(Duration::from_millis(50)).is_ok();
            if cut && !self.gate.is_on() {
                self.send(allocate_late(1), WAIT_MS);
            }
        }
    }

    /// Sends one operation, WAITs (`wait_ms`) if it changed something,
    /// records it; returns the reply (unknown, unrecorded, when no
    /// primary could be reached: nothing was sent).
    fn send(&mut self, book: Book, wait_ms: u64) -> Reply {
        let gate = self.gate.clone();
        let pass = gate.pass();
        let mut conn = match connect(&self.address.get()) {
            Ok(c) => c,
            Err(e) => {
                sleep(Duration::from_millis(100));
                return Reply::Unknown(format!("connect: {e}"));
            }
        };
        let sent_ms = now_ms();
        let result = command(self.event, &book).query::<Value>(&mut conn);
        let answered_ms = now_ms();
        let reply = match result {
            Ok(v) => interpret(&book, &v),
            Err(e) => refusal_or_unknown(&e),
        };
        let wrote = matches!(reply, Reply::Tickets(_) | Reply::Released(_));
        let acked = wrote
            && (wait_replica(&mut conn, wait_ms)
                || (pass.is_some() && acknowledge(&mut conn, true)));
        self.ops.push(BookOp {
            book,
            reply: reply.clone(),
            acked,
            sent_ms,
            answered_ms,
        });
        reply
    }
}

/// The box office's steps during the sale, each with when it is due and
/// whether it is retried: two house seats released by id at 30% of the
/// run, three free seats allocated to `late` at 50% (again while the event
/// has too few), then from 55% to 90% every 2.5 s one of `late`'s
/// released by count and one free seat allocated to it, in turn, so that
/// some meet a fault.
fn plan(
    house: &[i64],
    at: impl Fn(f64) -> Instant,
    deadline: Instant,
) -> Vec<(Instant, Book, bool)> {
    let allocate = allocate_late;
    let release = Book::Release {
        name: LATE.into(),
        count: 1,
        seats: None,
    };
    let mut plan = vec![
        (
            at(0.3),
            Book::Release {
                name: HOUSE.into(),
                count: 2,
                seats: Some(house.iter().take(2).copied().collect()),
            },
            true,
        ),
        (at(0.5), allocate(3), true),
    ];
    let mut when = at(0.55);
    while when < at(0.9).min(deadline) {
        let book = match plan.len() % 2 {
            0 => release.clone(),
            _ => allocate(1),
        };
        plan.push((when, book, false));
        when += Duration::from_millis(2500);
    }
    plan
}

/// `ALLOCATE E late COUNT count`.
fn allocate_late(count: i64) -> Book {
    Book::Allocate {
        name: LATE.into(),
        count,
        section: None,
        seats: None,
        key: None,
        release_ms: None,
    }
}

/// Sleeps until `when`, or until `stop`.
fn sleep_until(when: Instant, stop: &AtomicBool) {
    while Instant::now() < when && !stop.load(Ordering::Relaxed) {
        sleep(Duration::from_millis(50));
    }
}

fn command(event: &str, book: &Book) -> redis::Cmd {
    match book {
        Book::Allocate {
            name,
            count,
            section,
            seats,
            key,
            release_ms,
        } => {
            let mut cmd = redis::cmd("TICKET.ALLOCATE");
            cmd.arg(event).arg(name);
            match seats {
                Some(ids) => cmd.arg("SEATS").arg(ids),
                None => cmd.arg("COUNT").arg(*count),
            };
            if let Some(s) = section {
                cmd.arg("SECTION").arg(s);
            }
            if let Some(k) = key {
                cmd.arg("KEY").arg(k);
            }
            if let Some(ms) = release_ms {
                cmd.arg("RELEASE").arg(*ms);
            }
            cmd
        }
        Book::Release { name, count, seats } => {
            let mut cmd = redis::cmd("TICKET.RELEASE");
            cmd.arg(event).arg(name);
            match seats {
                Some(ids) => cmd.arg("SEATS").arg(ids),
                None => cmd.arg("COUNT").arg(*count),
            };
            cmd
        }
    }
}

fn interpret(book: &Book, value: &Value) -> Reply {
    let parsed = match (book, value) {
        (Book::Allocate { .. }, Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Int(n) => Some(*n),
                _ => None,
            })
            .collect::<Option<Vec<i64>>>()
            .map(Reply::Tickets),
        (Book::Release { .. }, Value::Int(n)) => Some(Reply::Released(*n)),
        _ => None,
    };
    parsed.unwrap_or_else(|| Reply::Unknown(format!("unexpected reply {value:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_releases_house_seats_then_churns_late_in_time() {
        let start = Instant::now();
        let at = |f: f64| start + Duration::from_secs(75).mul_f64(f);
        let steps = plan(&[4, 5, 6, 7], at, start + Duration::from_secs(75));
        assert!(steps.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(matches!(&steps[0].1, Book::Release { seats: Some(s), .. } if s == &[4, 5]));
        assert!(matches!(&steps[1].1, Book::Allocate { count: 3, .. }));
        let churn = &steps[2..];
        assert!(churn.len() >= 8, "{}", churn.len());
        assert!(churn.iter().all(|s| !s.2 && s.1.name() == LATE));
        assert!(churn
            .iter()
            .step_by(2)
            .all(|s| matches!(s.1, Book::Release { .. })));
        assert!(churn
            .iter()
            .skip(1)
            .step_by(2)
            .all(|s| matches!(s.1, Book::Allocate { count: 1, .. })));
    }
}
