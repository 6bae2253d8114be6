"""Typed replies (`Status`, `Order`) and the functions that turn redis-py's
parsed replies (RESP2 flat arrays or RESP3 maps, bytes or str) into them."""

from __future__ import annotations

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

    @property
    def held(self) -> bool:
        return self.state == "held"


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
    )


def parse_order(reply: Any) -> Order | None:
    if reply is None:
        return None
    f = fields(reply)
    return Order(
        tickets=parse_tickets(f["tickets"]),
        state=text(f["state"]),
        expires_at=parse_integer(f["expires_at"]),
    )
