//! The pool's data model: an event's meta hash ([`Meta`]), a restore's
//! staging fields, the answers of the commands, and the [`Clock`] a command
//! runs at. Plain values: no storage, no Redis.

use protocol::record::{Incarnation, Tickets};
use protocol::StreamId;

/// Whether an event accepts claims (subject to its `opens_at`/`closes_at`),
/// or is being restored (`TICKET.RESTORE`: every command but STATUS, DROP
/// and the restore's own steps answers `TRYAGAIN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Open,
    Closed,
    Restoring,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Restoring => "restoring",
            Status::Open => protocol::record::Status::Open.as_str(),
            Status::Closed => protocol::record::Status::Closed.as_str(),
        }
    }

    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "restoring" => Some(Status::Restoring),
            s => protocol::record::Status::parse(s).map(Status::from),
        }
    }
}

impl From<protocol::record::Status> for Status {
    fn from(status: protocol::record::Status) -> Status {
        match status {
            protocol::record::Status::Open => Status::Open,
            protocol::record::Status::Closed => Status::Closed,
        }
    }
}

/// What a restore keeps in the meta hash until its commit (the fields
/// `restore_status`, `restore_orders`, `restore_from`, `restore_sum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Staging {
    /// The status the event gets at the commit.
    pub status: protocol::record::Status,
    /// How many orders the snapshot has.
    pub orders: i64,
    /// The MySQL offset the snapshot was taken at.
    pub from: StreamId,
    /// The sum of every ticket number restored so far, held or free: at the
    /// commit it must be `1 + 2 + ... + minted`, so that no number is both
    /// held and free while another is missing.
    pub sum: i64,
}

/// The event's meta hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Meta {
    pub total: i64,
    pub minted: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    /// The default hold of a claim in ms (0 = a claim is a final sale).
    pub hold: i64,
    /// Most tickets one user may hold.
    pub limit: i64,
    /// Tickets in held orders, including holds past their deadline that are
    /// not expired yet.
    pub held: i64,
    /// Tickets holders have beyond their first (so the holders hash's length
    /// plus `extra` is the number of tickets out, without reading it).
    pub extra: i64,
    /// How long an offer of the waiting list is held, in ms.
    pub offer: i64,
    /// The `seq` of the latest place in the waiting list (0 = nobody ever
    /// waited, so the list's key is not even looked at). A new place's `seq`
    /// is `max(now, waitseq + 1)`: increasing, and never before the time the
    /// user joined.
    pub waitseq: i64,
    /// Which incarnation of the event this is (`None`: made before 0.3).
    pub incarnation: Option<Incarnation>,
    /// A draw event's terms and state (`None`: a plain event). Boxed: the
    /// claim path copies the meta, and a plain event pays one pointer.
    pub draw: Option<Box<Draw>>,
    /// A seated event (`TICKET.INIT ... SEATS`): its tickets are seat ids,
    /// its free seats are in the seat state, not the pool, and `minted` is
    /// `total` from the start.
    pub seated: bool,
    /// The event's allocations (docs/design.md "Allocations"): how many
    /// there are (0: the allocations key is never looked at), their free
    /// tickets (out of the pool and the free seats, below `minted`), and
    /// the earliest time one releases itself (0: none). The fields
    /// `allocations`, `allocated`, `release_at`, absent when 0.
    pub allocs: Allocs,
    /// Tickets listed for resale, held by a buyer or not (meta field
    /// `listed`, absent when 0; docs/design.md "After the sale"): while 0
    /// the resale hash is never looked at.
    pub listed: u32,
}

/// The meta hash's summary of an event's allocations. Small on purpose:
/// the claim path moves the meta, and past 128 bytes a move is a memcpy
/// call (16 bytes here keep it at 128; at 24 a claim cost ~90
/// instructions more).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Allocs {
    pub release_at: i64,
    /// Free allocated tickets (at most 64 allocations of 1000).
    pub free: u32,
    /// How many allocations (at most 64).
    pub count: u16,
}

impl Allocs {
    /// Whether an allocation releases itself at or before `now`.
    #[inline]
    pub fn release_due(&self, now: i64) -> bool {
        self.release_at > 0 && now >= self.release_at
    }
}

/// One allocation (a field of `ticket:{E}:alloc`): when it releases
/// itself, how many of its tickets were claimed, the SHA-256 of its key,
/// and its free tickets (ascending). Written `<release> <claimed> <key hex
/// or -> <tickets or ->`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allocation {
    pub release: Option<i64>,
    pub claimed: i64,
    pub key: Option<[u8; 32]>,
    pub free: Vec<i64>,
}

impl Allocation {
    /// The key hash of an allocation restored by `TICKET.RESTORE`: no key
    /// hashes to it, so no `FROM` claim opens it until a `TICKET.ALLOCATE`
    /// sets its key (MySQL never stores one: the log does not carry it).
    pub const RESTORED_KEY: [u8; 32] = [0; 32];

    pub fn encode(&self) -> String {
        let key = self.key.map_or("-".to_owned(), |k| protocol::draw::hex(&k));
        let free = match self.free.is_empty() {
            true => "-".to_owned(),
            false => protocol::record::Value::List(&self.free).to_string(),
        };
        format!(
            "{} {} {key} {free}",
            self.release.unwrap_or(0),
            self.claimed
        )
    }

    /// `None` when `text` is not a value [`Allocation::encode`] writes.
    pub fn parse(text: &str) -> Option<Allocation> {
        let mut parts = text.split(' ');
        let release = protocol::record::parse_time(parts.next()?)?;
        let claimed = protocol::record::parse_time(parts.next()?)?;
        let key = match parts.next()? {
            "-" => None,
            hex => Some(protocol::draw::parse_seed(hex)?),
        };
        let free = match parts.next()? {
            "-" => Vec::new(),
            list => protocol::record::parse_tickets(list)?.as_slice().to_vec(),
        };
        if parts.next().is_some() {
            return None;
        }
        Some(Allocation {
            release: Some(release).filter(|r| *r > 0),
            claimed,
            key,
            free,
        })
    }
}

/// A draw event's part of the meta hash (docs/design.md "The draw"): the
/// fields `draw`, `seed`, `admit`, `drawn_at`, `admit_second`,
/// `admit_used`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Draw {
    /// SHA-256 of the seed, published at INIT.
    pub commitment: [u8; 32],
    /// The secret seed (revealed by `op=draw`); `None` only when an event
    /// was made from a record without it (never by this module).
    pub seed: Option<[u8; 32]>,
    /// Offers per second (`ADMIT`), `None` = as fast as tickets are free.
    pub admit: Option<i64>,
    /// When the draw was made (unix ms, the record's `at`); `None` = not yet.
    pub drawn_at: Option<i64>,
    /// The admission bucket: the second (counted from the draw) that
    /// `admit_used` belongs to, and the offers made in it.
    pub admit_second: i64,
    pub admit_used: i64,
}

impl Draw {
    /// The terms of a new draw event, not drawn yet.
    pub fn new(commitment: [u8; 32], seed: Option<[u8; 32]>, admit: Option<i64>) -> Draw {
        Draw {
            commitment,
            seed,
            admit,
            drawn_at: None,
            admit_second: 0,
            admit_used: 0,
        }
    }

    /// The admission bucket, once drawn with `ADMIT`.
    pub fn admission(&self) -> Option<protocol::draw::Admission> {
        let (rate, since) = (self.admit?, self.drawn_at?);
        Some(protocol::draw::Admission {
            rate: rate as u64,
            since,
            second: self.admit_second,
            used: self.admit_used as u64,
        })
    }
}

/// Longest hold, in ms (7 days).
/// `POSITION`'s answer for a user holding an offer (as `WAIT`'s when the
/// user is offered at once).
pub const OFFERED: i64 = 0;

pub const MAX_HOLD_MS: i64 = 7 * 24 * 3600 * 1000;

/// Most tickets one user may hold, whatever the event's `LIMIT` says.
pub const MAX_LIMIT: i64 = protocol::record::MAX_TICKETS as i64;

/// The answer to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// New tickets, sold at once.
    New(Tickets),
    /// New tickets, held until the order is confirmed or expires.
    Held(Tickets),
    /// The tickets the user already held; nothing changed.
    Repeat(Tickets),
}

impl Claim {
    pub fn tickets(&self) -> &Tickets {
        match self {
            Claim::New(t) | Claim::Held(t) | Claim::Repeat(t) => t,
        }
    }

    /// The user's lowest ticket (the reply without `COUNT`).
    pub fn ticket(&self) -> i64 {
        self.tickets().lowest()
    }
}

/// The options of one claim.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClaimOptions {
    /// How many tickets (`COUNT`, default 1).
    pub count: Option<i64>,
    /// How long to hold them, overriding the event's default (`HOLD`).
    pub hold: Option<i64>,
    /// A seated event's options (`None`: none given).
    pub seats: Option<Box<SeatAsk>>,
    /// `FROM name [KEY secret]`: claims from that allocation only.
    pub from: Option<Box<FromAsk>>,
}

/// `FROM name [KEY secret]` of a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FromAsk {
    pub name: String,
    pub key: Option<Vec<u8>>,
}

/// What a claim of a seated event asks for beyond `COUNT`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SeatAsk {
    pub section: Option<String>,
    pub category: Option<String>,
    /// `ACCESSIBLE a`: at least `a` wheelchair spaces.
    pub accessible: Option<i64>,
    /// `SPLIT`: scattered seats when none sit together.
    pub split: bool,
    /// `SEATS id ...`: exactly these seats.
    pub ids: Option<Vec<i64>>,
}

/// What `TICKET.STATUS` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub total: i64,
    pub remaining: i64,
    /// Tickets held or sold.
    pub claimed: i64,
    /// Tickets in live holds.
    pub held: i64,
    pub status: Status,
    pub opens_at: i64,
    pub closes_at: i64,
    pub unsynced: i64,
    /// The waiting list's length.
    pub waiting: i64,
    pub incarnation: Option<Incarnation>,
    /// A draw event's commitment, its seed once drawn, and `ADMIT`.
    pub draw: Option<DrawReport>,
    /// A seated event's free seats by category (every category, in layout
    /// order) and its free accessible seats.
    pub seats: Option<SeatReport>,
    /// Free allocated tickets (not in `remaining`).
    pub allocated: i64,
    /// Tickets listed for resale nobody holds (not in `remaining`).
    pub resale: i64,
}

/// A seated event's free seats by category (every category, in layout
/// order) and its free accessible seats.
pub type SeatReport = (Vec<(String, i64)>, i64);

/// What `TICKET.STATUS` adds for a draw event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawReport {
    pub commitment: [u8; 32],
    /// Revealed only once drawn.
    pub seed: Option<[u8; 32]>,
    pub admit: Option<i64>,
}

/// What `TICKET.ORDER` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderReport {
    pub tickets: Tickets,
    /// The held order's deadline; `None` when sold.
    pub expires_at: Option<i64>,
    /// A seated event's seat names (`A-2-103`), in ticket order.
    pub seats: Option<Vec<String>>,
    /// Each ticket's generation, in ticket order (docs/design.md "After
    /// the sale").
    pub gens: Vec<i64>,
}

/// When reads on this server count holds past their deadline as free: on the
/// primary at `now` (`Some(now)`), never on a replica (`None`), which waits
/// for its primary's expiry.
pub type ExpiredFrom = Option<Clock>;

/// The time a command runs at, and whether some hold of its event may be
/// due by then (the expiry index's hint: it may say yes wrongly, never no
/// wrongly; a yes makes the command read the event's holds key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    pub now: i64,
    pub maybe_due: bool,
    /// Most offers this command (or sweep run) may make
    /// (`ticket.sweep-max`): the rest are left to the sweep.
    pub offers: usize,
}

impl Clock {
    /// `now`, with no hint: every due hold is looked for.
    pub fn at(now: i64) -> Clock {
        Clock {
            now,
            maybe_due: true,
            offers: usize::MAX,
        }
    }
}
