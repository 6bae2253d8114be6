//! Key names and identifiers (docs/design.md "Keys").
//!
//! All keys of event `E` share the hash tag `{E}`, so they live in one
//! cluster slot: `ticket:{E}:meta` (hash), `ticket:{E}:pool` (zset),
//! `ticket:{E}:holders` (hash), `ticket:{E}:log` (stream) and, while any
//! order is held, `ticket:{E}:holds` (zset: user -> deadline), and while
//! anyone waits, `ticket:{E}:waiting` (zset: user -> place), and while an
//! entrant of a draw who wants more than one ticket waits or anyone holds an
//! offer, `ticket:{E}:wants` (hash: user -> count, 0 = offered), and for a seated event `ticket:{E}:seats` (string:
//! the seat state, 2 bits per seat; its layout is the meta hash's field
//! `layout`). Event ids have no
//! braces, so the hash tag of the event argument equals the keys' tag and
//! cluster clients route `TICKET.* E ...` by its first argument.

/// Channel on which `TICKET.INIT` publishes the new event's id.
pub const EVENTS_CHANNEL: &str = "ticket:events";

/// The channel on which the user ids offered tickets of `event` are
/// published, e.g. `ticket:{e1}:offers`.
pub fn offers_channel(event: &str) -> String {
    format!("ticket:{{{event}}}:offers")
}

/// The cluster hash slot of every key of `event` (its hash tag `{E}`):
/// CRC16 (XMODEM) of the event id, modulo 16384, as Redis and Valkey
/// compute it.
pub fn slot_of(event: &str) -> u16 {
    crc16::State::<crc16::XMODEM>::calculate(event.as_bytes()) % 16384
}

/// Longest event or user id, in bytes (MySQL `VARCHAR(64)` holds them).
pub const MAX_ID_LEN: usize = 64;

/// Largest event size and ticket number: MySQL `INT` holds every number.
pub const MAX_TOTAL: i64 = 2_147_483_647;

/// One of an event's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    Meta = 0,
    Pool = 1,
    Holders = 2,
    Log = 3,
    /// The users whose orders are held, scored by their deadline (unix ms).
    Holds = 4,
    /// The waiting list: users scored by their place
    /// (`seq * WAIT_COUNT_SPAN + count`, FIFO by `seq`).
    Waiting = 5,
    /// A draw event's entrants who want more than one ticket: user ->
    /// count (absent = 1); their waiting score is their rank. A user
    /// holding an offer of the waiting list or draw (any event) is there
    /// with [`WANTS_OFFERED`] until it is confirmed, cancelled or expires.
    Wants = 6,
    /// A seated event's seat state: a string of 2 bits per seat id
    /// (`seats::state`, packed), free 0, held 1, sold 2.
    Seats = 7,
}

/// The wants hash's value of a user holding an offer: wanting nothing
/// more from the queue, its place is "offered" (`TICKET.POSITION` 0).
pub const WANTS_OFFERED: i64 = 0;

/// Every key of an event, in the order of [`Part`]'s discriminants.
pub const PARTS: [Part; 8] = [
    Part::Meta,
    Part::Pool,
    Part::Holders,
    Part::Log,
    Part::Holds,
    Part::Waiting,
    Part::Wants,
    Part::Seats,
];

impl Part {
    /// The last segment of the key name.
    pub fn suffix(self) -> &'static str {
        match self {
            Part::Meta => "meta",
            Part::Pool => "pool",
            Part::Holders => "holders",
            Part::Log => "log",
            Part::Holds => "holds",
            Part::Waiting => "waiting",
            Part::Wants => "wants",
            Part::Seats => "seats",
        }
    }
}

/// The name of one of the event's keys, e.g. `ticket:{e1}:pool`.
pub fn key(event: &str, part: Part) -> String {
    format!("ticket:{{{event}}}:{}", part.suffix())
}

/// The note of the users and tickets a promoted primary answered about
/// without logging anything, until the sidecar's heal of the event is done
/// (`ticket:{E}:answered`, a hash; docs/design.md "Healing after an
/// unplanned failover"). Not a [`Part`]: only the note's own code reads it.
pub fn answered_key(event: &str) -> String {
    format!("ticket:{{{event}}}:answered")
}

/// The note's field that closes it for a primary's term (its value).
pub const ANSWERED_CLOSED: &str = "closed";

/// The note's field of a user (`u:<user>`).
pub fn answered_user(user: &str) -> String {
    format!("u:{user}")
}

/// The note's field of a ticket number (`t:<n>`).
pub fn answered_ticket(ticket: i64) -> String {
    format!("t:{ticket}")
}

/// The note's fields of an answer to `user`, who holds `tickets`.
pub fn answered_fields(user: &str, tickets: &[i64]) -> Vec<String> {
    let tickets = tickets.iter().map(|&t| answered_ticket(t));
    std::iter::once(answered_user(user))
        .chain(tickets)
        .collect()
}

/// An event's allocations (`ticket:{E}:alloc`, a hash; docs/design.md
/// "Allocations"): [`alloc_field`] of each allocation -> its state
/// (`<release> <claimed> <key hash or -> <free tickets or ->`), and
/// [`alloc_user`] of a user whose order came from one -> its name. Not a
/// [`Part`]: opened only by events that have allocations.
pub fn alloc_key(event: &str) -> String {
    format!("ticket:{{{event}}}:alloc")
}

/// The allocations hash's field of the allocation `name` (`a:<name>`).
pub fn alloc_field(name: &str) -> String {
    format!("a:{name}")
}

/// The allocations hash's field of a user whose order came from an
/// allocation (`u:<user>`).
pub fn alloc_user(user: &str) -> String {
    format!("u:{user}")
}

/// Longest allocation name, in bytes.
pub const MAX_ALLOCATION_NAME: usize = 32;

/// Most allocations of one event.
pub const MAX_ALLOCATIONS: usize = 64;

/// An allocation name: 1–32 bytes of `[A-Za-z0-9_.-]`.
pub fn valid_allocation(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_ALLOCATION_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// A gate name (`TICKET.SCAN ... GATE g`): the same rule as an
/// allocation name, 1–32 bytes of `[A-Za-z0-9_.-]`.
pub fn valid_gate(gate: &str) -> bool {
    valid_allocation(gate)
}

/// An event's generations hash (`ticket:{E}:gens`: ticket -> its
/// generation, only when above 1) and scans hash (`ticket:{E}:scans`:
/// ticket -> `<at> <gen> <gate or ->`), docs/design.md "After the sale".
/// Not [`Part`]s: opened only by the commands after the sale and by the
/// cancel or expiry of a ticket that has either.
pub fn after_key(event: &str, scans: bool) -> String {
    let suffix = if scans { "scans" } else { "gens" };
    format!("ticket:{{{event}}}:{suffix}")
}

/// An event's resale hash (`ticket:{E}:resale`): listed ticket ->
/// `<seller>`, or `<seller>\n<buyer>` while a buyer holds it; field `0`:
/// how many listed tickets buyers hold (docs/design.md "After the sale").
/// Opened only when the meta's `listed` is above 0, and by the commands
/// of the resale.
pub fn resale_key(event: &str) -> String {
    format!("ticket:{{{event}}}:resale")
}

/// The event whose `part` key `key` is, if it is one
/// (`ticket:{E}:log` -> `E`).
pub fn event_of_key(key: &[u8], part: Part) -> Option<&str> {
    let inner = key
        .strip_prefix(b"ticket:{")?
        .strip_suffix(part.suffix().as_bytes())?
        .strip_suffix(b"}:")?;
    let event = std::str::from_utf8(inner).ok()?;
    valid_event(event).then_some(event)
}

/// An event id: 1–64 bytes of `[A-Za-z0-9_.:-]`.
pub fn valid_event(event: &str) -> bool {
    !event.is_empty()
        && event.len() <= MAX_ID_LEN
        && event
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// Why a user id is refused, or `None` when it is valid: 1–64 bytes of
/// UTF-8 without control characters (it must fit MySQL `VARCHAR(64)`
/// utf8mb4; refusing it at claim time beats poisoning the sidecar later).
pub fn user_problem(user: &str) -> Option<&'static str> {
    if user.is_empty() || user.len() > MAX_ID_LEN {
        Some("must be 1-64 bytes")
    } else if user.chars().any(char::is_control) {
        Some("control characters are not allowed")
    } else {
        None
    }
}

/// True for a valid user id (see [`user_problem`]).
pub fn valid_user(user: &str) -> bool {
    user_problem(user).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_the_servers() {
        // CLUSTER KEYSLOT of the reference values and of an event's key.
        assert_eq!(slot_of("123456789"), 0x31C3);
        assert_eq!(slot_of("e1"), 4781);
        assert_eq!(slot_of("concert-2026"), 3664);
    }
    use proptest::prelude::*;

    #[test]
    fn key_names_share_the_hash_tag() {
        assert_eq!(key("e1", Part::Log), "ticket:{e1}:log");
        assert_eq!(key("e1", Part::Meta), "ticket:{e1}:meta");
        assert_eq!(
            PARTS.map(Part::suffix),
            ["meta", "pool", "holders", "log", "holds", "waiting", "wants", "seats"]
        );
    }

    #[test]
    fn event_of_key_accepts_only_well_formed_keys() {
        assert_eq!(event_of_key(b"ticket:{e1}:log", Part::Log), Some("e1"));
        assert_eq!(
            event_of_key(b"ticket:{a.b:c-d_1}:meta", Part::Meta),
            Some("a.b:c-d_1")
        );
        assert_eq!(event_of_key(b"ticket:{a}b}:log", Part::Log), None);
        assert_eq!(event_of_key(b"ticket:{}:log", Part::Log), None);
        assert_eq!(event_of_key(b"ticket:{e1}:meta", Part::Log), None);
        assert_eq!(event_of_key(b"other", Part::Log), None);
    }

    #[test]
    fn ids() {
        assert!(valid_event("concert-2026.a:b_c"));
        assert!(!valid_event("a{b}"));
        assert!(!valid_event(""));
        assert!(!valid_event(&"a".repeat(65)));
        assert!(valid_user("ü-ß 13"));
        assert!(valid_user(&"a".repeat(64)));
        assert_eq!(user_problem(&"a".repeat(65)), Some("must be 1-64 bytes"));
        assert_eq!(user_problem(""), Some("must be 1-64 bytes"));
        assert_eq!(
            user_problem("a\u{7f}"),
            Some("control characters are not allowed")
        );
    }

    proptest! {
        #[test]
        fn every_valid_event_round_trips_through_its_keys(event in "[A-Za-z0-9_.:-]{1,64}") {
            for part in PARTS {
                let name = key(&event, part);
                prop_assert_eq!(event_of_key(name.as_bytes(), part), Some(event.as_str()));
            }
        }
    }
}
