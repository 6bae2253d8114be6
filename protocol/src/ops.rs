//! The ops of an event's log, each described once: its name and the values
//! it carries, in the order both of its forms write them — the stream record
//! (`record`, docs/design.md "The log record") and the
//! `TICKET._APPLY` effect (`effect`, docs/design.md "Effects and
//! replication"). Both encoders and both decoders walk [`OPS`]; nothing else
//! lists an op's fields.
//!
//! What an op *does* is not described here, so adding one takes more than
//! a line. The compiler names only the places whose `match` has no
//! wildcard (marked "exhaustive"); the rest must be looked at:
//!
//! - here: a row of [`OPS`], a [`Kind`] variant, arms in [`Op::kind`] and
//!   `parts::Parts::op` (exhaustive) and in [`Op::value`] (each value it
//!   carries); in `model`: the [`Op`] variant, an arm in `Op::map_user`
//!   (its wildcard makes an unknown op `Open`: add one), in
//!   `Op::order`/`Op::user` if it is about a user and in `Op::as_recorded`
//!   if only its effect carries a value;
//! - the module: `pool/apply.rs` (`append`, exhaustive: how a replica
//!   applies it), the pool call that decides it, `commit.rs` if it counts
//!   in `INFO ticket` or notes a deadline, `pool/reapply.rs` if the heal
//!   may re-apply it;
//! - the sidecar: `batch/slow.rs` (how one record lands in MySQL; an op it
//!   does not know becomes a `restore_mismatch` conflict), `batch/plan.rs`
//!   if the fast path may take it (else the batch goes slow), and
//!   `loss/heal/planner.rs` (how the heal undoes it);
//! - docs/design.md "The log record" and the clients' test vectors.

use crate::model::{DrawTerms, Op, Pick, Tickets, Value};

/// Which op, without its values; its discriminant is its row in [`OPS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Init,
    Claim,
    Hold,
    Offer,
    Confirm,
    Expire,
    Cancel,
    Open,
    Close,
    Drop,
    Restore,
    Enter,
    Leave,
    Draw,
    Allocate,
    Release,
    Transfer,
    Scan,
    Resell,
    Unlist,
    Resold,
}

/// One value an op carries, named as its stream field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Total,
    OpensAt,
    ClosesAt,
    Hold,
    Limit,
    Offer,
    Incarnation,
    Status,
    From,
    User,
    /// One number (`ticket`) or several (`tickets`), see [`Field::record_name`].
    Tickets,
    /// The event's `minted` after the change, 0 when nothing was minted:
    /// only in the effect (a replica must mint what its primary minted; the
    /// sidecar does not care).
    Minted,
    /// A hold's or offer's deadline (unix ms).
    Until,
    /// A draw event's commitment, `hex(SHA-256(seed))` (an init's `draw`).
    Commitment,
    /// A draw event's admission rate (an init's `admit`; in the effect 0
    /// means none).
    Admit,
    /// A draw event's secret seed: only in the init's effect.
    Secret,
    /// How many tickets an entrant wants.
    Count,
    /// An entrant's rank: only in the effect (replicas compute nothing).
    Rank,
    /// The revealed seed (`op=draw`).
    Seed,
    /// A seated event's layout (stored JSON), an init's `layout`.
    Layout,
    /// An init's `transfer_until` (unix ms; the effect writes the draw
    /// terms and layout before it, `""`/0 when none).
    TransferUntil,
    /// How a seated claim's seats were chosen: `best`, `split`, `seats`.
    Pick,
    /// The `SECTION`, `CATEGORY` and `ACCESSIBLE` a seated claim gave (in
    /// the effect `""`, `""` and 0 when not given, so they keep their
    /// positions).
    Section,
    Category,
    Accessible,
    /// An allocation's name (`allocate`, `release`).
    Name,
    /// The allocation a claim or hold took its tickets from, or an expiry
    /// or cancel gives them back to (written `from`, as a restore's
    /// offset: no op has both).
    Allocation,
    /// When an allocation releases itself (unix ms; in the effect 0 means
    /// none).
    Release,
    /// SHA-256 of an allocation's key: only in the effect (`""`: none).
    KeyHash,
    /// A transfer's giver (written `from`; read as its user).
    Giver,
    /// A transfer's receiver.
    To,
    /// A scanned ticket's generation.
    Gen,
    /// The gate a scan named.
    Gate,
}

impl Field {
    /// The field's name in records and error messages.
    pub fn name(self) -> &'static str {
        match self {
            Field::Total => "total",
            Field::OpensAt => "opens_at",
            Field::ClosesAt => "closes_at",
            Field::Hold => "hold",
            Field::Limit => "limit",
            Field::Offer => "offer",
            Field::Incarnation => "incarnation",
            Field::Status => "status",
            Field::From => "from",
            Field::User => "user",
            Field::Tickets => "tickets",
            Field::Minted => "minted",
            Field::Until => "until",
            Field::Commitment => "draw",
            Field::Admit => "admit",
            Field::Secret => "secret",
            Field::Count => "count",
            Field::Rank => "rank",
            Field::Seed => "seed",
            Field::Layout => "layout",
            Field::TransferUntil => "transfer_until",
            Field::Pick => "pick",
            Field::Section => "section",
            Field::Category => "category",
            Field::Accessible => "accessible",
            Field::Name => "name",
            Field::Allocation => "from",
            Field::Release => "release",
            Field::KeyHash => "key",
            Field::Giver => "from",
            Field::To => "to",
            Field::Gen => "gen",
            Field::Gate => "gate",
        }
    }

    /// The stream field carrying `value`: one ticket is `ticket <n>` (all
    /// that release 0.1 wrote), several are `tickets <n>,<n>,...`.
    pub fn record_name(self, value: &Value) -> &'static str {
        match (self, value) {
            (Field::Tickets, Value::Number(_)) => "ticket",
            (field, _) => field.name(),
        }
    }

    /// Whether the stream record carries it (all but `minted`, `secret`,
    /// `rank` and an allocation's key hash, which only replicas need).
    pub fn in_record(self) -> bool {
        !matches!(
            self,
            Field::Minted | Field::Secret | Field::Rank | Field::KeyHash
        )
    }

    /// Whether it says how a seated event chose the tickets (a pick's
    /// field: none without a pick).
    pub fn of_pick(self) -> bool {
        matches!(
            self,
            Field::Pick | Field::Section | Field::Category | Field::Accessible
        )
    }
}

/// Which form an op is written in: the two differ only in `minted` and in
/// an init's checkout settings (see [`Op::value`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    Record,
    Effect,
}

/// One op: its name and its values in order.
#[derive(Debug)]
pub struct OpSpec {
    pub kind: Kind,
    /// The `op` field's value (also a metrics label).
    pub name: &'static str,
    /// Its values, in the order records and effects write them.
    pub fields: &'static [Field],
    /// How many leading fields a record must carry: the rest read as their
    /// defaults when absent (an init's window, checkout and incarnation).
    pub record_needs: usize,
    /// How many leading values an effect must carry (an init of release
    /// 0.2 may stop after `closes_at`, `limit` or `offer`).
    pub effect_needs: usize,
}

impl OpSpec {
    /// An op whose every field is always written.
    const fn fixed(kind: Kind, name: &'static str, fields: &'static [Field]) -> OpSpec {
        OpSpec::needs(kind, name, fields, fields.len())
    }

    /// An op whose first `needs` fields are always written (the rest: a
    /// seated event's pick, an allocation, when there is one).
    const fn needs(
        kind: Kind,
        name: &'static str,
        fields: &'static [Field],
        needs: usize,
    ) -> OpSpec {
        OpSpec {
            kind,
            name,
            fields,
            record_needs: needs,
            effect_needs: needs,
        }
    }

    /// Whether an effect of this op may carry `n` values: at least the
    /// required ones, and never a `hold` without its `limit`.
    pub fn effect_takes(&self, n: usize) -> bool {
        (self.effect_needs..=self.fields.len()).contains(&n)
            && !(n > 0 && self.fields[n - 1] == Field::Hold)
    }
}

use Field as F;

/// Every op, in the order of [`Kind`].
pub const OPS: [OpSpec; 21] = [
    OpSpec {
        kind: Kind::Init,
        name: "init",
        fields: &[
            F::Total,
            F::OpensAt,
            F::ClosesAt,
            F::Hold,
            F::Limit,
            F::Offer,
            F::Incarnation,
            F::Commitment,
            F::Admit,
            F::Secret,
            F::Layout,
            F::TransferUntil,
        ],
        record_needs: 1,
        effect_needs: 3,
    },
    OpSpec::needs(
        Kind::Claim,
        "claim",
        &[
            F::User,
            F::Tickets,
            F::Minted,
            F::Pick,
            F::Section,
            F::Category,
            F::Accessible,
            F::Allocation,
        ],
        3,
    ),
    OpSpec::needs(
        Kind::Hold,
        "hold",
        &[
            F::User,
            F::Tickets,
            F::Minted,
            F::Until,
            F::Pick,
            F::Section,
            F::Category,
            F::Accessible,
            F::Allocation,
        ],
        4,
    ),
    OpSpec::needs(
        Kind::Offer,
        "offer",
        &[
            F::User,
            F::Tickets,
            F::Minted,
            F::Until,
            F::Pick,
            F::Section,
            F::Category,
            F::Accessible,
        ],
        4,
    ),
    OpSpec::fixed(Kind::Confirm, "confirm", &[F::User, F::Tickets]),
    OpSpec::needs(
        Kind::Expire,
        "expire",
        &[F::User, F::Tickets, F::Allocation],
        2,
    ),
    OpSpec::needs(
        Kind::Cancel,
        "cancel",
        &[F::User, F::Tickets, F::Allocation],
        2,
    ),
    OpSpec::fixed(Kind::Open, "open", &[]),
    OpSpec::fixed(Kind::Close, "close", &[]),
    OpSpec::fixed(Kind::Drop, "drop", &[]),
    OpSpec::fixed(
        Kind::Restore,
        "restore",
        &[F::Incarnation, F::Status, F::From],
    ),
    OpSpec::fixed(Kind::Enter, "enter", &[F::User, F::Count, F::Rank]),
    OpSpec::fixed(Kind::Leave, "leave", &[F::User]),
    OpSpec::fixed(Kind::Draw, "draw", &[F::Seed]),
    OpSpec {
        kind: Kind::Allocate,
        name: "allocate",
        fields: &[F::Name, F::Tickets, F::Minted, F::Release, F::KeyHash],
        record_needs: 2,
        effect_needs: 5,
    },
    OpSpec::needs(Kind::Release, "release", &[F::Name, F::Tickets], 1),
    OpSpec::fixed(Kind::Transfer, "transfer", &[F::Giver, F::To, F::Tickets]),
    OpSpec::needs(Kind::Scan, "scan", &[F::Tickets, F::Gen, F::Gate], 2),
    OpSpec::fixed(Kind::Resell, "resell", &[F::User, F::Tickets]),
    OpSpec::fixed(Kind::Unlist, "unlist", &[F::User, F::Tickets]),
    OpSpec::fixed(Kind::Resold, "resold", &[F::Giver, F::To, F::Tickets]),
];

/// The op named `name`.
pub fn find(name: &[u8]) -> Option<&'static OpSpec> {
    OPS.iter().find(|spec| spec.name.as_bytes() == name)
}

impl<U> Op<U> {
    pub fn kind(&self) -> Kind {
        match self {
            Op::Init { .. } => Kind::Init,
            Op::Claim { .. } => Kind::Claim,
            Op::Hold { .. } => Kind::Hold,
            Op::Offer { .. } => Kind::Offer,
            Op::Confirm { .. } => Kind::Confirm,
            Op::Expire { .. } => Kind::Expire,
            Op::Cancel { .. } => Kind::Cancel,
            Op::Open => Kind::Open,
            Op::Close => Kind::Close,
            Op::Drop => Kind::Drop,
            Op::Restore { .. } => Kind::Restore,
            Op::Enter { .. } => Kind::Enter,
            Op::Leave { .. } => Kind::Leave,
            Op::Draw { .. } => Kind::Draw,
            Op::Allocate { .. } => Kind::Allocate,
            Op::Release { .. } => Kind::Release,
            Op::Transfer { .. } => Kind::Transfer,
            Op::Scan { .. } => Kind::Scan,
            Op::Resell { .. } => Kind::Resell,
            Op::Unlist { .. } => Kind::Unlist,
            Op::Resold { .. } => Kind::Resold,
        }
    }

    /// The op's row of [`OPS`].
    pub fn spec(&self) -> &'static OpSpec {
        &OPS[self.kind() as usize]
    }

    /// The `op` field's value (also a metrics label).
    pub fn name(&self) -> &'static str {
        self.spec().name
    }
}

impl<U: AsRef<str>> Op<U> {
    /// How `field` is written in `form`, or `None` when it is left out: a
    /// deadline of 0, or an init's checkout settings at their defaults (a
    /// record leaves them out; so did an effect before release 0.3, whose
    /// inits have no incarnation; a 0.3 effect carries them all). `minted`
    /// is the effect's (0 when nothing was minted).
    pub fn value(&self, field: Field, form: Form, minted: Option<i64>) -> Option<Value<'_>> {
        let number = |n: i64| Some(Value::Number(n));
        match (self, field) {
            (Op::Init { .. }, _) => self.init_value(field, form),
            (Op::Allocate { .. } | Op::Release { .. }, _) => {
                self.allocation_value(field, form, minted)
            }
            (Op::Restore { incarnation, .. }, F::Incarnation) => Some(Value::Hex(*incarnation)),
            (Op::Restore { status, .. }, F::Status) => Some(Value::Text(status.as_str())),
            (Op::Restore { from, .. }, F::From) => Some(Value::Id(*from)),
            (_, F::Minted) => number(minted.unwrap_or(0)),
            (Op::Enter { count, .. }, F::Count) => number(*count),
            (Op::Enter { rank, .. }, F::Rank) => rank.map(|r| Value::Number(r as i64)),
            (Op::Draw { seed }, F::Seed) => Some(Value::Bytes(seed)),
            (Op::Transfer { user, .. } | Op::Resold { user, .. }, F::Giver) => {
                Some(Value::Text(user.as_ref()))
            }
            (Op::Transfer { to, .. } | Op::Resold { to, .. }, F::To) => Some(Value::Text(to)),
            (
                Op::Transfer { tickets, .. }
                | Op::Resold { tickets, .. }
                | Op::Resell { tickets, .. }
                | Op::Unlist { tickets, .. },
                F::Tickets,
            ) => Some(tickets.value()),
            (Op::Resell { user, .. } | Op::Unlist { user, .. }, F::User) => {
                Some(Value::Text(user.as_ref()))
            }
            (Op::Scan { ticket, .. }, F::Tickets) => number(*ticket),
            (Op::Scan { gen, .. }, F::Gen) => number(*gen),
            (Op::Scan { gate, .. }, F::Gate) => gate.as_deref().map(Value::Text),
            (op, field) if field.of_pick() => pick_value(op.pick()?, field, form),
            (Op::Enter { user, .. } | Op::Leave { user }, F::User) => {
                Some(Value::Text(user.as_ref()))
            }
            (op, F::User | F::Tickets | F::Until) => {
                let (user, tickets, until) = op.order()?;
                match field {
                    F::User => Some(Value::Text(user.as_ref())),
                    F::Tickets => Some(tickets.value()),
                    _ => (until > 0).then_some(Value::Number(until)),
                }
            }
            (op, F::Allocation) => op.from().map(Value::Text),
            _ => None,
        }
    }

    /// How an allocate's or release's `field` is written in `form` (see
    /// [`Op::value`]): the effect writes `release` 0 and the key hash `""`
    /// when there is none, the record leaves both out (and never has the
    /// key hash).
    fn allocation_value(&self, field: Field, form: Form, minted: Option<i64>) -> Option<Value<'_>> {
        let effect = form == Form::Effect;
        match (self, field) {
            (_, F::Minted) => Some(Value::Number(minted.unwrap_or(0))),
            (Op::Allocate { name, .. } | Op::Release { name, .. }, F::Name) => {
                Some(Value::Text(name))
            }
            (Op::Allocate { tickets, .. }, F::Tickets) => Some(tickets.value()),
            (Op::Release { tickets, .. }, F::Tickets) => tickets.as_ref().map(Tickets::value),
            (Op::Allocate { release, .. }, F::Release) => match release {
                Some(at) => Some(Value::Number(*at)),
                None => effect.then_some(Value::Number(0)),
            },
            (Op::Allocate { key, .. }, F::KeyHash) => match key {
                _ if !effect => None,
                Some(hash) => Some(Value::Bytes(hash)),
                None => Some(Value::Text("")),
            },
            _ => None,
        }
    }
}

/// How a pick's `field` is written: the record leaves out what the request
/// did not give; the effect writes `""` or 0 so every value keeps its
/// position.
fn pick_value(pick: &Pick, field: Field, form: Form) -> Option<Value<'_>> {
    let effect = form == Form::Effect;
    match field {
        F::Pick => Some(Value::Text(pick.how.as_str())),
        F::Section => match &pick.section {
            Some(s) => Some(Value::Text(s)),
            None => effect.then_some(Value::Text("")),
        },
        F::Category => match &pick.category {
            Some(c) => Some(Value::Text(c)),
            None => effect.then_some(Value::Text("")),
        },
        F::Accessible => match pick.accessible {
            Some(a) => Some(Value::Number(a)),
            None => effect.then_some(Value::Number(0)),
        },
        _ => None,
    }
}

impl<U> Op<U> {
    /// How an init's `field` is written in `form` (see [`Op::value`]).
    fn init_value(&self, field: Field, form: Form) -> Option<Value<'_>> {
        let Op::Init {
            total,
            opens_at,
            closes_at,
            checkout,
            incarnation,
            draw,
            layout,
            transfer_until,
        } = self
        else {
            return None;
        };
        let effect = form == Form::Effect;
        // An effect writing a later value keeps the positions before it.
        let placed = effect && (layout.is_some() || transfer_until.is_some());
        match (field, draw) {
            (F::Total, _) => Some(Value::Number(*total)),
            (F::OpensAt, _) => Some(Value::Number(*opens_at)),
            (F::ClosesAt, _) => Some(Value::Number(*closes_at)),
            (F::Incarnation, _) => incarnation.map(Value::Hex),
            (F::Commitment | F::Admit | F::Secret, Some(terms)) => terms.value(field, form),
            // A seated event's init effect keeps the layout's position with
            // empty draw terms.
            (F::Commitment | F::Secret, None) => placed.then_some(Value::Text("")),
            (F::Admit, None) => placed.then_some(Value::Number(0)),
            (F::Layout, _) => match layout {
                Some(layout) => Some(Value::Text(layout)),
                None => (effect && transfer_until.is_some()).then_some(Value::Text("")),
            },
            (F::TransferUntil, _) => transfer_until.map(Value::Number),
            (setting, _) => {
                let (settings, offer) = match (form, incarnation) {
                    (Form::Effect, Some(_)) => (true, true),
                    _ => checkout.written(),
                };
                match setting {
                    F::Hold => settings.then_some(Value::Number(checkout.hold)),
                    F::Limit => settings.then_some(Value::Number(checkout.limit)),
                    F::Offer => offer.then_some(Value::Number(checkout.offer)),
                    _ => None,
                }
            }
        }
    }
}

impl DrawTerms {
    /// How an init writes its draw terms: the record carries the
    /// commitment and `admit` when set; the effect carries all three,
    /// `admit` 0 when unset and the secret `""` when unknown, so the
    /// layout after them keeps its position.
    fn value(&self, field: Field, form: Form) -> Option<Value<'_>> {
        match (field, form) {
            (F::Commitment, _) => Some(Value::Bytes(&self.commitment)),
            (F::Admit, Form::Record) => self.admit.map(Value::Number),
            (F::Admit, Form::Effect) => Some(Value::Number(self.admit.unwrap_or(0))),
            (F::Secret, Form::Effect) => {
                Some(self.seed.as_ref().map_or(Value::Text(""), Value::Bytes))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::effect::{self, Effect};
    use crate::keys::MAX_TOTAL;
    use crate::model::Record;
    use crate::record::{self, tests::any_op};
    use crate::StreamId;
    use proptest::prelude::*;

    /// Whether `written` are the table's record fields of `spec`, in its
    /// order, with none of those every record carries left out.
    fn in_table_order(spec: &OpSpec, written: &[&str]) -> bool {
        let mut table = spec.fields.iter().filter(|f| f.in_record()).enumerate();
        written.iter().all(|name| {
            let name = if *name == "ticket" { "tickets" } else { name };
            table.any(|(_, f)| f.name() == name)
        }) && written.len()
            >= spec.fields[..spec.record_needs]
                .iter()
                .filter(|f| f.in_record())
                .count()
    }

    proptest! {
        /// Every op of the table, picked by row, round-trips as a record
        /// and as an effect, its fields written in the table's order.
        #[test]
        fn every_op_in_the_table_round_trips(
            (row, op) in (0..OPS.len()).prop_flat_map(|row| (Just(row), any_op(OPS[row].kind))),
            at in 0..i64::MAX,
            minted in proptest::option::of(1..=MAX_TOTAL),
            (ms, seq) in any::<(u64, u64)>(),
        ) {
            let spec = &OPS[row];
            let record = Record { op, at };
            prop_assert_eq!(record.op.name(), spec.name);
            let fields: Vec<(Vec<u8>, Vec<u8>)> = record.borrowed().fields("e")
                .map(|(k, v)| (k.as_bytes().to_vec(), v.to_string().into_bytes()))
                .collect();
            let names: Vec<&str> = record.borrowed().fields("e").map(|(k, _)| k).collect();
            prop_assert!(in_table_order(spec, &names[2..names.len() - 1]), "{:?}", names);
            let recorded = Record { op: record.op.as_recorded(), at };
            prop_assert_eq!(record::decode("e", &fields), Ok(recorded));
            let minted = minted.filter(|_| spec.fields.contains(&Field::Minted));
            // A compact op's effect carries its log entry's fields (versions 2 and 3).
            let compact = record.is_compact();
            let effect = Effect::Append { id: StreamId::new(ms, seq), record, minted };
            let raw: Vec<String> = effect.args("e").as_slice().iter().map(|v| v.to_string()).collect();
            prop_assert!(compact || spec.effect_takes(raw.len() - 5), "{:?}", raw);
            let raw: Vec<&[u8]> = raw.iter().map(|a| a.as_bytes()).collect();
            let decoded = effect::decode(&raw).map(|(event, e)| (event.to_owned(), e.owned()));
            prop_assert_eq!(decoded, Ok(("e".to_owned(), effect)));
        }
    }

    #[test]
    fn the_table_is_in_kind_order_with_unique_names() {
        for (i, spec) in OPS.iter().enumerate() {
            assert_eq!(spec.kind as usize, i, "{}", spec.name);
            assert_eq!(find(spec.name.as_bytes()).map(|s| s.kind), Some(spec.kind));
            assert!(spec.record_needs <= spec.fields.len());
            assert!(spec.effect_takes(spec.fields.len()), "{}", spec.name);
        }
        assert!(find(b"explode").is_none());
    }
}
