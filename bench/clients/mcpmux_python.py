"""mcpmux's Python binding: a pool over a temporary config, one stdio server."""

from __future__ import annotations

import asyncio
import os
import tempfile
import time

import mcpmux
from bench_common import args, measure, report


async def main() -> None:
    server, k, conc = args()
    with tempfile.TemporaryDirectory() as d:
        async with mcpmux.Pool.open(os.path.join(d, "servers.json"), connect_on_add=False) as pool:
            await pool.add_server("bench", command=server)
            started = time.perf_counter_ns()
            await pool.connect("bench")
            connect_ns = time.perf_counter_ns() - started
            tools = await pool.list_tools()
            assert any(t.id == "mcp__bench__echo" for t in tools)

            async def call() -> None:
                r = await pool.call_tool("mcp__bench__echo", {"text": "hello"})
                assert not r.is_error

            figures = await measure(k, conc, call)
    report("mcpmux-python", k, conc, connect_ns, figures)


asyncio.run(main())
