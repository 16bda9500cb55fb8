"""Timing shared by the Python clients: warm-up, K sequential calls, K calls C in flight."""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Awaitable, Callable


def args() -> tuple[str, int, int]:
    """`client.py SERVER K CONC`"""
    return sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def warmup_calls(k: int) -> int:
    return min(max(k // 10, 20), 500)


async def measure(k: int, conc: int, call: Callable[[], Awaitable[None]]) -> dict[str, float]:
    for _ in range(warmup_calls(k)):
        await call()
    seq: list[int] = []
    started = time.perf_counter_ns()
    for _ in range(k):
        t = time.perf_counter_ns()
        await call()
        seq.append(time.perf_counter_ns() - t)
    seq_total = time.perf_counter_ns() - started

    import asyncio

    remaining = k

    async def worker() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await call()

    started = time.perf_counter_ns()
    await asyncio.gather(*(worker() for _ in range(min(conc, k))))
    conc_total = time.perf_counter_ns() - started

    seq.sort()
    q = lambda p: seq[round((len(seq) - 1) * p)] / 1e3  # noqa: E731
    return {
        "seq_calls_per_s": k / (seq_total / 1e9),
        "p50_us": q(0.5),
        "p99_us": q(0.99),
        "conc_calls_per_s": k / (conc_total / 1e9),
    }


def report(client: str, k: int, conc: int, connect_ns: int, figures: dict[str, float]) -> None:
    line = {
        "client": client,
        "lang": "python",
        "k": k,
        "conc": conc,
        "connect_ms": connect_ns / 1e6,
        **figures,
        # ru_maxrss is in KiB on Linux.
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(line), flush=True)
