"""`TicketGate`: the typed, synchronous wrapper over a redis-py `Redis` or
`RedisCluster` client (or anything with redis-py's `execute_command`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, overload

from redis.exceptions import ClusterError, ResponseError

from . import commands
from .errors import from_cluster_error, from_response_error
from .replies import Allocation, Layout, Order, Status, parse_integer, parse_tickets

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
        seats: str | Mapping[str, Any] | None = None,
        transfer_until: int | None = None,
    ) -> None:
        """Creates an event of `total` tickets (times in unix ms, durations in ms).

        `draw=True` makes it a draw event (needs `hold` > 0 or `offer`): it
        opens, and draws the order of those who entered with `wait`, at
        `open` or at `opens`; `admit` caps the offers per second. `seats` (a
        layout: JSON text or a dict) makes it
        a seated event of `total` seats. `transfer_until` (unix ms): no
        `transfer` after it (default `closes`)."""
        self.run(
            commands.init(
                event, total, opens, closes, hold, limit, offer, draw, admit, seats, transfer_until
            )
        )

    def open(self, event: str) -> None:
        self.run(commands.open(event))

    def close(self, event: str) -> None:
        self.run(commands.close(event))

    @overload
    def claim(
        self,
        event: str,
        user: str,
        count: None = None,
        hold: int | None = None,
        *,
        section: str | None = None,
        category: str | None = None,
        from_: str | None = None,
        key: str | None = None,
    ) -> int: ...
    @overload
    def claim(
        self,
        event: str,
        user: str,
        count: int,
        hold: int | None = None,
        *,
        section: str | None = None,
        category: str | None = None,
        accessible: int | None = None,
        split: bool = False,
        from_: str | None = None,
        key: str | None = None,
    ) -> list[int]: ...
    def claim(
        self,
        event: str,
        user: str,
        count: int | None = None,
        hold: int | None = None,
        *,
        section: str | None = None,
        category: str | None = None,
        accessible: int | None = None,
        split: bool = False,
        from_: str | None = None,
        key: str | None = None,
    ) -> int | list[int]:
        """The user's ticket; with `count`, all the user's tickets, ascending.
        A repeat claim answers the tickets the user has already.

        On a seated event: the best `count` seats together (`NotTogether` if
        none are), within `section`/`category`, with at least `accessible`
        wheelchair spaces (none without it); `split=True` takes the best
        single seats when none are together.

        `from_`: only from that allocation (with its `key` when it has one):
        `NoKey` without the right key, `SoldOut` when it has too few."""
        seated = (section, category, accessible) != (None, None, None) or split
        if count is None and hold is None and not seated and from_ is None:
            # The hot path, inlined: a Call and a second coroutine cost ~5 us,
            # over 5% of what redis-py itself spends on a claim.
            try:
                reply = self.client.execute_command("ticket.claim", event, user)
            except ResponseError as e:
                raise from_response_error(e) from None
            except ClusterError as e:
                raise from_cluster_error(e) from e
            return parse_integer(reply)
        call = commands.claim(
            event, user, count, hold, section, category, accessible, split, None, from_, key
        )
        return self.run(call)

    def claim_seats(
        self,
        event: str,
        user: str,
        seats: Sequence[int],
        hold: int | None = None,
        *,
        from_: str | None = None,
        key: str | None = None,
    ) -> list[int]:
        """Exactly these seats (ids, see `layout`) of a seated event: `Taken`
        if one is, `Orphan` if they would leave a single seat alone that
        another pick of the row would not."""
        call = commands.claim(event, user, hold=hold, seats=seats, from_=from_, key=key)
        return self.run(commands.Call(call.argv, parse_tickets))

    def confirm(self, event: str, user: str) -> int:
        """Makes the user's held order sold; the number of tickets it holds."""
        return self.run(commands.confirm(event, user))

    def cancel(self, event: str, user: str) -> int | None:
        """Releases all the user's tickets (every one of a multi-ticket
        order); the lowest of them, or None."""
        return self.run(commands.cancel(event, user))

    def holder(self, event: str, user: str) -> int | None:
        return self.run(commands.holder(event, user))

    def order(self, event: str, user: str) -> Order | None:
        return self.run(commands.order(event, user))

    def status(self, event: str) -> Status:
        return self.run(commands.status(event))

    def layout(self, event: str) -> Layout | None:
        """A seated event's layout (`seat_name(id)` names a seat); None if
        the event is not seated."""
        return self.run(commands.layout(event))

    def seatmap(self, event: str) -> str | None:
        """One character per seat id (index id - 1): `.` free, `h` held,
        `s` sold, `a` free in an allocation; None if the event is not seated."""
        return self.run(commands.seatmap(event))

    def allocate(
        self,
        event: str,
        name: str,
        count: int | None = None,
        *,
        section: str | None = None,
        category: str | None = None,
        seats: Sequence[int] | None = None,
        key: str | None = None,
        release: int | None = None,
    ) -> list[int]:
        """Operator: sets `count` free tickets (best seats in `section`/
        `category`), or exactly `seats`, aside in the allocation `name`,
        out of public sale; claims take them with `from_=name` (and `key`).
        `release` (unix ms): what is left goes public then. The tickets
        allocated; `Short` if fewer are free, `NoKey` adding with another key."""
        call = commands.allocate(event, name, count, section, category, seats, key, release)
        return self.run(call)

    def release(
        self, event: str, name: str, count: int | None = None, *, seats: Sequence[int] | None = None
    ) -> int:
        """Operator: gives the allocation's free tickets (all, the `count`
        lowest, or `seats`) back to public sale, the waiting list first;
        how many. `NoAllocation` for an unknown name."""
        return self.run(commands.release(event, name, count, seats))

    def allocations(self, event: str) -> list[Allocation]:
        """The event's allocations in name order (never their keys)."""
        return self.run(commands.allocations(event))

    def transfer(
        self,
        event: str,
        from_user: str,
        to_user: str,
        tickets: Sequence[int] | None = None,
    ) -> int:
        """Gives `from_user`'s sold tickets (all, or `tickets`) to `to_user`
        in one step, each a generation up (`order().gens`); how many.
        `NotSold` (held, or not the giver's), `Used` (scanned), `Limit`
        (the receiver's), `Closed` (after `TRANSFER_UNTIL`), `NoHold`
        (the giver has none), `Listed` (listed for resale: `unlist` first)."""
        return self.run(commands.transfer(event, from_user, to_user, tickets))

    def resell(self, event: str, user: str, tickets: Sequence[int] | None = None) -> int:
        """Lists `user`'s sold tickets (all not listed yet, or `tickets`)
        for resale at face value; how many. They stay `user`'s until a
        buyer confirms one (a generation up). `Listed` (listed already),
        `NotSold` (held, or not `user`'s), `Used` (scanned), `Closed`
        (after `TRANSFER_UNTIL`), `NoHold` (`user` has none)."""
        return self.run(commands.resell(event, user, tickets))

    def unlist(self, event: str, user: str, tickets: Sequence[int] | None = None) -> int:
        """Takes back `user`'s listed tickets no buyer holds (all, or
        `tickets`); how many (0: none listed). `NotListed` (a ticket not
        listed by `user`, or held by a buyer)."""
        return self.run(commands.unlist(event, user, tickets))

    def scan(self, event: str, ticket: int, gen: int, gate: str | None = None) -> None:
        """Admits a ticket at the door: its first scan at its current
        generation returns; `Used` (scanned before), `Stale` (transferred
        since: an old credential), `NotSold` (free, held, listed)."""
        self.run(commands.scan(event, ticket, gen, gate))

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
