"""Integration tests against the real servers of clients/testenv.py: every
command standalone (RESP2 and RESP3, sync and asyncio), a draw (50
entrants, offers in the order recomputed from the revealed seed), the
reference concurrency test (1,000 users, 100 tickets), and in a 3-master
cluster: routing with 0 MOVED per node, recovery after a reshard, no log
noise."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
import redis.asyncio
import testenv
from redis.cluster import ClusterNode

import ticketgate
import ticketgate.asyncio

pytestmark = pytest.mark.integration
HOUR = 3_600_000


@pytest.fixture(params=[2, 3], ids=["resp2", "resp3"])
def gate(request, redis_url):
    client = redis.Redis.from_url(redis_url, protocol=request.param)
    yield ticketgate.TicketGate(client)
    client.close()


@pytest.fixture
def cluster(cluster_nodes):
    nodes = [ClusterNode(h, p) for h, p in cluster_nodes]
    client = redis.RedisCluster(startup_nodes=nodes)
    yield client
    client.close()


def test_a_sale_end_to_end(gate, event):
    gate.init(event, 3, hold=HOUR, limit=2)
    status = gate.status(event)
    assert (status.total, status.remaining, status.claimed, status.status) == (3, 3, 0, "open")
    assert status.incarnation is not None and len(status.incarnation) == 16
    assert status.draw is None and status.seed is None
    assert gate.claim(event, "alice", count=2) == [1, 2]
    order = gate.order(event, "alice")
    assert order is not None and order.held and order.tickets == [1, 2] and order.expires_at > 0
    assert gate.confirm(event, "alice") == 2
    assert gate.order(event, "alice") == ticketgate.Order([1, 2], "sold", 0, gens=[1, 1])
    assert gate.claim(event, "bob", hold=0) == 3
    assert gate.holder(event, "bob") == 3 and gate.holder(event, "nobody") is None
    with pytest.raises(ticketgate.SoldOut) as sold_out:
        gate.claim(event, "carol")
    assert sold_out.value.code == "SOLDOUT" and event in sold_out.value.message
    assert gate.wait(event, "carol") == 1 and gate.position(event, "carol") == 1
    assert gate.cancel(event, "bob") == 3
    assert gate.position(event, "carol") == 0  # offered ticket 3
    assert gate.order(event, "carol").tickets == [3]
    assert gate.wait(event, "dave") == 1 and gate.leave(event, "dave") is True
    assert gate.leave(event, "dave") is False


# Section A: row 1 of six seats (ids 1-6), row 2 of four labelled from 101
# (ids 7-10), its first a wheelchair space, category "box".
HALL = {
    "sections": [
        {
            "name": "A",
            "category": "front",
            "rows": [
                {"name": "1", "seats": 6},
                {"name": "2", "seats": 4, "first": 101, "accessible": [1], "category": "box"},
            ],
        }
    ]
}


def test_a_seated_sale(gate, event):
    gate.init(event, 10, hold=HOUR, limit=4, seats=HALL)
    layout = gate.layout(event)
    assert layout is not None and layout.total == 10
    assert [r.first_id for r in layout.sections[0].rows] == [1, 7]
    assert gate.seatmap(event) == "." * 10
    ann = gate.claim(event, "ann", count=2)
    assert [layout.seat_name(s) for s in ann] == ["A-1-3", "A-1-4"]
    with pytest.raises(ticketgate.Taken) as taken:
        gate.claim_seats(event, "bob", [4])
    assert taken.value.message == "seat 'A-1-4' is taken"
    with pytest.raises(ticketgate.Orphan):
        gate.claim_seats(event, "bob", [8])
    assert gate.claim_seats(event, "bob", [5, 6], hold=0) == [5, 6]
    assert gate.claim(event, "cy", count=2, accessible=1) == [7, 8]
    with pytest.raises(ticketgate.NotTogether):
        gate.claim(event, "dee", count=3)
    assert gate.claim(event, "dee", count=3, split=True) == [1, 2, 9]
    assert gate.claim(event, "eve", count=1, category="box") == [10]
    status = gate.status(event)
    assert (status.remaining, status.categories, status.accessible) == (
        0,
        {"front": 0, "box": 0},
        0,
    )
    order = gate.order(event, "cy")
    assert order is not None and order.seats == ["A-2-101", "A-2-102"]
    assert gate.seatmap(event) == "hhhhsshhhh"
    assert gate.cancel(event, "dee") == 1  # every seat of the order back
    assert gate.seatmap(event) == "..hhsshh.h"
    plain = event + "-plain"
    gate.init(plain, 1)
    assert gate.layout(plain) is None and gate.seatmap(plain) is None
    assert gate.status(plain).categories is None and gate.order(plain, "x") is None


def test_allocations_house_seats_and_a_partner(gate, event):
    gate.init(event, 10, limit=4, seats=HALL)
    in_2100 = 4_102_444_800_000
    assert gate.allocate(event, "house", seats=[5, 6], release=in_2100) == [5, 6]
    assert gate.allocate(event, "fanclub", 2, category="box", key="fc") == [8, 9]
    with pytest.raises(ticketgate.NoKey):
        gate.allocate(event, "fanclub", 1, key="other")
    with pytest.raises(ticketgate.Short) as short:
        gate.allocate(event, "more", 7)
    # 6 free seats, but COUNT never takes the wheelchair space.
    assert short.value.message == f"event '{event}' has 5 free"
    assert gate.seatmap(event) == "....aa.aa."
    assert gate.status(event).allocated == 4
    with pytest.raises(ticketgate.NoKey):
        gate.claim(event, "fan1", count=2, from_="fanclub")
    assert gate.claim(event, "fan1", count=2, from_="fanclub", key="fc") == [8, 9]
    with pytest.raises(ticketgate.SoldOut) as empty:
        gate.claim(event, "fan2", count=1, from_="fanclub", key="fc")
    assert "fanclub" in empty.value.message
    with pytest.raises(ticketgate.NoAllocation):
        gate.claim_seats(event, "fan2", [5], from_="nope")
    assert gate.claim(event, "pub", count=4) == [1, 2, 3, 4]  # never an allocated seat
    assert gate.allocations(event) == [
        ticketgate.Allocation("fanclub", 0, 2, None),
        ticketgate.Allocation("house", 2, 0, in_2100),
    ]
    assert gate.release(event, "house") == 2
    assert gate.allocations(event) == [ticketgate.Allocation("fanclub", 0, 2, None)]
    status = gate.status(event)
    assert (status.remaining, status.allocated) == (4, None)
    assert gate.seatmap(event) == "ssss...ss."


def test_transfer_and_scan(gate, event):
    gate.init(event, 5, hold=HOUR, limit=2)
    assert gate.claim(event, "ann", count=2, hold=0) == [1, 2]
    assert gate.transfer(event, "ann", "ben", tickets=[2]) == 1
    ben = gate.order(event, "ben")
    assert ben is not None and (ben.tickets, ben.gens) == ([2], [2])
    gate.scan(event, 2, 2, gate="north")
    with pytest.raises(ticketgate.Used) as used:
        gate.scan(event, 2, 2)
    assert used.value.message.endswith("at gate 'north'")
    with pytest.raises(ticketgate.Stale) as stale:
        gate.scan(event, 2, 1)
    assert stale.value.message == "ticket 2 was transferred (generation 2 now)"
    with pytest.raises(ticketgate.NotSold):
        gate.scan(event, 5, 1)
    with pytest.raises(ticketgate.Used):
        gate.transfer(event, "ben", "cy")
    assert gate.claim(event, "dee") == 3  # held
    with pytest.raises(ticketgate.NotSold):
        gate.transfer(event, "dee", "cy")
    with pytest.raises(ticketgate.NoHold):
        gate.transfer(event, "nobody", "cy")
    assert gate.claim(event, "eve", count=2, hold=0) == [4, 5]
    with pytest.raises(ticketgate.Limit):
        gate.transfer(event, "ann", "eve")
    assert gate.transfer(event, "ann", "fay") == 1
    gate.scan(event, 1, 2)
    gate.init(f"{event}-until", 1, transfer_until=1_000_000_000_000)  # in 2001
    assert gate.claim(f"{event}-until", "gus", hold=0) == 1
    with pytest.raises(ticketgate.Closed):
        gate.transfer(f"{event}-until", "gus", "hal")


def test_resell_and_unlist(gate, event):
    gate.init(event, 6, hold=HOUR, limit=4)
    assert gate.claim(event, "ann", count=2, hold=0) == [1, 2]
    assert gate.claim(event, "ben", hold=0) == 3
    gate.scan(event, 3, 1)
    assert gate.claim(event, "cy") == 4  # held
    assert gate.status(event).resale == 0
    assert gate.resell(event, "ann", tickets=[2]) == 1
    with pytest.raises(ticketgate.Listed) as listed:
        gate.resell(event, "ann", tickets=[2])
    assert listed.value.message == "ticket 2 is listed already"
    with pytest.raises(ticketgate.Listed):
        gate.transfer(event, "ann", "zoe")
    assert gate.status(event).resale == 1
    with pytest.raises(ticketgate.NotSold):
        gate.resell(event, "cy")
    with pytest.raises(ticketgate.Used):
        gate.resell(event, "ben")
    with pytest.raises(ticketgate.NoHold):
        gate.resell(event, "nobody")
    with pytest.raises(ticketgate.NotListed):
        gate.unlist(event, "ann", tickets=[1])
    # Once the free tickets are gone a claim takes the listed one; the
    # buyer's confirm makes it theirs, a generation up.
    assert gate.claim(event, "dee", count=2) == [5, 6]
    assert gate.claim(event, "eve") == 2
    assert gate.confirm(event, "eve") == 1
    eve = gate.order(event, "eve")
    assert eve is not None and (eve.tickets, eve.gens) == ([2], [2])
    assert gate.resell(event, "ann") == 1
    assert gate.unlist(event, "ann") == 1
    assert gate.unlist(event, "ann") == 0
    assert gate.status(event).resale == 0


async def test_async_resell_and_unlist(redis_url, event):
    client = redis.asyncio.Redis.from_url(redis_url)
    gate = ticketgate.asyncio.TicketGate(client)
    try:
        await gate.init(event, 2)
        assert await gate.claim(event, "ann", hold=0) == 1
        assert await gate.resell(event, "ann") == 1
        assert (await gate.status(event)).resale == 1
        assert await gate.unlist(event, "ann", tickets=[1]) == 1
        with pytest.raises(ticketgate.NotListed):
            await gate.unlist(event, "ann", tickets=[1])
    finally:
        await client.aclose()


async def test_async_transfer_and_scan(redis_url, event):
    client = redis.asyncio.Redis.from_url(redis_url)
    gate = ticketgate.asyncio.TicketGate(client)
    try:
        await gate.init(event, 2)
        assert await gate.claim(event, "ann") == 1
        assert await gate.transfer(event, "ann", "ben") == 1
        await gate.scan(event, 1, 2, gate="east")
        with pytest.raises(ticketgate.Used):
            await gate.scan(event, 1, 2)
    finally:
        await client.aclose()


async def test_async_allocations(redis_url, event):
    client = redis.asyncio.Redis.from_url(redis_url)
    gate = ticketgate.asyncio.TicketGate(client)
    try:
        await gate.init(event, 5)
        assert await gate.allocate(event, "p", 2, key="k") == [1, 2]
        assert await gate.claim(event, "u", from_="p", key="k") == 1
        assert await gate.allocations(event) == [ticketgate.Allocation("p", 1, 1, None)]
        assert await gate.release(event, "p", 1) == 1
        assert (await gate.status(event)).remaining == 4  # 3 public + 1 released
    finally:
        await client.aclose()


def test_errors_are_typed(gate, event):
    with pytest.raises(ticketgate.NoEvent):
        gate.status(event)
    gate.init(event, 1, opens=4102444800000)
    with pytest.raises(ticketgate.Exists):
        gate.init(event, 1)
    with pytest.raises(ticketgate.NotOpen):
        gate.claim(event, "u")
    with pytest.raises(ticketgate.Invalid) as invalid:
        gate.init(event + "x", 1, limit=0)
    assert invalid.value.code == "ERR" and invalid.value.message.startswith("LIMIT must")
    with pytest.raises(ticketgate.NoHold):
        gate.confirm(event, "u")
    gate.open(event)
    gate.close(event)
    with pytest.raises(ticketgate.Closed):
        gate.claim(event, "u")
    with pytest.raises(ticketgate.Unsynced):
        gate.drop(event)
    assert gate.drop(event, force=True) >= 1
    with pytest.raises(redis.ResponseError):  # still a redis-py error for old handlers
        gate.status(event)


def drawn_order(seed: bytes, users: list[str]) -> list[str]:
    """The draw's order, recomputed as a buyer would: rank = the first 6
    bytes (big-endian) of HMAC-SHA256(seed, user id), ties by the id bytes."""

    def rank(user: str) -> int:
        return int.from_bytes(hmac.new(seed, user.encode(), hashlib.sha256).digest()[:6], "big")

    return sorted(users, key=lambda u: (rank(u), u.encode()))


def offers_received(pubsub, count: int) -> list[str]:
    """The first `count` users announced on an event's offers channel."""
    users: list[str] = []
    deadline = time.monotonic() + 10
    while len(users) < count and time.monotonic() < deadline:
        message = pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
        if message is not None:
            users.append(message["data"].decode())
    return users


def test_a_draw(gate, event):
    """50 users enter a draw for 10 tickets; OPEN reveals the seed, which
    hashes to the commitment, and offers go down the order recomputed from
    it; a claim without an offer meets the queue."""
    gate.init(event, 10, hold=HOUR, draw=True)
    before = gate.status(event)
    assert before.status == "closed" and not before.drawn and before.admit is None
    assert re.fullmatch("[0-9a-f]{64}", before.draw or "")
    users = [f"fan-{i:02}" for i in range(50)]
    assert [gate.wait(event, u) for u in users] == [ticketgate.ENTERED] * 50
    assert gate.position(event, "fan-07") == ticketgate.ENTERED
    with pytest.raises(ticketgate.NotOpen):
        gate.claim(event, "fan-07")
    pubsub = gate.client.pubsub()
    pubsub.subscribe(f"ticket:{{{event}}}:offers")
    gate.open(event)
    after = gate.status(event)
    assert after.drawn and after.draw == before.draw
    seed = bytes.fromhex(after.seed)
    assert hashlib.sha256(seed).hexdigest() == after.draw
    order = drawn_order(seed, users)
    assert offers_received(pubsub, 10) == order[:10]
    pubsub.close()
    for ticket, user in enumerate(order[:10], start=1):
        offer = gate.order(event, user)
        assert offer is not None and (offer.tickets, offer.state) == ([ticket], "held")
    assert (after.held, after.waiting, after.remaining) == (10, 40, 0)
    with pytest.raises(ticketgate.Queue) as queue:
        gate.claim(event, order[10])
    assert queue.value.code == "QUEUE" and "TICKET.WAIT" in queue.value.message
    assert gate.position(event, order[10]) == 1
    assert gate.claim(event, order[0]) == 1  # offered: the claim gives the offer back
    assert gate.wait(event, "late") == 41  # after the draw: behind every entrant


def test_draw_options_are_checked(gate, event):
    with pytest.raises(ticketgate.Invalid):
        gate.init(event, 5, draw=True)  # neither HOLD nor OFFER
    with pytest.raises(ticketgate.Invalid):
        gate.init(event, 5, hold=HOUR, draw=True, admit=0)
    with pytest.raises(ticketgate.NoEvent):
        gate.status(event)
    gate.init(event, 5, offer=HOUR, draw=True, admit=20)
    assert gate.status(event).admit == 20


def claim_or_error(gate, event, user):
    try:
        return gate.claim(event, user)
    except ticketgate.TicketGateError as e:
        return e


def assert_hundred_winners(results) -> None:
    winners = sorted(r for r in results if isinstance(r, int))
    sold_out = [r for r in results if isinstance(r, ticketgate.SoldOut)]
    assert winners == list(range(1, 101))
    assert len(sold_out) == 900 and len(results) == 1000


def test_thousand_users_hundred_tickets_threads(redis_url, event):
    client = redis.Redis.from_url(redis_url, max_connections=64)
    gate = ticketgate.TicketGate(client)
    gate.init(event, 100)
    with ThreadPoolExecutor(32) as pool:
        results = list(pool.map(lambda i: claim_or_error(gate, event, f"user{i}"), range(1000)))
    assert_hundred_winners(results)
    client.close()


async def claim_or_error_async(gate, event, user):
    try:
        return await gate.claim(event, user)
    except ticketgate.TicketGateError as e:
        return e


async def test_thousand_users_hundred_tickets_async_cluster(cluster_nodes, event, caplog):
    nodes = [redis.asyncio.cluster.ClusterNode(h, p) for h, p in cluster_nodes]
    client = redis.asyncio.RedisCluster(startup_nodes=nodes)
    gate = ticketgate.asyncio.TicketGate(client)
    await gate.init(event, 100)
    users = [claim_or_error_async(gate, event, f"user{i}") for i in range(1000)]
    with caplog.at_level(logging.DEBUG):
        assert_hundred_winners(await asyncio.gather(*users))
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not noisy, "RedisCluster logged on SOLDOUT"
    assert (await gate.status(event)).remaining == 0
    await client.aclose()


async def test_async_standalone(redis_url, event):
    client = redis.asyncio.Redis.from_url(redis_url, protocol=3)
    gate = ticketgate.asyncio.TicketGate(client)
    await gate.init(event, 2, hold=HOUR)
    assert await gate.claim(event, "a") == 1
    assert (await gate.order(event, "a")).state == "held"
    assert (await gate.status(event)).held == 1
    with pytest.raises(ticketgate.Limit):
        await gate.claim(event, "b", count=2)
    await gate.init(event + "-draw", 2, hold=HOUR, draw=True, admit=1)
    assert await gate.wait(event + "-draw", "a") == ticketgate.ENTERED
    await gate.open(event + "-draw")
    assert (await gate.status(event + "-draw")).drawn
    assert await gate.position(event + "-draw", "a") == 0  # offered
    seated = event + "-seated"
    await gate.init(seated, 10, limit=2, seats=HALL)
    assert await gate.claim(seated, "a", count=2) == [3, 4]
    assert await gate.claim_seats(seated, "b", [1, 2]) == [1, 2]
    with pytest.raises(ticketgate.Taken):
        await gate.claim_seats(seated, "c", [2])
    layout = await gate.layout(seated)
    assert layout is not None and layout.seat_name(7) == "A-2-101"
    assert await gate.seatmap(seated) == "ssss......"
    await client.aclose()


def node_stats(host: str, port: int) -> dict[str, int]:
    """Per node: calls of each ticket.* command and MOVED errors so far."""
    conn = testenv.Connection(host, port)
    try:
        stats = {}
        for section in ("commandstats", "errorstats"):
            for line in conn.call("INFO", section).decode().splitlines():
                name, _, rest = line.partition(":")
                values = dict(kv.split("=") for kv in rest.split(",") if "=" in kv)
                if name.startswith("cmdstat_ticket."):
                    stats[name[8:]] = int(values["calls"])
                if name == "errorstat_MOVED":
                    stats["MOVED"] = int(values["count"])
        return stats
    finally:
        conn.close()


def stats_delta(before: dict, after: dict) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in set(before) | set(after)}


def events_on_every_node(cluster, prefix: str) -> dict[str, str]:
    """One event id per master, by its slot's owner: event -> node name."""
    owners: dict[str, str] = {}
    i = 0
    while len(owners) < 3:
        event = f"{prefix}-{i}"
        node = cluster.get_node_from_key(event)
        if node.name not in owners.values():
            owners[event] = node.name
        i += 1
    return owners


def test_cluster_routes_every_command_first_time(cluster, cluster_nodes, event, caplog):
    gate = ticketgate.TicketGate(cluster)
    owners = events_on_every_node(cluster, event)
    before = {f"{h}:{p}": node_stats(h, p) for h, p in cluster_nodes}
    with caplog.at_level(logging.DEBUG):
        for e in owners:
            gate.init(e, 10)
            for i in range(12):
                claim_or_error(gate, e, f"u{i}")
            gate.status(e)
            gate.holder(e, "u1")
    after = {f"{h}:{p}": node_stats(h, p) for h, p in cluster_nodes}
    for node, stats in after.items():
        delta = stats_delta(before[node], stats)
        mine = sum(1 for owner in owners.values() if owner == node)
        assert delta.get("MOVED", 0) == 0, node
        assert delta.get("ticket.claim", 0) == 12 * mine, (node, delta)
        assert delta.get("ticket.status", 0) == mine, (node, delta)
    noisy = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert not noisy, "RedisCluster logged on SOLDOUT"


def test_cluster_routes_seat_commands_first_time(cluster, cluster_nodes, event):
    gate = ticketgate.TicketGate(cluster)
    owners = events_on_every_node(cluster, event)
    before = {f"{h}:{p}": node_stats(h, p) for h, p in cluster_nodes}
    for e in owners:
        gate.init(e, 10, limit=2, seats=HALL)
        assert gate.claim(e, "a", count=2, section="A") == [3, 4]
        assert gate.claim_seats(e, "b", [5, 6]) == [5, 6]
        assert gate.layout(e) is not None and gate.seatmap(e) == "..ssss...."
        assert gate.status(e).categories == {"front": 2, "box": 4}
    after = {f"{h}:{p}": node_stats(h, p) for h, p in cluster_nodes}
    for node, stats in after.items():
        delta = stats_delta(before[node], stats)
        mine = sum(1 for owner in owners.values() if owner == node)
        assert delta.get("MOVED", 0) == 0, node
        for command, calls in (("claim", 2), ("layout", 1), ("seatmap", 1), ("status", 1)):
            assert delta.get(f"ticket.{command}", 0) == calls * mine, (node, command, delta)


def test_cluster_follows_moved_after_a_reshard(cluster, cluster_nodes, event):
    gate = ticketgate.TicketGate(cluster)
    gate.init(event, 10)
    assert gate.claim(event, "a") == 1
    old = cluster.get_node_from_key(event).name
    new = next(f"{h}:{p}" for h, p in cluster_nodes if f"{h}:{p}" != old)
    testenv.move_slot([f"{h}:{p}" for h, p in cluster_nodes], f"ticket:{{{event}}}:meta", new)
    old_stats = node_stats(*testenv._host_port(old))
    assert gate.claim(event, "b") == 2  # MOVED, followed
    assert gate.claim(event, "c") == 3  # the map is updated: no MOVED
    assert cluster.get_node_from_key(event).name == new
    assert stats_delta(old_stats, node_stats(*testenv._host_port(old))).get("MOVED", 0) == 1
    assert gate.status(event).claimed == 3


async def test_async_cluster_follows_moved_after_a_reshard(cluster_nodes, event):
    nodes = [redis.asyncio.cluster.ClusterNode(h, p) for h, p in cluster_nodes]
    client = redis.asyncio.RedisCluster(startup_nodes=nodes)
    gate = ticketgate.asyncio.TicketGate(client)
    await gate.init(event, 10)
    old = client.get_node_from_key(event).name
    new = next(f"{h}:{p}" for h, p in cluster_nodes if f"{h}:{p}" != old)
    testenv.move_slot([f"{h}:{p}" for h, p in cluster_nodes], f"ticket:{{{event}}}:meta", new)
    assert await gate.claim(event, "a") == 1
    assert await gate.claim(event, "b", count=1) == [2]
    assert client.get_node_from_key(event).name == new
    await client.aclose()


def test_cluster_gives_up_on_tryagain_as_tryagain(cluster, event):
    """An event being restored answers TRYAGAIN; RedisCluster retries it 16
    times, then the wrapper raises TryAgain (not a bare ClusterError)."""
    gate = ticketgate.TicketGate(cluster)
    args = ["ticket.restore", event, "BEGIN", "1111111111111111", "10", "10", "open"]
    cluster.execute_command(*args, "0", "0", "0", "1", "600000", "0", "0")
    with pytest.raises(ticketgate.TryAgain) as again:
        gate.claim(event, "u")
    assert again.value.code == "TRYAGAIN"
    with pytest.raises(ticketgate.TryAgain):
        gate.holder(event, "u")
