//! `ticketgate-sidecar audit-draw --event E`: checks a draw event's order
//! from MySQL alone. Reads the commitment and the seed (`ticket_event`)
//! and the queue's steps in log order (`ticket_draw_step`, less what a heal
//! undid), then runs
//! `protocol::draw::audit`: SHA-256(seed) must be the commitment, and every
//! offer must have gone to the lowest-ranked entrant still waiting. Prints
//! the first violation (exit 1) or a summary (exit 0); no Redis needed.

use std::process::ExitCode;
use std::time::Instant;

use mysql::prelude::Queryable;
use protocol::draw::{audit, parse_seed, Step, Summary, Violation};
use protocol::StreamId;

use crate::batch::queue::StepKind;

/// One `ticket_draw_step` row: (stream ms, stream seq, kind, user).
type Row = (u64, u64, String, Option<String>);

/// What MySQL holds about a draw event.
struct Draw {
    commitment: String,
    seed: Option<String>,
    rows: Vec<Row>,
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
    let row: Option<(Option<String>, Option<String>)> = my
        .exec_first(
            "SELECT draw_commitment, draw_seed FROM ticket_event WHERE event_id = ?",
            (event,),
        )
        .map_err(|e| e.to_string())?;
    let Some((commitment, seed)) = row else {
        return Err(format!("no event {event:?} in MySQL"));
    };
    let Some(commitment) = commitment else {
        return Err(format!(
            "event {event:?} is not a draw event (no commitment)"
        ));
    };
    let rows: Vec<Row> = my
        .exec(
            "SELECT stream_ms, stream_seq, CAST(kind AS CHAR), user_id FROM ticket_draw_step WHERE event_id = ? AND lost_in_failover = 0 ORDER BY stream_ms, stream_seq, id",
            (event,),
        )
        .map_err(|e| e.to_string())?;
    Ok(Draw {
        commitment,
        seed,
        rows,
    })
}

/// The audit of what MySQL holds: a summary, or the first thing wrong.
fn check(draw: &Draw) -> Result<Summary, String> {
    let steps = steps_of(draw)?;
    audit(&draw.commitment, &steps).map_err(|v| describe(&v, &draw.rows))
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
    for (ms, seq, kind, user) in &draw.rows {
        let id = StreamId::new(*ms, *seq);
        let kind =
            StepKind::parse(kind).ok_or_else(|| format!("step {id}: unknown kind {kind:?}"))?;
        let user = || {
            user.clone()
                .ok_or_else(|| format!("step {id}: {} without a user", kind.as_str()))
        };
        steps.push(match kind {
            StepKind::Enter => Step::Enter { user: user()? },
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
            .map(|(ms, seq, _, _)| StreamId::new(*ms, *seq).to_string())
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::draw::{commitment, hex, rank};

    fn row(i: u64, kind: &str, user: Option<&str>) -> Row {
        (1000, i, kind.into(), user.map(String::from))
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
}
