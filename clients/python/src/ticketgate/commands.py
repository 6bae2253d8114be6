"""What each method sends and how its reply is read: pure, shared by the
sync and asyncio clients. Names are lower-case (`ticket.claim`) and the
event is the first argument, so cluster clients route each command to the
event's slot by the command table's key position."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar, Union

from . import replies

T = TypeVar("T")
Arg = Union[str, bytes, int]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One command: its argv and the function that types its reply."""

    argv: tuple[Arg, ...]
    parse: Callable[[Any], T]


def _options(pairs: list[tuple[str, int | None]]) -> list[Arg]:
    out: list[Arg] = []
    for word, value in pairs:
        if value is not None:
            out += [word, int(value)]
    return out


def _words(pairs: list[tuple[str, str | None]]) -> list[Arg]:
    return [w for word, value in pairs if value is not None for w in (word, value)]


def _seats(seats: Sequence[int] | None) -> list[Arg]:
    """`SEATS id ...`, sent last (the module takes every id after it)."""
    return ["SEATS", *(int(s) for s in seats)] if seats is not None else []


def init(
    event: str,
    total: int,
    opens: int | None = None,
    closes: int | None = None,
    hold: int | None = None,
    limit: int | None = None,
    offer: int | None = None,
    draw: bool = False,
    admit: int | None = None,
    seats: str | Mapping[str, Any] | None = None,
    transfer_until: int | None = None,
) -> Call[None]:
    pairs = [("OPENS", opens), ("CLOSES", closes), ("HOLD", hold), ("LIMIT", limit)]
    options = _options([*pairs, ("OFFER", offer)])
    # DRAW is a flag; ADMIT (offers per second) only makes sense with it, but
    # the module is the one to say so (ERR), so it is sent as given.
    options += ["DRAW"] if draw else []
    options += _options([("ADMIT", admit), ("TRANSFER_UNTIL", transfer_until)])
    if seats is not None:  # a seated event: the layout, JSON text or a dict
        options += ["SEATS", seats if isinstance(seats, str) else layout_json(seats)]
    return Call(("ticket.init", event, int(total), *options), replies.parse_ok)


def open(event: str) -> Call[None]:
    return Call(("ticket.open", event), replies.parse_ok)


def close(event: str) -> Call[None]:
    return Call(("ticket.close", event), replies.parse_ok)


def layout_json(layout: Mapping[str, Any]) -> str:
    return json.dumps(layout, separators=(",", ":"))


def claim(
    event: str,
    user: str,
    count: int | None = None,
    hold: int | None = None,
    section: str | None = None,
    category: str | None = None,
    accessible: int | None = None,
    split: bool = False,
    seats: Sequence[int] | None = None,
    from_: str | None = None,
    key: str | None = None,
) -> Call[int | list[int]]:
    """A claim; on a seated event the best `count` seats (`section`,
    `category`, `accessible` wheelchair spaces, `split` if none are
    together), or exactly `seats` (ids; SEATS goes last, as the module asks);
    `from_` claims from that allocation only (with its `key`)."""
    options = _options([("COUNT", count), ("HOLD", hold)])
    options += _words([("SECTION", section), ("CATEGORY", category)])
    options += _options([("ACCESSIBLE", accessible)])
    options += ["SPLIT"] if split else []
    options += _words([("FROM", from_), ("KEY", key)])
    options += _seats(seats)
    many = count is not None or seats is not None
    parse = replies.parse_tickets if many else replies.parse_integer
    return Call(("ticket.claim", event, user, *options), parse)


def confirm(event: str, user: str) -> Call[int]:
    return Call(("ticket.confirm", event, user), replies.parse_integer)


def cancel(event: str, user: str) -> Call[int | None]:
    return Call(("ticket.cancel", event, user), replies.parse_optional_integer)


def holder(event: str, user: str) -> Call[int | None]:
    return Call(("ticket.holder", event, user), replies.parse_optional_integer)


def order(event: str, user: str) -> Call[replies.Order | None]:
    return Call(("ticket.order", event, user), replies.parse_order)


def status(event: str) -> Call[replies.Status]:
    return Call(("ticket.status", event), replies.parse_status)


def layout(event: str) -> Call[replies.Layout | None]:
    return Call(("ticket.layout", event), replies.parse_layout)


def seatmap(event: str) -> Call[str | None]:
    return Call(("ticket.seatmap", event), replies.parse_seatmap)


def allocate(
    event: str,
    name: str,
    count: int | None = None,
    section: str | None = None,
    category: str | None = None,
    seats: Sequence[int] | None = None,
    key: str | None = None,
    release: int | None = None,
) -> Call[list[int]]:
    """Sets `count` free tickets (within `section`/`category`), or exactly
    `seats`, aside in the allocation `name`; `key` guards claims from it,
    `release` (unix ms) gives what is left to the public then."""
    options = _options([("COUNT", count)])
    options += _words([("SECTION", section), ("CATEGORY", category), ("KEY", key)])
    options += _options([("RELEASE", release)]) + _seats(seats)
    return Call(("ticket.allocate", event, name, *options), replies.parse_tickets)


def release(
    event: str, name: str, count: int | None = None, seats: Sequence[int] | None = None
) -> Call[int]:
    """Gives the allocation's free tickets (all, the `count` lowest, or
    `seats`) back to public sale; how many."""
    options = [*_options([("COUNT", count)]), *_seats(seats)]
    return Call(("ticket.release", event, name, *options), replies.parse_integer)


def allocations(event: str) -> Call[list[replies.Allocation]]:
    return Call(("ticket.allocations", event), replies.parse_allocations)


def transfer(
    event: str, from_user: str, to_user: str, tickets: Sequence[int] | None = None
) -> Call[int]:
    """Moves `from_user`'s sold tickets (all, or `tickets`) to `to_user`;
    how many. TICKETS goes last (the module takes every id after it)."""
    ids = _tickets(tickets)
    return Call(("ticket.transfer", event, from_user, to_user, *ids), replies.parse_integer)


def resell(event: str, user: str, tickets: Sequence[int] | None = None) -> Call[int]:
    """Lists `user`'s sold tickets (all not listed yet, or `tickets`) for
    resale at face value; how many. TICKETS goes last."""
    return Call(("ticket.resell", event, user, *_tickets(tickets)), replies.parse_integer)


def unlist(event: str, user: str, tickets: Sequence[int] | None = None) -> Call[int]:
    """Takes back `user`'s listed tickets no buyer holds (all, or
    `tickets`); how many (0: none listed). TICKETS goes last."""
    return Call(("ticket.unlist", event, user, *_tickets(tickets)), replies.parse_integer)


def _tickets(tickets: Sequence[int] | None) -> list[Arg]:
    """`TICKETS id ...` when `tickets` is given (the module takes every id
    after it, so it goes last), nothing otherwise."""
    return ["TICKETS", *(int(t) for t in tickets)] if tickets is not None else []


def scan(event: str, ticket: int, gen: int, gate: str | None = None) -> Call[None]:
    """Admits `ticket` at generation `gen` at the door, once."""
    options = _words([("GATE", gate)])
    return Call(("ticket.scan", event, int(ticket), int(gen), *options), replies.parse_ok)


def wait(event: str, user: str, count: int | None = None) -> Call[int]:
    return Call(("ticket.wait", event, user, *_options([("COUNT", count)])), replies.parse_integer)


def leave(event: str, user: str) -> Call[bool]:
    return Call(("ticket.leave", event, user), replies.parse_bool)


def position(event: str, user: str) -> Call[int | None]:
    return Call(("ticket.position", event, user), replies.parse_optional_integer)


def drop(event: str, force: bool = False) -> Call[int]:
    return Call(("ticket.drop", event, *(["FORCE"] if force else [])), replies.parse_integer)
