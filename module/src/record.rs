//! The stream record appended to `ticket:{E}:log` for every state change.
//!
//! `op <op> event <E> [user <u>] [ticket <n>] [total <n> opens_at <ms> closes_at <ms>] at <unix-ms>`
//! — the field order is part of the contract the sidecar decodes.

/// Which state change a record describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Init,
    Claim,
    Cancel,
    Open,
    Close,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Init => "init",
            Op::Claim => "claim",
            Op::Cancel => "cancel",
            Op::Open => "open",
            Op::Close => "close",
        }
    }
}

/// The parts of a record that depend on its op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detail<'a> {
    Init {
        total: i64,
        opens_at: i64,
        closes_at: i64,
    },
    Ticket {
        user: &'a str,
        ticket: i64,
    },
    None,
}

/// One log entry, before it becomes stream fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    pub op: Op,
    pub event: &'a str,
    pub detail: Detail<'a>,
    pub at: i64,
}

impl<'a> Record<'a> {
    pub fn init(event: &'a str, total: i64, opens_at: i64, closes_at: i64, at: i64) -> Record<'a> {
        Record {
            op: Op::Init,
            event,
            detail: Detail::Init {
                total,
                opens_at,
                closes_at,
            },
            at,
        }
    }

    /// A `claim` or `cancel` record.
    pub fn ticket(op: Op, event: &'a str, user: &'a str, ticket: i64, at: i64) -> Record<'a> {
        Record {
            op,
            event,
            detail: Detail::Ticket { user, ticket },
            at,
        }
    }

    /// An `open` or `close` record.
    pub fn status(op: Op, event: &'a str, at: i64) -> Record<'a> {
        Record {
            op,
            event,
            detail: Detail::None,
            at,
        }
    }

    /// The stream fields, in contract order, as name/value pairs. Values are
    /// borrowed strings or numbers so the hot path formats nothing it does
    /// not send.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, Value<'a>)> {
        let op = [
            ("op", Value::Text(self.op.as_str())),
            ("event", Value::Text(self.event)),
        ];
        let detail: [Option<(&'static str, Value<'a>)>; 3] = match self.detail {
            Detail::Init {
                total,
                opens_at,
                closes_at,
            } => [
                Some(("total", Value::Number(total))),
                Some(("opens_at", Value::Number(opens_at))),
                Some(("closes_at", Value::Number(closes_at))),
            ],
            Detail::Ticket { user, ticket } => [
                Some(("user", Value::Text(user))),
                Some(("ticket", Value::Number(ticket))),
                None,
            ],
            Detail::None => [None, None, None],
        };
        op.into_iter()
            .chain(detail.into_iter().flatten())
            .chain([("at", Value::Number(self.at))])
    }
}

/// A stream field value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    Text(&'a str),
    Number(i64),
}

impl std::fmt::Display for Value<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Text(s) => f.write_str(s),
            Value::Number(n) => write!(f, "{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(r: &Record) -> Vec<String> {
        r.fields()
            .flat_map(|(k, v)| [k.to_owned(), v.to_string()])
            .collect()
    }

    #[test]
    fn claim_fields_in_contract_order() {
        let r = Record::ticket(Op::Claim, "e1", "u1", 7, 1000);
        assert_eq!(
            flat(&r),
            ["op", "claim", "event", "e1", "user", "u1", "ticket", "7", "at", "1000"]
        );
    }

    #[test]
    fn init_fields_carry_the_window() {
        let r = Record::init("e1", 100, 5, 9, 1);
        assert_eq!(
            flat(&r),
            [
                "op",
                "init",
                "event",
                "e1",
                "total",
                "100",
                "opens_at",
                "5",
                "closes_at",
                "9",
                "at",
                "1"
            ]
        );
    }

    #[test]
    fn open_close_have_no_detail() {
        let r = Record::status(Op::Close, "e1", 3);
        assert_eq!(flat(&r), ["op", "close", "event", "e1", "at", "3"]);
    }
}
