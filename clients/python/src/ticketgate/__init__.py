"""ticketgate: typed helpers for the ticketgate Redis module over redis-py 5.

`TicketGate(redis_client)` (sync; `ticketgate.asyncio.TicketGate` for
`redis.asyncio`) gives every `TICKET.*` command as a method, replies as
`int`, `list[int]`, `Status` and `Order`, and error replies as one exception
class per code under `TicketGateError` (`.code`, `.message`).
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
from .replies import Order, Status

__all__ = [
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
