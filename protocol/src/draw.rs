//! The fair draw at open, as pure functions both halves share: the seed's
//! public commitment, the rank of an entrant, the waiting-list score that
//! carries it, the admission rate's token bucket, and the audit a buyer (or
//! `ticketgate-sidecar audit-draw`) runs over what was logged.
//!
//! How a draw works (docs/design.md, "The draw"): at `TICKET.INIT ... DRAW`
//! the primary draws a secret 32-byte seed and publishes only
//! `hex(SHA-256(seed))`. Entrants join before the open; each one's place is
//! fixed by `rank(seed, user)` = the first 6 bytes, big-endian, of
//! `HMAC-SHA256(key = seed, message = user id bytes)`, ties broken by the user
//! id's bytes. 48 bits fit an `f64` exactly, so the rank *is* the entrant's
//! sorted-set score, computed on the primary when they enter: the draw itself
//! only reveals the seed (O(1)), and a sorted set with equal scores already
//! orders members by their bytes. Whoever joins after the draw queues behind
//! every entrant, FIFO: their score is `AFTER_DRAW + sequence`.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// Bytes of a draw's secret seed.
pub const SEED_LEN: usize = 32;

/// Ranks are 48-bit: every rank is below this, and scores of those who join
/// after the draw start here (still exact in an `f64`, below 2^53).
pub const AFTER_DRAW: u64 = 1 << 48;

/// The public commitment to a seed: lowercase hex of SHA-256(seed).
pub fn commitment(seed: &[u8]) -> String {
    hex(&commitment_bytes(seed))
}

/// The commitment as bytes (what an init's draw terms carry).
pub fn commitment_bytes(seed: &[u8]) -> [u8; 32] {
    Sha256::digest(seed).into()
}

/// An entrant's rank: the first 6 bytes (big-endian) of
/// HMAC-SHA256(key = seed, message = user id bytes). Lower goes first.
pub fn rank(seed: &[u8], user: &[u8]) -> u64 {
    // HMAC accepts a key of any length, so this cannot fail.
    let mut mac = match Hmac::<Sha256>::new_from_slice(seed) {
        Ok(mac) => mac,
        Err(_) => unreachable_key_length(),
    };
    mac.update(user);
    let tag = mac.finalize().into_bytes();
    tag[..6]
        .iter()
        .fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
}

#[cold]
fn unreachable_key_length() -> ! {
    // `Hmac::new_from_slice` only refuses key lengths for fixed-key MACs.
    panic!("HMAC-SHA256 accepts keys of any length")
}

/// Lowercase hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// A seed back from its hex form (as `op=draw` logs it): exactly
/// `2 * SEED_LEN` hex digits, either case.
pub fn parse_seed(text: &str) -> Option<[u8; SEED_LEN]> {
    let bytes = text.as_bytes();
    if bytes.len() != 2 * SEED_LEN {
        return None;
    }
    let mut seed = [0u8; SEED_LEN];
    for (i, pair) in bytes.chunks_exact(2).enumerate() {
        seed[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
    }
    Some(seed)
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The admission rate: a token bucket that holds one second's worth of
/// offers (`rate`) and is filled up again at the start of every second since
/// the draw, so no second (counted from the draw) ever sees more than `rate`
/// offers. A bucket refilled continuously would let a second see up to twice
/// the rate (a full bucket, then a second's refill); a buyer watching the
/// queue expects the stated rate. Integer state, the same on every replica.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Offers per second, 1..=1,000,000.
    pub rate: u64,
    /// When the bucket started (the draw, unix ms): seconds count from here.
    pub since: i64,
    /// The second (counted from `since`) that `used` belongs to.
    pub second: i64,
    /// Offers made in that second.
    pub used: u64,
}

impl Admission {
    /// A full bucket at `now` (the draw).
    pub fn start(rate: u64, now: i64) -> Admission {
        Admission {
            rate,
            since: now,
            second: 0,
            used: 0,
        }
    }

    /// How many offers may be made at `now`.
    pub fn available(&self, now: i64) -> u64 {
        if self.second_of(now) != self.second {
            return self.rate;
        }
        self.rate.saturating_sub(self.used)
    }

    /// The bucket after `n` offers at `now` (`n` at most [`available`]).
    ///
    /// [`available`]: Admission::available
    pub fn take(&self, now: i64, n: u64) -> Admission {
        let second = self.second_of(now);
        let used = if second == self.second { self.used } else { 0 };
        Admission {
            second,
            used: used.saturating_add(n).min(self.rate),
            ..*self
        }
    }

    /// When the next offer becomes possible (unix ms): `now` if one is.
    pub fn next_at(&self, now: i64) -> i64 {
        if self.available(now) > 0 {
            return now;
        }
        self.since + (self.second_of(now) + 1) * 1000
    }

    fn second_of(&self, now: i64) -> i64 {
        now.saturating_sub(self.since).max(0) / 1000
    }
}

/// Most waiting parties a seated event's offer step looks at for one offer
/// (those further back wait for the next change): the offer goes to the
/// first of them, in queue order, whose party fits together.
pub const SEATED_LOOKAHEAD: usize = 100;

/// One logged step of a draw event's queue, in log order, as MySQL keeps
/// it: what the audit replays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A user entered the draw (before it happened) for `count` tickets.
    Enter { user: String, count: u32 },
    /// A user left the queue (before or after the draw).
    Leave { user: String },
    /// The draw: the seed revealed.
    Draw { seed: Vec<u8> },
    /// Tickets were offered to a user.
    Offer { user: String },
}

/// What a passing audit found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub entrants: usize,
    pub left: usize,
    /// Offers that went to drawn entrants, each checked against the rank.
    pub offers_checked: usize,
    /// Offers to users who joined after the draw (FIFO, not ranked).
    pub later_offers: usize,
}

/// The first thing an audit found wrong, with the position (0-based) of the
/// step where it found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// SHA-256 of the revealed seed is not the published commitment.
    SeedMismatch { commitment: String, actual: String },
    /// The log holds no draw (or more than one).
    DrawCount { draws: usize },
    /// An offer went to `user` while `expected` (lower rank) still waited.
    OutOfOrder {
        step: usize,
        user: String,
        expected: String,
    },
    /// Someone entered after the draw was made.
    EnterAfterDraw { step: usize, user: String },
    /// An offer was made before the draw.
    OfferBeforeDraw { step: usize, user: String },
    /// A seated draw's offer went to drawn entrant `user` although no
    /// party among the first [`SEATED_LOOKAHEAD`] waiting fitted together
    /// (`user` included: further back, or its party of `count` did not fit).
    Unfit {
        step: usize,
        user: String,
        count: u32,
    },
}

/// Replays a draw event's steps and checks that SHA-256(seed) is the
/// commitment and that every offer made while drawn entrants waited went to
/// the lowest-ranked of them (those who left or were served skipped).
pub fn audit(commitment_hex: &str, steps: &[Step]) -> Result<Summary, Violation> {
    audit_with(commitment_hex, steps, &mut |_, _| true)
}

/// [`audit`] with the party-aware offer rule of a seated event: `fits(i,
/// n)` says whether a party of `n` fits together on the seats as they were
/// just before step `i` (always true for a general-admission draw, whose
/// head is always the one offered). Each offer made while drawn entrants
/// waited must go to the first of the first [`SEATED_LOOKAHEAD`] of them,
/// in rank order, whose party fits; when none fits it went to someone who
/// joined after the draw.
pub fn audit_with(
    commitment_hex: &str,
    steps: &[Step],
    fits: &mut dyn FnMut(usize, u32) -> bool,
) -> Result<Summary, Violation> {
    let draws: Vec<&[u8]> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Draw { seed } => Some(seed.as_slice()),
            _ => None,
        })
        .collect();
    let [seed] = draws[..] else {
        return Err(Violation::DrawCount { draws: draws.len() });
    };
    let actual = commitment(seed);
    if !actual.eq_ignore_ascii_case(commitment_hex) {
        return Err(Violation::SeedMismatch {
            commitment: commitment_hex.to_string(),
            actual,
        });
    }
    let mut queue = Queue::default();
    for (i, step) in steps.iter().enumerate() {
        queue.replay(i, step, seed, fits)?;
    }
    Ok(queue.summary)
}

/// The audit's view of the queue while it replays the steps.
#[derive(Default)]
struct Queue {
    drawn: bool,
    /// Entrants still waiting, by (rank, user bytes).
    waiting: std::collections::BTreeSet<(u64, String)>,
    /// Everyone who entered before the draw, with their rank once drawn.
    entered: std::collections::HashMap<String, Option<u64>>,
    /// Each entrant's party size.
    counts: std::collections::HashMap<String, u32>,
    summary: Summary,
}

impl Queue {
    fn replay(
        &mut self,
        i: usize,
        step: &Step,
        seed: &[u8],
        fits: &mut dyn FnMut(usize, u32) -> bool,
    ) -> Result<(), Violation> {
        match step {
            Step::Enter { user, .. } if self.drawn => Err(Violation::EnterAfterDraw {
                step: i,
                user: user.clone(),
            }),
            Step::Enter { user, count } => {
                self.entered.insert(user.clone(), None);
                self.counts.insert(user.clone(), *count);
                Ok(())
            }
            Step::Leave { user } => {
                self.leave(user, seed);
                Ok(())
            }
            Step::Draw { .. } => {
                self.draw(seed);
                Ok(())
            }
            Step::Offer { user } if !self.drawn => Err(Violation::OfferBeforeDraw {
                step: i,
                user: user.clone(),
            }),
            Step::Offer { user } => self.offer(i, user, seed, fits),
        }
    }

    fn draw(&mut self, seed: &[u8]) {
        self.drawn = true;
        self.summary.entrants = self.entered.len();
        for (user, rank_slot) in self.entered.iter_mut() {
            let r = rank(seed, user.as_bytes());
            *rank_slot = Some(r);
            self.waiting.insert((r, user.clone()));
        }
    }

    fn leave(&mut self, user: &str, seed: &[u8]) {
        if !self.drawn {
            if self.entered.remove(user).is_some() {
                self.summary.left += 1;
            }
            return;
        }
        if self
            .waiting
            .remove(&(rank(seed, user.as_bytes()), user.to_string()))
        {
            self.summary.left += 1;
        }
    }

    /// An offer: it must go to the first of the first [`SEATED_LOOKAHEAD`]
    /// drawn entrants still waiting whose party fits (for a general
    /// admission draw, the head); with none waiting, or none fitting, to
    /// someone who joined after the draw.
    fn offer(
        &mut self,
        i: usize,
        user: &str,
        seed: &[u8],
        fits: &mut dyn FnMut(usize, u32) -> bool,
    ) -> Result<(), Violation> {
        let count = |u: &str| self.counts.get(u).copied().unwrap_or(1);
        let first = self
            .waiting
            .iter()
            .take(SEATED_LOOKAHEAD)
            .find(|(_, u)| fits(i, count(u)))
            .cloned();
        match first {
            Some(first) if first.1 == user => {
                self.waiting.remove(&first);
                debug_assert_eq!(first.0, rank(seed, user.as_bytes()));
                self.summary.offers_checked += 1;
                Ok(())
            }
            Some(first) => Err(Violation::OutOfOrder {
                step: i,
                user: user.to_string(),
                expected: first.1,
            }),
            None if self
                .waiting
                .contains(&(rank(seed, user.as_bytes()), user.to_string())) =>
            {
                Err(Violation::Unfit {
                    step: i,
                    user: user.to_string(),
                    count: count(user),
                })
            }
            None => {
                self.summary.later_offers += 1;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn commitment_is_sha256_hex() {
        // SHA-256 of the empty string, a well-known value.
        assert_eq!(
            commitment(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn rank_is_the_first_six_bytes_of_hmac_sha256() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
        // HMAC-SHA256 = 5bdcc146bf60754e...
        assert_eq!(
            rank(b"Jefe", b"what do ya want for nothing?"),
            0x5bdc_c146_bf60
        );
    }

    #[test]
    fn seed_hex_round_trips_and_rejects_bad_text() {
        let seed: Vec<u8> = (0..32).collect();
        let text = hex(&seed);
        assert_eq!(parse_seed(&text).map(|s| s.to_vec()), Some(seed.clone()));
        assert_eq!(
            parse_seed(&text.to_uppercase()).map(|s| s.to_vec()),
            Some(seed)
        );
        assert_eq!(parse_seed(&text[2..]), None);
        assert_eq!(parse_seed(&format!("{}zz", &text[2..])), None);
    }

    #[test]
    fn admission_makes_rate_offers_per_second_at_most() {
        let bucket = Admission::start(3, 1_000);
        assert_eq!(bucket.available(1_000), 3);
        let bucket = bucket.take(1_500, 3);
        assert_eq!(bucket.available(1_999), 0);
        assert_eq!(bucket.next_at(1_700), 2_000);
        assert_eq!(bucket.available(2_000), 3);
        // Never more than one second's worth, however long it waited.
        assert_eq!(bucket.available(100_000), 3);
    }

    fn steps_of(seed: &[u8], users: &[&str], leave: &[&str]) -> Vec<Step> {
        let mut steps: Vec<Step> = users
            .iter()
            .map(|u| Step::Enter {
                user: u.to_string(),
                count: 1,
            })
            .collect();
        steps.extend(leave.iter().map(|u| Step::Leave {
            user: u.to_string(),
        }));
        steps.push(Step::Draw {
            seed: seed.to_vec(),
        });
        let mut order: Vec<(u64, &str)> = users
            .iter()
            .filter(|u| !leave.contains(u))
            .map(|u| (rank(seed, u.as_bytes()), *u))
            .collect();
        order.sort();
        steps.extend(order.iter().map(|(_, u)| Step::Offer {
            user: u.to_string(),
        }));
        steps
    }

    #[test]
    fn audit_passes_a_fair_draw_and_names_the_first_violation() {
        let seed = [7u8; 32];
        let c = commitment(&seed);
        let steps = steps_of(&seed, &["ann", "bob", "cy", "dee"], &["bob"]);
        let summary = audit(&c, &steps).expect("fair");
        assert_eq!(
            (summary.entrants, summary.left, summary.offers_checked),
            (3, 1, 3)
        );

        let mut swapped = steps.clone();
        let n = swapped.len();
        swapped.swap(n - 1, n - 2);
        assert!(matches!(
            audit(&c, &swapped),
            Err(Violation::OutOfOrder { .. })
        ));

        assert!(matches!(
            audit(&commitment(&[8u8; 32]), &steps),
            Err(Violation::SeedMismatch { .. })
        ));
    }

    #[test]
    fn a_seated_draw_offers_the_first_party_that_fits() {
        let seed = [9u8; 32];
        let sizes = [("ann", 4), ("bob", 1), ("cy", 2)];
        let mut ranked: Vec<(u64, &str)> = sizes
            .iter()
            .map(|(u, _)| (rank(&seed, u.as_bytes()), *u))
            .collect();
        ranked.sort();
        let order: Vec<&str> = ranked.iter().map(|r| r.1).collect();
        let mut steps: Vec<Step> = sizes
            .iter()
            .map(|(u, n)| Step::Enter {
                user: u.to_string(),
                count: *n,
            })
            .collect();
        steps.push(Step::Draw {
            seed: seed.to_vec(),
        });
        let offer = |u: &str| Step::Offer { user: u.into() };
        let commit = commitment(&seed);
        // Parties of 4 never fit: ann is skipped and keeps her place, the
        // other two are offered in rank order; then a later joiner.
        let mut no_four = |_: usize, n: u32| n < 4;
        let mut fair = steps.clone();
        fair.extend(order.iter().filter(|u| **u != "ann").map(|u| offer(u)));
        fair.push(offer("late"));
        let s = audit_with(&commit, &fair, &mut no_four).unwrap();
        assert_eq!((s.offers_checked, s.later_offers), (2, 1));
        // ann offered while no party fitted, hers included.
        let mut unfit = steps.clone();
        unfit.push(offer("ann"));
        let v = audit_with(&commit, &unfit, &mut |_, _| false).unwrap_err();
        assert!(
            matches!(&v, Violation::Unfit { user, count: 4, .. } if user == "ann"),
            "{v:?}"
        );
        // The two who fit, swapped.
        let mut swapped = steps.clone();
        let fit: Vec<&str> = order.iter().copied().filter(|u| *u != "ann").collect();
        swapped.extend([offer(fit[1]), offer(fit[0])]);
        let v = audit_with(&commit, &swapped, &mut no_four).unwrap_err();
        assert!(
            matches!(&v, Violation::OutOfOrder { expected, .. } if expected == fit[0]),
            "{v:?}"
        );
        // A later joiner while a drawn party fitted.
        let mut jumped = steps;
        jumped.push(offer("late"));
        let v = audit_with(&commit, &jumped, &mut no_four).unwrap_err();
        assert!(matches!(&v, Violation::OutOfOrder { .. }), "{v:?}");
    }

    proptest! {
        #[test]
        fn ranks_fit_a_sorted_set_score_exactly(seed in proptest::collection::vec(any::<u8>(), 32), user in "[a-z0-9]{1,64}") {
            let r = rank(&seed, user.as_bytes());
            prop_assert!(r < AFTER_DRAW);
            prop_assert_eq!(r as f64 as u64, r);
        }

        #[test]
        fn the_bucket_never_exceeds_its_rate_in_any_second(rate in 1u64..50, start in 0i64..10_000, times in proptest::collection::vec(0i64..5_000, 1..200)) {
            let mut times: Vec<i64> = times.iter().map(|t| start + t).collect();
            times.sort();
            let mut bucket = Admission::start(rate, start);
            let mut per_second = std::collections::HashMap::<i64, u64>::new();
            for t in times {
                let n = bucket.available(t).min(3);
                bucket = bucket.take(t, n);
                *per_second.entry((t - start) / 1000).or_default() += n;
                // Whenever it says none are possible, none are until next_at.
                if bucket.available(t) == 0 {
                    prop_assert!(bucket.next_at(t) > t);
                    prop_assert!(bucket.available(bucket.next_at(t)) > 0);
                }
            }
            for (second, n) in per_second {
                prop_assert!(n <= rate, "{} offers in second {}", n, second);
            }
        }
    }
}
