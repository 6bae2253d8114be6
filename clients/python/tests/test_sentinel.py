"""Integration test over Redis Sentinel (clients/testenv.py --sentinel): the
wrapper on redis-py's `Sentinel` master client sells, a `SENTINEL FAILOVER`
promotes the replica, and the same `TicketGate` follows it by itself: every
claim acknowledged with `WAIT 1` before the switch is on the new master,
and claims go on there; a replica client reads the same state."""

from __future__ import annotations

import time

import pytest
import redis
from conftest import required_env
from redis.sentinel import Sentinel

import ticketgate

pytestmark = pytest.mark.integration


@pytest.fixture
def sentinel() -> Sentinel:
    nodes = required_env("TICKETGATE_TEST_SENTINELS").split(",")
    addrs = [(h, int(p)) for h, p in (n.rsplit(":", 1) for n in nodes)]
    return Sentinel(addrs, socket_timeout=2)


def retry(f, seconds: float = 30):
    """`f()`, again on the errors a failover gives (an app does the same)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return f()
        except (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_sentinel_master_follows_a_failover(sentinel, event):
    name = required_env("TICKETGATE_TEST_SENTINEL_MASTER")
    master = sentinel.master_for(name, socket_timeout=2)
    gate = ticketgate.TicketGate(master)
    gate.init(event, 100, limit=1)
    acked = {}
    for i in range(10):
        user = f"before{i}"
        with master.pipeline(transaction=False) as p:
            p.execute_command("TICKET.CLAIM", event, user)
            p.execute_command("WAIT", 1, 2000)
            ticket, replicas = p.execute()
        assert replicas >= 1, "WAIT 1: the replica has the claim"
        acked[user] = ticket
    old = sentinel.discover_master(name)
    # The sentinels may refuse while a previous failover is too recent.
    retry(lambda: sentinel.sentinels[0].execute_command("SENTINEL", "FAILOVER", name))
    deadline = time.monotonic() + 30
    while sentinel.discover_master(name) == old:
        assert time.monotonic() < deadline, "no failover within 30 s"
        time.sleep(0.1)
    # The same client, now on the new master: every acknowledged claim is there.
    for user, ticket in acked.items():
        assert retry(lambda u=user: gate.holder(event, u)) == ticket
    assert retry(lambda: gate.claim(event, "after")) == 11
    replica = ticketgate.TicketGate(sentinel.slave_for(name, socket_timeout=2))
    deadline = time.monotonic() + 10
    while retry(lambda: replica.status(event)).claimed != 11:
        assert time.monotonic() < deadline, "the replica did not catch up"
        time.sleep(0.1)
