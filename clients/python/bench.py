#!/usr/bin/env python3
"""Claims/s through the wrapper vs raw `execute_command` from the same
redis-py asyncio client, in the same run (alternating rounds, medians).

    python3 clients/testenv.py --no-cluster -- python clients/python/bench.py [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid

import redis.asyncio

import ticketgate.asyncio

CONCURRENCY = 100


async def round_of(claim, event: str, prefix: str, claims: int) -> float:
    """Claims/s of `claims` claims by distinct users, CONCURRENCY at a time."""
    start = time.perf_counter()
    for base in range(0, claims, CONCURRENCY):
        batch = range(base, min(base + CONCURRENCY, claims))
        await asyncio.gather(*(claim(event, f"{prefix}{i}") for i in batch))
    return claims / (time.perf_counter() - start)


async def main(claims: int, rounds: int) -> None:
    client = redis.asyncio.Redis.from_url(
        os.environ["TICKETGATE_TEST_REDIS"], max_connections=CONCURRENCY
    )
    gate = ticketgate.asyncio.TicketGate(client)
    event = "bench-" + uuid.uuid4().hex[:8]
    await gate.init(event, 10_000_000)

    def raw(e, u):
        return client.execute_command("ticket.claim", e, u)

    results: dict[str, list[float]] = {"raw": [], "wrapper": []}
    await round_of(raw, event, "warm", claims)  # connections, minting
    for r in range(rounds):
        order = [("raw", raw), ("wrapper", gate.claim)]
        for name, claim in order if r % 2 == 0 else order[::-1]:  # no order bias
            results[name].append(await round_of(claim, event, f"{name[0]}{r}-", claims))
    raw_median = statistics.median(results["raw"])
    wrapped = statistics.median(results["wrapper"])
    print(f"python asyncio, {CONCURRENCY} concurrent, {claims} claims x {rounds} rounds:")
    print(f"  raw execute_command: {raw_median:,.0f} claims/s (median)")
    print(f"  TicketGate.claim:    {wrapped:,.0f} claims/s (median)")
    # Rounds come in pairs (raw first, then wrapper first): the geometric mean
    # of a pair's two ratios cancels any advantage of running first or second.
    ratios = [w / r for w, r in zip(results["wrapper"], results["raw"])]
    paired = statistics.median(
        (ratios[k] * ratios[k + 1]) ** 0.5 for k in range(0, len(ratios) - 1, 2)
    )
    print(f"  wrapper cost: {100 * (1 - wrapped / raw_median):+.1f}% (medians), ", end="")
    print(f"{100 * (1 - paired):+.1f}% (median over pairs of rounds)")
    await client.aclose()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--claims", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=10, help="even")
    a = p.parse_args()
    asyncio.run(main(a.claims, a.rounds))
