//! What the pool decided in one command: the effects it applied to the
//! store, in order, handed back to the command layer, whose commit step
//! replicates them, announces offers and notes hold deadlines.
//!
//! The pool applies each change as it decides it (the next decision of the
//! same command reads what the previous one wrote: a claim first expires
//! due holds, then takes the lowest free number) and collects the effect
//! here. The commit step runs whether the command then succeeds or fails:
//! an expiry decided before a claim answered `SOLDOUT` happened all the same.
//!
//! A claim decides one effect, kept inline: collecting it allocates nothing.

use std::borrow::Cow;

use protocol::effect::Effect;
use protocol::record::Record;
use protocol::StreamId;

use super::apply;
use super::store::Store;

/// One decided effect: its user ids borrowed from the command's arguments,
/// or owned when read from the store (an expired hold, an offered head).
pub type Decided<'a> = Effect<Cow<'a, str>>;

/// The effects of one command, in the order they were applied.
#[derive(Debug, Default)]
pub struct Effects<'a> {
    first: Option<Decided<'a>>,
    more: Vec<Decided<'a>>,
    /// Offers made so far (bounded per command by `Clock::offers`).
    offered: usize,
    /// When the event must be visited again (the offer step stopped at its
    /// bound, or the admission rate): the commit step tells the sweep.
    again: Option<i64>,
}

impl<'a> Effects<'a> {
    /// The effects in order.
    pub fn iter(&self) -> impl Iterator<Item = &Decided<'a>> {
        self.first.iter().chain(self.more.iter())
    }

    /// Runs `f` on each effect in order (cheaper than [`Self::iter`] on
    /// the claim path).
    #[inline]
    pub fn for_each(&self, mut f: impl FnMut(&Decided<'a>)) {
        if let Some(first) = &self.first {
            f(first);
            self.more.iter().for_each(f);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_none()
    }

    /// How many offers the command made.
    pub fn offered(&self) -> usize {
        self.offered
    }

    pub(super) fn count_offer(&mut self) {
        self.offered += 1;
    }

    /// When the sweep should visit the event again, if it should.
    pub fn again(&self) -> Option<i64> {
        self.again
    }

    /// Asks the sweep to visit the event at `at` (the earliest asked wins).
    pub(super) fn visit_again(&mut self, at: i64) {
        self.again = Some(self.again.map_or(at, |t| t.min(at)));
    }

    #[inline]
    fn push(&mut self, effect: Decided<'a>) {
        match self.first {
            None => self.first = Some(effect),
            Some(_) => self.more.push(effect),
        }
    }

    /// Writes `record` (and appends it to the log at `id`, or at an id the
    /// store picks) and collects it; returns the id used.
    #[inline]
    pub(super) fn append(
        &mut self,
        store: &mut impl Store,
        record: Record<Cow<'a, str>>,
        minted: Option<i64>,
        id: Option<StreamId>,
    ) -> StreamId {
        let id = apply::append(store, &record, minted, id);
        self.push(Effect::Append { id, record, minted });
        id
    }

    /// Applies an effect that is not a log entry and collects it.
    pub(super) fn apply(&mut self, store: &mut impl Store, effect: Decided<'a>) {
        apply::apply(store, &effect);
        self.push(effect);
    }
}
