//! THE command table: every `TICKET.*` command, declared once, with its
//! name, flags, arity, key spec, summary, arguments and handler (a row's
//! shape is `host::command`). The load step hands it to the host, which
//! registers each entry with Redis and sets its `COMMAND DOCS` /
//! `COMMAND INFO` from it (Redis 7.0+); docs/commands.md gives each
//! command's syntax as [`syntax`] renders it (a test checks both agree).
//!
//! The declared key of every command is the event id argument (which is
//! not itself a key: its hash tag is the one of the event's keys), so
//! cluster clients route by it and ACL key patterns must match event ids.
//! Adding a command is one entry here and one file in `cmd/`.

use super::reapply;
use super::{allocate, allocations, release};
use super::{apply, cancel, claim, close, confirm, drop, healed, holder, init, layout};
use super::{leave, open, order, position, resell, restore, scan, seatmap, status, transfer};
use super::{unlist, wait};
pub use crate::host::command::{Arg, Audience, Command, Flags, KeyAccess, Kind};

const fn arg(name: &'static str, kind: Kind) -> Arg {
    Arg { name, kind }
}

const EVENT: Arg = arg("event", Kind::Event);
const USER: Arg = arg("user", Kind::Text);

/// Every command the module registers.
pub const COMMANDS: &[Command] = &[
    Command {
        name: "ticket.init",
        flags: Flags::Write,
        handler: init::command,
        summary: "Creates an event with `total` tickets, optionally open only between OPENS and CLOSES (unix ms), with claims held HOLD ms by default, at most LIMIT tickets per user and waiting-list offers held OFFER ms; DRAW sells through a fair draw at open, ADMIT offers per second; SEATS makes a seated event of a layout (JSON) whose seat ids are the tickets; transfers stop at TRANSFER_UNTIL (default CLOSES).",
        complexity: "O(1)",
        since: "0.1.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Insert,
        audience: Audience::Client,
        args: &[
            EVENT,
            arg("total", Kind::Integer),
            arg("opens", Kind::Option("OPENS")),
            arg("closes", Kind::Option("CLOSES")),
            arg("hold", Kind::Option("HOLD")),
            arg("limit", Kind::Option("LIMIT")),
            arg("offer", Kind::Option("OFFER")),
            arg("draw", Kind::Flag("DRAW")),
            arg("admit", Kind::Option("ADMIT")),
            arg("layout", Kind::TextOption("SEATS")),
            arg("until", Kind::Option("TRANSFER_UNTIL")),
        ],
    },
    Command {
        name: "ticket.claim",
        flags: Flags::Write,
        handler: claim::command,
        summary: "Hands the user the COUNT lowest free tickets (sold, or held HOLD ms), or the tickets the user already holds; on a seated event the best COUNT seats together (SECTION, CATEGORY, ACCESSIBLE, SPLIT), or exactly the SEATS picked; FROM claims from that allocation only (with its KEY).",
        complexity: "O(log N) per ticket, plus O(log N) per hold that expired; a seated event: O(R) in its rows, plus O(S) in the seats of the rows that can hold the party",
        since: "0.1.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[
            EVENT,
            USER,
            arg("count", Kind::Option("COUNT")),
            arg("hold", Kind::Option("HOLD")),
            arg("section", Kind::TextOption("SECTION")),
            arg("category", Kind::TextOption("CATEGORY")),
            arg("accessible", Kind::Option("ACCESSIBLE")),
            arg("split", Kind::Flag("SPLIT")),
            arg("from", Kind::TextOption("FROM")),
            arg("key", Kind::TextOption("KEY")),
            arg("id", Kind::Words("SEATS")),
        ],
    },
    Command {
        name: "ticket.layout",
        flags: Flags::Read,
        handler: layout::command,
        summary: "A seated event's layout as stored (JSON, every default filled in, each row's first_id); nil if the event is not seated.",
        complexity: "O(N) in the layout's size",
        since: "0.4.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.seatmap",
        flags: Flags::Read,
        handler: seatmap::command,
        summary: "A seated event's seats, one byte per seat id: . free, h held, s sold; nil if the event is not seated.",
        complexity: "O(N) in the seats",
        since: "0.4.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.confirm",
        flags: Flags::Write,
        handler: confirm::command,
        summary: "Makes the user's held order sold; replies with the number of tickets the user holds.",
        complexity: "O(log N), plus O(log N) per hold that expired",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.order",
        flags: Flags::Read,
        handler: order::command,
        summary: "The user's tickets, whether they are held or sold, and the hold's deadline; nil if none.",
        complexity: "O(log N)",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.cancel",
        flags: Flags::Write,
        handler: cancel::command,
        summary: "Returns all the user's tickets, held or sold, to the pool.",
        complexity: "O(log N)",
        since: "0.1.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.holder",
        flags: Flags::Read,
        handler: holder::command,
        summary: "The lowest ticket the user holds, or nil.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.status",
        flags: Flags::Read,
        handler: status::command,
        summary: "Total, remaining, claimed, status, window, unsynced log entries, held tickets, waiting list and incarnation of an event.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.open",
        flags: Flags::Write,
        handler: open::command,
        summary: "Accepts new claims again (the OPENS/CLOSES window still applies).",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.close",
        flags: Flags::Write,
        handler: close::command,
        summary: "Stops new claims; repeat claims still answer with the held ticket.",
        complexity: "O(1)",
        since: "0.1.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.drop",
        flags: Flags::Write,
        handler: drop::command,
        summary: "Deletes an event's keys but its log, and logs op=drop (the trace); refuses while its log is not drained, unless FORCE.",
        complexity: "O(N) in the event's holders and log",
        since: "0.1.0",
        arity: -2,
        key: 1,
        access: KeyAccess::Delete,
        audience: Audience::Client,
        args: &[EVENT, arg("force", Kind::Flag("FORCE"))],
    },
    Command {
        name: "ticket.restore",
        flags: Flags::Write,
        handler: restore::command,
        summary: "Operator: installs a snapshot of an event in steps: BEGIN <incarnation> <total> <minted> <status> <opens_at> <closes_at> <hold> <limit> <offer> <orders> <from-id> [SEATS <layout>] [FORCE], ORDERS <user> <tickets> <until> ..., FREE <n>|<a>-<b> ..., COMMIT (replies with the id of the op=restore entry). A seated event's layout comes with BEGIN, its seat state from its orders' seat ids.",
        complexity: "O(N log N) in the orders or numbers of the step",
        since: "0.3.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Operator,
        args: &[
            EVENT,
            arg("step", Kind::Text),
            arg("values", Kind::Rest),
        ],
    },
    Command {
        name: "ticket.reapply",
        flags: Flags::Write,
        handler: reapply::command,
        summary: "The sidecar's heal: re-applies a write an unplanned failover lost (the log entry's fields) when nothing since makes it wrong (no answer of the new primary about its user or tickets; nothing logged after SINCE touching them); replies with the new entry's id, or CHANGED and changes nothing.",
        complexity: "O(N log N) in the entry's tickets, plus O(M) in the entries after SINCE",
        since: "0.4.0",
        arity: -4,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Operator,
        args: &[
            EVENT,
            arg("since", Kind::Option("SINCE")),
            arg("field", Kind::Text),
            arg("value", Kind::Text),
            arg("more", Kind::Rest),
        ],
    },
    Command {
        name: "ticket.healed",
        flags: Flags::Write,
        handler: healed::command,
        summary: "The sidecar's heal is done (or found nothing to heal): forgets the users and tickets a promoted primary answered about without logging; replies 1 if the note changed, 0 if not.",
        complexity: "O(N) in the noted users and tickets",
        since: "0.4.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Operator,
        args: &[EVENT],
    },
    Command {
        name: "ticket.wait",
        flags: Flags::Write,
        handler: wait::command,
        summary: "Joins the event's FIFO waiting list for COUNT tickets; replies with the 1-based position, or 0 when tickets were offered at once.",
        complexity: "O(log N) in the waiting list, plus O(log N) per offer made",
        since: "0.3.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER, arg("count", Kind::Option("COUNT"))],
    },
    Command {
        name: "ticket.leave",
        flags: Flags::Write,
        handler: leave::command,
        summary: "Leaves the event's waiting list (1, or 0 when not on it); the next in line may be offered tickets.",
        complexity: "O(log N) in the waiting list, plus O(log N) per offer made",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.position",
        flags: Flags::Read,
        handler: position::command,
        summary: "The user's 1-based position in the event's waiting list, or nil.",
        complexity: "O(log N)",
        since: "0.3.0",
        arity: 3,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT, USER],
    },
    Command {
        name: "ticket.allocate",
        flags: Flags::Write,
        handler: allocate::command,
        summary: "Operator: sets free stock aside in the allocation name (kills, house seats, a partner's channel): the COUNT lowest free tickets, on a seated event COUNT free seats in SPLIT order (SECTION, CATEGORY) or exactly the SEATS given; claims take it only FROM it (with its KEY); RELEASE gives it back to the public at that time (unix ms).",
        complexity: "O(N log N) in the tickets allocated and the allocation's size",
        since: "0.5.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Operator,
        args: &[
            EVENT,
            arg("name", Kind::Text),
            arg("count", Kind::Option("COUNT")),
            arg("section", Kind::TextOption("SECTION")),
            arg("category", Kind::TextOption("CATEGORY")),
            arg("id", Kind::Words("SEATS")),
            arg("key", Kind::TextOption("KEY")),
            arg("release", Kind::Option("RELEASE")),
        ],
    },
    Command {
        name: "ticket.release",
        flags: Flags::Write,
        handler: release::command,
        summary: "Operator: gives the allocation's free tickets (all, the COUNT lowest, or the SEATS given) back to public sale, offered first to the waiting list; replies with how many.",
        complexity: "O(N log N) in the allocation's tickets, plus O(log N) per offer made",
        since: "0.5.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Operator,
        args: &[
            EVENT,
            arg("name", Kind::Text),
            arg("count", Kind::Option("COUNT")),
            arg("id", Kind::Words("SEATS")),
        ],
    },
    Command {
        name: "ticket.allocations",
        flags: Flags::Read,
        handler: allocations::command,
        summary: "The event's allocations: per allocation its name, free and claimed tickets and release time (never its key).",
        complexity: "O(N) in the allocations and their tickets",
        since: "0.5.0",
        arity: 2,
        key: 1,
        access: KeyAccess::Read,
        audience: Audience::Client,
        args: &[EVENT],
    },
    Command {
        name: "ticket.transfer",
        flags: Flags::Write,
        handler: transfer::command,
        summary: "Moves the sold tickets of `from` (all, or the TICKETS given) to `to`, each one generation up; replies with how many.",
        complexity: "O(N log N) in the tickets moved, plus O(log N) per hold that expired",
        since: "0.6.0",
        arity: -4,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[
            EVENT,
            arg("from", Kind::Text),
            arg("to", Kind::Text),
            arg("id", Kind::Words("TICKETS")),
        ],
    },
    Command {
        name: "ticket.resell",
        flags: Flags::Write,
        handler: resell::command,
        summary: "Lists sold tickets of `user` (all not listed yet, or the TICKETS given) for resale at face value: claims and the waiting list take them once no free ticket fits; a buyer's confirm makes them the buyer's, a generation up. Replies with how many.",
        complexity: "O(N log N) in the tickets listed, plus O(L) in the listed tickets and O(log N) per hold that expired",
        since: "0.6.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER, arg("id", Kind::Words("TICKETS"))],
    },
    Command {
        name: "ticket.unlist",
        flags: Flags::Write,
        handler: unlist::command,
        summary: "Takes back tickets `user` listed for resale that no buyer holds (all, or the TICKETS given); replies with how many.",
        complexity: "O(L) in the listed tickets, plus O(log N) per hold that expired",
        since: "0.6.0",
        arity: -3,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[EVENT, USER, arg("id", Kind::Words("TICKETS"))],
    },
    Command {
        name: "ticket.scan",
        flags: Flags::Write,
        handler: scan::command,
        summary: "Admits a sold ticket presented at its current generation, once (GATE names the gate).",
        complexity: "O(1) for a seated event, O(H) in the held orders otherwise, plus O(log N) per hold that expired",
        since: "0.6.0",
        arity: -4,
        key: 1,
        access: KeyAccess::Update,
        audience: Audience::Client,
        args: &[
            EVENT,
            arg("ticket", Kind::Integer),
            arg("gen", Kind::Integer),
            arg("gate", Kind::TextOption("GATE")),
        ],
    },
    Command {
        name: "ticket._apply",
        flags: Flags::Replicated,
        handler: apply::command,
        summary: "Internal: one replicated state change, sent by a primary or read from the AOF; refused from clients.",
        complexity: "O(log N)",
        since: "0.2.0",
        arity: -4,
        key: 2,
        access: KeyAccess::Update,
        audience: Audience::Replication,
        args: &[
            arg("version", Kind::Integer),
            EVENT,
            arg("op", Kind::Text),
            arg("values", Kind::Rest),
        ],
    },
];

/// The command's syntax line, as docs/commands.md gives it: the upper-case
/// name, then each argument (the event as `event`, a value by its name,
/// `[KW name]` for an option, `[KW]` for a flag, `[name ...]` for the rest).
pub fn syntax(command: &Command) -> String {
    let mut line = command.name.to_uppercase();
    for arg in command.args {
        line.push(' ');
        match arg.kind {
            Kind::Event | Kind::Text | Kind::Integer => line.push_str(arg.name),
            Kind::Option(keyword) | Kind::TextOption(keyword) => {
                line.push_str(&format!("[{keyword} {}]", arg.name))
            }
            Kind::Words(keyword) => line.push_str(&format!("[{keyword} {0} [{0} ...]]", arg.name)),
            Kind::Flag(keyword) => line.push_str(&format!("[{keyword}]")),
            Kind::Rest => line.push_str(&format!("[{} ...]", arg.name)),
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_names_its_event_and_fits_its_arity() {
        for doc in COMMANDS {
            let events = doc.args.iter().filter(|a| a.kind == Kind::Event).count();
            assert_eq!(events, 1, "{}", doc.name);
            let position = doc.args.iter().position(|a| a.kind == Kind::Event);
            assert_eq!(
                position.map(|p| p as i32 + 1),
                Some(doc.key),
                "{}",
                doc.name
            );
            let required = doc
                .args
                .iter()
                .filter(|a| matches!(a.kind, Kind::Event | Kind::Text | Kind::Integer))
                .count() as i32;
            assert_eq!(doc.arity.abs(), required + 1, "{}", doc.name);
        }
    }

    #[test]
    fn read_only_commands_are_flagged_read() {
        for command in COMMANDS {
            let read = command.access == KeyAccess::Read;
            assert_eq!(read, command.flags == Flags::Read, "{}", command.name);
        }
    }

    #[test]
    fn syntax_lines_follow_the_convention() {
        let claim = COMMANDS.iter().find(|c| c.name == "ticket.claim");
        assert_eq!(
            claim.map(syntax).as_deref(),
            Some("TICKET.CLAIM event user [COUNT count] [HOLD hold] [SECTION section] [CATEGORY category] [ACCESSIBLE accessible] [SPLIT] [FROM from] [KEY key] [SEATS id [id ...]]")
        );
        let drop = COMMANDS.iter().find(|c| c.name == "ticket.drop");
        assert_eq!(
            drop.map(syntax).as_deref(),
            Some("TICKET.DROP event [FORCE]")
        );
    }

    #[test]
    fn only_order_holder_status_and_position_are_read_only() {
        let read: Vec<_> = COMMANDS
            .iter()
            .filter(|d| d.access == KeyAccess::Read)
            .map(|d| d.name)
            .collect();
        assert_eq!(
            read,
            [
                "ticket.layout",
                "ticket.seatmap",
                "ticket.order",
                "ticket.holder",
                "ticket.status",
                "ticket.position",
                "ticket.allocations"
            ]
        );
    }
}
