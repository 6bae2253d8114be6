//! The vocabulary every format of the crate shares, without any format:
//! what a change of an event is ([`Op`], [`Record`]) and the values it
//! carries ([`Tickets`], [`Checkout`], [`Incarnation`], [`Status`]), the
//! [`Value`]s they go over the wire as, and [`Args`], a command's arguments
//! as values. How an op is written down lives in `ops` (the table),
//! `record` (stream fields) and `effect` (`TICKET._APPLY`).

use crate::keys::MAX_TOTAL;
use crate::StreamId;

/// Most tickets one record carries (a user's `LIMIT` is at most this).
pub const MAX_TICKETS: usize = 1000;

/// Longest hold (and offer), in ms: 7 days.
pub const MAX_HOLD_MS: i64 = 7 * 24 * 3600 * 1000;

/// Which incarnation of an event a record or meta hash belongs to: a random
/// non-zero number `TICKET.INIT` draws, written as 16 lowercase hex digits.
/// A re-created event gets a new one, so the sidecar can tell it apart from
/// the event it replaced (events made before release 0.3 have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Incarnation(pub u64);

impl Incarnation {
    /// Exactly 16 lowercase hex digits, not all zero.
    pub fn parse(text: &str) -> Option<Incarnation> {
        let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
        if text.len() != 16 || !text.bytes().all(hex) {
            return None;
        }
        u64::from_str_radix(text, 16)
            .ok()
            .filter(|n| *n != 0)
            .map(Incarnation)
    }
}

impl std::fmt::Display for Incarnation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Whether an event accepts claims (subject to its window): what a restore
/// installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::Closed => "closed",
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "open" => Some(Status::Open),
            "closed" => Some(Status::Closed),
            _ => None,
        }
    }
}

/// An event's checkout settings, set by its init.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkout {
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
    /// How long an offer of the waiting list is held, in ms.
    pub offer: i64,
}

impl Default for Checkout {
    fn default() -> Checkout {
        Checkout {
            hold: 0,
            limit: 1,
            offer: default_offer(0),
        }
    }
}

impl Checkout {
    /// Whether `hold` and `limit` are written (they differ from `0 1`, or
    /// `offer` is written) and whether `offer` is (it differs from its
    /// default): the same rule for the init record and the init effect.
    pub fn written(&self) -> (bool, bool) {
        let offer = self.offer != default_offer(self.hold);
        ((self.hold, self.limit) != (0, 1) || offer, offer)
    }
}

/// An offer's default hold: the event's `hold`, or 10 minutes when a claim
/// is a final sale (`hold` = 0).
pub fn default_offer(hold: i64) -> i64 {
    match hold {
        0 => 600_000,
        hold => hold,
    }
}

/// The ticket numbers of one change: ascending, distinct, `1..=MAX_TICKETS`
/// of them. One ticket, the common case, needs no allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tickets {
    One(i64),
    /// Two or more.
    Many(Vec<i64>),
}

impl Tickets {
    /// From ascending numbers (one number becomes [`Tickets::One`]).
    pub fn from_sorted(mut numbers: Vec<i64>) -> Tickets {
        match numbers.len() {
            1 => Tickets::One(numbers.remove(0)),
            _ => Tickets::Many(numbers),
        }
    }

    pub fn as_slice(&self) -> &[i64] {
        match self {
            Tickets::One(n) => std::slice::from_ref(n),
            Tickets::Many(v) => v,
        }
    }

    /// The lowest number (what a single-ticket reply shows).
    pub fn lowest(&self) -> i64 {
        self.as_slice().first().copied().unwrap_or(0)
    }

    /// The numbers as one value: `<n>` or `<n>,<n>,...`.
    pub fn value(&self) -> Value<'_> {
        match self {
            Tickets::One(n) => Value::Number(*n),
            Tickets::Many(v) => Value::List(v),
        }
    }
}

/// Most offers per second a draw's `ADMIT` may allow.
pub const MAX_ADMIT: i64 = 1_000_000;

/// A draw event's terms, set by its init (docs/design.md "The draw"): the
/// public commitment `SHA-256(seed)`, the admission rate, and — only in the
/// init's effect, never in its record — the secret seed itself, which a
/// replica must keep so that whichever server draws reveals the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrawTerms {
    pub commitment: [u8; 32],
    /// Offers per second (`ADMIT`), `None` = as fast as tickets are free.
    pub admit: Option<i64>,
    /// The secret seed: `Some` in effects, `None` decoded from a record.
    pub seed: Option<[u8; 32]>,
}

/// What happened. `U` is the user id: `&str` when encoding, `String` decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op<U = String> {
    /// Event created with `total` tickets; times in unix ms, 0 = no bound;
    /// `incarnation` is `None` in records written before release 0.3.
    Init {
        total: i64,
        opens_at: i64,
        closes_at: i64,
        checkout: Checkout,
        incarnation: Option<Incarnation>,
        /// `Some` for a draw event (`TICKET.INIT ... DRAW`).
        draw: Option<DrawTerms>,
        /// A seated event's layout, in its stored form (`TICKET.INIT ...
        /// SEATS`): JSON, parsed by `seats::Layout::parse`.
        layout: Option<String>,
        /// When transfers stop (unix ms, `TRANSFER_UNTIL`; `None`:
        /// `closes_at`).
        transfer_until: Option<i64>,
    },
    /// `user` won `tickets`, sold at once.
    Claim {
        user: U,
        tickets: Tickets,
        /// How a seated event's seats were chosen (`None`: not seated).
        pick: Option<Box<Pick>>,
        /// The allocation the tickets came from (`None`: public stock).
        from: Option<Box<str>>,
    },
    /// `user` holds `tickets` until `until` (unix ms) while paying.
    Hold {
        user: U,
        tickets: Tickets,
        until: i64,
        pick: Option<Box<Pick>>,
        from: Option<Box<str>>,
    },
    /// Returned `tickets` were offered to `user`, the head of the waiting
    /// list, held until `until`.
    Offer {
        user: U,
        tickets: Tickets,
        until: i64,
        pick: Option<Box<Pick>>,
    },
    /// `user`'s held `tickets` are sold.
    Confirm { user: U, tickets: Tickets },
    /// `user`'s hold on `tickets` ran out; they are free again (`from`:
    /// back in that allocation, else public).
    Expire {
        user: U,
        tickets: Tickets,
        from: Option<Box<str>>,
    },
    /// `user` gave `tickets` back (held or sold; `from`: a held order that
    /// goes back to that allocation).
    Cancel {
        user: U,
        tickets: Tickets,
        from: Option<Box<str>>,
    },
    /// Event (re)opened.
    Open,
    /// Event closed.
    Close,
    /// The event's keys were deleted (`TICKET.DROP`); the log stays as the
    /// trace of it.
    Drop,
    /// A rebuild installed a snapshot of incarnation `incarnation` taken
    /// from MySQL at offset `from` (every earlier entry is replaced by it),
    /// with status `status`.
    Restore {
        incarnation: Incarnation,
        status: Status,
        from: StreamId,
    },
    /// `user` entered a draw event's draw for `count` tickets, before the
    /// draw; `rank` is their place in it, carried only by the effect (a
    /// record decodes to `None`: the seed, revealed later, gives it).
    Enter {
        user: U,
        count: i64,
        rank: Option<u64>,
    },
    /// `user` left a draw event's queue as an entrant (before or after the
    /// draw; those who joined after it leave unlogged).
    Leave { user: U },
    /// The draw was made: the seed is revealed and the order fixed.
    Draw { seed: [u8; 32] },
    /// Free stock moved into the allocation `name` (docs/design.md
    /// "Allocations"), released to the public at `release` (unix ms) when
    /// set; `key` is the SHA-256 of its key, carried only by the effect.
    Allocate {
        name: String,
        tickets: Tickets,
        release: Option<i64>,
        key: Option<[u8; 32]>,
    },
    /// Free stock of the allocation `name` went back to public sale; an
    /// allocation left with no free tickets by it ends (`tickets` `None`:
    /// it had none).
    Release {
        name: String,
        tickets: Option<Tickets>,
    },
    /// `user`'s sold `tickets` went to `to` (`TICKET.TRANSFER`), each one
    /// generation up (docs/design.md "After the sale").
    Transfer {
        user: U,
        to: Box<str>,
        tickets: Tickets,
    },
    /// `ticket` was admitted at generation `gen` (`TICKET.SCAN`), at
    /// `gate` when the scanner named one.
    Scan {
        ticket: i64,
        gen: i64,
        gate: Option<Box<str>>,
    },
    /// `user` listed sold `tickets` for resale at face value
    /// (`TICKET.RESELL`); they stay `user`'s until a buyer confirms.
    Resell { user: U, tickets: Tickets },
    /// `user` took back listed `tickets` nobody held (`TICKET.UNLIST`).
    Unlist { user: U, tickets: Tickets },
    /// The listed `tickets` of `user` (the seller) went to `to` (the buyer
    /// who confirmed them), each one generation up: whom the payment
    /// system refunds.
    Resold {
        user: U,
        to: Box<str>,
        tickets: Tickets,
    },
}

/// How a seated event's claim, hold or offer chose its seats: the
/// record's `pick` and the request's `section`, `category` and
/// `accessible` when it gave them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pick {
    pub how: PickHow,
    pub section: Option<String>,
    pub category: Option<String>,
    pub accessible: Option<i64>,
}

/// `pick best|split|seats`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickHow {
    /// Best available, together.
    Best,
    /// Best available, split (no candidate together; `SPLIT`).
    Split,
    /// Picked by id (`SEATS`).
    Seats,
}

impl PickHow {
    pub fn as_str(self) -> &'static str {
        match self {
            PickHow::Best => "best",
            PickHow::Split => "split",
            PickHow::Seats => "seats",
        }
    }

    pub fn parse(text: &str) -> Option<PickHow> {
        match text {
            "best" => Some(PickHow::Best),
            "split" => Some(PickHow::Split),
            "seats" => Some(PickHow::Seats),
            _ => None,
        }
    }
}

impl<U> Op<U> {
    /// How a claim's, hold's or offer's seats were chosen (seated events).
    pub fn pick(&self) -> Option<&Pick> {
        match self {
            Op::Claim { pick, .. } | Op::Hold { pick, .. } | Op::Offer { pick, .. } => {
                pick.as_deref()
            }
            _ => None,
        }
    }

    /// The user, tickets and deadline (0 = none) of an op about a user's
    /// tickets.
    pub fn order(&self) -> Option<(&U, &Tickets, i64)> {
        match self {
            Op::Claim { user, tickets, .. }
            | Op::Confirm { user, tickets }
            | Op::Expire { user, tickets, .. }
            | Op::Cancel { user, tickets, .. } => Some((user, tickets, 0)),
            Op::Hold {
                user,
                tickets,
                until,
                ..
            }
            | Op::Offer {
                user,
                tickets,
                until,
                ..
            } => Some((user, tickets, *until)),
            _ => None,
        }
    }

    /// The allocation a claim or hold took its tickets from, or an expiry
    /// or cancel gives them back to.
    pub fn from(&self) -> Option<&str> {
        match self {
            Op::Claim { from, .. }
            | Op::Hold { from, .. }
            | Op::Expire { from, .. }
            | Op::Cancel { from, .. } => from.as_deref(),
            _ => None,
        }
    }

    /// The user an op is about, if any.
    pub fn user(&self) -> Option<&U> {
        match self {
            Op::Enter { user, .. }
            | Op::Leave { user }
            | Op::Transfer { user, .. }
            | Op::Resell { user, .. }
            | Op::Unlist { user, .. }
            | Op::Resold { user, .. } => Some(user),
            op => op.order().map(|(user, _, _)| user),
        }
    }
}

/// One log entry: a change and when Redis logged it (unix ms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<U = String> {
    pub op: Op<U>,
    pub at: i64,
}

/// A field value as it goes over the wire: borrowed text or a number, so
/// the module's hot path formats nothing it does not send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Text(&'a str),
    Number(i64),
    Id(StreamId),
    /// Numbers, written comma-separated.
    List(&'a [i64]),
    /// An incarnation: 16 lowercase hex digits.
    Hex(Incarnation),
    /// 32 bytes (a draw's seed or commitment): 64 lowercase hex digits.
    Bytes(&'a [u8; 32]),
    /// An inclusive range of numbers: `<a>-<b>`, or `<a>` when `a == b`.
    Range(i64, i64),
}

impl std::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(s) => f.write_str(s),
            Value::Number(n) => write!(f, "{n}"),
            Value::Id(id) => write!(f, "{id}"),
            Value::Hex(incarnation) => write!(f, "{incarnation}"),
            Value::Bytes(bytes) => f.write_str(&crate::draw::hex(*bytes)),
            Value::Range(a, b) if a == b => write!(f, "{a}"),
            Value::Range(a, b) => write!(f, "{a}-{b}"),
            Value::List(numbers) => {
                for (i, n) in numbers.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}")?;
                }
                Ok(())
            }
        }
    }
}

impl<U> Op<U> {
    /// The same op with its user id mapped by `f`.
    pub fn map_user<'a, V>(&'a self, f: impl FnOnce(&'a U) -> V) -> Op<V> {
        match self.map_order_user(f) {
            Ok(op) => op,
            Err(f) => self.map_other_user(f),
        }
    }

    /// An order op (claim, hold, offer, confirm, expire, cancel) with its
    /// user mapped; `Err(f)` hands `f` back for any other op.
    fn map_order_user<'a, V, F: FnOnce(&'a U) -> V>(&'a self, f: F) -> Result<Op<V>, F> {
        Ok(match self {
            Op::Claim {
                user,
                tickets,
                pick,
                from,
            } => Op::Claim {
                user: f(user),
                tickets: tickets.clone(),
                pick: pick.clone(),
                from: from.clone(),
            },
            Op::Hold {
                user,
                tickets,
                until,
                pick,
                from,
            } => Op::Hold {
                user: f(user),
                tickets: tickets.clone(),
                until: *until,
                pick: pick.clone(),
                from: from.clone(),
            },
            Op::Offer {
                user,
                tickets,
                until,
                pick,
            } => Op::Offer {
                user: f(user),
                tickets: tickets.clone(),
                until: *until,
                pick: pick.clone(),
            },
            Op::Confirm { user, tickets } => Op::Confirm {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Expire {
                user,
                tickets,
                from,
            } => Op::Expire {
                user: f(user),
                tickets: tickets.clone(),
                from: from.clone(),
            },
            Op::Cancel {
                user,
                tickets,
                from,
            } => Op::Cancel {
                user: f(user),
                tickets: tickets.clone(),
                from: from.clone(),
            },
            _ => return Err(f),
        })
    }

    /// Any op but an order op, its user (if it has one) mapped; an order
    /// op never gets here ([`Op::map_user`] maps it first).
    fn map_other_user<'a, V>(&'a self, f: impl FnOnce(&'a U) -> V) -> Op<V> {
        match self {
            Op::Enter { user, count, rank } => Op::Enter {
                user: f(user),
                count: *count,
                rank: *rank,
            },
            Op::Leave { user } => Op::Leave { user: f(user) },
            Op::Transfer { user, to, tickets } => Op::Transfer {
                user: f(user),
                to: to.clone(),
                tickets: tickets.clone(),
            },
            Op::Resell { user, tickets } => Op::Resell {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Unlist { user, tickets } => Op::Unlist {
                user: f(user),
                tickets: tickets.clone(),
            },
            Op::Resold { user, to, tickets } => Op::Resold {
                user: f(user),
                to: to.clone(),
                tickets: tickets.clone(),
            },
            op @ (Op::Claim { .. }
            | Op::Hold { .. }
            | Op::Offer { .. }
            | Op::Confirm { .. }
            | Op::Expire { .. }
            | Op::Cancel { .. }
            | Op::Init { .. }
            | Op::Scan { .. }
            | Op::Restore { .. }
            | Op::Draw { .. }
            | Op::Allocate { .. }
            | Op::Release { .. }
            | Op::Open
            | Op::Close
            | Op::Drop) => op.without_user(),
        }
    }

    /// An op that carries no user, as an op of any user type.
    fn without_user<V>(&self) -> Op<V> {
        match self {
            Op::Init {
                total,
                opens_at,
                closes_at,
                checkout,
                incarnation,
                draw,
                layout,
                transfer_until,
            } => Op::Init {
                total: *total,
                opens_at: *opens_at,
                closes_at: *closes_at,
                checkout: *checkout,
                incarnation: *incarnation,
                draw: *draw,
                layout: layout.clone(),
                transfer_until: *transfer_until,
            },
            Op::Restore {
                incarnation,
                status,
                from,
            } => Op::Restore {
                incarnation: *incarnation,
                status: *status,
                from: *from,
            },
            Op::Draw { seed } => Op::Draw { seed: *seed },
            Op::Allocate {
                name,
                tickets,
                release,
                key,
            } => Op::Allocate {
                name: name.clone(),
                tickets: tickets.clone(),
                release: *release,
                key: *key,
            },
            Op::Release { name, tickets } => Op::Release {
                name: name.clone(),
                tickets: tickets.clone(),
            },
            Op::Scan { ticket, gen, gate } => Op::Scan {
                ticket: *ticket,
                gen: *gen,
                gate: gate.clone(),
            },
            Op::Close => Op::Close,
            Op::Drop => Op::Drop,
            // `Open`: `map_user` passes only the ops without a user.
            _ => Op::Open,
        }
    }
}

impl<U: Clone> Op<U> {
    /// The op as its record carries it: without the values only its effect
    /// carries (an entrant's rank, a draw event's secret seed, an
    /// allocation's key hash).
    pub fn as_recorded(&self) -> Op<U> {
        match self {
            Op::Enter { user, count, .. } => Op::Enter {
                user: user.clone(),
                count: *count,
                rank: None,
            },
            Op::Init {
                draw: Some(terms), ..
            } => {
                let mut op = self.clone();
                if let Op::Init { draw, .. } = &mut op {
                    *draw = Some(DrawTerms {
                        seed: None,
                        ..*terms
                    });
                }
                op
            }
            Op::Allocate { key: Some(_), .. } => {
                let mut op = self.clone();
                if let Op::Allocate { key, .. } = &mut op {
                    *key = None;
                }
                op
            }
            op => op.clone(),
        }
    }
}

impl Record<&str> {
    /// The record with its user id copied.
    pub fn owned(&self) -> Record {
        Record {
            op: self.op.map_user(|u| u.to_string()),
            at: self.at,
        }
    }
}

impl<U: AsRef<str>> Record<U> {
    /// The record with the user borrowed.
    pub fn borrowed(&self) -> Record<&str> {
        Record {
            op: self.op.map_user(U::as_ref),
            at: self.at,
        }
    }
}

/// Most characters of an input an error text quotes.
pub const SHOWN_CHARS: usize = 40;

/// Input quoted in an error text, whatever its bytes: its first
/// [`SHOWN_CHARS`] characters, invalid UTF-8 as U+FFFD, what could hide
/// or mislead escaped ([`printable`]). Every decoder's error names bad
/// input this way, so the text can be shown to a client, logged or stored
/// as it is (docs/design.md "Hostile input").
pub fn shown(raw: &[u8]) -> String {
    printable(&String::from_utf8_lossy(raw), SHOWN_CHARS)
}

/// `text` with every character Rust's `{:?}` escapes but quotes (control
/// and format characters such as a right-to-left override, unassigned
/// code points, combining marks, `\`) written as in a string literal
/// (`\r`, `\0`, `\u{202e}`), cut to at most `max_chars` characters once
/// escaped (an escape is never cut in half).
pub fn printable(text: &str, max_chars: usize) -> String {
    let mut out = String::new();
    let mut written = 0;
    for c in text.chars() {
        let escaped = Some(c.escape_debug()).filter(|e| e.len() > 1 && !matches!(c, '"' | '\''));
        let len = escaped.as_ref().map_or(1, ExactSizeIterator::len);
        if written + len > max_chars {
            break;
        }
        written += len;
        match escaped {
            Some(escaped) => out.extend(escaped),
            None => out.push(c),
        }
    }
    out
}

/// A unix time in ms: plain decimal digits, fits an i64.
pub fn parse_time(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// A ticket number or total: decimal `1..=2147483647`.
pub fn parse_number(text: &str) -> Option<i64> {
    parse_time(text).filter(|n| (1..=MAX_TOTAL).contains(n))
}

/// `<n>` or `<n>,<n>,...`: 1 to [`MAX_TICKETS`] ticket numbers, ascending.
pub fn parse_tickets(text: &str) -> Option<Tickets> {
    let mut numbers = Vec::new();
    for part in text.split(',') {
        let n = parse_number(part)?;
        if numbers.last().is_some_and(|last| *last >= n) || numbers.len() == MAX_TICKETS {
            return None;
        }
        numbers.push(n);
    }
    Some(Tickets::from_sorted(numbers))
}

/// Most arguments an effect has after the command name, but for the
/// `restore-*` steps and a draw event's init, whose arguments spill into a
/// `Vec`.
pub const MAX_ARGS: usize = 21;

/// The arguments of one `TICKET._APPLY` (or `TICKET.RESTORE`), without a
/// heap allocation up to [`MAX_ARGS`] of them.
#[derive(Debug, Clone)]
pub struct Args<'a> {
    items: [Value<'a>; MAX_ARGS],
    len: usize,
    /// Every argument once there are more than [`MAX_ARGS`].
    more: Vec<Value<'a>>,
}

impl<'a> Args<'a> {
    pub(crate) fn new() -> Args<'a> {
        Args {
            items: [Value::Number(0); MAX_ARGS],
            len: 0,
            more: Vec::new(),
        }
    }

    pub(crate) fn push(&mut self, v: Value<'a>) {
        if self.len < MAX_ARGS {
            self.items[self.len] = v;
            self.len += 1;
            return;
        }
        if self.more.is_empty() {
            self.more.extend_from_slice(&self.items);
        }
        self.more.push(v);
    }

    pub(crate) fn extend(&mut self, values: impl IntoIterator<Item = Value<'a>>) {
        values.into_iter().for_each(|v| self.push(v));
    }

    pub fn as_slice(&self) -> &[Value<'a>] {
        match self.more.is_empty() {
            true => &self.items[..self.len],
            false => &self.more,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by libFuzzer on the `restore` target: the cut came before
    /// the escapes, so 300 DEL characters made an error of 1,800 bytes.
    #[test]
    fn printable_text_is_cut_after_its_escapes() {
        let dels = "\u{7f}".repeat(1000);
        let out = printable(&dels, 300);
        assert_eq!(out, r"\u{7f}".repeat(50));
        assert_eq!(printable("a\rb", 3), r"a\r");
        assert_eq!(printable("a\rb", 2), "a");
        assert_eq!(printable("\u{4e00}\0", 10), "\u{4e00}\\0");
        assert_eq!(shown(b"x\xffy"), "x\u{fffd}y");
        // Also what is not a control character but hides or misleads; a
        // quote stays (the texts quote input themselves).
        let tricky = "\u{10ffff}\u{202e}\u{200b}\\\"'\u{100}";
        assert_eq!(
            shown(tricky.as_bytes()),
            r#"\u{10ffff}\u{202e}\u{200b}\\"'"#.to_owned() + "\u{100}"
        );
        assert_eq!(shown(&[b'a'; 100]).len(), SHOWN_CHARS);
    }
}
