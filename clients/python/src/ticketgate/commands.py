"""What each method sends and how its reply is read: pure, shared by the
sync and asyncio clients. Names are lower-case (`ticket.claim`) and the
event is the first argument, so cluster clients route each command to the
event's slot by the command table's key position."""

from __future__ import annotations

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
) -> Call[None]:
    pairs = [("OPENS", opens), ("CLOSES", closes), ("HOLD", hold), ("LIMIT", limit)]
    options = _options([*pairs, ("OFFER", offer)])
    # DRAW is a flag; ADMIT (offers per second) only makes sense with it, but
    # the module is the one to say so (ERR), so it is sent as given.
    options += ["DRAW"] if draw else []
    options += _options([("ADMIT", admit)])
    return Call(("ticket.init", event, int(total), *options), replies.parse_ok)


def open(event: str) -> Call[None]:
    return Call(("ticket.open", event), replies.parse_ok)


def close(event: str) -> Call[None]:
    return Call(("ticket.close", event), replies.parse_ok)


def claim(
    event: str, user: str, count: int | None = None, hold: int | None = None
) -> Call[int | list[int]]:
    options = _options([("COUNT", count), ("HOLD", hold)])
    parse = replies.parse_tickets if count is not None else replies.parse_integer
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


def wait(event: str, user: str, count: int | None = None) -> Call[int]:
    return Call(("ticket.wait", event, user, *_options([("COUNT", count)])), replies.parse_integer)


def leave(event: str, user: str) -> Call[bool]:
    return Call(("ticket.leave", event, user), replies.parse_bool)


def position(event: str, user: str) -> Call[int | None]:
    return Call(("ticket.position", event, user), replies.parse_optional_integer)


def drop(event: str, force: bool = False) -> Call[int]:
    return Call(("ticket.drop", event, *(["FORCE"] if force else [])), replies.parse_integer)
