"""The module's error replies as exceptions: one class per code.

Every error reply of a `TICKET.*` command starts with an upper-case code
(`-SOLDOUT event 'e1' is sold out`). redis-py hands them over as
`redis.ResponseError`, stripping the code when it is `ERR` (and turning
`NOPERM` into `NoPermissionError`, `TRYAGAIN` in cluster mode into a
message-less `TryAgainError`); `from_response_error` undoes that.
"""

from __future__ import annotations

from redis.exceptions import ClusterError, NoPermissionError, ResponseError, TryAgainError


class TicketGateError(ResponseError):
    """Base of every ticketgate error: `.code` (e.g. `SOLDOUT`) and
    `.message` (the server's text after the code). Subclasses
    redis-py's `ResponseError`, so existing handlers still catch it."""

    code = ""

    def __init__(self, message: str = "", code: str | None = None):
        super().__init__(f"{code or self.code} {message}".rstrip())
        self.code = code or self.code
        self.message = message


class Invalid(TicketGateError):
    """`ERR`: malformed input (ids, numbers, options) or a wrong arity."""

    code = "ERR"


class NoEvent(TicketGateError):
    """The event does not exist."""

    code = "NOEVENT"


class Exists(TicketGateError):
    """`init` of an event that exists already."""

    code = "EXISTS"


class NotOpen(TicketGateError):
    """A claim before the event opens."""

    code = "NOTOPEN"


class Closed(TicketGateError):
    """The event was closed, or its closing time has passed."""

    code = "CLOSED"


class SoldOut(TicketGateError):
    """Fewer free tickets than asked for (or others wait in line)."""

    code = "SOLDOUT"


class NotTogether(TicketGateError):
    """A seated claim: no `count` seats together where allowed (`split=True`
    takes single seats instead)."""

    code = "NOTOGETHER"


class Taken(TicketGateError):
    """A picked seat is held or sold."""

    code = "TAKEN"


class Orphan(TicketGateError):
    """The picked seats would leave a single seat alone while other seats of
    the row would not (the message names them)."""

    code = "ORPHAN"


class Short(TicketGateError):
    """`allocate` (or `release COUNT n`) asked for more than is free; nothing
    changed. The message says how many are."""

    code = "SHORT"


class NoKey(TicketGateError):
    """A claim from an allocation without its key (or a wrong one), or
    allocating again to a name with another key."""

    code = "NOKEY"


class NoAllocation(TicketGateError):
    """The event has no allocation of that name."""

    code = "NOALLOCATION"


class NotSold(TicketGateError):
    """`transfer` or `scan` of a ticket that is not sold: free, held (also a
    receiver's held order), listed for resale, or not the giver's."""

    code = "NOTSOLD"


class Used(TicketGateError):
    """`scan` of a ticket scanned already (the message says when and at
    which gate), or `transfer` of one."""

    code = "USED"


class Stale(TicketGateError):
    """`scan` at a generation that is not the ticket's: it was transferred
    since (the message gives the current generation)."""

    code = "STALE"


class Listed(TicketGateError):
    """`resell` of a ticket listed already, or `transfer` (or `cancel`) of
    one listed for resale."""

    code = "LISTED"


class NotListed(TicketGateError):
    """`unlist` of a ticket that is not listed by the user, or that a
    buyer holds."""

    code = "NOTLISTED"


class Limit(TicketGateError):
    """More tickets than the event allows one user."""

    code = "LIMIT"


class NoHold(TicketGateError):
    """`confirm` for a user who holds nothing (e.g. the hold expired)."""

    code = "NOHOLD"


class Holding(TicketGateError):
    """`wait` by a user who already holds tickets."""

    code = "HOLDING"


class Unsynced(TicketGateError):
    """`drop` while the event's log still has entries to drain."""

    code = "UNSYNCED"


class TryAgain(TicketGateError):
    """The event's keys are moving (slot migration) or being restored;
    nothing changed, retry. RedisCluster retries these itself first."""

    code = "TRYAGAIN"


class Queue(TicketGateError):
    """`claim` by a user without an offer while a draw event's drawn
    entrants still wait: the event sells through its queue; `wait`."""

    code = "QUEUE"


class WrongType(TicketGateError):
    """One of the event's keys holds another Redis type."""

    code = "WRONGTYPE"


class Corrupt(TicketGateError):
    """The event's keys hold values the module never writes."""

    code = "CORRUPT"


class Internal(TicketGateError):
    """A bug in the module, caught before it could harm Redis."""

    code = "INTERNAL"


class NotRestoring(TicketGateError):
    """A restore step on an event that is not being restored."""

    code = "NOTRESTORING"


class Incomplete(TicketGateError):
    """A restore committed before all of it was sent."""

    code = "INCOMPLETE"


BY_CODE: dict[str, type[TicketGateError]] = {
    cls.code: cls
    for cls in (
        Invalid,
        NoEvent,
        Exists,
        NotOpen,
        Closed,
        SoldOut,
        NotTogether,
        Taken,
        Orphan,
        Short,
        NoKey,
        NoAllocation,
        NotSold,
        Used,
        Stale,
        Listed,
        NotListed,
        Limit,
        NoHold,
        Holding,
        Unsynced,
        TryAgain,
        Queue,
        WrongType,
        Corrupt,
        Internal,
        NotRestoring,
        Incomplete,
    )
}
# Error codes redis-py keeps in the text and that are not ours.
OTHER_CODES = {"NOPERM", "NOSCRIPT", "READONLY", "OOM", "BUSY", "MASTERDOWN", "LOADING"}


def error_for(code: str, message: str) -> TicketGateError:
    """The exception for a code and message (the base class for other codes)."""
    cls = BY_CODE.get(code)
    return cls(message) if cls else TicketGateError(message, code=code)


def from_cluster_error(exc: ClusterError) -> Exception:
    """RedisCluster retries TRYAGAIN (and follows MOVED/ASK) 16 times, then
    gives up with a bare `ClusterError("TTL exhausted.")`: the command never
    ran, as TRYAGAIN says, so it becomes `TryAgain`. Other errors stay."""
    if str(exc) == "TTL exhausted.":
        return TryAgain(
            "the cluster client retried 16 times (TRYAGAIN or redirections); retry later"
        )
    return exc


def from_response_error(exc: ResponseError) -> TicketGateError:
    """Maps redis-py's exception for an error reply to ours."""
    if isinstance(exc, TicketGateError):
        return exc
    text = str(exc.args[0]) if exc.args else ""
    if isinstance(exc, TryAgainError):
        return TryAgain(text)
    if isinstance(exc, NoPermissionError):
        return error_for("NOPERM", text)
    code, _, rest = text.partition(" ")
    # redis-py stripped "ERR " from ERR replies, so the text may start with an
    # upper-case word that is no code: an option name ("LIMIT must be between
    # 1 and 1000"). The module's own messages after a code never start with
    # "must" or "needs".
    if (code in BY_CODE or code in OTHER_CODES) and not rest.startswith(("must ", "needs ")):
        return error_for(code, rest)
    return Invalid(text)
