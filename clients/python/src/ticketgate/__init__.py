"""ticketgate: typed helpers for the ticketgate Redis module over redis-py 5.

`TicketGate(redis_client)` (sync; `ticketgate.asyncio.TicketGate` for
`redis.asyncio`) gives every `TICKET.*` command as a method, replies as
`int`, `list[int]`, `Status` and `Order`, and error replies as one exception
class per code under `TicketGateError` (`.code`, `.message`). A draw
event (`init(..., draw=True)`) answers `wait`/`position` with `ENTERED`
(-1) before its draw, and `claim` with `Queue` while its entrants wait. A
seated event (`init(..., seats=layout)`) takes `claim(..., count=n,
section=, category=, accessible=, split=)` (best available) and
`claim_seats(event, user, [ids])`; `layout()` names seat ids, `seatmap()`
shows them; `NotTogether`, `Taken`, `Orphan` are its errors. Allocations
(house seats, partners): `allocate`, `release`, `allocations`, and
`claim(..., from_=name, key=secret)`; `Short`, `NoKey`, `NoAllocation`.
After the sale: `transfer(event, from_user, to_user)` moves sold tickets
(each a generation up, `Order.gens`), `scan(event, ticket, gen)` admits one
at the door once; `NotSold`, `Used`, `Stale`. Resale at face value:
`resell(event, user)` lists sold tickets, `unlist(event, user)` takes them
back, `Status.resale` counts the listed ones nobody holds; `Listed`,
`NotListed`.
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
    Listed,
    NoAllocation,
    NoEvent,
    NoHold,
    NoKey,
    NotListed,
    NotOpen,
    NotRestoring,
    NotSold,
    NotTogether,
    Orphan,
    Queue,
    Short,
    SoldOut,
    Stale,
    Taken,
    TicketGateError,
    TryAgain,
    Unsynced,
    Used,
    WrongType,
)
from .replies import ENTERED, Allocation, Layout, Order, Row, Seat, Section, Status

__all__ = [
    "ENTERED",
    "Allocation",
    "Call",
    "Closed",
    "Corrupt",
    "Exists",
    "Holding",
    "Incomplete",
    "Internal",
    "Invalid",
    "Layout",
    "Limit",
    "Listed",
    "NoAllocation",
    "NoEvent",
    "NoHold",
    "NoKey",
    "NotListed",
    "NotOpen",
    "NotRestoring",
    "NotSold",
    "NotTogether",
    "Order",
    "Orphan",
    "Queue",
    "Row",
    "Seat",
    "Section",
    "Short",
    "SoldOut",
    "Stale",
    "Status",
    "Taken",
    "TicketGate",
    "TicketGateError",
    "TryAgain",
    "Unsynced",
    "Used",
    "WrongType",
]
__version__ = "0.3.0"
