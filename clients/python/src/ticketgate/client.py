"""`TicketGate`: the typed, synchronous wrapper over a redis-py `Redis` or
`RedisCluster` client (or anything with redis-py's `execute_command`)."""

from __future__ import annotations

from typing import Any, TypeVar, overload

from redis.exceptions import ClusterError, ResponseError

from . import commands
from .errors import from_cluster_error, from_response_error
from .replies import Order, Status, parse_integer

T = TypeVar("T")


class TicketGate:
    """Every `TICKET.*` command as a method with typed replies; error replies
    raise a `ticketgate.TicketGateError` subclass (`SoldOut`, ...).

    >>> gate = TicketGate(redis.Redis())
    >>> gate.claim("concert", "alice")
    1
    """

    def __init__(self, client: Any):
        self.client = client

    def run(self, call: commands.Call[T]) -> T:
        """Sends one prepared command and types its reply."""
        try:
            reply = self.client.execute_command(*call.argv)
        except ResponseError as e:
            raise from_response_error(e) from None
        except ClusterError as e:
            raise from_cluster_error(e) from e
        return call.parse(reply)

    def init(
        self,
        event: str,
        total: int,
        *,
        opens: int | None = None,
        closes: int | None = None,
        hold: int | None = None,
        limit: int | None = None,
        offer: int | None = None,
        draw: bool = False,
        admit: int | None = None,
    ) -> None:
        """Creates an event of `total` tickets (times in unix ms, durations in ms).

        `draw=True` makes it a draw event (needs `hold` > 0 or `offer`): it
        opens, and draws the order of those who entered with `wait`, at
        `open` or at `opens`; `admit` caps the offers per second."""
        self.run(commands.init(event, total, opens, closes, hold, limit, offer, draw, admit))

    def open(self, event: str) -> None:
        self.run(commands.open(event))

    def close(self, event: str) -> None:
        self.run(commands.close(event))

    @overload
    def claim(self, event: str, user: str, count: None = None, hold: int | None = None) -> int: ...
    @overload
    def claim(self, event: str, user: str, count: int, hold: int | None = None) -> list[int]: ...
    def claim(
        self, event: str, user: str, count: int | None = None, hold: int | None = None
    ) -> int | list[int]:
        """The user's ticket; with `count`, all the user's tickets, ascending."""
        if count is None and hold is None:
            # The hot path, inlined: a Call and a second coroutine cost ~5 us,
            # over 5% of what redis-py itself spends on a claim.
            try:
                reply = self.client.execute_command("ticket.claim", event, user)
            except ResponseError as e:
                raise from_response_error(e) from None
            except ClusterError as e:
                raise from_cluster_error(e) from e
            return parse_integer(reply)
        return self.run(commands.claim(event, user, count, hold))

    def confirm(self, event: str, user: str) -> int:
        """Makes the user's held order sold; the number of tickets it holds."""
        return self.run(commands.confirm(event, user))

    def cancel(self, event: str, user: str) -> int | None:
        """Releases all the user's tickets; the lowest, or None."""
        return self.run(commands.cancel(event, user))

    def holder(self, event: str, user: str) -> int | None:
        return self.run(commands.holder(event, user))

    def order(self, event: str, user: str) -> Order | None:
        return self.run(commands.order(event, user))

    def status(self, event: str) -> Status:
        return self.run(commands.status(event))

    def wait(self, event: str, user: str, count: int | None = None) -> int:
        """Joins the waiting list: the 1-based position, 0 if offered at once,
        or `ENTERED` (-1) when the user entered a draw not yet drawn."""
        return self.run(commands.wait(event, user, count))

    def leave(self, event: str, user: str) -> bool:
        return self.run(commands.leave(event, user))

    def position(self, event: str, user: str) -> int | None:
        """The 1-based place in the waiting list, 0 offered, `ENTERED` (-1)
        entered a draw not yet drawn, None not on the list."""
        return self.run(commands.position(event, user))

    def drop(self, event: str, force: bool = False) -> int:
        """Deletes the event's keys; the number deleted."""
        return self.run(commands.drop(event, force))
