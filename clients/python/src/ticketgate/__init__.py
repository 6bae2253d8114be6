"""ticketgate: typed helpers for the ticketgate Redis module over redis-py 5.

`TicketGate(redis_client)` (sync; `ticketgate.asyncio.TicketGate` for
`redis.asyncio`) gives every `TICKET.*` command as a method, replies as
`int`, `list[int]`, `Status` and `Order`, and error replies as one exception
class per code under `TicketGateError` (`.code`, `.message`). A draw
event (`init(..., draw=True)`) answers `wait`/`position` with `ENTERED`
(-1) before its draw, and `claim` with `Queue` while its entrants wait.
"""

from .client import TicketGate
from .commands import Call
from .errors import (
    Closed,
    Corrupt,
    Exists,
    Holding,
    Incomplete,
    Internal,
    Invalid,
    Limit,
    NoEvent,
    NoHold,
    NotOpen,
    NotRestoring,
    Queue,
    SoldOut,
    TicketGateError,
    TryAgain,
    Unsynced,
    WrongType,
)
from .replies import ENTERED, Order, Status

__all__ = [
    "ENTERED",
    "Call",
    "Closed",
    "Corrupt",
    "Exists",
    "Holding",
    "Incomplete",
    "Internal",
    "Invalid",
    "Limit",
    "NoEvent",
    "NoHold",
    "NotOpen",
    "NotRestoring",
    "Order",
    "Queue",
    "SoldOut",
    "Status",
    "TicketGate",
    "TicketGateError",
    "TryAgain",
    "Unsynced",
    "WrongType",
]
__version__ = "0.3.0"
