//! `ticketgate-sidecar audit-draw --event E`: checks a draw event's order
//! from MySQL alone. Reads the commitment and the seed (`ticket_event`)
//! and the queue's steps in log order (`ticket_draw_step`, less what a heal
//! undid), then runs
//! `protocol::draw::audit`: SHA-256(seed) must be the commitment, and every
//! offer must have gone to the lowest-ranked entrant still waiting. A
//! seated draw replays the party-aware rule instead (`audit_with`): the
//! offer goes to the first of the first 100 waiting whose party (its
//! enter's count) fits together on the seats just before the offer, which
//! the orders of `ticket_participation` give (`seat_audit::replay::
//! Timeline`). Prints the first violation (exit 1) or a summary (exit 0);
//! no Redis needed.

use std::process::ExitCode;
use std::time::Instant;

use mysql::prelude::Queryable;
use protocol::draw::{audit, audit_with, parse_seed, Step, Summary, Violation};
use protocol::seats::Layout;
use protocol::StreamId;

use super::seat_audit::{self, replay::Move, replay::Order, replay::Timeline};
use crate::batch::queue::StepKind;

/// One `ticket_draw_step` row: (stream ms, stream seq, kind, user,
/// tickets: an enter's count).
type Row = (u64, u64, String, Option<String>, i64);

/// What MySQL holds about a draw event.
struct Draw {
    commitment: String,
    seed: Option<String>,
    rows: Vec<Row>,
    /// A seated draw's layout and orders.
    seating: Option<(Layout, Vec<Order>, Vec<Move>)>,
}

/// Runs the audit of `event`; exit 0 (fair), 1 (a violation), or Err.
pub fn run(my: &mut impl Queryable, event: &str) -> Result<ExitCode, String> {
    let start = Instant::now();
    let draw = load(my, event).map_err(|e| format!("reading MySQL: {e}"))?;
    let verdict = check(&draw);
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    match verdict {
        Ok(s) => {
            println!(
                "event {event}: the draw is fair: {} entrants, {} left, {} offers checked in rank order, {} later offers (joined after the draw); audit took {ms:.1} ms",
                s.entrants, s.left, s.offers_checked, s.later_offers
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(why) => {
            println!("event {event}: AUDIT FAILED: {why} (audit took {ms:.1} ms)");
            Ok(ExitCode::from(1))
        }
    }
}

/// Reads the event's commitment, seed and steps.
fn load(my: &mut impl Queryable, event: &str) -> Result<Draw, String> {
    let row: Option<(Option<String>, Option<String>, bool)> = my
        .exec_first(
            "SELECT draw_commitment, draw_seed, seat_layout IS NOT NULL FROM ticket_event WHERE event_id = ?",
            (event,),
        )
        .map_err(|e| e.to_string())?;
    let Some((commitment, seed, seated)) = row else {
        return Err(format!("no event {event:?} in MySQL"));
    };
    let Some(commitment) = commitment else {
        return Err(format!(
            "event {event:?} is not a draw event (no commitment)"
        ));
    };
    let rows: Vec<Row> = my
        .exec(
            "SELECT stream_ms, stream_seq, CAST(kind AS CHAR), user_id, tickets FROM ticket_draw_step WHERE event_id = ? AND lost_in_failover = 0 ORDER BY stream_ms, stream_seq, id",
            (event,),
        )
        .map_err(|e| e.to_string())?;
    let seating = match seated {
        true => Some(seating(my, event)?),
        false => None,
    };
    Ok(Draw {
        commitment,
        seed,
        rows,
        seating,
    })
}

/// A seated draw's layout, orders and allocation moves, as
/// `audit-seats` reads them.
fn seating(
    my: &mut impl Queryable,
    event: &str,
) -> Result<(Layout, Vec<Order>, Vec<Move>), String> {
    let layout = seat_audit::layout(my, event)?;
    let orders = seat_audit::orders(my, event).map_err(|e| e.to_string())??;
    let moves = seat_audit::moves(my, event, &layout).map_err(|e| e.to_string())??;
    Ok((layout, orders, moves))
}

/// The audit of what MySQL holds: a summary, or the first thing wrong.
fn check(draw: &Draw) -> Result<Summary, String> {
    let steps = steps_of(draw)?;
    let verdict = match &draw.seating {
        None => audit(&draw.commitment, &steps),
        Some((layout, orders, moves)) => {
            let mut seats = Timeline::new(layout, orders, moves);
            let rows = &draw.rows;
            audit_with(&draw.commitment, &steps, &mut |i, count| {
                let (ms, seq, ..) = &rows[i];
                seats.fits(StreamId::new(*ms, *seq), count)
            })
        }
    };
    verdict.map_err(|v| describe(&v, &draw.rows))
}

/// The audit's steps, in log order; the draw's seed is MySQL's.
fn steps_of(draw: &Draw) -> Result<Vec<Step>, String> {
    let seed = match &draw.seed {
        Some(text) => Some(
            parse_seed(text)
                .ok_or_else(|| format!("MySQL's seed {text:?} is not 64 hex digits"))?
                .to_vec(),
        ),
        None => None,
    };
    let mut steps = Vec::with_capacity(draw.rows.len());
    for (ms, seq, kind, user, tickets) in &draw.rows {
        let id = StreamId::new(*ms, *seq);
        let kind =
            StepKind::parse(kind).ok_or_else(|| format!("step {id}: unknown kind {kind:?}"))?;
        let user = || {
            user.clone()
                .ok_or_else(|| format!("step {id}: {} without a user", kind.as_str()))
        };
        steps.push(match kind {
            StepKind::Enter => Step::Enter {
                user: user()?,
                count: u32::try_from(*tickets).unwrap_or(1).max(1),
            },
            StepKind::Leave => Step::Leave { user: user()? },
            StepKind::Offer => Step::Offer { user: user()? },
            StepKind::Draw => Step::Draw {
                seed: seed
                    .clone()
                    .ok_or_else(|| format!("step {id}: drawn, but MySQL holds no seed"))?,
            },
        });
    }
    Ok(steps)
}

/// A violation in words, naming the log entry where it was found.
fn describe(v: &Violation, rows: &[Row]) -> String {
    let at = |step: &usize| {
        rows.get(*step)
            .map(|(ms, seq, ..)| StreamId::new(*ms, *seq).to_string())
            .unwrap_or_else(|| format!("step {step}"))
    };
    match v {
        Violation::SeedMismatch { commitment, actual } => format!(
            "seed mismatch: SHA-256 of MySQL's seed is {actual}, not the published commitment {commitment}"
        ),
        Violation::DrawCount { draws } => {
            format!("the log holds {draws} draws, not exactly one")
        }
        Violation::OutOfOrder {
            step,
            user,
            expected,
        } => format!(
            "offer out of order at entry {}: it went to {user:?} while {expected:?} (lower rank) still waited",
            at(step)
        ),
        Violation::EnterAfterDraw { step, user } => {
            format!("{user:?} entered after the draw, at entry {}", at(step))
        }
        Violation::OfferBeforeDraw { step, user } => {
            format!("offer to {user:?} before the draw, at entry {}", at(step))
        }
        Violation::Unfit { step, user, count } => format!(
            "offer at entry {} went to {user:?} (a party of {count}) while no party among the first {} waiting fitted together",
            at(step),
            protocol::draw::SEATED_LOOKAHEAD
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::draw::{commitment, hex, rank};

    fn row(i: u64, kind: &str, user: Option<&str>) -> Row {
        (1000, i, kind.into(), user.map(String::from), 1)
    }

    fn fair() -> Draw {
        let seed = [5u8; 32];
        let users = ["ann", "bob", "cy"];
        let mut rows: Vec<Row> = users
            .iter()
            .enumerate()
            .map(|(i, u)| row(i as u64, "enter", Some(u)))
            .collect();
        rows.push(row(3, "draw", None));
        let mut order: Vec<(u64, &str)> = users
            .iter()
            .map(|u| (rank(&seed, u.as_bytes()), *u))
            .collect();
        order.sort();
        for (i, (_, u)) in order.iter().enumerate() {
            rows.push(row(4 + i as u64, "offer", Some(u)));
        }
        Draw {
            commitment: commitment(&seed),
            seed: Some(hex(&seed)),
            rows,
            seating: None,
        }
    }

    #[test]
    fn a_fair_draw_passes_and_tampering_is_named() {
        let d = fair();
        let s = check(&d).expect("fair");
        assert_eq!((s.entrants, s.offers_checked), (3, 3));

        let mut seed = fair();
        seed.seed = Some(hex(&[6u8; 32]));
        let why = check(&seed).expect_err("tampered seed");
        assert!(why.starts_with("seed mismatch"), "{why}");

        let mut swapped = fair();
        let (a, b) = (swapped.rows[4].3.clone(), swapped.rows[5].3.clone());
        (swapped.rows[4].3, swapped.rows[5].3) = (b, a);
        let why = check(&swapped).expect_err("swapped offers");
        assert!(why.contains("out of order at entry 1000-4"), "{why}");

        let mut unseeded = fair();
        unseeded.seed = None;
        assert!(check(&unseeded).expect_err("no seed").contains("no seed"));
    }

    /// A seated draw on one row of 3 seats whose middle seat is sold:
    /// ann (a party of 2, ranked first) cannot sit together, so the offer
    /// skips her for bob (a party of 1).
    fn seated() -> Draw {
        let seed = (0u8..)
            .map(|b| [b; 32])
            .find(|s| rank(s, b"ann") < rank(s, b"bob"))
            .unwrap();
        let layout =
            Layout::parse(r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":3}]}]}"#)
                .unwrap();
        let order = |seq: u64, user: &str, seat: u32| Order {
            id: StreamId::new(1000, seq),
            user: user.into(),
            seats: vec![seat],
            pick: None,
            reapplied: false,
            released: None,
            from: None,
        };
        let mut rows = vec![
            (1000, 1, "enter".into(), Some("ann".into()), 2),
            (1000, 2, "enter".into(), Some("bob".into()), 1),
        ];
        rows.push(row(3, "draw", None));
        rows.push(row(4, "offer", Some("bob")));
        Draw {
            commitment: commitment(&seed),
            seed: Some(hex(&seed)),
            rows,
            seating: Some((
                layout,
                vec![order(0, "pre", 2), order(4, "bob", 1)],
                Vec::new(),
            )),
        }
    }

    #[test]
    fn a_seated_draw_skips_a_party_that_does_not_fit_and_a_tampered_offer_is_named() {
        let s = check(&seated()).expect("the party-aware rule");
        assert_eq!((s.entrants, s.offers_checked), (2, 1));
        // Without the seats, the rank alone would flag the skip.
        let mut unseated = seated();
        unseated.seating = None;
        let why = check(&unseated).expect_err("rank order only");
        assert!(why.contains("while \"ann\""), "{why}");
        // The offer row moved to ann, whose party did not fit.
        let mut tampered = seated();
        tampered.rows[3].3 = Some("ann".into());
        let why = check(&tampered).expect_err("tampered offer");
        assert!(
            why.contains("out of order at entry 1000-4: it went to \"ann\" while \"bob\""),
            "{why}"
        );
        // With the middle seat free, ann fits and must be offered first.
        let mut free = seated();
        if let Some((_, orders, _)) = &mut free.seating {
            orders.remove(0);
        }
        let why = check(&free).expect_err("ann fitted");
        assert!(why.contains("while \"ann\""), "{why}");
    }
}
