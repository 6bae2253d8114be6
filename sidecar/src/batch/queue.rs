//! A draw event's queue as MySQL keeps it (pure): the `ticket_draw_step`
//! rows of a batch's enters, entrants' leaves, draw and offers, and the
//! checks both batch paths make before writing them.
//!
//! The steps are the audit's input (`ticket_draw_step`, keyed by entry id,
//! so its primary key is log order: see `admin::audit`). A draw is written
//! only for a draw event not drawn yet, and only when SHA-256 of the
//! revealed seed is the commitment its init published: anything else is a
//! `ticket_conflict`, never a silently stored seed.

use protocol::draw::{commitment, hex};
use protocol::record::{Op, Record};
use protocol::StreamId;

/// What a `ticket_draw_step` row records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    Enter,
    Leave,
    Draw,
    Offer,
}

impl StepKind {
    /// The SQL ENUM value.
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Enter => "enter",
            StepKind::Leave => "leave",
            StepKind::Draw => "draw",
            StepKind::Offer => "offer",
        }
    }

    /// The kind named by a SQL ENUM value.
    pub fn parse(text: &str) -> Option<StepKind> {
        [
            StepKind::Enter,
            StepKind::Leave,
            StepKind::Draw,
            StepKind::Offer,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// One `ticket_draw_step` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueStep {
    pub id: StreamId,
    pub kind: StepKind,
    /// None for the draw.
    pub user: Option<String>,
    /// An enter's count, an offer's ticket count, 1 for a leave, 0 for the draw.
    pub tickets: i64,
    /// Unix ms of the entry.
    pub at: i64,
}

impl QueueStep {
    /// The step `rec` records, if it is an enter, leave, draw or offer.
    pub fn of(id: StreamId, rec: &Record) -> Option<QueueStep> {
        let (kind, user, tickets) = match &rec.op {
            Op::Enter { user, count, .. } => (StepKind::Enter, Some(user), *count),
            Op::Leave { user } => (StepKind::Leave, Some(user), 1),
            Op::Draw { .. } => (StepKind::Draw, None, 0),
            Op::Offer { user, tickets, .. } => {
                (StepKind::Offer, Some(user), tickets.as_slice().len() as i64)
            }
            _ => return None,
        };
        Some(QueueStep {
            id,
            kind,
            user: user.cloned(),
            tickets,
            at: rec.at,
        })
    }
}

/// An `op=draw`: the revealed seed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drawn {
    pub id: StreamId,
    pub seed: [u8; 32],
    pub at: i64,
}

impl Drawn {
    /// The draw `rec` records, if it is one.
    pub fn of(id: StreamId, rec: &Record) -> Option<Drawn> {
        match &rec.op {
            Op::Draw { seed } => Some(Drawn {
                id,
                seed: *seed,
                at: rec.at,
            }),
            _ => None,
        }
    }

    /// The seed as `ticket_event.draw_seed` stores it.
    pub fn seed_hex(&self) -> String {
        hex(&self.seed)
    }

    /// SHA-256 of the seed, as the commitment it must match.
    pub fn commitment(&self) -> String {
        commitment(&self.seed)
    }
}

/// The draw state of an event's row before a step: whether it is a draw
/// event (its commitment) and whether it was drawn (its seed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DrawState {
    /// `ticket_event.draw_commitment` (None: not a draw event).
    pub commitment: Option<String>,
    /// `ticket_event.draw_seed` (None: not drawn yet).
    pub seed: Option<String>,
}

/// Why a step may not be written: (conflict reason, detail).
pub type Refusal = (&'static str, String);

impl DrawState {
    /// Whether `step` applies to an event in this state (the draw itself
    /// is checked by [`DrawState::draw`]).
    pub fn admits(&self, step: &QueueStep) -> Result<(), Refusal> {
        let user = step.user.as_deref().unwrap_or("");
        match (step.kind, &self.commitment, &self.seed) {
            (StepKind::Offer, _, _) => Ok(()),
            (StepKind::Draw, _, _) => Ok(()),
            (_, None, _) => Err((
                "not_a_draw",
                format!(
                    "{} of user {user:?} in an event that has no draw",
                    step.kind.as_str()
                ),
            )),
            (StepKind::Enter, Some(_), Some(_)) => Err((
                "enter_after_draw",
                format!("user {user:?} entered after the draw was made"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether draw `d` applies: a draw event, not drawn yet (or drawn with
    /// another seed: `draw_repeated`), the seed's SHA-256 its commitment.
    pub fn draw(&self, d: &Drawn) -> Result<(), Refusal> {
        let Some(c) = &self.commitment else {
            return Err(("not_a_draw", "op=draw in an event that has no draw".into()));
        };
        if let Some(seed) = &self.seed {
            return Err((
                "draw_repeated",
                format!(
                    "the event was already drawn with seed {seed}; op=draw reveals {}",
                    d.seed_hex()
                ),
            ));
        }
        let actual = d.commitment();
        if !actual.eq_ignore_ascii_case(c) {
            return Err((
                "draw_mismatch",
                format!(
                    "SHA-256 of the revealed seed {} is {actual}, not the commitment {c}",
                    d.seed_hex()
                ),
            ));
        }
        Ok(())
    }

    /// The state after `step` (only a draw changes it).
    pub fn after(&mut self, d: &Drawn) {
        self.seed = Some(d.seed_hex());
    }

    /// A draw event of commitment `c`, not drawn (an init in the batch).
    pub fn fresh(c: &[u8; 32]) -> DrawState {
        DrawState {
            commitment: Some(hex(c)),
            seed: None,
        }
    }
}

/// The steps of a batch that `ticket_draw_step` keeps, checked in log
/// order against `state` (the event's row before the batch): offers only
/// in a draw event; Err with the first refusal.
pub fn admitted(
    mut state: DrawState,
    steps: &[QueueStep],
    draw: Option<&Drawn>,
) -> Result<Vec<QueueStep>, Refusal> {
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        state.admits(s)?;
        if s.kind == StepKind::Draw {
            let d = draw
                .filter(|d| d.id == s.id)
                .ok_or(("draw_repeated", "two draws in one batch".to_string()))?;
            state.draw(d)?;
            state.after(d);
        }
        if s.kind != StepKind::Offer || state.commitment.is_some() {
            out.push(s.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::Tickets;

    fn step(i: u64, op: Op) -> QueueStep {
        let rec = Record { op, at: 5 };
        QueueStep::of(StreamId::new(1, i), &rec).expect("a queue step")
    }

    fn drawn(i: u64, seed: [u8; 32]) -> Drawn {
        Drawn {
            id: StreamId::new(1, i),
            seed,
            at: 5,
        }
    }

    #[test]
    fn a_draw_needs_the_committed_seed_once() {
        let seed = [3u8; 32];
        let mut c = [0u8; 32];
        c.copy_from_slice(&sha_bytes(&seed));
        let state = DrawState::fresh(&c);
        assert_eq!(state.draw(&drawn(1, seed)), Ok(()));
        let (reason, detail) = state.draw(&drawn(1, [4u8; 32])).expect_err("wrong seed");
        assert_eq!(reason, "draw_mismatch");
        assert!(detail.contains(&commitment(&[4u8; 32])), "{detail}");
        let mut done = state.clone();
        done.after(&drawn(1, seed));
        assert_eq!(
            done.draw(&drawn(2, seed)).map_err(|r| r.0),
            Err("draw_repeated")
        );
        assert_eq!(
            DrawState::default().draw(&drawn(1, seed)).map_err(|r| r.0),
            Err("not_a_draw")
        );
    }

    fn sha_bytes(seed: &[u8]) -> Vec<u8> {
        let text = commitment(seed);
        (0..32)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect()
    }

    #[test]
    fn enters_before_the_draw_offers_only_in_draw_events() {
        let seed = [9u8; 32];
        let mut c = [0u8; 32];
        c.copy_from_slice(&sha_bytes(&seed));
        let enter = |i, u: &str| {
            step(
                i,
                Op::Enter {
                    user: u.into(),
                    count: 2,
                    rank: None,
                },
            )
        };
        let offer = |i, u: &str| {
            step(
                i,
                Op::Offer {
                    pick: None,
                    user: u.into(),
                    tickets: Tickets::One(1),
                    until: 9,
                },
            )
        };
        let steps = vec![enter(1, "a"), step(2, Op::Draw { seed }), offer(3, "a")];
        let d = drawn(2, seed);
        let kept = admitted(DrawState::fresh(&c), &steps, Some(&d)).expect("fair");
        assert_eq!(kept, steps);
        assert_eq!(kept[0].tickets, 2);
        // after the draw, an enter is refused
        let late = vec![steps[1].clone(), enter(4, "b")];
        let refused = admitted(DrawState::fresh(&c), &late, Some(&d)).map_err(|r| r.0);
        assert_eq!(refused, Err("enter_after_draw"));
        // a plain event: offers are not kept, enters are refused
        assert_eq!(
            admitted(DrawState::default(), &[offer(1, "a")], None),
            Ok(vec![])
        );
        let plain = admitted(DrawState::default(), &[enter(1, "a")], None).map_err(|r| r.0);
        assert_eq!(plain, Err("not_a_draw"));
    }
}
