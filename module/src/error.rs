//! The module's error type: every failure a command can reply with.
//!
//! Each error renders as `CODE message`, the code being the first word so that
//! clients can branch on it (`-SOLDOUT event 'e1' is sold out`). Anything taken
//! from user input is quoted with [`quote`]; whatever else reaches an error
//! reply (a layout's names, a decoder's message) is made legal by [`legal`],
//! the one function every error reply and log line goes through.

use std::ffi::CString;
use std::fmt;

/// What went wrong, with the code clients branch on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TicketError {
    /// `ERR`: malformed input (event id, user id, number, option).
    Invalid(String),
    /// `NOEVENT`: the event has no meta hash.
    NoEvent(String),
    /// `EXISTS`: `TICKET.INIT` on an event that already exists.
    Exists(String),
    /// `NOTOPEN`: a claim before `opens_at`.
    NotOpen { event: String, opens_at: i64 },
    /// `CLOSED`: the event was closed, or `closes_at` has passed.
    Closed(String),
    /// `SOLDOUT`: fewer free tickets left than asked for.
    SoldOut(String),
    /// `QUEUE`: a claim without an offer while a draw event's drawn
    /// entrants still wait: it sells through its queue.
    Queue(String),
    /// `LIMIT`: a claim for more tickets than the event's `LIMIT` per user.
    Limit {
        event: String,
        limit: i64,
        asked: i64,
    },
    /// `NOHOLD`: `TICKET.CONFIRM` for a user who holds nothing (never
    /// claimed, cancelled, or the hold expired).
    NoHold { event: String, user: String },
    /// `HOLDING`: `TICKET.WAIT` by a user who already holds tickets.
    Holding { event: String, user: String },
    /// `HOLDING`: a claim picking `SEATS` by a user who holds other seats
    /// (named).
    HoldsOthers { user: String, seats: Vec<String> },
    /// `UNSYNCED`: `TICKET.DROP` while the log still holds entries.
    Unsynced { event: String, entries: i64 },
    /// `WRONGTYPE`: one of the event's keys holds another Redis type.
    WrongType { key: String, expected: &'static str },
    /// `TRYAGAIN`: the event's keys disagree with each other (a cluster slot
    /// migration in progress, or hand edits); nothing was changed.
    TryAgain(String),
    /// `TRYAGAIN`: the event is being restored (`TICKET.RESTORE`); nothing
    /// was changed.
    Restoring(String),
    /// `NOTRESTORING`: a `TICKET.RESTORE` step on an event that is not
    /// being restored.
    NotRestoring(String),
    /// `INCOMPLETE`: `TICKET.RESTORE E COMMIT` before every order and free
    /// number was restored.
    Incomplete { event: String, detail: String },
    /// `CORRUPT`: the event's keys hold values the module never writes.
    Corrupt(String),
    /// `INTERNAL`: a bug caught at the command boundary (a panic).
    Internal(String),
    /// `NOPERM`: a command only the replication link or the AOF may send.
    NoPerm(String),
    /// `NOTOGETHER`: a seated claim of `count` found no seats together,
    /// though `free` seats it could take are free.
    NotTogether {
        event: String,
        count: i64,
        free: i64,
    },
    /// `TAKEN`: a picked seat (named) is held or sold.
    Taken(String),
    /// `ORPHAN`: a pick would leave seat `lone` alone while `from..to`
    /// would leave none (names).
    Orphan {
        lone: String,
        from: String,
        to: String,
    },
    /// `CHANGED`: `TICKET.REAPPLY` of a lost write the event's state no
    /// longer allows (`why`); nothing was changed.
    Changed { event: String, why: String },
    /// `SHORT`: an `ALLOCATE` or `RELEASE` asked for more than the event
    /// (or the allocation) has free; `what` is `event 'E'` or
    /// `allocation 'p'`, quoted already.
    Short { what: String, free: i64 },
    /// `NOKEY`: a claim from (or an allocation to) an allocation without
    /// its key, or with another.
    NoKey { event: String, name: String },
    /// `NOALLOCATION`: the event has no allocation of that name.
    NoAllocation { event: String, name: String },
    /// `SOLDOUT`: the allocation has fewer free tickets than asked for.
    AllocationSoldOut { event: String, name: String },
    /// `NOTSOLD`: a transfer or scan of a ticket that is not sold (`why`:
    /// free, held, not the giver's).
    NotSold { ticket: i64, why: String },
    /// `USED`: a transfer or scan of a ticket scanned already.
    Used {
        ticket: i64,
        at: i64,
        gate: Option<String>,
    },
    /// `STALE`: a scan at a generation that is not the ticket's.
    Stale { ticket: i64, current: i64 },
    /// `LISTED`: a ticket listed for resale cannot be transferred,
    /// cancelled or listed again (`why`: what it is).
    Listed { ticket: i64, why: String },
    /// `NOTLISTED`: an unlist of a ticket that is not listed by the user,
    /// or that a buyer holds.
    NotListed { ticket: i64, why: String },
}

impl TicketError {
    /// `SHORT`: the event has only `free` free tickets.
    pub fn short_of_event(event: &str, free: i64) -> TicketError {
        TicketError::Short {
            what: format!("event {}", quote(event.as_bytes())),
            free,
        }
    }

    /// `SHORT`: the allocation `name` has only `free` free tickets.
    pub fn short_of_allocation(name: &str, free: i64) -> TicketError {
        TicketError::Short {
            what: format!("allocation {}", quote(name.as_bytes())),
            free,
        }
    }

    /// The first word of the error reply.
    pub fn code(&self) -> &'static str {
        match self {
            TicketError::Invalid(_) => "ERR",
            TicketError::NoEvent(_) => "NOEVENT",
            TicketError::Exists(_) => "EXISTS",
            TicketError::NotOpen { .. } => "NOTOPEN",
            TicketError::Closed(_) => "CLOSED",
            TicketError::SoldOut(_) => "SOLDOUT",
            TicketError::Queue(_) => "QUEUE",
            TicketError::Limit { .. } => "LIMIT",
            TicketError::NoHold { .. } => "NOHOLD",
            TicketError::Holding { .. } | TicketError::HoldsOthers { .. } => "HOLDING",
            TicketError::Unsynced { .. } => "UNSYNCED",
            TicketError::WrongType { .. } => "WRONGTYPE",
            TicketError::TryAgain(_) | TicketError::Restoring(_) => "TRYAGAIN",
            TicketError::NotRestoring(_) => "NOTRESTORING",
            TicketError::Incomplete { .. } => "INCOMPLETE",
            TicketError::Corrupt(_) => "CORRUPT",
            TicketError::Internal(_) => "INTERNAL",
            TicketError::NoPerm(_) => "NOPERM",
            TicketError::Changed { .. } => "CHANGED",
            TicketError::NotTogether { .. } => "NOTOGETHER",
            TicketError::Taken(_) => "TAKEN",
            TicketError::Orphan { .. } => "ORPHAN",
            TicketError::Short { .. } => "SHORT",
            TicketError::NoKey { .. } => "NOKEY",
            TicketError::NoAllocation { .. } => "NOALLOCATION",
            TicketError::AllocationSoldOut { .. } => "SOLDOUT",
            TicketError::NotSold { .. } => "NOTSOLD",
            TicketError::Used { .. } => "USED",
            TicketError::Stale { .. } => "STALE",
            TicketError::Listed { .. } => "LISTED",
            TicketError::NotListed { .. } => "NOTLISTED",
        }
    }
}

impl fmt::Display for TicketError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ", self.code())?;
        match self {
            TicketError::Invalid(msg)
            | TicketError::Corrupt(msg)
            | TicketError::Internal(msg)
            | TicketError::NoPerm(msg) => f.write_str(msg),
            TicketError::NoEvent(e) => write!(f, "event {} does not exist", quote(e.as_bytes())),
            TicketError::Exists(e) => write!(f, "event {} already exists", quote(e.as_bytes())),
            TicketError::Closed(e) => write!(f, "event {} is closed", quote(e.as_bytes())),
            TicketError::TryAgain(e) => write!(
                f,
                "the keys of event {} disagree (a slot migration in progress?); nothing changed, retry",
                quote(e.as_bytes())
            ),
            TicketError::SoldOut(e) => write!(f, "event {} is sold out", quote(e.as_bytes())),
            TicketError::Queue(e) => write!(
                f,
                "event {} sells through its queue: TICKET.WAIT",
                quote(e.as_bytes())
            ),
            TicketError::Restoring(e) => {
                write!(f, "event {} is being restored", quote(e.as_bytes()))
            }
            TicketError::NotRestoring(e) => write!(
                f,
                "event {} is not being restored (TICKET.RESTORE E BEGIN first)",
                quote(e.as_bytes())
            ),
            _ => self.fmt_detail(f),
        }
    }
}

impl TicketError {
    /// The message of the errors that name more than their event.
    fn fmt_detail(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::NotOpen { event, opens_at: 0 } => write!(
                f,
                "event {} is not open yet: it opens at TICKET.OPEN",
                quote(event.as_bytes())
            ),
            TicketError::NotOpen { event, opens_at } => write!(
                f,
                "event {} opens at {opens_at} (unix ms)",
                quote(event.as_bytes())
            ),
            TicketError::Incomplete { event, detail } => write!(
                f,
                "the restore of event {} is incomplete: {detail}",
                quote(event.as_bytes())
            ),
            TicketError::Limit {
                event,
                limit,
                asked,
            } => write!(
                f,
                "event {} allows at most {limit} tickets per user, asked for {asked}",
                quote(event.as_bytes())
            ),
            TicketError::NotSold { .. }
            | TicketError::Listed { .. }
            | TicketError::NotListed { .. }
            | TicketError::Used { .. }
            | TicketError::Stale { .. } => self.fmt_after_sale(f),
            TicketError::NoHold { .. }
            | TicketError::Holding { .. }
            | TicketError::HoldsOthers { .. } => self.fmt_user(f),
            TicketError::Unsynced { event, entries } => write!(
                f,
                "event {} has {entries} log entries not yet drained; wait for the sidecar or use FORCE",
                quote(event.as_bytes())
            ),
            TicketError::WrongType { key, expected } => write!(
                f,
                "key {} holds the wrong kind of value (expected {expected})",
                quote(key.as_bytes())
            ),
            TicketError::NotTogether { .. } | TicketError::Taken(_) | TicketError::Orphan { .. } => {
                self.fmt_seats(f)
            }
            TicketError::Changed { event, why } => write!(
                f,
                "event {} changed since the lost write: {why}; nothing re-applied",
                quote(event.as_bytes())
            ),
            TicketError::Short { .. }
            | TicketError::NoKey { .. }
            | TicketError::NoAllocation { .. }
            | TicketError::AllocationSoldOut { .. } => self.fmt_allocation(f),
            // Written by `fmt` itself.
            _ => Ok(()),
        }
    }
}

impl TicketError {
    /// The message of the errors about a sold ticket's life after the sale.
    fn fmt_after_sale(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::NotSold { ticket, why }
            | TicketError::Listed { ticket, why }
            | TicketError::NotListed { ticket, why } => write!(f, "ticket {ticket} {why}"),
            TicketError::Used { ticket, at, gate } => {
                write!(f, "ticket {ticket} was scanned at {at}")?;
                match gate {
                    Some(gate) => write!(f, " at gate {}", quote(gate.as_bytes())),
                    None => Ok(()),
                }
            }
            TicketError::Stale { ticket, current } => write!(
                f,
                "ticket {ticket} was transferred (generation {current} now)"
            ),
            _ => Ok(()),
        }
    }

    /// The message of the errors about what a user holds.
    fn fmt_user(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::NoHold { event, user } => write!(
                f,
                "user {} holds no tickets of event {} (never claimed, cancelled, or the hold expired)",
                quote(user.as_bytes()),
                quote(event.as_bytes())
            ),
            TicketError::Holding { event, user } => write!(
                f,
                "user {} already holds tickets of event {}: nothing to wait for",
                quote(user.as_bytes()),
                quote(event.as_bytes())
            ),
            TicketError::HoldsOthers { user, seats } => {
                const SHOWN: usize = 8;
                let names = seats.iter().take(SHOWN).map(|s| quote(s.as_bytes()));
                let more = match seats.len() > SHOWN {
                    true => format!(" and {} more", seats.len() - SHOWN),
                    false => String::new(),
                };
                write!(
                    f,
                    "user {} holds {}{more} (CANCEL first to pick other seats)",
                    quote(user.as_bytes()),
                    names.collect::<Vec<_>>().join(" ")
                )
            }
            _ => Ok(()),
        }
    }

    /// The message of the errors about an allocation.
    fn fmt_allocation(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::Short { what, free } => write!(f, "{what} has {free} free"),
            TicketError::NoKey { event, name } => write!(
                f,
                "allocation {} of event {} needs its KEY (missing or wrong)",
                quote(name.as_bytes()),
                quote(event.as_bytes())
            ),
            TicketError::NoAllocation { event, name } => write!(
                f,
                "event {} has no allocation {}",
                quote(event.as_bytes()),
                quote(name.as_bytes())
            ),
            TicketError::AllocationSoldOut { event, name } => write!(
                f,
                "allocation {} of event {} is sold out",
                quote(name.as_bytes()),
                quote(event.as_bytes())
            ),
            _ => Ok(()),
        }
    }
}

impl TicketError {
    /// The message of a seated claim's errors.
    fn fmt_seats(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TicketError::NotTogether { event, count, free } => write!(
                f,
                "event {} has no {count} seats together ({free} free)",
                quote(event.as_bytes())
            ),
            TicketError::Taken(seat) => write!(f, "seat {} is taken", quote(seat.as_bytes())),
            TicketError::Orphan { lone, from, to } if from == to && lone == from => write!(
                f,
                "seat {} would be left alone: pick it instead, which leaves none",
                quote(lone.as_bytes())
            ),
            TicketError::Orphan { lone, from, to } if from == to => write!(
                f,
                "seat {} would be left alone; {} leaves none",
                quote(lone.as_bytes()),
                quote(from.as_bytes())
            ),
            TicketError::Orphan { lone, from, to } => write!(
                f,
                "seat {} would be left alone; {}..{} leave none",
                quote(lone.as_bytes()),
                quote(from.as_bytes()),
                quote(to.as_bytes())
            ),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for TicketError {}

/// Why a command failed before or while running: what its callback's
/// guard turns into the error reply.
#[derive(Debug, PartialEq, Eq)]
pub enum CommandError {
    /// Wrong number of arguments: Redis's standard message.
    Arity,
    Ticket(TicketError),
}

impl From<TicketError> for CommandError {
    fn from(e: TicketError) -> Self {
        CommandError::Ticket(e)
    }
}

/// Quotes user input for an error message: printable ASCII as is, everything
/// else (controls, quotes, non-ASCII bytes) escaped, and long input cut short.
pub fn quote(raw: &[u8]) -> String {
    const SHOWN: usize = 80;
    let mut out = String::with_capacity(raw.len().min(SHOWN) + 2);
    out.push('\'');
    for &b in raw.iter().take(SHOWN) {
        match b {
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    if raw.len() > SHOWN {
        out.push_str("...");
    }
    out.push('\'');
    out
}

/// Longest error text sent (after escaping): an error names what was
/// wrong, it does not echo a megabyte back.
const MAX_LEGAL: usize = 4096;

/// `text` as an error reply or log line may carry it: printable ASCII as
/// is, every other byte (controls, `\r`, `\n`, NUL, each byte of a
/// non-ASCII character) written `\xNN`, cut at `MAX_LEGAL` bytes. So
/// the reply is valid UTF-8, one line, and never a C string cut short.
pub fn legal(text: &str) -> CString {
    let mut out = Vec::with_capacity(text.len().min(MAX_LEGAL) + 3);
    for &b in text.as_bytes() {
        if out.len() >= MAX_LEGAL {
            out.extend_from_slice(b"...");
            break;
        }
        match b {
            0x20..=0x7e => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    // No byte of `out` is NUL: every one is printable ASCII.
    CString::new(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn legal_escapes_every_byte_outside_printable_ascii() {
        let text = "ERR section \"\u{4e00}\" \u{100}\u{c4}\r\n\0ok";
        assert_eq!(
            legal(text).to_str(),
            Ok("ERR section \"\\xe4\\xb8\\x80\" \\xc4\\x80\\xc3\\x84\\x0d\\x0a\\x00ok")
        );
    }

    #[test]
    fn legal_cuts_huge_text() {
        let text = "x".repeat(1 << 20);
        let out = legal(&text);
        assert!(out.as_bytes().len() <= MAX_LEGAL + 3);
        assert!(out.to_bytes().ends_with(b"..."));
    }

    proptest! {
        #[test]
        fn legal_is_always_printable_ascii(text in any::<String>()) {
            let out = legal(&text);
            prop_assert!(out.as_bytes().iter().all(|b| (0x20..=0x7e).contains(b)));
        }
    }

    #[test]
    fn quote_escapes_controls_and_nul() {
        assert_eq!(quote(b"a\0b\r\n'"), "'a\\x00b\\x0d\\x0a\\''");
    }

    #[test]
    fn quote_cuts_long_input() {
        let q = quote(&[b'x'; 200]);
        assert!(q.ends_with("...'"));
        assert!(q.len() < 100);
    }

    #[test]
    fn errors_start_with_their_code() {
        let e = TicketError::SoldOut("e1".into());
        assert_eq!(e.to_string(), "SOLDOUT event 'e1' is sold out");
        let e = TicketError::WrongType {
            key: "ticket:{e1}:pool".into(),
            expected: "zset",
        };
        assert!(e
            .to_string()
            .starts_with("WRONGTYPE key 'ticket:{e1}:pool'"));
    }
}
