"""The official Python SDK (`mcp`) as its README shows it: stdio_client + ClientSession."""

from __future__ import annotations

import asyncio
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench_common import args, measure, report


async def main() -> None:
    server, k, conc = args()
    started = time.perf_counter_ns()
    async with stdio_client(StdioServerParameters(command=server)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            connect_ns = time.perf_counter_ns() - started

            async def call() -> None:
                r = await session.call_tool("echo", {"text": "hello"})
                assert not r.is_error

            figures = await measure(k, conc, call)
    report("python-sdk", k, conc, connect_ns, figures)


asyncio.run(main())
