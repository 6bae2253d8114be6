#!/usr/bin/env python3
"""Claims/s through the wrapper vs raw `execute_command` from the same
redis-py asyncio client in the same run. Raw and wrapper batches of
concurrent claims alternate (ABBA), so the load of a busy machine hits both
alike; each side's elapsed and CPU time is summed. BENCH_AA=1 runs raw
against itself: the noise floor.

    python3 clients/testenv.py --no-cluster -- python clients/python/bench.py [--batches N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

import redis.asyncio

import ticketgate.asyncio

BATCH = 100


@dataclass
class Side:
    claim: Callable[[str, str], Any]
    seconds: float = 0.0
    cpu: float = 0.0


async def batch(side: Side, event: str, prefix: str) -> None:
    start, cpu_start = time.perf_counter(), time.process_time()
    await asyncio.gather(*(side.claim(event, f"{prefix}{i}") for i in range(BATCH)))
    side.seconds += time.perf_counter() - start
    side.cpu += time.process_time() - cpu_start


async def main(batches: int) -> None:
    client = redis.asyncio.Redis.from_url(
        os.environ["TICKETGATE_TEST_REDIS"], max_connections=BATCH
    )
    gate = ticketgate.asyncio.TicketGate(client)
    event = "bench-" + uuid.uuid4().hex[:8]
    await gate.init(event, 10_000_000)

    def raw(e: str, u: str) -> Any:
        return client.execute_command("ticket.claim", e, u)

    a, b = Side(raw), Side(raw if os.environ.get("BENCH_AA") else gate.claim)
    for i in range(20):  # connections, minting
        await batch(a, event, f"warm{i}-")
    a.seconds = a.cpu = 0.0
    for i in range(batches):
        for side in (a, b) if i % 4 in (0, 3) else (b, a):  # ABBA
            await batch(side, event, f"{'r' if side is a else 'w'}{i}-")
    claims = batches * BATCH
    print(f"python asyncio: {batches} x {BATCH} concurrent claims per side, batches alternating")
    for name, side in (("raw execute_command", a), ("TicketGate.claim", b)):
        rate, cpu = claims / side.seconds, 1e6 * side.cpu / claims
        print(f"  {name}: {rate:,.0f} claims/s, {cpu:.1f} us client CPU per claim")
    print(f"  wrapper cost: {100 * (b.seconds / a.seconds - 1):+.1f}% time")
    await client.aclose()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=200)
    asyncio.run(main(p.parse_args().batches))
