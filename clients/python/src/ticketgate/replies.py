"""Typed replies (`Status`, `Order`, `Layout`) and the functions that turn redis-py's
parsed replies (RESP2 flat arrays or RESP3 maps, bytes or str) into them."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

ENTERED = -1
"""`wait` and `position` of a draw event before its draw: the user entered
the draw and has no place yet (the draw fixes it). Not a 1-based place
(n >= 1), not 0 (offered), and not None (not on the list)."""


@dataclass(frozen=True)
class Status:
    """`TICKET.STATUS`: an event's counts, state and window."""

    total: int
    remaining: int
    claimed: int
    status: str  # "open", "closed" or "restoring"
    opens_at: int  # unix ms, 0 = none
    closes_at: int  # unix ms, 0 = none
    unsynced: int  # log entries the sidecar has not drained yet
    held: int  # tickets in live holds
    waiting: int  # length of the waiting list
    incarnation: str | None  # 16 hex digits; None for events made before 0.3
    # A draw event's: `draw` the commitment, hex(SHA-256(seed)), published
    # from the start; `seed` (64 hex digits) once drawn; `admit` the most
    # offers per second, when set. None for other events (and `seed` before
    # the draw).
    draw: str | None = None
    seed: str | None = None
    admit: int | None = None
    # A seated event's: free seats per category (layout order, every category,
    # wheelchair spaces included) and free wheelchair spaces. None otherwise.
    categories: dict[str, int] | None = None
    accessible: int | None = None
    # Free allocated tickets (not in `remaining`); None when there are none.
    allocated: int | None = None
    # Tickets listed for resale that no buyer holds (in `claimed`, not in
    # `remaining`); 0 when none.
    resale: int = 0

    @property
    def drawn(self) -> bool:
        """Whether a draw event has drawn (its seed is revealed)."""
        return self.seed is not None


@dataclass(frozen=True)
class Order:
    """`TICKET.ORDER`: a user's tickets and whether they are held or sold."""

    tickets: list[int] = field(default_factory=list)
    state: str = "sold"  # "held" or "sold"
    expires_at: int = 0  # unix ms of a hold's deadline, 0 when sold
    seats: list[str] | None = None  # a seated event's seat names (`A-2-103`)
    # Each ticket's generation, in the order of `tickets`: 1 at sale, one up
    # per transfer. A ticket's door credential is (event, ticket, gen).
    gens: list[int] = field(default_factory=list)

    @property
    def held(self) -> bool:
        return self.state == "held"


@dataclass(frozen=True)
class Allocation:
    """One entry of `TICKET.ALLOCATIONS` (never its key)."""

    name: str
    free: int  # tickets not claimed yet
    claimed: int  # tickets claimed from it (held or sold)
    release: int | None  # unix ms it gives its free tickets back; None = never


@dataclass(frozen=True)
class Row:
    """One row of a seated event's layout, as stored (defaults filled in)."""

    name: str
    seats: int  # positions, blocked ones included
    first: int  # the label of position 1
    blocked: list[int]  # positions with no seat
    accessible: list[int]  # wheelchair spaces (positions)
    rank: int  # lower is better
    center: float  # the best position
    category: str
    first_id: int  # the seat id of its first seat


@dataclass(frozen=True)
class Section:
    name: str
    category: str
    rows: list[Row]


@dataclass(frozen=True)
class Seat:
    """Where a seat id is: `name` is `<section>-<row>-<label>`."""

    id: int
    section: str
    row: str
    position: int  # 1-based position in the row
    label: int
    category: str
    accessible: bool

    @property
    def name(self) -> str:
        return f"{self.section}-{self.row}-{self.label}"


@dataclass(frozen=True)
class Layout:
    """`TICKET.LAYOUT`: a seated event's sections of rows; seat ids
    `1..total` in layout order (section, row, position; blocked skipped)."""

    sections: list[Section]

    @property
    def total(self) -> int:
        return sum(r.seats - len(r.blocked) for s in self.sections for r in s.rows)

    @property
    def categories(self) -> list[str]:
        """Every category, in layout order."""
        seen = dict.fromkeys(r.category for s in self.sections for r in s.rows)
        return list(seen)

    def seat(self, seat_id: int) -> Seat:
        """The seat of an id; `KeyError` for an id not in the layout."""
        for section in self.sections:
            for row in section.rows:
                n = seat_id - row.first_id  # seats before it in the row
                if 0 <= n < row.seats - len(row.blocked):
                    positions = [p for p in range(1, row.seats + 1) if p not in row.blocked]
                    pos = positions[n]
                    return Seat(
                        seat_id,
                        section.name,
                        row.name,
                        pos,
                        row.first + pos - 1,
                        row.category,
                        pos in row.accessible,
                    )
        raise KeyError(f"seat id {seat_id} is not in the layout")

    def seat_name(self, seat_id: int) -> str:
        """`A-2-103`: section, row and label of a seat id."""
        return self.seat(seat_id).name


INT_FIELDS = (
    "total",
    "remaining",
    "claimed",
    "opens_at",
    "closes_at",
    "unsynced",
    "held",
    "waiting",
)


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def optional_text(value: Any) -> str | None:
    return None if value is None else text(value)


def fields(reply: Any) -> dict[str, Any]:
    """A map reply (RESP3 dict or RESP2 flat name/value array) by field name."""
    if isinstance(reply, dict):
        return {text(k): v for k, v in reply.items()}
    if isinstance(reply, (list, tuple)) and len(reply) % 2 == 0:
        return {text(reply[i]): reply[i + 1] for i in range(0, len(reply), 2)}
    raise ValueError(f"expected a map reply, got {reply!r}")


def parse_ok(reply: Any) -> None:
    if reply not in (b"OK", "OK", True):
        raise ValueError(f"expected OK, got {reply!r}")


def parse_integer(reply: Any) -> int:
    if not isinstance(reply, int) or isinstance(reply, bool):
        raise ValueError(f"expected an integer, got {reply!r}")
    return reply


def parse_optional_integer(reply: Any) -> int | None:
    return None if reply is None else parse_integer(reply)


def parse_tickets(reply: Any) -> list[int]:
    if not isinstance(reply, (list, tuple)):
        raise ValueError(f"expected an array of tickets, got {reply!r}")
    return [parse_integer(t) for t in reply]


def parse_claim(reply: Any) -> int | list[int]:
    """A ticket (claim without count) or the tickets (with count)."""
    return parse_tickets(reply) if isinstance(reply, (list, tuple)) else parse_integer(reply)


def parse_bool(reply: Any) -> bool:
    return parse_integer(reply) != 0


def parse_status(reply: Any) -> Status:
    f = fields(reply)
    counts = {name: parse_integer(f[name]) for name in INT_FIELDS}
    return Status(
        **counts,
        status=text(f["status"]),
        incarnation=optional_text(f.get("incarnation")),
        draw=optional_text(f.get("draw")),
        seed=optional_text(f.get("seed")),
        admit=parse_optional_integer(f.get("admit")),
        categories=parse_categories(f.get("categories")),
        accessible=parse_optional_integer(f.get("accessible")),
        allocated=parse_optional_integer(f.get("allocated")),
        resale=parse_integer(f.get("resale", 0)),
    )


def parse_categories(reply: Any) -> dict[str, int] | None:
    """STATUS's `categories`: category, free seats, ... -> an ordered dict."""
    if reply is None:
        return None
    if isinstance(reply, dict):
        return {text(k): parse_integer(v) for k, v in reply.items()}
    return {text(reply[i]): parse_integer(reply[i + 1]) for i in range(0, len(reply), 2)}


def parse_layout(reply: Any) -> Layout | None:
    if reply is None:
        return None
    doc = json.loads(text(reply))
    return Layout(
        [Section(s["name"], s["category"], [Row(**r) for r in s["rows"]]) for s in doc["sections"]]
    )


def parse_seatmap(reply: Any) -> str | None:
    """One character per seat id: `.` free, `h` held, `s` sold, `a` free in
    an allocation."""
    return None if reply is None else text(reply)


def parse_allocations(reply: Any) -> list[Allocation]:
    """`[name, free, claimed, release or nil]` per allocation."""
    if not isinstance(reply, (list, tuple)):
        raise ValueError(f"expected an array of allocations, got {reply!r}")
    return [
        Allocation(text(n), parse_integer(f), parse_integer(c), parse_optional_integer(r))
        for n, f, c, r in reply
    ]


def parse_order(reply: Any) -> Order | None:
    if reply is None:
        return None
    f = fields(reply)
    return Order(
        tickets=parse_tickets(f["tickets"]),
        state=text(f["state"]),
        expires_at=parse_integer(f["expires_at"]),
        seats=[text(s) for s in f["seats"]] if "seats" in f else None,
        gens=[parse_integer(g) for g in f.get("gens", [])],
    )
